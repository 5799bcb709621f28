"""Study 1: Sixteen Heads' lens on a decoder of any block (docs/decisions/0051-cross-paper-claims.md).

The importance of every head (`repro.analysis.head_importance`: |context · ∂L/∂context| summed over the
held-out targets, L the next-token loss), normalised per layer; then the prune-by-importance curve: the
held-out loss with the lowest-ranked share p of all heads masked, importance computed once on the whole
model. Masks reach shaped attention too, so skipless blocks are pruned the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import torch

from repro.analysis import head_importance as imp
from repro.analysis import heads as H
from repro.analysis.head_pruning import masked_loss, order_by_score, pruning_counts
from repro.training.tasks import IGNORE_INDEX, next_token_labels


def lm_batches(chunks: torch.Tensor, batch_size: int) -> list[dict[str, torch.Tensor]]:
    """Batches of held-out chunks [N, T] with their next-token labels (IGNORE_INDEX at the last position)."""
    batches = []
    for start in range(0, len(chunks), batch_size):
        tokens = chunks[start : start + batch_size]
        batches.append({"input_ids": tokens, "labels": next_token_labels(tokens)})
    return batches


def _targets(batch: dict) -> int:
    return int((batch["labels"] != IGNORE_INDEX).sum())


def heldout_loss(model, batches: Sequence[dict], masks=None) -> float:
    """Mean next-token loss (nats/token) over the batches, with the heads of `masks` masked."""
    return masked_loss(model, batches, imp.language_model_loss_sum, _targets, masks)


def importance_table(model, batches: Sequence[dict]) -> pd.DataFrame:
    """One row per head: layer, head, importance_raw (per target token) and importance (normalised per layer)."""
    raw, tokens = imp.head_importance(model, batches, imp.language_model_loss_sum)
    normalised = imp.normalize_by_layer(raw)
    rows = [
        dict(
            layer=layer,
            head=head,
            importance_raw=float(raw[kind][layer, head]) / max(tokens[kind], 1),
            importance=float(normalised[kind][layer, head]),
        )
        for kind, layer, head in H.all_heads(model)
    ]
    return pd.DataFrame(rows)


def prune_curve(model, batches: Sequence[dict], importance: pd.DataFrame, percents: Sequence[int]) -> pd.DataFrame:
    """The held-out loss with the lowest-importance share of heads masked (nested sets, ⌊N·p/100⌋ heads),
    one row per percent (0 first): percent, n_pruned, loss, delta_loss against the whole model."""
    scores = {(H.SELF, int(r.layer), int(r.head)): float(r.importance) for r in importance.itertuples()}
    order = order_by_score(scores, ascending=True)
    base = heldout_loss(model, batches)
    rows = [dict(percent=0, n_pruned=0, loss=base, delta_loss=0.0)]
    for percent, k in zip(percents, pruning_counts(len(order), list(percents), "floor")):
        loss = heldout_loss(model, batches, H.masks_without(model, order[:k]))
        rows.append(dict(percent=int(percent), n_pruned=k, loss=loss, delta_loss=loss - base))
    return pd.DataFrame(rows)


def top_share(importance: pd.Series, share: float = 0.25) -> float:
    """The part of the total (layer-normalised) importance held by the top `share` of the heads."""
    values = importance.sort_values(ascending=False).to_numpy()
    k = max(1, int(round(share * len(values))))
    total = float(values.sum())
    return float(values[:k].sum()) / total if total > 0 else float("nan")


__all__ = ["heldout_loss", "importance_table", "lm_batches", "prune_curve", "top_share"]
