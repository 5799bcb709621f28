"""`python -m repro claims {judge,scorecard,list}`: verdicts per paper, the scorecard, the registry."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from repro.commands import add_command


def register(subparsers: argparse._SubParsersAction) -> None:
    actions = add_command(subparsers, "claims", "judge claims, build the scorecard, list registered claims")

    judge = actions.add_parser("judge", help="judge every claim of one paper; write its claims.csv")
    judge.add_argument(
        "--paper", required=True, help="paper id (its claims module: repro.papers.part(paper, 'claims'))"
    )
    judge.add_argument("--results-dir", required=True, help="results root; inputs are read from RESULTS/<paper>/")
    judge.add_argument("--scale", required=True, choices=("smoke", "laptop", "paper"))
    judge.add_argument("--out", help="output CSV (default RESULTS/<paper>/claims.csv)")
    judge.set_defaults(func=_judge)

    card = actions.add_parser("scorecard", help="combine claims.csv files into the scorecard")
    card.add_argument("--inputs", nargs="+", required=True, metavar="CSV", help="claims.csv of each paper")
    card.add_argument("--out-csv", required=True)
    card.add_argument("--out-md", required=True)
    card.set_defaults(func=_scorecard)

    show = actions.add_parser("list", help="print registered claims and the files they read")
    show.add_argument("--paper", help="only this paper (default: every paper with a claims module)")
    show.add_argument(
        "--inputs-only",
        action="store_true",
        help="print only the input files, one per line, relative to RESULTS/<paper>/ (prefixed by <paper>/ without --paper)",
    )
    show.set_defaults(func=_list)


def _judge(args: argparse.Namespace) -> int:
    from repro.pipeline import claims

    out = Path(args.out) if args.out else Path(args.results_dir) / args.paper / "claims.csv"
    try:
        df = claims.judge_paper(args.paper, args.results_dir, args.scale)
    except claims.ClaimsFailed as err:
        print(f"error: {len(err.errors)} claim(s) of {args.paper} could not be judged:\n{err}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    claims.write_claims_csv(df, out)
    counts = df["verdict"].value_counts()
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in claims.VERDICTS)
    print(f"wrote {out.as_posix()}: {len(df)} claims ({summary})")
    return 0


def _scorecard(args: argparse.Namespace) -> int:
    from repro.pipeline import scorecard

    try:
        df = scorecard.combine(args.inputs)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    scorecard.write_scorecard(df, args.out_csv, args.out_md)
    print(f"wrote {args.out_csv} and {args.out_md}: {len(df)} claims")
    return 0


def _list(args: argparse.Namespace) -> int:
    from repro.pipeline import claims

    papers = [args.paper] if args.paper else claims.papers()
    for paper in papers:
        try:
            registered = claims.load_claims(paper)
        except ModuleNotFoundError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        if args.inputs_only:
            # With several papers, prefix each path with its paper so the lines stay unambiguous.
            prefix = "" if args.paper else f"{paper}/"
            for name in claims.claim_inputs(paper):
                print(prefix + name)
            continue
        print(f"{paper}: {len(registered)} claims")
        for c in registered:
            print(f"  {c.item} {c.claim_id} (judged at {', '.join(c.judged_at)})")
            print(f"      {c.statement}")
            print(f"      paper: {c.paper_value}")
            print(f"      tolerance: {c.tolerance}")
            print(f"      inputs: {', '.join(c.inputs)}")
    return 0
