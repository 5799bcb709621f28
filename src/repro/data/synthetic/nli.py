"""NLI analogue (MNLI for the BERT experiments of sixteen_heads.md), 3 balanced classes.

Input ``[CLS] premise [SEP] hypothesis`` in the CLS vocabulary. The hypothesis is an ordered
subsequence of distinct premise positions, then, by label:
  0 entailment     unchanged, so every hypothesis token occurs in the premise;
  1 neutral        one token replaced by a word u with u and antonym(u) both absent from the premise;
  2 contradiction  one token t replaced by antonym(t), where antonym(t) is absent from the premise.
``antonym`` is a fixed involution pairing the 60 content words (set by rule_seed), so the label
is a function of the input: with O = hypothesis tokens absent from the premise, entailment if O is
empty, contradiction if O = {o} and antonym(o) is in the premise, neutral otherwise.

Splits: train, selection (held out, for choosing heads as in Table 6) and test draw premises
uniformly with lengths 8-16; test_mismatched (the MNLI-mismatched analogue of Fig. 2) draws them
from a Zipf(1.2) unigram distribution (word ranks fixed by rule_seed) with lengths 16-24.
With ``hard_share`` > 0, that share of the train, selection and test examples (drawn per example)
takes its premise and hypothesis lengths from ``hard_premise_len`` and ``hard_hypothesis_len``
instead: a mixture of easy and hard examples, as a natural corpus has (0: every example alike).
"""

from __future__ import annotations

import numpy as np

from repro.data.errors import DataError
from repro.data.synthetic.common import (
    TaskKind,
    balanced_labels,
    check_range,
    encode_pair,
    labelled_split,
    resolve_params,
    resolve_sizes,
    rule_rng,
    sample_length,
    zipf_probabilities,
)
from repro.data.synthetic.vocab import CLS_VOCAB

TASK = "nli"
LABEL_NAMES = ("entailment", "neutral", "contradiction")
KIND = TaskKind(TASK, __name__, CLS_VOCAB, metric="accuracy", label_names=LABEL_NAMES)
DEFAULT_SIZES = {"train": 20000, "selection": 2000, "test": 2000, "test_mismatched": 2000}
DEFAULT_PARAMS = {
    "premise_len": (8, 16),
    "hypothesis_len": (3, 6),
    "mismatched_premise_len": (16, 24),
    "mismatched_zipf": 1.2,
    "rule_seed": 0,
    "hard_share": 0.0,
    "hard_premise_len": (8, 16),
    "hard_hypothesis_len": (3, 6),
}
SHIFTED_SPLITS = {"test_mismatched"}


def antonym_table(rule_seed: int) -> np.ndarray:
    """antonym[id] for every CLS-vocabulary id (non-content ids map to themselves); an involution."""
    content = CLS_VOCAB.group("content")
    shuffled = rule_rng(rule_seed, TASK).permutation(content)
    table = np.arange(CLS_VOCAB.size)
    first, second = shuffled[0::2], shuffled[1::2]
    table[first], table[second] = second, first
    return table


def _make_example(rng, label: int, premise_len, hyp_len, unigram, antonym):
    content = CLS_VOCAB.group("content")
    premise = rng.choice(content, size=sample_length(rng, premise_len), p=unigram)
    in_premise = np.zeros(CLS_VOCAB.size, dtype=bool)
    in_premise[premise] = True
    k = min(sample_length(rng, hyp_len), len(premise))
    hypothesis = premise[np.sort(rng.choice(len(premise), size=k, replace=False))].copy()
    if label == 1:  # neutral: a word unrelated to every premise word
        unrelated = content[~in_premise[content] & ~in_premise[antonym[content]]]
        if len(unrelated) == 0:
            return None  # this premise cannot carry the label; draw another
        hypothesis[rng.integers(k)] = rng.choice(unrelated)
    elif label == 2:  # contradiction: flip a word whose antonym is not already in the premise
        flippable = np.flatnonzero(~in_premise[antonym[hypothesis]])
        if len(flippable) == 0:
            return None
        position = rng.choice(flippable)
        hypothesis[position] = antonym[hypothesis[position]]
    return encode_pair(CLS_VOCAB.id("<cls>"), CLS_VOCAB.id("<sep>"), premise.tolist(), hypothesis.tolist())


def generate_nli(seed: int, sizes: dict | None = None, params: dict | None = None):
    """Generate the NLI analogue; returns TaskData with input_ids, segment_ids, lengths, labels per split."""
    sizes = resolve_sizes(TASK, DEFAULT_SIZES, sizes)
    params = resolve_params(TASK, DEFAULT_PARAMS, params)
    for name in ("premise_len", "mismatched_premise_len"):
        check_range(TASK, name, params[name], 1)
    check_range(TASK, "hypothesis_len", params["hypothesis_len"], 1)
    check_range(TASK, "hard_premise_len", params["hard_premise_len"], 1)
    check_range(TASK, "hard_hypothesis_len", params["hard_hypothesis_len"], 1)
    hard_share = params["hard_share"]
    if not (isinstance(hard_share, (int, float)) and 0 <= hard_share < 1):
        raise DataError(f"{TASK}: hard_share={hard_share!r} must be a number in [0, 1)")
    antonym = antonym_table(params["rule_seed"])
    # the mismatched "genre" is part of the task: its word ranks come from the rule, not the data seed
    mismatched_unigram = zipf_probabilities(
        len(CLS_VOCAB.group("content")), params["mismatched_zipf"], rule_rng(params["rule_seed"], TASK + "-mismatched")
    )

    def make_split(rng, split, n):
        if split in SHIFTED_SPLITS:
            premise_len, unigram = params["mismatched_premise_len"], mismatched_unigram
        else:
            premise_len, unigram = params["premise_len"], None
        mixed = hard_share > 0 and split not in SHIFTED_SPLITS

        def example(y):
            if mixed and rng.random() < hard_share:  # drawn only when mixed: hard_share 0 keeps the data
                return _make_example(
                    rng, y, params["hard_premise_len"], params["hard_hypothesis_len"], unigram, antonym
                )
            return _make_example(rng, y, premise_len, params["hypothesis_len"], unigram, antonym)

        return labelled_split(balanced_labels(rng, n, len(LABEL_NAMES)), example, pair=True)

    extra = {"antonym": antonym.tolist(), "shifted_splits": sorted(SHIFTED_SPLITS & set(sizes))}
    return KIND.build(seed, sizes, params, make_split, extra)
