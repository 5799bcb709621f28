"""The health gate and the nulls of the cross-paper claims (repro.pipeline.claims), as fixed in
docs/decisions/0051-cross-paper-claims.md before any result.

Gate. The runs a study reads must pass the gate their own paper declares for them: simplified_blocks'
decoders end at least 1 nat below the unigram level of the held-out chunks they are evaluated on
(repro.pipeline.decisions.lm_gate; every decoder read, not only the reference: a block that did not
learn has no heads or layers worth comparing); sixteen_heads' classifiers are in the informative range
of repro.pipeline.decisions.classifier_gate on the inputs read (learned, and below their ceiling);
param_allocation's head-count sweeps are read only for the (task, position) pairs inside the range its
own gate requires (`sweeps_in_range`: the best H learned, the worst H short of perfect), and the gate
fails when no pair is.

Nulls remove the effect a claim is about and must read "not reproduced": one block's rows replaced by
another's of the same seed (a paired difference of exactly zero, which the smallest effect of interest
turns into "no effect that large"), or the losses permuted across the blocks of each seed so that their
ranks are uncorrelated with the quantity they are ranked against (Spearman ρ = 0 exactly), or a
ranking reversed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from repro.pipeline.claims import Gate, Null
from repro.pipeline.decisions import CEILING_ROOM, LEARNED_SHARE, classifier_gate, lm_gate

#: The files the gate reads (written by collect-blocks): each decoder's held-out loss, and the levels of its chunks.
DECOMPOSITION = "data/block_decomposition.csv"
LEVELS = "data/block_reference_levels.json"
#: Study 3's table: per sweep model (task, position, heads, seed), its losses, metric and removable share.
SWEEP_PRUNING = "data/sweep_pruning.csv"
#: Study 4's table: per classifier seed and head, its saturation, importance, accuracy and chance level.
SATURATION = "data/head_saturation.csv"
#: A permutation of four ranks whose Spearman correlation with the identity is exactly 0 (Σ d² = 10 = n(n²−1)/6).
UNCORRELATED_RANKS = (1, 3, 0, 2)


def decoders_learned() -> Gate:
    """Every decoder read ends at least 1 nat below the unigram level of its held-out chunks."""
    return lm_gate(
        lambda data: data[DECOMPOSITION]["heldout_loss"].tolist(),
        levels=LEVELS,
        runs="every simplified_blocks decoder read (simplified_blocks' own gate on its runs)",
    )


def sweeps_in_range(table: pd.DataFrame) -> tuple[list[tuple[str, str]], list[str]]:
    """The (task, position) pairs whose seed-mean sweep is in param_allocation's range (its own gate on the
    sweeps: the best H at least LEARNED_SHARE of the way from the trivial predictor to perfect, the worst
    at least CEILING_ROOM of that span short of perfect), and the others described."""
    kept, left_out = [], []
    for (task, position), rows in table.groupby(["task", "position"], sort=True):
        means = rows.groupby("heads")["metric"].mean()
        trivial = float(rows["trivial"].iloc[0])
        if rows["metric_name"].iloc[0] == "accuracy":
            perfect, best, worst = 1.0, float(means.max()), float(means.min())
        else:  # normalised MSE: 1 predicting 0, 0 perfect
            perfect, best, worst = 0.0, float(means.min()), float(means.max())
        span = perfect - trivial
        if (best - trivial) / span >= LEARNED_SHARE and (perfect - worst) / span >= CEILING_ROOM:
            kept.append((task, position))
        else:
            left_out.append(f"{task}/{position} (worst H {worst:.3g}, best H {best:.3g}, trivial {trivial:.3g})")
    return kept, left_out


def sweeps_learned() -> Gate:
    """At least one (task, position) sweep is in param_allocation's range (`sweeps_in_range`)."""

    def check(data) -> tuple[bool, str]:
        kept, left_out = sweeps_in_range(data[SWEEP_PRUNING])
        judged = ", ".join(f"{t}/{p}" for t, p in kept) or "none"
        return bool(kept), f"in range: {judged}; left out: {'; '.join(left_out) or 'none'}"

    return Gate(
        f"param_allocation's own gate on its sweeps, per (task, position): the best H at least {LEARNED_SHARE:.0%} of "
        f"the way from a trivial predictor to perfect, the worst at least {CEILING_ROOM:.0%} of that span short of "
        "perfect; the pairs outside are left out, and at least one must remain",
        check,
    )


