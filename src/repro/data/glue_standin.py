"""Offline stand-ins for the GLUE tasks, built from the lines of the code corpus.

He & Hofmann (2024, Tables 1-2) fine-tune crammed BERT on GLUE. Offline we build one task per GLUE
task from source lines of the code corpus (catalog simplified_blocks.md §3), keeping each task's
kind (single sentence or pair, classes or regression) and metric:

  task   stands for   input      label                                                  metric
  cola   CoLA         line       1 if the line parses as Python, 0 if it was corrupted   MCC
                                 (one bracket/colon/quote/operator character deleted)
  sst2   SST-2        line       1 if its file is in a private subpackage (torch/_*)     accuracy
  mrpc   MRPC         line pair  1 if both lines come from the same file                 F1
  qqp    QQP          line pair  as mrpc, with a larger training set                     accuracy
  stsb   STS-B        line pair  5 x token-set Jaccard of the pair (b is a partly          Spearman
                                 rewritten copy of a, or an unrelated line)
  rte    RTE          line pair  1 if b directly follows a, 0 if b is from another file  accuracy
  qnli   QNLI         line pair  1 if b directly follows a, 0 if b is a non-adjacent     accuracy
                                 line of the same file
  mnli   MNLI         line pair  0 b follows a, 1 same file not adjacent, 2 other file   accuracy
                                 (matched: lines of ≤ max_line_tokens tokens, as in
                                 training; mismatched: longer lines, truncated)

Lines are the stripped, non-blank, non-comment lines of a file, in order ("follows" means the next
such line). Files go to the tasks' train or eval side by a seeded hash of their path (eval
fraction `eval_fraction`), so eval examples come from files no training example saw. Labels are
balanced by construction. A single input is ``[EOS] a``, a pair ``[EOS] a [EOS] b`` (EOS, id 0,
doubles as CLS and SEP; the tokenizer has no other specials), each line cut to
``max_line_tokens``; rows are right-padded with 0 and ``lengths`` says where padding starts.

File (``write_npz``): for each task and split, arrays ``<task>__<split>__ids`` int32 [N, T],
``__lengths`` int32 [N], ``__labels`` (int64 classes or float32 scores); meta.json holds TASKS and
the settings. Splits: ``train``, ``eval`` and, for mnli, ``eval_mm``.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from repro.data.cards import file_sha256
from repro.data.corpus import SPLITS, iter_corpus
from repro.data.errors import DataError
from repro.data.npz import read_npz, write_npz_with_card
from repro.data.tokenizer import EOS_ID, PAD_ID, load_tokenizer


@dataclass(frozen=True)
class TaskSpec:
    name: str
    stands_for: str
    pair: bool
    n_outputs: int  # classes, or 1 for regression
    metric: str  # accuracy | f1 | mcc | spearman
    evals: tuple[tuple[str, str], ...]  # (column of the results table, split)


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("mnli", "MNLI", True, 3, "accuracy", (("mnli_m", "eval"), ("mnli_mm", "eval_mm"))),
        TaskSpec("sst2", "SST-2", False, 2, "accuracy", (("sst2", "eval"),)),
        TaskSpec("stsb", "STS-B", True, 1, "spearman", (("stsb", "eval"),)),
        TaskSpec("rte", "RTE", True, 2, "accuracy", (("rte", "eval"),)),
        TaskSpec("qnli", "QNLI", True, 2, "accuracy", (("qnli", "eval"),)),
        TaskSpec("qqp", "QQP", True, 2, "accuracy", (("qqp", "eval"),)),
        TaskSpec("mrpc", "MRPC", True, 2, "f1", (("mrpc", "eval"),)),
        TaskSpec("cola", "CoLA", False, 2, "mcc", (("cola", "eval"),)),
    )
}

_CORRUPTIBLE = set("()[]{}:,=.'\"+-*<>")


@dataclass
class _File:
    path: str
    private: bool
    texts: list[str]  # kept lines
    ids: list[list[int]]  # their tokens, not truncated


def _unit(seed: int, *parts: object) -> float:
    digest = hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _is_private(path: str) -> bool:
    parts = path.split("/")
    return len(parts) > 1 and parts[1].startswith("_")


def _kept_lines(source: str) -> list[str]:
    lines = (line.strip() for line in source.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _parses(line: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for invalid escapes
            compile(line, "<line>", "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return False
    return True


class _Pool:
    """The lines of one side (train or eval) of the task files, with samplers."""

    def __init__(self, files: list[_File], min_tokens: int):
        self.files = [f for f in files if len(f.ids) >= 3]
        if len(self.files) < 2:
            raise DataError(f"the task files hold {len(self.files)} file(s) with 3+ lines; need 2; use a larger corpus")
        self.min_tokens = min_tokens

    def _ok(self, ids: list[int], max_tokens: int | None, long: bool) -> bool:
        n = len(ids)
        if n < self.min_tokens:
            return False
        return n > max_tokens if long else (max_tokens is None or n <= max_tokens)

    def file(self, rng, exclude: int | None = None, private: bool | None = None) -> int:
        for _ in range(1000):
            k = int(rng.integers(len(self.files)))
            if k != exclude and (private is None or self.files[k].private == private):
                return k
        raise DataError(f"no task file with private={private} (other than {exclude}); use a larger corpus")

    def line(self, rng, k: int, max_tokens: int | None = None, long: bool = False, avoid=()) -> int:
        ids = self.files[k].ids
        for _ in range(200):
            i = int(rng.integers(len(ids)))
            if i not in avoid and self._ok(ids[i], max_tokens, long):
                return i
        raise _Retry

    def consecutive(self, rng, k: int, max_tokens: int | None, long: bool) -> int:
        ids = self.files[k].ids
        for _ in range(200):
            i = int(rng.integers(len(ids) - 1))
            if self._ok(ids[i], max_tokens, long) and self._ok(ids[i + 1], max_tokens, long):
                return i
        raise _Retry


class _Retry(Exception):
    """The drawn file has no suitable line; draw another."""


def _draw(n: int, rng, make) -> list:
    rows, attempts = [], 0
    while len(rows) < n:
        attempts += 1
        if attempts > 50 * n + 1000:
            raise DataError(f"could not draw {n} examples (got {len(rows)}); use a larger corpus")
        try:
            rows.append(make(len(rows)))
        except _Retry:
            continue
    return rows


def _pair_examples(task: str, pool: _Pool, n: int, rng, max_tokens: int, long: bool = False) -> list:
    """[(ids_a, ids_b, label)] for the pair tasks other than stsb."""

    def make(index: int):
        label = index % TASKS[task].n_outputs  # balanced
        k = pool.file(rng)
        ids = pool.files[k].ids
        if task in ("rte", "qnli") and label == 1 or task == "mnli" and label == 0:
            i = pool.consecutive(rng, k, max_tokens, long)
            return ids[i], ids[i + 1], label
        if task == "qnli" or task == "mnli" and label == 1:  # same file, not adjacent
            i = pool.line(rng, k, max_tokens, long)
            j = pool.line(rng, k, max_tokens, long, avoid=(i - 1, i, i + 1))
            return ids[i], ids[j], label
        if task in ("mrpc", "qqp") and label == 1:
            i = pool.line(rng, k, max_tokens, long)
            j = pool.line(rng, k, max_tokens, long, avoid=(i,))
            return ids[i], ids[j], label
        other = pool.file(rng, exclude=k)  # rte 0, mrpc/qqp 0, mnli 2
        return (
            ids[pool.line(rng, k, max_tokens, long)],
            pool.files[other].ids[pool.line(rng, other, max_tokens, long)],
            label,
        )

    return _draw(n, rng, make)


def _jaccard5(a: list[int], b: list[int]) -> float:
    sa, sb = set(a), set(b)
    return 5.0 * len(sa & sb) / len(sa | sb)


def _stsb_examples(pool: _Pool, n: int, rng, max_tokens: int) -> list:
    def make(index: int):
        k = pool.file(rng)
        a = pool.files[k].ids[pool.line(rng, k, max_tokens)]
        other = pool.file(rng)
        donor = pool.files[other].ids[pool.line(rng, other, max_tokens)]
        if index % 2:  # unrelated line
            b = donor
        else:  # a with a random fraction of its positions rewritten from the donor line
            fraction = float(rng.random())
            b = [donor[int(rng.integers(len(donor)))] if rng.random() < fraction else t for t in a]
        return a, b, _jaccard5(a, b)

    return _draw(n, rng, make)


def _sst2_examples(pool: _Pool, n: int, rng, max_tokens: int) -> list:
    def make(index: int):
        label = index % 2
        k = pool.file(rng, private=bool(label))
        return pool.files[k].ids[pool.line(rng, k, max_tokens)], None, label

    return _draw(n, rng, make)


def _cola_examples(pool: _Pool, n: int, rng, max_tokens: int, tokenizer) -> list:
    """Lines that parse alone (label 1) and lines made unparsable by deleting one character (0)."""
    texts: list[tuple[str, int]] = []

    def make(index: int):
        label = (index + 1) % 2
        k = pool.file(rng)
        i = pool.line(rng, k, max_tokens)
        text = pool.files[k].texts[i]
        if not _parses(text):
            raise _Retry
        if label == 1:
            return text, 1
        spots = [p for p, ch in enumerate(text) if ch in _CORRUPTIBLE]
        if not spots:
            raise _Retry
        p = spots[int(rng.integers(len(spots)))]
        broken = text[:p] + text[p + 1 :]
        if _parses(broken):
            raise _Retry
        return broken, 0

    texts = _draw(n, rng, make)
    encoded = tokenizer.encode_batch_fast([t for t, _ in texts], add_special_tokens=False)
    return [(e.ids, None, label) for e, (_, label) in zip(encoded, texts)]


def _pack(rows: list, pair: bool, max_tokens: int, regression: bool) -> dict[str, np.ndarray]:
    width = 2 + 2 * max_tokens if pair else 1 + max_tokens
    ids = np.full((len(rows), width), PAD_ID, dtype=np.int32)
    lengths = np.zeros(len(rows), dtype=np.int32)
    for r, (a, b, _) in enumerate(rows):
        seq = [EOS_ID] + list(a[:max_tokens])
        if pair:
            seq += [EOS_ID] + list(b[:max_tokens])
        ids[r, : len(seq)] = seq
        lengths[r] = len(seq)
    labels = np.array([row[2] for row in rows], dtype=np.float32 if regression else np.int64)
    return {"ids": ids, "lengths": lengths, "labels": labels}


def _read_files(
    corpus_dir, tokenizer, max_lines_per_side: int, eval_fraction: float, seed: int
) -> dict[str, list[_File]]:
    """The kept lines of the task files, per side. A file is on the eval side when its seeded hash is
    below `eval_fraction`; if a side would lack private or public files, the file of that group with
    the most extreme hash moves to it (only tiny corpora need this). Each side takes files in corpus
    order until it holds `max_lines_per_side` lines."""
    records = [(path, source) for split in SPLITS for path, source in iter_corpus(corpus_dir, split)]
    records = [(path, lines) for path, source in records if len(lines := _kept_lines(source)) >= 3]
    score = {path: _unit(seed, "glue-side", path) for path, _ in records}
    side_of = {path: "eval" if score[path] < eval_fraction else "train" for path, _ in records}
    for private in (True, False):
        group = [path for path, _ in records if _is_private(path) == private]
        for side, pick in (("eval", min), ("train", max)):
            if group and not any(side_of[p] == side for p in group):
                side_of[pick(group, key=score.get)] = side
    sides: dict[str, list[_File]] = {"train": [], "eval": []}
    counts = {"train": 0, "eval": 0}
    for path, texts in records:
        side = side_of[path]
        if counts[side] >= max_lines_per_side:
            continue
        ids = [e.ids for e in tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
        sides[side].append(_File(path, _is_private(path), texts, ids))
        counts[side] += len(texts)
    for side, files in sides.items():
        if {f.private for f in files} != {True, False}:
            raise DataError(
                f"the {side} task files lack private or public subpackages ({len(files)} files); use a larger corpus"
            )
    return sides


def build_glue_standin(
    corpus_dir: str | Path,
    tokenizer_path: str | Path,
    out_path: str | Path,
    *,
    train_sizes: dict[str, int],
    eval_size: int,
    max_line_tokens: int = 12,
    min_line_tokens: int = 3,
    eval_fraction: float = 0.2,
    max_lines_per_side: int = 100_000,
    seed: int = 0,
) -> dict:
    """Build every task of TASKS (see module docstring) into one .npz; returns the data card."""
    unknown = sorted(set(train_sizes) - set(TASKS))
    missing = sorted(set(TASKS) - set(train_sizes))
    if unknown or missing:
        raise DataError(
            f"train_sizes must name exactly the tasks {sorted(TASKS)}; unknown {unknown}, missing {missing}"
        )
    if not 0 < eval_fraction < 1:
        raise DataError(f"eval_fraction must be in (0, 1), got {eval_fraction}")
    if min_line_tokens < 1 or max_line_tokens < min_line_tokens:
        raise DataError(f"need 1 <= min_line_tokens <= max_line_tokens, got {min_line_tokens}, {max_line_tokens}")
    tokenizer = load_tokenizer(tokenizer_path)
    tokenizer.encode_special_tokens = True
    sides = _read_files(corpus_dir, tokenizer, max_lines_per_side, eval_fraction, seed)
    pools = {side: _Pool(files, min_line_tokens) for side, files in sides.items()}
    arrays: dict[str, np.ndarray] = {}
    sizes: dict[str, dict[str, int]] = {}
    for t_index, (name, spec) in enumerate(TASKS.items()):
        splits = [("train", "train", train_sizes[name], False), ("eval", "eval", eval_size, False)]
        if name == "mnli":
            splits.append(("eval_mm", "eval", eval_size, True))
        sizes[name] = {}
        for s_index, (split, side, n, long) in enumerate(splits):
            rng = np.random.default_rng([seed, t_index, s_index])
            pool = pools[side]
            if name == "cola":
                rows = _cola_examples(pool, n, rng, max_line_tokens, tokenizer)
            elif name == "sst2":
                rows = _sst2_examples(pool, n, rng, max_line_tokens)
            elif name == "stsb":
                rows = _stsb_examples(pool, n, rng, max_line_tokens)
            else:
                rows = _pair_examples(name, pool, n, rng, max_line_tokens, long=long)
            order = rng.permutation(len(rows))
            packed = _pack([rows[i] for i in order], spec.pair, max_line_tokens, spec.n_outputs == 1)
            for key, value in packed.items():
                arrays[f"{name}__{split}__{key}"] = value
            sizes[name][split] = len(rows)
    settings = dict(
        train_sizes=dict(train_sizes),
        eval_size=eval_size,
        max_line_tokens=max_line_tokens,
        min_line_tokens=min_line_tokens,
        eval_fraction=eval_fraction,
        max_lines_per_side=max_lines_per_side,
        seed=seed,
    )
    meta = {
        "tasks": {k: asdict(v) for k, v in TASKS.items()},
        "settings": settings,
        "vocab_size": tokenizer.get_vocab_size(),
        "tokenizer_sha256": file_sha256(tokenizer_path),
        "files": {side: len(files) for side, files in sides.items()},
    }
    return write_npz_with_card(
        out_path,
        arrays,
        meta,
        name="glue-standin",
        generator=__name__,
        seed=seed,
        params=settings,
        sizes=sizes,
        packages=["tokenizers", "numpy"],
    )


@dataclass
class TaskSplit:
    input_ids: torch.Tensor  # [N, T] int64
    padding_mask: torch.Tensor  # [N, T] bool, True = real token
    labels: torch.Tensor  # [N] int64 classes or float32 scores


def load_glue_standin(path: str | Path) -> tuple[dict[str, dict[str, TaskSplit]], dict]:
    """{task: {split: TaskSplit}} and the meta of a file written by build_glue_standin."""
    arrays, meta = read_npz(path)
    if meta is None or "tasks" not in meta:
        raise DataError(f"{path} is not a GLUE stand-in file (no task metadata); rebuild it")
    tasks: dict[str, dict[str, TaskSplit]] = {}
    for key in sorted(arrays):
        if not key.endswith("__ids"):
            continue
        task, split, _ = key.split("__")
        ids = torch.from_numpy(arrays[key].astype(np.int64))
        lengths = torch.from_numpy(arrays[f"{task}__{split}__lengths"].astype(np.int64))
        mask = torch.arange(ids.shape[1])[None, :] < lengths[:, None]
        tasks.setdefault(task, {})[split] = TaskSplit(ids, mask, torch.from_numpy(arrays[f"{task}__{split}__labels"]))
    return tasks, meta
