"""`python -m repro clean RESULTS_DIR`: free the disk space that finished training runs no longer need.

--previous         delete the previous-<k>/ folders of runs whose settings changed (the trainer
                   moves an old run there instead of deleting it)
--optimizer-state  drop the optimizer state from the final checkpoint of every finished run
                   (about two thirds of it); a finished run still publishes its results again
                   if they are deleted, but an unfinished run is left as it is
--dry-run          list what would be removed, remove nothing
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("clean", help="remove superseded runs and the optimizer state of finished runs")
    parser.add_argument("results_dir", type=Path, help="a results tree, e.g. results/laptop")
    parser.add_argument("--previous", action="store_true", help="delete previous-<k>/ run folders")
    parser.add_argument("--optimizer-state", action="store_true", help="drop finished runs' optimizer state")
    parser.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    parser.set_defaults(func=clean)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def clean(args: argparse.Namespace) -> int:
    from repro.training.checkpoint import STATE_FILE, read_pointer, strip_optimizer_state

    root = args.results_dir
    if not root.is_dir():
        print(f"error: {root} is not a directory (a results tree such as results/laptop)", file=sys.stderr)
        return 2
    if not (args.previous or args.optimizer_state):
        print("error: say what to remove: --previous, --optimizer-state or both", file=sys.stderr)
        return 2
    freed = 0
    if args.previous:
        for folder in sorted(p for p in root.rglob("previous-*") if p.is_dir() and (p.parent / STATE_FILE).exists()):
            print(f"{'would remove' if args.dry_run else 'removed'} {folder} ({_size(folder) / 2**20:.1f} MiB)")
            if not args.dry_run:
                freed += _size(folder)
                shutil.rmtree(folder)
    if args.optimizer_state:
        for pointer_file in sorted(root.rglob(STATE_FILE)):
            run_dir = pointer_file.parent
            if args.dry_run:
                pointer = read_pointer(run_dir)
                if pointer["state"].get("finished") and pointer["optimizer_state_keys"]:
                    print(f"would drop the optimizer state of {run_dir}")
                continue
            saved = strip_optimizer_state(run_dir)
            if saved:
                freed += saved
                print(f"dropped the optimizer state of {run_dir}")
    if not args.dry_run:
        print(f"freed {freed / 2**20:.1f} MiB", file=sys.stderr)
    return 0
