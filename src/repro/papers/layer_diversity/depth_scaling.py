"""Accuracy against model depth: the logarithmic fit and the diminishing-returns check of Fig. 6.

The paper (layer_diversity.md §2.5, Theorem 8) likens the submodular gain from more layers to the
logarithmic convergence of scaling laws. For separately trained depths L:

* `log_depth_fit` fits acc ≈ a + b·ln L by least squares and reports R²;
* `doubling_gains` gives Δacc between L and 2L for every doubling present (1→2, 2→4, 4→8, ...);
* `diminishing_doublings` applies the catalog's check on them:
  Δ(4→8) ≤ Δ(2→4) + tol ≤ Δ(1→2) + 2·tol (tol = 0.02), i.e. each doubling gains at most tol more
  than the one before, along the chain of consecutive doublings from the smallest depth;
* `signal_table` says which (family, task) pairs have something for depth to show: learned, and not
  solved by the shallowest model, in every seed. The claims about the runs' bias and diversity and the
  figure's fitted trends use only the pairs with signal;
* `depth_regime_table` applies the stricter rule of the claims about how accuracy moves with depth
  (docs/decisions/0046-ld-depth-signal.md): room above the task's cue (or chance) level and below its
  ceiling at every depth, by the seed-to-seed spread, and a change with depth that the seeds resolve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from repro.pipeline.decisions import CEILING_ROOM, LEARNED_SHARE, seed_interval


def log_depth_fit(depths: Sequence[float], values: Sequence[float]) -> tuple[float, float, float]:
    """(a, b, R²) of values ≈ a + b·ln(depth); R² is nan when the values do not vary."""
    x = np.log(np.asarray(depths, dtype=np.float64))
    y = np.asarray(values, dtype=np.float64)
    if x.shape != y.shape or len(x) < 2 or np.ptp(x) == 0:
        raise ValueError("a log fit needs at least two distinct depths and one value per depth")
    b, a = np.polyfit(x, y, 1)
    total = float(((y - y.mean()) ** 2).sum())
    residual = float(((y - (a + b * x)) ** 2).sum())
    return float(a), float(b), (1.0 - residual / total) if total > 0 else float("nan")


def doubling_gains(by_depth: Mapping[int, float]) -> dict[tuple[int, int], float]:
    """{(L, 2L): value(2L) − value(L)} for every L with both depths present, in order of L."""
    return {(d, 2 * d): float(by_depth[2 * d] - by_depth[d]) for d in sorted(by_depth) if 2 * d in by_depth}


def diminishing_doublings(gains: Mapping[tuple[int, int], float], tolerance: float = 0.02) -> bool:
    """True iff each doubling gains at most ``tolerance`` more than the previous one.

    With the doublings 1→2, 2→4, 4→8 this is the catalog's Δ(4→8) ≤ Δ(2→4) + tol ≤ Δ(1→2) + 2·tol.
    Needs at least two consecutive doublings.
    """
    ordered = [gains[key] for key in doubling_chain(gains)]
    if len(ordered) < 2:
        raise ValueError(f"the check needs two consecutive doublings, got {sorted(gains)}")
    return all(later <= earlier + tolerance for earlier, later in zip(ordered, ordered[1:]))


def doubling_chain(gains: Mapping[tuple[int, int], float]) -> list[tuple[int, int]]:
    """The consecutive doublings from the smallest depth: (1, 2), (2, 4), (4, 8), ... (3→6 is left out)."""
    if not gains:
        return []
    chain, depth = [], min(start for start, _ in gains)
    while (depth, 2 * depth) in gains:
        chain.append((depth, 2 * depth))
        depth *= 2
    return chain


__all__ = [
    "depth_regime_table",
    "diminishing_doublings",
    "doubling_chain",
    "doubling_gains",
    "log_depth_fit",
    "lower_levels",
    "signal_table",
    "task_levels",
]


def task_levels(tasks: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per task of Table 1: chance (1 / labels: the test splits are balanced) and ceiling (its `ceiling`
    column, the Bayes accuracy; 1 for a table written before that column existed)."""
    table = tasks.set_index("task")
    chance = 1 / table["labels"].astype(float)
    ceiling = table["ceiling"].astype(float) if "ceiling" in table else pd.Series(1.0, index=table.index)
    return chance, ceiling


