"""What a block of the model family is made of, and the exact identities of the simplified blocks.

Everything here reads the model objects themselves, so figures and claims describe the code that
trains, not a drawing of it (He & Hofmann 2024, Figs 1, 10, 11 and §4):

- `block_inventory(model)`: one row per (layer, component) saying whether the component exists,
  its kind (norm type, attention kind, value/projection form, skip and gain values) and its
  trainable parameter count.
- `attention_identity_error`: at initialisation the shaped-attention sub-block of SAS/SAS-P maps
  its input X to Norm(X) exactly (W^Q = 0 gives A = C, so αI + βA − γC = I, and W^V = W^P = I).
- `shaped_matrix_identity_error`: the same, read off the explicit attention matrices.
- `sequential_parallel_gap`: SAS and SAS-P compute the same function at initialisation.
- `parameter_difference`: Pre-LN has exactly (2L−1)d² more parameters than SAS, up to the gains.
- `parameter_count_at`: trainable parameters of any configuration, built on the meta device (no
  memory, no compute), e.g. for the paper's 18-layer width-768 models.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from repro.models import Transformer, TransformerConfig, count_parameters
from repro.models.layers import Gain

INVENTORY_COLUMNS = ["variant", "block", "norm", "layer", "component", "present", "kind", "trainable", "parameters"]
# The order in which a block's components are listed (and drawn).
COMPONENTS = (
    "norm1",
    "query_key",
    "value",
    "attention",
    "proj",
    "attn_gain",
    "attn_skip",
    "norm2",
    "mlp",
    "mlp_gain",
    "mlp_skip",
)


def _trainable_count(module: nn.Module | None) -> int:
    if module is None:
        return 0
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def _gain_row(gain: Gain | None) -> tuple[bool, str, bool, int]:
    """(present, kind, trainable, parameters) of a skip or branch weight."""
    if gain is None:
        return False, "removed", False, 0
    if gain.fixed is not None:
        return True, f"fixed {gain.fixed:g}", False, 0
    return True, f"trainable, init {gain.value():g}", True, gain.gain.numel()


def _norm_kind(norm: nn.Module | None) -> str:
    if norm is None:
        return "removed"
    return {"LayerNorm": "layernorm", "RMSNorm": "rmsnorm"}.get(type(norm).__name__, type(norm).__name__)


def _matrix_row(matrix) -> tuple[bool, str, bool, int]:
    kind = matrix.kind
    if kind == "identity":
        return False, "identity (no matrix)", False, 0
    params = _trainable_count(matrix)
    if kind == "reparam":
        init = "I" if torch.equal(matrix.w_init, torch.eye(*matrix.w_init.shape, dtype=matrix.w_init.dtype)) else "orth"
        gains = "trainable" if isinstance(matrix.skip_gain, nn.Parameter) else "fixed"
        return (
            True,
            f"reparam α·{init}+β·ΔW, {gains} α={float(matrix.skip_gain.detach()):g} β={float(matrix.resid_gain.detach()):g}",
            True,
            params,
        )
    return True, kind, params > 0, params


def _attention_kind(attn) -> str:
    if attn.kind == "softmax":
        return "softmax A"
    trainable = isinstance(attn.mat_skip_gain, nn.Parameter)
    gains = (
        f"α={float(attn.mat_skip_gain.detach().flatten()[0]):g} β={float(attn.mat_resid_gain.detach().flatten()[0]):g}"
    )
    if attn.kind == "shaped":
        gains += f" γ={float(attn.centre_gain.detach().flatten()[0]):g}"
        formula = "shaped αI+βA−γC"
    else:
        formula = "αI+βA (Eq. 4)"
    return f"{formula}, {'trainable' if trainable else 'fixed'} per head, {gains}"


def block_inventory(model: Transformer, variant: str = "") -> list[dict]:
    """One row per (layer, component) of every block of `model` (see INVENTORY_COLUMNS).

    `present` says whether the component exists as computation: an identity value/projection
    or a removed skip is absent. A parallel block has no norm2 and no separate MLP skip.
    """
    cfg = model.cfg
    rows = []
    for layer, block in enumerate(model.blocks):
        attn = block.attn
        q_k = _trainable_count(attn.q_proj) + _trainable_count(attn.k_proj)
        entries = {
            "norm1": (
                block.norm1 is not None,
                _norm_kind(block.norm1),
                _trainable_count(block.norm1) > 0,
                _trainable_count(block.norm1),
            ),
            "query_key": (True, "zero-init W^Q" if _query_is_zero(attn) else "W^Q, W^K", True, q_k),
            "value": _matrix_row(attn.value),
            "attention": (
                True,
                _attention_kind(attn),
                attn.kind != "softmax" and isinstance(getattr(attn, "mat_skip_gain", None), nn.Parameter),
                _trainable_count_own(attn),
            ),
            "proj": _matrix_row(attn.proj),
            "attn_gain": _gain_row(block.attn_resid),
            "attn_skip": _gain_row(block.attn_skip),
            "norm2": (
                block.norm2 is not None,
                "shared with norm1 (parallel)" if block.parallel else _norm_kind(block.norm2),
                _trainable_count(block.norm2) > 0,
                _trainable_count(block.norm2),
            ),
            "mlp": (True, f"{cfg.activation} MLP d→{cfg.d_ff}→d", True, _trainable_count(block.mlp)),
            "mlp_gain": _gain_row(block.mlp_resid),
            "mlp_skip": _gain_row(block.mlp_skip)
            if not block.parallel
            else (False, "parallel: one skip (attn_skip)", False, 0),
        }
        for component in COMPONENTS:
            present, kind, trainable, params = entries[component]
            entry = dict(present=bool(present), kind=kind, trainable=bool(trainable), parameters=int(params))
            rows.append(variant_keys(variant, cfg) | {"layer": layer, "component": component} | entry)
    return rows


def variant_keys(variant: str, cfg: TransformerConfig) -> dict:
    """The columns that name a variant's rows: the variant, its block kind and its norm."""
    return {"variant": variant, "block": cfg.block, "norm": cfg.norm}


