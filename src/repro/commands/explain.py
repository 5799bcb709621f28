"""`python -m repro explain <paper> <claim id | item> [--results RESULTS]`: one claim walked back to its
runs (statement, decision rule, interval, gate, null, the files and runs it read, its figure, the commands
that rebuild it), or one figure or table with its claims and lineage (repro.pipeline.explain).

Examples:
    python -m repro explain param_allocation fig02
    python -m repro explain simplified_blocks sas_p_matches_pre_ln --results results/smoke
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="one claim or item walked back to its data and runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paper", help="paper id: simplified_blocks, sixteen_heads, param_allocation, layer_diversity")
    parser.add_argument("key", help="a claim id (see `python -m repro claims list`) or an item such as fig02")
    parser.add_argument(
        "--results", type=Path, default=Path("results/laptop"), help="results tree (default results/laptop)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from repro.papers import PAPERS
    from repro.pipeline.explain import ExplainError, explain

    if args.paper not in PAPERS:
        print(f"error: unknown paper {args.paper!r}; the papers are {', '.join(PAPERS)}", file=sys.stderr)
        return 2
    if not args.results.is_dir():
        print(
            f"error: {args.results} is not a results tree (run the workflow, or name one: --results results/smoke)",
            file=sys.stderr,
        )
        return 2
    try:
        print(explain(args.paper, args.key, args.results), end="")
    except ExplainError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
