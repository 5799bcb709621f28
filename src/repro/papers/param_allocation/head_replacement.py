"""Replacing one attention head of a trained decoder by a low-dimensional student head.

The practical method of Yu et al. (2025) (catalog §1.6-1.7, Figs 4, 6, 9): a head of dimension d_h
is swapped for a head of dimension r < d_h, initialised from the truncated SVD of the teacher head's
two bilinear forms, zero-shot or after fine-tuning only that head.

Teacher head h of one layer (no query/key/value biases, softmax attention, positions added to the
residual stream so that the head is purely bilinear: learned, sinusoidal or no positions; RoPE and
ALiBi change the form and are refused, catalog P10). With x_t the attention's input (LN(resid) in a
pre-LN block) and W_Q,h, W_K,h, W_V,h ∈ R^{d_h×d} the head's rows of the projections, W^P_h ∈ R^{d×d_h}
its columns of the output projection:

    z_ts = x_tᵀ A x_s,          A = W_Q,hᵀ W_K,h / √d_h          [d, d], rank ≤ d_h
    o_t  = M Σ_{s≤t} p_ts x_s,  M = W^P_h W_V,h                   [d, d], rank ≤ d_h

A student of dimension r has W_Q', W_K', W_V' ∈ R^{r×d} and W_O' ∈ R^{d×r}:

    z'_ts = (W_Q' x_t)·(W_K' x_s)/√r,   o'_t = W_O' Σ_s p'_ts W_V' x_s.

SVD initialisation: A = U Σ Vᵀ gives W_Q' = r^{1/4} (U_r Σ_r^{1/2})ᵀ and W_K' = r^{1/4} (V_r Σ_r^{1/2})ᵀ,
so that W_Q'ᵀ W_K'/√r = A_r, the best rank-r approximation (Eckart-Young). This is the catalog's
scale correction s = (r/d_h)^{1/4}: its A has no 1/√d_h, ours includes it, and r^{1/4} = s·d_h^{1/4}.
M = P S Rᵀ gives W_O' = P_r S_r^{1/2} and W_V' = S_r^{1/2} R_rᵀ, so that W_O' W_V' = M_r. At r = d_h the
student computes exactly what the teacher head computes.

Replacement: the teacher head is removed with the model's head mask and the student's output is
added to the attention module's output (a forward hook on that module, which receives the attention
input), so every other weight, the attention gain and the residual wiring stay the teacher's.

Fine-tuning (catalog §1.7 allows the LM loss or an MSE to the teacher head's output) uses the MSE: the
student is fitted to the teacher head's output o_t on cached attention inputs of training chunks
(`HeadDistillationTask`), and judged by the language-model loss of the model it is put into.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.models.attention import Attention
from repro.models.transformer import Transformer
from repro.papers.param_allocation.specs import UNSUPPORTED_POSITIONS
from repro.training.seeding import generator
from repro.training.tasks import EpochSampler, task_fingerprint


class StudentHead(nn.Module):
    """One causal attention head of dimension r reading and writing width d: [B, T, d] -> [B, T, d]."""

    def __init__(self, d_model: int, rank: int):
        super().__init__()
        if not (isinstance(rank, int) and rank >= 1 and d_model >= 1):
            raise ValueError(
                f"StudentHead needs d_model ≥ 1 and an integer rank ≥ 1 (got d_model={d_model}, rank={rank!r})"
            )
        self.d_model, self.rank = int(d_model), int(rank)
        self.w_query = nn.Parameter(torch.zeros(rank, d_model))
        self.w_key = nn.Parameter(torch.zeros(rank, d_model))
        self.w_value = nn.Parameter(torch.zeros(rank, d_model))
        self.w_out = nn.Parameter(torch.zeros(d_model, rank))

    def forward(self, x: Tensor) -> Tensor:
        q = (x @ self.w_query.T).unsqueeze(1)  # [B, 1, T, r]
        k = (x @ self.w_key.T).unsqueeze(1)
        v = (x @ self.w_value.T).unsqueeze(1)
        ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True).squeeze(1)  # scale 1/√r
        return ctx @ self.w_out.T

    def parameter_count(self) -> int:
        return 4 * self.d_model * self.rank


def _check_head(attn: Attention, head: int) -> None:
    if attn.kind != "softmax":
        raise ValueError(f"head replacement needs softmax attention, layer {attn.layer} has {attn.kind!r}")
    if attn.position in UNSUPPORTED_POSITIONS:
        raise ValueError(
            f"position={attn.position!r} makes a head's logits non-bilinear in its inputs; "
            f"head replacement needs learned, sinusoidal or no positions (catalog P10)"
        )
    if attn.q_proj.bias is not None or attn.k_proj.bias is not None or getattr(attn.value, "bias", None) is not None:
        raise ValueError("head replacement needs qk_bias=false and vo_bias=false (the bilinear forms are then exact)")
    if attn.value.kind == "identity" or attn.proj.kind == "identity":
        raise ValueError("head replacement needs value and output matrices (not 'identity')")
    if attn.head_ids.tolist() != list(range(attn.n_heads)):
        raise ValueError("head replacement needs an unpruned attention layer")
    if not 0 <= head < attn.n_heads:
        raise ValueError(f"head {head} out of range: layer {attn.layer} has {attn.n_heads} heads")


def head_matrices(attn: Attention, head: int) -> dict[str, Tensor]:
    """The head's W_Q, W_K, W_V [d_h, d] and W^P [d, d_h] (views of the layer's weights)."""
    _check_head(attn, head)
    rows = slice(head * attn.head_dim, (head + 1) * attn.head_dim)
    return {
        "query": attn.q_proj.weight[rows],
        "key": attn.k_proj.weight[rows],
        "value": attn.value.effective_weight()[rows],
        "out": attn.proj.effective_weight()[:, rows],
    }


def bilinear_forms(attn: Attention, head: int) -> tuple[Tensor, Tensor]:
    """(A, M) of the module docstring in float64: logits x_tᵀ A x_s and output map M, both [d, d]."""
    w = {name: t.detach().double() for name, t in head_matrices(attn, head).items()}
    return w["query"].T @ w["key"] / math.sqrt(attn.head_dim), w["out"] @ w["value"]


def svd_student(attn: Attention, head: int, rank: int) -> StudentHead:
    """The truncated-SVD student of dimension `rank` (module docstring), in the dtype of the teacher's weights
    (the SVD itself is taken in float64)."""
    if not 1 <= rank:
        raise ValueError(f"rank must be ≥ 1, got {rank}")
    scores, output = bilinear_forms(attn, head)
    u, sigma, vh = torch.linalg.svd(scores)
    p, s, rh = torch.linalg.svd(output)
    r = min(rank, scores.shape[0])
    student = StudentHead(attn.d_model, rank).to(attn.q_proj.weight.dtype)
    qk_root = sigma[:r].sqrt() * rank**0.25
    vo_root = s[:r].sqrt()
    with torch.no_grad():  # ranks above d (impossible for a real head) would leave zero rows
        student.w_query[:r] = (u[:, :r] * qk_root).T
        student.w_key[:r] = (vh[:r].T * qk_root).T
        student.w_value[:r] = vo_root[:, None] * rh[:r]
        student.w_out[:, :r] = p[:, :r] * vo_root
    return student


def random_student(d_model: int, rank: int, init_std: float, seed: int, *purpose: object) -> StudentHead:
    """A student with N(0, init_std²) weights drawn from the generator of (seed, *purpose)."""
    student = StudentHead(d_model, rank)
    gen = generator(seed, "random-student", *purpose)
    with torch.no_grad():
        for param in (student.w_query, student.w_key, student.w_value, student.w_out):
            param.copy_(torch.randn(param.shape, generator=gen) * init_std)
    return student


# -- running the teacher with one head replaced ---------------------------------------------------
def head_mask_without(model: Transformer, removed: list[tuple[int, int]]) -> Tensor:
    """The all-ones head mask with 0 at every (layer, head) of `removed`, [n_layers, max_heads]."""
    mask = model.full_head_mask()
    for layer, head in removed:
        mask[layer, head] = 0.0
    return mask


@contextlib.contextmanager
def added_head(model: Transformer, layer: int, student: nn.Module) -> Iterator[None]:
    """While active, `student(attention input)` is added to layer `layer`'s attention output."""
    inputs: list[Tensor] = []

    def keep_input(x: Tensor, name: str) -> None:
        inputs[:] = [x]

    def add(output: Tensor, name: str) -> Tensor:
        return output + student(inputs[0]).to(output.dtype)

    prefix = f"blocks.{layer}.attn"
    with model.hooks({f"{prefix}.hook_attn_in": keep_input, f"{prefix}.hook_result": add}):
        yield


