"""MT analogue (WMT for sixteen heads) and IWSLT analogue: the same rule, IWSLT with less data.

The source is 6-14 uniform content words. The target (S2S vocabulary, shared with the source) is
made by a fixed rule, set by rule_seed:
  1. reorder: scanning left to right, each adjacent (class-X word, class-Y word) pair is swapped
     (pairs do not overlap: after a swap the scan continues after the pair);
  2. translate: each word w becomes lexicon[w], a bijection of the content words;
  3. fertility: the words of a fixed set (10% of the vocabulary) emit a second target word after it.
Splits: train, selection (held out, for choosing heads as in Table 5) and test are in-domain;
MT adds test_ood (the MTNT analogue): lengths 15-20 drawn from a Zipf(1.2) unigram distribution
whose word ranks are fixed by the rule. IWSLT has train, valid and test, all in-domain.

Arrays per split: src [N, S] = words + EOS, tgt [N, T] = BOS + target words + EOS (teacher
forcing uses tgt[:, :-1] as decoder input and tgt[:, 1:] as targets), src_lengths, tgt_lengths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from repro.data.errors import DataError
from repro.data.synthetic.common import (
    TaskKind,
    check_range,
    lengths,
    pad,
    resolve_params,
    resolve_sizes,
    rule_rng,
    sample_length,
    zipf_probabilities,
)
from repro.data.synthetic.vocab import S2S_VOCAB

RULE_FAMILY = "mt"  # MT and IWSLT share one rule for a given rule_seed
DEFAULT_PARAMS = {
    "length": (6, 14),
    "ood_length": (15, 20),
    "ood_zipf": 1.2,
    "class_size": 15,  # words in each of the reordering classes X and Y
    "fertile_words": 6,  # 10% of the 60 content words
    "rule_seed": 0,
}
SHIFTED_SPLITS = {"test_ood"}


@dataclass(frozen=True)
class TranslationRule:
    lexicon: np.ndarray  # [vocab] target word of each source word (identity off the content words)
    in_x: np.ndarray  # [vocab] bool
    in_y: np.ndarray  # [vocab] bool
    second: np.ndarray  # [vocab] second target word of a fertile word, PAD (0) otherwise
    ood_unigram: np.ndarray  # [n_content] probabilities of the content words out of domain

    def translate(self, source: Sequence[int]) -> list[int]:
        """Target words for source words (no BOS/EOS)."""
        reordered, i = [], 0
        while i < len(source):
            if i + 1 < len(source) and self.in_x[source[i]] and self.in_y[source[i + 1]]:
                reordered += [source[i + 1], source[i]]
                i += 2
            else:
                reordered.append(source[i])
                i += 1
        target = []
        for word in reordered:
            target.append(int(self.lexicon[word]))
            if self.second[word]:
                target.append(int(self.second[word]))
        return target

    def describe(self) -> dict:
        return {
            "lexicon": self.lexicon.tolist(),  # indexed by id
            "class_x": np.flatnonzero(self.in_x).tolist(),
            "class_y": np.flatnonzero(self.in_y).tolist(),
            "second": self.second.tolist(),  # indexed by id; 0 where the word is not fertile
            "ood_unigram": self.ood_unigram.round(8).tolist(),
        }


def make_rule(rule_seed: int, class_size: int, fertile_words: int, ood_zipf: float) -> TranslationRule:
    content = S2S_VOCAB.group("content")
    rng = rule_rng(rule_seed, RULE_FAMILY)
    lexicon = np.arange(S2S_VOCAB.size)
    lexicon[content] = rng.permutation(content)
    classes = rng.permutation(content)
    in_x = np.zeros(S2S_VOCAB.size, dtype=bool)
    in_y = np.zeros(S2S_VOCAB.size, dtype=bool)
    in_x[classes[:class_size]] = True
    in_y[classes[class_size : 2 * class_size]] = True
    second = np.zeros(S2S_VOCAB.size, dtype=np.int64)
    second[rng.choice(content, size=fertile_words, replace=False)] = rng.choice(content, size=fertile_words)
    return TranslationRule(lexicon, in_x, in_y, second, zipf_probabilities(len(content), ood_zipf, rng))


def _generate(task: str, default_sizes: dict, seed: int, sizes: dict | None, params: dict | None):
    sizes = resolve_sizes(task, default_sizes, sizes)
    params = resolve_params(task, DEFAULT_PARAMS, params)
    check_range(task, "length", params["length"], 1)
    check_range(task, "ood_length", params["ood_length"], 1)
    n_content = len(S2S_VOCAB.group("content"))
    if not 0 <= 2 * params["class_size"] <= n_content or not 0 <= params["fertile_words"] <= n_content:
        raise DataError(
            f"task {task}: need 0 <= 2 * class_size <= {n_content} and 0 <= fertile_words <= {n_content}, "
            f"got class_size={params['class_size']}, fertile_words={params['fertile_words']}"
        )
    rule = make_rule(params["rule_seed"], params["class_size"], params["fertile_words"], params["ood_zipf"])
    bos, eos = S2S_VOCAB.id("<bos>"), S2S_VOCAB.id("<eos>")
    content = S2S_VOCAB.group("content")

    def make_split(rng, split, n):
        shifted = split in SHIFTED_SPLITS
        length, unigram = (params["ood_length"], rule.ood_unigram) if shifted else (params["length"], None)
        sources = [rng.choice(content, size=sample_length(rng, length), p=unigram).tolist() for _ in range(n)]
        src = [s + [eos] for s in sources]
        tgt = [[bos, *rule.translate(s), eos] for s in sources]
        return {"src": pad(src), "tgt": pad(tgt), "src_lengths": lengths(src), "tgt_lengths": lengths(tgt)}

    extra = {"rule": rule.describe(), "shifted_splits": sorted(SHIFTED_SPLITS & set(sizes))}
    return TaskKind(task, __name__, S2S_VOCAB, metric="bleu").build(seed, sizes, params, make_split, extra)


MT_SIZES = {"train": 20000, "selection": 500, "test": 500, "test_ood": 500}
IWSLT_SIZES = {"train": 4000, "valid": 500, "test": 500}


def generate_mt(seed: int, sizes: dict | None = None, params: dict | None = None):
    """Generate the MT (WMT) analogue; src, tgt, src_lengths, tgt_lengths per split."""
    return _generate("mt", MT_SIZES, seed, sizes, params)


def generate_iwslt(seed: int, sizes: dict | None = None, params: dict | None = None):
    """Generate the IWSLT analogue: the MT rule with less data; src, tgt, src_lengths, tgt_lengths."""
    return _generate("iwslt", IWSLT_SIZES, seed, sizes, params)
