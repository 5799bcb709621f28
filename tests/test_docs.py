"""The documentation stays navigable: every relative link in the repository's Markdown files reaches a
file, the README stays a short user guide, and every decision record is listed in the records' index."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = {".git", ".venv", "results", ".snakemake", "node_modules"}
LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_files() -> list[Path]:
    return sorted(
        p
        for p in ROOT.rglob("*.md")
        if not SKIPPED & set(p.relative_to(ROOT).parts) and not any(part.endswith(".egg-info") for part in p.parts)
    )


def broken_links(path: Path) -> list[str]:
    """The relative link targets of `path` (anchors dropped) that name no file or directory."""
    broken = []
    for match in LINK.finditer(path.read_text()):
        target = match.group(1).split("#")[0]
        if not target or re.match(r"[a-z]+:", target):  # an anchor in the page, or a URL
            continue
        if not (path.parent / target).exists():
            broken.append(target)
    return broken


def test_every_relative_link_reaches_a_file():
    files = markdown_files()
    assert ROOT / "README.md" in files and ROOT / "docs" / "verdicts.md" in files
    broken = {str(p.relative_to(ROOT)): links for p in files if (links := broken_links(p))}
    assert not broken, broken


def test_the_link_check_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("x")
    page.write_text("[ok](there.md#part), [web](https://example.org), [top](#top), [gone](docs/there.md)")
    assert broken_links(page) == ["docs/there.md"]


def test_the_readme_is_a_short_user_guide():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 300, f"README.md has {len(lines)} lines; move narrative to docs/"


def test_every_decision_record_is_in_the_index():
    records = sorted(p.name for p in (ROOT / "docs" / "decisions").glob("[0-9][0-9][0-9][0-9]-*.md"))
    index = (ROOT / "docs" / "decisions" / "README.md").read_text()
    assert records and [r for r in records if f"({r})" not in index] == []
