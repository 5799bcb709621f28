"""`python -m repro report <part>`: lineage cards, compute accounting, dossiers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from repro.commands import add_command
from repro.pipeline.tidy import write_csv


def register(subparsers) -> None:
    parts = add_command(
        subparsers, "report", "lineage cards, compute accounting, dossiers and the run summary", metavar="PART"
    )

    lineage = parts.add_parser("lineage", help="the lineage cards of a paper's figures and tables")
    lineage.add_argument("--paper", required=True)
    lineage.add_argument(
        "--card",
        nargs=3,
        action="append",
        required=True,
        metavar=("ITEM", "TARGET", "OUT"),
        help="an item, its figure or table file (relative to the workdir) and its card (repeatable)",
    )
    lineage.add_argument("--workdir", default=".", help="Snakemake's working directory (holds .snakemake/)")
    lineage.set_defaults(func=run_lineage)

    for name, help_text, func in (
        ("compute", "results/compute.csv from the benchmark files", run_compute),
        ("summary", "results/SUMMARY.md: verdicts and compute per paper, date, commit", run_summary),
    ):
        every_paper = parts.add_parser(name, help=help_text)
        every_paper.add_argument("--results-dir", required=True)
        every_paper.add_argument("--papers", nargs="+", required=True)
        every_paper.add_argument("--out", required=True)
        every_paper.add_argument("--workdir", default=".")
        every_paper.set_defaults(func=func)

    dossier = parts.add_parser("dossier", help="results/<paper>/REPRODUCIBILITY.md")
    dossier.add_argument("--paper", required=True)
    dossier.add_argument("--results-dir", required=True)
    dossier.add_argument("--config", required=True, help="the run's resolved configuration (config.resolved.json)")
    dossier.add_argument("--paper-config", required=True, help="config/paper.yaml, to list what differs")
    dossier.add_argument("--out", required=True)
    dossier.add_argument("--workdir", default=".")
    dossier.set_defaults(func=run_dossier)

    readme = parts.add_parser("readme", help="copy results/SUMMARY.md into the README between its markers")
    readme.add_argument("--summary", default="results/laptop/SUMMARY.md")
    readme.add_argument("--readme", default="README.md")
    readme.set_defaults(func=run_readme)


def run_summary(args: argparse.Namespace) -> int:
    from repro.pipeline.run_summary import write_summary

    write_summary(args.results_dir, args.papers, args.out, args.workdir)
    return 0


def run_readme(args: argparse.Namespace) -> int:
    from repro.pipeline.run_summary import update_readme

    update_readme(args.summary, args.readme)
    print(f"copied {args.summary} into {args.readme}")
    return 0


def run_lineage(args: argparse.Namespace) -> int:
    from repro.pipeline.lineage import write_lineage_card

    for item, target, out in args.card:
        write_lineage_card(target, out, args.workdir, args.paper, item)
    return 0


def run_compute(args: argparse.Namespace) -> int:
    from repro.pipeline.claims import load_claims
    from repro.pipeline.compute import compute_accounting

    claim_files = {
        (paper, c.claim_id): [str(Path(args.results_dir) / paper / name) for name in c.inputs]
        for paper in args.papers
        for c in load_claims(paper)
    }
    table = compute_accounting(args.workdir, args.results_dir, args.papers, claim_files)
    write_csv(table, args.out)
    return 0


def run_dossier(args: argparse.Namespace) -> int:
    from repro.pipeline.dossier import load_yaml, render_dossier

    config = json.loads(Path(args.config).read_text())
    text = render_dossier(args.paper, args.results_dir, config, load_yaml(args.paper_config), args.workdir)
    Path(args.out).write_text(text)
    return 0
