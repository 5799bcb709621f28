"""Compare the results/ trees of a local run and a SLURM run of the same DAG.

    python tests/cluster/compare_results.py LOCAL/results SLURM/results

The runs must agree on what they computed; wall-clock timings may differ. Decided before running:
  1. the same set of files (benchmarks/ and logs/ excepted: they hold timings and process output);
  2. every model file (*.safetensors) holds identical tensors (names, dtypes, every value) and the
     same metadata: training is seeded and deterministic. Compared by content, not bytes, because
     safetensors writes the metadata entries of its header in an order that varies between processes;
  3. every CSV equal value for value, except columns that record time (names containing
     second, time, throughput, per_s, wall, elapsed, speed) — compared exactly, no tolerance.
     In claims.csv files, rows whose claim id names a timing (speed, throughput, latency) are left
     out too: their measured value is a wall-clock speedup. (Added after the first comparison of
     sixteen_heads showed its two inference-speed claims differ between runs; listed in the output);
  4. every JSON and JSON-lines file (run.json, metrics.jsonl, ...) equal after removing keys that
     record time (same pattern), except checkpoint.json, whose SHA-256 and byte offsets describe
     files that legitimately differ (timings in metrics.jsonl, safetensors header order);
  5. everything else (figures, notebooks, markdown) is compared byte for byte and reported;
     differences there are listed but do not fail the check, since a figure or notebook that shows a
     timing, or records its own execution time, differs between any two runs.
Exit 0 when 1-4 hold, 1 otherwise. Prints one line per differing file.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pandas as pd

SKIP_DIRS = {"benchmarks", "logs"}
TIME_COLUMN = re.compile(r"second|time|throughput|per_s|wall|elapsed|speed", re.IGNORECASE)
TIMING_CLAIM = re.compile(r"speed|throughput|latency", re.IGNORECASE)


def files(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and not (set(rel.parts[:-1]) & SKIP_DIRS):
            out[rel.as_posix()] = path
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def json_without_time(path: Path) -> list:
    """The JSON documents of a .json or .jsonl file with every time-recording key removed."""
    import json

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not TIME_COLUMN.search(k)}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    text = path.read_text()
    docs = [json.loads(line) for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" else [json.loads(text)]
    return [strip(d) for d in docs]


def weights_difference(a: Path, b: Path) -> str | None:
    """None when two safetensors files hold the same tensors and metadata, else a short description."""
    import torch
    from safetensors import safe_open

    with safe_open(a, "pt") as left, safe_open(b, "pt") as right:
        if left.metadata() != right.metadata():
            return f"metadata {left.metadata()} vs {right.metadata()}"
        if set(left.keys()) != set(right.keys()):
            return f"tensor names differ: {sorted(set(left.keys()) ^ set(right.keys()))[:5]}"
        for key in left.keys():
            x, y = left.get_tensor(key), right.get_tensor(key)
            if x.dtype != y.dtype or x.shape != y.shape or not torch.equal(x, y):
                return f"tensor {key} differs"
    return None


def csv_difference(a: Path, b: Path) -> str | None:
    """None when the CSVs agree outside time columns, else a short description."""
    left, right = pd.read_csv(a), pd.read_csv(b)
    if list(left.columns) != list(right.columns):
        return f"columns differ: {list(left.columns)} vs {list(right.columns)}"
    if len(left) != len(right):
        return f"{len(left)} vs {len(right)} rows"
    keep = [c for c in left.columns if not TIME_COLUMN.search(str(c))]
    if a.name == "claims.csv" and "claim" in left.columns:
        timing = left["claim"].astype(str).str.contains(TIMING_CLAIM)
        left, right = left[~timing], right[~timing]
    differing = [c for c in keep if not left[c].equals(right[c])]
    if differing:
        return f"values differ in columns {differing}"
    return None


def main(local_root: str, slurm_root: str) -> int:
    local, slurm = files(Path(local_root)), files(Path(slurm_root))
    failures, notes = [], []
    for name in sorted(set(local) ^ set(slurm)):
        failures.append(f"only in {'local' if name in local else 'SLURM'} run: {name}")
    same = 0
    for name in sorted(set(local) & set(slurm)):
        a, b = local[name], slurm[name]
        if digest(a) == digest(b):
            same += 1
            continue
        if name.endswith(".safetensors"):
            problem = weights_difference(a, b)
            if problem:
                failures.append(f"model weights differ: {name}: {problem}")
            else:
                notes.append(f"{name}: same tensors and metadata (header order differs)")
        elif name.endswith((".json", ".jsonl")) and Path(name).name != "checkpoint.json":
            if json_without_time(a) != json_without_time(b):
                failures.append(f"{name}: values differ outside time fields")
            else:
                notes.append(f"{name}: differs only in time fields")
        elif name.endswith(".csv"):
            problem = csv_difference(a, b)
            if problem:
                failures.append(f"{name}: {problem}")
            else:
                notes.append(f"{name}: differs only in time columns or timing claims")
        else:
            notes.append(f"{name}: bytes differ (not a model or CSV file)")
    print(f"{len(local)} files in the local run, {len(slurm)} in the SLURM run; {same} byte-identical")
    for line in notes:
        print(f"  note: {line}")
    for line in failures:
        print(f"  FAIL: {line}")
    print("result:", "outputs agree" if not failures else f"{len(failures)} difference(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
