"""The plot helpers of the simplified_blocks notebooks (He & Hofmann 2024).

Gain trajectories over training (Figs 4, 16-22): the plot functions take the tidy table of
`repro.papers.simplified_blocks.gain_trajectories` (variant, seed, step, layer, symbol, head, value) and
draw one line per layer, coloured along a sequential colormap from the first layer to the last, averaged
over seeds (and over heads for per-head gains); `ratio_figure` and `final_ratio_table` are the figure and
table of the β/α notebooks (Figs 4, 16, 21, 22).

Eval-loss curves drawn twice (Figs 12 and 24), over the whole run and over its second half, where the late
ordering of two settings is hard to see at the first panel's scale.
"""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib as mpl
import pandas as pd

from repro.analysis.training_curves import final_losses, mean_curve
from repro.papers.simplified_blocks.gain_trajectories import ratios
from repro.pipeline.plotting import draw_reference_levels, label, line_style

SYMBOL_TEX = {
    "alpha": r"$\alpha$",
    "beta": r"$\beta$",
    "gamma": r"$\gamma$",
    "beta_FF": r"$\beta_{FF}$",
    "alpha_FF": r"$\alpha_{FF}$",
    "beta_SA": r"$\beta_{SA}$",
}


def layer_colours(n_layers: int) -> list:
    cmap = mpl.colormaps["viridis"]
    return [cmap(i / max(1, n_layers - 1) * 0.9) for i in range(n_layers)]


def plot_ratio_trajectories(axes, gains: pd.DataFrame, threshold: float = 0.05) -> pd.DataFrame:
    """β_V/α_V on axes[0] and β_P/α_P on axes[1], one line per layer (mean over seeds, band = seed range).

    Returns the ratio table that was drawn (variant, seed, step, layer, matrix, ratio).
    """
    table = ratios(gains)
    layers = sorted(table["layer"].unique())
    colours = layer_colours(len(layers))
    for ax, matrix in zip(axes, ("V", "P")):
        rows = table[table["matrix"] == matrix]
        for colour, layer in zip(colours, layers):
            by_step = rows[rows["layer"] == layer].groupby("step")["ratio"]
            mean = by_step.mean()
            ax.plot(mean.index, mean.values, color=colour, label=f"layer {layer + 1}", marker=None)
            if rows["seed"].nunique() > 1:
                ax.fill_between(mean.index, by_step.min().values, by_step.max().values, color=colour, alpha=0.15, lw=0)
        ax.axhline(threshold, color="#999999", lw=0.8, ls=":")
        ax.axhline(0.0, color="#333333", lw=0.6)
        ax.set_xlabel("training step")
        ax.set_ylabel(rf"$\beta_{matrix} / \alpha_{matrix}$")
        ax.set_title(f"$W^{matrix}$")
    return table


def ratio_figure(gains: pd.DataFrame, run: str):
    """`plot_ratio_trajectories` of one run's gains on two panels side by side, titled with `run` (what was
    trained) and the number of seeds."""
    import matplotlib.pyplot as plt

    n_seeds = gains["seed"].nunique()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    plot_ratio_trajectories(axes, gains)
    # Beside the panels: the curves may end anywhere between 0 (the paper) and their init, so no corner is free.
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.suptitle(f"{run}: β/α per layer (mean over {n_seeds} seed{'s' if n_seeds > 1 else ''})")
    return fig


def final_ratio_table(last: pd.DataFrame) -> pd.DataFrame:
    """Per layer (1-based) and matrix, the mean, min and max over seeds of the final ratios `last`
    (``final(ratios(gains))``)."""
    table = last.groupby(["layer", "matrix"])["ratio"].agg(["mean", "min", "max"]).reset_index()
    table["layer"] = table["layer"] + 1
    table.columns = ["layer", "matrix", "final β/α (mean)", "min over seeds", "max over seeds"]
    return table


def plot_gain_trajectories(ax, gains: pd.DataFrame, symbol: str) -> pd.DataFrame:
    """One line per layer of `symbol` (mean over heads and seeds), band = ±1 sd across heads.

    Returns the per-(step, layer) summary that was drawn.
    """
    rows = gains[gains["symbol"] == symbol]
    if rows.empty:
        raise ValueError(f"no gain {symbol!r} in the table; present: {sorted(set(gains['symbol']))}")
    per_head = rows.groupby(["step", "layer", "head"])["value"].mean().reset_index()  # mean over seeds
    summary = per_head.groupby(["step", "layer"])["value"].agg(["mean", "std"]).fillna(0.0).reset_index()
    layers = sorted(summary["layer"].unique())
    for colour, layer in zip(layer_colours(len(layers)), layers):
        line = summary[summary["layer"] == layer]
        ax.plot(line["step"], line["mean"], color=colour, label=f"layer {layer + 1}")
        if (line["std"] > 0).any():
            ax.fill_between(
                line["step"], line["mean"] - line["std"], line["mean"] + line["std"], color=colour, alpha=0.15, lw=0
            )
    ax.set_xlabel("training step")
    ax.set_ylabel(SYMBOL_TEX.get(symbol, symbol))
    return summary


# -- loss curves over the whole run and its second half ----------------------------------------


def setting_line(key: str, setting: str, second: bool) -> dict:
    """Plot keywords of block `key` under a named setting: its colour, solid for the first setting
    of a pair and dashed with markers for the second."""
    style = line_style(key)
    return {
        "color": style["color"],
        "linestyle": "--" if second else "-",
        "marker": style["marker"] if second else None,
        "markevery": 2,
        "label": f"{label(key)}, {setting}",
    }


def whole_and_second_half(axes, curves: pd.DataFrame, lines: Iterable[tuple[str, dict]], levels) -> None:
    """Draw each `(variant, plot keywords)` of `lines` as its seed-mean eval curve on both axes:
    from step 0 on the first, from half the last step on the second; then the reference levels."""
    lines = list(lines)
    last = curves["step"].max()
    for ax, start in zip(axes, [0, last // 2]):
        for variant, kwargs in lines:
            curve = mean_curve(curves, variant)
            curve = curve[curve.index >= start]
            ax.plot(curve.index, curve["loss"], **kwargs)
        ax.set_xlabel("training step")
        ax.set_ylabel("eval loss (nats/token)")
        draw_reference_levels(ax, levels)
    axes[0].set_title("Whole run")
    axes[1].set_title("Second half")
    axes[1].legend(fontsize=8)


def final_loss_table(curves: pd.DataFrame, facts: pd.DataFrame, columns: str) -> pd.DataFrame:
    """Final eval loss (mean of the last three evaluations, then over seeds), rows the blocks of
    `facts` (named for reading) and columns its field `columns`."""
    final = final_losses(curves).groupby("variant")["final_loss"].mean()
    table = facts.assign(final=final).pivot_table(index="key", columns=columns, values="final")
    table.index = [label(k) for k in table.index]
    return table
