"""One row per run configuration: the resolved block spec and the training settings that tell
variants apart, so figures and claims can group runs by what they are (β, W_init, LR ratio, ...)
instead of parsing variant names.

Columns: variant, every `TransformerConfig` field that is a plain value (block, norm, d_model, ...),
every `BlockSpec` field prefixed `spec_` (spec_reparam_beta, spec_reparam_init, ...), the training
fields lr, steps, batch_size, schedule, lr_multipliers (JSON text), `value_proj_lr_ratio`: the
LR multiplier that applies to the value/projection matrices, and `gain_lr_multiplier`: the one that
applies to the scalar gains (each 1 where no pattern matches them).
"""

from __future__ import annotations

import dataclasses
import json
import re

import pandas as pd

from repro.models import config_from_dict

# Parameter names each multiplier is read for: a layer's W^V and W^P, and its gains (β_V, α_V of the
# reparametrised W^V, the shaped attention's α, β_FF's branch gain).
_VALUE_PROJ_NAMES = ("blocks.1.attn.value.delta", "blocks.1.attn.proj.delta", "blocks.1.attn.value.weight")
GAIN_NAMES = (
    "blocks.1.attn.value.resid_gain",
    "blocks.1.attn.value.skip_gain",
    "blocks.1.attn.mat_skip_gain",
    "blocks.1.mlp_resid.gain",
)
TRAIN_FIELDS = ("lr", "steps", "batch_size", "schedule")


def _multiplier_for(names: tuple[str, ...], lr_multipliers: dict[str, float]) -> float:
    """The multiplier the first pattern matching any of `names` gives them (1.0 if none matches)."""
    for pattern, factor in lr_multipliers.items():
        if any(re.search(pattern, name) for name in names):
            return float(factor)
    return 1.0


def value_proj_lr_ratio(lr_multipliers: dict[str, float]) -> float:
    """The LR multiplier of the value/projection matrices."""
    return _multiplier_for(_VALUE_PROJ_NAMES, lr_multipliers)


def gain_lr_multiplier(lr_multipliers: dict[str, float]) -> float:
    """The LR multiplier of the scalar gains."""
    return _multiplier_for(GAIN_NAMES, lr_multipliers)


def variant_table(specs: dict[str, dict]) -> pd.DataFrame:
    """specs: {variant: {"model": TransformerConfig fields, "train": TrainConfig fields}}."""
    rows = []
    for variant, spec in specs.items():
        cfg = config_from_dict(dict(spec["model"]), where=f"{variant}.model")
        row = {"variant": variant}
        for name, value in cfg.to_dict().items():
            if isinstance(value, (str, int, float, bool)) or value is None:
                row[name] = value
        for field in dataclasses.fields(cfg.block_spec):
            row[f"spec_{field.name}"] = getattr(cfg.block_spec, field.name)
        train = spec.get("train", {})
        for name in TRAIN_FIELDS:
            row[name] = train.get(name)
        multipliers = train.get("lr_multipliers", {}) or {}
        row["lr_multipliers"] = json.dumps(multipliers, sort_keys=True)
        row["value_proj_lr_ratio"] = value_proj_lr_ratio(multipliers)
        row["gain_lr_multiplier"] = gain_lr_multiplier(multipliers)
        rows.append(row)
    return pd.DataFrame(rows)


def curves_and_variants(curves_csv, variants_csv) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A figure's training curves, and the variants table's rows of the variants they show (indexed by
    variant, sorted) with the plotting style `key` of each."""
    curves = pd.read_csv(curves_csv)
    facts = pd.read_csv(variants_csv).set_index("variant").loc[sorted(set(curves["variant"]))]
    facts["key"] = [style_key(b, n) for b, n in zip(facts["block"], facts["norm"])]
    return curves, facts


def style_key(block: str, norm: str) -> str:
    """The plotting style a run of `block` with `norm` is drawn in: both Value-SkipInit blocks share
    V-SkipInit's, SAS-P without norms has its own, every other block its own name."""
    if block.startswith("vskipinit"):
        return "vskipinit"
    if block == "sas_p" and norm == "none":
        return "sas_p_nonorm"
    return block
