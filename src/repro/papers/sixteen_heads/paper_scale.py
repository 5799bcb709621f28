"""Paper scale of sixteen_heads: task files built from the paper's own datasets (GLUE, WMT14 En-Fr with
MTNT, IWSLT) in the synthetic tasks' layout, and classifiers fine-tuned from a converted pretrained BERT.
The commands `hub-data`, `convert` and `train --init-from` use it."""

from __future__ import annotations

import json
from pathlib import Path

# The tensors a fine-tuned classifier does not take from the pretrained checkpoint: BERT's
# classifier layer is new for every task (initialised N(0, init_std²), zero bias, from the run's
# seed); the pooler is pretrained and kept, as in the paper's run_classifier.py.
NEW_HEAD = ("classifier.",)
POOLER = "pooler."
# Model settings the pretrained checkpoint fixes; the family's config must agree with it.
PRETRAINED_SHAPE = ("n_layers", "d_model", "n_heads", "d_ff")


def pretrained_configs(init_dir: str, family: str, spec: dict, task) -> tuple[dict, str]:
    """({"model": cfg}, identity label) of a classifier fine-tuned from a `convert` directory.

    The configuration is the checkpoint's own (positions, norms, token types, dropout) with the
    task's number of classes; the spec's model must name the same shape, and the task must have
    been tokenised with the checkpoint's vocabulary. The label (checkpoint and the hash of its
    converted weights) enters the run's identity through TrainConfig.init_from.
    """
    from repro.models import config_from_dict
    from repro.papers.sixteen_heads import runs
    from repro.runs import read_model_config
    from repro.training.checkpoint import sha256_file

    if family != "cls":
        raise ValueError(
            f"--init-from starts a classifier (family cls) from a pretrained BERT; family {family!r} "
            "has no converted checkpoint here (train it from scratch)"
        )
    pretrained = read_model_config(init_dir)

    def single(value):  # per-layer head counts (n_heads is stored per layer) -> one number where uniform
        return value[0] if isinstance(value, (tuple, list)) and len(set(value)) == 1 else value

    different = {
        k: (single(spec["model"][k]), single(getattr(pretrained, k)))
        for k in PRETRAINED_SHAPE
        if k in spec["model"] and single(spec["model"][k]) != single(getattr(pretrained, k))
    }
    if different:
        raise ValueError(
            f"the family's model and the checkpoint in {init_dir} differ in "
            + ", ".join(f"{k} ({ours} vs {theirs})" for k, (ours, theirs) in different.items())
        )
    if int(task.meta["vocab_size"]) != pretrained.vocab_size:
        raise ValueError(
            f"task {task.name} has a vocabulary of {task.meta['vocab_size']} ids but the checkpoint in "
            f"{init_dir} has {pretrained.vocab_size}: tokenise the task with the checkpoint's tokenizer"
        )
    n_classes = len(task.meta.get("label_names") or [])
    if n_classes < 2:
        raise ValueError(f"task {task.name} has no class labels; family 'cls' needs a classification task")
    values = dict(pretrained.to_dict(), output="classifier", n_classes=n_classes)
    cfg = config_from_dict(runs.typed_by_separator(values, task), where=init_dir)
    record = Path(init_dir) / CONVERT_RECORD
    name = json.loads(record.read_text())["checkpoint"] if record.exists() else Path(init_dir).name
    digest = sha256_file(Path(init_dir) / "model.safetensors")
    return {"model": cfg}, f"{spec.get('init_from') or name}@sha256:{digest[:16]}"


CONVERT_RECORD = "convert.json"

