"""The run-to-run spread of a decoder's final loss.

Claims: a comparison is judged with the spread of its own runs' replicates, σ pooled over its figure's
runs on the seeds the compared runs share (`own_noise`, `judge_own`); runs of one seed have none, and
their comparison is "not measurable" (a spread borrowed from other runs would not be theirs).

Figures: the footers and error bars of one-seed figures show, for orientation only, the interval a point
would have with the spread of Fig 26's blocks × seeds (`loss_noise`, `half_width`)."""

from __future__ import annotations

import math

import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.pipeline.claims import NOT_MEASURABLE, Measurement
from repro.pipeline.decisions import LEVEL, PooledNoise, additive_noise, combine, judge_contrasts

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
        f"Bars: the 95% interval each point would have with the spread of {SOURCE} (σ = {noise.sd:.3f} nats, "
        f"{noise.df} df; a one-seed point's bar is ± t·σ), for orientation: the claims judge a point only with "
        "replicates of its own runs."
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
        f"{curves}. With the run-to-run spread of {SOURCE} (σ = {noise.sd:.3f} nats, {noise.df} df), a gap "
        f"between {between} is known to ± {half_width(noise, seeds) * math.sqrt(2):.3f} nats; the claims judge a "
        "gap only with replicates of its own runs."
    )


# ------------------------------------------------------------------------------- the claims' spread


def own_noise(table: pd.DataFrame, compared: list[str], what: str = "the figure's runs") -> PooledNoise | None:
    """σ of the runs `compared` (columns of `table`, seeds × runs), pooled over every run of `table`
    that has each seed the compared runs share (the additive two-way fit): the spread of the compared
    runs' own replicates, with the other runs of their figure on the same seeds adding degrees of
    freedom. None when the compared runs share fewer than two seeds."""
    seeds = table[list(compared)].dropna().index
    if len(seeds) < 2:
        return None
    shared = table.loc[seeds].dropna(axis=1)  # a run lacking one of these seeds (or diverged) is left out
    return additive_noise(shared, f"{what}: {shared.shape[1]} runs × {len(seeds)} seeds")


def no_replicates(table: pd.DataFrame, compared: list[str], unit: str = " nats", detail: str = "") -> Measurement:
    """The "not measurable" of a comparison whose runs have fewer than two seeds in common."""
    seeds = {run: int(table[run].notna().sum()) for run in compared}
    shared = len(table[list(compared)].dropna())
    said = ", ".join(f"{run} {n}" for run, n in seeds.items())
    means = "; ".join(f"{run} {table[run].mean():.4g}{unit}" for run in compared if seeds[run])
    why = (
        f"the compared runs share {shared} seed{'s' if shared != 1 else ''} (seeds per run: {said}), so they have no "
        "replicates of their own to give an interval; a spread borrowed from other runs would not be theirs"
    )
    return Measurement(means or "no runs", NOT_MEASURABLE, seeds=shared, detail=f"Replicates: {why}. {detail}".strip())


def judge_own(
    table: pd.DataFrame,
    parts: dict[str, tuple[pd.Series, float, object]],
    compared: list[str],
    *,
    detail: str = "",
    unit: str = " nats",
    what: str = "the figure's runs",
    rule=combine,
) -> Measurement:
    """judge_contrasts of `parts` {name: (per-seed contrast, Σ c², region)} with σ from the compared runs'
    own replicates (`own_noise`); "not measurable" (`no_replicates`) when they have none."""
    compared = list(dict.fromkeys(compared))
    noise = own_noise(table, compared, what)
    if noise is None:
        return no_replicates(table, compared, unit, detail)
    return judge_contrasts(parts, noise, unit=unit, detail=detail, rule=rule)
