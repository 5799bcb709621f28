"""Trajectories of the trainable gains of a run (He & Hofmann 2024, Figs 4, 16-22).

A run trained with `log_gains: true` stores, in every row of metrics.jsonl, the value of each
trainable parameter whose name contains "gain". This module turns them into one tidy table, with
the values at initialisation (step 0) taken from a freshly built model of the same configuration
(gains start at constants, so the seed does not matter):

    variant, seed, step, layer, symbol, head, value

Symbols (per layer): alpha_V, beta_V, alpha_P, beta_P (Eq. 6 reparameterisation of W^V, W^P),
alpha, beta, gamma (per head, shaped attention αI + βA − γC), alpha_SA, beta_SA, alpha_FF,
beta_FF (the block's skip and branch weights). `ratios` gives β_V/α_V and β_P/α_P per layer,
the quantities the paper plots.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

COLUMNS = ["variant", "seed", "step", "layer", "symbol", "head", "value"]

_SYMBOLS = {
    "attn.value.skip_gain": "alpha_V",
    "attn.value.resid_gain": "beta_V",
    "attn.proj.skip_gain": "alpha_P",
    "attn.proj.resid_gain": "beta_P",
    "attn.mat_skip_gain": "alpha",
    "attn.mat_resid_gain": "beta",
    "attn.centre_gain": "gamma",
    "attn_skip.gain": "alpha_SA",
    "attn_resid.gain": "beta_SA",
    "mlp_skip.gain": "alpha_FF",
    "mlp_resid.gain": "beta_FF",
}
_NAME = re.compile(r"^blocks\.(\d+)\.(.+)$")


def parse_gain_name(name: str) -> tuple[int, str]:
    """'blocks.3.attn.value.resid_gain' -> (3, 'beta_V'); ValueError for names of no known gain."""
    match = _NAME.match(name)
    if match is None or match.group(2) not in _SYMBOLS:
        raise ValueError(
            f"{name!r} is not a known gain of the model family (known: blocks.<l>.{{{', '.join(_SYMBOLS)}}})"
        )
    return int(match.group(1)), _SYMBOLS[match.group(2)]


def _rows(variant: str, seed: int, step: int, gains: dict[str, list[float]]) -> list[dict]:
    rows = []
    for name, values in gains.items():
        layer, symbol = parse_gain_name(name)
        per_head = len(values) > 1
        for head, value in enumerate(values):
            rows.append(
                dict(
                    variant=variant,
                    seed=seed,
                    step=step,
                    layer=layer,
                    symbol=symbol,
                    head=head if per_head else -1,
                    value=float(value),
                )
            )
    return rows


def run_gain_trajectories(run_dir: str | Path) -> pd.DataFrame:
    """The gain table of one run directory (…/<variant>/seed<k>); needs a run with log_gains."""
    # Imported here so that notebooks plotting the table do not load torch.
    from repro.models import Transformer
    from repro.runs import read_metrics, read_model_config
    from repro.training.trainer import gain_values

    run_dir = Path(run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    variant, seed = run_dir.parent.name, int(run["config"]["seed"])
    logged = [row for row in read_metrics(run_dir) if "gains" in row]
    if not logged:
        raise ValueError(f"{run_dir}: metrics.jsonl has no 'gains' entries; train it with log_gains: true")
    rows = _rows(variant, seed, 0, gain_values(Transformer(read_model_config(run_dir))))
    for row in logged:
        rows += _rows(variant, seed, int(row["step"]), row["gains"])
    return pd.DataFrame(rows, columns=COLUMNS)


def collect_gain_trajectories(run_dirs: list[str | Path]) -> pd.DataFrame:
    df = pd.concat([run_gain_trajectories(d) for d in run_dirs], ignore_index=True)
    return df.sort_values(["variant", "seed", "step", "layer", "symbol", "head"], kind="stable").reset_index(drop=True)


def ratios(gains: pd.DataFrame) -> pd.DataFrame:
    """β/α of the reparameterised value and projection matrices per (variant, seed, step, layer):
    columns variant, seed, step, layer, matrix ('V' or 'P'), ratio."""
    frames = []
    keys = ["variant", "seed", "step", "layer"]
    for matrix in ("V", "P"):
        alpha = gains[gains["symbol"] == f"alpha_{matrix}"].set_index(keys)["value"]
        beta = gains[gains["symbol"] == f"beta_{matrix}"].set_index(keys)["value"]
        joined = (beta / alpha).dropna().rename("ratio").reset_index()
        joined["matrix"] = matrix
        frames.append(joined)
    out = pd.concat(frames, ignore_index=True)
    return (
        out[keys[:-1] + ["layer", "matrix", "ratio"]]
        .sort_values(keys + ["matrix"], kind="stable")
        .reset_index(drop=True)
    )


def final(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of each (variant, seed) at its last logged step."""
    last = frame.groupby(["variant", "seed"])["step"].transform("max")
    return frame[frame["step"] == last]


def start_and_final(gains: pd.DataFrame, symbol: str) -> pd.DataFrame:
    """Per layer (1-based): the mean of gain ``symbol`` at step 0, and at each run's last step its mean
    and sample sd over heads and seeds (sd 0 where there is one value)."""
    rows = gains[gains["symbol"] == symbol]
    start = rows[rows["step"] == 0].groupby("layer")["value"].mean()
    end = final(rows).groupby("layer")["value"].agg(["mean", "std"])
    return pd.DataFrame(
        {
            "layer": end.index + 1,
            "init": start.reindex(end.index).values,
            "final (mean)": end["mean"].values,
            "final sd across heads and seeds": end["std"].fillna(0).values,
        }
    )
