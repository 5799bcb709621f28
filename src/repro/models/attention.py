"""Multi-head attention with every variant the four papers need.

Per head h (He & Hofmann 2024, Eqs. 2-6):
  softmax:  ctx_h = A_h V_h,                         A_h = softmax(Q_h K_hᵀ/√d_h + M)
  eq4:      ctx_h = (α_h I + β_h A_h) V_h            (Value-SkipInit)
  shaped:   ctx_h = (α_h I + β_h A_h − γ_h C) V_h    C = softmax(M), the mask alone
then  out = Concat_h(ξ_h · ctx_h) W^P, with ξ the head mask (Michel et al. 2019, §2).

Two equal code paths. The fast path keeps PyTorch's fused scaled_dot_product_attention
and computes the extra terms in O(T·d): α V + β SDPA(Q,K,V) − γ (C V), where C V is a
running mean over time (causal) or a mean (bidirectional), respecting padding. The
explicit path builds the T×T matrices; it runs only when a hook reads or edits the
attention pattern (``hook_pattern``). Tests check that the two agree in float64.

Heads can be removed physically (`prune`): rows of W^Q, W^K, W^V and columns of W^P are
sliced and `head_ids` remembers the original index of every kept head, so head masks
are always indexed by original head ids.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from repro.models.config import BlockSpec, TransformerConfig
from repro.models.hooks import HookPoint
from repro.models.layers import alibi_bias, alibi_slopes, apply_rope, rope_tables


class MatrixMap(nn.Module):
    """A value or projection matrix W^V / W^P in one of four forms.

    linear:     a trainable matrix, N(0, init_std²) at init.
    orthogonal: a trainable matrix, (semi-)orthogonal at init.
    identity:   no matrix at all (the map is skipped, not multiplied by I).
    reparam:    W = α·W_init + β·ΔW (Eq. 6): W_init fixed (I or orthogonal), ΔW trainable
                and 0 at init, α and β scalars named *gain* (trainable or fixed).
    Weights are stored as [d_out, d_in] like nn.Linear.
    """

    def __init__(self, kind: str, d_in: int, d_out: int, bias: bool, cfg: TransformerConfig, spec: BlockSpec):
        super().__init__()
        self.kind = kind
        if kind == "identity":
            return
        if kind == "reparam":
            init = torch.eye(d_out, d_in) if spec.reparam_init == "identity" else _orthogonal(d_out, d_in)
            self.register_buffer("w_init", init)
            self.delta = nn.Parameter(torch.zeros(d_out, d_in))
            for name, init in (("skip_gain", spec.reparam_alpha), ("resid_gain", spec.reparam_beta)):
                value = torch.tensor(float(init))
                if spec.reparam_trainable:
                    self.register_parameter(name, nn.Parameter(value))
                else:
                    self.register_buffer(name, value)
        elif kind == "orthogonal":
            self.weight = nn.Parameter(_orthogonal(d_out, d_in))
        else:
            self.weight = nn.Parameter(torch.randn(d_out, d_in) * cfg.init_std)
        self.bias = nn.Parameter(torch.zeros(d_out)) if bias else None

    def initial_matrix(self) -> torch.Tensor:
        """The fixed W_init of a reparameterised map, or the initial weight of an orthogonal one."""
        if self.kind == "reparam":
            return self.w_init
        if self.kind == "orthogonal":
            return self.weight
        raise ValueError(f"a {self.kind!r} map has no initial matrix to tie")

    @torch.no_grad()
    def set_initial_matrix(self, matrix: torch.Tensor) -> None:
        """Overwrite the initial matrix (W^P_init ties of Fig 15).

        Called right after the model is built, so this map's own random draw still happened and
        the rest of the model's initialisation is the same as without the tie.
        """
        self.initial_matrix().copy_(matrix)

    def effective_weight(self) -> torch.Tensor:
        if self.kind == "reparam":
            return self.skip_gain * self.w_init + self.resid_gain * self.delta
        return self.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "identity":
            return x
        return F.linear(x, self.effective_weight(), self.bias)

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Keep output rows (used for W^V when heads are pruned)."""
        self._slice(rows, dim=0)
        if self.bias is not None:
            self.bias = nn.Parameter(self.bias.data[rows].clone())

    def keep_cols(self, cols: torch.Tensor) -> None:
        """Keep input columns (used for W^P when heads are pruned)."""
        self._slice(cols, dim=1)

    def _slice(self, index: torch.Tensor, dim: int) -> None:
        if self.kind == "identity":
            raise NotImplementedError("heads of a block without value/projection matrices cannot be pruned physically")
        if self.kind == "reparam":
            self.w_init = self.w_init.index_select(dim, index).clone()
            self.delta = nn.Parameter(self.delta.data.index_select(dim, index).clone())
        else:
            self.weight = nn.Parameter(self.weight.data.index_select(dim, index).clone())


