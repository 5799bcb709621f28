"""The run-to-run spread of a decoder's final loss, as the claims judge with it (config/README.md, the
seeds rule of simplified_blocks): σ pooled over Fig 26's blocks × seeds, and the half-width of the
95 % interval of a mean over n runs, which the figures of one-seed runs draw as error bars."""

from __future__ import annotations

import math

import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.pipeline.decisions import LEVEL, PooledNoise, additive_noise

SOURCE = "Fig 26's blocks × seeds"


def loss_noise(fig26_curves: pd.DataFrame) -> PooledNoise | None:
    """σ of a final eval loss from Fig 26's curves (None with fewer than two seeds)."""
    table = final_losses(fig26_curves).pivot(index="seed", columns="variant", values="final_loss")
    return additive_noise(table, SOURCE)


def half_width(noise: PooledNoise | None, n: int, level: float = LEVEL) -> float:
    """t(df) · σ / √n: the half-width of the interval of a mean of `n` runs' final losses (nan without σ)."""
    if noise is None:
        return math.nan
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, noise.df)) * noise.sd / math.sqrt(n)


def errorbar_over_seeds(ax, final: pd.DataFrame, by: str, noise: PooledNoise | None, **kwargs) -> None:
    """Seed-mean final loss (`final_losses` rows) against the column `by`, each point's bar the
    run-to-run interval at its seed count (no bars without `noise`); `kwargs` go to `ax.errorbar`."""
    stats = final.groupby(by)["final_loss"].agg(["mean", "count"])
    bars = None if noise is None else [half_width(noise, n) for n in stats["count"]]
    ax.errorbar(stats.index, stats["mean"], yerr=bars, capsize=3, **kwargs)


def bars_note(noise: PooledNoise | None) -> str:
    """What the error bars of such a figure show, for its footer."""
    if noise is None:
        return "No error bars: Fig 26's runs have one seed, so there is no run-to-run spread to draw."
    return (
        f"Bars: 95% interval of each point (σ = {noise.sd:.3f} nats from {SOURCE}, {noise.df} df; "
        "a one-seed point's bar is ± t·σ)."
    )


def gap_note(fig26_csv: str, seeds: int = 1) -> str:
    """The resolution of a gap between two curves of `seeds` seeds each (one run, or a seed mean), for
    the footer of such a figure: from the Fig 26 curves file `fig26_csv`."""
    noise = loss_noise(pd.read_csv(fig26_csv))
    if noise is None:
        return "No run-to-run spread to judge gaps with (Fig 26's runs have one seed)."
    curves = "Curves of one seed" if seeds == 1 else f"Curves (means of {seeds} seeds)"
    between = "two one-seed runs" if seeds == 1 else "two such means"
    return (
        f"{curves} are judged with the run-to-run spread of {SOURCE} (σ = {noise.sd:.3f} nats, "
        f"{noise.df} df): a gap between {between} is known to ± {half_width(noise, seeds) * math.sqrt(2):.3f} nats."
    )
