"""What made a file: Snakemake's job records, walked back from any output.

Snakemake keeps one JSON record per output file in ``.snakemake/metadata/`` (file name:
the URL-safe base64 of the path) with the rule, the input files, the shell command,
the parameter values, the log files and the start and end times of the job that wrote
it. Walking these records from a figure back through its inputs gives the whole chain
of jobs that produced it. Each rule's benchmark file sits at the path of its log with
``logs/`` replaced by ``benchmarks/`` and ``.log`` by ``.tsv`` (a convention every rule
of this workflow follows), which gives wall time, CPU time and peak memory per job; for a job
that the job server ran, the CPU time and memory of the command's own process come from the
line its client wrote to the log (repro.jobserver).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from repro import jobserver

METADATA_DIR = Path(".snakemake") / "metadata"


@dataclass(frozen=True)
class Benchmark:
    """One job's resource use, from its Snakemake `benchmark:` file."""

    wall_seconds: float
    cpu_seconds: float
    max_rss_mb: float

    @classmethod
    def read(cls, path: Path) -> Benchmark | None:
        """Mean over the file's rows (one row per repeat), or None if there is no file."""
        if not path.is_file():
            return None
        with path.open() as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        if not rows:
            return None

        def mean(key: str) -> float:
            values = [float(r[key]) for r in rows if r.get(key) not in (None, "", "NA", "-")]
            return sum(values) / len(values) if values else 0.0

        return cls(wall_seconds=mean("s"), cpu_seconds=mean("cpu_time"), max_rss_mb=mean("max_rss"))


@dataclass
class Job:
    """One Snakemake job, identified by its rule and shell command."""

    rule: str
    shellcmd: str
    params: list[str]
    inputs: list[str]
    logs: list[str]
    outputs: list[str] = field(default_factory=list)
    starttime: float | None = None
    endtime: float | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.rule, self.shellcmd)

    def benchmark_path(self, workdir: Path) -> Path | None:
        for log in self.logs:
            if "/logs/" in f"/{log}" and log.endswith(".log"):
                relative = re.sub(r"(^|/)logs/", r"\1benchmarks/", log, count=1)
                return workdir / (relative[: -len(".log")] + ".tsv")
        return None

    def benchmark(self, workdir: Path) -> Benchmark | None:
        """The job's benchmark; for a command the job server ran, the CPU time and peak memory of that
        command's own process (from the line the client wrote to the log) replace the client's."""
        path = self.benchmark_path(workdir)
        bench = Benchmark.read(path) if path is not None else None
        if bench is None:
            return None
        for log in self.logs:
            usage = _served_usage(workdir / log)
            if usage is not None:
                cpu, rss = usage
                return Benchmark(bench.wall_seconds, bench.cpu_seconds + cpu, max(bench.max_rss_mb, rss))
        return bench

    def seeds(self) -> list[int]:
        """Seeds named in the job's outputs (…/seed3/…) or parameters ("seed": 3)."""
        found = set()
        for text in self.outputs + [self.shellcmd]:
            found.update(int(s) for s in re.findall(r"seed[_-]?(\d+)", text))
            found.update(int(s) for s in re.findall(r'"seed":\s*(\d+)', text))
        return sorted(found)


def _served_usage(log: Path) -> tuple[float, float] | None:
    """The job server's usage line near the end of a log (a training log can be long)."""
    if not log.is_file():
        return None
    with log.open("rb") as handle:
        handle.seek(max(0, log.stat().st_size - 4096))
        return jobserver.served_usage(handle.read().decode(errors="replace"))


def record_path(path: str, workdir: Path) -> Path:
    encoded = base64.urlsafe_b64encode(path.encode()).decode()
    return workdir / METADATA_DIR / encoded


def read_record(path: str, workdir: Path) -> dict | None:
    """Snakemake's record for an output path (relative to workdir), or None for a source file."""
    record = record_path(path, workdir)
    if not record.is_file():
        return None
    return json.loads(record.read_text())


def job_of(path: str, workdir: Path) -> Job | None:
    record = read_record(path, workdir)
    return None if record is None else job_from_record(path, record)


def job_from_record(path: str, record: dict) -> Job:
    """The job of one Snakemake record (of the output `path`)."""
    return Job(
        rule=record["rule"],
        shellcmd=record.get("shellcmd") or "",
        params=list(record.get("params") or []),
        inputs=list(record.get("input") or []),
        logs=list(record.get("log") or []),
        outputs=[path],
        starttime=record.get("starttime"),
        endtime=record.get("endtime"),
    )


def upstream_jobs(target: str, workdir: Path, stop_at: Callable[[str], bool] | None = None) -> list[Job]:
    """Every job that `target` depends on, itself first, then in breadth-first order.

    Records of different outputs of one job are merged (same rule and shell command).
    Files without a record (sources such as notebooks, or inputs made outside the DAG)
    end the walk, and so do the files for which `stop_at(path)` is true.
    """
    jobs: dict[tuple[str, str], Job] = {}
    seen_files: set[str] = set()
    queue = [target]
    while queue:
        path = queue.pop(0)
        if path in seen_files:
            continue
        seen_files.add(path)
        if stop_at is not None and path != target and stop_at(path):
            continue
        job = job_of(path, workdir)
        if job is None:
            continue
        if job.key in jobs:
            jobs[job.key].outputs.append(path)
            continue
        jobs[job.key] = job
        queue.extend(job.inputs)
    return list(jobs.values())


@lru_cache(maxsize=4096)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256(path: Path) -> str | None:
    """sha256 of a file (cached by size and mtime), None if it does not exist."""
    if not path.is_file():
        return None
    stat = path.stat()
    return _sha256_cached(str(path), stat.st_size, stat.st_mtime_ns)