def _query_is_zero(attn) -> bool:
    return bool((attn.q_proj.weight == 0).all()) and (attn.q_proj.bias is None or bool((attn.q_proj.bias == 0).all()))


def _trainable_count_own(attn) -> int:
    """Trainable per-head α, β, γ of the attention matrix."""
    return sum(p.numel() for n, p in attn.named_parameters(recurse=False) if p.requires_grad)


# -- exact identities at initialisation ------------------------------------------------------------


def attention_identity_error(model: Transformer, tokens: torch.Tensor) -> float:
    """max over layers of |attention sub-block output − β_SA·Norm1(X)| at the current weights.

    At initialisation of SAS / SAS-P (shaped attention, W^Q = 0, identity values and projections)
    this is 0 up to rounding: the attention sub-block passes its normalised input through unchanged.
    """
    _, cache = model.run_with_cache(tokens, names=lambda n: n.endswith(("hook_resid_pre", "hook_attn_out")))
    worst = 0.0
    for layer, block in enumerate(model.blocks):
        x = cache[f"blocks.{layer}.hook_resid_pre"]
        with torch.no_grad():
            expected = block.attn_resid(x if block.norm1 is None else block.norm1(x))
            worst = max(worst, float((cache[f"blocks.{layer}.hook_attn_out"] - expected).abs().max()))
    return worst


def centre_matrix(T: int, causal: bool, dtype=torch.float64) -> torch.Tensor:
    """C = softmax of the mask alone: causal rows average positions 1..i, bidirectional rows are 1/T. [T,T]"""
    if causal:
        return torch.tril(torch.ones(T, T, dtype=dtype)) / torch.arange(1, T + 1, dtype=dtype)[:, None]
    return torch.full((T, T), 1.0 / T, dtype=dtype)


