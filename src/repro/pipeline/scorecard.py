"""The scorecard: every paper's ``claims.csv`` in one table, with a per-paper count of verdicts.

``results/scorecard.csv`` has the columns of :data:`repro.pipeline.claims.COLUMNS`, one row per
claim, sorted by paper, item (fig2 before fig10) and claim. ``results/scorecard.md`` shows a summary
per paper and scale, then each paper's claims.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from repro.pipeline.claims import (
    COLUMNS,
    INCONCLUSIVE,
    NOT_MEASURABLE,
    NOT_REPRODUCED,
    REPRODUCED,
    UNCLASSIFIED,
    VERDICTS,
    natural_key,
)
from repro.pipeline.tables import SMALL_SCALES, to_markdown
from repro.pipeline.tidy import write_csv

SUMMARY_COLUMNS = ("paper", "scale", REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_MEASURABLE, "claims")
#: The claims.csv of earlier versions: no phase; before that no decision rule or projection; before that
#: no class, gate or null (and, earlier still, no detail).
UNPHASED_COLUMNS = tuple(c for c in COLUMNS if c != "phase")
UNRULED_COLUMNS = tuple(c for c in UNPHASED_COLUMNS if c not in ("rule", "seeds_to_decide"))
LEGACY_COLUMNS = tuple(c for c in UNRULED_COLUMNS if c not in ("class", "gate", "null"))
#: Why a claim was not judged, from the first words of its detail (see repro.pipeline.claims.judge_claim).
REASONS = {
    "Judged at": "not judged at this scale",
    "Health gate failed": "its runs failed their health gate",
    "Null not rejected": "its null did not come out 'not reproduced'",
    "Replicates:": "too few seeds (or rounds)",
}


def read_claims(path: str | Path) -> pd.DataFrame:
    """Read one ``claims.csv`` as text (values round-trip unchanged); ``detail`` may be absent."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"claims file {path.as_posix()} does not exist")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    columns = tuple(df.columns)
    if columns in (LEGACY_COLUMNS, LEGACY_COLUMNS[:-1]):
        df = df.assign(**{"class": UNCLASSIFIED, "gate": "none declared", "null": "none declared"})
        if "detail" not in df:
            df["detail"] = ""
        columns = UNRULED_COLUMNS
    if columns == UNRULED_COLUMNS:
        df = df.assign(rule="", seeds_to_decide="")
        columns = UNPHASED_COLUMNS
    if columns == UNPHASED_COLUMNS:
        df = df.assign(phase="").loc[:, list(COLUMNS)]
    elif columns != COLUMNS:
        raise ValueError(f"{path.as_posix()}: columns {list(columns)}; expected {list(COLUMNS)}")
    unknown = sorted(set(df["verdict"]) - set(VERDICTS))
    if unknown:
        raise ValueError(f"{path.as_posix()}: unknown verdicts {unknown}; expected one of {list(VERDICTS)}")
    return df


def combine(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate claims files and sort rows by paper, item (natural order) and claim."""
    frames = [read_claims(path) for path in paths]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMNS), dtype=str)
    order = sorted(range(len(df)), key=lambda i: (df.at[i, "paper"], natural_key(df.at[i, "item"]), df.at[i, "claim"]))
    return df.iloc[order].reset_index(drop=True).loc[:, list(COLUMNS)]


def summarise(df: pd.DataFrame, by_class: bool = False) -> pd.DataFrame:
    """Count each verdict per paper and scale (and class: identity, simulation, empirical, timing), sorted."""
    keys = ["paper", "scale", "class"] if by_class else ["paper", "scale"]
    rows = []
    for values, group in df.groupby(keys, sort=True):
        counts = group["verdict"].value_counts()
        row = dict(zip(keys, values))
        row.update({v: int(counts.get(v, 0)) for v in VERDICTS})
        row["claims"] = len(group)
        rows.append(row)
    columns = [*keys, *SUMMARY_COLUMNS[2:]]
    return pd.DataFrame(rows, columns=columns)


def reason(detail: str) -> str:
    """Why a claim was not judged (one of :data:`REASONS`), from its detail."""
    return next((why for start, why in REASONS.items() if detail.startswith(start)), "see its detail")


def unjudged(df: pd.DataFrame) -> pd.DataFrame:
    """Inconclusive and not-measurable claims counted per paper, verdict and reason."""
    rows = df[df["verdict"].isin([INCONCLUSIVE, NOT_MEASURABLE])]
    why = [
        "the interval over seeds straddles the claim's boundary" if v == INCONCLUSIVE else reason(d)
        for v, d in zip(rows["verdict"], rows["detail"])
    ]
    counted = rows.assign(reason=why).groupby(["paper", "verdict", "reason"], sort=True).size()
    return counted.rename("claims").reset_index()


def item_link(paper: str, item: str) -> str:
    """A markdown link from results/scorecard.md to the item's figure (png) or table (md)."""
    target = f"{paper}/figures/{item}.png" if item.startswith("fig") else f"{paper}/tables/{item}.md"
    return f"[{item}]({target})"


def render_markdown(df: pd.DataFrame) -> str:
    """The scorecard as markdown: summary table, then one claims table per paper."""
    lines = [
        "# Scorecard",
        "",
        "One row per claim. Paper values are the papers' own numbers or findings; measured values come",
        "from this pipeline only. Tolerances were fixed with each claim before its result was seen.",
    ]
    small = [scale for scale in SMALL_SCALES if scale in set(df["scale"])]
    if small:
        lines += [
            "",
            f"Rows at {' and '.join(small)} scale judge small-scale analogues of the papers' experiments,",
            "not the original settings.",
        ]
    lines += ["", "## Summary", "", to_markdown(summarise(df, by_class=True)).rstrip()]
    why = unjudged(df)
    if len(why):
        lines += ["", "Why claims were not judged:", "", to_markdown(why, numparse=False).rstrip()]
    for paper, group in df.groupby("paper", sort=True):
        table = group.drop(columns=["paper"]).rename(columns={"paper_value": "paper value"})
        table["item"] = [item_link(paper, item) for item in table["item"]]
        lines += ["", f"## {paper}", "", to_markdown(table, numparse=False).rstrip()]
    return "\n".join(lines) + "\n"


def write_scorecard(df: pd.DataFrame, out_csv: str | Path, out_md: str | Path) -> None:
    """Write the combined claims as CSV (columns :data:`COLUMNS`) and as markdown."""
    for path in (Path(out_csv), Path(out_md)):
        path.parent.mkdir(parents=True, exist_ok=True)
    write_csv(df.loc[:, list(COLUMNS)], out_csv, float_format=None)
    Path(out_md).write_text(render_markdown(df), encoding="utf-8")
