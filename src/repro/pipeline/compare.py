"""Compare two results directories: which verdicts, measurements and figure data changed.

Scorecard rows are matched on (paper, item, claim). Figure and table data are compared
by the sha256 of every tidy CSV under ``<paper>/data/`` and of every table under
``<paper>/tables/``; a file present on one side only is reported too.

For two runs of the same experiments with other seeds (`seed_offset`), `format_verdict_changes` says how
far their verdicts agree, counting only what can change (empirical and timing claims) and only decided
verdicts as agreement: the same "reproduced" or "not reproduced" in both, over the claims decided in
either run. A claim reproduced in one run and not reproduced in the other is a flip and always listed;
"inconclusive" in both is reported apart, never as agreement.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repro.pipeline.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from repro.pipeline.provenance import sha256

KEY = ["paper", "item", "claim"]


def read_scorecard(results: Path) -> pd.DataFrame:
    """The scorecard of a results directory, or a scorecard CSV itself (such as a run's verdicts kept in
    docs/runs/, which need only the columns paper, item, claim, class, verdict and measured)."""
    path = results if results.is_file() else results / "scorecard.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: is {results} a results directory of a finished run?")
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


#: Classes whose verdict rests on trained runs and may change with their seeds; identities and fixed
#: simulations give the same verdict in any two runs and would only inflate the agreement.
VARYING_CLASSES = ("empirical", "timing", "new finding")
DECIDED = (REPRODUCED, NOT_REPRODUCED)
#: How a claim's verdicts in two runs relate, in the order they are reported.
OUTCOMES = {
    "flip": "reproduced in one run, not reproduced in the other",
    "decided once": "decided in one run only (inconclusive or not measurable in the other)",
    "same decided": "the same decided verdict",
    "inconclusive in both": "inconclusive in both",
    "not measurable in both": "not measurable in both",
    "undecided, differently": "inconclusive in one run, not measurable in the other",
}


def _outcome(a: str, b: str) -> str:
    if a in DECIDED and b in DECIDED:
        return "same decided" if a == b else "flip"
    if a in DECIDED or b in DECIDED:
        return "decided once"
    if a == b:
        return "inconclusive in both" if a == INCONCLUSIVE else "not measurable in both"
    return "undecided, differently"


def verdict_agreement(a: Path, b: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """For two runs of the same experiments (with other seeds: seed_offset), the empirical and timing
    claims of both with their outcome (:data:`OUTCOMES`), and the claims present in one run only."""
    left, right = read_scorecard(a), read_scorecard(b)
    left, right = (side[side["class"].isin(VARYING_CLASSES)] for side in (left, right))
    merged = left.merge(right, on=KEY, how="outer", suffixes=("_a", "_b"), indicator=True)
    both = merged[merged["_merge"] == "both"].copy()
    both["outcome"] = [_outcome(x, y) for x, y in zip(both["verdict_a"], both["verdict_b"])]
    columns = KEY + ["class_a", "outcome", "verdict_a", "verdict_b", "measured_a", "measured_b"]
    one_side = merged.loc[merged["_merge"] != "both", KEY + ["_merge"]]
    one_side = one_side.assign(only_in=one_side["_merge"].map({"left_only": "A", "right_only": "B"}))
    return (
        both.loc[:, columns].sort_values(KEY).reset_index(drop=True),
        one_side.loc[:, KEY + ["only_in"]].sort_values(KEY).reset_index(drop=True),
    )


def agreement_counts(both: pd.DataFrame) -> pd.DataFrame:
    """Per paper (and in all): claims decided in either run, those with the same decided verdict, their
    share, the flips, and the undecided ones."""
    rows = []
    for paper, group in [*both.groupby("paper"), ("all", both)]:
        counts = group["outcome"].value_counts()
        decided = int(counts.get("same decided", 0) + counts.get("flip", 0) + counts.get("decided once", 0))
        same = int(counts.get("same decided", 0))
        rows.append(
            {
                "paper": paper,
                "claims": len(group),
                "decided in either": decided,
                "same decided": same,
                "agreement": f"{same / decided:.0%}" if decided else "-",
                "flips": int(counts.get("flip", 0)),
                "decided once": int(counts.get("decided once", 0)),
                "inconclusive in both": int(counts.get("inconclusive in both", 0)),
                "not measurable in both": int(counts.get("not measurable in both", 0)),
            }
        )
    return pd.DataFrame(rows)


def format_verdict_changes(a: Path, b: Path) -> str:
    both, one_side = verdict_agreement(a, b)
    counts = agreement_counts(both)
    total = counts.iloc[-1]
    lines = [
        f"A = {a}",
        f"B = {b}",
        "",
        f"Empirical and timing claims in both runs: {total['claims']} (identities and simulations left out: "
        "their verdicts cannot change).",
        f"Agreement: {total['same decided']} of the {total['decided in either']} claims decided in either run "
        f"have the same verdict in both ({total['agreement']}); {total['flips']} went between reproduced and "
        f"not reproduced; {total['inconclusive in both']} are inconclusive in both and "
        f"{total['not measurable in both']} not measurable in both (neither counts as agreement).",
        "",
        counts.to_string(index=False),
    ]
    for outcome in ("flip", "decided once", "undecided, differently"):
        rows = both[both["outcome"] == outcome]
        if len(rows):
            lines += ["", f"{OUTCOMES[outcome].capitalize()} ({len(rows)}):"]
            for row in rows.itertuples():
                lines.append(f"- {row.paper} {row.item} {row.claim}")
                lines.append(f"    {row.verdict_a} ({row.measured_a})  ->  {row.verdict_b} ({row.measured_b})")
    if len(one_side):
        lines += ["", f"In one run only ({len(one_side)}):"]
        lines += [f"- {row.paper} {row.item} {row.claim} (only in {row.only_in})" for row in one_side.itertuples()]
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
