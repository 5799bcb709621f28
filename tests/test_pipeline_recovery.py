"""Stale Snakemake locks: removed when their owner is gone, kept while it lives."""

from __future__ import annotations

import subprocess
import sys
import time

RELEASE = "import sys; from repro.pipeline.recovery import release_stale_locks; print(release_stale_locks(sys.argv[1]))"


def release(workdir) -> str:
    return subprocess.run(
        [sys.executable, "-c", RELEASE, str(workdir)], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_locks_of_a_dead_run_are_removed_and_a_live_runs_are_kept(tmp_path):
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("a\n")
    (locks / "0.output.lock").write_text("b\n")
    # A live owner: a process that took the owner flock and keeps running.
    owner = subprocess.Popen(
        [sys.executable, "-c", RELEASE + "; import time; time.sleep(60)", str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout.readline().strip() == "['0.input.lock', '0.output.lock']"  # it found them stale
        (locks.mkdir(exist_ok=True), (locks / "0.input.lock").write_text("its own\n"))
        assert release(tmp_path) == "[]"
        assert (locks / "0.input.lock").exists()  # left alone: its owner is alive
    finally:
        owner.kill()
        owner.wait()
    time.sleep(0.1)
    assert release(tmp_path) == "['0.input.lock']"  # killed: the kernel dropped its flock
    assert not locks.exists()
