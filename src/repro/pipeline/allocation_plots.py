"""Plot helpers shared by the heads-sweep figures of param_allocation (Figs 2, 7, 8).

A heads sweep is a tidy table with one row per (task, position, seed, heads): `plot_sweep` draws,
for each position kind, the seed-mean of a column against H (log2 axis) with ±1 sample sd error
bars and the single seeds as faint dots, and marks the argmin of the mean with a star.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

POSITION_STYLE = {
    "alibi": {"color": "#D55E00", "marker": "o", "linestyle": "-", "label": "ALiBi-type (learnable slopes, no content QK)"},
    "learned": {"color": "#0072B2", "marker": "s", "linestyle": "--", "label": "learned positions + content QK"},
}


def plot_sweep(ax, rows: pd.DataFrame, column: str, best: str = "min") -> None:
    """Seed-mean of `column` against heads, one line per position kind present in `rows`."""
    for position, style in POSITION_STYLE.items():
        part = rows[rows["position"] == position]
        if part.empty:
            continue
        stats = part.groupby("heads")[column].agg(["mean", "std"]).sort_index()
        ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0.0), capsize=3, markersize=5, **style)
        ax.scatter(part["heads"], part[column], color=style["color"], alpha=0.25, s=10, zorder=1)
        pick = stats["mean"].idxmin() if best == "min" else stats["mean"].idxmax()
        ax.scatter([pick], [stats.loc[pick, "mean"]], marker="*", s=220, color=style["color"], edgecolor="black", zorder=5)
    heads = sorted(rows["heads"].unique())
    ax.set_xscale("log", base=2)
    ax.set_xticks(heads)
    ax.set_xticklabels([str(h) for h in heads])
    ax.set_xlabel("heads H (head dim = D / H)")


def plot_bound(ax, bound: pd.DataFrame, tasks: list[str], labels: dict[str, str] | None = None) -> None:
    """The approximation-error bound of the sweep allocation against H, one line per task, argmin starred."""
    colours = ["#009E73", "#CC79A7", "#56B4E9", "#E69F00"]
    for colour, task in zip(colours, tasks):
        rows = bound[(bound["task"] == task) & (bound["kind"] == "sweep")].sort_values("heads")
        ax.plot(rows["heads"], rows["bound"], marker="D", color=colour, label=(labels or {}).get(task, task))
        best = rows.loc[rows["bound"].idxmin()]
        ax.scatter([best["heads"]], [best["bound"]], marker="*", s=220, color=colour, edgecolor="black", zorder=5)
    heads = sorted(bound.loc[bound["kind"] == "sweep", "heads"].unique())
    ax.set_xscale("log", base=2)
    ax.set_xticks(heads)
    ax.set_xticklabels([str(int(h)) for h in heads])
    ax.set_xlabel("heads H (head dim = D / H)")
    ax.set_ylabel("bound (Theorem 1, C = 1.3, γ = 0.02)")


def sweep_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Seed-mean ± sd of eval loss and metric per (task, position, heads)."""
    table = rows.groupby(["task", "position", "heads", "head_dim"]).agg(
        eval_loss_mean=("eval_loss", "mean"),
        eval_loss_sd=("eval_loss", "std"),
        metric_mean=("metric", "mean"),
        metric_sd=("metric", "std"),
        seeds=("seed", "nunique"),
    )
    return table.reset_index().replace({np.nan: None})


__all__ = ["POSITION_STYLE", "plot_bound", "plot_sweep", "sweep_summary"]
