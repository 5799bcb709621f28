"""Heads of a model of the family, and the head masks that remove or keep them.

A head is ``(type, layer, head)``. A `Transformer` (encoder, decoder or classifier) has one
attention type, ``"self"``; an `EncoderDecoder` has ``"enc_self"``, ``"cross"`` (Enc-Dec) and
``"dec_self"``. Masks are dicts ``{type: FloatTensor [layers, max_heads]}`` (1 keeps a head,
0 removes it; columns beyond a layer's own head count are unused); `model_mask` turns one into
the argument the model takes. Masking multiplies the head's context before W^O, keeps W^O's
bias and does not rescale the other heads (Michel et al. 2019, §2; catalog §1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import torch

from repro.models import EncoderDecoder, Transformer

SELF = "self"
#: Attention types in the paper's order (Enc-Enc, Enc-Dec, Dec-Dec); "self" for a single stack.
TYPE_ORDER = ("self", "enc_self", "cross", "dec_self")
HeadId = tuple[str, int, int]
Masks = dict[str, torch.Tensor]

# Where each attention type's per-head context (before the mask and W^O) is hooked.
_HOOK_PREFIX = {"self": "blocks", "enc_self": "encoder.blocks", "dec_self": "decoder.blocks", "cross": "decoder.blocks"}
_HOOK_SUFFIX = {
    "self": "attn.hook_z",
    "enc_self": "attn.hook_z",
    "dec_self": "attn.hook_z",
    "cross": "cross_attn.hook_z",
}


def _stacks(model) -> dict[str, Transformer]:
    if isinstance(model, EncoderDecoder):
        return {"enc_self": model.encoder, "cross": model.decoder, "dec_self": model.decoder}
    if isinstance(model, Transformer):
        return {SELF: model}
    raise TypeError(f"expected a Transformer or an EncoderDecoder, got {type(model).__name__}")


def attention_types(model) -> tuple[str, ...]:
    """The attention types of ``model`` in the paper's order."""
    return tuple(t for t in TYPE_ORDER if t in _stacks(model))


def heads_per_layer(model, kind: str) -> tuple[int, ...]:
    """Original head count of every layer of attention type ``kind``."""
    stacks = _stacks(model)
    if kind not in stacks:
        raise KeyError(f"attention type {kind!r} is not in this model; it has {attention_types(model)}")
    return tuple(stacks[kind].cfg.n_heads)


def all_heads(model) -> list[HeadId]:
    """Every original head, ordered by type (paper order), layer, head."""
    return [
        (kind, layer, head)
        for kind in attention_types(model)
        for layer, count in enumerate(heads_per_layer(model, kind))
        for head in range(count)
    ]


def hook_name(kind: str, layer: int) -> str:
    """The hook point of the per-head context [B,H,T,dh] of one attention layer."""
    return f"{_HOOK_PREFIX[kind]}.{layer}.{_HOOK_SUFFIX[kind]}"


def full_masks(model, dtype: torch.dtype = torch.float32) -> Masks:
    """All-ones masks {type: [layers, max_heads]}."""
    return {
        kind: torch.ones(len(counts), max(counts), dtype=dtype)
        for kind in attention_types(model)
        for counts in [heads_per_layer(model, kind)]
    }


def masks_without(model, heads: Iterable[HeadId], dtype: torch.dtype = torch.float32) -> Masks:
    """Masks removing exactly ``heads``."""
    masks = full_masks(model, dtype)
    for kind, layer, head in heads:
        _check_head(model, kind, layer, head)
        masks[kind][layer, head] = 0.0
    return masks


def masks_keeping_one(model, kind: str, layer: int, head: int, dtype: torch.dtype = torch.float32) -> Masks:
    """Masks removing every head of (kind, layer) except ``head``; all other layers stay whole."""
    _check_head(model, kind, layer, head)
    masks = full_masks(model, dtype)
    masks[kind][layer] = 0.0
    masks[kind][layer, head] = 1.0
    return masks


def _check_head(model, kind: str, layer: int, head: int) -> None:
    counts = heads_per_layer(model, kind)
    if not 0 <= layer < len(counts) or not 0 <= head < counts[layer]:
        raise IndexError(f"head ({kind}, {layer}, {head}) does not exist; {kind} has heads per layer {counts}")


def model_mask(model, masks: Mapping[str, torch.Tensor] | None):
    """The head_mask argument of ``model`` for ``masks`` (None stays None)."""
    if masks is None:
        return None
    if isinstance(model, EncoderDecoder):
        return {kind: masks[kind] for kind in ("enc_self", "dec_self", "cross") if kind in masks}
    return masks[SELF]


def first_changed_layer(masks: Mapping[str, torch.Tensor], kind: str) -> int | None:
    """The first layer of ``kind`` whose mask is not all ones (None if the type is whole)."""
    mask = masks.get(kind)
    if mask is None:
        return None
    changed = (mask != 1).any(dim=tuple(range(1, mask.dim())))
    rows = changed.nonzero()
    return int(rows[0]) if len(rows) else None


def pruned_heads(masks: Mapping[str, torch.Tensor]) -> dict[str, dict[int, list[int]]]:
    """{type: {layer: [head ids with mask 0]}}, the argument of `repro.models.prune_heads`."""
    return {
        kind: {layer: [int(h) for h in (row == 0).nonzero().flatten()] for layer, row in enumerate(mask)}
        for kind, mask in masks.items()
    }
