"""Eval-loss curves drawn twice, over the whole run and over its second half, where the late
ordering of two settings (Figs 12 and 24) is hard to see at the first panel's scale."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from repro.analysis.training_curves import final_losses, mean_curve
from repro.pipeline.plotting import draw_reference_levels, label, line_style


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
