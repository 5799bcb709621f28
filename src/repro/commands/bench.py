"""`python -m repro bench`: training throughput against the matmul peak and HF GPT-2."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("bench", help="measure training throughput (ours vs HF GPT-2 vs matmul peak)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=5, help="steps per timing")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved timings per model")
    parser.add_argument("--no-hf", action="store_true", help="skip the Hugging Face GPT-2 baseline")
    parser.add_argument("--out", help="also write the result as JSON here")
    parser.set_defaults(func=bench)


def bench(args: argparse.Namespace) -> int:
    from repro.bench import BenchShape, format_report, run_benchmark

    shape = BenchShape(args.d_model, args.layers, args.heads, args.seq_len, args.batch_size, args.vocab_size)
    result = run_benchmark(shape, threads=args.threads, steps=args.steps, rounds=args.rounds, include_hf=not args.no_hf)
    print(format_report(result))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0
