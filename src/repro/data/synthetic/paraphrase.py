"""MRPC analogue: is sentence B a paraphrase of sentence A? (sixteen heads, Fig. 6; F1)

A is a sequence of uniform content words. A paraphrase (label 1) is a local shuffle of A: its
tokens permuted within consecutive windows of ``window`` positions, with at least one token
moved. A non-paraphrase (label 0) is A with one token replaced by a different word. So the label
is a function of the input: 1 exactly when B holds the same multiset of tokens as A.
Input ``[CLS] A [SEP] B`` with segment ids; ``positive_fraction`` of each split is label 1.
"""

from __future__ import annotations

import numpy as np

from repro.data.synthetic.common import (
    TaskKind,
    check_range,
    encode_pair,
    labelled_split,
    quota_labels,
    resolve_params,
    resolve_sizes,
    sample_length,
)
from repro.data.synthetic.vocab import CLS_VOCAB

TASK = "mrpc"
LABEL_NAMES = ("not_paraphrase", "paraphrase")
KIND = TaskKind(TASK, __name__, CLS_VOCAB, metric="f1", label_names=LABEL_NAMES)
DEFAULT_SIZES = {"train": 20000, "selection": 2000, "test": 2000}
DEFAULT_PARAMS = {"length": (8, 14), "window": 3, "positive_fraction": 0.5}


def local_shuffle(rng, tokens: np.ndarray, window: int) -> np.ndarray:
    """Permute ``tokens`` within consecutive windows of ``window`` positions."""
    out = tokens.copy()
    for start in range(0, len(out), window):
        out[start : start + window] = rng.permutation(out[start : start + window])
    return out


def _make_example(rng, label: int, length, window):
    content = CLS_VOCAB.group("content")
    first = rng.choice(content, size=sample_length(rng, length))
    if label == 1:
        second = local_shuffle(rng, first, window)
        if np.array_equal(second, first):
            return None  # nothing moved: not a paraphrase task example, draw again
    else:
        second = first.copy()
        position = rng.integers(len(second))
        second[position] = rng.choice(content[content != first[position]])
    return encode_pair(CLS_VOCAB.id("<cls>"), CLS_VOCAB.id("<sep>"), first.tolist(), second.tolist())


def generate_mrpc(seed: int, sizes: dict | None = None, params: dict | None = None):
    """Generate the MRPC analogue; input_ids, segment_ids, lengths, labels per split."""
    sizes = resolve_sizes(TASK, DEFAULT_SIZES, sizes)
    params = resolve_params(TASK, DEFAULT_PARAMS, params)
    check_range(TASK, "length", params["length"], 2)
    positive = float(params["positive_fraction"])

    def make_split(rng, split, n):
        labels = quota_labels(rng, n, [1.0 - positive, positive])
        return labelled_split(
            labels, lambda y: _make_example(rng, y, params["length"], int(params["window"])), pair=True
        )

    return KIND.build(seed, sizes, params, make_split)
