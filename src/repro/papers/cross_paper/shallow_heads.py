"""Study 3: Sixteen Heads' lens on the head-count sweeps of Allocation of Parameters
(docs/decisions/0051-cross-paper-claims.md).

Each sweep model has one attention layer of H heads at a fixed width D = H·d_h (repro.models.shallow).
On its task's held-out sequences: the Sixteen Heads importance of every head (|context · ∂L/∂context|
summed over positions, through a per-position head mask of ones, normalised to unit L2 norm as a layer
is), then the loss with the k lowest-ranked heads masked for every k = 0..H, and the removable share:
the largest k/H whose every prefix keeps the loss within `TOLERATED_SHARE` of the way from the trained
model's loss to the best constant predictor's.
"""

from __future__ import annotations

import pandas as pd
import torch
from torch import Tensor, nn

from repro.data.streams.common import IGNORE_INDEX
from repro.models.shallow import ShallowAttentionModel

#: A head can go while the loss stays within this share of the way to the constant predictor's (record 0051).
TOLERATED_SHARE = 0.05


class _Masked(nn.Module):
    """The model with a fixed head mask, as the task's loss calls it: model(inputs)."""

    def __init__(self, model: ShallowAttentionModel, mask: Tensor):
        super().__init__()
        self.model, self.mask = model, mask

    def forward(self, inputs: Tensor) -> Tensor:
        return self.model(inputs, head_mask=self.mask)


def summed_loss(model: ShallowAttentionModel, task, mask: Tensor | None = None) -> float:
    """The task's held-out loss with the heads of `mask` ([H], 0 = masked) removed, over every term."""
    total, count = 0.0, 0
    wrapped = model if mask is None else _Masked(model, mask)
    with torch.no_grad():
        for batch in task.eval_batches():
            out = task.loss(wrapped, batch)
            total += float(out.loss) * int(out.n_targets)
            count += int(out.n_targets)
    return total / count


def importance(model: ShallowAttentionModel, task) -> Tensor:
    """Per head, Σ over held-out sequences and positions of |∂L/∂ξ|, ξ a per-position head mask of ones
    ([B, H, T]) and L the summed training loss; normalised to unit L2 norm. Float64 [H]."""
    model.eval()
    raw = torch.zeros(model.cfg.n_heads, dtype=torch.float64)
    for batch in task.eval_batches():
        inputs = batch["inputs"]
        mask = torch.ones(inputs.shape[0], model.cfg.n_heads, inputs.shape[1], requires_grad=True)
        out = task.loss(_Masked(model, mask), batch)
        (grad,) = torch.autograd.grad(out.loss * out.n_targets, [mask])
        raw += grad.abs().sum(dim=(0, 2)).double()
    norm = raw.norm()
    return raw / norm if norm > 0 else raw


def constant_loss(task) -> float:
    """The held-out loss of the best input-independent predictor: the label marginal of each target
    (cross-entropy = its entropy) or the mean target (normalised MSE)."""
    data = task.eval_set
    if task.kind == "classification":
        labels = data["labels"]  # [B, T, K]
        total, count = 0.0, 0
        for k in range(labels.shape[-1]):
            valid = labels[..., k][labels[..., k] != IGNORE_INDEX]
            p = torch.bincount(valid, minlength=task.stream.classes).double() / len(valid)
            p = p[p > 0]
            total += float(-(p * p.log()).sum()) * len(valid)
            count += len(valid)
        return total / count
    y, mask = data["targets"].double(), data["mask"].double()  # [B, T, m], [B, T]
    mean = (y * mask[..., None]).sum(dim=(0, 1)) / mask.sum()
    error = (((y - mean) ** 2).sum(-1) * mask).sum() / mask.sum()
    return float(error) / task.target_power


def prune_curve(model: ShallowAttentionModel, task, scores: Tensor) -> pd.DataFrame:
    """The loss with the k lowest-importance heads masked (ties: lower head index first), k = 0..H."""
    order = sorted(range(len(scores)), key=lambda h: (float(scores[h]), h))
    rows = []
    mask = torch.ones(model.cfg.n_heads)
    rows.append(dict(n_pruned=0, loss=summed_loss(model, task)))
    for k, head in enumerate(order, start=1):
        mask[head] = 0.0
        rows.append(dict(n_pruned=k, loss=summed_loss(model, task, mask.clone())))
    return pd.DataFrame(rows)


def removable_share(curve: pd.DataFrame, constant: float, share: float = TOLERATED_SHARE) -> float:
    """The largest k/H such that every prefix up to k keeps the loss within `share` of the way from the
    whole model's loss to `constant` (0 when even one head cannot go)."""
    base = float(curve.loc[curve["n_pruned"] == 0, "loss"].iloc[0])
    limit = base + share * max(constant - base, 0.0)
    n_heads = int(curve["n_pruned"].max())
    within = (curve.sort_values("n_pruned")["loss"] <= limit).to_numpy()
    k = 0
    while k < n_heads and within[k + 1]:
        k += 1
    return k / n_heads


__all__ = ["TOLERATED_SHARE", "constant_loss", "importance", "prune_curve", "removable_share", "summed_loss"]
