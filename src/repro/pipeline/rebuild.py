"""The command that makes a damaged or missing file of a results tree again, to paste as printed.

Deleting a file and rerunning Snakemake does not rebuild it when the files computed from it are still
there: Snakemake then sees nothing to do. `--forcerun FILE` does: it runs the job that makes FILE, and
every job downstream of it reruns because its input changed. The jobs are deterministic, so what they
write is what was there before.

The command is the one the user ran (its forcing and dry-run options left out): the Snakefile hands it
to every job in `COMMAND_VARIABLE` (`prepare_jobs`) and, when jobs run, keeps it in the tree
(`keep_command`, results/<tree>/logs/command.txt) for `python -m repro verify`. A tree without one gets
the README's command for its scale and seed offset, read from the tree's name.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

COMMAND_VARIABLE = "REPRO_SNAKEMAKE_COMMAND"
# Options of a run that a rebuild must not repeat: what it forced and whether it only planned.
_DROPPED_WITH_VALUES = {"--forcerun", "-R", "--until", "-U", "--omit-from", "-O"}
_DROPPED = {"--force", "-f", "--forceall", "-F", "--dry-run", "--dryrun", "-n", "--touch", "-t"}


def workflow_command(argv: Sequence[str]) -> str:
    """The Snakemake command line `argv` without its forcing and dry-run options."""
    if argv and argv[0].endswith("__main__.py"):  # python -m snakemake
        argv = [sys.executable, "-m", "snakemake", *argv[1:]]
    kept, skipping = [], False
    for word in argv:
        option = word.split("=", 1)[0]
        if skipping and not word.startswith("-"):
            continue
        skipping = False
        if option in _DROPPED_WITH_VALUES:
            skipping = "=" not in word
            continue
        if word in _DROPPED:
            continue
        kept.append(word)
    return shlex.join(kept)


def prepare_jobs(argv: Sequence[str]) -> None:
    """In the workflow's main process: every job finds `python` of this interpreter first on its PATH
    (the one that runs Snakemake and imports repro, so that `.venv/bin/snakemake` needs no activated
    venv), and the command that started the workflow in COMMAND_VARIABLE."""
    os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    os.environ[COMMAND_VARIABLE] = workflow_command(argv)


def kept_command_file(results_root: str | Path) -> Path:
    return Path(results_root) / "logs" / "command.txt"


def keep_command(results_root: str | Path) -> None:
    """When a workflow's jobs start (Snakemake's onstart): keep its command in the tree it writes."""
    path = kept_command_file(results_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(os.environ.get(COMMAND_VARIABLE, "") + "\n")


def tree_command(results_root: str | Path) -> str:
    """The README's Snakemake command that writes the results tree `results_root` (results/<scale> or
    results/<scale>-seeds+<k>), with the venv's snakemake."""
    scale, _, offset = Path(results_root).name.partition("-seeds+")
    snakemake = Path(sys.executable).parent / "snakemake"
    with_venv = os.path.relpath(snakemake) if snakemake.resolve().is_relative_to(Path.cwd().resolve()) else snakemake
    words = [str(with_venv), "--cores", "all"]
    if scale != "laptop":
        words += ["--configfile", f"config/{scale}.yaml"]
    if offset:
        words += ["--config", f"seed_offset={offset}"]
    return shlex.join(words)


def rebuild_command(targets: Iterable[str | Path], remove: Iterable[str | Path] = (), results_root=None) -> str:
    """The shell command that makes `targets` again (after deleting the files `remove`), and with them
    everything computed from them."""
    targets = [str(t) for t in targets]
    root = results_root or _results_root(targets[0])
    kept = kept_command_file(root)
    base = os.environ.get(COMMAND_VARIABLE) or (kept.read_text().strip() if kept.is_file() else "")
    base = base or tree_command(root)
    command = f"{base} --forcerun {shlex.join(targets)}"
    remove = [str(path) for path in remove]
    return f"rm -f {shlex.join(remove)} && {command}" if remove else command


def _results_root(path: str) -> Path:
    """results/<tree> of a path under it (results/laptop when the path is elsewhere)."""
    parts = Path(path).parts
    return Path(*parts[:2]) if len(parts) > 2 and parts[0] == "results" else Path("results/laptop")
