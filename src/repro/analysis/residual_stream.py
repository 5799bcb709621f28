"""A decoder's residual stream read as an ensemble: logit-lens readouts and module contributions.

For a pre-norm (sequential or parallel) block with unit skips the stream at the last layer is the
plain sum of its members (layer_diversity.md §2.1, Eq. 1):

    x_L = u_0 + Σ_{l=1..L} (a_l + m_l),   u_0 = embedding, a_l = attention output, m_l = MLP output,

read through the hook points ``hook_embed``, ``blocks.{l}.hook_attn_out`` and ``blocks.{l}.hook_mlp_out``.
The logits are z = W_U · Norm_f(x_L). Two ways to turn the stream into label-word scores:

* **Logit lens (form b).** o_l = W_K · Norm_f(x_l) for l = 0..L, x_0 = u_0 and x_l the output of block
  l; each state is normalised with its own statistics, so o_L = z but the o_l do not sum to z.
* **Module contributions (form a).** Freezing the final norm's statistics of the *full* stream x_L
  makes Norm_f linear (direct logit attribution). LayerNorm:
  c_i = W_K · (γ ⊙ (u_i − mean(u_i)) / s(x_L)), s = sqrt(var(x_L) + eps), and the constant W_K · β
  goes into member 0; RMSNorm: c_i = W_K · (γ ⊙ u_i / rms(x_L)). Then Σ_i c_i = z exactly.

An unembedding bias b_K (Phi's LM head) is a constant like LayerNorm's β: it is added to member 0 and
to every logit-lens readout.

**Layer increments (any block).** Whatever a block does, the stream telescopes:
h_L = h_0 + Σ_l (h_l − h_{l−1}), h_0 the first block's input and h_l block l's output. The L+1 increments
are additive members of every decoder (for pre-norm blocks with unit skips, each is the block's
attention plus MLP output), read through the frozen final norm and the whole unembedding by
`layer_increment_readouts`; `check_telescoping` states what that needs.

W_K is the unembedding restricted to the K label words. Everything is computed in float64 on a
float64 copy of the model, so the identities hold to rounding (≈1e-15 relative). The copy is made on
the ``device`` asked for (default: the model's own), so a large model can stay on the CPU while its
float64 copy runs on a GPU (float64 there too); batches go to that device, results come back as numpy.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from repro.analysis.device import model_device
from repro.models import Transformer
from repro.models.layers import RMSNorm


class NotAdditiveError(ValueError):
    """The model's residual stream is not the plain sum of its sub-block outputs."""


@dataclass(frozen=True)
class ResidualReadout:
    """Readouts of N examples at one position each, restricted to K label words (float64 numpy).

    lens           [N, L+1, K]  logit-lens readouts o_0..o_L (o_L are the model's logits)
    contributions  [N, M, K]    module contributions c_i, M = 2L+1, ordered embed, attn.0, mlp.0, ...
    logits         [N, K]       the model's own label-word logits z
    member_names   M names ("embed", "attn.0", "mlp.0", ...); member_types ("embed"/"attn"/"mlp");
    member_layers  block index of each member (-1 for the embedding)
    stream_error   max |Σ_i u_i − x_L| over examples and features (the Eq. 1 reconstruction)
    logit_error    max |Σ_i c_i − z| (the frozen-norm reconstruction of the logits)
    """

    lens: np.ndarray
    contributions: np.ndarray
    logits: np.ndarray
    member_names: tuple[str, ...]
    member_types: tuple[str, ...]
    member_layers: tuple[int, ...]
    stream_error: float
    logit_error: float

    @property
    def n_layers(self) -> int:
        return self.lens.shape[1] - 1


def check_additive(model: nn.Module) -> None:
    """Raise NotAdditiveError unless ``model`` is a decoder whose stream is Σ of embed, attn and MLP outputs."""
    if not isinstance(model, Transformer):
        raise NotAdditiveError(f"expected a repro.models.Transformer, got {type(model).__name__}")
    cfg = model.cfg
    spec = cfg.block_spec
    problems = []
    if cfg.output != "lm":
        problems.append(f"output={cfg.output!r} (needs 'lm': logits over the vocabulary)")
    if model.final_norm is None:
        problems.append("final_norm=False (the logit lens reads through the final norm)")
    if spec.post_norm:
        problems.append("post-norm blocks normalise the stream itself")
    if spec.attn_skip != 1.0 or (not spec.parallel and spec.mlp_skip != 1.0):
        problems.append(f"skip weights attn_skip={spec.attn_skip}, mlp_skip={spec.mlp_skip} (need 1)")
    if spec.trainable_gains:
        problems.append("trainable skip gains scale the stream")
    if cfg.cross_attention:
        problems.append("cross-attention adds a fourth kind of member")
    if problems:
        raise NotAdditiveError("the residual stream is not a plain sum of members: " + "; ".join(problems))


