"""Lineage cards: for one figure or table, everything that made it.

``<item>.lineage.json`` sits next to the figure or table and lists, in dependency order (the
same in every run of the DAG, whatever order a scheduler ran the jobs in), every rule of its
chain (data -> training -> analysis -> notebook) with its
command, parameters, seeds, input files with sha256, and wall time, CPU time and peak
memory from its benchmark file; then the code version (git commit, dirty or not) and
the versions of the packages that matter. See `repro.pipeline.provenance` for how the
chain is recovered from Snakemake's job records.
"""

from __future__ import annotations

import json
import platform
import subprocess
from dataclasses import asdict
from pathlib import Path

from repro.data import cards
from repro.pipeline import machine
from repro.pipeline.provenance import Job, sha256, upstream_jobs

PACKAGES = (
    "torch",
    "snakemake",
    "papermill",
    "jupytext",
    "numpy",
    "pandas",
    "scipy",
    "matplotlib",
    "seaborn",
    "tokenizers",
    "safetensors",
    "sacrebleu",
    "transformers",
)


def package_versions() -> dict[str, str]:
    return {"python": platform.python_version(), **cards.package_versions(PACKAGES)}


def code_version(workdir: Path) -> dict[str, object]:
    """The git commit of the working tree and whether tracked files differ from it."""

    def git(*args: str) -> str | None:
        try:
            result = subprocess.run(["git", *args], cwd=workdir, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result.stdout.strip() if result.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "note": "not a git checkout"}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status)}


def in_dependency_order(jobs: list[Job]) -> list[Job]:
    """The jobs by depth in their chain (each after every job whose output it reads), ties by rule
    and outputs: one order for every run of the DAG, where start times differ between schedulers."""
    producer = {path: job.key for job in jobs for path in job.outputs}
    by_key = {job.key: job for job in jobs}
    depth: dict[tuple[str, str], int] = {}

    def depth_of(job: Job) -> int:
        if job.key not in depth:
            parents = {producer[path] for path in job.inputs if path in producer} - {job.key}
            depth[job.key] = 1 + max((depth_of(by_key[key]) for key in parents), default=-1)
        return depth[job.key]

    return sorted(jobs, key=lambda job: (depth_of(job), job.rule, sorted(job.outputs)))


def lineage_card(target: str, workdir: Path | str, paper: str, item: str) -> dict:
    """The lineage card of `target` (a path relative to `workdir`, the Snakemake workdir)."""
    workdir = Path(workdir)
    # A notebook reads its paper's claims.csv only to caption the verdicts; walking through
    # it would list every run of the paper, not the ones this item was drawn from.
    upstream = upstream_jobs(target, workdir, stop_at=lambda path: path.endswith("/claims.csv"))
    jobs = in_dependency_order(upstream)
    if not jobs:
        raise FileNotFoundError(
            f"no Snakemake record for {target} under {workdir / '.snakemake'}: was it made by the workflow?"
        )
    steps, seeds = [], set()
    wall = cpu = peak = 0.0
    for job in jobs:
        bench = job.benchmark(workdir)
        if bench is not None:
            wall, cpu, peak = wall + bench.wall_seconds, cpu + bench.cpu_seconds, max(peak, bench.max_rss_mb)
        seeds.update(job.seeds())
        steps.append(
            {
                "rule": job.rule,
                "outputs": sorted(job.outputs),
                "command": job.shellcmd,
                "params": job.params,
                "seeds": job.seeds(),
                "inputs": [{"path": path, "sha256": sha256(workdir / path)} for path in job.inputs],
                "logs": job.logs,
                "benchmark": asdict(bench) if bench is not None else None,
            }
        )
    return {
        "paper": paper,
        "item": item,
        "file": target,
        "sha256": sha256(workdir / target),
        "seeds": sorted(seeds),
        "steps": steps,
        "totals": {"jobs": len(steps), "wall_seconds": wall, "cpu_seconds": cpu, "max_rss_mb": peak},
        "code": code_version(workdir),
        "packages": package_versions(),
        "machine": machine.describe(),
    }


def write_lineage_card(target: str, out: Path | str, workdir: Path | str, paper: str, item: str) -> Path:
    card = lineage_card(target, workdir, paper, item)
    out = Path(out)
    out.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    return out
