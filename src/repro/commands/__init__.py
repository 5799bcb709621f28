"""Command-line subcommands; see repro.cli."""

import argparse
import sys


def add_command(subparsers, name: str, help_text: str, doc: str | None = None, metavar: str = "ACTION"):
    """Add command `name`, which has actions of its own; return the subparsers to add them to. `doc` (the
    command module's docstring) is what `python -m repro <name> --help` shows, line breaks kept."""
    parser = subparsers.add_parser(
        name, help=help_text, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    return parser.add_subparsers(dest="action", required=True, metavar=metavar)


def fail(message: str, code: int = 2) -> int:
    """Print ``error: message`` to stderr and return the exit code a command handler returns."""
    print(f"error: {message}", file=sys.stderr)
    return code
