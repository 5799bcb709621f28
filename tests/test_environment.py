"""Set-up files agree with each other: environment.yml vs pyproject.toml, the Makefile, CI, the profile."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    # PEP 503 normalisation: case and runs of -_. do not distinguish packages.
    return re.sub(r"[-_.]+", "-", requirement.lower())


def _pins(requirements: list[str]) -> dict[str, str]:
    pins = {}
    for requirement in requirements:
        match = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;]+)\s*", requirement)
        assert match, f"{requirement!r} is not pinned with =="
        pins[_name(match[1])] = match[2]
    return pins


def _environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def test_environment_yml_pins_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    expected = _pins(project["dependencies"] + project["optional-dependencies"]["test"])

    dependencies = _environment()["dependencies"]
    (pip_section,) = [d["pip"] for d in dependencies if isinstance(d, dict) and "pip" in d]
    editable = [line for line in pip_section if line.startswith("-e")]
    assert editable == ["-e ."]
    assert _pins([line for line in pip_section if not line.startswith("-")]) == expected


def test_environment_yml_uses_python_311_and_pip():
    dependencies = [d for d in _environment()["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in dependencies and "pip" in dependencies


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_makefile_targets_use_the_venv_and_install_once():
    env = {**os.environ, "MAKEFLAGS": ""}

    def dry_run(target: str, stamped: bool) -> str:
        # -n prints commands without running them; -o/-W pretend the stamp is up to date or stale.
        flag = ["-o", ".venv/.installed"] if stamped else ["-W", "pyproject.toml"]
        return subprocess.run(
            ["make", "-n", *flag, target], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        ).stdout

    fresh = dry_run("test", stamped=False)
    assert re.search(r"\.venv/bin/python -m pip install +'torch==2\.13\.0'", fresh)
    assert fresh.index("torch==2.13.0") < fresh.index("pip install -e '.[test]'")
    assert ".venv/bin/python -m pytest" in fresh

    assert "pip install" not in dry_run("test", stamped=True)
    assert "--configfile config/smoke.yaml" in dry_run("smoke", stamped=True)
    reproduce = dry_run("reproduce", stamped=True)
    assert "snakemake" in reproduce and "--report results/laptop/report.html" in reproduce
    assert "--lint" in dry_run("lint", stamped=True)


def test_ci_script_runs_make_test():
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK)
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in text
    commands = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    # It may install system packages first (Chromium for the report test); it tests only through `make test`.
    assert commands[-1] == "make test" and sum("make" in c.split() for c in commands) == 1
    assert "pytest" not in text


def test_default_profile_keys_are_all_commented():
    path = ROOT / "profiles/default/profile.v9+.yaml"
    profile = yaml.safe_load(path.read_text())
    for key in (
        "cores",
        "printshellcmds",
        "rerun-incomplete",
        "keep-going",
        "show-failed-logs",
        "default-resources",
        "latency-wait",
    ):
        assert key in profile
    assert profile["keep-going"] is False
    lines = path.read_text().splitlines()
    for index, line in enumerate(lines):
        if re.match(r"^[a-z][a-z-]*:", line):
            assert lines[index - 1].startswith("#"), f"key on line {index + 1} has no comment above it"
