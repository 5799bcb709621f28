"""The health gates and the nulls of the simplified_blocks decoder claims (repro.pipeline.claims).

Gate. A loss comparison between blocks says something only where the blocks learned: the runs a
claim takes as its reference (the figure's Pre-LN runs in almost every figure) must end at least
1 nat below the unigram level of the decoders' held-out split (repro.pipeline.decisions.lm_gate; the
levels of rule lm_reference_levels: the code corpus offline, CodeParrot at paper scale).
The runs claimed to be worse are not gated: their failing to learn is the effect. The base runs end
there, in early training (above the bigram level); a claim the paper makes about where training ends
(`past_bigram`) is gated on the bigram level instead, and is not measurable where its runs stop short.

Null. Each claim is also judged on a version of its curves on which it must not be reproduced,
chosen by what it asserts about a run a against a run b:

* a matches b, or is at least as good: a stopped at its first evaluation (`untrained`);
* a is no better than b: b stopped at its first evaluation (`untrained`);
* a differs from b (clearly worse, or lower): a's losses replaced by b's (`no_effect`); a claim
  that a is lower declares a smallest effect of interest, so that this zero gap, measured precisely
  enough, reads "not reproduced" rather than inconclusive;
* an order over a grid (β, learning-rate ratio, tying): the grid's runs relabelled in reverse
  order (`relabelled`); the order's ends must differ by more than its smallest effect of interest,
  so that the reversal, like a flat grid (which no step of a "non-decreasing" order contradicts),
  reads "not reproduced".

A null passes only by reading "not reproduced" (repro.pipeline.claims); any other outcome leaves the
claim "not measurable".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.pipeline.claims import Gate, Null
from repro.pipeline.decisions import LM_REFERENCE_LEVELS, lm_gate

#: The reference levels of the decoders' held-out split, which every gated claim lists among its inputs.
LEVELS = LM_REFERENCE_LEVELS

Select = Callable[[object], Iterable[str]]  # data -> variant names
Pairs = Callable[[object], Mapping[str, str]]  # data -> {variant: variant}


def block_runs(curves: pd.DataFrame, keys: Iterable[str] | None) -> list[str]:
    """The variants of a curves table whose block (its plotting style key) is one of `keys`; all of
    them for None."""
    from repro.papers.simplified_blocks.variant_table import style_key

    runs = curves.drop_duplicates("variant")
    keys = None if keys is None else set(keys)
    return [
        v for v, b, n in zip(runs["variant"], runs["block"], runs["norm"]) if keys is None or style_key(b, n) in keys
    ]


def learned(
    csvs: Iterable[str],
    keys: Iterable[str] | None = ("pre_ln",),
    runs: str = "the figure's Pre-LN runs",
    select: Select | None = None,
    levels: str = LEVELS,
    past_bigram: bool = False,
) -> Gate:
    """The gate: every run of the blocks `keys` in the curve tables `csvs` (every run for None), or the
    runs `select(data)` where given, ends at least 1 nat below the unigram level of `levels` (the
    reference levels of the chunks the runs are evaluated on: the decoders' by default); with
    `past_bigram`, below the bigram level (the gate of a claim about where training ends)."""
    csvs = tuple(csvs)

    def losses(data) -> list[float]:
        chosen = set(select(data)) if select is not None else None
        out = []
        for csv in csvs:
            curves = data[csv]
            finals = final_losses(curves)
            names = chosen if chosen is not None else block_runs(curves, keys)
            out += finals.loc[finals["variant"].isin(names), "final_loss"].tolist()
        return out

    if past_bigram:
        return lm_gate(losses, margin=0.0, levels=levels, runs=runs, below="bigram")
    return lm_gate(losses, levels=levels, runs=runs)


def pair_null(csvs: Iterable[str], asserts: str, a: Select, b: Select, names: tuple[str, str]) -> Null:
    """The null of a claim about run(s) a against run(s) b (`select` functions of the data, paired in
    order), by what it `asserts`: "as_good" (a matches b or is at least as good), "no_better" (a is no
    better than b) or "differs" (a is clearly worse, or lower, than b). `names` name a and b in words."""
    if asserts == "as_good":
        return untrained(csvs, a, names[0])
    if asserts == "no_better":
        return untrained(csvs, b, names[1])
    if asserts == "differs":
        return no_effect(csvs, lambda data: dict(zip(a(data), b(data))), f"{names[0]} given {names[1]}'s losses")
    raise ValueError(f"asserts={asserts!r}; choose as_good, no_better or differs")


def _first_evaluation(curves: pd.DataFrame, variants: set[str]) -> pd.DataFrame:
    evals = curves[curves["split"] == "eval"].sort_values("step")
    first = evals.groupby(["variant", "seed"])["loss"].first()
    chosen = curves["variant"].isin(variants)
    keys = pd.MultiIndex.from_arrays([curves.loc[chosen, "variant"], curves.loc[chosen, "seed"]])
    out = curves.copy()
    out.loc[chosen, "loss"] = first.reindex(keys).to_numpy()
    return out


def untrained(csvs: Iterable[str], select: Select, who: str) -> Null:
    """The runs `select(data)` stopped at their first evaluation: every logged loss (train and eval)
    replaced by the first eval loss of the run."""
    csvs = tuple(csvs)

    def make(data) -> dict[str, pd.DataFrame]:
        chosen = set(select(data))
        return {csv: _first_evaluation(data[csv], chosen) for csv in csvs}

    return Null(f"{who} stopped at the first evaluation (untrained)", make)


def _copied(curves: pd.DataFrame, pairs: Mapping[str, str], sources: pd.DataFrame) -> pd.DataFrame:
    """Each run a of `pairs` = {a: b} in `curves` replaced by b's whole curve of the same seed (taken from
    `sources`, every table the claim reads: b may live in another figure's table), under a's name: runs of
    one budget in time end at different steps (the masked LM), so a's steps need not be b's."""
    kept = curves[~curves["variant"].isin(list(pairs))]
    copies = []
    for a, b in pairs.items():
        seeds = curves.loc[curves["variant"] == a, "seed"].unique()
        source = sources[(sources["variant"] == b) & sources["seed"].isin(seeds)].drop_duplicates()
        copies.append(source.assign(variant=a))
    return pd.concat([kept, *copies], ignore_index=True)


def no_effect(csvs: Iterable[str], pairs: Pairs, what: str) -> Null:
    """Each run a of `pairs(data)` = {a: b} given b's curve of the same seed: no effect."""
    csvs = tuple(csvs)

    def make(data) -> dict[str, pd.DataFrame]:
        frames = {csv: data[csv] for csv in csvs}
        sources = pd.concat(frames.values(), ignore_index=True)
        return {csv: _copied(frame, pairs(data), sources) for csv, frame in frames.items()}

    return Null(f"no effect: {what}", make)


def relabelled(csvs: Iterable[str], mapping: Pairs, what: str) -> Null:
    """The runs renamed by `mapping(data)` (a permutation of variant names): an order reversed, two
    settings swapped."""
    csvs = tuple(csvs)

    def make(data) -> dict[str, pd.DataFrame]:
        names = mapping(data)
        return {csv: data[csv].assign(variant=data[csv]["variant"].map(lambda v: names.get(v, v))) for csv in csvs}

    return Null(what, make)


def reversed_order(ordered: list[str]) -> dict[str, str]:
    """The permutation that sends the i-th of `ordered` to the (n−1−i)-th."""
    return dict(zip(ordered, reversed(ordered)))


__all__ = [
    "LEVELS",
    "block_runs",
    "learned",
    "no_effect",
    "pair_null",
    "relabelled",
    "reversed_order",
    "untrained",
]
