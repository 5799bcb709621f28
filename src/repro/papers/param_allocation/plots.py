"""Plot helpers shared by the figures of param_allocation.

A heads sweep (Figs 2, 7, 8) is a tidy table with one row per (task, position, seed, heads): `plot_sweep`
draws, for each position kind, the seed-mean of a column against H (log2 axis) with ±1 sample sd error
bars and the single seeds as faint dots, and marks the argmin of the mean with a star. `plot_mean_sd`
draws such a seed-mean with error bars for any x (the saturation and head-dimension figures, Figs 3, 5).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

POSITION_STYLE = {
    "alibi": {
        "color": "#D55E00",
        "marker": "o",
        "linestyle": "-",
        "label": "ALiBi-type (learnable slopes, no content QK)",
    },
    "learned": {"color": "#0072B2", "marker": "s", "linestyle": "--", "label": "learned positions + content QK"},
}


def plot_mean_sd(ax, rows: pd.DataFrame, x: str, column: str, **style) -> pd.DataFrame:
    """The mean of `column` over the rows (seeds) of each value of `x`, with ±1 sample sd error bars (0
    where a point has one row) and round markers; `style` goes to ``ax.errorbar``. Returns the mean and sd."""
    stats = rows.groupby(x)[column].agg(["mean", "std"])
    ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0), marker="o", capsize=3, **style)
    return stats


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
        ax.scatter(
            [pick], [stats.loc[pick, "mean"]], marker="*", s=220, color=style["color"], edgecolor="black", zorder=5
        )
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


def sweep_figure(rows: pd.DataFrame, bound: pd.DataFrame, task: str, title: str):
    """The three panels of an appendix heads sweep (Figs 7, 8): loss, task metric, Theorem 1's bound.

    `rows` are the heads_sweep.csv rows of `task`; `bound` is allocation_bound.csv.
    """
    import matplotlib.pyplot as plt

    budget = int(rows["budget"].iloc[0])
    seeds = rows["seed"].nunique()
    metric_name = rows["metric_name"].iloc[0]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    plot_sweep(axes[0], rows, "eval_loss")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("eval loss")
    axes[0].set_title(f"Loss, D = {budget}")  # the task is named in the figure title
    axes[0].legend(fontsize=7)
    plot_sweep(axes[1], rows, "metric", best="max" if metric_name == "accuracy" else "min")
    axes[1].set_ylabel(metric_name.replace("_", " "))
    axes[1].set_title(metric_name.replace("_", " ").capitalize())
    plot_bound(axes[2], bound, [task], {task: title})
    axes[2].set_title("Theorem 1's bound on the same sweep")
    fig.suptitle(f"Heads at fixed width: {title} (mean ± sd over {seeds} seeds; ★ = best)")
    return fig
