"""Small building blocks: norms, the MLP, scalar gains and positional encodings."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight (torch's fused rms_norm).

    The official simplified-transformers code divides by ‖x‖/√d + eps instead; the two
    agree up to eps, and we follow the standard form (catalog simplified_blocks §1).
    """

    def __init__(self, d: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def make_norm(kind: str, d: int, eps: float) -> nn.Module | None:
    """A norm module, or None for kind 'none' (callers skip it)."""
    if kind == "layernorm":
        return nn.LayerNorm(d, eps=eps)
    if kind == "rmsnorm":
        return RMSNorm(d, eps)
    if kind == "none":
        return None
    raise ValueError(f"unknown norm kind {kind!r}")


class MLP(nn.Module):
    """σ(x W¹) W², or the gated form (σ(x W_g) ⊙ x W_u) W² for swiglu/geglu."""

    def __init__(self, d: int, d_ff: int, activation: str, bias: bool, leaky_slope: float = 0.0) -> None:
        super().__init__()
        self.gated = activation in ("swiglu", "geglu")
        self.fc_in = nn.Linear(d, 2 * d_ff if self.gated else d_ff, bias=bias)
        self.fc_out = nn.Linear(d_ff, d, bias=bias)
        self.activation = activation
        self.leaky_slope = leaky_slope

    def act(self, x: torch.Tensor) -> torch.Tensor:
        kind = self.activation
        if kind == "relu":
            return F.relu(x)
        if kind == "gelu" or kind == "geglu":
            return F.gelu(x)
        if kind == "swiglu":
            return F.silu(x)
        if kind == "gelu_tanh":  # GPT-2's and Phi's "gelu_new"
            return F.gelu(x, approximate="tanh")
        return F.leaky_relu(x, self.leaky_slope)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B,T,d] -> [B,T,d]
        h = self.fc_in(x)
        if self.gated:
            gate, up = h.chunk(2, dim=-1)
            h = self.act(gate) * up
        else:
            h = self.act(h)
        return self.fc_out(h)


class Gain(nn.Module):
    """A scalar weight on a residual branch: trainable parameter or fixed number.

    Fixed gains of exactly 1 are skipped in `forward` so the default Pre-LN block does
    no extra multiplications. Trainable gains are named ``gain`` so the optimiser
    excludes them from weight decay.
    """

    def __init__(self, value: float, trainable: bool) -> None:
        super().__init__()
        self.fixed = None if trainable else float(value)
        if trainable:
            self.gain = nn.Parameter(torch.tensor(float(value)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fixed is None:
            return self.gain * x
        return x if self.fixed == 1.0 else self.fixed * x

    def value(self) -> float:
        return self.fixed if self.fixed is not None else float(self.gain.detach())


def sinusoidal_table(n_positions: int, d: int) -> torch.Tensor:
    """The fixed sin/cos table of Vaswani et al. (2017), [n_positions, d]."""
    position = torch.arange(n_positions, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    table = torch.zeros(n_positions, d, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq[: d // 2])
    return table.float()


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi head slopes m_h = 2^(-8h/H), h = 1..H (Press et al. 2022), [H]."""
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)])


def alibi_bias(slopes: torch.Tensor, t_q: int, t_k: int, causal: bool) -> torch.Tensor:
    """Additive logit bias −m_h·distance, [H, t_q, t_k] (|i−j| when bidirectional)."""
    i = torch.arange(t_q, device=slopes.device)[:, None]
    j = torch.arange(t_k, device=slopes.device)[None, :]
    distance = (i - j).clamp(min=0) if causal else (i - j).abs()
    return -slopes[:, None, None] * distance.to(slopes.dtype)


def rope_tables(t: int, head_dim: int, device, dtype, base: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables for rotary embeddings, each [t, head_dim/2] (frequencies base^(-2i/head_dim))."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float64) / head_dim))
    angles = torch.arange(t, device=device, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate pairs (x_2i, x_2i+1) of x [B,H,T,dh] by position-dependent angles."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return rotated.flatten(-2)
