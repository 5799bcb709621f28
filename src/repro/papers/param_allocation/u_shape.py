"""Is a sweep curve U-shaped? The per-seed edge contrasts behind the heads-sweep claims (Figs 2, 7, 8).

Kept free of torch so that the claims step (which only reads CSVs) starts without importing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class EdgeContrasts:
    """y(edge) − factor · y(best) of each seed, for the edges of a sweep against its best other point.

    `best` is fixed from the seed means (the x, other than the edges, with the lowest mean y) and then
    read in every seed, so each contrast is a paired comparison within one seed, linear in the losses:
    its mean over seeds is ≥ 0 exactly when the seed-mean y(edge) is at least `factor` × the seed-mean
    y(best), and no seed's near-zero y(best) makes it blow up as a ratio would. `contrasts` has one row
    per seed that has every x of the sweep and one column per edge; `means` is the seed-mean curve of
    those seeds."""

    best: object
    contrasts: pd.DataFrame
    means: pd.Series

    @property
    def seeds(self) -> int:
        return len(self.contrasts)


def edge_contrasts(
    frame: pd.DataFrame,
    edges: Sequence,
    factor: float,
    x: str = "heads",
    y: str = "eval_loss",
    seed: str = "seed",
) -> EdgeContrasts:
    """Per-seed y(edge) − factor · y(best) for each x in `edges` (a U-shape needs the smallest and the
    largest x; a left arm the smallest alone), where best is the non-edge x of lowest seed-mean y. Seeds
    missing some x are left out. A U-shape shows as both contrasts above 0 in every seed; a curve whose
    minimum lies at an edge shows that edge's contrast below 0."""
    table = frame.pivot_table(index=seed, columns=x, values=y).sort_index(axis=1).dropna()
    means = table.mean()
    inside = means.drop(list(edges))
    if inside.empty:
        raise ValueError(f"the sweep over {x} = {list(means.index)} has no point besides its edges {list(edges)}")
    if table.empty:  # no seed has every x: nothing to compare
        return EdgeContrasts(None, table[list(edges)], means)
    best = inside.idxmin()
    return EdgeContrasts(best, table[list(edges)].sub(factor * table[best], axis=0), means)


__all__ = ["EdgeContrasts", "edge_contrasts"]
