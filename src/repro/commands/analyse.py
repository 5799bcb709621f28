"""`python -m repro analyse <analysis>`: turn run directories into tidy CSVs."""

from __future__ import annotations

import argparse
from pathlib import Path

from repro.commands import add_command
from repro.pipeline.tidy import write_csv


def register(subparsers) -> None:
    analyses = add_command(
        subparsers, "analyse", "analyses over trained runs, written as tidy CSVs", metavar="ANALYSIS"
    )
    curves = analyses.add_parser("training-curves", help="loss against step and time for several runs")
    curves.add_argument("--runs", nargs="+", required=True, help="run directories (…/<variant>/seed<k>)")
    curves.add_argument("--out", required=True, help="CSV to write")
    curves.set_defaults(func=training_curves)


def training_curves(args: argparse.Namespace) -> int:
    from repro.analysis.training_curves import collect_curves

    df = collect_curves(args.runs)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_csv(df, args.out)
    return 0
