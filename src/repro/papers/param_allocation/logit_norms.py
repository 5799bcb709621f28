"""Attention-logit magnitudes of a trained decoder against the prefix length (Yu et al. 2025, Fig 10).

Theorem 2 assumes logits bounded by Λ; the paper's appendix Fig 10 shows that in trained models they
grow with the sequence length L (catalog §2, Fig 10; reviewer R3). For a causal model with absolute
positions, the query at position L − 1 of a chunk sees exactly the prefix of length L, so one forward
pass over chunks of the full context gives every prefix length at once.

For each layer, head and length L, over the queries at position L − 1 of the chunks (z_s = q·k_s/√d_h,
s = 0 … L − 1):
  max_abs_logit   max_s |z_s|                 (the catalog's quantity)
  half_range      (max_s z_s − min_s z_s)/2    (the smallest Λ after the shift softmax ignores)
  logit_std       std_s z_s
  max_prob        max_s p_s,  p = softmax(z)
  jacobian_norm   ‖diag(p) − ppᵀ‖₂, exactly (repro.papers.param_allocation.theory.softmax)
  bound           e^{2·half_range}/L, Theorem 2's bound on ‖J‖₂ for these logits
each averaged over the chunks (the bound as the mean of its logarithm: it spans many decades).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from repro.models.transformer import Transformer
from repro.papers.param_allocation.theory.softmax import jacobian_spectral_norm

STATISTICS = ("max_abs_logit", "half_range", "logit_std", "max_prob", "jacobian_norm", "log_bound")


@torch.no_grad()
def query_logits(model: Transformer, tokens: torch.Tensor, batch_size: int = 32) -> dict[int, torch.Tensor]:
    """Pre-softmax logits of every query over its causal keys: {layer: [N, H, T, T]} (future keys −inf)."""
    if model.cfg.position in ("rope", "alibi"):
        raise ValueError(
            f"query_logits reads q·k before positions act; position={model.cfg.position!r} changes the logits"
        )
    names = [f"blocks.{layer}.attn.hook_{part}" for layer in range(model.cfg.n_layers) for part in "qk"]
    cache = model.cache_in_batches(tokens, names, batch_size)
    out = {}
    for layer in range(model.cfg.n_layers):
        q, k = cache[f"blocks.{layer}.attn.hook_q"], cache[f"blocks.{layer}.attn.hook_k"]  # [N, H, T, dh]
        z = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        T = z.shape[-1]
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        out[layer] = z.masked_fill(future, float("-inf"))
    return out


def logit_statistics(model: Transformer, tokens: torch.Tensor, lengths, seed: int | None = None) -> pd.DataFrame:
    """One row per (layer, head, length) with the chunk means of `STATISTICS` (module docstring)."""
    T = tokens.shape[1]
    for length in lengths:
        if not 2 <= int(length) <= T:
            raise ValueError(f"prefix length {length} outside [2, {T}] (the chunks have {T} tokens)")
    rows = []
    for layer, z in query_logits(model, tokens).items():
        for length in lengths:
            length = int(length)
            logits = z[:, :, length - 1, :length].double().numpy()  # [N, H, L]
            shifted = logits - logits.max(-1, keepdims=True)
            p = np.exp(shifted) / np.exp(shifted).sum(-1, keepdims=True)
            half_range = (logits.max(-1) - logits.min(-1)) / 2
            stats = {
                "max_abs_logit": np.abs(logits).max(-1),
                "half_range": half_range,
                "logit_std": logits.std(-1),
                "max_prob": p.max(-1),
                "jacobian_norm": jacobian_spectral_norm(p),
                "log_bound": 2 * half_range - math.log(length),
            }
            for head in range(logits.shape[1]):
                row = {"layer": layer, "head": head, "length": length, "chunks": logits.shape[0]}
                row.update({name: float(values[:, head].mean()) for name, values in stats.items()})
                rows.append(row)
    table = pd.DataFrame(rows)
    if seed is not None:
        table.insert(0, "seed", int(seed))
    return table


__all__ = ["STATISTICS", "logit_statistics", "query_logits"]
