"""Tidy CSVs, the data files every analysis step writes and every notebook and claim reads.

`write_csv` is the one writer: no index, '\\n' line ends, floats at a fixed number of significant
digits (so the bytes depend on the values only), the folder made if missing, and the file written
whole under a temporary name, then moved into place (a killed job leaves no half-written CSV for
Snakemake to take as done). `concat_csvs` is the one gather: CSVs with the same columns, stacked in
the order given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from repro.data.errors import writing


def write_csv(frame: pd.DataFrame, path: str | Path, *, float_format: str | None = "%.6g", report: bool = True) -> int:
    """Write `frame` to `path` (see the module docstring) and, if `report`, say so on stderr (a job's
    log). Returns 0, so that a command can end with `return write_csv(...)`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    with writing(path):
        frame.to_csv(tmp, index=False, float_format=float_format, lineterminator="\n")
        os.replace(tmp, path)
    if report:
        print(f"wrote {len(frame)} rows to {path}", file=sys.stderr)
    return 0


def concat_csvs(paths: Iterable[str | Path]) -> pd.DataFrame:
    """The CSVs at `paths` stacked in that order (one header), with a fresh index."""
    frames = [pd.read_csv(path) for path in paths]
    if not frames:
        raise ValueError("no CSV files to concatenate")
    return pd.concat(frames, ignore_index=True)