def replaced_logits(
    model: Transformer,
    tokens: Tensor,
    layer: int | None = None,
    head: int | None = None,
    student: nn.Module | None = None,
) -> Tensor:
    """Logits [B, T, V] of the teacher, of the teacher without (layer, head) (student None), or of the
    teacher with (layer, head) replaced by `student`."""
    if layer is None:
        return model(tokens)
    _check_head(model.blocks[layer].attn, head)
    mask = head_mask_without(model, [(layer, head)]).to(next(model.parameters()).dtype)
    if student is None:
        return model(tokens, head_mask=mask)
    with added_head(model, layer, student):
        return model(tokens, head_mask=mask)


@torch.no_grad()
def token_losses(
    model: Transformer,
    tokens: Tensor,
    layer: int | None = None,
    head: int | None = None,
    student: nn.Module | None = None,
    batch_size: int = 16,
) -> Tensor:
    """Next-token cross-entropy of every chunk of `tokens` [N, T] at every position: float64 [N, T − 1]
    (position t predicts token t + 1), for the model as `replaced_logits` runs it."""
    was_training = model.training
    model.eval()
    rows = []
    try:
        for start in range(0, len(tokens), batch_size):
            chunk = tokens[start : start + batch_size]
            logits = replaced_logits(model, chunk, layer, head, student)[:, :-1]  # [b, T-1, V]
            # Rows of V contiguous logits: a [b, V, T-1] view would make the loss walk memory by strides.
            losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1), reduction="none")
            rows.append(losses.view(len(chunk), -1).double())
    finally:
        model.train(was_training)
    return torch.cat(rows)


