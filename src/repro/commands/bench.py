"""`python -m repro bench`: training throughput against the matmul peak and HF GPT-2, at the d=256
reference shape and at every model shape a scale's config trains, on the CPU or a GPU, in fp32 and
bf16 autocast (docs/performance.md; on a GPU: docs/paper-scale.md, "A first check on one GPU")."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from repro.commands import fail
from repro.pipeline.configcheck import load_scale_files
from repro.training.config import PRECISIONS

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
    parser.add_argument(
        "--top-per-paper", type=int, default=0, help="only each paper's N shapes with the most runs (0: all)"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=0,
        help="fewer sequences per step where a shape's batch holds more tokens than this (0: the config's batch)",
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, or auto (cuda when a GPU is visible)")
    parser.add_argument(
        "--precision",
        nargs="+",
        default=["fp32"],
        choices=sorted(PRECISIONS),
        help="training precisions timed at each shape: fp32, and bf16 autocast (fp32 weights and optimizer state)",
    )
    parser.add_argument("--steps", type=int, default=5, help="steps per timing")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved timings per model")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per model first")
    parser.add_argument("--no-hf", action="store_true", help="skip the Hugging Face GPT-2 baseline")
    parser.add_argument("--out", help="also write the result as JSON here")
    parser.set_defaults(func=bench)


def top_per_paper(shapes: list, n: int) -> list:
    """The shapes among each paper's `n` with the most runs, in their order."""
    kept, counts = [], {}
    for trained in shapes:
        papers = dict.fromkeys(user.split(":")[0] for user in trained.users)
        if any(counts.get(paper, 0) < n for paper in papers):
            kept.append(trained)
        for paper in papers:
            counts[paper] = counts.get(paper, 0) + 1
    return kept


def cap_tokens(shapes: list, max_tokens: int) -> list:
    """Each shape with at most `max_tokens` tokens per step (whole sequences, at least one)."""
    capped = []
    for trained in shapes:
        shape = trained.shape
        batch = max(1, min(shape.batch_size, max_tokens // shape.seq_len))
        capped.append(dataclasses.replace(trained, shape=dataclasses.replace(shape, batch_size=batch)))
    return capped


def bench(args: argparse.Namespace) -> int:
    import torch

    from repro.bench import BenchShape, TrainedShape, config_shapes, format_shapes, run_shapes
    from repro.training.config import resolve_device

    device = resolve_device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        return fail(
            f"--device {args.device}: torch {torch.__version__} ({torch.__file__}) sees no CUDA device; "
            "run with a python whose torch is a CUDA build (make bench-gpu PYTHON=...), or --device cpu"
        )
    reference = BenchShape(args.d_model, args.layers, args.heads, args.seq_len, args.batch_size, args.vocab_size)
    shapes = config_shapes(load_scale_files(args.config)) if args.config else []
    if args.top_per_paper:
        shapes = top_per_paper(shapes, args.top_per_paper)
    if args.top:
        shapes = shapes[: args.top]
    if args.max_tokens:
        shapes = cap_tokens(shapes, args.max_tokens)
        reference = cap_tokens([TrainedShape(reference)], args.max_tokens)[0].shape
    print(
        f"benchmarking the reference shape and {len(shapes)} shape(s) trained by {', '.join(args.config) or '-'}, "
        f"on {args.device} in {' and '.join(args.precision)}",
        flush=True,
    )
    result = run_shapes(
        [reference, *shapes],
        args.threads,
        args.steps,
        args.rounds,
        args.warmup,
        include_hf=not args.no_hf,
        device=args.device,
        precisions=args.precision,
    )
    print(format_shapes(result))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0
