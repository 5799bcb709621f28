"""Reference levels: how far a model got, against what predictors with no learning of their own reach.

A language model is read against the cross-entropy of n-gram models estimated on the same training
split and evaluated on the same held-out split, in nats per token:

* unigram: p(w) = (c(w) + 1) / (N + V), add-one over the vocabulary of V ids;
* bigram: Witten-Bell interpolation with that unigram, p(w | v) = (c(v, w) + T(v) p(w)) / (c(v) + T(v)),
  where T(v) is the number of distinct tokens seen after v (p(w) alone for a v never seen).

Both have no free parameter to tune. Pairs never cross a file boundary, as the training chunks do not;
every token of the held-out split but each file's first is predicted (the first has no predecessor).
`chunk_levels` scores exactly what a language model is evaluated on instead: the targets of its
held-out chunks, each predicted from the token before it in the same chunk (a chunk's first token is
no target, as it is none for the model).

A classifier is read against chance (uniform guessing), the constant predictor (always the most
frequent class of the evaluated split, scored with the task's metric; a classifier with every head
pruned is one, of some class: the score of each is given too) and the ceiling (a perfect score),
see `classification_levels`.
"""

from __future__ import annotations

import numpy as np

from repro.analysis.metrics import score


def file_pairs(tokens: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) token of every adjacent pair inside a file of a token stream."""
    tokens = np.asarray(tokens, dtype=np.int64)
    starts = np.zeros(len(tokens), dtype=bool)
    starts[np.asarray(offsets[:-1], dtype=np.int64)] = True  # a file's first token has no predecessor
    later = ~starts[1:]
    return tokens[:-1][later], tokens[1:][later]


def ngram_levels(
    train: tuple[np.ndarray, np.ndarray], held_out: tuple[np.ndarray, np.ndarray], vocab_size: int
) -> dict[str, float]:
    """Unigram and bigram cross-entropy (nats/token) of `held_out` under models counted on `train`;
    each split is (tokens, offsets) of a token stream (see the module docstring)."""
    V = int(vocab_size)
    train_tokens = np.asarray(train[0], dtype=np.int64)
    counts = np.bincount(train_tokens, minlength=V).astype(np.float64)
    unigram = (counts + 1.0) / (counts.sum() + V)

    prev, nxt = file_pairs(*train)
    pair_codes, pair_counts = np.unique(prev * V + nxt, return_counts=True)
    context_counts = np.bincount(prev, minlength=V).astype(np.float64)  # c(v): pairs starting with v
    followers = np.bincount(pair_codes // V, minlength=V).astype(np.float64)  # T(v)

    v, w = file_pairs(*held_out)
    codes = v * V + w
    at = np.searchsorted(pair_codes, codes).clip(max=max(len(pair_codes) - 1, 0))
    seen = pair_codes[at] == codes if len(pair_codes) else np.zeros(len(codes), dtype=bool)
    joint = np.where(seen, pair_counts[at] if len(pair_counts) else 0, 0).astype(np.float64)
    c_v, t_v, p_w = context_counts[v], followers[v], unigram[w]
    with np.errstate(invalid="ignore", divide="ignore"):
        bigram = np.where(c_v > 0, (joint + t_v * p_w) / (c_v + t_v), p_w)
    return {
        "unigram_nats": float(-np.log(p_w).mean()),
        "bigram_nats": float(-np.log(bigram).mean()),
        "predicted_tokens": int(len(w)),
    }


def chunk_levels(train: tuple[np.ndarray, np.ndarray], chunks: np.ndarray, vocab_size: int) -> dict[str, float]:
    """`ngram_levels` of held-out `chunks` [n, T] (token ids): the T-1 targets of each chunk, under models
    counted on `train` (tokens, offsets), with pairs inside a chunk only."""
    chunks = np.asarray(chunks, dtype=np.int64)
    if chunks.ndim != 2 or chunks.shape[1] < 2 or len(chunks) == 0:
        raise ValueError(f"chunks must be [n >= 1, T >= 2] token ids, got shape {chunks.shape}")
    n, length = chunks.shape
    offsets = np.arange(n + 1, dtype=np.int64) * length  # each chunk a file of its own
    return ngram_levels(train, (chunks.reshape(-1), offsets), vocab_size)


def classification_levels(labels: np.ndarray, n_classes: int, metric: str) -> dict[str, float]:
    """Chance, constant-predictor and ceiling scores, in points, of a classification split under `metric`
    (accuracy, F1 of class 1, or MCC: see repro.analysis.metrics). Chance is uniform guessing: 100/K for
    accuracy, 0 for MCC, and for F1 the expected score p/(p + 1/2) of a prevalence p of class 1."""
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(labels, minlength=n_classes)
    majority = int(counts.argmax())
    by_class = [float(score(metric, np.full_like(labels, k), labels)) for k in range(n_classes)]
    prevalence = counts[1] / counts.sum() if n_classes > 1 else 0.0
    chance = {"accuracy": 100.0 / n_classes, "mcc": 0.0, "f1": 100.0 * prevalence / (prevalence + 0.5)}[metric]
    return {
        "chance": float(chance),
        "constant": by_class[majority],
        "constant_by_class": by_class,
        "ceiling": 100.0,
        "majority_class": majority,
    }
