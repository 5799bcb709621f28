"""Writing and reading synthetic tasks: one .npz per task plus its data card.

File layout (repro.data.npz, no pickle): one int64 array per (split, name) under the key
``"<split>/<name>"`` (e.g. ``train/input_ids``), and ``meta.json`` with the task's metadata
(vocabulary, params, sizes, array names per split, label names, the rule). The card is written
beside the file as ``<name>.card.json``; for a classification task it also records each split's
reference levels (chance, constant predictor, ceiling).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from repro.data.errors import DataError
from repro.data.npz import read_npz, write_npz_with_card
from repro.data.synthetic.common import TaskData

ID_ARRAYS = {"input_ids", "src", "tgt"}  # token ids: must lie in [0, vocab_size)
REQUIRED_META = ("task", "vocab_size", "sizes", "arrays", "params", "seed")


def write_task(path: str | Path, task: TaskData) -> dict:
    """Write ``task`` to ``path`` (.npz) and its card beside it; returns the card."""
    path = Path(path)
    arrays = {f"{split}/{name}": values for split, named in task.splits.items() for name, values in named.items()}
    return write_npz_with_card(
        path,
        arrays,
        task.meta,
        name=task.name,
        generator=task.meta.get("generator", __name__),
        seed=task.meta["seed"],
        params=task.meta["params"],
        sizes={
            split: {
                "examples": task.meta["sizes"][split],
                "shapes": {k: list(v.shape) for k, v in sorted(named.items())},
            }
            for split, named in task.splits.items()
        },
        packages=["numpy"],
        extra={
            "family": task.meta.get("family"),
            "vocab_size": task.meta["vocab_size"],
            "metric": task.meta.get("metric"),
            "reference_levels": reference_levels(task),
        },
    )


def reference_levels(task: TaskData) -> dict:
    """Per split of a classification task: the chance, constant-predictor and ceiling scores of its metric
    (repro.analysis.reference_levels), the levels a trained classifier is read against; empty otherwise."""
    from repro.analysis.metrics import CLASSIFICATION_METRICS
    from repro.analysis.reference_levels import classification_levels

    metric, names = task.meta.get("metric"), task.meta.get("label_names")
    if metric not in CLASSIFICATION_METRICS or not names:
        return {}
    return {
        split: classification_levels(arrays["labels"], len(names), metric)
        for split, arrays in sorted(task.splits.items())
        if "labels" in arrays
    }


def load_task(path: str | Path, task: str | None = None) -> TaskData:
    """Read a task file and check it is whole: every listed array present, shapes and id ranges consistent.

    ``task``, if given, must match the file's task name. Raises DataError on any problem.
    """
    path = Path(path)
    arrays, meta = read_npz(path)
    if meta is None or any(key not in meta for key in REQUIRED_META):
        raise DataError(f"{path} is not a synthetic task file (metadata missing or incomplete); regenerate it")
    if task is not None and meta["task"] != task:
        raise DataError(f"{path} holds task {meta['task']!r}, expected {task!r}")
    problems, splits = [], {}
    expected_keys = {f"{split}/{name}" for split, names in meta["arrays"].items() for name in names}
    if set(arrays) != expected_keys:
        missing, extra = sorted(expected_keys - set(arrays)), sorted(set(arrays) - expected_keys)
        problems.append(f"arrays missing {missing} / unexpected {extra}")
    n_labels = len(meta["label_names"]) if meta.get("label_names") else None
    for split, names in meta["arrays"].items():
        splits[split] = {}
        for name in names:
            key = f"{split}/{name}"
            if key not in arrays:
                continue
            values = arrays[key]
            if values.dtype.kind not in "iu":
                problems.append(f"{key} has dtype {values.dtype}, expected integers")
            elif len(values) != meta["sizes"].get(split):
                problems.append(f"{key} has {len(values)} rows, metadata says {meta['sizes'].get(split)}")
            elif name in ID_ARRAYS and values.size and (values.min() < 0 or values.max() >= meta["vocab_size"]):
                problems.append(f"{key} has ids outside [0, {meta['vocab_size']})")
            elif name == "labels" and n_labels and values.size and (values.min() < 0 or values.max() >= n_labels):
                problems.append(f"{key} has labels outside [0, {n_labels})")
            splits[split][name] = values.astype(np.int64, copy=False)
    if problems:
        raise DataError(f"task file {path} is inconsistent: {'; '.join(problems)}; regenerate it")
    return TaskData(meta["task"], meta, splits)
