"""The one Transformer family used by all four papers (see transformer.py), and the one-attention-layer
models of the theory of parameter allocation (shallow.py, imported by module path).

Its names load their module on first use (repro.lazy): reading a config does not import torch.
"""

from repro.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "repro.models.config": (
            "BLOCK_KINDS",
            "BLOCK_PRESETS",
            "BlockSpec",
            "ConfigError",
            "TransformerConfig",
            "config_from_dict",
            "config_from_file_dict",
            "config_to_file_dict",
        ),
        "repro.models.pruning": ("count_parameters", "heads_from_mask", "prune_heads"),
        "repro.models.transformer": ("ATTENTION_TYPES", "EncoderDecoder", "Transformer", "build_model"),
    },
)
