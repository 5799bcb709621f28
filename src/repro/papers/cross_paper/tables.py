"""The per-figure tables of the cross-paper studies, stacked from every run's evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def stack_runs(run_dirs: Sequence[str | Path], name: str) -> pd.DataFrame:
    """File `name` of every evaluated run, one table (each file carries its own variant and seed columns),
    sorted by variant and seed. FileNotFoundError names the first run without it."""
    frames = []
    for run in run_dirs:
        path = Path(run) / name
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing")
        frames.append(pd.read_csv(path))
    table = pd.concat(frames, ignore_index=True)
    return table.sort_values(["variant", "seed"], kind="stable").reset_index(drop=True)


__all__ = ["stack_runs"]
