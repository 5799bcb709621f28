"""Ablation sweeps over the heads of a model, written as tidy tables (Michel et al. 2019, §3-4).

All sweeps take an evaluator of repro.papers.sixteen_heads.head_eval and return a DataFrame with one row per
(condition, evaluation set): the score in points, the unmasked baseline on the same set, Δ =
score − baseline, the paired-test p-value against the baseline, and the mean gold-label loss with
its change Δ loss (continuous, so it separates conditions whose scores tie).

- `single_head_ablation`: remove exactly one head (every head, every set; §3.2, Fig. 1, Table 1).
- `keep_one_head`: in one (type, layer), remove every head but one; all other layers stay whole
  (§3.3, Tables 2, 3, 5, 6). `best_kept_heads` then picks, per (type, layer), the kept head with
  the best score on one set and reports its Δ and p-value on another (the same set for Tables 2-3,
  a held-out one for Tables 5-6); ties go to the lower loss on the choosing set, then the lowest head id.
- `pruning_curve`: remove the first k heads of a global order, for nested k (§4.2, Fig. 3). The orders
  and the counts per level come from repro.analysis.head_pruning: `order_by_score` (importance
  ascending; oracle: single-ablation Δ descending, ties broken by Δ loss ascending, so heads whose
  removal leaves the score unchanged go least harmful first instead of in (layer, head) order),
  `random_order`, and `pruning_counts` (BERT floors ⌊N·p/100⌋, the MT code takes the ceiling ⌈N·p/100⌉,
  catalog §4.6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from repro.analysis import heads as H
from repro.papers.sixteen_heads.head_summaries import best_kept_heads  # noqa: F401  (re-exported: part of the sweep API)


def baselines(evaluator, sets: Sequence[str]) -> dict:
    """The unmasked model's Evaluation on every set."""
    return {name: evaluator.evaluate(None, name) for name in sets}


def _row(evaluator, base, result, **fields) -> dict:
    return dict(
        fields,
        score=result.score,
        baseline=base.score,
        delta=result.score - base.score,
        p_value=evaluator.p_value(base, result),
        n_examples=len(result.stats),
        loss=result.loss,
        delta_loss=result.loss - base.loss,
    )


def _sweep(evaluator, conditions: list[tuple[dict, H.Masks]], sets: Sequence[str], base: Mapping) -> list[dict]:
    """One row per (condition, set), conditions in order; each set is evaluated under every mask at once."""
    masks = [mask for _, mask in conditions]
    results = {name: evaluator.evaluate_many(masks, name) for name in sets}
    return [
        _row(evaluator, base[name], results[name][i], **fields, set=name)
        for i, (fields, _) in enumerate(conditions)
        for name in sets
    ]


def single_head_ablation(
    model, evaluator, sets: Sequence[str], base: Mapping | None = None, heads: Iterable[H.HeadId] | None = None
) -> pd.DataFrame:
    """Score with each head removed alone, on every set in ``sets``."""
    base = dict(base) if base is not None else baselines(evaluator, sets)
    conditions = [
        (dict(type=kind, layer=layer, head=head), H.masks_without(model, [(kind, layer, head)]))
        for kind, layer, head in (H.all_heads(model) if heads is None else heads)
    ]
    return pd.DataFrame(_sweep(evaluator, conditions, sets, base))


def keep_one_head(model, evaluator, sets: Sequence[str], base: Mapping | None = None) -> pd.DataFrame:
    """Score with only head ``head`` left in (type, layer), for every head, on every set."""
    base = dict(base) if base is not None else baselines(evaluator, sets)
    conditions = [
        (dict(type=kind, layer=layer, kept_head=head), H.masks_keeping_one(model, kind, layer, head))
        for kind, layer, head in H.all_heads(model)
    ]
    return pd.DataFrame(_sweep(evaluator, conditions, sets, base))


def pruning_curve(
    model, evaluator, order: Sequence[H.HeadId], counts: Sequence[int], set_name: str, base=None
) -> pd.DataFrame:
    """Score after removing the first k heads of ``order`` for each k in ``counts`` (nested sets)."""
    base = base if base is not None else evaluator.evaluate(None, set_name)
    for k in counts:
        if k > len(order):
            raise ValueError(f"cannot remove {k} heads: the order has {len(order)}")
    pruned = [k for k in counts if k > 0]
    results = dict(zip(pruned, evaluator.evaluate_many([H.masks_without(model, order[:k]) for k in pruned], set_name)))
    rows = []
    for k in counts:
        result = results.get(k, base)
        rows.append(
            dict(n_pruned=k, set=set_name, score=result.score, baseline=base.score, delta=result.score - base.score)
        )
    return pd.DataFrame(rows)
