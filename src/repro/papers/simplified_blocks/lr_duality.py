"""The learning-rate duality of reparameterised weights (He & Hofmann 2024, App. A, Fig 9).

A value or projection matrix written as W = α·W_init + β·ΔW, with W_init and the scalars fixed and
ΔW trained from 0, moves exactly like a plain matrix W trained from α·W_init at a scaled learning
rate:

- SGD (with or without momentum, no weight decay): the gradient of ΔW is β·∂L/∂W, so a step of
  size lr on ΔW moves W by lr·β²·∂L/∂W: the plain matrix at learning rate lr·β².
- Adam with eps → 0 (no weight decay): Adam's update is invariant to a constant rescaling of the
  gradient, so ΔW moves as the plain matrix would at lr, and W moves by β times that: the plain
  matrix at learning rate lr·β. With eps > 0 the two differ by terms of order eps/(β·|g|); the
  check uses eps = 1e-30 in float64 (eps = 0 would turn the 0/0 of parameters without gradient,
  such as unused embedding rows, into NaN).

`duality_gap` checks this on a model of the family: it builds the plain twin of a model whose
values/projections are reparameterised (same weights, W^V and W^P as ordinary matrices holding
the effective weights), trains both for a few steps on the same batches — the twin with the
learning-rate multiplier β² (SGD) or β (Adam) on W^V and W^P — and returns the largest difference
between their effective weights.
"""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F
from torch import nn

from repro.models import Transformer
from repro.training.optim import parameter_groups

VALUE_PROJ = r"attn\.(value|proj)\."


def plain_twin(model: Transformer) -> Transformer:
    """A copy of `model` whose reparameterised W^V/W^P are plain trainable matrices holding
    the same effective weights; every other weight is copied unchanged."""
    cfg = model.cfg
    spec = cfg.block_spec
    overrides = dict(cfg.block_overrides)
    for name in ("value", "proj", "first_value"):
        kind = getattr(spec, name)
        if kind == "reparam":
            overrides[name] = "linear"
    if overrides == dict(cfg.block_overrides):
        raise ValueError("the model has no reparameterised value or projection matrix")
    twin_cfg = dict(cfg.to_dict(), block_overrides=overrides)
    twin = Transformer(type(cfg)(**twin_cfg)).to(next(model.parameters()).dtype)
    source = model.state_dict()
    target = twin.state_dict()
    with torch.no_grad():
        for name, tensor in target.items():
            if name in source and source[name].shape == tensor.shape:
                tensor.copy_(source[name])
        for module_name, module in model.named_modules():
            if getattr(module, "kind", None) == "reparam" and hasattr(module, "effective_weight"):
                target[f"{module_name}.weight"].copy_(module.effective_weight())
    twin.load_state_dict(target)
    return twin


def effective_value_proj(model: Transformer) -> dict[str, torch.Tensor]:
    """{module name: effective matrix} of every value/projection matrix that exists."""
    return {
        name: module.effective_weight().detach().clone()
        for name, module in model.named_modules()
        if re.search(r"attn\.(value|proj)$", name) and module.kind != "identity"
    }


def _optimizer(model: nn.Module, kind: str, lr: float, multipliers: dict[str, float], momentum: float, eps: float):
    groups = parameter_groups(model, 0.0, multipliers)
    for group in groups:
        group["lr"] = lr * group["lr_multiplier"]
    if kind == "sgd":
        return torch.optim.SGD(groups, lr=lr, momentum=momentum)
    if kind == "adam":
        # A vanishing eps makes Adam invariant to rescaling the gradient; foreach=False keeps
        # the arithmetic the same for both models.
        return torch.optim.Adam(groups, lr=lr, eps=eps, foreach=False)
    raise ValueError(f"optimizer kind {kind!r} is not one of: sgd, adam")


def _lm_loss(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    logits = model(tokens)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


def duality_gap(
    model: Transformer,
    batches: list[torch.Tensor],
    *,
    optimizer: str,
    lr: float,
    momentum: float = 0.0,
    eps: float = 1e-30,
    lr_scale: float | None = None,
) -> dict[str, float]:
    """Train `model` (reparameterised W^V/W^P with fixed scalars) and its plain twin side by side.

    The twin gets LR multiplier β² (SGD) or β (Adam) on W^V and W^P, with β the model's
    `reparam_beta` (the reparameterisation's α must be fixed too; it sets only the starting
    point). One step per batch; `eps` is Adam's (ignored for SGD). `lr_scale` replaces the
    theory's multiplier, to show that a wrong one leaves a gap of the size of the update.
    With one batch the other parameters see identical gradients and stay bit-identical; over
    several Adam steps they drift (Adam turns the rounding noise of gradients that are zero in
    exact arithmetic, e.g. of the key bias, into steps of size lr), so use one step to check. Returns the largest |W_reparam − W_twin| over every value and
    projection matrix, the largest difference over all other parameters, and the largest
    change of the effective matrices (so a gap can be read against the size of the update).
    """
    spec = model.cfg.block_spec
    if spec.reparam_trainable:
        raise ValueError("the duality holds for fixed α, β: build the model with reparam_trainable=False")
    # β as the model stores it (a float32 buffer rounds 0.3, for example), not the config's literal.
    betas = {float(m.resid_gain) for m in model.modules() if getattr(m, "kind", None) == "reparam"}
    if len(betas) != 1:
        raise ValueError(f"expected one β shared by every reparameterised matrix, found {sorted(betas)}")
    beta = betas.pop()
    if beta == 0.0:
        raise ValueError("reparam_beta = 0 leaves W fixed; use a nonzero β")
    twin = plain_twin(model)
    scale = (beta**2 if optimizer == "sgd" else beta) if lr_scale is None else lr_scale
    start = effective_value_proj(model)
    opt_model = _optimizer(model, optimizer, lr, {}, momentum, eps)
    opt_twin = _optimizer(twin, optimizer, lr, {VALUE_PROJ: scale}, momentum, eps)
    for tokens in batches:
        for net, opt in ((model, opt_model), (twin, opt_twin)):
            opt.zero_grad(set_to_none=True)
            _lm_loss(net, tokens).backward()
            opt.step()
    after, after_twin = effective_value_proj(model), effective_value_proj(twin)
    matrix_gap = max(float((after[k] - after_twin[k]).abs().max()) for k in after)
    moved = max(float((after[k] - start[k]).abs().max()) for k in after)
    twin_params = dict(twin.named_parameters())
    other_gap = max(
        float((p.detach() - twin_params[n].detach()).abs().max())
        for n, p in model.named_parameters()
        if p.requires_grad and not re.search(VALUE_PROJ, n)
    )
    return {"matrix_gap": matrix_gap, "other_gap": other_gap, "matrix_change": moved, "beta": beta, "lr_scale": scale}
