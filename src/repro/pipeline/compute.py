"""Compute accounting: CPU seconds, wall seconds and peak memory per rule, paper and claim.

Every job of the workflow that has a benchmark file is counted once. A job belongs to
the paper whose results directory holds its outputs (``results/<paper>/...``); jobs
that serve several papers (the code corpus, its tokenizer) belong to "shared". A claim
is charged every job its input files depend on, so claims that share runs are each
charged for them: per-claim rows do not add up to the total, while the per-rule and
per-paper rows do (each sums to the "total" row).

Columns of results/compute.csv: level (total, paper, rule, claim), paper, name, jobs,
wall_seconds, cpu_seconds, max_rss_mb (the largest peak of any one job).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from repro.pipeline.provenance import METADATA_DIR, Job, job_from_record, upstream_jobs

COLUMNS = ["level", "paper", "name", "jobs", "wall_seconds", "cpu_seconds", "max_rss_mb"]
SHARED = "shared"


def all_jobs(workdir: Path, results_dir: str | None = None) -> list[Job]:
    """Every job recorded in Snakemake's metadata, outputs merged per job; with `results_dir`, only
    the jobs that wrote into it (one working directory also holds the runs of other scales and seeds)."""
    jobs: dict[tuple[str, str], Job] = {}
    directory = workdir / METADATA_DIR
    if not directory.is_dir():
        return []
    for record_file in sorted(directory.iterdir()):
        try:
            path = base64.urlsafe_b64decode(record_file.name.encode()).decode()
            record = json.loads(record_file.read_text())
        except (ValueError, UnicodeDecodeError):
            continue  # not a job record
        job = job_from_record(path, record)
        if job.key in jobs:
            jobs[job.key].outputs.append(path)
        else:
            jobs[job.key] = job
    if results_dir is None:
        return list(jobs.values())
    return [job for job in jobs.values() if any(_under(output, results_dir) for output in job.outputs)]


def _under(path: str, directory: str) -> bool:
    parts, root = Path(path).parts, Path(directory).parts
    return len(parts) > len(root) and parts[: len(root)] == root


def paper_of(job: Job, results_dir: str, papers: Iterable[str]) -> str:
    papers = set(papers)
    depth = len(Path(results_dir).parts)
    for output in job.outputs:
        if _under(output, results_dir) and Path(output).parts[depth] in papers:
            return Path(output).parts[depth]
    return SHARED


def job_table(workdir: Path, results_dir: str, papers: Iterable[str]) -> pd.DataFrame:
    """One row per benchmarked job: rule, paper, wall/cpu seconds, peak memory."""
    rows = []
    for job in all_jobs(workdir, results_dir):
        bench = job.benchmark(workdir)
        if bench is None:
            continue  # bookkeeping rules (scorecard, lineage) have no benchmark
        rows.append(
            {
                "key": "\0".join(job.key),
                "rule": job.rule,
                "paper": paper_of(job, results_dir, papers),
                "wall_seconds": bench.wall_seconds,
                "cpu_seconds": bench.cpu_seconds,
                "max_rss_mb": bench.max_rss_mb,
            }
        )
    return pd.DataFrame(rows, columns=["key", "rule", "paper", "wall_seconds", "cpu_seconds", "max_rss_mb"])


def _summary(level: str, paper: str, name: str, rows: pd.DataFrame) -> dict:
    return {
        "level": level,
        "paper": paper,
        "name": name,
        "jobs": len(rows),
        "wall_seconds": float(rows["wall_seconds"].sum()),
        "cpu_seconds": float(rows["cpu_seconds"].sum()),
        "max_rss_mb": float(rows["max_rss_mb"].max()) if len(rows) else 0.0,
    }


def compute_accounting(
    workdir: Path | str, results_dir: str, papers: Iterable[str], claim_files: dict[tuple[str, str], list[str]]
) -> pd.DataFrame:
    """The compute table (see module docstring). `claim_files` maps (paper, claim id) to
    the files, relative to workdir, that the claim reads."""
    workdir = Path(workdir)
    papers = list(papers)
    jobs = job_table(workdir, results_dir, papers)
    out = [_summary("total", "all", "all", jobs)]
    for paper, rows in sorted(jobs.groupby("paper"), key=lambda kv: kv[0]):
        out.append(_summary("paper", paper, paper, rows))
    for (paper, rule), rows in sorted(jobs.groupby(["paper", "rule"]), key=lambda kv: kv[0]):
        out.append(_summary("rule", paper, rule, rows))
    for (paper, claim_id), files in sorted(claim_files.items()):
        keys = {"\0".join(job.key) for path in files for job in upstream_jobs(path, workdir)}
        out.append(_summary("claim", paper, claim_id, jobs[jobs["key"].isin(keys)]))
    return pd.DataFrame(out, columns=COLUMNS)
