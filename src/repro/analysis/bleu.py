"""Corpus BLEU on token ids with sacrebleu, and its per-sentence sufficient statistics.

One BLEU everywhere (catalog sixteen_heads.md §4.12): sentences are written as strings of
token ids separated by spaces and scored by sacrebleu's corpus BLEU-4 with ``tokenize='none'``
(brevity penalty, exp smoothing: sacrebleu's defaults). Bootstrap resampling needs the
score of many resampled corpora; :func:`bleu_from_stats` computes sacrebleu's formula from
summed statistics for a whole batch of resamples at once (tests check it against sacrebleu).

Statistics layout (sacrebleu's): one row per sentence,
``[hyp_len, ref_len, correct_1..correct_4, total_1..total_4]``. :func:`sentence_stats` counts them
itself (the same counts as sacrebleu, which tests check): head sweeps score one test set hundreds of
times, and sacrebleu re-reads the references at every call.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from sacrebleu.metrics import BLEU

MAX_ORDER = 4
N_STATS = 2 + 2 * MAX_ORDER
_LOG_ZERO = -9999999999.0  # sacrebleu's floored log(0)


def _metric() -> BLEU:
    return BLEU(tokenize="none")


def ids_to_text(ids: Iterable[int], stop_ids: Sequence[int] = (), skip_ids: Sequence[int] = ()) -> str:
    """Token ids as the space-separated string BLEU reads; cut at the first of ``stop_ids``
    (EOS), dropping ``skip_ids`` (BOS, PAD)."""
    stop, skip = set(int(i) for i in stop_ids), set(int(i) for i in skip_ids)
    words = []
    for token in ids:
        token = int(token)
        if token in stop:
            break
        if token not in skip:
            words.append(str(token))
    return " ".join(words)


def sentence_stats(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Per-sentence BLEU statistics, int64 [N, 10] (one reference per sentence)."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    ref_lengths, ref_counts = _reference_side(tuple(references))
    rows = []
    for hypothesis, ref_orders in zip(hypotheses, ref_counts):
        words = hypothesis.split()
        clipped = [sum((hyp & ref).values()) for hyp, ref in zip(_ngram_counts(words), ref_orders)]  # & is min
        rows.append([len(words), 0, *clipped, *(max(len(words) - n, 0) for n in range(MAX_ORDER))])
    stats = np.array(rows, dtype=np.int64).reshape(len(rows), N_STATS)
    stats[:, 1] = ref_lengths
    return stats


def _ngram_counts(words: list[str]) -> list[Counter]:
    """Counts of the 1- to 4-grams of a sentence (BLEU with tokenize='none' splits on whitespace)."""
    return [Counter(zip(*(words[i:] for i in range(n)))) for n in range(1, MAX_ORDER + 1)]


@functools.lru_cache(maxsize=8)
def _reference_side(references: tuple[str, ...]) -> tuple[np.ndarray, list[list[Counter]]]:
    """Lengths and n-gram counts of a reference set, computed once per set."""
    split = [reference.split() for reference in references]
    return np.array([len(words) for words in split], dtype=np.int64), [_ngram_counts(words) for words in split]


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """sacrebleu corpus BLEU (0-100), tokenize='none'."""
    return float(_metric().corpus_score(list(hypotheses), [list(references)]).score)


def bleu_from_stats(stats: np.ndarray) -> np.ndarray:
    """BLEU (0-100) from summed statistics [..., 10]; sacrebleu's compute_bleu, vectorised.

    Exp smoothing: the k-th n-gram order with no match gets precision 100 / (2^k · total);
    an order with no n-grams at all ends the product (its precision and all later ones are 0,
    which makes the score 0); no match at any order gives 0.
    """
    stats = np.asarray(stats, dtype=np.float64)
    sys_len, ref_len = stats[..., 0], stats[..., 1]
    correct, total = stats[..., 2 : 2 + MAX_ORDER], stats[..., 2 + MAX_ORDER :]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(sys_len < ref_len, np.where(sys_len > 0, np.exp(1.0 - ref_len / sys_len), 0.0), 1.0)
    log_sum = np.zeros(sys_len.shape)
    smooth = np.ones(sys_len.shape)
    broken = np.zeros(sys_len.shape, dtype=bool)
    for n in range(MAX_ORDER):
        broken |= total[..., n] == 0
        zero = (correct[..., n] == 0) & ~broken
        smooth = np.where(zero, smooth * 2, smooth)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(zero, 100.0 / (smooth * total[..., n]), 100.0 * correct[..., n] / total[..., n])
            log_p = np.where(broken | (precision <= 0), _LOG_ZERO, np.log(np.where(precision > 0, precision, 1.0)))
        log_sum += log_p
    score = bp * np.exp(log_sum / MAX_ORDER)
    return np.where(correct.sum(axis=-1) == 0, 0.0, score)
