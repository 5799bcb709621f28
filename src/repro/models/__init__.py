"""The one Transformer family used by all four papers (see transformer.py)."""

from repro.models.config import (
    BLOCK_KINDS,
    BLOCK_PRESETS,
    BlockSpec,
    ConfigError,
    TransformerConfig,
    config_from_dict,
)
from repro.models.pruning import count_parameters, heads_from_mask, prune_heads
from repro.models.transformer import ATTENTION_TYPES, EncoderDecoder, Transformer, build_model

__all__ = [
    "ATTENTION_TYPES",
    "BLOCK_KINDS",
    "BLOCK_PRESETS",
    "BlockSpec",
    "ConfigError",
    "EncoderDecoder",
    "Transformer",
    "TransformerConfig",
    "build_model",
    "config_from_dict",
    "count_parameters",
    "heads_from_mask",
    "prune_heads",
]
