"""Compare the results/ trees of a local run and a SLURM run of the same DAG.

    python tests/cluster/compare_results.py LOCAL/results/smoke SLURM/results/smoke

The runs must agree on what they computed; wall-clock timings may differ. Decided before running:
  1. the same set of files (benchmarks/ and logs/ excepted: they hold timings and process output);
  2. every model file (*.safetensors) holds identical tensors (names, dtypes, every value) and the
     same metadata: training is seeded and deterministic. Compared by content, not bytes: files written
     before repro.training.checkpoint sorted the header's metadata have it in an order that varies
     between processes (files written since are byte-identical);
  3. every CSV equal value for value, except columns that record time (names containing
     second, time, throughput, per_s, wall, elapsed, speed) — compared exactly, no tolerance.
     In claims.csv files, rows whose claim id names a timing (speed, throughput, latency) are left
     out too: their measured value is a wall-clock speedup. (Added after the first comparison of
     sixteen_heads showed its two inference-speed claims differ between runs; listed in the output.)
     Added after the first comparison of the whole smoke DAG: columns of memory use (rss, memory,
     e.g. compute.csv's max_rss_mb) and of rates written "ex/s" count as timings; claims judged at
     equal training time (ids containing in_time: loss at Pre-LN's measured seconds) are timing
     claims; the claims rule also applies to scorecard.csv, which repeats every claims.csv;
  4. every JSON and JSON-lines file (run.json, metrics.jsonl, ...) equal after removing keys that
     record time (same pattern), except checkpoint.json, whose SHA-256 and byte offsets describe
     files that legitimately differ (timings in metrics.jsonl). Lineage
     cards (*.lineage.json) also without their sha256 keys: they index files compared on their
     own here, some of which differ in timings (added after the first whole-DAG comparison); run.json
     files also without `resumed_from`, which says whether the job trained the run or published it
     again from its finished checkpoint (a forced rerun of a job that trains several runs);
  5. everything else (figures, notebooks, markdown) is compared byte for byte and reported;
     differences there are listed but do not fail the check, since a figure or notebook that shows a
     timing, or records its own execution time, differs between any two runs;
  6. outputs of time-budgeted training (simplified_blocks' masked-LM runs make the updates that
     `mlm.train.time_budget_s`, 1 s at smoke scale, buys at each block's step time, timed in the same
     DAG run, so their last step, their weights and everything computed from them differ between any
     two runs, two local ones included) are held
     to their form only: model files the same tensor names, dtypes and shapes, CSVs the same
     columns; their claims (ids mlm_*, glue_*) are left out of claims.csv like the timing claims.
     Decided before the first comparison of the whole smoke DAG had finished, from the config alone,
     with "and the same rows" for CSVs; that comparison showed the rows (one per logged step) and the
     snapshot names (checkpoint-<step>, the step the budget ended at) differ too, so rows are not
     compared and snapshots are matched by name without their step. Item 6 applies only when the
     two trees' step-time tables (simplified_blocks/data/mlm_step_times.csv) differ: runs given the same
     table (simplified_blocks.mlm.step_times_file) make the same updates, and are compared as in 1-5.
  7. with --across-commits (two trees of different commits, as a refactor's before and after), lineage
     cards also without their `code` entry (the commit) and without the source digests among their
     steps' params (`repro.pipeline.code_digest`, quoted 64-hex strings, which change with any edit of
     the code a step runs); the remaining params are compared as a set. Added when a refactor's
     comparison reported every lineage card of the smoke DAG for its commit and digests alone.
Exit 0 when 1-4 and 6 hold, 1 otherwise. Prints one line per differing file.

    python tests/cluster/compare_results.py BEFORE/results/smoke AFTER/results/smoke --across-commits
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pandas as pd

SKIP_DIRS = {"benchmarks", "logs"}
TIME_COLUMN = re.compile(r"second|time|throughput|per_s|/s\b|wall|elapsed|speed|rss|memory", re.IGNORECASE)
TIMING_CLAIM = re.compile(r"speed|throughput|latency|in_time", re.IGNORECASE)
CLAIM_TABLES = {"claims.csv", "scorecard.csv"}
# Files computed from the time-budgeted masked-LM runs, and their claims (item 6 above).
BUDGETED = re.compile(
    r"^simplified_blocks/(mlm_runs/|data/(mlm_curves\.csv|mlm_finetune/|glue_)|(tables|report)/table0[12]\.csv$)"
)
BUDGETED_CLAIM = re.compile(r"^(mlm_|glue_)")
SNAPSHOT_STEP = re.compile(r"checkpoint-\d+")
STEP_TIMES = "simplified_blocks/data/mlm_step_times.csv"
# Keys of JSON files left out besides times (item 4).
LINEAGE_KEYS = re.compile("^sha256$")
RECORD_KEYS = {"run.json": re.compile("^resumed_from$")}


def comparable_name(name: str, budgeted: bool = True) -> str:
    """The name a file is matched by: a budgeted run's snapshot without the step it ended at."""
    return SNAPSHOT_STEP.sub("checkpoint-<step>", name) if budgeted and BUDGETED.match(name) else name