def signal_table(depth: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """Per (family, task): chance (1 / labels, balanced test sets), ceiling (the task's Bayes accuracy, the
    table's `ceiling` column; 1 where it has none), the seed-mean accuracy of the best and of the shallowest
    depth, and `signal`: in every seed, the best depth is at least LEARNED_SHARE of the way from chance to
    the ceiling and the shallowest depth at least CEILING_ROOM of that span below the ceiling (each seed's
    runs, not only their mean, have something for depth to show).

    The levels are the conventions of repro.pipeline.decisions.classifier_gate, fixed before this rule
    saw a laptop result."""
    chance, ceiling = task_levels(tasks)
    rows = []
    for (family, task), runs in depth.groupby(["family", "task"], sort=True):
        per_seed = runs.pivot_table(index="depth", columns="seed", values="accuracy").sort_index()
        low, high = float(chance[task]), float(ceiling[task])
        span = high - low
        learned = per_seed.max(axis=0) >= low + LEARNED_SHARE * span
        room = per_seed.iloc[0] <= high - CEILING_ROOM * span
        means = per_seed.mean(axis=1)
        rows.append(
            dict(
                family=family,
                task=task,
                chance=low,
                ceiling=high,
                best=float(means.max()),
                shallowest=float(means.iloc[0]),
                signal=bool((learned & room).all()),
            )
        )
    return pd.DataFrame(rows, columns=["family", "task", "chance", "ceiling", "best", "shallowest", "signal"])


def lower_levels(tasks: pd.DataFrame) -> pd.Series:
    """Per task of Table 1: the level a model reaches without what depth could add, its lexical-cue level
    (the `cue_level` column) where the task has one, else chance."""
    chance, _ = task_levels(tasks)
    if "cue_level" not in tasks:
        return chance
    cue = tasks.set_index("task")["cue_level"].astype(float)
    return cue.where(cue.notna(), chance)


#: The depth regime (docs/decisions/0046-ld-depth-signal.md): at every depth, the seed-mean accuracy clears the
#: task's lower level and its ceiling by ROOM_SDS sample standard deviations over seeds ...
ROOM_SDS = 2.0
#: ... and by at least ROOM_FLOOR in accuracy (seeds that all read one level, sd 0, leave no room at it).
ROOM_FLOOR = 0.02


def depth_regime_table(depth: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """Per (family, task), the rule of docs/decisions/0046 on its runs at every depth present:

    * `room`: at every depth, the mean accuracy over seeds lies above the task's lower level (its cue level,
      else chance: `lower_levels`) and below its ceiling (`task_levels`) each by at least
      max(ROOM_SDS · sd, ROOM_FLOOR), sd the sample standard deviation over seeds at that depth;
    * `varies`: the 95% t-interval over seeds of accuracy(deepest) − accuracy(shallowest), each seed's own
      difference, excludes zero (either sign);
    * `in_regime`: both, with at least two seeds (one seed has no spread to measure room by);

    with the levels, the depth and margins of the tightest room (`low_margin`, `high_margin`: the distance
    to each level minus the room required there; negative where the rule fails), the change and its
    interval, and `why`: the reasons a pair is out, in words ("" for a pair in the regime)."""
    lower, (_, ceiling) = lower_levels(tasks), task_levels(tasks)
    rows = []
    for (family, task), runs in depth.groupby(["family", "task"], sort=True):
        per_seed = runs.pivot_table(index="depth", columns="seed", values="accuracy").sort_index()
        low, high = float(lower[task]), float(ceiling[task])
        means, sds = per_seed.mean(axis=1), per_seed.std(axis=1, ddof=1)
        needed = np.maximum(ROOM_SDS * sds, ROOM_FLOOR)
        above, below = means - low - needed, high - means - needed
        change = (per_seed.iloc[-1] - per_seed.iloc[0]).dropna()
        interval = seed_interval(change.to_numpy()) if len(change) else None
        seeds = per_seed.shape[1]
        varies = interval is not None and (interval.low > 0 or interval.high < 0)
        why = []
        if seeds < 2:
            why.append(f"{seeds} seed: no spread to measure room by")
        if (above < 0).any():
            d = int(above.idxmin())
            why.append(
                f"at depth {d} without room above its lower level {low:.4g}: mean {means[d]:.4g} within "
                f"max({ROOM_SDS:g} sd, {ROOM_FLOOR}) = {needed[d]:.3g} of it (sd {sds[d]:.2g})"
            )
        if (below < 0).any():
            d = int(below.idxmin())
            why.append(
                f"at depth {d} without room below its ceiling {high:.4g}: mean {means[d]:.4g} within "
                f"max({ROOM_SDS:g} sd, {ROOM_FLOOR}) = {needed[d]:.3g} of it (sd {sds[d]:.2g})"
            )
        if not varies:
            said = interval.format() if interval is not None else "no seed at both depths"
            why.append(f"accuracy flat in depth: L{per_seed.index[-1]} − L{per_seed.index[0]} = {said}")
        rows.append(
            dict(
                family=family,
                task=task,
                lower=low,
                ceiling=high,
                seeds=seeds,
                low_margin=float(above.min()),
                high_margin=float(below.min()),
                change=interval.estimate if interval is not None else np.nan,
                change_low=interval.low if interval is not None else np.nan,
                change_high=interval.high if interval is not None else np.nan,
                room=bool(seeds >= 2 and (above >= 0).all() and (below >= 0).all()),
                varies=bool(varies),
                in_regime=not why,
                why="; ".join(why),
            )
        )
    columns = [
        "family", "task", "lower", "ceiling", "seeds", "low_margin", "high_margin", "change", "change_low",
        "change_high", "room", "varies", "in_regime", "why",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)
