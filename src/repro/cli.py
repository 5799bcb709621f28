"""`python -m repro <command>`: the one entry point every Snakemake rule calls.

Each command lives in its own module that defines ``register(subparsers)``; the
module adds its parser and sets ``func`` to a callable taking the parsed args.
Modules are imported lazily so that ``python -m repro --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# (command module, one-line help). Order is the order shown by --help.
COMMAND_MODULES = [
    "repro.commands.data",
    "repro.commands.train",
    "repro.commands.analyse",
    "repro.commands.notebook",
    "repro.commands.claims",
    "repro.commands.config",
    "repro.commands.bench",
    "repro.commands.report",
    "repro.commands.compare",
    # Paper-specific commands (a module that does not exist yet is skipped).
    "repro.commands.simplified_blocks",
    "repro.commands.sixteen_heads",
    "repro.commands.param_allocation",
    "repro.commands.layer_diversity",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m repro", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name == name:  # command module not written yet
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
