"""Study 4: Allocation of Parameters' lens on Sixteen Heads' classifiers (docs/decisions/0051-cross-paper-claims.md).

A head's softmax saturation on a set of inputs: the mean, over every real query position, of the largest
weight its attention puts on one key (1 when it attends to a single token, 1/T when uniform over T).
Padding is neither a query nor a key. Read beside the head's Sixteen Heads importance, it asks whether
the heads that can go are the saturated ones: a head fixed on one position adds a nearly constant vector.
"""

from __future__ import annotations

import pandas as pd
import torch

from repro.analysis import heads as H


@torch.no_grad()
def saturation_and_accuracy(
    model, input_ids: torch.Tensor, labels: torch.Tensor, pad_id: int, batch_size: int
) -> tuple[pd.DataFrame, float]:
    """(one row per head: layer, head, saturation), and the classifier's accuracy (×100) on the inputs."""
    model.eval()
    n_layers = model.cfg.n_layers
    hooks = [f"blocks.{layer}.attn.hook_pattern" for layer in range(n_layers)]
    sums = [torch.zeros(count, dtype=torch.float64) for count in H.heads_per_layer(model, H.SELF)]
    queries, correct = 0, 0
    for start in range(0, len(input_ids), batch_size):
        ids = input_ids[start : start + batch_size]
        real = ids != pad_id  # [B, T]
        logits, cache = model.run_with_cache(ids, names=hooks, padding_mask=real)
        correct += int((logits.argmax(dim=-1) == labels[start : start + batch_size]).sum())
        weight = real[:, None, :].double()  # [B, 1, T] real queries
        for layer, name in enumerate(hooks):
            largest = cache[name].double().amax(dim=-1)  # [B, H, T] the largest weight of each query
            sums[layer] += (largest * weight).sum(dim=(0, 2))
        queries += int(real.sum())
    rows = [
        dict(layer=layer, head=head, saturation=float(total[head]) / queries)
        for layer, total in enumerate(sums)
        for head in range(len(total))
    ]
    return pd.DataFrame(rows), 100.0 * correct / len(input_ids)


def quarter_gap(table: pd.DataFrame, by: str = "importance", value: str = "saturation") -> float:
    """Mean `value` of the quarter of heads lowest in `by` minus that of the quarter highest in it."""
    ordered = table.sort_values([by, "layer", "head"], kind="stable")
    k = max(1, len(ordered) // 4)
    return float(ordered[value].iloc[:k].mean() - ordered[value].iloc[-k:].mean())


__all__ = ["quarter_gap", "saturation_and_accuracy"]
