"""Accuracy against model depth: the logarithmic fit and the diminishing-returns check of Fig. 6.

The paper (layer_diversity.md §2.5, Theorem 8) likens the submodular gain from more layers to the
logarithmic convergence of scaling laws. For separately trained depths L:

* `log_depth_fit` fits acc ≈ a + b·ln L by least squares and reports R²;
* `doubling_gains` gives Δacc between L and 2L for every doubling present (1→2, 2→4, 4→8, ...);
* `diminishing_doublings` applies the catalog's check on them:
  Δ(4→8) ≤ Δ(2→4) + tol ≤ Δ(1→2) + 2·tol (tol = 0.02), i.e. each doubling gains at most tol more
  than the one before, along the chain of consecutive doublings from the smallest depth;
* `signal_table` says which (family, task) pairs have something for depth to show: learned, and not
  solved by the shallowest model, in every seed; and which stay below the ceiling in every run. The
  depth claims and the figure's fitted trends use only the pairs with signal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from repro.pipeline.decisions import CEILING_ROOM, LEARNED_SHARE


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


__all__ = ["diminishing_doublings", "doubling_chain", "doubling_gains", "log_depth_fit", "signal_table", "task_levels"]


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
    depth, the best accuracy of any single run (`top`), and two health checks on the pair's runs:

    * `signal`: in every seed, the best depth is at least LEARNED_SHARE of the way from chance to the
      ceiling and the shallowest depth at least CEILING_ROOM of that span below the ceiling (each seed's
      runs, not only their mean, have something for depth to show);
    * `below_ceiling`: every run, at every depth and seed, is at least CEILING_ROOM of the span below the
      ceiling (where a claim's region would be forced by a ceiling, such as a gain that cannot grow);
    * `moves`: in every seed, the deepest depth is at least CEILING_ROOM of the span above the shallowest
      (depth has an effect: the same share a run must leave free below the ceiling for one).

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
        moves = per_seed.iloc[-1] - per_seed.iloc[0] >= CEILING_ROOM * span
        means = per_seed.mean(axis=1)
        top = float(runs["accuracy"].max())
        rows.append(
            dict(
                family=family,
                task=task,
                chance=low,
                ceiling=high,
                best=float(means.max()),
                shallowest=float(means.iloc[0]),
                top=top,
                signal=bool((learned & room).all()),
                below_ceiling=top <= high - CEILING_ROOM * span,
                moves=bool(moves.all()),
            )
        )
    columns = ["family", "task", "chance", "ceiling", "best", "shallowest", "top", "signal", "below_ceiling", "moves"]
    return pd.DataFrame(rows, columns=columns)
