"""Real GLUE (the hub's `nyu-mll/glue`) in the file format of the GLUE stand-in
(`repro.data.glue_standin`), so the fine-tuning code reads either unchanged.

One .npz holds every task of `repro.data.glue_standin.TASKS`; for each task and split the arrays
``<task>__<split>__ids`` int32 [N, T], ``__lengths`` int32 [N] and ``__labels`` (int64 classes,
float32 scores for STS-B); meta.json holds the tasks, the settings and the vocabulary size.
Splits: ``train`` (the hub's train), ``eval`` (validation; MNLI validation_matched) and, for
MNLI, ``eval_mm`` (validation_mismatched). GLUE's test labels are hidden, so the validation sets
are the scores, as in cramming's and the paper's GLUE tables.

Inputs are BERT's: ``[CLS] a [SEP]`` or ``[CLS] a [SEP] b [SEP]``, cut to `max_tokens` by removing
tokens from the end of the longer text first; padding id 0 after `lengths`. Rows whose label is
missing (-1) are dropped. The label ids are GLUE's own (MNLI 0 entailment, 1 neutral, 2
contradiction; MRPC/QQP 1 = paraphrase, the class whose F1 is reported).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from repro.data.errors import DataError
from repro.data.glue_standin import TASKS
from repro.data.npz import write_npz_with_card
from repro.hub.datasets import Encoder, HubDataset, _truncate_pair, read_rows

GLUE_HUB_ID = "nyu-mll/glue"

#: task -> (text fields, {our split: the hub's split}); the hub config is the task name.
GLUE_TASKS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "mnli": (
        ("premise", "hypothesis"),
        {"train": "train", "eval": "validation_matched", "eval_mm": "validation_mismatched"},
    ),
    "sst2": (("sentence",), {"train": "train", "eval": "validation"}),
    "stsb": (("sentence1", "sentence2"), {"train": "train", "eval": "validation"}),
    "rte": (("sentence1", "sentence2"), {"train": "train", "eval": "validation"}),
    "qnli": (("question", "sentence"), {"train": "train", "eval": "validation"}),
    "qqp": (("question1", "question2"), {"train": "train", "eval": "validation"}),
    "mrpc": (("sentence1", "sentence2"), {"train": "train", "eval": "validation"}),
    "cola": (("sentence",), {"train": "train", "eval": "validation"}),
}
assert set(GLUE_TASKS) == set(TASKS), "every stand-in task needs its GLUE source"


def glue_spec(task: str) -> HubDataset:
    """The hub dataset of one GLUE task (read with `repro.hub.datasets.read_rows`)."""
    fields, splits = GLUE_TASKS[task]
    kind = "pair_classification" if len(fields) == 2 else "classification"
    return HubDataset(task, GLUE_HUB_ID, task, kind, splits, fields, "label", paper="simplified_blocks")


def encode_rows(
    rows: list[dict], spec: HubDataset, encoder: Encoder, max_tokens: int, regression: bool
) -> dict[str, np.ndarray]:
    """BERT inputs of one split in the stand-in's arrays: ids [N, max_tokens], lengths [N], labels [N]."""
    cls_id, sep_id = encoder.need("cls_id", "sep_id")
    sequences, labels = [], []
    for row in rows:
        missing = [name for name in (*spec.fields, "label") if name not in row]
        if missing:
            raise DataError(f"GLUE {spec.name}: a row has no field(s) {missing} (fields: {sorted(row)})")
        label = float(row["label"]) if regression else int(row["label"])
        if label < 0:  # unlabeled rows
            continue
        texts = [encoder.encode(str(row[name])) for name in spec.fields]
        if len(texts) == 1:
            ids = [cls_id, *texts[0][: max_tokens - 2], sep_id]
        else:
            first, second = _truncate_pair(texts[0], texts[1], max_tokens - 3)
            ids = [cls_id, *first, sep_id, *second, sep_id]
        sequences.append(ids)
        labels.append(label)
    if not sequences:
        raise DataError(f"GLUE {spec.name}: a split has no labelled rows")
    ids = np.full((len(sequences), max_tokens), encoder.pad_id, dtype=np.int32)
    lengths = np.zeros(len(sequences), dtype=np.int32)
    for r, seq in enumerate(sequences):
        ids[r, : len(seq)] = seq
        lengths[r] = len(seq)
    return {"ids": ids, "lengths": lengths, "labels": np.asarray(labels, dtype=np.float32 if regression else np.int64)}


def build_glue_file(
    encoder: Encoder,
    out_path: str | Path,
    *,
    source: str | Path | None = None,
    max_tokens: int = 128,
    train_limit: int | None = None,
) -> dict:
    """Every GLUE task into one stand-in-format .npz (+ ``.card.json``); returns the card.

    `source`: a local mirror, ``source/<task>/<hub split>.parquet|jsonl|csv``, instead of the hub.
    `train_limit`: keep the first this-many train rows of each task (None: all).
    """
    if max_tokens < 4:
        raise DataError(f"max_tokens must be at least 4 ([CLS] a [SEP] b [SEP]), got {max_tokens}")
    arrays: dict[str, np.ndarray] = {}
    sizes: dict[str, dict[str, int]] = {}
    for name, task in TASKS.items():
        spec = glue_spec(name)
        sizes[name] = {}
        for split in spec.splits:
            rows = read_rows(
                spec, split, None if source is None else Path(source) / name, train_limit if split == "train" else None
            )
            packed = encode_rows(rows, spec, encoder, max_tokens, regression=task.n_outputs == 1)
            for key, value in packed.items():
                arrays[f"{name}__{split}__{key}"] = value
            sizes[name][split] = len(packed["labels"])
    settings = {
        "hub_id": GLUE_HUB_ID,
        "tokenizer": encoder.name,
        "max_tokens": max_tokens,
        "train_limit": train_limit,
        "source": "local mirror" if source is not None else "hub",
    }
    meta = {
        "tasks": {k: asdict(v) for k, v in TASKS.items()},
        "settings": settings,
        "vocab_size": encoder.vocab_size,
        "pad_id": encoder.pad_id,
    }
    return write_npz_with_card(
        out_path,
        arrays,
        meta,
        name="glue",
        generator=__name__,
        seed=None,
        params=settings,
        sizes=sizes,
        packages=["transformers", "tokenizers", "numpy"],
    )
