"""Is a sweep curve U-shaped? The per-seed edge ratios behind the heads-sweep claims (Figs 2, 7, 8).

Kept free of torch so that the claims step (which only reads CSVs) starts without importing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class EdgeRatios:
    """The ratios y(edge) / y(best) of each seed, for the edges of a sweep against its best other point.

    `best` is fixed from the seed means (the x, other than the edges, with the lowest mean y) and then
    read in every seed, so each ratio is a paired comparison within one seed; `ratios` has one row per
    seed that has every x of the sweep and one column per edge; `means` is the seed-mean curve of those
    seeds."""

    best: object
    ratios: pd.DataFrame
    means: pd.Series

    @property
    def seeds(self) -> int:
        return len(self.ratios)


def edge_ratios(
    frame: pd.DataFrame, edges: Sequence, x: str = "heads", y: str = "eval_loss", seed: str = "seed"
) -> EdgeRatios:
    """Per-seed y(edge) / y(best) for each x in `edges` (a U-shape needs the smallest and the largest x;
    a left arm the smallest alone), where best is the non-edge x of lowest seed-mean y. Seeds missing
    some x are left out. A U-shape shows as both ratios above 1 in every seed; a curve whose minimum
    lies at an edge shows that edge's ratio below 1."""
    table = frame.pivot_table(index=seed, columns=x, values=y).sort_index(axis=1).dropna()
    means = table.mean()
    inside = means.drop(list(edges))
    if inside.empty:
        raise ValueError(f"the sweep over {x} = {list(means.index)} has no point besides its edges {list(edges)}")
    if table.empty:  # no seed has every x: nothing to compare
        return EdgeRatios(None, table[list(edges)], means)
    best = inside.idxmin()
    return EdgeRatios(best, table[list(edges)].div(table[best], axis=0), means)


__all__ = ["EdgeRatios", "edge_ratios"]
