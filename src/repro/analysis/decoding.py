"""Greedy decoding of an `EncoderDecoder` with cached keys and values.

`EncoderDecoder.greedy_decode` reruns the decoder over the whole prefix at every step, which
costs O(T²) positions per sentence; ablation sweeps decode the test set hundreds of times, so
here each step runs the decoder on the new token only, reusing the keys and values of earlier
positions (and the cross-attention keys and values of the encoder output, computed once).
It gives the same tokens as `greedy_decode` (tests check it in float64), with head masks
acting at every step, and it can start from a precomputed encoder output, so that sweeps
over decoder heads encode each test set once. A mask is [layers, heads] for every sentence,
or [layers, B, heads, 1] with one row per sentence (the form the model's attention takes for
per-example masks), so that one batch decodes a test set under several masks at once. Sentences that have ended leave the batch (with
their caches) once they are a quarter of it, since test sentences differ in length.

Supported decoders: sequential softmax blocks (pre_ln, post_ln, with any fixed or trained
gains) with learned, sinusoidal or no positions, in eval mode; other configurations raise
NotImplementedError naming the setting (use `greedy_decode` for them).
"""

from __future__ import annotations

import math

import torch

from repro.models import EncoderDecoder


def check_cached_decoding(model: EncoderDecoder) -> None:
    """Raise NotImplementedError if this decoder's configuration is not supported."""
    cfg = model.decoder.cfg
    spec = cfg.block_spec
    if spec.parallel or spec.attention != "softmax":
        raise NotImplementedError(f"cached decoding supports sequential softmax blocks, not block {cfg.block!r}")
    if cfg.position not in ("learned", "sinusoidal", "none"):
        raise NotImplementedError(f"cached decoding supports learned/sinusoidal/no positions, not {cfg.position!r}")
    if model.training:
        raise NotImplementedError("cached decoding runs in eval mode only (no dropout); call model.eval()")


def _skip_add(skip, x: torch.Tensor, branch: torch.Tensor) -> torch.Tensor:
    return branch if skip is None else skip(x) + branch


def _norm(norm, x: torch.Tensor) -> torch.Tensor:
    return x if norm is None else norm(x)


def _split(attn, x: torch.Tensor) -> torch.Tensor:  # [B,T,H·dh] -> [B,H,T,dh]
    B, T, _ = x.shape
    return x.view(B, T, attn.n_heads, attn.head_dim).transpose(1, 2)


def _attend(attn, q, k, v, bias, layer_mask) -> torch.Tensor:
    """softmax(q kᵀ/√d + bias) v, head mask, W^O: [B,H,1,dh] queries -> [B,1,d].

    Written out with broadcasting rather than through scaled_dot_product_attention or batched
    matmuls, which are several times slower on CPU for a single query and small heads."""
    scores = (q * k).sum(dim=-1) * (1.0 / math.sqrt(attn.head_dim))  # [B,H,Tk]
    if bias is not None:
        scores = scores + bias[:, :, 0]  # [B,1,1,Tk] -> [B,1,Tk]
    weights = torch.softmax(scores, dim=-1)
    ctx = (weights.unsqueeze(-1) * v).sum(dim=2, keepdim=True)  # [B,H,1,dh]
    if layer_mask is not None:
        if layer_mask.dim() == 1:  # [H] for every row
            ctx = ctx * layer_mask.index_select(0, attn.head_ids).view(1, -1, 1, 1)
        else:  # [B,H,1], one row per sentence
            ctx = ctx * layer_mask.index_select(1, attn.head_ids).unsqueeze(-1)
    B = q.shape[0]
    return attn.proj(ctx.transpose(1, 2).reshape(B, 1, attn.n_heads * attn.head_dim))


def _no_heads(attn, x: torch.Tensor) -> torch.Tensor:
    out = x.new_zeros(x.shape[0], 1, attn.d_model)
    bias = getattr(attn.proj, "bias", None)
    return out if bias is None else out + bias


