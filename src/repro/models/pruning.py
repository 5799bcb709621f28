"""Physical head pruning and parameter counting."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from repro.models.transformer import EncoderDecoder, Transformer

_ATTENTION_OF_TYPE = {
    "enc_self": ("encoder", "attn"),
    "dec_self": ("decoder", "attn"),
    "cross": ("decoder", "cross_attn"),
}


def heads_from_mask(mask: torch.Tensor) -> dict[int, list[int]]:
    """{layer: [original head ids whose mask entry is 0]} from a [layers, heads] mask."""
    return {layer: [int(h) for h in (row == 0).nonzero().flatten()] for layer, row in enumerate(mask)}


def prune_heads(model: Transformer | EncoderDecoder, heads: Mapping) -> None:
    """Remove heads physically, in place, so that the model equals the masked model.

    For a `Transformer`, ``heads`` is {layer: [original head ids]}; for an
    `EncoderDecoder`, {attention type: {layer: [ids]}} with types enc_self, dec_self,
    cross. Ids refer to the original heads, so repeated calls compose correctly.
    A layer may lose all its heads; its attention then adds only W^P's bias.
    """
    if isinstance(model, EncoderDecoder):
        unknown = set(heads) - set(_ATTENTION_OF_TYPE)
        if unknown:
            raise KeyError(f"unknown attention type(s) {sorted(unknown)}; use {sorted(_ATTENTION_OF_TYPE)}")
        for kind, per_layer in heads.items():
            stack, attr = _ATTENTION_OF_TYPE[kind]
            for layer, ids in per_layer.items():
                getattr(getattr(model, stack).blocks[layer], attr).prune(ids)
        return
    for layer, ids in heads.items():
        model.blocks[layer].attn.prune(ids)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters, tied tensors counted once (fixed gains and buffers excluded)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
