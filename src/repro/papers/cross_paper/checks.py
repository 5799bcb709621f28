"""The config check of the cross_paper section: what the schema cannot see (repro.pipeline.configcheck
calls `check_section` before any job starts)."""

from __future__ import annotations

from repro.papers.cross_paper.specs import BLOCKS_PAPER, CLAIMED_BLOCKS


def check_section(config: dict, paper: str) -> list[str]:
    """Problems with the section that the schema cannot see (one line each, naming the key)."""
    section = config[paper]["blocks"]
    figures = config[BLOCKS_PAPER]["figures"]
    item = section["figure"]
    if item not in figures:
        return [
            f"config key {paper}.blocks.figure={item!r} is not a figure of {BLOCKS_PAPER} "
            f"(its figures: {', '.join(sorted(figures))})"
        ]
    problems = []
    trained = figures[item]["variants"]
    untrained = [v for v in section["variants"] if v not in trained]
    if untrained:
        problems.append(
            f"config key {paper}.blocks.variants names {untrained}, which {BLOCKS_PAPER}.figures.{item} does not "
            f"train (it trains {', '.join(trained)})"
        )
    cut = sorted(set(section["variants"]) & set(figures[item].get("variant_seeds", {})))
    if cut:
        problems.append(
            f"config key {BLOCKS_PAPER}.figures.{item}.variant_seeds gives {cut} fewer seeds than the figure's, "
            f"but {paper}.blocks reads them on every seed of the figure: remove them from variant_seeds"
        )
    missing = [v for v in CLAIMED_BLOCKS if v not in section["variants"]]
    if missing:
        problems.append(f"config key {paper}.blocks.variants must include {missing}: the claims compare them")
    return problems
