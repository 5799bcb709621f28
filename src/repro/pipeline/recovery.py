"""Let a rerun of the same `snakemake` command pick up after a run that was killed.

Snakemake locks a working directory with files under .snakemake/locks/ and removes them when it
exits, but a process killed with SIGKILL (or by a power cut, an out-of-memory kill, a preempted
node) leaves them behind, and every later run stops with "Directory cannot be locked" until the
user finds `--unlock`. The locks carry no owner, so Snakemake cannot tell a stale lock from a live
one. The Snakefile calls `release_stale_locks` in the main Snakemake process: it holds an OS lock
(flock) on .snakemake/repro-owner.lock for as long as that process lives. The kernel drops the flock
when the process dies however it dies, so a Snakemake lock found while we hold the flock belongs to
a process that is gone, and is removed. While another instance of this workflow is running, its
flock is held and its locks are left alone (Snakemake then refuses to start, as it should).
"""

from __future__ import annotations

import fcntl
import shutil
import sys
from pathlib import Path
from typing import IO

OWNER_FILE = "repro-owner.lock"

_owner: IO[str] | None = None  # held open (and flocked) until the process exits


def release_stale_locks(workdir: str | Path) -> list[str]:
    """Take the owner flock of `workdir`'s .snakemake/ and remove Snakemake locks left by a dead run.

    Returns the names of the lock files removed ([] when there were none, or when another live
    process of this workflow holds the flock).
    """
    global _owner
    meta = Path(workdir) / ".snakemake"
    meta.mkdir(exist_ok=True)
    if _owner is not None and not _owner.closed:
        return []  # this process already owns the directory (the Snakefile was parsed twice)
    handle = open(meta / OWNER_FILE, "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return []
    _owner = handle
    locks = meta / "locks"
    stale = sorted(path.name for path in locks.glob("*.lock")) if locks.is_dir() else []
    if stale:
        shutil.rmtree(locks)
        print(
            f"Removed the Snakemake lock left by an interrupted run ({len(stale)} files in {locks}); "
            "its finished jobs are kept and its training runs resume from their checkpoints.",
            file=sys.stderr,
        )
    return stale
