"""`python -m repro bench`: training throughput against the matmul peak and HF GPT-2, at the d=256
reference shape and at every model shape a scale's config trains."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT_CONFIG = "config/config.yaml"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bench", help="measure training throughput (ours vs HF GPT-2 vs matmul peak) at the reference and config shapes"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=256, help="the reference shape's width")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument(
        "--config",
        nargs="*",
        default=[DEFAULT_CONFIG],
        help=f"scale files (later ones over earlier ones) whose trained shapes are benchmarked too "
        f"(default {DEFAULT_CONFIG}, the laptop scale; give none to time the reference alone)",
    )
    parser.add_argument("--top", type=int, default=0, help="only the N shapes with the most runs (0: all)")
    parser.add_argument("--steps", type=int, default=5, help="steps per timing")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved timings per model")
    parser.add_argument("--no-hf", action="store_true", help="skip the Hugging Face GPT-2 baseline")
    parser.add_argument("--out", help="also write the result as JSON here")
    parser.set_defaults(func=bench)


def load_config(paths: list[str]) -> dict:
    """The files merged in order, nested mappings key by key (as Snakemake merges --configfile), checked."""
    import yaml
    from snakemake.utils import update_config

    from repro.pipeline.configcheck import check_config, fill_defaults

    config: dict = {}
    for path in paths:
        update_config(config, yaml.safe_load(Path(path).read_text()) or {})
    check_config(config)
    return fill_defaults(config)


def bench(args: argparse.Namespace) -> int:
    from repro.bench import BenchShape, config_shapes, format_shapes, run_shapes

    reference = BenchShape(args.d_model, args.layers, args.heads, args.seq_len, args.batch_size, args.vocab_size)
    shapes = config_shapes(load_config(args.config)) if args.config else []
    if args.top:
        shapes = shapes[: args.top]
    print(f"benchmarking the reference shape and {len(shapes)} shape(s) trained by {', '.join(args.config) or '-'}")
    result = run_shapes([reference, *shapes], args.threads, args.steps, args.rounds, include_hf=not args.no_hf)
    print(format_shapes(result))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0
