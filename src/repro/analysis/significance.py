"""Paired significance tests between a model and its baseline on the same test examples.

- BLEU: paired bootstrap resampling (Koehn 2004), computed as sacrebleu's ``paired_bs`` (the
  Moses script ``bootstrap-hypothesis-difference-significance.pl``): resample sentences with
  replacement; the statistic is |BLEU_sys − BLEU_base| of each resample centred on its mean;
  p = (#{resamples whose centred statistic > the observed |Δ|} + 1) / (resamples + 1).
  The paper used compare-mt with 1000 resamples and p < 0.01. One deviation: two systems with
  identical per-example statistics get p = 1 (sacrebleu's formula gives 1/(resamples + 1) there,
  which would call a masked model that changed nothing "significant").
- Accuracy: McNemar's exact test on the paired per-example correctness (a two-sided binomial
  test on the discordant pairs, ``scipy.stats.binomtest``). The paper says only "t-test";
  McNemar's is the standard exact paired test for two classifiers on one test set.
- Any other per-example metric (F1, MCC): the same paired bootstrap as BLEU, on that metric.

Every bootstrap takes its resample indices from ``bootstrap_indices``, so all comparisons of one
analysis use the same resamples, as sacrebleu does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats as scipy_stats

from repro.analysis.bleu import bleu_from_stats


def bootstrap_indices(n_examples: int, n_resamples: int, seed: int) -> np.ndarray:
    """Resample indices [n_resamples, n_examples], drawn with replacement from a seeded generator."""
    if n_examples < 1 or n_resamples < 1:
        raise ValueError(f"need n_examples >= 1 and n_resamples >= 1, got {n_examples}, {n_resamples}")
    return np.random.default_rng(seed).integers(0, n_examples, size=(n_resamples, n_examples))


def paired_bootstrap_p(
    base: np.ndarray,
    system: np.ndarray,
    score: Callable[[np.ndarray], np.ndarray],
    indices: np.ndarray,
) -> float:
    """Moses/sacrebleu paired-bootstrap p-value of the difference between two systems.

    base, system: per-example statistics [N, k] (or [N]) whose sums over examples ``score`` turns
    into the corpus metric; ``score`` must accept a batch [R, k] of summed statistics.
    """
    base, system = np.asarray(base), np.asarray(system)
    if base.shape != system.shape:
        raise ValueError(f"paired statistics differ in shape: {base.shape} vs {system.shape}")
    if np.array_equal(base, system):
        return 1.0
    observed = abs(float(score(system.sum(axis=0))) - float(score(base.sum(axis=0))))
    sample_base = score(base[indices].sum(axis=1))  # [R]
    sample_sys = score(system[indices].sum(axis=1))
    diffs = np.abs(sample_sys - sample_base)
    centred = diffs - diffs.mean()
    return float((np.sum(centred > observed) + 1) / (len(centred) + 1))


def paired_bleu_p(base_stats: np.ndarray, system_stats: np.ndarray, indices: np.ndarray) -> float:
    """Paired bootstrap p-value of a BLEU difference from per-sentence statistics [N, 10]."""
    return paired_bootstrap_p(base_stats, system_stats, bleu_from_stats, indices)


def mcnemar_p(base_correct: np.ndarray, system_correct: np.ndarray) -> float:
    """McNemar's exact two-sided p-value for paired 0/1 correctness vectors [N]."""
    base_correct = np.asarray(base_correct, dtype=bool)
    system_correct = np.asarray(system_correct, dtype=bool)
    if base_correct.shape != system_correct.shape:
        raise ValueError(f"paired vectors differ in shape: {base_correct.shape} vs {system_correct.shape}")
    only_base = int(np.sum(base_correct & ~system_correct))
    only_system = int(np.sum(~base_correct & system_correct))
    if only_base + only_system == 0:
        return 1.0
    return float(scipy_stats.binomtest(only_base, only_base + only_system, 0.5).pvalue)
