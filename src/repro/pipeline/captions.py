"""Captions of the Snakemake report: what an item shows, the paper's finding, our verdicts.

The description (what the figure or table shows and what the paper found) is written
once per item in ``workflow/report/<paper>/<item>.rst``; the verdicts come from the
paper's claims.csv of this run, and the scale from the configuration. The notebook rules
pass the assembled text to the caption template as a parameter, so the report always
shows the verdicts of the run it documents.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repro.papers import PAPERS


def _rst_literal(text: str) -> str:
    """Text safe inside RST: inline markup characters escaped."""
    for char in ("\\", "*", "`", "|", "_"):
        text = text.replace(char, "\\" + char)
    return text


def item_description(paper: str, item: str, report_dir: Path | str) -> str:
    path = Path(report_dir) / paper / f"{item}.rst"
    if path.is_file():
        return path.read_text().strip()
    kind = "Figure" if item.startswith("fig") else "Table"
    return f"{kind} {item} of {PAPERS.get(paper, paper)}."


def verdict_lines(paper: str, item: str, claims_csv: Path | str | None) -> list[str]:
    if claims_csv is None or not Path(claims_csv).is_file():
        return ["No claims are registered for this item."]
    claims = pd.read_csv(claims_csv, dtype=str, keep_default_na=False)
    rows = claims[claims["item"] == item]
    if rows.empty:
        return ["No claims are registered for this item."]
    return [
        f"- **{row.verdict}**: {_rst_literal(row.claim)} Measured {_rst_literal(row.measured)}; "
        f"tolerance {_rst_literal(row.tolerance)}; paper: {_rst_literal(row.paper_value)}."
        for row in rows.itertuples()
    ]


def item_caption(paper: str, item: str, scale: str, claims_csv: Path | str | None, report_dir: Path | str) -> str:
    scale_text = (
        f"Scale: **{scale}**, a small-scale analogue of the paper's setting."
        if scale in ("smoke", "laptop")
        else f"Scale: **{scale}**."
    )
    lines = [item_description(paper, item, report_dir), "", scale_text, "", "Our verdicts:", ""]
    lines += verdict_lines(paper, item, claims_csv)
    lines += ["", f"Notebook: results/{scale}/{paper}/notebooks/{item}.html; lineage: the item's .lineage.json."]
    return "\n".join(lines)
