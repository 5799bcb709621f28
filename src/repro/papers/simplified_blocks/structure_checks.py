"""The structural claims of "Simplifying Transformer Blocks", measured on given model configurations.

`run_all(configs, paper_size)` returns three tidy tables:

inventory  `block_structure.block_inventory` of every configuration (Figs 1, 10, 11).
checks     one row per exact identity: check, setting, value, tolerance, passed. In float64:
           - identity_at_init: |attention sub-block(X) − Norm(X)| for every shaped-attention model
             with identity values/projections, causal and bidirectional;
           - shaped_matrix_is_identity: |αI + βA − γC − I| read from the explicit attention matrices;
           - sas_equals_sas_p_at_init: |SAS(x) − SAS-P(x)| without norms (exact), with the configured
             norm at eps 1e-12 (exact up to eps) and at the configured eps (reported against 100·eps);
           - parameter_difference: P(Pre-LN) − P(SAS) − [(2L−1)d² − gains], and the same for
             Parallel − SAS-P, at this scale and at the paper's size (must be exactly 0);
           - lr_duality_{sgd,adam}: one step on W = α·W_init + β·ΔW against one step on a plain W at
             LR × β² (SGD) or × β (Adam), relative gap; plus controls with the other multiplier,
             which must leave a gap of the order of the update.
params     trainable parameters of every configuration at this scale and at the paper's size.

Which models are compared follows from the block kinds (a `sas` configuration is compared with the
`pre_ln` block of otherwise equal settings, `sas_p` with `parallel`), not from variant names.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import torch

from repro.models import Transformer, TransformerConfig, count_parameters
from repro.papers.simplified_blocks import block_structure as bs
from repro.papers.simplified_blocks.lr_duality import duality_gap

CHECK_COLUMNS = ["check", "variant", "setting", "value", "tolerance", "passed"]
EXACT = 1e-12  # float64 rounding over a few layers
DUALITY_RELATIVE = 1e-10  # |gap| / |update| after one step, float64
DUALITY_CONTROL_MIN = 0.1  # a wrong LR multiplier must leave at least this relative gap
COUNTERPART = {"sas": "pre_ln", "sas_p": "parallel"}
DUALITY_BETA = 0.3


def _is_simplified(cfg: TransformerConfig) -> bool:
    spec = cfg.block_spec
    return spec.attention == "shaped" and spec.value == "identity" and spec.proj == "identity" and spec.query_init_zero


def _replace(cfg: TransformerConfig, **changes) -> TransformerConfig:
    return bs.with_fields(cfg, **changes)


def _build(cfg: TransformerConfig, seed: int) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(cfg).double().eval()


def _tokens(cfg: TransformerConfig, seed: int, batch: int = 2) -> torch.Tensor:
    T = min(cfg.max_seq_len, 32)
    return torch.randint(0, cfg.vocab_size, (batch, T), generator=torch.Generator().manual_seed(seed + 1))


def _row(check, variant, setting, value, tolerance, passed=None) -> dict:
    value = float(value)
    return dict(
        check=check,
        variant=variant,
        setting=setting,
        value=value,
        tolerance=float(tolerance),
        passed=bool(value <= tolerance) if passed is None else bool(passed),
    )


def identity_rows(name: str, cfg: TransformerConfig, seed: int) -> list[dict]:
    rows = []
    for causal in (True, False):
        variant_cfg = _replace(cfg, causal=causal)
        model = _build(variant_cfg, seed)
        x = _tokens(variant_cfg, seed)
        setting = "causal" if causal else "bidirectional"
        rows.append(_row("identity_at_init", name, setting, bs.attention_identity_error(model, x), EXACT))
        rows.append(_row("shaped_matrix_is_identity", name, setting, bs.shaped_matrix_identity_error(model, x), EXACT))
    return rows


def sequential_parallel_rows(name: str, cfg: TransformerConfig, seed: int) -> list[dict]:
    """SAS against SAS-P of the same settings (the SAS-P counterpart of a `sas` config)."""
    rows = []
    settings = [("no norm", dict(norm="none"), EXACT)]
    if cfg.norm != "none":
        settings.append((f"{cfg.norm}, eps 1e-12", dict(norm_eps=1e-12), 1e-9))
        settings.append((f"{cfg.norm}, eps {cfg.norm_eps:g}", {}, 100 * cfg.norm_eps))
    for setting, changes, tolerance in settings:
        seq_cfg = _replace(cfg, **changes)
        par_cfg = _replace(seq_cfg, block="sas_p")
        gap = bs.sequential_parallel_gap(_build(seq_cfg, seed), _build(par_cfg, seed), _tokens(seq_cfg, seed))
        rows.append(_row("sas_equals_sas_p_at_init", name, setting, gap, tolerance))
    return rows


def parameter_rows(name: str, cfg: TransformerConfig, paper_size: dict) -> list[dict]:
    rows = []
    reference_block = COUNTERPART[cfg.block]
    for size, sized in (("this scale", cfg), ("paper size", _replace(cfg, **paper_size))):
        counts = bs.parameter_difference(_replace(sized, block=reference_block), sized)
        off = counts["difference"] - counts["expected_difference"]
        setting = (
            f"{size}: {reference_block} − {cfg.block}, L={counts['n_layers']}, d={counts['d_model']}, "
            f"difference {counts['difference']:,} = (2L−1)d² {counts['removed_matrices']:,} "
            f"− gains {counts['added_gains']}"
        )
        rows.append(_row("parameter_difference", name, setting, abs(off), 0.0))
    return rows


def duality_rows(name: str, cfg: TransformerConfig, seed: int) -> list[dict]:
    rows = []
    for init in ("identity", "orthogonal"):
        overrides = dict(
            cfg.block_overrides,
            value="reparam",
            proj="reparam",
            first_value="reparam",
            reparam_init=init,
            reparam_beta=DUALITY_BETA,
            reparam_trainable=False,
        )
        dual_cfg = _replace(cfg, block_overrides=overrides)
        batch = [_tokens(dual_cfg, seed, batch=2)[:, :16]]  # one small batch: the identity is exact for any
        for optimizer, lr in (("sgd", 0.05), ("adam", 1e-3)):
            theory = DUALITY_BETA**2 if optimizer == "sgd" else DUALITY_BETA
            wrong = DUALITY_BETA if optimizer == "sgd" else DUALITY_BETA**2
            for control, scale in ((False, None), (True, wrong)):
                result = duality_gap(_build(dual_cfg, seed), batch, optimizer=optimizer, lr=lr, lr_scale=scale)
                relative = result["matrix_gap"] / result["matrix_change"]
                label = f"{init} W_init, β={DUALITY_BETA}, LR × {'β' if optimizer == 'adam' else 'β²'}"
                if control:
                    label = f"{init} W_init, β={DUALITY_BETA}, control: LR × {'β²' if optimizer == 'adam' else 'β'} (theory {theory:g})"
                    rows.append(
                        _row(
                            f"lr_duality_{optimizer}_control",
                            name,
                            label,
                            relative,
                            DUALITY_CONTROL_MIN,
                            passed=relative >= DUALITY_CONTROL_MIN,
                        )
                    )
                else:
                    rows.append(_row(f"lr_duality_{optimizer}", name, label, relative, DUALITY_RELATIVE))
    return rows


def params_table(configs: dict[str, TransformerConfig], paper_size: dict) -> pd.DataFrame:
    rows = []
    for name, cfg in configs.items():
        for size, sized in (("this scale", cfg), ("paper size", _replace(cfg, **paper_size))):
            with torch.device("meta"):
                model = Transformer(sized)
            shape = {key: getattr(sized, key) for key in ("n_layers", "d_model", "d_ff", "vocab_size")}
            counts = {"parameters": count_parameters(model), "gain_scalars": bs.gain_scalars(model)}
            rows.append(bs.variant_keys(name, sized) | {"size": size} | shape | counts)
    return pd.DataFrame(rows)


def run_all(configs: dict[str, TransformerConfig], paper_size: dict, seed: int = 0):
    """(inventory, checks, params) DataFrames for the named configurations (see module docstring)."""
    unknown = set(paper_size) - {f.name for f in dataclasses.fields(TransformerConfig)}
    if unknown:
        raise ValueError(f"paper_size has unknown model fields {sorted(unknown)}")
    inventory = []
    for name, cfg in configs.items():
        inventory += bs.block_inventory(_build(cfg, seed), variant=name)
    checks = []
    for name, cfg in configs.items():
        if _is_simplified(cfg):
            checks += identity_rows(name, cfg, seed)
        if cfg.block in COUNTERPART and _is_simplified(cfg):
            checks += parameter_rows(name, cfg, paper_size)
        if cfg.block == "sas" and _is_simplified(cfg):
            checks += sequential_parallel_rows(name, cfg, seed)
            checks += duality_rows(name, cfg, seed)
    return (
        pd.DataFrame(inventory, columns=bs.INVENTORY_COLUMNS),
        pd.DataFrame(checks, columns=CHECK_COLUMNS),
        params_table(configs, paper_size),
    )