def position_losses(*args, **kwargs) -> Tensor:
    """Mean next-token cross-entropy per position over the chunks: `token_losses` (same arguments) averaged
    over its chunks, float64 [T − 1]. Their mean is the LM loss of the fixed evaluation set."""
    return token_losses(*args, **kwargs).mean(0)


@torch.no_grad()
def attention_io(
    model: Transformer, tokens: Tensor, layers: list[int], batch_size: int = 32
) -> dict[int, tuple[Tensor, Tensor]]:
    """For each layer: (attention inputs [N, T, d], per-head contexts before W^P [N, H, T, d_h])."""
    names = {layer: (f"blocks.{layer}.attn.hook_attn_in", f"blocks.{layer}.attn.hook_z") for layer in layers}
    cache = model.cache_in_batches(tokens, [name for pair in names.values() for name in pair], batch_size)
    return {layer: (cache[inputs], cache[contexts]) for layer, (inputs, contexts) in names.items()}


def head_output(attn: Attention, head: int, contexts: Tensor) -> Tensor:
    """The head's contribution to the attention output, ctx_h W^Pᵀ_h: [N, H, T, d_h] -> [N, T, d]."""
    with torch.no_grad():
        return contexts[:, head] @ head_matrices(attn, head)["out"].T


class HeadDistillationTask:
    """Fit a head to a teacher head's outputs (a `repro.training.tasks.Task`).

    inputs [N, T, d] (the layer's attention inputs) and targets [N, T, d] (the teacher head's output),
    with a held-out pair of the same form. loss = E_t‖o′_t − o_t‖² / E_t‖o_t‖², the denominator being
    the held-out mean (a constant), so the loss reads as the fraction of the head's output not matched.
    """

    def __init__(
        self, inputs: Tensor, targets: Tensor, eval_inputs: Tensor, eval_targets: Tensor, eval_batch_size: int = 64
    ):
        if inputs.shape != targets.shape or eval_inputs.shape != eval_targets.shape or inputs.dim() != 3:
            raise ValueError(
                f"inputs and targets must both be [N, T, d]; got {tuple(inputs.shape)}, "
                f"{tuple(targets.shape)}, {tuple(eval_inputs.shape)}, {tuple(eval_targets.shape)}"
            )
        self.inputs, self.targets = inputs, targets
        self.eval_inputs, self.eval_targets = eval_inputs, eval_targets
        self.eval_batch_size = int(eval_batch_size)
        self.power = float((eval_targets.double() ** 2).sum(-1).mean())
        if not self.power > 0:
            raise ValueError("the teacher head's held-out output is zero; a normalised error is undefined")
        self.sampler = EpochSampler(len(inputs))

    def train_batch(self, step: int, batch_size: int, seed: int) -> dict[str, Tensor]:
        rows = self.sampler.indices(step, batch_size, seed)
        return {"inputs": self.inputs[rows], "targets": self.targets[rows]}

    def eval_batches(self) -> Iterator[dict[str, Tensor]]:
        for start in range(0, len(self.eval_inputs), self.eval_batch_size):
            rows = slice(start, start + self.eval_batch_size)
            yield {"inputs": self.eval_inputs[rows], "targets": self.eval_targets[rows]}

    def loss(self, model: nn.Module, batch: dict[str, Tensor]):
        from repro.training.tasks import LossOutput

        errors = ((model(batch["inputs"]) - batch["targets"]) ** 2).sum(-1)  # [B, T]
        n = errors.numel()
        return LossOutput(errors.mean() / self.power, n, n)

    def fingerprint(self) -> dict:
        return task_fingerprint(self, "inputs", "targets", "eval_inputs", "eval_targets")


__all__ = [
    "HeadDistillationTask",
    "StudentHead",
    "added_head",
    "attention_io",
    "bilinear_forms",
    "head_mask_without",
    "head_matrices",
    "head_output",
    "position_losses",
    "token_losses",
    "random_student",
    "replaced_logits",
    "svd_student",
]