def unembedding(model: Transformer) -> torch.Tensor:
    """W_U [V, d] (the tied embedding or the separate LM head)."""
    return model.tok_emb.weight if model.cfg.tie_embeddings else model.lm_head.weight


def unembedding_bias(model: Transformer) -> torch.Tensor | None:
    """b_U [V] of the unembedding (the LM head's bias, or the tied unembedding's own bias), None if none."""
    head = getattr(model, "lm_head", None)
    if head is not None:
        return head.bias
    return getattr(model, "lm_bias", None)


def frozen_norm_contributions(members: torch.Tensor, stream: torch.Tensor, norm: nn.Module) -> torch.Tensor:
    """Normalised members [N, M, d] that sum to ``norm(stream)`` exactly, ``stream`` [N, d] = Σ members.

    The norm's statistics are those of the full stream; LayerNorm's bias goes to member 0.
    """
    if isinstance(norm, nn.LayerNorm):
        scale = torch.sqrt(stream.var(dim=-1, unbiased=False, keepdim=True) + norm.eps)  # [N, 1]
        centred = members - members.mean(dim=-1, keepdim=True)
        out = centred / scale[:, None, :]
        if norm.weight is not None:
            out = out * norm.weight
        if norm.bias is not None:
            out = out.clone()
            out[:, 0] = out[:, 0] + norm.bias
        return out
    if isinstance(norm, RMSNorm):
        scale = torch.sqrt(stream.pow(2).mean(dim=-1, keepdim=True) + norm.eps)  # [N, 1]
        return members / scale[:, None, :] * norm.weight
    raise NotAdditiveError(f"final norm {type(norm).__name__} is neither LayerNorm nor RMSNorm")


def _member_hooks(n_layers: int) -> tuple[list[str], list[str], list[str], list[int]]:
    hooks, names, types, layers = ["hook_embed"], ["embed"], ["embed"], [-1]
    for layer in range(n_layers):
        for kind in ("attn", "mlp"):
            hooks.append(f"blocks.{layer}.hook_{kind}_out")
            names.append(f"{kind}.{layer}")
            types.append(kind)
            layers.append(layer)
    return hooks, names, types, layers


@torch.no_grad()
def read_residual_stream(
    model: Transformer,
    input_ids: torch.Tensor,  # [N, T]
    positions: torch.Tensor,  # [N] the position read in each row (e.g. the answer token)
    label_token_ids,  # K token ids
    *,
    padding_mask: torch.Tensor | None = None,
    batch_size: int = 512,
    device: torch.device | str | None = None,
) -> ResidualReadout:
    """Logit-lens readouts and module contributions of ``model`` at ``positions`` (see module docstring),
    computed on a float64 copy of ``model`` on ``device`` (None: the model's own device)."""
    check_additive(model)
    if input_ids.dim() != 2 or positions.shape != input_ids.shape[:1]:
        raise ValueError(
            f"need input_ids [N, T] and positions [N]; got {tuple(input_ids.shape)}, {tuple(positions.shape)}"
        )
    if len(positions) and (int(positions.min()) < 0 or int(positions.max()) >= input_ids.shape[1]):
        raise ValueError(f"positions must lie in [0, {input_ids.shape[1]})")
    labels = torch.as_tensor(np.asarray(label_token_ids), dtype=torch.long)
    if labels.dim() != 1 or len(labels) < 1 or int(labels.min()) < 0 or int(labels.max()) >= model.cfg.vocab_size:
        raise ValueError(f"label_token_ids must be token ids in [0, {model.cfg.vocab_size})")
    device = model_device(model) if device is None else torch.device(device)
    model64 = copy.deepcopy(model).to(device=device, dtype=torch.float64).eval()  # exact widening, as .double()
    labels = labels.to(device)
    norm = model64.final_norm
    w_k = unembedding(model64)[labels]  # [K, d]
    b_u = unembedding_bias(model64)
    b_k = torch.zeros(len(labels), dtype=w_k.dtype, device=device) if b_u is None else b_u[labels]  # [K]
    n_layers = model64.cfg.n_layers
    hooks, names, types, layers = _member_hooks(n_layers)
    states = ["hook_embed"] + [f"blocks.{layer}.hook_resid_post" for layer in range(n_layers)]
    wanted = sorted(set(hooks + states + ["hook_resid_final"]))

    lens, contributions, logits = [], [], []
    stream_error = logit_error = 0.0
    # A causal model's state at position p does not depend on later tokens, so each batch is cut
    # after its last read position; examples go in order of that position to keep batches short.
    order = torch.argsort(positions, stable=True) if model64.cfg.causal else torch.arange(len(positions))
    for start in range(0, len(input_ids), batch_size):
        rows = order[start : start + batch_size]
        pos = positions[rows]
        width = int(pos.max()) + 1 if model64.cfg.causal else input_ids.shape[1]
        mask = None if padding_mask is None else padding_mask[rows, :width].to(device)
        out, cache = model64.run_with_cache(input_ids[rows, :width].to(device), names=wanted, padding_mask=mask)
        pos = pos.to(device)
        index = torch.arange(len(rows), device=device)
        at = {name: cache[name][index, pos] for name in wanted}  # each [n, d]
        z = out[index, pos][:, labels]  # [n, K]
        stream = at["hook_resid_final"]
        members = torch.stack([at[h] for h in hooks], dim=1)  # [n, M, d]
        stream_error = max(stream_error, float((members.sum(dim=1) - stream).abs().max()))
        c = frozen_norm_contributions(members, stream, norm) @ w_k.T  # [n, M, K]
        c[:, 0] += b_k  # the unembedding bias is a constant, carried by the embedding member
        logit_error = max(logit_error, float((c.sum(dim=1) - z).abs().max()))
        lens.append(torch.stack([norm(at[s]) @ w_k.T + b_k for s in states], dim=1).cpu())  # [n, L+1, K]
        contributions.append(c.cpu())
        logits.append(z.cpu())
    restore = torch.argsort(order)  # back to the caller's example order
    return ResidualReadout(
        lens=torch.cat(lens)[restore].numpy(),
        contributions=torch.cat(contributions)[restore].numpy(),
        logits=torch.cat(logits)[restore].numpy(),
        member_names=tuple(names),
        member_types=tuple(types),
        member_layers=tuple(layers),
        stream_error=stream_error,
        logit_error=logit_error,
    )


