"""One-attention-layer models for synthetic sequence tasks, and a low-rank single head.

These are the models of the theory of param_allocation (Yu et al. 2025; catalog §1.2, §1.4), kept apart from the
`Transformer` family on purpose: the theory's layer reads continuous vectors x_t ∈ R^d (not token
ids), and its "ALiBi-type" heads have no content query/key at all: head h attends with weights
∝ exp(−β_h (t − s)) over s ≤ t, with a learnable slope β_h > 0. Such a pattern does not depend on
the input, so it is one [H, T, T] matrix per forward pass shared by the whole batch, and a layer
costs B·T²·D multiply-adds whatever the number of heads H: this is what makes a sweep of H at a
fixed width D = H·d_h affordable on a CPU. The family's `Attention` stays as it is.

`ShallowAttentionModel` (pre-LN, one layer):
    h₀ = E(x) [+ P_t]                          token embedding or linear map of vectors; P only for "learned"
    h₁ = h₀ + W_O · Concat_h(A_h · (LN(h₀) W_V,h))
    h₂ = h₁ + MLP(LN(h₁))                       (no MLP when d_ff = 0)
    out = W_r · LN(h₂)                          [B, T, output_size]
Positions:
    "alibi"   A_h[t, s] = softmax_{s ≤ t}(−β_h (t − s)), β_h = exp(θ_h) learnable, no W_Q, W_K.
    "learned" A_h = softmax(Q_h K_hᵀ/√d_h + causal mask), content QK on inputs with a learned absolute
              position embedding P (the standard Transformer layer).
No biases in attention, so a head of dimension d_h has exactly 2·d_model·d_h (alibi) or
4·d_model·d_h (learned) weights and the budget D = H·d_h fixes the attention parameter count.
A head mask (``head_mask``: [H], or [B, H, T] per query position) multiplies each head's context
before W_O, as the family's `Attention` does, so that heads can be removed or their importance read.

`LowRankHead`: the student of the saturation experiment. Its logits are
(q W_Q)(k W_K)ᵀ/√r with W_Q, W_K ∈ R^{d×r}, and its output is Σ_s p′_s v_s with the teacher's values.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.models.config import ConfigError

SHALLOW_POSITIONS = ("alibi", "learned")
INPUT_KINDS = ("tokens", "vectors")


@dataclass(frozen=True)
class ShallowConfig:
    """A one-layer attention model (see module docstring).

    input_kind:   "tokens" (an embedding of `input_size` ids) or "vectors" (a linear map from R^input_size)
    output_size:  outputs per position (classes × targets, or the target dimension)
    d_model:      residual width
    n_heads, head_dim: the attention layer; the budget is D = n_heads · head_dim
    d_ff:         hidden width of the ReLU MLP (0: no MLP)
    max_seq_len:  longest sequence (size of the learned position table)
    position:     "alibi" (learnable slopes, no content QK) or "learned" (content QK + absolute positions)
    slope_range:  (lo, hi): initial ALiBi slopes are 2^u for u evenly spaced (cell centres) in [lo, hi]
    init_std:     std of the normal init of every weight matrix and embedding
    """

    input_kind: str
    input_size: int
    output_size: int
    d_model: int = 64
    n_heads: int = 4
    head_dim: int = 16
    d_ff: int = 256
    max_seq_len: int = 64
    position: str = "alibi"
    slope_range: tuple[float, float] = (-3.0, 1.0)
    init_std: float = 0.02

    def __post_init__(self) -> None:
        if self.input_kind not in INPUT_KINDS:
            raise ConfigError(f"shallow model: input_kind={self.input_kind!r}; choose one of: {', '.join(INPUT_KINDS)}")
        if self.position not in SHALLOW_POSITIONS:
            raise ConfigError(
                f"shallow model: position={self.position!r}; choose one of: {', '.join(SHALLOW_POSITIONS)}"
            )
        for name in ("input_size", "output_size", "d_model", "n_heads", "head_dim", "max_seq_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"shallow model: {name}={value!r} must be a positive integer")
        if not isinstance(self.d_ff, int) or self.d_ff < 0:
            raise ConfigError(f"shallow model: d_ff={self.d_ff!r} must be an integer ≥ 0")
        lo, hi = self.slope_range
        if not lo <= hi:
            raise ConfigError(f"shallow model: slope_range={self.slope_range} must be (lo, hi) with lo ≤ hi")
        if self.init_std <= 0:
            raise ConfigError(f"shallow model: init_std={self.init_std} must be > 0")

    @classmethod
    def for_stream(
        cls, stream, *, n_heads: int, budget: int, d_model: int, d_ff: int, seq_len: int, position: str
    ) -> ShallowConfig:
        """The model of a head-count sweep on `stream` (a repro.data.streams.SequenceStream): `n_heads` heads of
        dimension budget / n_heads (ValueError unless the head count divides the budget)."""
        if budget % n_heads:
            raise ValueError(f"head count {n_heads} does not divide the budget D={budget}")
        return cls(
            input_kind=stream.input_kind,
            input_size=stream.input_size,
            output_size=stream.output_size,
            d_model=d_model,
            n_heads=n_heads,
            head_dim=budget // n_heads,
            d_ff=d_ff,
            max_seq_len=seq_len,
            position=position,
        )

    @property
    def budget(self) -> int:
        return self.n_heads * self.head_dim

    def to_dict(self) -> dict:
        d = asdict(self)
        d["slope_range"] = list(self.slope_range)
        return d


def initial_slopes(n_heads: int, slope_range: tuple[float, float]) -> Tensor:
    """β_h = 2^{u_h}, u_h = lo + (hi − lo)(h + ½)/H: log-evenly spread slopes, [H]."""
    lo, hi = slope_range
    u = lo + (hi - lo) * (torch.arange(n_heads, dtype=torch.float64) + 0.5) / n_heads
    return (2.0**u).float()


def alibi_pattern(slopes: Tensor, length: int) -> Tensor:
    """A_h[t, s] = softmax over s ≤ t of −β_h (t − s), [H, T, T] (zero above the diagonal)."""
    t = torch.arange(length, device=slopes.device)
    distance = (t[:, None] - t[None, :]).to(slopes.dtype)  # [T, T]
    logits = -slopes[:, None, None] * distance
    logits = logits.masked_fill(distance < 0, float("-inf"))
    return torch.softmax(logits, dim=-1)


class ShallowAttention(nn.Module):
    """The attention sub-layer of `ShallowAttentionModel`: [B, T, d_model] -> [B, T, d_model]."""

    def __init__(self, cfg: ShallowConfig):
        super().__init__()
        self.position = cfg.position
        self.n_heads, self.head_dim = cfg.n_heads, cfg.head_dim
        self.value = nn.Linear(cfg.d_model, cfg.budget, bias=False)
        self.out = nn.Linear(cfg.budget, cfg.d_model, bias=False)
        if cfg.position == "alibi":
            self.log_slope = nn.Parameter(initial_slopes(cfg.n_heads, cfg.slope_range).log())  # θ_h, β_h = e^θ
        else:
            self.query = nn.Linear(cfg.d_model, cfg.budget, bias=False)
            self.key = nn.Linear(cfg.d_model, cfg.budget, bias=False)

    @property
    def slopes(self) -> Tensor:
        return self.log_slope.exp()

    def _split(self, x: Tensor) -> Tensor:  # [B, T, H·dh] -> [B, H, T, dh]
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)

    def logits(self, x: Tensor) -> Tensor:
        """Pre-softmax scores [B, H, T, T] of the "learned" variant (the causal mask not applied)."""
        if self.position != "learned":
            raise ValueError("only the 'learned' variant has content logits")
        q, k = self._split(self.query(x)), self._split(self.key(x))
        return q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)

    def forward(self, x: Tensor, head_mask: Tensor | None = None) -> Tensor:
        B, T, _ = x.shape
        v = self._split(self.value(x))  # [B, H, T, dh]
        if self.position == "alibi":
            # One [T,T] pattern per head for the whole batch: H matmuls [T,T] @ [T, B·dh]
            # (a broadcast [H,T,T] @ [B,H,T,dh] would run B·H tiny products instead).
            pattern = alibi_pattern(self.slopes, T).to(v.dtype)  # [H, T, T]
            stacked = v.permute(1, 2, 0, 3).reshape(self.n_heads, T, B * self.head_dim)
            ctx = (pattern @ stacked).view(self.n_heads, T, B, self.head_dim).permute(2, 0, 1, 3)
        else:
            q, k = self._split(self.query(x)), self._split(self.key(x))
            ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if head_mask is not None:
            ctx = ctx * (head_mask[None, :, None, None] if head_mask.dim() == 1 else head_mask[..., None]).to(ctx.dtype)
        return self.out(ctx.transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim))


class ShallowAttentionModel(nn.Module):
    """Embedding, one pre-LN attention layer, an optional MLP and a linear readout (module docstring)."""

    def __init__(self, cfg: ShallowConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.embed = (
            nn.Embedding(cfg.input_size, d) if cfg.input_kind == "tokens" else nn.Linear(cfg.input_size, d, bias=False)
        )
        self.pos_emb = nn.Embedding(cfg.max_seq_len, d) if cfg.position == "learned" else None
        self.attn_norm = nn.LayerNorm(d)
        self.attn = ShallowAttention(cfg)
        if cfg.d_ff > 0:
            self.mlp_norm = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, cfg.d_ff), nn.ReLU(), nn.Linear(cfg.d_ff, d))
        else:
            self.mlp = None
        self.out_norm = nn.LayerNorm(d)
        self.readout = nn.Linear(d, cfg.output_size)
        for name, param in self.named_parameters():
            if param.dim() >= 2:
                nn.init.normal_(param, std=cfg.init_std)
            elif name.endswith("bias") and "norm" not in name:
                nn.init.zeros_(param)

    def embed_inputs(self, inputs: Tensor) -> Tensor:  # [B, T] ids or [B, T, d_in] -> [B, T, d_model]
        T = inputs.shape[1]
        if T > self.cfg.max_seq_len:
            raise ValueError(f"sequence length {T} exceeds max_seq_len={self.cfg.max_seq_len}")
        h = self.embed(inputs)
        if self.pos_emb is not None:
            h = h + self.pos_emb.weight[:T]
        return h

    def forward(self, inputs: Tensor, head_mask: Tensor | None = None) -> Tensor:  # -> [B, T, output_size]
        h = self.embed_inputs(inputs)
        h = h + self.attn(self.attn_norm(h), head_mask)
        if self.mlp is not None:
            h = h + self.mlp(self.mlp_norm(h))
        return self.readout(self.out_norm(h))

    @torch.no_grad()
    def attention_logits(self, inputs: Tensor) -> Tensor:
        """Content logits [B, H, T, T] of the "learned" variant, for diagnosing temperature (catalog P4)."""
        return self.attn.logits(self.attn_norm(self.embed_inputs(inputs)))


def attention_parameters(model: ShallowAttentionModel) -> int:
    """Weights of the attention sub-layer (W_V, W_O, and W_Q, W_K or the H slopes)."""
    return sum(p.numel() for p in model.attn.parameters())


class LowRankHead(nn.Module):
    """A single attention head with query/key dimension r and given values (module docstring).

    forward(queries [S, Q, d], keys [S, L, d], values [S, L, dv]) -> outputs [S, Q, dv].
    """

    def __init__(self, dim: int, rank: int, init_std: float | None = None):
        super().__init__()
        if not 1 <= rank:
            raise ConfigError(f"LowRankHead: rank={rank} must be ≥ 1")
        self.dim, self.rank = dim, rank
        std = init_std if init_std is not None else 1.0 / math.sqrt(dim)
        self.w_query = nn.Parameter(torch.randn(dim, rank) * std)
        self.w_key = nn.Parameter(torch.randn(dim, rank) * std)

    @classmethod
    def from_bilinear(cls, bilinear: Tensor, rank: int) -> LowRankHead:
        """The truncated-SVD student of a teacher with logits qᵀ A k (catalog §1.6).

        A = U Σ Vᵀ; W_Q = U_r Σ_r^{1/2} s, W_K = V_r Σ_r^{1/2} s with s = r^{1/4}, so that
        W_Q W_Kᵀ/√r = A_r exactly: the scale factor undoes the student's own 1/√r. (A teacher head
        that itself divides by √d_h has A = W_Q W_Kᵀ/√d_h, which gives the catalog's s = (r/d_h)^{1/4}.)
        """
        dim = bilinear.shape[0]
        if bilinear.shape != (dim, dim) or not 1 <= rank <= dim:
            raise ConfigError(f"LowRankHead.from_bilinear: need a square A and 1 ≤ rank ≤ {dim}")
        u, sigma, vh = torch.linalg.svd(bilinear.double())
        root = sigma[:rank].sqrt() * rank**0.25
        head = cls(dim, rank)
        with torch.no_grad():
            head.w_query.copy_((u[:, :rank] * root).to(head.w_query.dtype))
            head.w_key.copy_((vh[:rank].T * root).to(head.w_key.dtype))
        return head

    def logits(self, queries: Tensor, keys: Tensor) -> Tensor:  # -> [S, Q, L]
        return (queries @ self.w_query) @ (keys @ self.w_key).transpose(1, 2) / math.sqrt(self.rank)

    def bilinear(self) -> Tensor:
        """The effective A′ = W_Q W_Kᵀ/√r, [d, d] (rank ≤ r)."""
        return self.w_query @ self.w_key.T / math.sqrt(self.rank)

    def forward(self, queries: Tensor, keys: Tensor, values: Tensor) -> Tensor:
        return torch.softmax(self.logits(queries, keys), dim=-1) @ values


__all__ = [
    "INPUT_KINDS",
    "SHALLOW_POSITIONS",
    "LowRankHead",
    "ShallowAttention",
    "ShallowAttentionModel",
    "ShallowConfig",
    "alibi_pattern",
    "attention_parameters",
    "initial_slopes",
]
