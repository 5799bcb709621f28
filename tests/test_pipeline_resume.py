"""A training job killed through Snakemake is finished by rerunning the same command.

Each case copies the checkout, starts the README's smoke command for a target that trains one
sixteen_heads classifier (SST-2 stand-in, lengthened by an overlay so that it is still training
when its first checkpoint appears), signals the whole process group as soon as the checkpoint is
on disk, reruns the same command, and compares every output with an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, copy_checkout, snakemake_command, snakemake_env

sys.path.insert(0, str(ROOT / "tests" / "cluster"))
from compare_results import csv_difference  # noqa: E402  (time columns and timing claims left out)

pytestmark = pytest.mark.slow

RESULTS = Path("results/smoke/sixteen_heads")
RUN = RESULTS / "runs/sst2/seed0"
# Long enough to be killed mid-run (the smoke scale trains 4 steps); the same for every copy.
OVERLAY = {"sixteen_heads": {"tasks": {"sst2": {"steps": 200}}}}
TIME_KEY = ("seconds", "train_seconds", "tokens_per_second", "steps_per_second")
# The run, the ablation that reads its weights, and the figure drawn from every task's pruning.
TARGETS = [
    str(RUN / "model.safetensors"),
    str(RESULTS / "data/runs/sst2_seed0_ablation.csv"),
    str(RESULTS / "figures/fig04.png"),
]


def command(workdir: Path, *targets: str) -> list[str]:
    return snakemake_command(*targets, configfiles=("config/smoke.yaml", "resume-test.yaml"))


def new_checkout(tmp_path_factory, name: str) -> Path:
    workdir = copy_checkout(tmp_path_factory.mktemp(name))
    (workdir / "resume-test.yaml").write_text(yaml.safe_dump(OVERLAY))
    return workdir


def run_to_end(workdir: Path, *targets: str) -> None:
    done = subprocess.run(
        command(workdir, *targets), cwd=workdir, capture_output=True, text=True, env=snakemake_env(workdir), timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def interrupt_after_first_checkpoint(workdir: Path, sig: signal.Signals, *targets: str) -> None:
    """Start the command in its own process group and send `sig` to the group once the run's first
    checkpoint exists; the run must not have finished by then."""
    process = subprocess.Popen(
        command(workdir, *targets),
        cwd=workdir,
        env=snakemake_env(workdir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    pointer = workdir / RUN / "checkpoint.json"
    deadline = time.monotonic() + 600
    while not pointer.exists():
        assert process.poll() is None, "the command ended before the run wrote a checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 10 minutes"
        time.sleep(0.01)
    os.killpg(process.pid, sig)
    process.wait(timeout=120)
    state = json.loads(pointer.read_text())["state"]
    assert not state["finished"], "the run finished before the signal: the test proves nothing"
    assert not (workdir / RUN / "model.safetensors").exists()


def without_time(value):
    if isinstance(value, dict):
        return {k: without_time(v) for k, v in value.items() if k not in TIME_KEY and k != "resumed_from"}
    if isinstance(value, list):
        return [without_time(v) for v in value]
    return value


def json_docs(path: Path) -> list:
    text = path.read_text()
    docs = [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else [json.loads(text)]
    return without_time(docs)


def assert_same_outputs(resumed: Path, reference: Path) -> None:
    """Every file the uninterrupted run made under results/smoke/sixteen_heads, the same in the resumed
    run: weights and figures byte for byte, CSVs value for value outside the columns and claims that
    record wall-clock time (the rules of tests/cluster/compare_results.py), JSON without time fields."""

    def listing(root: Path) -> set[str]:
        return {
            p.relative_to(root).as_posix()
            for p in (root / RESULTS).rglob("*")
            if p.is_file() and "notebooks" not in p.parts
        }

    names = listing(reference)
    assert listing(resumed) == names
    compared = 0
    for name in sorted(names):
        a, b = resumed / name, reference / name
        if name.endswith((".safetensors", ".png")):
            assert a.read_bytes() == b.read_bytes(), name  # exact: the same computation on one machine (by design)
        elif name.endswith(".csv"):
            assert csv_difference(a, b) is None, f"{name}: {csv_difference(a, b)}"
        elif name.endswith("checkpoint.json"):
            continue  # it records byte offsets into a log that holds timings; its tensor file is compared
        elif name.endswith((".json", ".jsonl")):
            assert json_docs(a) == json_docs(b), name  # exact: as above
        else:
            continue
        compared += 1
    assert compared >= 10 and any(n.endswith("fig04.png") for n in names)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    workdir = new_checkout(tmp_path_factory, "uninterrupted")
    run_to_end(workdir, *TARGETS)
    return workdir


def test_sigkill_of_the_process_group_is_finished_by_the_same_command(reference, tmp_path_factory):
    workdir = new_checkout(tmp_path_factory, "sigkill")
    interrupt_after_first_checkpoint(workdir, signal.SIGKILL, *TARGETS)
    assert list((workdir / ".snakemake" / "locks").glob("*.lock")), "Snakemake's lock should be left behind"
    run_to_end(workdir, *TARGETS)
    log = (workdir / "results/smoke/logs/sixteen_heads/train/sst2_seed0.log").read_text()
    assert "resumed_from=" in log and "resumed_from=None" not in log  # continued, not retrained
    assert_same_outputs(workdir, reference)


def test_sigterm_of_the_process_group_is_finished_by_the_same_command(reference, tmp_path_factory):
    targets = TARGETS[:2]
    workdir = new_checkout(tmp_path_factory, "sigterm")
    interrupt_after_first_checkpoint(workdir, signal.SIGTERM, *targets)
    run_to_end(workdir, *targets)
    for name in ("model.safetensors", "checkpoint.json"):
        assert (workdir / RUN / name).exists()
    # exact: the same training on one machine, resumed or not (by design)
    assert (workdir / RUN / "model.safetensors").read_bytes() == (reference / RUN / "model.safetensors").read_bytes()
    assert json_docs(workdir / RUN / "metrics.jsonl") == json_docs(reference / RUN / "metrics.jsonl")
    ablation = RESULTS / "data/runs/sst2_seed0_ablation.csv"
    pd.testing.assert_frame_equal(pd.read_csv(workdir / ablation), pd.read_csv(reference / ablation))


def test_deleted_outputs_of_a_finished_run_come_back_without_training(reference, tmp_path_factory):
    """What Snakemake does on --forcerun: it deletes the outputs, then runs the job again."""
    workdir = new_checkout(tmp_path_factory, "forcerun")
    run_to_end(workdir, str(RUN / "model.safetensors"))
    # the target first: --forcerun takes every word after it until the next flag
    run_to_end(workdir, str(RUN / "model.safetensors"), "--forcerun", "sixteen_heads_train")
    log = (workdir / "results/smoke/logs/sixteen_heads/train/sst2_seed0.log").read_text()
    assert "resumed_from=200" in log
    # exact: the same training on one machine (by design)
    assert (workdir / RUN / "model.safetensors").read_bytes() == (reference / RUN / "model.safetensors").read_bytes()