def check_telescoping(model: nn.Module) -> None:
    """Raise NotAdditiveError unless ``model`` is a decoder whose logits are read through a final norm, so that
    its layer increments can be read out (any block: skipless, parallel, shaped attention)."""
    if not isinstance(model, Transformer):
        raise NotAdditiveError(f"expected a repro.models.Transformer, got {type(model).__name__}")
    problems = []
    if model.cfg.output != "lm":
        problems.append(f"output={model.cfg.output!r} (needs 'lm': logits over the vocabulary)")
    if model.final_norm is None:
        problems.append("final_norm=False (the increments are read through the final norm)")
    if model.cfg.cross_attention:
        problems.append("cross-attention reads a memory the increments do not carry")
    if problems:
        raise NotAdditiveError("the layer increments cannot be read out: " + "; ".join(problems))


@dataclass(frozen=True)
class IncrementReadout:
    """One batch of `layer_increment_readouts`, float64 tensors on the readout's device.

    contributions  [B, T, L+1, V]  each increment's contribution to the logits (frozen final norm; the
                                   norm's bias and the unembedding bias go to member 0, h_0)
    logits         [B, T, V]       the model's own logits; Σ over members of contributions equals them
    stream_error   max |h_0 + Σ increments − h_L| (telescoping, to rounding)
    logit_error    max |Σ contributions − logits|
    """

    contributions: torch.Tensor
    logits: torch.Tensor
    stream_error: float
    logit_error: float


@torch.no_grad()
def layer_increment_readouts(
    model: Transformer, batches: Iterable[torch.Tensor], device: torch.device | str | None = None
) -> Iterator[IncrementReadout]:
    """The layer increments of ``model``'s residual stream read out at every position of each batch of
    token ids [B, T] (see the module docstring), on a float64 copy made once on ``device`` (None: the
    model's own)."""
    check_telescoping(model)
    device = model_device(model) if device is None else torch.device(device)
    model64 = copy.deepcopy(model).to(device=device, dtype=torch.float64).eval()
    norm, w_u, b_u = model64.final_norm, unembedding(model64), unembedding_bias(model64)
    n_layers = model64.cfg.n_layers
    states = ["blocks.0.hook_resid_pre"] + [f"blocks.{layer}.hook_resid_post" for layer in range(n_layers)]
    for input_ids in batches:
        logits, cache = model64.run_with_cache(input_ids.to(device), names=states + ["hook_resid_final"])
        h = [cache[name] for name in states]  # L+1 states [B, T, d]
        members = torch.stack([h[0]] + [h[layer] - h[layer - 1] for layer in range(1, n_layers + 1)], dim=2)
        stream = cache["hook_resid_final"]  # [B, T, d]
        batch, length, count, width = members.shape
        stream_error = float((members.sum(dim=2) - stream).abs().max())
        normed = frozen_norm_contributions(members.reshape(-1, count, width), stream.reshape(-1, width), norm)
        contributions = normed @ w_u.T  # [B·T, L+1, V]
        if b_u is not None:
            contributions[:, 0] += b_u  # a constant, carried by h_0 as the norm's bias is
        contributions = contributions.reshape(batch, length, count, -1)
        logit_error = float((contributions.sum(dim=2) - logits).abs().max())
        yield IncrementReadout(contributions, logits, stream_error, logit_error)


__all__ = [
    "IncrementReadout",
    "NotAdditiveError",
    "ResidualReadout",
    "check_additive",
    "check_telescoping",
    "layer_increment_readouts",
    "frozen_norm_contributions",
    "read_residual_stream",
    "unembedding",
    "unembedding_bias",
]
