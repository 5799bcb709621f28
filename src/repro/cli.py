"""`python -m repro <command>`: the one entry point every Snakemake rule calls.

Each command lives in its own module that defines ``register(subparsers)``; the
module adds its parser and sets ``func`` to a callable taking the parsed args.
A call imports only the module of its command, so that each rule starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from repro.papers import PAPERS

# Command name -> module that registers it. Order is the order shown by --help. Each paper adds
# `python -m repro <paper id> <action>` from its package (repro.papers).
COMMAND_MODULES = {
    "data": "repro.commands.data",
    "train": "repro.commands.train",
    "analyse": "repro.commands.analyse",
    "gather": "repro.commands.gather",
    "notebook": "repro.commands.notebook",
    "claims": "repro.commands.claims",
    "bench": "repro.commands.bench",
    "report": "repro.commands.report",
    "compare": "repro.commands.compare",
    "clean": "repro.commands.clean",
}
COMMAND_MODULES.update({paper: f"repro.papers.{paper}.commands" for paper in PAPERS})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of command `only` alone.

    Importing a command module pulls in torch and the analyses (about two seconds), and
    every Snakemake job is one CLI call: a job imports only the module of its command.
    """
    parser = argparse.ArgumentParser(prog="python -m repro", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = [only] if only in COMMAND_MODULES else list(COMMAND_MODULES)
    for command in names:
        name = COMMAND_MODULES[command]
        module = importlib.import_module(name)
        before = set(subparsers.choices)
        module.register(subparsers)
        added = set(subparsers.choices) - before
        if command not in added:
            raise RuntimeError(f"{name} registered {sorted(added)}, expected the command {command!r}")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv else None
    args = build_parser(only=command).parse_args(argv)
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