@torch.no_grad()
def cached_greedy_decode(
    model: EncoderDecoder,
    src_ids: torch.Tensor,  # [B,S]
    bos_id: int,
    eos_id: int,
    max_len: int,
    src_padding_mask: torch.Tensor | None = None,  # [B,S] bool, True = real token
    head_mask: dict[str, torch.Tensor] | None = None,  # {type: [layers, heads] or [layers, B, heads, 1]}
    memory: torch.Tensor | None = None,  # [B,S,d] encoder output, if already computed
) -> torch.Tensor:
    """Greedy decoding; returns [B, ≤max_len] token ids without BOS, eos_id after EOS
    (the output of `EncoderDecoder.greedy_decode` for the same arguments)."""
    check_cached_decoding(model)
    head_mask = head_mask or {}
    if memory is None:
        memory = model.encode(src_ids, src_padding_mask, head_mask)
    decoder = model.decoder
    cfg = decoder.cfg
    if max_len > cfg.max_seq_len and cfg.position in ("learned", "sinusoidal"):
        raise ValueError(f"max_len={max_len} exceeds the decoder's max_seq_len={cfg.max_seq_len}")
    B = src_ids.shape[0]
    self_mask, cross_mask = head_mask.get("dec_self"), head_mask.get("cross")
    cross_bias = None
    if src_padding_mask is not None:
        cross_bias = torch.zeros(src_padding_mask.shape, dtype=memory.dtype, device=memory.device)
        cross_bias = cross_bias.masked_fill(~src_padding_mask, float("-inf"))[:, None, None, :]  # [B,1,1,S]
    # Per layer: the cross-attention keys/values of the memory, and the growing self-attention cache.
    cross_kv = []
    for block in decoder.blocks:
        attn = block.cross_attn
        cross_kv.append(
            None if attn.n_heads == 0 else (_split(attn, attn.k_proj(memory)), _split(attn, attn.value(memory)))
        )
    self_k: list[torch.Tensor | None] = [None] * len(decoder.blocks)
    self_v: list[torch.Tensor | None] = [None] * len(decoder.blocks)

    token = torch.full((B,), bos_id, dtype=torch.long, device=src_ids.device)
    done = torch.zeros(B, dtype=torch.bool, device=src_ids.device)
    rows = torch.arange(B, device=src_ids.device)  # the input row of each sentence still in the batch
    out = torch.full((B, max_len), eos_id, dtype=torch.long, device=src_ids.device)
    steps = max_len
    for position in range(max_len):
        x = decoder.tok_emb(token)[:, None]  # [b,1,d]
        if cfg.position == "learned":
            x = x + decoder.pos_emb.weight[position]
        elif cfg.position == "sinusoidal":
            x = x + decoder.pos_table[position].to(x.dtype)
        for layer, block in enumerate(decoder.blocks):
            x = _block_step(
                block,
                layer,
                x,
                self_k,
                self_v,
                cross_kv[layer],
                cross_bias,
                None if self_mask is None else self_mask[layer],
                None if cross_mask is None else cross_mask[layer],
            )
        if decoder.final_norm is not None:
            x = decoder.final_norm(x)
        logits = decoder.unembed(x)[:, -1]  # [b,V]
        token = logits.argmax(dim=-1).masked_fill(done, eos_id)
        out[rows, position] = token
        done |= token == eos_id
        if bool(done.all()):
            steps = position + 1
            break
        if 4 * int(done.sum()) >= len(done):
            keep = (~done).nonzero().squeeze(1)
            rows, token, done = rows[keep], token[keep], done[keep]
            self_k = [None if k is None else k[keep] for k in self_k]
            self_v = [None if v is None else v[keep] for v in self_v]
            cross_kv = [None if kv is None else (kv[0][keep], kv[1][keep]) for kv in cross_kv]
            cross_bias = None if cross_bias is None else cross_bias[keep]
            self_mask, cross_mask = _rows_of(self_mask, keep), _rows_of(cross_mask, keep)
    return out[:, :steps]


def _rows_of(mask: torch.Tensor | None, keep: torch.Tensor) -> torch.Tensor | None:
    """The rows ``keep`` of a per-sentence mask [layers, B, heads, 1]; a shared mask is returned as is."""
    return mask if mask is None or mask.dim() < 4 else mask.index_select(1, keep)


def _block_step(block, layer, x, self_k, self_v, cross_kv, cross_bias, self_mask, cross_mask) -> torch.Tensor:
    """One decoder block on the newest position x [B,1,d], updating the layer's key/value cache."""

    def self_attention(h):
        attn = block.attn
        if attn.n_heads == 0:
            return _no_heads(attn, h)
        k, v = _split(attn, attn.k_proj(h)), _split(attn, attn.value(h))
        if self_k[layer] is not None:
            k, v = torch.cat([self_k[layer], k], dim=2), torch.cat([self_v[layer], v], dim=2)
        self_k[layer], self_v[layer] = k, v
        # The newest position may attend to every cached one: no causal mask is needed.
        return _attend(attn, _split(attn, attn.q_proj(h)), k, v, None, self_mask)

    def cross_attention(h):
        attn = block.cross_attn
        if attn.n_heads == 0:
            return _no_heads(attn, h)
        k, v = cross_kv
        return _attend(attn, _split(attn, attn.q_proj(h)), k, v, cross_bias, cross_mask)

    if block.post_norm:
        x = _norm(block.norm1, _skip_add(block.attn_skip, x, block.attn_resid(self_attention(x))))
        x = _norm(block.norm_cross, x + cross_attention(x))
        return _norm(block.norm2, _skip_add(block.mlp_skip, x, block.mlp_resid(block.mlp(x))))
    x = _skip_add(block.attn_skip, x, block.attn_resid(self_attention(_norm(block.norm1, x))))
    x = x + cross_attention(_norm(block.norm_cross, x))
    return _skip_add(block.mlp_skip, x, block.mlp_resid(block.mlp(_norm(block.norm2, x))))
