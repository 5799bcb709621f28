"""`python -m repro <command>`: the one entry point every Snakemake rule calls.

An error the user can act on (a damaged or missing file, a bad setting, a run another process holds) is
printed as one paragraph, `error: ...`, with exit status 1; its traceback goes beside the job's log
(LOG.traceback). Any other exception is a bug and keeps its traceback.

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
    "verify": "repro.commands.verify",
    "explain": "repro.commands.explain",
    "power": "repro.commands.power",
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


def _actionable(err: BaseException) -> bool:
    """Errors whose message says what is wrong and what to do (a damaged or missing file, a run another
    process holds, a bad setting): the user needs the message, not the stack."""
    from repro.data.errors import DataError
    from repro.models.config import ConfigError
    from repro.training.checkpoint import CheckpointError, ConfigMismatchError
    from repro.training.trainer import RunBusyError

    return isinstance(err, DataError | ConfigError | CheckpointError | ConfigMismatchError | RunBusyError)


def _keep_traceback() -> None:
    """Write the current exception's traceback beside the job's log (stderr redirected to a file:
    LOG.traceback), where a bug report can find it."""
    import os
    import stat
    import traceback

    try:
        if not stat.S_ISREG(os.fstat(2).st_mode):
            return
        log = os.readlink("/proc/self/fd/2")
        with open(f"{log}.traceback", "w") as handle:
            traceback.print_exc(file=handle)
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv else None
    args = build_parser(only=command).parse_args(argv)
    try:
        result = args.func(args)
    except Exception as err:
        if not _actionable(err):
            raise
        _keep_traceback()
        print(f"error: {err}", file=sys.stderr)  # one paragraph, once
        return 1
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
