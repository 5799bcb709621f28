"""What every sequence stream provides, and the sampling helpers they share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from repro.data.streams.params import check_length, check_positive
from repro.training.seeding import generator

IGNORE_INDEX = -100  # label of a position without a target (as F.cross_entropy's ignore_index)


class SequenceStream:
    """A task on white-noise sequences: inputs [B, T] token ids or [B, T, d] vectors, targets per position.

    Subclasses set:
      input_kind   "tokens" or "vectors"
      input_size   vocabulary size or vector dimension
      target_kind  "classification" (integer labels [B, T, K], IGNORE_INDEX where undefined; the
                   model outputs K·classes logits per position) or "regression" (targets [B, T, m],
                   with a float mask [B, T] of defined positions)
      classes      labels per classification target (0 for regression)
      n_targets    K, classification targets per position (1 for regression)
      output_size  what the model must output per position: K·classes or m
      max_lag      the largest lag the targets read (positions t < max_lag are partly undefined)
    and implement `sample`. They pass their parameters by name with the function of
    `repro.data.streams.params` that checks them; the base keeps them as attributes, sets `max_lag`
    from the check and returns them from `params`.
    """

    input_kind: str
    input_size: int
    target_kind: str
    classes: int = 0
    n_targets: int = 1
    output_size: int
    max_lag: int

    def __init__(self, seed: int, check: Callable[..., int], **params: Any):
        self.seed = int(seed)
        self.max_lag = check(**params)
        self._params = params
        for name, value in params.items():
            setattr(self, name, value)

    def rule_generator(self, purpose: str = "rule") -> torch.Generator:
        """The stream that fixes this task instance (tables, rotations), a function of the seed only."""
        return generator(self.seed, type(self).__name__, purpose)

    def sample(self, n: int, seq_len: int, gen: torch.Generator) -> dict[str, Tensor]:
        raise NotImplementedError

    def params(self) -> dict:
        """JSON-able parameters that, with the seed, define the task instance."""
        return dict(self._params)

    def lag_profile(self) -> dict:
        """The lag structure the approximation bound needs (`repro.papers.param_allocation.theory.allocation`):
        input_dim d, the lags m the target reads, and a weight a_m = ‖ρ_m‖₂·B per lag."""
        raise NotImplementedError

    def fingerprint(self) -> dict:
        return {"stream": type(self).__name__, "seed": self.seed, **self.params()}

    def check_length(self, seq_len: int) -> None:
        check_length(type(self).__name__, self.max_lag, seq_len)


def sphere(gen: torch.Generator, *shape: int, radius: float = 1.0) -> Tensor:
    """Points uniform on the sphere of the given radius in R^shape[-1], float32 [*shape]."""
    x = torch.randn(*shape, generator=gen, dtype=torch.float64)
    return (radius * x / x.norm(dim=-1, keepdim=True)).float()


def random_orthogonal(dim: int, gen: torch.Generator) -> Tensor:
    """A Haar-random orthogonal matrix [dim, dim], float32."""
    q, r = torch.linalg.qr(torch.randn(dim, dim, generator=gen, dtype=torch.float64))
    return (q * torch.sign(torch.diagonal(r))).float()


def shift(x: Tensor, lag: int, fill: float | int = 0) -> Tensor:
    """x delayed by `lag` positions along dim 1: out[:, t] = x[:, t − lag], `fill` where t < lag."""
    if lag < 0:
        raise ValueError(f"lag must be ≥ 0, got {lag}")
    if lag == 0:
        return x
    out = torch.full_like(x, fill)
    out[:, lag:] = x[:, :-lag]
    return out


__all__ = ["IGNORE_INDEX", "SequenceStream", "check_positive", "random_orthogonal", "shift", "sphere"]
