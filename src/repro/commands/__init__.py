"""Command-line subcommands; see repro.cli."""

import argparse


def add_command(subparsers, name: str, help_text: str, doc: str | None = None, metavar: str = "ACTION"):
    """Add command `name`, which has actions of its own; return the subparsers to add them to. `doc` (the
    command module's docstring) is what `python -m repro <name> --help` shows, line breaks kept."""
    parser = subparsers.add_parser(
        name, help=help_text, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    return parser.add_subparsers(dest="action", required=True, metavar=metavar)
