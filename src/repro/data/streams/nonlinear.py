"""A nonlinear sequence target: y_t = tanh(s · Σ_{m=1}^{M} Q_m x_{t−m}).

Inputs as in the continuous n-gram task (uniform on the sphere of radius √d, zero before the
start); Q_m fixed random rotations; s = 1/√M keeps the pre-activation at unit variance per
coordinate, so tanh is neither linear nor saturated. The attention layer must extract the lags and
the MLP after it must learn the nonlinearity (the "nonlinear sequence modeling" case of the paper,
catalog §1.1).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from repro.data.streams import params as stream_params
from repro.data.streams.common import SequenceStream, random_orthogonal, shift, sphere


class NonlinearLags(SequenceStream):
    input_kind = "vectors"
    target_kind = "regression"

    def __init__(self, seed: int, dim: int = 16, lags: int = 3):
        super().__init__(seed, stream_params.nonlinear_lags, dim=dim, lags=lags)
        self.input_size = self.output_size = dim
        gen = self.rule_generator()
        self.rotations = torch.stack([random_orthogonal(dim, gen) for _ in range(lags)])  # [M, d, d]

    def lag_profile(self) -> dict:
        """The inner linear map: d = dim, lags 1..M, a_m = ‖Q_m/√M‖₂·√d (the FFN term of the
        nonlinear bound is not modelled)."""
        weight = math.sqrt(self.dim) / math.sqrt(self.lags)
        return {"input_dim": self.dim, "lags": list(range(1, self.lags + 1)), "weights": [weight] * self.lags}

    def targets(self, x: Tensor) -> Tensor:  # [B, T, d] -> [B, T, d]
        pre = torch.zeros_like(x)
        for m in range(1, self.lags + 1):
            pre = pre + shift(x, m) @ self.rotations[m - 1].T
        return torch.tanh(pre / math.sqrt(self.lags))

    def sample(self, n: int, seq_len: int, gen: torch.Generator) -> dict[str, Tensor]:
        self.check_length(seq_len)
        x = sphere(gen, n, seq_len, self.dim, radius=math.sqrt(self.dim))
        return {"inputs": x, "targets": self.targets(x), "mask": torch.ones(n, seq_len)}
