"""`python -m repro verify [RESULTS ...]`: check every file of results trees whose sha256 is recorded
(data cards, checkpoint records, lineage cards) without running the DAG, and print the command that
makes the damaged ones again (repro.pipeline.verify, repro.pipeline.rebuild).

Exit status: 0 when every checked file matches its record, 1 when some are damaged, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("verify", help="check a results tree against the sha256 it records")
    parser.add_argument(
        "results", nargs="*", type=Path, help="results trees, e.g. results/laptop (default: every tree in results/)"
    )
    parser.set_defaults(func=verify)


def _shown(path: Path) -> Path:
    """A path as the rebuild command needs it: relative to this directory, the workflow's."""
    absolute = path.resolve()
    return absolute.relative_to(Path.cwd().resolve()) if absolute.is_relative_to(Path.cwd().resolve()) else path


def verify(args: argparse.Namespace) -> int:
    from repro.pipeline.rebuild import kept_command_file, rebuild_command
    from repro.pipeline.verify import damaged_files

    roots = args.results or sorted(p for p in Path("results").glob("*") if p.is_dir())
    if not roots:
        print("error: no results tree here (run from the repository, or name one: results/laptop)", file=sys.stderr)
        return 2
    missing = [root for root in roots if not root.is_dir()]
    if missing:
        print(f"error: {', '.join(map(str, missing))} is not a results tree (e.g. results/laptop)", file=sys.stderr)
        return 2
    status = 0
    for root in map(_shown, roots):
        checked, damaged = damaged_files(root)
        print(f"{root}: {checked:,} files checked against the sha256 recorded in its data cards, checkpoints and "
              "lineage cards")  # fmt: skip
        if not damaged:
            print("  all match")
            continue
        status = 1
        for damage in damaged:
            print(f"  damaged: {damage.path}: {damage.problem}")
        unknown = [d.path for d in damaged if d.target is None]
        if unknown:
            print(f"  no rule output found for {', '.join(map(str, unknown))}: rerun the jobs that made them")
        fixable = [d for d in damaged if d.target is not None]
        if fixable:
            targets = list(dict.fromkeys(str(d.target) for d in fixable))
            remove = list(dict.fromkeys(str(path) for d in fixable for path in d.remove))
            known = kept_command_file(root).is_file()  # else the README's command of the tree's scale
            print("  to make them again, and what was computed from them (deterministic jobs write the same bytes again), "
                  f"run from {os.getcwd()}" + (":" if known else ", adding any --configfile overlay or --config the "
                  "tree was made with:"))  # fmt: skip
            print(f"  {rebuild_command(targets, remove, results_root=root)}")
    return status
