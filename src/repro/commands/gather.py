"""`python -m repro gather --group OUT IN [IN ...] [--group ...]`: per-run CSVs into one table each.

Each group writes OUT, the CSVs IN stacked in the order given (one header, columns as in the inputs),
with repro.pipeline.tidy; several groups run in one process, so a paper gathers all its tables in one
job. Floats are written at full precision unless --float-format says otherwise.
"""

from __future__ import annotations

import argparse
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser("gather", help="stack per-run CSVs into one CSV per group")
    parser.add_argument(
        "--group",
        nargs="+",
        action="append",
        required=True,
        metavar="PATH",
        help="OUT IN [IN ...]: write OUT, the IN files stacked in this order (repeat for several groups)",
    )
    parser.add_argument("--float-format", default=None, help="printf format of floats, e.g. %%.8g (default: exact)")
    parser.set_defaults(func=gather)


def gather(args: argparse.Namespace) -> int:
    from repro.pipeline.tidy import concat_csvs, write_csv

    for group in args.group:
        if len(group) < 2:
            print(f"error: --group {' '.join(group)} needs an output and at least one input", file=sys.stderr)
            return 2
    for out, *inputs in args.group:
        write_csv(concat_csvs(inputs), out, float_format=args.float_format)
    return 0
