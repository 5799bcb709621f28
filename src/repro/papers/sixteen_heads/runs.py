"""Training runs on the synthetic task families (repro.data.synthetic): classifiers and translators.

Two model families, one run spec each:
  cls  a bidirectional classifier on a pooled token (the BERT analogue): a `Transformer` whose
       token types (BERT's segment embeddings, ``n_token_types`` in the spec's model) come from the
       task's SEP token (``type_sep_id``, set from the task); the spec's ``model`` is a TransformerConfig
       dict, and the builder fixes causal=False, output="classifier" and n_classes from the task.
  s2s  an `EncoderDecoder` (the WMT/IWSLT analogue) whose encoder and decoder share the
       spec's ``model`` dict; the builder fixes the encoder to causal=False, output="none" and
       the decoder to causal, cross-attention, output="lm"; embeddings are shared.
The vocabulary size always comes from the task file.

A run directory is read and written by repro.task_runs (``model.json`` with the family and its configs,
written before training, plus the trainer's files).
"""

from __future__ import annotations

from typing import Any

import torch

from repro.data.synthetic import TaskData
from repro.models import (
    TransformerConfig,
    config_from_dict,
)
from repro.task_runs import check_family
from repro.training import ClassificationTask, Seq2SeqTask


def model_configs(family: str, model: dict[str, Any], task: TaskData) -> dict[str, TransformerConfig]:
    """The TransformerConfig(s) of a run: {"model": cfg} for cls, {"encoder", "decoder"} for s2s."""
    check_family(family)
    values = dict(model, vocab_size=int(task.meta["vocab_size"]))
    if family == "cls":
        n_classes = len(task.meta.get("label_names") or [])
        if n_classes < 2:
            raise ValueError(f"task {task.name} has no class labels; family 'cls' needs a classification task")
        values = typed_by_separator(values, task)
        return {"model": config_from_dict(dict(values, causal=False, output="classifier", n_classes=n_classes))}
    if "src" not in next(iter(task.splits.values())):
        raise ValueError(f"task {task.name} has no src/tgt arrays; family 's2s' needs a translation task")
    encoder = config_from_dict(dict(values, causal=False, output="none", cross_attention=False), where="encoder")
    decoder = config_from_dict(dict(values, causal=True, output="lm", cross_attention=True), where="decoder")
    return {"encoder": encoder, "decoder": decoder}


def special_id(task: TaskData, name: str) -> int | None:
    """The id of a special token ("sep", "bos" or "eos") of a task file, None if it has none.

    Task files built from the hub with a pretrained tokenizer name theirs in meta["special_ids"]
    (BERT's [SEP] is not called "<sep>"); the synthetic ones have "<name>" in their vocabulary.
    """
    special = task.meta.get("special_ids")
    if special is not None:
        return special.get(name)
    tokens = task.meta["vocab"]["tokens"]
    return tokens.index(f"<{name}>") if f"<{name}>" in tokens else None


def typed_by_separator(values: dict[str, Any], task: TaskData) -> dict[str, Any]:
    """Model config values whose token types (if it has any) come from the task's separator: BERT's
    types for [CLS] A [SEP] B, read from the input ids (`type_sep_id`)."""
    sep = separator_id(task)
    return dict(values, type_sep_id=sep) if values.get("n_token_types") and sep is not None else dict(values)


def separator_id(task: TaskData) -> int | None:
    """The id of the task vocabulary's separator ("<sep>", or the tokenizer's [SEP]), None if it has none."""
    return special_id(task, "sep")


def check_lengths(family: str, configs: dict[str, TransformerConfig], task: TaskData) -> None:
    """Every split's sequences must fit the model's positions; raise ValueError naming the split."""
    for split, arrays in task.splits.items():
        if family == "cls":
            widths = {"input_ids": (arrays["input_ids"].shape[1], configs["model"].max_seq_len)}
        else:
            widths = {
                "src": (arrays["src"].shape[1], configs["encoder"].max_seq_len),
                "tgt": (arrays["tgt"].shape[1], configs["decoder"].max_seq_len),
            }
        for name, (width, limit) in widths.items():
            if width > limit:
                raise ValueError(
                    f"task {task.name} split {split!r} has {name} of length {width} > max_seq_len={limit}; "
                    "raise model.max_seq_len"
                )


def make_task(
    family: str,
    task: TaskData,
    eval_split: str,
    *,
    label_smoothing: float = 0.0,
    pad_id: int = 0,
    train_rows: torch.Tensor | None = None,
    eval_batch_size: int = 256,
):
    """The library task (ClassificationTask or Seq2SeqTask) on the train split, evaluated on ``eval_split``.

    ``train_rows`` selects a subset of the training examples (all by default).
    """
    check_family(family)
    train, held = task.tensors("train"), task.tensors(eval_split)
    if train_rows is not None:
        train = {k: v[train_rows] for k, v in train.items()}
    if family == "cls":
        return ClassificationTask(
            train["input_ids"],
            train["labels"],
            held["input_ids"],
            held["labels"],
            train_padding_mask=train["input_ids"] != pad_id,
            eval_padding_mask=held["input_ids"] != pad_id,
            eval_batch_size=eval_batch_size,
        )
    return Seq2SeqTask(
        train["src"],
        train["tgt"],
        held["src"],
        held["tgt"],
        pad_id=pad_id,
        label_smoothing=label_smoothing,
        eval_batch_size=eval_batch_size,
    )


def ordered_batches(family: str, arrays: dict[str, torch.Tensor], batch_size: int, pad_id: int = 0):
    """The examples of ``arrays`` (a split's tensors) in order, in batches laid out as the library
    tasks lay out theirs (trimmed padding, padding masks, teacher-forcing targets)."""
    check_family(family)
    if family == "cls":
        ids, labels = arrays["input_ids"], arrays["labels"]
        task = ClassificationTask(
            ids,
            labels,
            ids,
            labels,
            train_padding_mask=ids != pad_id,
            eval_padding_mask=ids != pad_id,
            eval_batch_size=batch_size,
        )
    else:
        src, tgt = arrays["src"], arrays["tgt"]
        task = Seq2SeqTask(src, tgt, src, tgt, pad_id=pad_id, eval_batch_size=batch_size)
    return task.eval_batches()
