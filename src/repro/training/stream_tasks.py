"""Trainer tasks (see `repro.training.tasks.Task`) over on-the-fly streams (`repro.data.streams`).

Every training batch is drawn fresh from the stream with a generator seeded by (seed, step), so a
resumed run sees the same data and no sampler state is needed; runs that share a seed share their
data stream (the heads sweep compares models on identical batches). The held-out set is drawn once,
from its own seed, at construction.

SequenceStreamTask    models map inputs [B, T(, d)] to outputs [B, T, output_size].
  classification: loss = mean cross-entropy over defined labels (K targets per position, one
                  block of `classes` logits each); metric = accuracy.
  regression:     loss = normalised MSE, E‖ŷ − y‖² / E‖y‖², where E‖y‖² is the mean over the
                  held-out set (a constant, so train and eval losses are on one scale); metric = the same.
TeacherAttentionTask  a head maps (queries, keys, values) to outputs; loss = E‖o′ − o‖² over
                  queries (absolute, not normalised: catalog P6); the metric is the normalised error.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.data.streams.common import IGNORE_INDEX, SequenceStream
from repro.data.streams.teacher_attention import TeacherAttention
from repro.training.seeding import generator
from repro.training.tasks import LossOutput, task_fingerprint, tensor_digest


class SequenceStreamTask:
    def __init__(
        self, stream: SequenceStream, seq_len: int, eval_sequences: int, eval_seed: int, eval_batch_size: int = 256
    ):
        stream.check_length(seq_len)
        if eval_sequences < 1:
            raise ValueError(f"eval_sequences={eval_sequences} must be ≥ 1")
        self.stream, self.seq_len = stream, int(seq_len)
        self.eval_batch_size = int(eval_batch_size)
        self.eval_seed = int(eval_seed)
        self.eval_set = stream.sample(int(eval_sequences), self.seq_len, generator(self.eval_seed, "stream-eval"))
        if stream.target_kind == "regression":
            y, mask = self.eval_set["targets"], self.eval_set["mask"]
            self.target_power = float(((y**2).sum(-1) * mask).sum() / mask.sum())  # E‖y‖²
            if self.target_power <= 0:
                raise ValueError("the held-out targets are all zero; a normalised error is undefined")

    @property
    def kind(self) -> str:
        return self.stream.target_kind

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        return self.stream.sample(batch_size, self.seq_len, generator(seed, "stream-train", step))

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        n = len(self.eval_set["inputs"])
        for start in range(0, n, self.eval_batch_size):
            yield {key: value[start : start + self.eval_batch_size] for key, value in self.eval_set.items()}

    def _terms(self, model: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        """(sum of loss terms, number of terms, sum of metric terms) for one batch."""
        out = model(batch["inputs"])  # [B, T, output_size]
        if self.kind == "classification":
            labels = batch["labels"]  # [B, T, K]
            logits = out.reshape(*labels.shape, self.stream.classes)
            valid = labels != IGNORE_INDEX
            total = F.cross_entropy(
                logits.reshape(-1, self.stream.classes), labels.reshape(-1), ignore_index=IGNORE_INDEX, reduction="sum"
            )
            correct = ((logits.argmax(-1) == labels) & valid).sum()
            return total, valid.sum(), correct.to(total.dtype)
        mask = batch["mask"]  # [B, T]
        errors = ((out - batch["targets"]) ** 2).sum(-1) * mask / self.target_power
        total = errors.sum()
        return total, mask.sum(), total.detach()

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        total, count, _ = self._terms(model, batch)
        inputs = batch["inputs"]
        return LossOutput(total / count, inputs.shape[0] * inputs.shape[1], count)

    @torch.no_grad()
    def metric(self, model: nn.Module) -> float:
        """Accuracy (classification) or normalised MSE (regression) on the held-out set, in eval mode."""
        was_training = model.training
        model.eval()
        try:
            metric_sum, count = 0.0, 0.0
            for batch in self.eval_batches():
                _, n, m = self._terms(model, batch)
                metric_sum += float(m)
                count += float(n)
        finally:
            model.train(was_training)
        return metric_sum / count

    def fingerprint(self) -> dict:
        return task_fingerprint(
            self,
            stream=self.stream.fingerprint(),
            seq_len=self.seq_len,
            eval_seed=self.eval_seed,
            eval_inputs=tensor_digest(self.eval_set["inputs"]),
        )


class TeacherAttentionTask:
    """Fit a head to a `TeacherAttention` over key sets of `length` keys (module docstring).

    `batch_size` of the trainer counts key sets; each set carries `queries_per_set` queries.
    """

    def __init__(self, teacher: TeacherAttention, length: int, queries_per_set: int, eval_sets: int, eval_seed: int):
        self.teacher, self.length, self.queries_per_set = teacher, int(length), int(queries_per_set)
        self.eval_seed = int(eval_seed)
        self.eval_set = teacher.sample(
            int(eval_sets), self.length, self.queries_per_set, generator(self.eval_seed, "teacher-eval", self.length)
        )
        self.target_power = float((self.eval_set["targets"] ** 2).sum(-1).mean())  # E‖o‖²

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        return self.teacher.sample(
            batch_size, self.length, self.queries_per_set, generator(seed, "teacher-train", self.length, step)
        )

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        yield self.eval_set

    def loss(self, model: nn.Module, batch: dict[str, Tensor]) -> LossOutput:
        out = model(batch["queries"], batch["keys"], batch["values"])  # [S, Q, d]
        errors = ((out - batch["targets"]) ** 2).sum(-1)  # [S, Q]
        n = errors.numel()
        return LossOutput(errors.mean(), batch["keys"].shape[0] * self.length, n)

    def fingerprint(self) -> dict:
        return task_fingerprint(
            self,
            teacher=self.teacher.fingerprint(),
            length=self.length,
            queries_per_set=self.queries_per_set,
            eval_seed=self.eval_seed,
            eval_keys=tensor_digest(self.eval_set["keys"]),
        )


__all__ = ["SequenceStreamTask", "TeacherAttentionTask"]
