"""The n-gram task on white-noise input (Fig 2 of Yu et al. 2025), in two forms.

discrete:   tokens x_t i.i.d. uniform over V symbols; the label at t is T[x_{t−n+1}, …, x_t] for a
            fixed random table T with V^n entries (values uniform over V). Reading it needs lags
            0..n−1, so the first n−1 positions have no label. Cross-entropy; the Bayes loss is 0.
continuous: vectors x_t i.i.d. uniform on the sphere of radius √d in R^d (unit variance per
            coordinate, ‖x_t‖ ≤ B = √d as the theory assumes); the target is
            y_t = Σ_{m=1}^{M} α_m Q_m x_{t−m} with fixed random rotations Q_m and α_m = e^{−decay·(m−1)},
            x_{t−m} = 0 before the sequence starts (the model cannot see it either).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from repro.data.streams import params as stream_params
from repro.data.streams.common import IGNORE_INDEX, SequenceStream, random_orthogonal, shift, sphere


class DiscreteNGram(SequenceStream):
    input_kind = "tokens"
    target_kind = "classification"

    def __init__(self, seed: int, vocab: int = 8, order: int = 4):
        super().__init__(seed, stream_params.discrete_ngram, vocab=vocab, order=order)
        self.input_size = self.classes = self.output_size = vocab
        self.table = torch.randint(0, vocab, (vocab**order,), generator=self.rule_generator())  # [V^n]

    def lag_profile(self) -> dict:
        """One-hot inputs (d = V, B = 1) and lags 0..n−1, each read by a selection of norm 1 (inferred:
        the table is not linear, so ρ_m has no exact counterpart)."""
        return {"input_dim": self.vocab, "lags": list(range(self.order)), "weights": [1.0] * self.order}

    def labels(self, tokens: Tensor) -> Tensor:  # [B, T] -> [B, T, 1]
        index = torch.zeros_like(tokens)
        for lag in range(self.order - 1, -1, -1):  # x_{t−n+1} is the most significant digit
            index = index * self.vocab + shift(tokens, lag)
        labels = self.table[index]
        labels[:, : self.max_lag] = IGNORE_INDEX
        return labels[..., None]

    def sample(self, n: int, seq_len: int, gen: torch.Generator) -> dict[str, Tensor]:
        self.check_length(seq_len)
        tokens = torch.randint(0, self.vocab, (n, seq_len), generator=gen)
        return {"inputs": tokens, "labels": self.labels(tokens)}


class ContinuousNGram(SequenceStream):
    input_kind = "vectors"
    target_kind = "regression"

    def __init__(self, seed: int, dim: int = 16, lags: int = 4, decay: float = 0.0):
        super().__init__(seed, stream_params.continuous_ngram, dim=dim, lags=lags, decay=float(decay))
        self.input_size = self.output_size = dim
        gen = self.rule_generator()
        self.rotations = torch.stack([random_orthogonal(dim, gen) for _ in range(lags)])  # [M, d, d]
        self.weights = torch.tensor([math.exp(-self.decay * m) for m in range(lags)])  # α_1..α_M

    def lag_profile(self) -> dict:
        """d = dim, lags 1..M, a_m = ‖α_m Q_m‖₂·B = α_m·√d (B = √d is the input radius)."""
        radius = math.sqrt(self.dim)
        return {
            "input_dim": self.dim,
            "lags": list(range(1, self.lags + 1)),
            "weights": [float(a) * radius for a in self.weights],
        }

    def targets(self, x: Tensor) -> Tensor:  # [B, T, d] -> [B, T, d]
        y = torch.zeros_like(x)
        for m in range(1, self.lags + 1):
            y = y + self.weights[m - 1] * shift(x, m) @ self.rotations[m - 1].T
        return y

    def sample(self, n: int, seq_len: int, gen: torch.Generator) -> dict[str, Tensor]:
        self.check_length(seq_len)
        x = sphere(gen, n, seq_len, self.dim, radius=math.sqrt(self.dim))
        return {"inputs": x, "targets": self.targets(x), "mask": torch.ones(n, seq_len)}
