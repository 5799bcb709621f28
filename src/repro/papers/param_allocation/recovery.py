"""Recovery of a replaced head and per-position loss changes, from the tidy tables of
`repro.papers.param_allocation.replacement_study` (pandas only, for notebooks and claims).

Recovery (catalog Fig 4):  R = (L_ablated − L_student) / (L_ablated − L_teacher),
1 when the student restores the teacher's loss, 0 when it is no better than removing the head.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

KEYS = ["seed", "layer", "head", "rank", "init", "stage"]
SWEEP_KEYS = ["seed", "layer", "head"]


def sweep_heads(table: pd.DataFrame) -> pd.DataFrame:
    """(seed, layer, head) of the rank-sweep head of each layer of each seed's decoder: the head replaced at
    every rank and by both inits (it may differ between seeds when chosen by its ablation gap)."""
    return table[table["init"] == "random"][SWEEP_KEYS].drop_duplicates()


def at_sweep_heads(rows: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """`rows` of the rank-sweep heads of `table` (the summary or per-position table they come from)."""
    return rows.merge(sweep_heads(table), on=SWEEP_KEYS)


def sweep_head_label(rows: pd.DataFrame) -> str:
    """ "head h", or "head a/b/c by seed" where the seeds' sweep heads differ (`rows`: one layer's)."""
    heads = rows[["seed", "head"]].drop_duplicates().sort_values("seed")["head"].astype(int).tolist()
    return f"head {heads[0]}" if len(set(heads)) == 1 else "head " + "/".join(map(str, heads)) + " by seed"


def with_recovery(summary: pd.DataFrame) -> pd.DataFrame:
    """The student rows of `summary` with teacher_loss, ablated_loss (same seed, layer, head) and recovery."""
    teacher = summary[summary["condition"] == "teacher"][["seed", "eval_loss"]].rename(
        columns={"eval_loss": "teacher_loss"}
    )
    ablated = summary[summary["condition"] == "ablated"][["seed", "layer", "head", "eval_loss"]].rename(
        columns={"eval_loss": "ablated_loss"}
    )
    students = summary[summary["condition"] == "student"]
    rows = students.merge(teacher, on="seed", how="left").merge(ablated, on=["seed", "layer", "head"], how="left")
    if rows[["teacher_loss", "ablated_loss"]].isna().any().any():
        raise ValueError("every student row needs its seed's teacher row and its head's ablation row")
    rows["recovery"] = (rows["ablated_loss"] - rows["eval_loss"]) / (rows["ablated_loss"] - rows["teacher_loss"])
    return rows.reset_index(drop=True)


#: An ablation gap is resolved when its mean over seeds is at least this many standard errors (fixed
#: before any look at the gaps): a recovery ratio of an unresolved gap is a ratio of noise.
GAP_STANDARD_ERRORS = 3.0


def ablation_gaps(summary: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Held-out ablation gaps L_ablated − L_teacher of the ablation rows of `summary`, over seeds per group
    of `by`: mean, se (inf with one seed), seeds, and resolved (mean ≥ GAP_STANDARD_ERRORS × se)."""
    teacher = summary[summary["condition"] == "teacher"].set_index("seed")["eval_loss"]
    ablated = summary[summary["condition"] == "ablated"]
    gaps = (ablated["eval_loss"] - ablated["seed"].map(teacher)).groupby([ablated[k] for k in by])
    table = gaps.agg(["mean", "std", "count"]).rename(columns={"count": "seeds"})
    table["se"] = (table["std"] / table["seeds"] ** 0.5).where(table["seeds"] > 1, float("inf"))
    table["resolved"] = table["mean"] >= GAP_STANDARD_ERRORS * table["se"]
    return table.drop(columns="std")


def recovery_of_means(rows: pd.DataFrame, by: list[str]) -> pd.Series:
    """R from seed-mean losses per group of `by` (robust where one seed's ablation gap is tiny):
    mean(L_ablated − L_student) / mean(L_ablated − L_teacher)."""
    gap_student = (rows["ablated_loss"] - rows["eval_loss"]).groupby([rows[k] for k in by]).mean()
    gap_teacher = (rows["ablated_loss"] - rows["teacher_loss"]).groupby([rows[k] for k in by]).mean()
    return (gap_student / gap_teacher).rename("recovery")


def position_deltas(positions: pd.DataFrame) -> pd.DataFrame:
    """Student and ablation rows of the per-position table with `delta` = loss − the seed's teacher loss
    at the same position."""
    teacher = positions[positions["condition"] == "teacher"][["seed", "position", "loss"]].rename(
        columns={"loss": "teacher_loss"}
    )
    rows = positions[positions["condition"] != "teacher"].merge(teacher, on=["seed", "position"], how="left")
    if rows["teacher_loss"].isna().any():
        raise ValueError("every per-position row needs its seed's teacher row at the same position")
    rows["delta"] = rows["loss"] - rows["teacher_loss"]
    return rows.reset_index(drop=True)


def bucket_means(deltas: pd.DataFrame) -> pd.DataFrame:
    """Mean `delta` per evaluation and position bucket (rows outside every bucket dropped)."""
    inside = deltas[deltas["bucket_start"] >= 0]
    keys = [k for k in KEYS + ["condition"] if k in inside.columns] + ["bucket_start", "bucket_end"]
    return inside.groupby(keys, as_index=False)["delta"].mean()


def spearman(x, y) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN when either side is constant."""
    from scipy.stats import spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


__all__ = [
    "GAP_STANDARD_ERRORS",
    "KEYS",
    "ablation_gaps",
    "SWEEP_KEYS",
    "at_sweep_heads",
    "sweep_head_label",
    "sweep_heads",
    "bucket_means",
    "position_deltas",
    "recovery_of_means",
    "spearman",
    "with_recovery",
]
