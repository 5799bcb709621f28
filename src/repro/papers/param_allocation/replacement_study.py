"""Single-head replacement in a trained decoder, as tidy tables (Yu et al. 2025, Figs 4, 6, 9).

`replacement_study` evaluates on a fixed set of held-out chunks, for every layer of `layers`:

  teacher      the trained model (one row);
  ablated      each head of the layer removed by the head mask (the recovery's floor);
  sweep        one head replaced by students of every rank in `ranks`, initialised by truncated
               SVD ("svd") or at random ("random"), zero-shot and after fine-tuning that head alone;
               the head is `head`, or with head = "largest_gap" the head of the layer whose removal
               costs the most loss on selection chunks (training chunks, not the held-out set, so
               that the gap the claims are gated on is not the one it was picked by);
  heatmap      every other head of the layer replaced by an SVD student of rank `heatmap_rank`,
               zero-shot and fine-tuned (with the sweep's row for its head, every head of the layer).

Fine-tuning fits the student to the teacher head's output on cached attention inputs of training
chunks (`repro.papers.param_allocation.head_replacement.HeadDistillationTask`) with the project's trainer, one run
directory per student; every student of a seed sees the same batches. An SVD student of the full head
dimension is the teacher head itself and is not fine-tuned (its "finetuned" row repeats the zero-shot
one with steps = 0). Each evaluation gives the
per-position losses (Fig 6) and their mean, the LM loss (Figs 4, 9). Recovery is computed by the
readers: R = (L_ablated − L_student)/(L_ablated − L_teacher).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from repro.models.transformer import Transformer
from repro.papers.param_allocation.head_replacement import (
    HeadDistillationTask,
    attention_io,
    head_output,
    position_losses,
    random_student,
    svd_student,
    token_losses,
)
from repro.papers.param_allocation.specs import LARGEST_GAP
from repro.training import TrainConfig, evaluate, train

INITS = ("svd", "random")


def _train(model, task, config: TrainConfig, run_dir: Path):
    """Train or resume; a run directory left by another configuration is moved aside and retrained."""
    result = train(model, task, config, run_dir, move_stale=True, progress=False)
    model.cpu()  # trained on config.device; the measurements that follow run on the CPU
    return result


def student_jobs(
    n_heads: int, sweep_heads: dict[int, int], ranks, heatmap_rank: int
) -> list[tuple[int, int, int, str]]:
    """(layer, head, rank, init) of every student: for each layer of `sweep_heads` (layer -> its sweep head),
    the rank sweep of that head with both inits, then an SVD student of `heatmap_rank` for each other head."""
    jobs = []
    for layer, head in sweep_heads.items():
        jobs += [(int(layer), int(head), int(rank), init) for rank in ranks for init in INITS]
        jobs += [(int(layer), h, int(heatmap_rank), "svd") for h in range(n_heads) if h != head]
    return jobs


def choose_sweep_heads(gaps: dict[tuple[int, int], float], layers, head: int | str) -> dict[int, int]:
    """layer -> its sweep head: `head` itself, or (head = LARGEST_GAP) the head with the largest gap in `gaps`
    ((layer, head) -> ablation gap on the selection chunks; ties go to the lower index)."""
    if head != LARGEST_GAP:
        return {int(layer): int(head) for layer in layers}
    chosen = {}
    for layer in layers:
        in_layer = {h: gap for (lay, h), gap in gaps.items() if lay == layer}
        chosen[int(layer)] = max(sorted(in_layer), key=lambda h: in_layer[h])
    return chosen


def replacement_study(
    model: Transformer,
    finetune_tokens: torch.Tensor,  # [N, T] training chunks whose attention inputs the students are fitted on
    eval_tokens: torch.Tensor,  # [M, T] held-out chunks of every LM evaluation
    *,
    layers,
    head: int | str,
    ranks,
    heatmap_rank: int,
    train_config: dict,
    seed: int,
    runs_dir: str | Path,
    threads: int = 1,
    init_std: float = 0.02,
    distill_eval_chunks: int = 16,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the study (module docstring). Returns (summary, positions).

    The selection chunks are the first len(eval_tokens) chunks of `finetune_tokens`.

    summary: one row per evaluation: seed, layer, head, head_dim, rank, init, stage, condition,
      eval_loss, distill_error (held-out normalised MSE of the student against the teacher head; NaN
      for the teacher and ablations), steps, train_seconds, student_parameters, selection_gap (on
      ablation rows: the head's ablation gap on the selection chunks; NaN elsewhere), ablation_gap_se (on
      ablation rows: the standard error of the held-out gap, paired over the evaluation chunks). Sentinels: the
      teacher row has layer = head = −1, rank 0, init and stage "none"; ablations have rank 0, init
      "none", stage "zero_shot".
    positions: per evaluation and position t: the same keys and `loss` (mean over the held-out chunks
      of the loss of predicting token t + 1).
    """
    model.eval()
    for param in model.parameters():
        param.requires_grad_(False)
    config = TrainConfig(**dict(train_config, seed=int(seed), threads=int(threads)))
    n_heads, head_dim = model.cfg.n_heads[0], model.cfg.head_dim[0]
    layers = [int(layer) for layer in layers]
    for layer in layers:
        if model.cfg.n_heads[layer] != n_heads or model.cfg.head_dim[layer] != head_dim:
            raise ValueError("replacement_study expects the same heads and head dim in every studied layer")
    summary, positions = [], []

    def record(keys: dict, losses: torch.Tensor, **extra) -> None:
        row = dict(seed=int(seed), head_dim=head_dim, **keys, eval_loss=float(losses.mean()))
        row.update(distill_error=float("nan"), steps=0, train_seconds=0.0, student_parameters=0)
        row.update(selection_gap=float("nan"), ablation_gap_se=float("nan"))
        row.update(extra)
        summary.append(row)
        positions.extend(dict(seed=int(seed), **keys, position=t, loss=float(v)) for t, v in enumerate(losses))

    teacher_tokens = token_losses(model, eval_tokens)  # [M, T-1]
    record(dict(layer=-1, head=-1, rank=0, init="none", stage="none", condition="teacher"), teacher_tokens.mean(0))
    train_io = attention_io(model, finetune_tokens, layers)
    held_io = attention_io(model, eval_tokens[:distill_eval_chunks], layers)
    selection = finetune_tokens[: len(eval_tokens)]
    selection_base = float(position_losses(model, selection).mean())
    gaps = {}
    for layer in layers:
        for h in range(n_heads):
            gaps[layer, h] = float(position_losses(model, selection, layer, h).mean()) - selection_base
            keys = dict(layer=layer, head=h, rank=0, init="none", stage="zero_shot", condition="ablated")
            ablated = token_losses(model, eval_tokens, layer, h)
            chunk_gaps = (ablated - teacher_tokens).mean(1)  # paired over the held-out chunks
            gap_se = float(chunk_gaps.std() / len(chunk_gaps) ** 0.5) if len(chunk_gaps) > 1 else float("inf")
            record(keys, ablated.mean(0), selection_gap=gaps[layer, h], ablation_gap_se=gap_se)

    sweep_heads = choose_sweep_heads(gaps, layers, head)
    for layer, h, rank, init in student_jobs(n_heads, sweep_heads, ranks, heatmap_rank):
        attn = model.blocks[layer].attn
        task = HeadDistillationTask(
            train_io[layer][0],
            head_output(attn, h, train_io[layer][1]),
            held_io[layer][0],
            head_output(attn, h, held_io[layer][1]),
        )
        if init == "svd":
            student = svd_student(attn, h, rank)
        else:
            student = random_student(model.cfg.d_model, rank, init_std, seed, layer, h, rank)
        keys = dict(layer=layer, head=h, rank=rank, init=init, condition="student")
        size = student.parameter_count()
        record(
            dict(keys, stage="zero_shot"),
            position_losses(model, eval_tokens, layer, h, student),
            distill_error=evaluate(student, task),
            student_parameters=size,
        )
        if init == "svd" and rank >= head_dim:
            # The student is the teacher head (up to rounding): Adam would only turn rounding-level gradients
            # into lr-sized steps, so it is not fine-tuned and its zero-shot evaluation stands for both stages.
            summary.append(dict(summary[-1], stage="finetuned"))
            positions.extend(dict(row, stage="finetuned") for row in positions[-(eval_tokens.shape[1] - 1) :])
            continue
        started = time.perf_counter()
        result = _train(student, task, config, Path(runs_dir) / f"layer{layer}_head{h}_{init}_r{rank:03d}")
        seconds = time.perf_counter() - started
        student.eval()
        record(
            dict(keys, stage="finetuned"),
            position_losses(model, eval_tokens, layer, h, student),
            distill_error=result.eval_loss,
            steps=result.step,
            train_seconds=seconds,
            student_parameters=size,
        )
    return pd.DataFrame(summary), pd.DataFrame(positions)


__all__ = ["INITS", "LARGEST_GAP", "choose_sweep_heads", "replacement_study", "student_jobs"]
