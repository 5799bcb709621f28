"""The final held-out evaluation of a language model: per-chunk losses and their sampling error.

A run's loss curve is evaluated on a small periodic set; its final weights are evaluated once on a
larger held-out set drawn across the whole valid split (`repro.data.lm_tokens.heldout_draw`), and the
result is written to ``heldout.json`` in the run directory (written whole, then moved into place):

  loss            mean loss over every target of the set (nats/token): Σ loss sums / Σ targets
  n_chunks, n_targets, seq_len
  bootstrap_se    standard error of `loss` from resampling the chunks with replacement
                  (`BOOTSTRAP_RESAMPLES` resamples, seed `BOOTSTRAP_SEED`); it ignores the
                  stratification of the draw, which can only make it larger than the true error
  chunk_index     [n_chunks] each chunk's index among the valid split's chunks (file order)
  chunk_loss      [n_chunks] each chunk's mean loss over its targets
  chunk_targets   [n_chunks] each chunk's number of targets (T - 1 for a causal LM, the masked
                  positions for a masked LM)

Two runs evaluated on the same chunks (same chunk length and settings) can be compared chunk by chunk:
`paired_difference` bootstraps the difference of their means over the shared chunks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from repro.training.checkpoint import atomic_write_text
from repro.training.config import resolve_device

HELDOUT_FILE = "heldout.json"
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


@torch.no_grad()
def chunk_losses(model: nn.Module, task, device: torch.device | str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """(loss sums [M], target counts [M]) of every example of `task.eval_batches()`, in order, in eval
    mode; the task must provide `row_losses` (language-model tasks). The model's mode is restored."""
    if not hasattr(task, "row_losses"):
        raise TypeError(f"{type(task).__name__} has no row_losses: a held-out evaluation needs a language-model task")
    device = resolve_device(device)
    was_training = model.training
    model.eval()
    sums, counts = [], []
    try:
        for batch in task.eval_batches():
            batch = {k: v.to(device) for k, v in batch.items()}
            row_sum, row_count = task.row_losses(model, batch)
            sums.append(row_sum.cpu().numpy())
            counts.append(row_count.cpu().numpy())
    finally:
        model.train(was_training)
    if not sums:
        raise ValueError(f"{type(task).__name__}.eval_batches() yielded no examples")
    return np.concatenate(sums).astype(np.float64), np.concatenate(counts).astype(np.int64)


def _check_pairs(sums: np.ndarray, counts: np.ndarray) -> None:
    if sums.shape != counts.shape or sums.ndim != 1 or len(sums) == 0:
        raise ValueError(f"loss sums {sums.shape} and target counts {counts.shape} must be equal, non-empty 1-D")
    if counts.sum() <= 0:
        raise ValueError("the chunks have no target")


def _resample(n: int, resamples: int, seed: int) -> np.ndarray:
    """[resamples, n] chunk positions drawn with replacement."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def bootstrap_se(
    sums: np.ndarray, counts: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> float:
    """Standard error of Σ sums / Σ counts when the chunks are resampled with replacement."""
    sums, counts = np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64)
    _check_pairs(sums, counts)
    picks = _resample(len(sums), resamples, seed)
    means = sums[picks].sum(axis=1) / np.maximum(counts[picks].sum(axis=1), 1.0)
    return float(means.std(ddof=1)) if resamples > 1 else 0.0


def paired_difference(
    a: dict, b: dict, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> dict:
    """Mean loss of `a` minus that of `b` (two `heldout.json` contents of the same chunks), with the
    percentile bootstrap interval at `level` from resampling the chunks (the same resample for both runs,
    so that what the chunks share cancels): {difference, low, high, half_width, n_chunks}. ValueError if
    the two were evaluated on different chunks."""
    if list(a["chunk_index"]) != list(b["chunk_index"]) or a.get("seq_len") != b.get("seq_len"):
        raise ValueError("the two evaluations are of different chunks: a paired difference needs the same chunks")
    picks = _resample(len(a["chunk_index"]), resamples, seed)

    def means(run: dict) -> tuple[float, np.ndarray]:
        counts = np.asarray(run["chunk_targets"], dtype=np.float64)
        sums = np.asarray(run["chunk_loss"], dtype=np.float64) * counts
        return float(sums.sum() / counts.sum()), sums[picks].sum(axis=1) / counts[picks].sum(axis=1)

    (mean_a, boot_a), (mean_b, boot_b) = means(a), means(b)
    low, high = np.quantile(boot_a - boot_b, [(1 - level) / 2, (1 + level) / 2])
    return {
        "difference": mean_a - mean_b,
        "low": float(low),
        "high": float(high),
        "half_width": float(high - low) / 2,
        "n_chunks": len(a["chunk_index"]),
    }


def heldout_summary(sums: np.ndarray, counts: np.ndarray, chunk_index, seq_len: int, **about) -> dict:
    """The content of ``heldout.json`` (module docstring) from per-chunk loss sums and target counts;
    `about` adds descriptive fields (what the set is)."""
    sums, counts = np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.int64)
    _check_pairs(sums, counts)
    chunk_index = [int(i) for i in chunk_index]
    if len(chunk_index) != len(sums):
        raise ValueError(f"{len(chunk_index)} chunk indices for {len(sums)} chunks")
    return {
        "loss": float(sums.sum() / counts.sum()),
        "n_chunks": len(sums),
        "n_targets": int(counts.sum()),
        "seq_len": int(seq_len),
        "bootstrap_se": bootstrap_se(sums, counts),
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED, "unit": "chunk"},
        **about,
        "chunk_index": chunk_index,
        "chunk_loss": [float(s / c) if c else float("nan") for s, c in zip(sums, counts)],
        "chunk_targets": [int(c) for c in counts],
    }


def evaluate_heldout(model: nn.Module, task, chunk_index, run_dir: str | Path, device="cpu", **about) -> dict:
    """Evaluate `model` on the held-out examples of `task` (its eval set: the chunks `chunk_index` of the
    valid split) and write ``heldout.json`` into `run_dir`, whole or not at all (a job killed while
    evaluating leaves no file, and its rerun evaluates again). Returns the summary."""
    sums, counts = chunk_losses(model, task, device)
    seq_len = int(next(iter(task.eval_batches()))["input_ids"].shape[1])
    summary = heldout_summary(sums, counts, chunk_index, seq_len, **about)
    atomic_write_text(Path(run_dir) / HELDOUT_FILE, json.dumps(summary) + "\n")
    return summary


def read_heldout(run_dir: str | Path) -> dict | None:
    """The ``heldout.json`` of a run directory, or None where the run has none (a run of an older layout)."""
    path = Path(run_dir) / HELDOUT_FILE
    return json.loads(path.read_text()) if os.path.exists(path) else None
