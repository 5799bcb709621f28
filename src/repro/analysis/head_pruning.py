"""Orders in which to remove a model's heads, and how many to remove at each level (Michel et al. 2019, §4.2).

`order_by_score` sorts heads by a score (importance ascending removes the least important first),
`random_order` draws a seeded permutation, `pruning_counts` turns percentages of N heads into counts:
BERT's code floors ⌊N·p/100⌋, fairseq's takes the ceiling ⌈N·p/100⌉. No layer keeps a minimum of heads.
`masked_loss` is a model's mean loss with a set of heads masked, for prune-by-importance curves of any
model whose loss function `repro.analysis.head_importance` provides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import torch

from repro.analysis import heads as H
from repro.analysis.device import model_device

ROUNDING = ("floor", "ceil")


def pruning_counts(n_heads: int, percents: Sequence[int], rounding: str) -> list[int]:
    """Heads removed at each level: ⌊N·p/100⌋ ("floor", BERT) or ⌈N·p/100⌉ ("ceil", fairseq),
    in integer arithmetic (so 288·10/100 = 28.8 gives exactly 28 or 29)."""
    if rounding not in ROUNDING:
        raise ValueError(f"rounding={rounding!r}; choose one of: {', '.join(ROUNDING)}")
    if any(not isinstance(p, (int, np.integer)) or not 0 <= p <= 100 for p in percents):
        raise ValueError(f"pruning percentages must be integers in [0, 100], got {list(percents)}")
    if rounding == "floor":
        return [n_heads * int(p) // 100 for p in percents]
    return [-(-n_heads * int(p) // 100) for p in percents]


def order_by_score(
    scores: Mapping[H.HeadId, float], ascending: bool = True, tiebreak: Mapping[H.HeadId, float] | None = None
) -> list[H.HeadId]:
    """Heads sorted by score (NaN-free); equal scores are ordered by ``tiebreak`` ascending (if given),
    then by (type, layer, head)."""
    heads = sorted(scores, key=_type_rank)
    values = np.array([scores[h] for h in heads], dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError("scores contain NaN; every head needs a score to be ordered")
    keys = [np.arange(len(heads))]
    if tiebreak is not None:
        missing = [h for h in heads if h not in tiebreak]
        if missing:
            raise ValueError(f"the tie-break has no value for {len(missing)} heads, e.g. {missing[0]}")
        second = np.array([tiebreak[h] for h in heads], dtype=np.float64)
        if np.isnan(second).any():
            raise ValueError("the tie-break contains NaN; every head needs a value to be ordered")
        keys.append(second)
    keys.append(values if ascending else -values)
    return [heads[i] for i in np.lexsort(keys)]


def _type_rank(head: H.HeadId) -> tuple:
    kind, layer, index = head
    return (H.TYPE_ORDER.index(kind), layer, index)


def random_order(heads: Sequence[H.HeadId], seed: int) -> list[H.HeadId]:
    """A uniformly random order of ``heads`` from a seeded generator."""
    ordered = sorted(heads, key=_type_rank)
    permutation = np.random.default_rng(seed).permutation(len(ordered))
    return [ordered[i] for i in permutation]


@torch.no_grad()
def masked_loss(
    model, batches: Iterable[dict], loss_fn, count_fn, masks: Mapping[str, torch.Tensor] | None = None
) -> float:
    """Σ loss_fn(model, batch, head mask) / Σ count_fn(batch) over ``batches`` in eval mode, with the heads
    that ``masks`` (as made by repro.analysis.heads) zero masked; every head kept for None."""
    was_training = model.training
    model.eval()
    device = model_device(model)
    mask = H.model_mask(model, None if masks is None else {k: v.to(device) for k, v in masks.items()})
    total, count = 0.0, 0
    try:
        for batch in batches:
            batch = {key: value.to(device) if torch.is_tensor(value) else value for key, value in batch.items()}
            total += float(loss_fn(model, batch, mask))
            count += int(count_fn(batch))
    finally:
        model.train(was_training)
    if count == 0:
        raise ValueError("masked_loss: the batches hold no target")
    return total / count


__all__ = ["ROUNDING", "masked_loss", "order_by_score", "pruning_counts", "random_order"]
