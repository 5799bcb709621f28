"""Helpers shared by the synthetic task generators: seeding, label quotas, sampling, padding, layout.

A generator is a pure function of (seed, sizes, params). Each split draws from its own stream,
``split_rng(seed, task, split)``, so changing one split's size leaves the others unchanged. The
rule that defines a task never depends on ``seed``: it is fixed by the vocabulary layout (polarity
and topic words) or, where it is random (NLI antonyms, the MT lexicon), by the ``rule_seed``
parameter. Different seeds are different samples of the same task.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repro.data.errors import DataError
from repro.data.synthetic.vocab import PAD_ID

TokenList = list[int]  # one unpadded sequence of token ids


@dataclass
class TaskData:
    """A generated task: per split, a dict of equally long int64 arrays; plus JSON metadata.

    ``meta`` holds at least: task, family, vocab (see vocab.py), seed, params, sizes, and the
    array names of every split; classification tasks add label_names (and label_token_ids for
    prompt tasks), and metric names the paper's metric for the analogue.
    """

    name: str
    meta: dict[str, Any]
    splits: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def tensors(self, split: str) -> dict[str, torch.Tensor]:  # noqa: F821
        """The arrays of one split as torch LongTensors."""
        import torch

        if split not in self.splits:
            raise DataError(f"task {self.name} has no split {split!r}; it has {sorted(self.splits)}")
        return {key: torch.from_numpy(np.asarray(value, dtype=np.int64)) for key, value in self.splits[split].items()}


# --------------------------------------------------------------------------- seeding


def split_rng(seed: int, task: str, split: str) -> np.random.Generator:
    """The random stream of one split of one task (crc32 keeps it independent of PYTHONHASHSEED)."""
    return np.random.default_rng([int(seed), zlib.crc32(task.encode()), zlib.crc32(split.encode())])


def rule_rng(rule_seed: int, task_family: str) -> np.random.Generator:
    """The random stream that fixes a task's rule (lexicon, bijection, classes)."""
    return np.random.default_rng([int(rule_seed), zlib.crc32(b"rule"), zlib.crc32(task_family.encode())])


def resolve_sizes(task: str, defaults: Mapping[str, int], sizes: Mapping[str, int] | None) -> dict[str, int]:
    """Defaults overridden by ``sizes``; unknown split names are an error, size 0 drops the split."""
    merged = dict(defaults)
    for split, n in (sizes or {}).items():
        if split not in defaults:
            raise DataError(f"task {task} has no split {split!r}; its splits are {sorted(defaults)}")
        if int(n) < 0:
            raise DataError(f"size of split {split!r} must be >= 0, got {n}")
        merged[split] = int(n)
    return {split: n for split, n in merged.items() if n > 0}


