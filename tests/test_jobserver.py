"""The job server: a served `python -m repro` command is the command run directly (exit status, output,
files), and killing its client ends it and the notebook process it started."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from repro import jobserver
from repro.pipeline.provenance import Benchmark, Job

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def server_dir():
    """A private temporary directory (short, for the socket path), so that the test has a server of its
    own; the server is stopped afterwards."""
    path = Path(tempfile.mkdtemp(prefix="rjs", dir="/tmp"))
    yield path
    for log in path.glob("*.sock.log"):
        for line in log.read_text().splitlines():
            if "(pid " in line:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(line.rsplit("(pid ", 1)[1].rstrip(")")), signal.SIGTERM)
    shutil.rmtree(path, ignore_errors=True)


def repro(args: list[str], cwd: Path, served_from: Path | None, **kwargs) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (jobserver.ENV_VAR, "SLURM_JOB_ID")}
    if served_from is not None:
        env.update({jobserver.ENV_VAR: "1", "TMPDIR": str(served_from)})
    return subprocess.run(
        [sys.executable, "-m", "repro", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, **kwargs
    )


def test_a_served_command_writes_prints_and_exits_as_run_directly(tmp_path, server_dir):
    corpus = ["data", "corpus", "--max-bytes", "60000", "--valid-fraction", "0.2", "--seed", "3", "--out-dir"]
    direct = repro([*corpus, "direct"], tmp_path, None)
    served = repro([*corpus, "served"], tmp_path, server_dir)
    assert direct.returncode == served.returncode == 0, served.stderr
    assert list(server_dir.glob("*.sock")), "the command did not go through a server"
    assert "[job server]" in served.stderr and "[job server]" not in direct.stderr
    names = sorted(p.relative_to(tmp_path / "direct") for p in (tmp_path / "direct").rglob("*") if p.is_file())
    assert names
    for name in names:  # relative paths: the child works in the client's directory
        assert (tmp_path / "served" / name).read_bytes() == (tmp_path / "direct" / name).read_bytes(), name
    assert served.stdout.replace("served", "direct") == direct.stdout
    # An error: the same message and status, the usage line appended only by the client
    bad = ["data", "corpus", "--max-bytes", "many"]
    direct, served = repro(bad, tmp_path, None), repro(bad, tmp_path, server_dir)
    assert direct.returncode == served.returncode == 2
    assert served.stderr.startswith(direct.stderr)


def test_the_client_runs_the_command_itself_where_no_server_can_start(tmp_path):
    too_long = tmp_path / ("d" * 120)  # no unix socket can be bound under it
    too_long.mkdir()
    result = repro(["data", "corpus", "--help"], tmp_path, too_long)
    assert result.returncode == 0 and "--max-bytes" in result.stdout
    assert "running here" in result.stderr


NOTEBOOK = """# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "p", "fig01", "smoke"
marker = ""

# %%
import os
import resource
import time
from pathlib import Path

Path(marker).write_text(str(os.getpid()))
time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_killing_the_client_ends_the_command_and_its_notebook(tmp_path, server_dir):
    """What Snakemake does to a job it stops: the client's process group is killed, and with it must go
    the served notebook runner and the process its cells run in, at once."""
    (tmp_path / "sleep.py").write_text(NOTEBOOK)
    marker = tmp_path / "cells.pid"
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    env.update({jobserver.ENV_VAR: "1", "TMPDIR": str(server_dir)})
    args = ["notebook", "run", "sleep.py", "--paper", "p", "--item", "fig01", "--results-dir", "results"]
    client = subprocess.Popen(
        [sys.executable, "-m", "repro", *args, "--param", f"marker={marker}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists() or not marker.read_text():
        assert client.poll() is None, "the notebook ended before its cells wrote their pid"
        assert time.monotonic() < deadline, "the cells did not start within 2 minutes"
        time.sleep(0.05)
    cells = int(marker.read_text())
    assert cells != client.pid and alive(cells)
    os.killpg(client.pid, signal.SIGKILL)
    client.wait(timeout=30)
    deadline = time.monotonic() + 10
    while alive(cells):
        assert time.monotonic() < deadline, "the cells outlived their job by 10 s"
        time.sleep(0.05)


def test_a_served_job_is_accounted_with_its_own_cpu_time_and_memory(tmp_path):
    """Snakemake's benchmark of a served job measures the client; the lineage cards and compute.csv
    take the command's own CPU time and peak memory from the line the client appended to the log."""
    bench = tmp_path / "results/benchmarks/train/run.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tcpu_time\n12.5\t0:00:12\t20.0\t0.1\n")
    log = tmp_path / "results/logs/train/run.log"
    log.parent.mkdir(parents=True)
    job = Job(rule="train", shellcmd="python -m repro train", params=[], inputs=[], logs=["results/logs/train/run.log"])
    log.write_text("step 1\n" * 2000)  # a long log without the line: a job run directly
    assert job.benchmark(tmp_path) == Benchmark(wall_seconds=12.5, cpu_seconds=0.1, max_rss_mb=20.0)
    with log.open("a") as handle:
        handle.write(jobserver.USAGE_LINE.format(cpu=11.234, rss=512.25) + "\n")
    assert jobserver.served_usage(log.read_text()) == (11.23, 512.2)
    assert job.benchmark(tmp_path) == Benchmark(wall_seconds=12.5, cpu_seconds=0.1 + 11.23, max_rss_mb=512.2)


def test_each_working_tree_gets_a_server_of_its_own(tmp_path, server_dir):
    """A server runs its children in the working tree it was started for: a second checkout (another
    directory) gets a second server, the same directory the same one."""
    for name in ("first", "second", "first"):
        (tmp_path / name).mkdir(exist_ok=True)
        result = repro(["data", "corpus", "--help"], tmp_path / name, server_dir)
        assert result.returncode == 0 and "[job server]" in result.stderr, result.stderr
    assert len(list(server_dir.glob("*.sock"))) == 2


LIMITS_NOTEBOOK = """# %% tags=["parameters"]
results_dir, paper, item, scale = "results", "p", "fig01", "smoke"
marker = ""

# %%
import os
import resource
import resource
from pathlib import Path

Path(marker).write_text(f"{os.nice(0)} {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}")
"""


def test_a_served_command_runs_at_the_niceness_and_limits_of_its_client(tmp_path, server_dir):
    """A job started under `nice` or a lower `ulimit` runs as it would without the server, also when a
    server started by another client (at other settings) is already running."""
    (tmp_path / "limits.py").write_text(LIMITS_NOTEBOOK)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lower = min(soft, 512) - 1

    def restricted():
        os.nice(5)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lower, hard))

    seen = {}
    for name, preexec in (("plain", None), ("restricted", restricted), ("plain again", None)):
        marker = tmp_path / f"{name}.txt"
        args = ["notebook", "run", "limits.py", "--paper", "p", "--item", "fig01", "--results-dir", "results"]
        result = repro([*args, "--param", f"marker={marker}"], tmp_path, server_dir, preexec_fn=preexec)
        assert result.returncode == 0 and "[job server]" in result.stderr, result.stderr[-3000:]
        seen[name] = marker.read_text()
    nice = os.nice(0)
    assert seen == {"plain": f"{nice} {soft}", "restricted": f"{nice + 5} {lower}", "plain again": f"{nice} {soft}"}
