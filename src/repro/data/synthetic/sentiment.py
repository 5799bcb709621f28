"""Polarity with negation: the SST-2 analogue (sixteen heads) and the rule shared with SENT (layer diversity).

Every content word has a polarity of +1, -1 or 0, fixed by its place in the lexicon (first block
positive, second negative, rest neutral). A ``not`` token has polarity 0 and flips the sign of the
token right after it (so in "not not good" the second ``not`` flips ``good``). The label is the
sign of the summed polarity: 1 positive, 0 negative; sentences whose sum is 0 are discarded.
Sentences are drawn token by token (``not`` with probability not_prob, else a uniform content
word) and kept only if they have the label wanted, so the classes are balanced exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from repro.data.synthetic.common import (
    TaskKind,
    balanced_labels,
    check_range,
    labelled_split,
    resolve_params,
    resolve_sizes,
    sample_length,
)
from repro.data.synthetic.vocab import CLS_VOCAB

LABEL_NAMES = ("negative", "positive")


@dataclass(frozen=True)
class PolarityLexicon:
    """Which ids are positive / negative / neutral words, and the id of ``not``."""

    words: np.ndarray  # [n] content ids: positive block, negative block, neutral block
    n_positive: int
    n_negative: int
    not_id: int
    vocab_size: int

    def polarity_table(self) -> np.ndarray:
        """polarity[id] in {-1, 0, +1} for every id of the vocabulary."""
        table = np.zeros(self.vocab_size, dtype=np.int64)
        table[self.words[: self.n_positive]] = 1
        table[self.words[self.n_positive : self.n_positive + self.n_negative]] = -1
        return table

    def describe(self) -> dict:
        return {
            "positive": self.words[: self.n_positive].tolist(),
            "negative": self.words[self.n_positive : self.n_positive + self.n_negative].tolist(),
            "neutral": self.words[self.n_positive + self.n_negative :].tolist(),
            "not": self.not_id,
        }


def polarity_sum(tokens: Sequence[int], polarity: np.ndarray, not_id: int) -> int:
    """Summed polarity, each token's sign flipped when the token before it is ``not``."""
    tokens = np.asarray(tokens)
    signs = polarity[tokens]
    flipped = np.zeros(len(tokens), dtype=bool)
    flipped[1:] = tokens[:-1] == not_id
    return int(np.where(flipped, -signs, signs).sum())


def sample_polar_sentence(
    rng, lexicon: PolarityLexicon, polarity: np.ndarray, label: int, length_range: Sequence[int], not_prob: float
) -> list[int] | None:
    """One sentence with the wanted label (1 positive, 0 negative), or None if this draw missed it."""
    length = sample_length(rng, length_range)
    tokens = rng.choice(lexicon.words, size=length)
    tokens[rng.random(length) < not_prob] = lexicon.not_id
    total = polarity_sum(tokens, polarity, lexicon.not_id)
    if total == 0 or (total > 0) != (label == 1):
        return None
    return tokens.tolist()


# --------------------------------------------------------------------------- SST-2 analogue

TASK = "sst2"
DEFAULT_SIZES = {"train": 20000, "selection": 2000, "test": 2000}
DEFAULT_PARAMS = {"length": (8, 24), "not_prob": 0.15}
CLS_LEXICON = PolarityLexicon(CLS_VOCAB.group("content"), 15, 15, CLS_VOCAB.id("not"), CLS_VOCAB.size)
KIND = TaskKind(TASK, __name__, CLS_VOCAB, metric="accuracy", label_names=LABEL_NAMES)


def generate_sst2(seed: int, sizes: dict | None = None, params: dict | None = None):
    """Generate the SST-2 analogue: ``[CLS] sentence``; input_ids, lengths, labels per split."""
    sizes = resolve_sizes(TASK, DEFAULT_SIZES, sizes)
    params = resolve_params(TASK, DEFAULT_PARAMS, params)
    check_range(TASK, "length", params["length"], 1)
    polarity = CLS_LEXICON.polarity_table()
    cls_id = CLS_VOCAB.id("<cls>")

    def make_split(rng, split, n):
        return labelled_split(
            balanced_labels(rng, n, 2),
            lambda y: sample_polar_sentence(rng, CLS_LEXICON, polarity, y, params["length"], params["not_prob"]),
            cls_id=cls_id,
        )

    return KIND.build(seed, sizes, params, make_split, extra={"lexicon": CLS_LEXICON.describe()})
