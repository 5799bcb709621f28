"""Fine-tuning a pre-trained encoder on GLUE-like tasks, and the GLUE metrics.

Works with any encoder of the model family (`Transformer` with ``output="none"``, bidirectional)
and any task of repro.data.glue_standin (or real GLUE data in the same TaskSplit form). The
protocol follows cramming BERT as He & Hofmann (2024, D.2) describe it, with sizes scaled down by
the caller: identical settings for every task, AdamW, cosine schedule with warmup, dropout in the
encoder and the head, a fixed number of epochs; several seeds each change the head's
initialisation, the dropout and the data order.

Head: pool the final hidden states (the encoder config's `pool`, honouring padding), dense + tanh
(BERT's pooler), dropout, linear to the task's outputs (classes, or 1 for regression with MSE).

A run whose training loss becomes non-finite is stopped and recorded as diverged, with NaN scores
(the paper reports NaNs when fine-tuning SAS-P without norms): nothing is asserted about which
runs diverge.

Metrics (as GLUE, ×100): accuracy; F1 of the positive class; Matthews correlation; Spearman
correlation for regression.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.analysis import metrics
from repro.analysis.device import model_device
from repro.data.glue_standin import TaskSpec, TaskSplit
from repro.models import Transformer, TransformerConfig
from repro.training.config import resolve_device
from repro.training.optim import build_optimizer
from repro.training.schedules import build_schedule
from repro.training.seeding import derive_seed, generator

# The GLUE metrics (repro.analysis.metrics.score computes each).
METRICS = ("accuracy", "f1", "mcc", "spearman")


# -- the model -----------------------------------------------------------------------------------


class SequenceModel(nn.Module):
    """A pre-trained encoder plus BERT's pooler and a linear head: [B, T] ids -> [B, n_outputs]."""

    def __init__(self, encoder: Transformer, n_outputs: int, dropout: float, init_std: float = 0.02):
        super().__init__()
        if encoder.cfg.output != "none":
            raise ValueError(f"the encoder must have output='none', got {encoder.cfg.output!r}")
        d = encoder.cfg.d_model
        self.encoder = encoder
        self.pooler = nn.Linear(d, d)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(d, n_outputs)
        for layer in (self.pooler, self.head):
            nn.init.normal_(layer.weight, std=init_std)
            nn.init.zeros_(layer.bias)

    def forward(self, input_ids: Tensor, padding_mask: Tensor | None = None) -> Tensor:
        hidden = self.encoder(input_ids, padding_mask=padding_mask)  # [B, T, d]
        pooled = self.encoder.pool(hidden, padding_mask)  # [B, d]
        return self.head(self.dropout(torch.tanh(self.pooler(pooled))))  # [B, n_outputs]


@dataclass(frozen=True)
class FinetuneSettings:
    """The fine-tuning protocol, identical for every task (cramming: 5 epochs, batch 32, LR 1.5e-4,
    cosine, eps 1e-6, dropout 0.1)."""

    epochs: int
    batch_size: int
    lr: float
    warmup_fraction: float = 0.1
    weight_decay: float = 0.01
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-6
    grad_clip: float | None = 1.0
    dropout: float = 0.1
    pool: str = "mean"
    eval_batch_size: int = 256

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "eval_batch_size"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"FinetuneSettings.{name}={getattr(self, name)!r} must be a positive integer")
        if not self.lr > 0 or not 0 <= self.warmup_fraction < 1 or not 0 <= self.dropout < 1:
            raise ValueError("FinetuneSettings: lr must be > 0, warmup_fraction and dropout in [0, 1)")
        object.__setattr__(self, "betas", tuple(self.betas))


def finetune_config(encoder_cfg: TransformerConfig, settings: FinetuneSettings) -> TransformerConfig:
    """The pre-trained encoder's config with the fine-tuning dropout and pooling."""
    values = encoder_cfg.to_dict()
    values.update(dropout=settings.dropout, pool=settings.pool, output="none")
    return TransformerConfig(**values)


