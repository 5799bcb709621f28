"""The health gates and the nulls of the param_allocation claims (repro.pipeline.claims).

Gates, by what a claim rests on:

* the heads sweeps (Figs 2, 7, 8): the task is inside its range, so that the number of heads can
  matter: the best H at least a quarter of the way from a trivial predictor to perfect, and the worst
  H at least 2% of that span short of perfect (a task every H solves has no U-shape to show). The
  trivial level is chance accuracy 1/classes (classes: the bound table's `input_dim`) or a normalised
  MSE of 1 (predicting 0);
* the trained decoders (Figs 4, 5, 6, 9, 10): each ends at least 1 nat below the unigram level of its
  held-out split (the code corpus offline, WikiText at paper scale);
* the trained students of Fig 3: converged, i.e. within 5% of the truncated-SVD student of their rank
  (a stationary point of their loss), and near 0 at full rank (claims.STUDENTS_GATE);
* the constructed logits of Figs 1 and 3: nothing trained, nothing to gate (their claims are simulations).

Nulls replace the measured effect by its absence (a flat sweep, a constant error, no scaling with
L), reverse an order, or swap the two things compared.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from repro.pipeline.claims import Gate
from repro.pipeline.decisions import CEILING_ROOM, LEARNED_SHARE, LM_REFERENCE_LEVELS, lm_gate


def sweep_in_range(sweep_csv: str, bound_csv: str, task: str, position: str) -> Gate:
    """The heads sweep of (task, position) is inside its range (see the module docstring)."""

    def check(data) -> tuple[bool, str]:
        sweep = data[sweep_csv]
        rows = sweep[(sweep["task"] == task) & (sweep["position"] == position)]
        means = rows.groupby("heads")["metric"].mean()
        if rows["metric_name"].iloc[0] == "accuracy":
            bound = data[bound_csv]
            classes = int(bound.loc[bound["task"] == task, "input_dim"].iloc[0])
            trivial, perfect, best, worst = 1.0 / classes, 1.0, float(means.max()), float(means.min())
        else:  # normalised MSE: 1 predicting 0, 0 perfect
            trivial, perfect, best, worst = 1.0, 0.0, float(means.min()), float(means.max())
        span = perfect - trivial
        learned = (best - trivial) / span >= LEARNED_SHARE
        room = (perfect - worst) / span >= CEILING_ROOM
        name = rows["metric_name"].iloc[0]
        return learned and room, (
            f"{name} of the seed-mean sweep from {worst:.4g} (worst H) to {best:.4g} (best H); trivial {trivial:.4g}, "
            f"perfect {perfect:g}"
        )

    return Gate(
        f"the best H at least {LEARNED_SHARE:.0%} of the way from a trivial predictor to perfect, the worst H at "
        f"least {CEILING_ROOM:.0%} of that span short of perfect",
        check,
    )


def decoders_learned(final_losses, runs: str, past_bigram: bool = False) -> Gate:
    """`final_losses(data)`: the eval losses of the trained decoders a claim rests on, against the levels of
    their held-out split (the code corpus offline, WikiText at paper scale): at least 1 nat below its
    unigram level, or with `past_bigram` below its bigram level (for a claim about trained capacity)."""
    if past_bigram:
        return lm_gate(final_losses, margin=0.0, levels=LM_REFERENCE_LEVELS, runs=runs, below="bigram")
    return lm_gate(final_losses, levels=LM_REFERENCE_LEVELS, runs=runs)


def flat(frame: pd.DataFrame, by: Iterable[str], column: str) -> pd.DataFrame:
    """`frame` with `column` replaced by its mean within each group of `by`: no effect of anything else."""
    by = list(by)
    return frame.assign(**{column: frame.groupby(by)[column].transform("mean")})


def reversed_within(frame: pd.DataFrame, by: Iterable[str], axis: str) -> pd.DataFrame:
    """`frame` with the values of `axis` mirrored within each group of `by` (smallest ↔ largest)."""
    by = list(by)

    def mirror(group: pd.Series) -> pd.Series:
        values = sorted(group.unique())
        return group.map(dict(zip(values, reversed(values))))

    if not by:
        return frame.assign(**{axis: mirror(frame[axis])})
    return frame.assign(**{axis: frame.groupby(by)[axis].transform(mirror)})


__all__ = ["decoders_learned", "flat", "reversed_within", "sweep_in_range"]