def files(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and not (set(rel.parts[:-1]) & SKIP_DIRS):
            out[rel.as_posix()] = path
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def json_without_time(path: Path, also: re.Pattern | None = None) -> list:
    """The JSON documents of a .json or .jsonl file with every time-recording key (and every key
    matching `also`) removed."""
    import json

    def strip(value):
        if isinstance(value, dict):
            return {
                k: strip(v) for k, v in value.items() if not TIME_COLUMN.search(k) and not (also and also.search(k))
            }
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    text = path.read_text()
    docs = (
        [json.loads(line) for line in text.splitlines() if line.strip()]
        if path.suffix == ".jsonl"
        else [json.loads(text)]
    )
    return [strip(d) for d in docs]


def weights_difference(a: Path, b: Path, values: bool = True) -> str | None:
    """None when two safetensors files hold the same tensors and metadata, else a short description;
    with values=False only the tensors' names, dtypes and shapes are compared."""
    import torch
    from safetensors import safe_open

    with safe_open(a, "pt") as left, safe_open(b, "pt") as right:
        if values and left.metadata() != right.metadata():
            return f"metadata {left.metadata()} vs {right.metadata()}"
        if set(left.keys()) != set(right.keys()):
            return f"tensor names differ: {sorted(set(left.keys()) ^ set(right.keys()))[:5]}"
        for key in left.keys():
            x, y = left.get_tensor(key), right.get_tensor(key)
            if x.dtype != y.dtype or x.shape != y.shape or (values and not torch.equal(x, y)):
                return f"tensor {key} differs"
    return None


def csv_difference(a: Path, b: Path, values: bool = True, budgeted: bool = True) -> str | None:
    """None when the CSVs agree outside time columns (with values=False: in columns and row count only;
    with budgeted, without the claims of time-budgeted runs), else a short description."""
    left, right = pd.read_csv(a), pd.read_csv(b)
    if list(left.columns) != list(right.columns):
        return f"columns differ: {list(left.columns)} vs {list(right.columns)}"
    if not values:
        return None
    if len(left) != len(right):
        return f"{len(left)} vs {len(right)} rows"
    keep = [c for c in left.columns if not TIME_COLUMN.search(str(c))]
    if a.name in CLAIM_TABLES and "claim" in left.columns:
        claims = left["claim"].astype(str).str.split(":").str[0]  # the id, before the claim's text
        left_out = claims.str.contains(TIMING_CLAIM) | (claims.str.match(BUDGETED_CLAIM) & budgeted)
        left, right = left[~left_out], right[~left_out]
    differing = [c for c in keep if not left[c].equals(right[c])]
    if differing:
        return f"values differ in columns {differing}"
    return None


SOURCE_DIGEST = re.compile(r"^'[0-9a-f]{64}'$")


def lineage_across_commits(doc: dict) -> dict:
    """A lineage card without what changes with the commit alone (item 7)."""
    steps = [
        {**step, "params": sorted(p for p in step.get("params", []) if not SOURCE_DIGEST.match(p))}
        for step in doc.get("steps", [])
    ]
    return {**{k: v for k, v in doc.items() if k != "code"}, "steps": steps}


def main(local_root: str, slurm_root: str, across_commits: bool = False) -> int:
    local, slurm = files(Path(local_root)), files(Path(slurm_root))
    failures, notes = [], []
    tables = [local.get(STEP_TIMES), slurm.get(STEP_TIMES)]
    budgeted = None in tables or digest(tables[0]) != digest(tables[1])  # item 6
    local_names = {comparable_name(name, budgeted) for name in local}
    slurm_names = {comparable_name(name, budgeted) for name in slurm}
    for name in sorted(local_names ^ slurm_names):
        failures.append(f"only in {'local' if name in local_names else 'SLURM'} run: {name}")
    same = 0
    for name in sorted(set(local) & set(slurm)):
        a, b = local[name], slurm[name]
        if digest(a) == digest(b):
            same += 1
            continue
        if budgeted and BUDGETED.match(name):
            problem = (
                weights_difference(a, b, values=False)
                if name.endswith(".safetensors")
                else csv_difference(a, b, values=False)
                if name.endswith(".csv")
                else None
            )
            if problem:
                failures.append(f"{name}: {problem}")
            else:
                notes.append(f"{name}: from a wall-clock-budgeted run; same form, values not compared")
            continue
        if name.endswith(".safetensors"):
            problem = weights_difference(a, b)
            if problem:
                failures.append(f"model weights differ: {name}: {problem}")
            else:
                notes.append(f"{name}: same tensors and metadata (header order differs)")
        elif name.endswith((".json", ".jsonl")) and Path(name).name != "checkpoint.json":
            lineage = name.endswith(".lineage.json")
            also = RECORD_KEYS.get(Path(name).name) or (LINEAGE_KEYS if lineage else None)
            docs = [json_without_time(path, also) for path in (a, b)]
            if lineage and across_commits:
                docs = [[lineage_across_commits(doc) for doc in pair] for pair in docs]
            if docs[0] != docs[1]:
                failures.append(f"{name}: values differ outside time fields")
            else:
                notes.append(f"{name}: differs only in time fields")
        elif name.endswith(".csv"):
            problem = csv_difference(a, b, budgeted=budgeted)
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
    args = [a for a in sys.argv[1:] if a != "--across-commits"]
    if len(args) != 2 or len(sys.argv) - 1 - len(args) > 1:
        sys.exit(__doc__)
    sys.exit(main(args[0], args[1], across_commits="--across-commits" in sys.argv[1:]))
