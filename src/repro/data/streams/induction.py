"""The first step of an induction head: copy the previous tokens (Wang, Yu, E & Wu, arXiv 2410.11474).

Tokens x_t i.i.d. uniform over V symbols; position t has K labels x_{t−1}, …, x_{t−K} (the
previous-token head for K = 1; K > 1 concatenates several lags). Labels before the sequence starts
are IGNORE_INDEX. The model outputs K·V logits per position, one block of V per lag.
"""

from __future__ import annotations

import torch
from torch import Tensor

from repro.data.streams import params as stream_params
from repro.data.streams.common import IGNORE_INDEX, SequenceStream, shift


class PreviousTokens(SequenceStream):
    input_kind = "tokens"
    target_kind = "classification"

    def __init__(self, seed: int, vocab: int = 16, lags: int = 2):
        super().__init__(seed, stream_params.previous_tokens, vocab=vocab, lags=lags)
        self.input_size = self.classes = vocab
        self.n_targets = lags
        self.output_size = lags * vocab

    def lag_profile(self) -> dict:
        """One-hot inputs (d = V, B = 1), lags 1..K, each copied by a selection of norm 1."""
        return {"input_dim": self.vocab, "lags": list(range(1, self.lags + 1)), "weights": [1.0] * self.lags}

    def labels(self, tokens: Tensor) -> Tensor:  # [B, T] -> [B, T, K]
        return torch.stack([shift(tokens, m, fill=IGNORE_INDEX) for m in range(1, self.lags + 1)], dim=-1)

    def sample(self, n: int, seq_len: int, gen: torch.Generator) -> dict[str, Tensor]:
        self.check_length(seq_len)
        tokens = torch.randint(0, self.vocab, (n, seq_len), generator=gen)
        return {"inputs": tokens, "labels": self.labels(tokens)}
