"""Training sweeps behind the heads-versus-head-dimension and saturation experiments, as tidy tables.

`sweep_heads`: for one sequence stream and one position kind, train a `ShallowAttentionModel` for
each head count H at a fixed attention width D = H·d_h, all on the same data stream (the batches of
a seed depend only on (seed, step)) and from inits seeded by the same seed. One row per H.

`fit_low_rank_students`: for a bounded-logit teacher head, train a `LowRankHead` of each query/key
dimension r for each number of keys L, and evaluate beside it the training-free truncated-SVD
student on the same held-out set. One row per (L, r).

Each model is trained by the project's trainer in its own run directory (metrics.jsonl, run.json,
final weights), so a run can be inspected or resumed like any other.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import torch

from repro.data.streams import SequenceStream, TeacherAttention
from repro.models.shallow import (
    LowRankHead,
    ShallowAttentionModel,
    ShallowConfig,
    attention_parameters,
)
from repro.training import TrainConfig, evaluate, train
from repro.training.seeding import derive_seed
from repro.training.stream_tasks import SequenceStreamTask, TeacherAttentionTask


def _train(model: torch.nn.Module, task, config: TrainConfig, run_dir: Path):
    """Train (resuming a finished or interrupted run of the same configuration); a run directory
    left by a different configuration is moved aside into previous-<k>/ and trained afresh."""
    result = train(model, task, config, run_dir, move_stale=True, progress=False)
    model.cpu()  # trained on config.device; the measurements that follow run on the CPU
    return result


def _causal_logit_std(model: ShallowAttentionModel, inputs: torch.Tensor) -> float:
    """Mean over heads of the std of the content logits on and below the diagonal (catalog P4)."""
    logits = model.attention_logits(inputs)  # [B, H, T, T]
    T = logits.shape[-1]
    keep = torch.ones(T, T, dtype=torch.bool).tril()
    per_head = logits[..., keep].transpose(0, 1).reshape(logits.shape[1], -1).std(dim=1)  # [H]
    return float(per_head.mean())


def sweep_heads(
    stream: SequenceStream,
    *,
    position: str,
    head_counts,
    budget: int,
    d_model: int,
    d_ff: int,
    seq_len: int,
    train_config: dict,
    seed: int,
    eval_sequences: int,
    runs_dir: str | Path,
    threads: int = 1,
) -> pd.DataFrame:
    """Train one model per head count (module docstring); returns one row per H.

    Columns: heads, head_dim, budget, position, seed, n_parameters, attention_parameters, steps,
    train_seconds, eval_loss (the training loss on the held-out set: cross-entropy, or normalised
    MSE), metric and metric_name (accuracy, or normalised MSE), logit_std ("learned" only) and
    slope_min / slope_max ("alibi" only).
    """
    task = SequenceStreamTask(stream, seq_len, eval_sequences, eval_seed=derive_seed(seed, "eval"))
    config = TrainConfig(**dict(train_config, seed=int(seed), threads=int(threads)))
    rows = []
    for heads in head_counts:
        heads = int(heads)
        cfg = ShallowConfig.for_stream(
            stream, n_heads=heads, budget=budget, d_model=d_model, d_ff=d_ff, seq_len=seq_len, position=position
        )
        torch.manual_seed(derive_seed(seed, "init"))
        model = ShallowAttentionModel(cfg)
        result = _train(model, task, config, Path(runs_dir) / f"h{heads:03d}")
        model.eval()
        row = {
            "heads": heads,
            "head_dim": budget // heads,
            "budget": budget,
            "position": position,
            "seed": int(seed),
            "n_parameters": sum(p.numel() for p in model.parameters()),
            "attention_parameters": attention_parameters(model),
            "steps": result.step,
            "train_seconds": result.seconds,
            "eval_loss": result.eval_loss,
            "metric": task.metric(model),
            "metric_name": "accuracy" if task.kind == "classification" else "normalised_mse",
            "logit_std": math.nan,
            "slope_min": math.nan,
            "slope_max": math.nan,
        }
        if position == "learned":
            row["logit_std"] = _causal_logit_std(model, task.eval_set["inputs"][:64])
        else:
            slopes = model.attn.slopes.detach()
            row["slope_min"], row["slope_max"] = float(slopes.min()), float(slopes.max())
        rows.append(row)
    return pd.DataFrame(rows)


def fit_low_rank_students(
    teacher: TeacherAttention,
    *,
    lengths,
    ranks,
    queries_per_set: int,
    eval_sets: int,
    train_config: dict,
    seed: int,
    runs_dir: str | Path,
    student_init: str = "random",
    threads: int = 1,
) -> pd.DataFrame:
    """Train one student per (L, r) against `teacher` (module docstring); one row per (L, r).

    A student starts from seeded random factors (`student_init="random"`) or from the truncated-SVD
    student of its rank (`"svd"`), so that training can only be judged by whether it moves below that.
    The start is not part of a run's identity (which holds shapes, not values), so SVD-started runs
    get run directories of their own (`r004-svd`).

    Columns: length, rank, seed, steps, train_seconds, excess_mse (E‖o′ − o‖² of the trained
    student on the held-out set; the teacher is realisable at r = d, so this is the excess error),
    svd_mse (the same for the truncated-SVD student, untrained), target_power (E‖o‖²), both
    errors divided by target_power (normalised_mse, svd_normalised_mse: catalog P6), and
    max_abs_logit (the largest |z| of the teacher on the held-out set, against its bound Λ).
    """
    if student_init not in ("random", "svd"):
        raise ValueError(f"student_init={student_init!r}; choose random or svd")
    config = TrainConfig(**dict(train_config, seed=int(seed), threads=int(threads)))
    suffix = "" if student_init == "random" else f"-{student_init}"
    rows = []
    for length in lengths:
        task = TeacherAttentionTask(
            teacher, int(length), queries_per_set, eval_sets, eval_seed=derive_seed(seed, "eval")
        )
        held = task.eval_set
        max_abs_logit = float(teacher.logits(held["queries"], held["keys"]).abs().max())
        for rank in ranks:
            rank = int(rank)
            if student_init == "svd":
                student = LowRankHead.from_bilinear(teacher.bilinear, rank)
            else:
                torch.manual_seed(derive_seed(seed, "student-init", rank))
                student = LowRankHead(teacher.dim, rank)
            result = _train(student, task, config, Path(runs_dir) / f"L{int(length):05d}" / f"r{rank:03d}{suffix}")
            svd_mse = evaluate(LowRankHead.from_bilinear(teacher.bilinear, rank), task)
            rows.append(
                {
                    "length": int(length),
                    "rank": rank,
                    "seed": int(seed),
                    "steps": result.step,
                    "train_seconds": result.seconds,
                    "excess_mse": result.eval_loss,
                    "svd_mse": svd_mse,
                    "target_power": task.target_power,
                    "normalised_mse": result.eval_loss / task.target_power,
                    "svd_normalised_mse": svd_mse / task.target_power,
                    "max_abs_logit": max_abs_logit,
                }
            )
    return pd.DataFrame(rows)


__all__ = ["fit_low_rank_students", "sweep_heads"]
