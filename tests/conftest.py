"""Fixtures shared by several test modules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def planned_rules():
    """``planned_rules(configfile, *targets)``: the rules a forced dry run of the targets schedules
    (``snakemake TARGETS -n -F --configfile FILE`` with the project's venv), as a set of names."""

    def plan(configfile: str, *targets: str) -> set[str]:
        out = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "snakemake"), *targets, "-n", "-F", "--configfile", configfile],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return {line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith(("rule ", "localrule "))}

    return plan


def copy_checkout(target: Path) -> Path:
    """Copy the working tree (tracked and untracked, non-ignored files) into `target`: a fresh clone
    with the uncommitted changes, without results/, .snakemake/ or .venv/."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in listing.split("\0"):
        if name and (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


def snakemake_command(*args: str, configfiles: tuple[str, ...] = ("config/smoke.yaml",)) -> list[str]:
    """The README's bare smoke command with the project's venv, plus `args` (targets and flags, which go
    before --configfile: it takes every word after it as a file). No --workflow-profile: Snakemake finds
    profiles/default itself, as it must for the documented `snakemake --cores N`."""
    bin_dir = Path(sys.executable).parent
    return [str(bin_dir / "snakemake"), "--cores", "2", *args, "--configfile", *configfiles]


def snakemake_env(workdir: Path) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(workdir), "SOURCE_DATE_EPOCH": "0"}


def write_reference_levels(results: Path, paper: str, unigram: float = 7.0) -> Path:
    """The reference levels of `paper`'s language-model split under a results root (rule
    lm_reference_levels), for claims whose health gate compares a model's loss with its unigram level."""
    path = Path(results) / paper / "data" / "lm_reference_levels.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{{"unigram_nats": {unigram}, "bigram_nats": {unigram / 2}}}')
    return path
