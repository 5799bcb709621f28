"""`python -m repro compare RUN_A RUN_B`: what changed between two results directories."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="scorecard rows and figure data that changed between two results directories"
    )
    parser.add_argument(
        "run_a",
        type=Path,
        help="results directory A, e.g. results/laptop (or, with --verdicts, a scorecard CSV such as one in docs/runs/)",
    )
    parser.add_argument("run_b", type=Path, help="results directory B (or scorecard CSV)")
    parser.add_argument(
        "--verdicts",
        action="store_true",
        help="how far the verdicts of empirical and timing claims agree (two runs with other seeds: seed_offset): "
        "the same decided verdicts over those decided in either run; flips and one-run claims listed",
    )
    parser.set_defaults(func=compare)


def compare(args: argparse.Namespace) -> int:
    from repro.pipeline.compare import format_comparison, format_verdict_changes

    print(
        format_verdict_changes(args.run_a, args.run_b) if args.verdicts else format_comparison(args.run_a, args.run_b)
    )
    return 0
