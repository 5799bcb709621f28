"""`python -m repro power [RESULTS] [--power 0.8] [--max-seeds 10] [--out CSV]`: the seeds each figure
needs, read off a finished results tree by a power analysis (repro.pipeline.power). It prints, per
figure, the seeds its claims rest on and the seeds proposed, then every claim with its own projection or
the reason it has none; `--out` writes the per-claim table as CSV.

The numbers are a plan from one run: copy them into a config with a comment naming that run, before the
run they plan, and never change them after seeing its verdicts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "power",
        help="seeds per figure for the claims to decide with 80%% power (from a finished tree)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", nargs="?", type=Path, default=Path("results/laptop"), help="results tree")
    parser.add_argument("--power", type=float, default=0.8, help="the chance of deciding an effect of the size seen")
    parser.add_argument("--max-seeds", type=int, default=10, help="the most seeds a figure may be given")
    parser.add_argument("--paper", action="append", help="only these papers (repeatable)")
    parser.add_argument("--out", type=Path, help="write the per-claim table here (CSV)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from repro.papers import PAPERS
    from repro.pipeline.power import claim_power, propose
    from repro.pipeline.tables import to_markdown

    if not 0.5 <= args.power < 1 or args.max_seeds < 2:
        print("error: --power must lie in [0.5, 1) and --max-seeds be at least 2", file=sys.stderr)
        return 2
    papers = args.paper or list(PAPERS)
    unknown = sorted(set(papers) - set(PAPERS))
    if unknown:
        print(f"error: unknown papers {unknown}; the papers are {', '.join(PAPERS)}", file=sys.stderr)
        return 2
    if not all((args.results / paper / "claims.csv").is_file() for paper in papers):
        print(
            f"error: {args.results} holds no finished run of {', '.join(papers)} (run the workflow first)",
            file=sys.stderr,
        )
        return 2
    scale = args.results.name.partition("-seeds+")[0]
    claims = pd.concat([claim_power(paper, args.results, scale, args.power) for paper in papers], ignore_index=True)
    print(f"Seeds for {args.power:.0%} power, planned from {args.results} (a projection from one run):\n")
    print(to_markdown(propose(claims, args.max_seeds)))
    print(to_markdown(claims, numparse=False))
    if args.out:
        claims.to_csv(args.out, index=False)
    return 0
