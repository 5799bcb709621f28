"""One Transformer block, wired by its `BlockSpec` (sequential, parallel or post-norm).

Hook points, in the order they fire (shapes [B,T,d]):
  hook_resid_pre    the block's input
  hook_attn_out     β_SA·MHA(...), exactly what is added to the residual stream
  hook_resid_mid    after the attention sub-block (sequential blocks)
  hook_cross_out    the cross-attention term (decoder blocks of an encoder-decoder)
  hook_mlp_out      β_FF·MLP(...), exactly what is added to the residual stream
  hook_resid_post   the block's output
For a Pre-LN or parallel block with unit skips, resid_post = resid_pre + attn_out + mlp_out
(+ cross_out), which is what residual-stream decompositions rely on.
"""

from __future__ import annotations

import torch
from torch import nn

from repro.models.attention import Attention
from repro.models.config import TransformerConfig
from repro.models.hooks import HookPoint
from repro.models.layers import MLP, Gain, make_norm


class Block(nn.Module):
    def __init__(self, cfg: TransformerConfig, layer: int) -> None:
        super().__init__()
        spec = cfg.block_spec
        self.parallel = spec.parallel
        self.post_norm = spec.post_norm
        self.norm1 = self._norm(cfg, layer, first=True)
        self.attn = Attention(cfg, layer)
        self.attn_skip = _skip(spec.attn_skip, spec.trainable_gains)
        self.attn_resid = Gain(spec.attn_gain, spec.trainable_gains)
        if cfg.cross_attention:
            self.norm_cross = self._norm(cfg, layer, first=False)
            self.cross_attn = Attention(cfg, layer, cross=True)
        self.norm2 = None if spec.parallel else self._norm(cfg, layer, first=False)
        self.mlp = MLP(cfg.d_model, cfg.d_ff, cfg.activation, cfg.mlp_bias, cfg.leaky_slope)
        # In a parallel block the one skip is α_SA (α_comb); mlp_skip is unused.
        self.mlp_skip = None if spec.parallel else _skip(spec.mlp_skip, spec.trainable_gains)
        self.mlp_resid = Gain(spec.mlp_gain, spec.trainable_gains)
        self.dropout = nn.Dropout(cfg.dropout)
        for name in ("resid_pre", "attn_out", "resid_mid", "cross_out", "mlp_out", "resid_post"):
            setattr(self, f"hook_{name}", HookPoint())

    @staticmethod
    def _norm(cfg: TransformerConfig, layer: int, first: bool) -> nn.Module | None:
        if cfg.norm != "none":
            return make_norm(cfg.norm, cfg.d_model, cfg.norm_eps)
        # "No norm" models keep layer 1's first LayerNorm, as the official code does.
        keep = cfg.keep_first_norm and layer == 0 and first and not cfg.block_spec.post_norm
        return make_norm("layernorm", cfg.d_model, cfg.norm_eps) if keep else None

    def forward(
        self,
        x: torch.Tensor,  # [B,T,d]
        head_mask: torch.Tensor | None = None,
        padding_mask: torch.Tensor | None = None,
        memory: torch.Tensor | None = None,
        memory_padding_mask: torch.Tensor | None = None,
        cross_head_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        x = self.hook_resid_pre(x)
        if self.post_norm:
            return self._forward_post_norm(x, head_mask, padding_mask, memory, memory_padding_mask, cross_head_mask)
        h = _apply(self.norm1, x)
        attn = self.hook_attn_out(self.dropout(self.attn_resid(self.attn(h, head_mask, padding_mask))))
        if self.parallel:
            mlp = self.hook_mlp_out(self.dropout(self.mlp_resid(self.mlp(h))))
            return self.hook_resid_post(_add_skip(self.attn_skip, x, attn) + mlp)
        x = self.hook_resid_mid(_add_skip(self.attn_skip, x, attn))
        if memory is not None:
            cross = self.cross_attn(_apply(self.norm_cross, x), cross_head_mask, memory_padding_mask, memory)
            x = x + self.hook_cross_out(self.dropout(cross))
        mlp = self.hook_mlp_out(self.dropout(self.mlp_resid(self.mlp(_apply(self.norm2, x)))))
        return self.hook_resid_post(_add_skip(self.mlp_skip, x, mlp))

    def _forward_post_norm(self, x, head_mask, padding_mask, memory, memory_padding_mask, cross_head_mask):
        attn = self.hook_attn_out(self.dropout(self.attn_resid(self.attn(x, head_mask, padding_mask))))
        x = self.hook_resid_mid(_apply(self.norm1, _add_skip(self.attn_skip, x, attn)))
        if memory is not None:
            cross = self.cross_attn(x, cross_head_mask, memory_padding_mask, memory)
            x = _apply(self.norm_cross, x + self.hook_cross_out(self.dropout(cross)))
        mlp = self.hook_mlp_out(self.dropout(self.mlp_resid(self.mlp(x))))
        return self.hook_resid_post(_apply(self.norm2, _add_skip(self.mlp_skip, x, mlp)))


def _skip(value: float, trainable: bool) -> Gain | None:
    """A skip weight of exactly 0 removes the skip branch altogether."""
    return None if value == 0.0 else Gain(value, trainable)


def _add_skip(skip: Gain | None, x: torch.Tensor, branch: torch.Tensor) -> torch.Tensor:
    return branch if skip is None else skip(x) + branch


def _apply(norm: nn.Module | None, x: torch.Tensor) -> torch.Tensor:
    return x if norm is None else norm(x)
