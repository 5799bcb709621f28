"""Is a sweep curve U-shaped? The interior-optimum test of the heads-versus-head-dimension sweeps.

Kept free of torch so that the claims step (which only reads CSVs) starts without importing it.
"""

from __future__ import annotations

import math

import pandas as pd


def interior_optimum(
    frame: pd.DataFrame,
    x: str = "heads",
    y: str = "eval_loss",
    seed: str = "seed",
    edge_ratio: float = 1.1,
    spread_factor: float = 2.0,
) -> dict:
    """Is the curve mean_seeds(y) against x U-shaped? The catalog's three conditions (Fig 2 check):

    interior:  the argmin of the seed-mean lies strictly between the smallest and largest x;
    edges:     y at the smallest and at the largest x are each ≥ `edge_ratio` × the minimum;
    spread:    max − min of the seed-means ≥ `spread_factor` × the pooled seed sd, where the pooled
               sd is √(mean over x of the per-x sample variance across seeds).
    Returns the means per x, the argmin, the three booleans, `u_shape` (all three) and the numbers
    behind them. Needs at least two seeds for the spread (with one, the pooled sd is NaN and the
    spread condition is False).
    """
    grouped = frame.groupby(x)[y]
    means = grouped.mean().sort_index()
    variances = grouped.var(ddof=1).reindex(means.index)
    pooled_sd = float(math.sqrt(variances.mean())) if variances.notna().all() else math.nan
    best_x = means.idxmin()
    low, high = means.index.min(), means.index.max()
    minimum = float(means.min())
    spread = float(means.max() - minimum)
    result = {
        "means": means,
        "argmin": best_x,
        "minimum": minimum,
        "edge_low_ratio": float(means.loc[low] / minimum) if minimum > 0 else math.inf,
        "edge_high_ratio": float(means.loc[high] / minimum) if minimum > 0 else math.inf,
        "spread": spread,
        "pooled_sd": pooled_sd,
        "seeds": int(frame.groupby(x)[seed].nunique().min()),
    }
    result["interior"] = bool(low < best_x < high)
    result["edges"] = bool(means.loc[low] >= edge_ratio * minimum and means.loc[high] >= edge_ratio * minimum)
    result["spread_ok"] = bool(math.isfinite(pooled_sd) and spread >= spread_factor * pooled_sd)
    result["u_shape"] = result["interior"] and result["edges"] and result["spread_ok"]
    return result


__all__ = ["interior_optimum"]
