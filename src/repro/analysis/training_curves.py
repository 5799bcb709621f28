"""Loss curves of training runs as one tidy table.

One row per (run, logged step, split): variant, block, norm, seed, step, tokens,
seconds (cumulative training wall time), split ("train" or "eval", the periodic held-out
set), loss, and the run's trainable parameter count; and one row of split "heldout" at
the last step of a run that has a heldout.json: its final weights' loss on the larger
held-out set (repro.training.heldout). Figures of loss against step or time, and the
claims about final losses, all read this table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

#: The split of a run's final held-out evaluation (one row per run, at its last step).
HELDOUT = "heldout"
COLUMNS = ["variant", "block", "norm", "seed", "step", "tokens", "seconds", "split", "loss", "parameters"]


def run_curves(run_dir: str | Path) -> pd.DataFrame:
    # Imported here so that notebooks and claims reading the table do not load torch.
    from repro.models import Transformer, count_parameters
    from repro.runs import read_metrics, read_model_config
    from repro.training.heldout import read_heldout

    run_dir = Path(run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    cfg = read_model_config(run_dir)
    variant, seed = run_dir.parent.name, int(run["config"]["seed"])
    parameters = count_parameters(Transformer(cfg))
    metrics = read_metrics(run_dir)
    logged = [(row, split, row.get(f"{split}_loss")) for row in metrics for split in ("train", "eval")]
    heldout = read_heldout(run_dir)
    if heldout is not None and metrics:
        logged.append((metrics[-1], HELDOUT, heldout["loss"]))
    rows = [
        dict(
            variant=variant,
            block=cfg.block,
            norm=cfg.norm,
            seed=seed,
            step=row["step"],
            tokens=row["tokens"],
            seconds=row["seconds"],
            split=split,
            loss=loss,
            parameters=parameters,
        )
        for row, split, loss in logged
        if loss is not None
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def collect_curves(run_dirs: list[str | Path]) -> pd.DataFrame:
    frames = [run_curves(d) for d in run_dirs]
    df = pd.concat(frames, ignore_index=True)
    return df.sort_values(["variant", "seed", "split", "step"], kind="stable").reset_index(drop=True)


def final_losses(curves: pd.DataFrame, split: str = "eval", last: int = 3) -> pd.DataFrame:
    """Per (variant, seed): the mean of the last `last` logged losses of `split` (the catalog's L_x = mean
    of the last 3 evaluations); for split "eval", a run's final held-out loss (its "heldout" row) instead
    where it has one, which is measured on many more chunks than the periodic evaluations."""
    rows = curves[curves["split"] == split].sort_values("step")
    tail = rows.groupby(["variant", "seed"], sort=True).tail(last)
    final = tail.groupby(["variant", "seed"], sort=True)["loss"].mean()
    if split == "eval":
        heldout = curves[curves["split"] == HELDOUT].groupby(["variant", "seed"], sort=True)["loss"].last()
        final = heldout.combine_first(final)
    return final.rename("final_loss").reset_index()


def seed_spread(final: pd.DataFrame, by: list[str], names: list[str]) -> pd.DataFrame:
    """Final losses (`final_losses` rows with the columns `by` joined) summarised per setting: the
    mean, minimum and maximum over seeds and the seed count, under the column names `names` (the
    `by` columns' names, then the four statistics')."""
    table = final.groupby(by)["final_loss"].agg(["mean", "min", "max", "count"]).reset_index()
    table.columns = names
    return table


def mean_curve(curves: pd.DataFrame, variant: str, split: str = "eval") -> pd.DataFrame:
    """One variant's curve averaged over seeds at each logged step.

    Index: step. Columns: seconds (mean cumulative training seconds), loss (mean), low, high
    (minimum and maximum over seeds). Raises ValueError naming the variant if it has no rows."""
    rows = curves[(curves["variant"] == variant) & (curves["split"] == split)]
    if rows.empty:
        raise ValueError(f"variant {variant!r} has no {split} rows; present: {sorted(set(curves['variant']))}")
    by_step = rows.groupby("step")
    return pd.DataFrame(
        {
            "seconds": by_step["seconds"].mean(),
            "loss": by_step["loss"].mean(),
            "low": by_step["loss"].min(),
            "high": by_step["loss"].max(),
        }
    )


def curves_by_figure(runs_by_figure: dict[str, list[str | Path]]) -> dict[str, pd.DataFrame]:
    """{figure: its runs' curves, as collect_curves}, reading every run once however many figures
    share it (one process for all figures instead of one per figure)."""
    cache: dict[str, pd.DataFrame] = {}
    tables = {}
    for figure, run_dirs in runs_by_figure.items():
        if not run_dirs:
            raise ValueError(f"figure {figure!r} has no runs")
        frames = [cache.setdefault(str(d), run_curves(d)) for d in run_dirs]
        df = pd.concat(frames, ignore_index=True)
        tables[figure] = df.sort_values(["variant", "seed", "split", "step"], kind="stable").reset_index(drop=True)
    return tables
