"""Style gates (also `make lint`): ruff's lint and format checks over the Python code, snakefmt over
the Snakefile and the rule files. Settings in pyproject.toml ([tool.ruff], [tool.snakefmt])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["snakefmt", "--check", "Snakefile", "workflow"],
    ],
    ids=["ruff-check", "ruff-format", "snakefmt"],
)
def test_style_gate_is_clean(command):
    result = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, (
        f"`{' '.join(command)}` found problems (fix them, e.g. `make format`):\n"
        + (result.stdout + result.stderr)[-4000:]
    )