# Our split -> (dataset of repro.hub.datasets.DATASETS, the hub's split): the synthetic analogues'
# split names on the paper's own data. GLUE's test labels are hidden, so the paper reports on the
# dev sets: the classification "test" (and the held-out split evaluated during training) is the dev
# set. WMT: the paper's BLEU is on newstest2013 (the hub's validation split) and Table 5 pairs it
# with newstest2014 (the hub's test split), here the selection split; MTNT (test_ood) is read from
# a local copy only (it has no canonical copy on the hub).
HUB_SPLITS = {
    "nli": {
        "train": ("mnli", "train"),
        "selection": ("mnli", "validation_matched"),
        "test": ("mnli", "validation_matched"),
        "test_mismatched": ("mnli", "validation_mismatched"),
    },
    "sst2": {"train": ("sst2", "train"), "selection": ("sst2", "validation"), "test": ("sst2", "validation")},
    "cola": {"train": ("cola", "train"), "selection": ("cola", "validation"), "test": ("cola", "validation")},
    "mrpc": {"train": ("mrpc", "train"), "selection": ("mrpc", "validation"), "test": ("mrpc", "validation")},
    "mt": {
        "train": ("mt", "train"),
        "selection": ("mt", "test"),
        "test": ("mt", "validation"),
        "test_ood": ("mtnt", "test"),
    },
    "iwslt": {"train": ("iwslt", "train"), "valid": ("iwslt", "validation"), "test": ("iwslt", "test")},
}
# The metric of each task's analogue (the paper's metric), and the distribution-shifted test splits.
HUB_METRICS = {"nli": "accuracy", "sst2": "accuracy", "cola": "mcc", "mrpc": "f1", "mt": "bleu", "iwslt": "bleu"}
SHIFTED_SPLITS = ("test_mismatched", "test_ood")
SHIFTED_KEY_TASKS = ("nli", "mt", "iwslt")  # the generators that write meta["shifted_splits"]


def build_hub_task(
    task_name: str,
    encoder,
    sizes: dict,
    max_len: int,
    seed: int = 0,
    mirror: str | Path | None = None,
    final_sep: bool = False,
):
    """The TaskData of one of our tasks from the paper's dataset, in the synthetic task's layout.

    ``sizes`` {split: largest row count or None} names the splits to build; the train split is a
    seeded random sample (the hub's row order is not random), the others are the first rows.
    The metadata carries what the analyses read: metric, label names, shifted splits and the
    tokenizer's special ids (meta["special_ids"]: sep, bos, eos, cls).
    """
    from dataclasses import replace

    from repro.data.errors import DataError
    from repro.data.synthetic import TaskData
    from repro.hub.datasets import DATASETS, build_task

    table = HUB_SPLITS[task_name]
    unknown = sorted(set(sizes) - set(table))
    if unknown:
        raise DataError(f"task {task_name} has no hub split(s) {unknown}; it has {sorted(table)}")
    if encoder.pad_id != 0:
        raise DataError(
            f"tokenizer {encoder.name} pads with id {encoder.pad_id}; task files pad with 0: choose a "
            "tokenizer whose padding id is 0 (BERT's WordPiece tokenizers)"
        )
    splits, meta_splits, sources, label_names = {}, {}, {}, None
    for split, limit in sizes.items():
        dataset, hub_split = table[split]
        spec = replace(DATASETS[dataset], splits={split: hub_split})
        source = Path(mirror) / dataset if mirror else None
        if source is None and spec.options.get("local_only"):
            raise DataError(
                f"task {task_name} split {split!r} comes from {dataset}, which has no copy on the hub: "
                f"set a mirror with {dataset}/{hub_split}.jsonl, or leave {split!r} out of the sizes"
            )
        part = build_task(
            spec,
            encoder,
            source=source,
            splits=[split],
            max_len=max_len,
            limit=None if limit is None else int(limit),
            final_sep=final_sep,
            shuffle_seed=seed if split == "train" else None,
        )
        splits[split] = part.splits[split]
        meta_splits[split] = [spec.hub_id or f"{dataset} (local)", spec.config, hub_split]
        sources[split] = part.meta["params"]["source"]
        label_names = label_names or part.meta["label_names"]
    special = {name: getattr(encoder, f"{name}_id") for name in ("sep", "bos", "eos", "cls")}
    meta = {
        "task": task_name,
        "generator": __name__ + ".build_hub_task",
        "family": f"hub:{encoder.name}",
        "vocab_size": encoder.vocab_size,
        "vocab": {"name": encoder.name, "size": encoder.vocab_size},
        "special_ids": special,
        "pad_id": 0,
        "seed": int(seed),
        "params": {
            "tokenizer": encoder.name,
            "max_len": max_len,
            "limits": dict(sizes),
            "final_sep": final_sep,
            "hub_splits": meta_splits,
            "source": sources,
            "train_sample_seed": int(seed),
        },
        "sizes": {s: int(len(next(iter(a.values())))) for s, a in splits.items()},
        "arrays": {s: sorted(a) for s, a in splits.items()},
        "metric": HUB_METRICS[task_name],
        "label_names": label_names,
    }
    if task_name in SHIFTED_KEY_TASKS:  # as their generators write it (possibly empty)
        meta["shifted_splits"] = sorted(set(SHIFTED_SPLITS) & set(splits))
    return TaskData(task_name, meta, splits)