def _orthogonal(d_out: int, d_in: int) -> torch.Tensor:
    w = torch.empty(d_out, d_in)
    nn.init.orthogonal_(w)
    return w


class Attention(nn.Module):
    """Self- or cross-attention of one layer (see module docstring)."""

    def __init__(self, cfg: TransformerConfig, layer: int, cross: bool = False) -> None:
        super().__init__()
        spec = cfg.block_spec
        self.layer = layer
        self.cross = cross
        self.n_heads = cfg.n_heads[layer]
        self.head_dim = cfg.head_dim[layer]
        self.d_model = cfg.d_model
        self.causal = cfg.causal and not cross
        self.kind = "softmax" if cross else spec.attention
        self.position = "none" if cross else cfg.position
        self.attn_dropout = cfg.attn_dropout
        self.rope_base = cfg.rope_base
        self.rope_dim = cfg.rope_dim or self.head_dim  # partial rotary: only the first rope_dim dims turn
        inner = self.n_heads * self.head_dim

        self.q_proj = nn.Linear(cfg.d_model, inner, bias=cfg.qk_bias)
        self.k_proj = nn.Linear(cfg.d_model, inner, bias=cfg.qk_bias)
        value_kind = "linear" if cross else spec.value_kind(layer)
        proj_kind = "linear" if cross else spec.proj
        self.value = MatrixMap(value_kind, cfg.d_model, inner, cfg.vo_bias, cfg, spec)
        self.proj = MatrixMap(proj_kind, inner, cfg.d_model, cfg.vo_bias, cfg, spec)
        if not cross and spec.reparam_tie == "all":
            self.proj.set_initial_matrix(self.value.initial_matrix().T)
        self.register_buffer("head_ids", torch.arange(self.n_heads), persistent=False)

        if self.kind != "softmax":
            # Per-head α, β, γ of the attention matrix, shape (1, H, 1, 1).
            make = nn.Parameter if spec.trainable_gains else (lambda t: t)
            for name, init in (("mat_skip_gain", spec.shaped_alpha), ("mat_resid_gain", spec.shaped_beta)):
                self._register_gain(name, make(torch.full((1, self.n_heads, 1, 1), float(init))))
            if self.kind == "shaped":
                self._register_gain("centre_gain", make(torch.full((1, self.n_heads, 1, 1), float(spec.shaped_gamma))))
        if self.position == "alibi":
            self.register_buffer("alibi", alibi_slopes(self.n_heads), persistent=False)

        self._init_weights(cfg, query_zero=spec.query_init_zero and not cross)
        self.hook_attn_in = HookPoint()  # [B,T,d], the attention's input (queries' side)
        self.hook_q = HookPoint()  # [B,H,T,dh]
        self.hook_k = HookPoint()  # [B,H,Tk,dh]
        self.hook_v = HookPoint()  # [B,H,Tk,dh]
        self.hook_pattern = HookPoint()  # [B,H,T,Tk], the softmax A (explicit path only)
        self.hook_z = HookPoint()  # [B,H,T,dh], per-head context before the head mask and W^P
        self.hook_result = HookPoint()  # [B,T,d], the attention's output (after W^P)

    def _register_gain(self, name: str, value: torch.Tensor) -> None:
        if isinstance(value, nn.Parameter):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    def _init_weights(self, cfg: TransformerConfig, query_zero: bool) -> None:
        for linear in (self.q_proj, self.k_proj):
            nn.init.normal_(linear.weight, std=cfg.init_std)
            if linear.bias is not None:
                nn.init.zeros_(linear.bias)
        if query_zero:  # W^Q = 0 and its bias = 0 give A = C exactly at init
            nn.init.zeros_(self.q_proj.weight)
            if self.q_proj.bias is not None:
                nn.init.zeros_(self.q_proj.bias)

    # -- forward --------------------------------------------------------------------
    def forward(
        self,
        x: torch.Tensor,  # [B,T,d]
        head_mask: torch.Tensor | None = None,  # [H_orig] or [B,H_orig,T]
        padding_mask: torch.Tensor | None = None,  # [B,Tk] bool, True = real token
        memory: torch.Tensor | None = None,  # [B,Tk,d] for cross-attention
    ) -> torch.Tensor:
        x = self.hook_attn_in(x)
        B, T, _ = x.shape
        if self.n_heads == 0:  # every head pruned: only W^P's bias remains
            out = x.new_zeros(B, T, self.d_model)
            return self.hook_result(out + self.proj.bias if getattr(self.proj, "bias", None) is not None else out)
        source = x if memory is None else memory
        Tk = source.shape[1]
        q = self.hook_q(self._split(self.q_proj(x)))
        k = self.hook_k(self._split(self.k_proj(source)))
        v = self.hook_v(self._split(self.value(source)))
        if self.position == "rope":
            cos, sin = rope_tables(max(T, Tk), self.rope_dim, x.device, x.dtype, self.rope_base)
            q, k = self._rotate(q, cos[:T], sin[:T]), self._rotate(k, cos[:Tk], sin[:Tk])

        if self.hook_pattern.active:
            ctx = self._explicit(q, k, v, padding_mask)
        else:
            ctx = self._fast(q, k, v, padding_mask)
        ctx = self.hook_z(ctx)
        if head_mask is not None:
            ctx = ctx * self._mask_for_kept_heads(head_mask)
        merged = ctx.transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim)
        return self.hook_result(self.proj(merged))

    def _rotate(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:  # [B,H,T,dh]
        if self.rope_dim == self.head_dim:
            return apply_rope(x, cos, sin)
        turned, kept = x[..., : self.rope_dim], x[..., self.rope_dim :]
        return torch.cat((apply_rope(turned, cos, sin), kept), dim=-1)

    def _split(self, x: torch.Tensor) -> torch.Tensor:  # [B,T,H·dh] -> [B,H,T,dh]
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)

    def _mask_for_kept_heads(self, head_mask: torch.Tensor) -> torch.Tensor:
        if head_mask.dim() == 1:  # [H_orig] -> [1,H,1,1]
            return head_mask.index_select(0, self.head_ids).view(1, -1, 1, 1)
        return head_mask.index_select(1, self.head_ids).unsqueeze(-1)  # [B,H,T,1]

    def _logit_bias(self, T: int, Tk: int, padding_mask, device, dtype) -> torch.Tensor | None:
        """Additive mask M (and ALiBi bias) as a float tensor broadcastable to [B,H,T,Tk]."""
        bias = None
        if self.position == "alibi":
            bias = alibi_bias(self.alibi.to(dtype), T, Tk, self.causal)[None]  # [1,H,T,Tk]
        if self.causal:
            future = torch.ones(T, Tk, dtype=torch.bool, device=device).triu(1)
            causal = torch.zeros(T, Tk, dtype=dtype, device=device).masked_fill(future, float("-inf"))
            bias = causal if bias is None else bias + causal
        if padding_mask is not None:
            pad = torch.zeros(padding_mask.shape, dtype=dtype, device=device).masked_fill(~padding_mask, float("-inf"))
            pad = pad[:, None, None, :]  # [B,1,1,Tk]
            bias = pad if bias is None else bias + pad
        return bias

    def _fast(self, q, k, v, padding_mask) -> torch.Tensor:
        T, Tk = q.shape[2], k.shape[2]
        dropout = self.attn_dropout if self.training else 0.0
        simple_causal = self.causal and padding_mask is None and self.position != "alibi" and T == Tk
        if simple_causal:
            attn = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True)
        else:
            bias = self._logit_bias(T, Tk, padding_mask, q.device, q.dtype)
            attn = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=dropout)
        if self.kind == "softmax":
            return attn
        ctx = self.mat_resid_gain * attn + self.mat_skip_gain * v
        if self.kind == "shaped":
            ctx = ctx - self.centre_gain * self._centre_times_v(v, padding_mask)
        return ctx

    def _centre_times_v(self, v: torch.Tensor, padding_mask) -> torch.Tensor:
        """C V with C = softmax(M): a (running) mean of the values over real positions.
        With ALiBi, C is the attention matrix at zero query-key logits, softmax(M + ALiBi bias),
        as in the explicit path, so that the shaped matrix is still exactly I at init."""
        if self.position == "alibi":
            T = v.shape[2]
            centre = torch.softmax(self._logit_bias(T, T, padding_mask, v.device, v.dtype), dim=-1)  # [1|B,H,T,T]
            return centre @ v
        if padding_mask is not None:
            valid = padding_mask[:, None, :, None].to(v.dtype)  # [B,1,T,1]
            v = v * valid
        if self.causal:
            total = v.cumsum(dim=2)
            count = (
                valid.cumsum(dim=2)
                if padding_mask is not None
                else torch.arange(1, v.shape[2] + 1, device=v.device, dtype=v.dtype).view(1, 1, -1, 1)
            )
        else:
            total = v.sum(dim=2, keepdim=True)
            count = valid.sum(dim=2, keepdim=True) if padding_mask is not None else v.shape[2]
        return total / count

    def _explicit(self, q, k, v, padding_mask) -> torch.Tensor:
        T, Tk = q.shape[2], k.shape[2]
        bias = self._logit_bias(T, Tk, padding_mask, q.device, q.dtype)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # [B,H,T,Tk]
        if bias is not None:
            scores = scores + bias
        pattern = self.hook_pattern(torch.softmax(scores, dim=-1))
        if self.attn_dropout and self.training:
            pattern = F.dropout(pattern, self.attn_dropout)
        if self.kind == "softmax":
            return pattern @ v
        eye = torch.eye(T, Tk, dtype=q.dtype, device=q.device)
        matrix = self.mat_skip_gain * eye + self.mat_resid_gain * pattern
        if self.kind == "shaped":
            centre = (
                torch.softmax(bias.expand(scores.shape), dim=-1)
                if bias is not None
                else torch.full_like(scores, 1.0 / Tk)
            )
            matrix = matrix - self.centre_gain * centre
        return matrix @ v

    # -- pruning --------------------------------------------------------------------
    def prune(self, heads: list[int]) -> None:
        """Remove heads by their original ids; ids already removed are ignored."""
        drop = set(int(h) for h in heads)
        keep = [i for i, hid in enumerate(self.head_ids.tolist()) if hid not in drop]
        if len(keep) == self.n_heads:
            return
        keep_t = torch.tensor(keep, dtype=torch.long)
        dh = self.head_dim
        rows = (keep_t[:, None] * dh + torch.arange(dh)[None, :]).reshape(-1)
        for linear in (self.q_proj, self.k_proj):
            linear.weight = nn.Parameter(linear.weight.data[rows].clone())
            if linear.bias is not None:
                linear.bias = nn.Parameter(linear.bias.data[rows].clone())
            linear.out_features = len(rows)
        self.value.keep_rows(rows)
        self.proj.keep_cols(rows)
        for name in ("mat_skip_gain", "mat_resid_gain", "centre_gain"):
            gain = getattr(self, name, None)
            if gain is not None:
                sliced = gain.data[:, keep_t].clone()
                if isinstance(gain, nn.Parameter):
                    setattr(self, name, nn.Parameter(sliced))
                else:
                    setattr(self, name, sliced)
        if self.position == "alibi":
            self.alibi = self.alibi[keep_t]
        self.head_ids = self.head_ids[keep_t]
        self.n_heads = len(keep)