def resolve_params(task: str, defaults: Mapping[str, Any], params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Defaults overridden by ``params``; ranges become [lo, hi] lists so they round-trip through JSON."""
    unknown = set(params or {}) - set(defaults)
    if unknown:
        raise DataError(f"task {task} has no parameter(s) {sorted(unknown)}; it has {sorted(defaults)}")
    merged = {**defaults, **(params or {})}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in merged.items()}


# --------------------------------------------------------------------------- labels and sampling


def quota_labels(rng: np.random.Generator, n: int, fractions: Sequence[float]) -> np.ndarray:
    """``n`` labels in shuffled order with class counts as close to ``fractions`` as integers allow.

    Counts are floor(n * fraction) plus one for the classes with the largest remainders (ties to
    the lower class), so a balanced split of n = 2000 over 3 classes has counts 667, 667, 666.
    """
    fractions = np.asarray(fractions, dtype=np.float64) / np.sum(fractions)
    exact = n * fractions
    counts = np.floor(exact).astype(np.int64)
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[: n - counts.sum()]] += 1
    labels = np.repeat(np.arange(len(fractions)), counts)
    return rng.permutation(labels)


def balanced_labels(rng: np.random.Generator, n: int, n_classes: int) -> np.ndarray:
    return quota_labels(rng, n, [1.0] * n_classes)


def sample_length(rng: np.random.Generator, length_range: Sequence[int]) -> int:
    """A length drawn uniformly from the inclusive range [lo, hi]."""
    lo, hi = length_range
    return int(rng.integers(lo, hi + 1))


def zipf_probabilities(n: int, exponent: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """Zipf(exponent) probabilities over n items; ranks are shuffled by ``rng`` when given."""
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    if rng is not None:
        weights = weights[rng.permutation(n)]
    return weights / weights.sum()


def draw_examples(labels: np.ndarray, make: Callable[[int], Any], max_tries: int = 1000) -> list[Any]:
    """Call ``make(label)`` for each label; ``make`` returns None to ask for another try."""
    out = []
    for label in labels:
        for _ in range(max_tries):
            example = make(int(label))
            if example is not None:
                out.append(example)
                break
        else:
            raise DataError(f"could not sample an example of label {label} in {max_tries} tries; check the parameters")
    return out


def check_range(task: str, name: str, value: Sequence[int], lo: int, hi: int | None = None) -> None:
    """Fail early on an inclusive length range outside [lo, hi]."""
    if len(value) != 2 or value[0] > value[1] or value[0] < lo or (hi is not None and value[1] > hi):
        bound = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise DataError(f"task {task}: {name} must be an inclusive range [lo, hi] within {bound}, got {value}")


# --------------------------------------------------------------------------- layout


def pad(sequences: Sequence[Sequence[int]], width: int | None = None) -> np.ndarray:
    """Right-pad with PAD (0) into an int64 array [N, width] (width: the longest sequence)."""
    width = max((len(s) for s in sequences), default=0) if width is None else width
    out = np.full((len(sequences), width), PAD_ID, dtype=np.int64)
    for row, seq in enumerate(sequences):
        out[row, : len(seq)] = seq
    return out


def lengths(sequences: Sequence[Sequence[int]]) -> np.ndarray:
    return np.array([len(s) for s in sequences], dtype=np.int64)


def classification_arrays(
    sequences: Sequence[Sequence[int]], labels: np.ndarray, segments: Sequence[Sequence[int]] | None = None
) -> dict[str, np.ndarray]:
    """CLS-family split: input_ids [N, T], lengths [N], labels [N], and segment_ids [N, T] for pairs."""
    arrays = {"input_ids": pad(sequences), "lengths": lengths(sequences), "labels": np.asarray(labels, dtype=np.int64)}
    if segments is not None:
        arrays["segment_ids"] = pad(segments, arrays["input_ids"].shape[1])
    return arrays


def encode_single(cls_id: int, tokens: Sequence[int]) -> TokenList:
    """``[CLS] tokens``."""
    return [cls_id, *tokens]


def encode_pair(cls_id: int, sep_id: int, first: Sequence[int], second: Sequence[int]) -> tuple[TokenList, TokenList]:
    """``[CLS] A [SEP] B`` and its segment ids (0 up to and including SEP, 1 for B)."""
    ids = [cls_id, *first, sep_id, *second]
    segments = [0] * (len(first) + 2) + [1] * len(second)
    return ids, segments


def prompt_arrays(
    bodies: Sequence[Sequence[int]], labels: np.ndarray, label_token_ids: Sequence[int], bos_id: int, ans_id: int
) -> dict[str, np.ndarray]:
    """PROMPT-family split: ``[BOS] body [ANS] label-word`` right-padded.

    input_ids [N, T], answer_pos [N] (index of ANS: a causal model's prediction there is read
    against the label words), labels [N] (class index; the word is label_token_ids[label], stored
    at answer_pos + 1 so the same rows serve LM training).
    """
    label_token_ids = np.asarray(label_token_ids, dtype=np.int64)
    rows = [[bos_id, *body, ans_id, int(label_token_ids[y])] for body, y in zip(bodies, labels)]
    return {
        "input_ids": pad(rows),
        "answer_pos": np.array([len(r) - 2 for r in rows], dtype=np.int64),
        "labels": np.asarray(labels, dtype=np.int64),
    }


def labelled_split(
    labels: np.ndarray, make_example: Callable[[int], Any], *, cls_id: int | None = None, pair: bool = False
) -> dict[str, np.ndarray]:
    """A classification split: one example per label from ``make_example(label)`` (None asks for another
    try), which gives a sentence to encode as ``[CLS] sentence`` (``cls_id``), or the token and segment
    ids of an encoded sentence pair (``pair=True``)."""
    examples = draw_examples(labels, make_example)
    if pair:
        return classification_arrays([e[0] for e in examples], labels, [e[1] for e in examples])
    return classification_arrays([encode_single(cls_id, e) for e in examples], labels)


@dataclass(frozen=True)
class TaskKind:
    """What a generator declares once about its task: name, vocabulary, the paper's metric, label names."""

    name: str
    generator: str  # the generating module's name, recorded in the task's metadata
    vocab: Any
    metric: str
    label_names: tuple[str, ...] | None = None

    def build(
        self,
        seed: int,
        sizes: Mapping[str, int],
        params: Mapping[str, Any],
        make_split: Callable[[np.random.Generator, str, int], dict[str, np.ndarray]],
        extra: Mapping[str, Any] | None = None,
    ) -> TaskData:
        """The task: each split's arrays from ``make_split(rng, split, n)``, with the split's own stream."""
        splits = {split: make_split(split_rng(seed, self.name, split), split, n) for split, n in sizes.items()}
        return make_task(
            self.name,
            generator=self.generator,
            vocab=self.vocab,
            seed=seed,
            params=params,
            splits=splits,
            metric=self.metric,
            label_names=self.label_names,
            extra=extra,
        )


def make_task(
    name: str,
    *,
    generator: str,
    vocab,
    seed: int,
    params: Mapping[str, Any],
    splits: dict[str, dict[str, np.ndarray]],
    metric: str,
    label_names: Sequence[str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> TaskData:
    """Wrap generated splits with the metadata every task file carries."""
    meta = {
        "task": name,
        "generator": generator,
        "family": vocab.name,
        "vocab_size": vocab.size,
        "vocab": vocab.describe(),
        "pad_id": PAD_ID,
        "seed": int(seed),
        "params": dict(params),
        "sizes": {split: int(len(next(iter(arrays.values())))) for split, arrays in splits.items()},
        "arrays": {split: sorted(arrays) for split, arrays in splits.items()},
        "metric": metric,
        "label_names": list(label_names) if label_names is not None else None,
        **(extra or {}),
    }
    return TaskData(name, meta, splits)
