"""Fixtures shared by several test modules."""

from __future__ import annotations

import subprocess
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
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout
        return {line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith(("rule ", "localrule "))}

    return plan
