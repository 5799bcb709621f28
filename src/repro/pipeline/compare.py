"""Compare two results directories: which verdicts, measurements and figure data changed.

Scorecard rows are matched on (paper, item, claim). Figure and table data are compared
by the sha256 of every tidy CSV under ``<paper>/data/`` and of every table under
``<paper>/tables/``; a file present on one side only is reported too.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repro.pipeline.provenance import sha256

KEY = ["paper", "item", "claim"]


def read_scorecard(results_dir: Path) -> pd.DataFrame:
    path = results_dir / "scorecard.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: is {results_dir} a results directory of a finished run?")
    return pd.read_csv(path, keep_default_na=False, dtype=str)


def changed_claims(a: Path, b: Path) -> pd.DataFrame:
    """Rows whose measured value, verdict or scale differ, or that exist on one side only."""
    left, right = read_scorecard(a), read_scorecard(b)
    merged = left.merge(right, on=KEY, how="outer", suffixes=("_a", "_b"), indicator=True)
    differs = (
        (merged["_merge"] != "both")
        | (merged["measured_a"] != merged["measured_b"])
        | (merged["verdict_a"] != merged["verdict_b"])
    )
    columns = KEY + ["measured_a", "measured_b", "verdict_a", "verdict_b"]
    return merged.loc[differs, columns].fillna("(absent)").sort_values(KEY).reset_index(drop=True)


def verdict_changes(a: Path, b: Path) -> tuple[int, pd.DataFrame]:
    """(claims judged in both runs, the rows whose verdict differs): for two runs of the same experiments
    with other seeds (seed_offset), where every measured value differs but a stable verdict should not."""
    left, right = read_scorecard(a), read_scorecard(b)
    both = left.merge(right, on=KEY, how="inner", suffixes=("_a", "_b"))
    differs = both[both["verdict_a"] != both["verdict_b"]]
    columns = KEY + ["verdict_a", "verdict_b", "measured_a", "measured_b"]
    return len(both), differs.loc[:, columns].sort_values(KEY).reset_index(drop=True)


def format_verdict_changes(a: Path, b: Path) -> str:
    total, differs = verdict_changes(a, b)
    lines = [
        f"A = {a}",
        f"B = {b}",
        "",
        f"{total - len(differs)} of {total} claims have the same verdict in both runs.",
    ]
    if len(differs):
        lines.append(f"{len(differs)} differ:")
        for row in differs.itertuples():
            lines.append(f"- {row.paper} {row.item} {row.claim}")
            lines.append(f"    {row.verdict_a} ({row.measured_a})  ->  {row.verdict_b} ({row.measured_b})")
    return "\n".join(lines) + "\n"


def data_files(results_dir: Path) -> dict[str, str | None]:
    """{relative path: sha256} of every tidy CSV and table of every paper."""
    files = {}
    for pattern in ("*/data/*.csv", "*/tables/*.csv"):
        for path in sorted(results_dir.glob(pattern)):
            files[str(path.relative_to(results_dir))] = sha256(path)
    return files


def changed_data(a: Path, b: Path) -> list[tuple[str, str]]:
    """(relative path, how it changed) for data files that differ between the two runs."""
    left, right = data_files(a), data_files(b)
    out = []
    for name in sorted(set(left) | set(right)):
        if name not in left:
            out.append((name, "only in B"))
        elif name not in right:
            out.append((name, "only in A"))
        elif left[name] != right[name]:
            out.append((name, "content differs"))
    return out


def format_comparison(a: Path, b: Path) -> str:
    claims = changed_claims(a, b)
    data = changed_data(a, b)
    lines = [f"A = {a}", f"B = {b}", ""]
    if len(claims):
        lines.append(f"{len(claims)} scorecard row(s) changed:")
        for row in claims.itertuples():
            lines.append(f"- {row.paper} {row.item} {row.claim}")
            lines.append(f"    measured: {row.measured_a}  ->  {row.measured_b}")
            if row.verdict_a != row.verdict_b:
                lines.append(f"    verdict:  {row.verdict_a}  ->  {row.verdict_b}")
    else:
        lines.append("No scorecard row changed.")
    lines.append("")
    if data:
        lines.append(f"{len(data)} data file(s) behind figures and tables changed:")
        lines += [f"- {name}: {how}" for name, how in data]
    else:
        lines.append("No data behind a figure or table changed.")
    return "\n".join(lines)