@torch.no_grad()
def predict(model: SequenceModel, split: TaskSplit, batch_size: int, regression: bool) -> np.ndarray:
    """Predicted classes (or regression scores) of every row, computed on the model's device."""
    model.eval()
    device, out = model_device(model), []
    for start in range(0, len(split.labels), batch_size):
        rows = slice(start, start + batch_size)
        logits = model(split.input_ids[rows].to(device), padding_mask=split.padding_mask[rows].to(device))  # [b, C]
        out.append((logits[:, 0] if regression else logits.argmax(dim=-1)).cpu())
    return torch.cat(out).numpy()


def _loss(model: SequenceModel, split: TaskSplit, rows: Tensor, regression: bool) -> Tensor:
    device = model_device(model)  # the split stays in CPU memory; each batch moves (a no-op on the CPU)
    outputs = model(split.input_ids[rows].to(device), padding_mask=split.padding_mask[rows].to(device))  # [b, C]
    labels = split.labels[rows].to(device)
    if regression:
        return F.mse_loss(outputs[:, 0], labels.float())
    return F.cross_entropy(outputs, labels)


def finetune(
    encoder_cfg: TransformerConfig,
    encoder_state: dict[str, Tensor],
    spec: TaskSpec,
    splits: dict[str, TaskSplit],
    settings: FinetuneSettings,
    seed: int,
    device: torch.device | str = "cpu",
) -> dict:
    """Fine-tune a copy of the encoder on one task; returns {"scores": {column: score},
    "diverged", "steps", "seconds", "final_train_loss"}. Scores are NaN for a diverged run.

    The model trains and predicts on `device`; the data and the order of batches stay on the CPU,
    so the order is the same on every device (dropout draws from the device's own generator).
    """
    regression = spec.n_outputs == 1
    train_split = splits["train"]
    torch.manual_seed(derive_seed(seed, "finetune-init", spec.name))  # head init, then dropout
    encoder = Transformer(finetune_config(encoder_cfg, settings))
    encoder.load_state_dict(encoder_state)
    device = resolve_device(device) if isinstance(device, str) else device  # "auto": cuda where visible
    model = SequenceModel(encoder, spec.n_outputs, settings.dropout).to(device)
    optimizer = build_optimizer(
        model, lr=settings.lr, weight_decay=settings.weight_decay, betas=settings.betas, eps=settings.eps
    )
    schedule = build_schedule("cosine", lr=settings.lr, warmup=settings.warmup_fraction, min_lr=0.0)
    n = len(train_split.labels)
    per_epoch = max(1, n // settings.batch_size)  # drop the last partial batch
    total = per_epoch * settings.epochs
    order_gen = generator(seed, "finetune-order", spec.name)
    params = [p for g in optimizer.param_groups for p in g["params"]]
    started, step, diverged, last = time.perf_counter(), 0, False, float("nan")
    model.train()
    for _ in range(settings.epochs):
        order = torch.randperm(n, generator=order_gen)
        for b in range(per_epoch):
            for group in optimizer.param_groups:
                group["lr"] = settings.lr * schedule(step / total) * group["lr_multiplier"]
            loss = _loss(model, train_split, order[b * settings.batch_size : (b + 1) * settings.batch_size], regression)
            if not torch.isfinite(loss):
                diverged = True
                break
            loss.backward()
            if settings.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(params, settings.grad_clip)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            last = loss.item()
            step += 1
        if diverged:
            break
    seconds = time.perf_counter() - started
    scores = {}
    for column, split in spec.evals:
        if diverged:
            scores[column] = float("nan")
            continue
        predictions = predict(model, splits[split], settings.eval_batch_size, regression)
        if not np.all(np.isfinite(predictions.astype(float))):
            diverged = True
            scores[column] = float("nan")
            continue
        scores[column] = metrics.score(spec.metric, predictions, splits[split].labels.numpy())
    return {"scores": scores, "diverged": diverged, "steps": step, "seconds": seconds, "final_train_loss": last}


# -- summaries -----------------------------------------------------------------------------------


def glue_average(scores, columns: list[str]) -> float:
    """Mean of the task columns (MNLI m and mm count as two, as in the paper's Table 2 average);
    NaN if any column is NaN."""
    values = [float(scores[c]) for c in columns]
    return float(np.mean(values)) if all(np.isfinite(values)) else float("nan")
