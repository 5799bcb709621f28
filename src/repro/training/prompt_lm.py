"""Causal language modelling on prompt rows ``[BOS] body [ANS] label-word``, answer token up-weighted.

The prompt tasks of `repro.data.synthetic` (sent, entail, topic, mc) are right-padded rows; a
causal model reads them whole and predicts every next token. The loss is the weighted mean of the
per-target cross-entropies: weight 1 on every real target, ``label_weight`` on the target at
``answer_pos`` (the model reading ANS and predicting the label word), 0 on padding:

    loss = Σ_t w_t · CE(logits_t, token_{t+1}) / Σ_t w_t

This is the multitask "LM loss on all tokens, label token up-weighted" of layer_diversity.md §4.
Several tasks share one vocabulary, so their rows can simply be stacked (`stack_prompt_rows`).
Right padding never changes a causal model's outputs at real positions, so no padding mask is
needed; each batch is trimmed to its longest row.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.training.tasks import EpochSampler, LossOutput, task_fingerprint


def stack_prompt_rows(rows: Sequence[Tensor], answer_pos: Sequence[Tensor], pad_id: int) -> tuple[Tensor, Tensor]:
    """Stack several [N_k, T_k] id matrices into one [ΣN_k, max T_k], right-padded with ``pad_id``.

    Returns (ids [N, T], answer_pos [N]); rows keep their order, task after task.
    """
    if len(rows) != len(answer_pos) or not rows:
        raise ValueError("stack_prompt_rows needs one answer_pos vector per id matrix, and at least one matrix")
    width = max(int(r.shape[1]) for r in rows)
    padded = [F.pad(r, (0, width - r.shape[1]), value=pad_id) for r in rows]
    return torch.cat(padded), torch.cat([p.long() for p in answer_pos])


def _trim(ids: Tensor, pad_id: int) -> Tensor:
    """[B, T] -> [B, T'] without the trailing columns that are padding in every row."""
    used = (ids != pad_id).any(dim=0).nonzero()
    return ids[:, : int(used[-1]) + 1 if len(used) else 1]


class PromptLMTask:
    """Next-token prediction on prompt rows with the answer token's loss weighted by ``label_weight``.

    train_ids [N, T], train_answer_pos [N] (index of ANS; the label word is at answer_pos + 1),
    likewise for the held-out rows. ``label_weight=1`` is plain LM loss over the real tokens.
    """

    def __init__(
        self,
        train_ids: Tensor,
        train_answer_pos: Tensor,
        eval_ids: Tensor,
        eval_answer_pos: Tensor,
        *,
        pad_id: int,
        label_weight: float = 5.0,
        eval_batch_size: int = 256,
    ):
        for name, ids, pos in (("train", train_ids, train_answer_pos), ("eval", eval_ids, eval_answer_pos)):
            if ids.dim() != 2 or ids.is_floating_point():
                raise ValueError(f"{name}_ids must be an integer tensor [N, T], got {ids.dtype} {tuple(ids.shape)}")
            if pos.shape != ids.shape[:1]:
                raise ValueError(f"{name}_answer_pos must have shape [{len(ids)}], got {tuple(pos.shape)}")
            if len(pos) and (int(pos.min()) < 0 or int(pos.max()) + 1 >= ids.shape[1]):
                raise ValueError(f"{name}_answer_pos must lie in [0, T-2] so that a label word follows ANS")
        if not label_weight > 0:
            raise ValueError(f"label_weight={label_weight!r} must be positive")
        self.train_ids, self.train_answer_pos = train_ids, train_answer_pos.long()
        self.eval_ids, self.eval_answer_pos = eval_ids, eval_answer_pos.long()
        self.pad_id = pad_id
        self.label_weight = float(label_weight)
        self.eval_batch_size = eval_batch_size
        self.sampler = EpochSampler(len(train_ids))

    def _batch(self, ids: Tensor, answer_pos: Tensor) -> dict[str, Tensor]:
        ids = _trim(ids, self.pad_id)  # [B, T']
        targets = torch.full_like(ids, self.pad_id)
        targets[:, :-1] = ids[:, 1:]
        weights = (targets != self.pad_id).to(torch.float32)  # [B, T']
        weights[torch.arange(len(ids)), answer_pos] = self.label_weight
        return {"input_ids": ids, "targets": targets, "weights": weights}

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        rows = self.sampler.indices(step, batch_size, seed)
        return self._batch(self.train_ids[rows], self.train_answer_pos[rows])

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        for start in range(0, len(self.eval_ids), self.eval_batch_size):
            rows = slice(start, start + self.eval_batch_size)
            yield self._batch(self.eval_ids[rows], self.eval_answer_pos[rows])

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        logits = model(batch["input_ids"])  # [B, T, V]
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["targets"].reshape(-1), reduction="none")
        weights = batch["weights"].reshape(-1).to(ce.dtype)
        total = weights.sum()
        # n_targets is the total weight, so `evaluate` averages exactly as the loss does.
        return LossOutput((ce * weights).sum() / total, batch["input_ids"].numel(), total)

    def fingerprint(self) -> dict:
        return task_fingerprint(
            self,
            "train_ids",
            "train_answer_pos",
            "eval_ids",
            "eval_answer_pos",
            pad_id=self.pad_id,
            label_weight=self.label_weight,
            eval_batch_size=self.eval_batch_size,
        )
