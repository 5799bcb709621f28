"""The digest of the repro modules a notebook imports: the param that reruns a notebook when its code
changes (repro.pipeline.code_digest, rule figure_notebook / table_notebook)."""

import os
from pathlib import Path

import pytest

from repro.pipeline.code_digest import claims_digest, module_digest, repro_sources, source_digest

ROOT = Path(__file__).resolve().parents[1]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_digest_follows_imports_at_any_depth_and_lazy_tables_and_nothing_else(tmp_path):
    src = tmp_path / "src"
    write(src / "repro/__init__.py", "")
    write(src / "repro/plots.py", "def draw():\n    from repro.styles import COLOURS\n    return COLOURS\n")
    write(src / "repro/styles.py", "COLOURS = ['blue']\n")
    write(src / "repro/unrelated.py", "X = 1\n")
    write(
        src / "repro/models/__init__.py",
        "from repro.lazy import lazy_exports\n"
        "__getattr__, __dir__, __all__ = lazy_exports(__name__, {'repro.models.net': ('Net',)})\n",
    )
    write(src / "repro/lazy.py", "def lazy_exports(name, table):\n    ...\n")
    write(src / "repro/models/net.py", "class Net: ...\n")
    script = tmp_path / "notebook.py"
    write(script, "import numpy\nfrom repro.plots import draw\nfrom repro.models import Net\n")

    found = {path.relative_to(src).as_posix() for path in repro_sources(script, src)}
    assert found == {
        "repro/__init__.py",
        "repro/plots.py",
        "repro/styles.py",
        "repro/models/__init__.py",
        "repro/models/net.py",
        "repro/lazy.py",
    }
    before = source_digest(script, src)
    write(src / "repro/unrelated.py", "X = 2\n")
    assert source_digest(script, src) == before
    styles = src / "repro/styles.py"
    os.utime(styles, ns=(styles.stat().st_atime_ns, styles.stat().st_mtime_ns + 10**9))  # touched, same bytes
    assert source_digest(script, src) == before
    write(styles, "COLOURS = ['red']\n")
    assert source_digest(script, src) != before
    changed = source_digest(script, src)
    write(script, "from repro.plots import draw\nfrom repro.models import Net\n# a comment\n")
    assert source_digest(script, src) == changed  # the notebook itself is the rule's input, not in the digest

    # A report rule's module is part of its own digest.
    plots = module_digest("repro.plots", src)
    write(src / "repro/plots.py", "def draw():\n    from repro.styles import COLOURS\n    return COLOURS[0]\n")
    assert module_digest("repro.plots", src) != plots
    plots = module_digest("repro.plots", src)
    write(src / "repro/unrelated.py", "X = 3\n")
    assert module_digest("repro.plots", src) == plots
    with pytest.raises(ValueError, match="no module 'repro.nope'"):
        module_digest("repro.nope", src)


def test_no_notebook_depends_on_a_papers_claims_module():
    """A changed claim reruns the judging rule and the report's copies, not the notebooks."""
    for notebook in sorted((ROOT / "notebooks").glob("*/*.py")):
        sources = {path.relative_to(ROOT / "src").as_posix() for path in repro_sources(notebook)}
        assert "repro/pipeline/tables.py" in sources or "repro/pipeline/plotting.py" in sources, notebook
        assert not any(name.endswith("/claims.py") and "/papers/" in name for name in sources), notebook


def test_the_judging_rule_reruns_when_a_papers_claim_code_changes(tmp_path):
    """claims_digest: the param of rule paper_claims, content-based (not mtime) and per paper."""
    assert claims_digest("sixteen_heads") == claims_digest("sixteen_heads") != claims_digest("layer_diversity")
    src = tmp_path / "src"
    for name in ("repro/pipeline/claims.py", "repro/pipeline/decisions.py"):
        write(src / name, (ROOT / "src" / name).read_text())
    write(src / "repro/papers/toy/claims.py", "X = 1\n")
    before = claims_digest("toy", src)
    claims = src / "repro/papers/toy/claims.py"
    os.utime(claims, ns=(claims.stat().st_atime_ns, claims.stat().st_mtime_ns + 10**9))
    assert claims_digest("toy", src) == before
    write(claims, "X = 2\n")
    assert claims_digest("toy", src) != before
    before = claims_digest("toy", src)
    write(src / "repro/papers/toy/theory/bound.py", "Y = 1\n")  # a subpackage's module counts too
    assert claims_digest("toy", src) != before
    with pytest.raises(ValueError, match="no modules for paper 'nope'"):
        claims_digest("nope", src)