def shaped_matrix_identity_error(model: Transformer, tokens: torch.Tensor) -> float:
    """max over layers and heads of |αI + βA − γC − I|, with A read from the explicit attention path.

    Only blocks with shaped attention are checked (no ALiBi, no padding); 0 at initialisation.
    """
    patterns: dict[str, torch.Tensor] = {}

    def grab(pattern, name):
        patterns[name] = pattern

    names = [f"blocks.{i}.attn.hook_pattern" for i, b in enumerate(model.blocks) if b.attn.kind == "shaped"]
    if not names:
        raise ValueError("the model has no shaped-attention layer")
    with model.hooks({n: grab for n in names}):
        model(tokens)
    worst = 0.0
    for name, pattern in patterns.items():
        attn = model.get_submodule(name.rsplit(".", 1)[0])
        T = pattern.shape[-1]
        eye = torch.eye(T, dtype=pattern.dtype)
        C = centre_matrix(T, attn.causal, pattern.dtype)
        matrix = attn.mat_skip_gain * eye + attn.mat_resid_gain * pattern - attn.centre_gain * C
        worst = max(worst, float((matrix - eye).detach().abs().max()))
    return worst


def sequential_parallel_gap(sequential: Transformer, parallel: Transformer, tokens: torch.Tensor) -> float:
    """max |f_seq(x) − f_par(x)| after giving `parallel` the weights of `sequential`.

    The parallel model has no norm2 and no MLP skip gain, so those entries of the sequential state
    are dropped; every parameter of the parallel model must be covered. At initialisation SAS and
    SAS-P agree exactly without norms and up to the norm's eps with an idempotent norm (RMSNorm).
    """
    missing, _ = parallel.load_state_dict(sequential.state_dict(), strict=False)
    if missing:
        raise ValueError(f"the sequential model does not provide {missing}")
    with torch.no_grad():
        return float((sequential(tokens) - parallel(tokens)).abs().max())


# -- parameter counts ---------------------------------------------------------------------------


def gain_scalars(model: nn.Module) -> int:
    """Trainable elements of parameters named *gain* (block gains, per-head α/β/γ, reparam α/β)."""
    return sum(p.numel() for n, p in model.named_parameters() if p.requires_grad and "gain" in n)


def parameter_count_at(cfg: TransformerConfig) -> int:
    """Trainable parameters of `cfg` (tied embeddings once), built on the meta device."""
    with torch.device("meta"):
        return count_parameters(Transformer(cfg))


def parameter_difference(reference: TransformerConfig, simplified: TransformerConfig) -> dict:
    """P_reference − P_simplified against the paper's (2L−1)d² less the simplified model's gains.

    Removing W^V and W^P from every layer except layer 1's W^V removes (2L−1)d² weights; the
    simplified block adds trainable scalar gains. Both models are built on the meta device.
    """
    with torch.device("meta"):
        ref, simp = Transformer(reference), Transformer(simplified)
    L, d = simplified.n_layers, simplified.d_model
    difference = count_parameters(ref) - count_parameters(simp)
    removed = (2 * L - 1) * d * d
    gains = gain_scalars(simp) - gain_scalars(ref)
    return {
        "reference_parameters": count_parameters(ref),
        "simplified_parameters": count_parameters(simp),
        "difference": difference,
        "removed_matrices": removed,
        "added_gains": gains,
        "expected_difference": removed - gains,
        "n_layers": L,
        "d_model": d,
    }


def with_fields(cfg: TransformerConfig, **changes) -> TransformerConfig:
    """A copy of `cfg` with some fields changed (validated again).

    Uniform per-layer heads are written as one int, and a head dimension equal to the default
    d_model / n_heads is left to default, so a change of depth or width resizes them too.
    """
    values = cfg.to_dict()
    if len(set(values["n_heads"])) == 1:
        values["n_heads"] = values["n_heads"][0]
    if (
        len(set(values["head_dim"])) == 1
        and isinstance(values["n_heads"], int)
        and (values["head_dim"][0] * values["n_heads"] == cfg.d_model)
    ):
        values["head_dim"] = None
    values.update(changes)
    fields = {f.name for f in dataclasses.fields(TransformerConfig)}
    return TransformerConfig(**{k: v for k, v in values.items() if k in fields})
