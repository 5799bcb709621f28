"""The fixed token conventions of the three synthetic task families.

Every task of a family uses the same vocabulary, so a model is built from ``vocab.size`` alone and
one model (or one masked-LM pretraining run) can see several tasks of its family. Ids are
assigned in the order tokens are listed below; PAD is always 0.

CLS family (sixteen heads, encoder classifiers; NLI, SST-2, CoLA, MRPC analogues), 69 ids:
   0 PAD   1 CLS   2 SEP   3 MASK   4 NOT   5 "("   6 ")"   7 "["   8 "]"   9..68 content w0..w59
S2S family (sixteen heads, translation; MT and IWSLT analogues), 63 ids, shared by source and target:
   0 PAD   1 BOS   2 EOS   3..62 content w0..w59
PROMPT family (layer diversity, causal LMs read at the answer position), 164 ids:
   0 PAD   1 BOS   2 SEP   3 ANS   4 NOT
   label words: 5 NEG 6 POS (SENT) | 7 NO 8 YES (ENTAIL) | 9..12 T0..T3 (TOPIC) | 13..16 A B C D (MC)
   content pools: 17..46 sent (30) | 47..76 entail (30) | 77..132 topic (4 x 10 topic words, then 16
   shared noise words) | 133..163 numbers 0..30 (MC)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Vocabulary:
    """Token names in id order, with named groups of consecutive ids."""

    name: str
    tokens: tuple[str, ...]
    groups: dict[str, tuple[int, int]] = field(default_factory=dict)  # group -> [start, stop)

    @property
    def size(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        return self.tokens.index(token)

    def group(self, name: str) -> np.ndarray:
        """Ids of a group as an int64 array, e.g. ``group("content")``."""
        start, stop = self.groups[name]
        return np.arange(start, stop, dtype=np.int64)

    def describe(self) -> dict:
        """JSON-ready description stored in every task file's metadata."""
        return {
            "name": self.name,
            "size": self.size,
            "tokens": list(self.tokens),
            "groups": {k: list(v) for k, v in self.groups.items()},
        }


def build_vocabulary(name: str, singles: list[str], groups: list[tuple[str, list[str]]]) -> Vocabulary:
    """Single tokens first (ids 0..), then each group's tokens as a consecutive block."""
    tokens = list(singles)
    spans = {}
    for group, names in groups:
        spans[group] = (len(tokens), len(tokens) + len(names))
        tokens += names
    if len(set(tokens)) != len(tokens):
        raise ValueError(f"vocabulary {name} repeats a token")
    return Vocabulary(name, tuple(tokens), spans)


N_CONTENT = 60  # V_c of sixteen_heads.md §3

CLS_VOCAB = build_vocabulary(
    "cls",
    ["<pad>", "<cls>", "<sep>", "<mask>", "not", "(", ")", "[", "]"],
    [("content", [f"w{i}" for i in range(N_CONTENT)])],
)
S2S_VOCAB = build_vocabulary(
    "s2s",
    ["<pad>", "<bos>", "<eos>"],
    [("content", [f"w{i}" for i in range(N_CONTENT)])],
)

TOPICS, TOPIC_WORDS, TOPIC_NOISE = 4, 10, 16
MC_MODULUS = 31  # p of the MC task: numbers 0..p-1 are single tokens
PROMPT_VOCAB = build_vocabulary(
    "prompt",
    ["<pad>", "<bos>", "<sep>", "<ans>", "not"],
    [
        ("sent_labels", ["NEG", "POS"]),
        ("entail_labels", ["NO", "YES"]),
        ("topic_labels", [f"T{k}" for k in range(TOPICS)]),
        ("mc_labels", ["A", "B", "C", "D"]),
        ("sent", [f"s{i}" for i in range(30)]),
        ("entail", [f"e{i}" for i in range(30)]),
        (
            "topic",
            [f"t{k}_{i}" for k in range(TOPICS) for i in range(TOPIC_WORDS)]
            + [f"noise{i}" for i in range(TOPIC_NOISE)],
        ),
        ("numbers", [f"n{i}" for i in range(MC_MODULUS)]),
    ],
)

PAD_ID = 0  # the same in every family