def smallest_sweep_everywhere(table: str, column: str, what: str) -> Null:
    """Every model's `column` replaced by that of the smallest head count of its sweep (same task, position
    and seed): a flat sweep."""

    def make(data) -> dict[str, pd.DataFrame]:
        frame = data[table].copy()
        keys = ["task", "position", "seed"]
        smallest = frame.loc[frame.groupby(keys)["heads"].idxmin(), [*keys, column]]
        frame = frame.drop(columns=[column]).merge(smallest, on=keys, how="left")
        return {table: frame}

    return Null(what, make)


def classifiers_in_range() -> Gate:
    """Every classifier read (one accuracy per seed) is learned and below its ceiling (classifier_gate),
    with chance the constant predictor's accuracy on balanced classes (100 / classes)."""

    def check(data) -> tuple[bool, str]:
        per_seed = data[SATURATION].groupby("seed")[["accuracy", "chance"]].first()
        gate = classifier_gate(lambda _: per_seed["accuracy"].tolist(), float(per_seed["chance"].iloc[0]))
        return gate.check(data)

    return Gate(
        "every sixteen_heads NLI classifier read, on its test inputs: at least 25% of the way from chance to 100% "
        "accuracy and 2% of that span below it (sixteen_heads' own gate)",
        check,
    )


def reversed_ranking(table: str, column: str, what: str) -> Null:
    """`column` of `table` negated, so that every ranking by it is reversed."""

    def make(data) -> dict[str, pd.DataFrame]:
        frame = data[table].copy()
        frame[column] = -frame[column]
        return {table: frame}

    return Null(what, make)


def copied(tables: Sequence[str], pairs: Mapping[str, str], what: str) -> Null:
    """The rows of each variant `v` of `pairs` replaced, in every table of `tables`, by those of `pairs[v]`
    with the same seed (and the same other keys)."""

    def make(data) -> dict[str, pd.DataFrame]:
        out = {}
        for name in tables:
            table = data[name]
            kept = table[~table["variant"].isin(list(pairs))]
            copies = [table[table["variant"] == source].assign(variant=target) for target, source in pairs.items()]
            out[name] = pd.concat([kept, *copies], ignore_index=True)
        return out

    return Null(what, make)


def uncorrelated_losses(table: str, ranked_by: str, variants: Sequence[str], what: str) -> Null:
    """Within each seed, the `heldout_loss` of the four `variants` permuted so that the block with the k-th
    smallest `ranked_by` gets the loss of rank UNCORRELATED_RANKS[k]: rank correlation exactly 0."""
    if len(variants) != len(UNCORRELATED_RANKS):
        raise ValueError(f"the permutation null is defined for {len(UNCORRELATED_RANKS)} blocks, got {list(variants)}")

    def make(data) -> dict[str, pd.DataFrame]:
        frame = data[table].copy()
        for _, group in frame[frame["variant"].isin(list(variants))].groupby("seed"):
            by_quantity = group.sort_values(ranked_by, kind="stable").index
            losses = group["heldout_loss"].sort_values(kind="stable").to_numpy()
            for k, index in enumerate(by_quantity):
                frame.loc[index, "heldout_loss"] = losses[UNCORRELATED_RANKS[k]]
        return {table: frame}

    return Null(what, make)


__all__ = [
    "DECOMPOSITION",
    "LEVELS",
    "SATURATION",
    "SWEEP_PRUNING",
    "UNCORRELATED_RANKS",
    "classifiers_in_range",
    "copied",
    "decoders_learned",
    "reversed_ranking",
    "smallest_sweep_everywhere",
    "sweeps_in_range",
    "sweeps_learned",
    "uncorrelated_losses",
]
