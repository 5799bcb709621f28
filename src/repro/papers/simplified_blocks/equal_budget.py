"""Losses at an equal budget of steps or seconds, read off logged training curves.

The paper compares blocks at equal wall-clock time (Figs 5, 7, 8): a faster block does more steps
in the same time. Our runs have a fixed number of steps, so the loss of a run at time t is read
off its own curve: linearly interpolated between the evaluations around t, or, for a run that
finished before t, its last evaluation (it would only have improved with the remaining time, so
this is the conservative reading for the faster block).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def loss_at(
    curves: pd.DataFrame, budget_by_seed: dict[int, float], x: str = "seconds", split: str = "eval"
) -> pd.DataFrame:
    """Per (variant, seed): the `split` loss at `x` = budget_by_seed[seed].

    Columns: variant, seed, budget, loss, finished_before (the run ended before the budget).
    Raises ValueError naming the seed if a run's seed has no budget.
    """
    rows = []
    eval_rows = curves[curves["split"] == split]
    for (variant, seed), run in eval_rows.groupby(["variant", "seed"], sort=True):
        if seed not in budget_by_seed:
            raise ValueError(f"no budget for seed {seed} (budgets given for seeds {sorted(budget_by_seed)})")
        budget = float(budget_by_seed[seed])
        run = run.sort_values(x)
        xs, losses = run[x].to_numpy(float), run["loss"].to_numpy(float)
        finished = budget >= xs[-1]
        loss = losses[-1] if finished else float(np.interp(budget, xs, losses))
        rows.append(
            dict(variant=variant, seed=int(seed), budget=budget, loss=float(loss), finished_before=bool(finished))
        )
    return pd.DataFrame(rows, columns=["variant", "seed", "budget", "loss", "finished_before"])


def total(curves: pd.DataFrame, variant: str, x: str = "seconds") -> dict[int, float]:
    """{seed: the largest logged `x`} of one variant's runs (e.g. its total training seconds)."""
    rows = curves[curves["variant"] == variant]
    if rows.empty:
        raise ValueError(f"variant {variant!r} has no rows; present: {sorted(set(curves['variant']))}")
    return {int(seed): float(v) for seed, v in rows.groupby("seed")[x].max().items()}


def benchmarked_seconds(curves: pd.DataFrame, timings: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """The curves with `seconds` replaced by the time each run's tokens take at its block's benchmarked speed.

    A run's own seconds time the machine's other jobs too, so an equal-time comparison reads them only
    through the interleaved timing (`repro.analysis.throughput`): seconds = tokens ÷ the median over
    rounds of the training tokens/s of the timed model with the run's block, norm and parameter count
    (`timings`: throughput_timings.csv; `models`: throughput_models.csv). The timing uses the training
    runs' batch and sequence length (throughput settings), so the tokens/s carry over.
    Raises ValueError naming the run when no timed model matches it.
    """
    speed = timings[timings["mode"] == "train"].groupby("variant")["tokens_per_s"].median()
    timed = models.set_index(["block", "norm", "parameters"])["variant"]
    out = curves.copy()
    for (variant, block, norm, parameters), rows in curves.groupby(["variant", "block", "norm", "parameters"]):
        key = (block, norm, int(parameters))
        if key not in timed.index:
            raise ValueError(
                f"run {variant!r} (block {block}, norm {norm}, {int(parameters)} parameters) has no timed model of "
                f"the same shape; timed: {sorted(models['variant'])}. Add its block to simplified_blocks.blocks."
            )
        match = timed.loc[[key]].iloc[0]
        out.loc[rows.index, "seconds"] = rows["tokens"].to_numpy(float) / float(speed[match])
    return out
