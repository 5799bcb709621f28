"""Learning-rate schedules as functions of training progress.

Every schedule maps `progress` in [0, 1] to a multiplier of the peak learning rate.
Progress is `step / total_steps` for step-driven training, where `step` counts the
updates already done (0 for the first update, as in HF's `LambdaLR` schedules and
fairseq's `num_updates`), or `elapsed / budget` for training driven by a wall-clock
budget (the equal-time comparisons of He & Hofmann 2024, pitfall 11). Warmup and
peak positions are therefore fractions of training; `build_schedule` converts a
warmup given in steps. Progress outside [0, 1] is clamped.

Formulas (w = warmup fraction, e = end multiplier = min_lr / lr, s = start multiplier):
  constant      p < w: p / w;                     else 1
  linear        p < w: p / w;                     else e + (1 - e)(1 - p) / (1 - w)
                (HF `get_polynomial_decay_schedule_with_warmup`, power 1, lr_end = min_lr)
  cosine        p < w: p / w;                     else e + (1 - e) · ½(1 + cos(π (p - w) / (1 - w)))
  inverse_sqrt  p < w: s + (1 - s) p / w;         else sqrt(w / p)
                (fairseq `inverse_sqrt`: warmup from warmup_init_lr, then lr·sqrt(W / num_updates))
  triangular    linear with w = peak_fraction (cramming-BERT: rises to the peak at a fraction
                of the budget, then decays linearly)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

SCHEDULES = ("constant", "linear", "cosine", "inverse_sqrt", "triangular")

Schedule = Callable[[float], float]


def _clamp(progress: float) -> float:
    return min(max(progress, 0.0), 1.0)


def constant(progress: float, *, warmup: float = 0.0) -> float:
    p = _clamp(progress)
    return p / warmup if p < warmup else 1.0


def linear(progress: float, *, warmup: float, end: float) -> float:
    p = _clamp(progress)
    if p < warmup:
        return p / warmup
    return end + (1.0 - end) * (1.0 - p) / (1.0 - warmup)


def cosine(progress: float, *, warmup: float, end: float) -> float:
    p = _clamp(progress)
    if p < warmup:
        return p / warmup
    return end + (1.0 - end) * 0.5 * (1.0 + math.cos(math.pi * (p - warmup) / (1.0 - warmup)))


def inverse_sqrt(progress: float, *, warmup: float, start: float) -> float:
    p = _clamp(progress)
    if p < warmup:
        return start + (1.0 - start) * p / warmup
    return math.sqrt(warmup / p)


def triangular(progress: float, *, peak: float, end: float) -> float:
    return linear(progress, warmup=peak, end=end)


def warmup_fraction(
    *, warmup_steps: int | None = None, warmup_fraction: float | None = None, total_steps: int | None = None
) -> float:
    """The warmup as a fraction of training, from steps (needs `total_steps`) or a fraction."""
    if warmup_steps is not None and warmup_fraction is not None:
        raise ValueError("give warmup_steps or warmup_fraction, not both")
    if warmup_steps is None:
        return float(warmup_fraction or 0.0)
    if total_steps is None or total_steps <= 0:
        raise ValueError("warmup_steps needs a positive total_steps to be turned into a fraction")
    return warmup_steps / total_steps


def build_schedule(
    name: str,
    *,
    lr: float,
    warmup: float = 0.0,
    min_lr: float = 0.0,
    warmup_init_lr: float = 0.0,
    peak_fraction: float = 0.75,
) -> Schedule:
    """The schedule `name` as a function progress -> LR multiplier.

    `warmup` is a fraction of training (see `warmup_fraction`); `min_lr` is the final
    LR of linear, cosine and triangular; `warmup_init_lr` the first LR of inverse_sqrt;
    `peak_fraction` where triangular peaks. Arguments a schedule does not use are ignored.
    """
    if name not in SCHEDULES:
        raise ValueError(f"schedule={name!r} is not allowed; choose one of: {', '.join(SCHEDULES)}")
    if not 0.0 <= warmup < 1.0:
        raise ValueError(f"warmup fraction {warmup!r} must be in [0, 1)")
    end = min_lr / lr
    if name == "constant":
        return partial(constant, warmup=warmup)
    if name == "linear":
        return partial(linear, warmup=warmup, end=end)
    if name == "cosine":
        return partial(cosine, warmup=warmup, end=end)
    if name == "inverse_sqrt":
        if warmup <= 0.0:
            raise ValueError("schedule 'inverse_sqrt' needs a positive warmup (its decay is sqrt(warmup / progress))")
        return partial(inverse_sqrt, warmup=warmup, start=warmup_init_lr / lr)
    if not 0.0 < peak_fraction < 1.0:
        raise ValueError(f"peak_fraction={peak_fraction!r} must be in (0, 1)")
    return partial(triangular, peak=peak_fraction, end=end)
