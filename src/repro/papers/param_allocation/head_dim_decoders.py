"""Multi-layer decoders with reduced head dimensions across sequence lengths (Yu et al. 2025, Fig 5).

Saturation (Theorem 2) says that a larger head dimension buys less as the sequence grows. The paper
checks that it persists in multi-layer language models (6-layer decoders on 1% of WikiText-103).
`train_head_dim_grid` trains, for one seed, a decoder for every (sequence length L, head dim d_h)
with everything else fixed: the width d_model (W^P maps the H·d_h context back to it), the heads H,
the layers, and the tokens per update (batch = tokens_per_step / L), so that every run sees the
same number of tokens. Each run is trained by the project's trainer in its own run directory
(model.json, metrics.jsonl, run.json); its loss curve is evaluated on `eval_tokens` held-out tokens
cut into chunks of L, and its final weights on `heldout_tokens` (heldout.json in the run directory),
both drawn across the valid split (`repro.data.lm_tokens.heldout_draw`), the same chunks for every
run of a length.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from repro.data.lm_tokens import load_lm_splits
from repro.models import config_from_dict, count_parameters
from repro.papers.param_allocation.specs import grid_spec
from repro.runs import lm_heldout_set, new_run_model, read_metrics
from repro.training import LanguageModelTask, train
from repro.training.heldout import evaluate_heldout


def run_name(length: int, head_dim: int) -> str:
    return f"L{int(length):04d}_dh{int(head_dim):03d}"


def train_head_dim_grid(
    train_tokens: str | Path,
    valid_tokens: str | Path,
    *,
    model: dict,
    train_config: dict,
    head_dims,
    lengths,
    tokens_per_step: int,
    eval_tokens: int,
    heldout_tokens: int,
    vocab_size: int,
    seed: int,
    runs_dir: str | Path,
    threads: int = 1,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train every (L, d_h) for one seed (module docstring). Returns (runs, curves).

    runs: one row per run: seed, length, head_dim, heads, d_model, n_layers, parameters,
      attention_parameters (W^Q, W^K, W^V, W^P of every layer), steps, batch_size, tokens,
      train_seconds, eval_loss (the final weights' loss on the held-out set), heldout_se (its bootstrap
      standard error over chunks), heldout_chunks, periodic_loss (the curve's last point), eval_chunks.
    curves: one row per logged step and split: seed, length, head_dim, step, tokens, split, loss.
    """
    runs, curves = [], []
    for length in lengths:
        length = int(length)
        n_eval, n_heldout = (max(1, int(tokens) // length) for tokens in (eval_tokens, heldout_tokens))
        hint = f"eval_tokens={eval_tokens} and heldout_tokens={heldout_tokens} need {n_eval} and {n_heldout} at this length"
        splits = load_lm_splits(train_tokens, valid_tokens, length, n_eval, n_heldout, hint)
        task = LanguageModelTask(splits.train, splits.periodic)
        heldout = lm_heldout_set(splits, LanguageModelTask(splits.train, splits.heldout), valid_tokens)
        for head_dim in head_dims:
            fields, config = grid_spec(
                model, train_config, length, int(head_dim), tokens_per_step, vocab_size, seed, threads
            )
            cfg = config_from_dict(fields, where=f"head-dim decoder L={length}, d_h={head_dim}")
            run_dir = Path(runs_dir) / run_name(length, head_dim)
            net = new_run_model(run_dir, cfg, seed)
            result = train(net, task, config, run_dir, move_stale=True, progress=False)
            final = evaluate_heldout(net, heldout.task, heldout.chunk_index, run_dir, config.device, **heldout.about)
            attention = sum(p.numel() for block in net.blocks for p in block.attn.parameters())
            keys = {"seed": int(seed), "length": length, "head_dim": int(head_dim)}
            runs.append(
                dict(
                    keys,
                    heads=cfg.n_heads[0],
                    d_model=cfg.d_model,
                    n_layers=cfg.n_layers,
                    parameters=count_parameters(net),
                    attention_parameters=attention,
                    steps=result.step,
                    batch_size=config.batch_size,
                    tokens=result.tokens,
                    train_seconds=result.seconds,
                    eval_loss=final["loss"],
                    heldout_se=final["bootstrap_se"],
                    heldout_chunks=final["n_chunks"],
                    periodic_loss=result.eval_loss,
                    eval_chunks=n_eval,
                )
            )
            for row in read_metrics(run_dir):
                for split in ("train", "eval"):
                    if row.get(f"{split}_loss") is not None:
                        curves.append(
                            dict(keys, step=row["step"], tokens=row["tokens"], split=split, loss=row[f"{split}_loss"])
                        )
    return pd.DataFrame(runs), pd.DataFrame(curves)


__all__ = ["run_name", "train_head_dim_grid"]
