"""The shape of the code: one package per paper with the same parts, the shared library imports no
paper package and no paper imports another (import-linter contracts)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repro.papers import PAPERS, part

ROOT = Path(__file__).resolve().parents[1]
LINT = str(Path(sys.executable).parent / "lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root / "src"))
    return subprocess.run([LINT, "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_the_shared_library_imports_no_paper_package():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 kept, 0 broken" in result.stdout


def test_the_contract_catches_a_shared_module_importing_a_paper(tmp_path):
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    runs = tmp_path / "src" / "repro" / "runs.py"
    runs.write_text(runs.read_text() + "\nfrom repro.papers.param_allocation import u_shape  # noqa\n")
    result = lint(tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout
    assert "repro.runs -> repro.papers.param_allocation.u_shape" in result.stdout


def test_a_paper_importing_another_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    runs = tmp_path / "src" / "repro" / "papers" / "layer_diversity" / "specs.py"
    runs.write_text(runs.read_text() + "\nfrom repro.papers.sixteen_heads import head_summaries  # noqa\n")
    result = lint(tmp_path)
    assert result.returncode != 0 and "No paper imports another BROKEN" in result.stdout


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_every_paper_has_the_same_parts(paper):
    import argparse

    checks = importlib.import_module(part(paper, "checks"))
    commands = importlib.import_module(part(paper, "commands"))
    claims = importlib.import_module(part(paper, "claims"))
    importlib.import_module(part(paper, "specs"))  # the specs the rules pass to the commands
    importlib.import_module(part(paper, "gates_and_nulls"))  # the health gates and nulls its claims declare
    assert callable(checks.check_section) and isinstance(claims.DEVIATIONS, list)
    subparsers = argparse.ArgumentParser().add_subparsers()
    commands.register(subparsers)
    assert list(subparsers.choices) == [paper]  # `python -m repro <paper> <action>`


def test_analyses_read_activations_through_named_hook_points():
    """No analysis attaches raw forward hooks or reads a layer number out of a hook's name: the
    models' hook points (repro.models.hooks) name every activation an analysis reads."""
    offenders = []
    for path in sorted((ROOT / "src" / "repro").rglob("*.py")):
        if "models" in path.relative_to(ROOT / "src" / "repro").parts[:1]:
            continue
        text = path.read_text()
        for pattern in ("register_forward_hook", "register_forward_pre_hook", 'int(name.split(".")'):
            if pattern in text:
                offenders.append(f"{path.relative_to(ROOT)}: {pattern}")
    assert not offenders, offenders


def test_claims_are_registered_one_way():
    """A claim is registered by @claim on its function or, for a table of claims that differ in a few
    fields, by repro.pipeline.claims.register_table: no module adds claim functions to its namespace by
    hand or calls the decorator on a function it renamed."""
    offenders = []
    for path in sorted((ROOT / "src" / "repro" / "papers").rglob("*.py")):
        text = path.read_text()
        for pattern in ("globals().update(", "__qualname__ = claim_id", ")(measure)"):
            if pattern in text:
                offenders.append(f"{path.relative_to(ROOT)}: {pattern}")
    assert not offenders, offenders
