"""`TransformerConfig`: one dataclass describing every model of the four papers.

A model is a stack of blocks. How a block wires attention, MLP, skips, gains and
value/projection matrices is a `BlockSpec`; the named block kinds of "Simplifying
Transformer Blocks" (He & Hofmann 2024) are presets of it (`BLOCK_PRESETS`), and a
run can override single fields of a preset (`block_overrides`) for the ablations.
Heads and head dimensions are given per layer, because heterogeneous allocations
are the subject of "Allocation of Parameters in Transformers".

The fields' types, ranges and allowed values are in `transformer_config.schema.yaml` beside this
module (the pipeline's config schema refers to it); a config checks itself against that file when it
is made, then checks the relations between fields. Every invalid value raises `ConfigError` naming
the field and what is allowed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro import schemas

SCHEMA_FILE = Path(__file__).with_name("transformer_config.schema.yaml")


class ConfigError(ValueError):
    """An invalid model or run configuration; the message names the field."""


@dataclass(frozen=True)
class BlockSpec:
    """How one block combines its sub-blocks (notation of He & Hofmann 2024, Eqs. 1-7).

    Sequential block:  X̂ = α_SA·X + β_SA·MHA(Norm(X));  X_out = α_FF·X̂ + β_FF·MLP(Norm(X̂)).
    Parallel block:    X_out = α_SA·X + β_SA·MHA(Norm(X)) + β_FF·MLP(Norm(X))  (one shared Norm;
                       α_SA plays the role of α_comb and `mlp_skip` is unused).
    Post-norm block:   X̂ = Norm(α_SA·X + β_SA·MHA(X));  X_out = Norm(α_FF·X̂ + β_FF·MLP(X̂)).
    A skip weight of exactly 0 removes the skip (no multiply-add is done).
    """

    parallel: bool = False
    post_norm: bool = False
    attention: str = "softmax"  # softmax | eq4 (αI + βA) | shaped (αI + βA − γC)
    attn_skip: float = 1.0  # α_SA
    attn_gain: float = 1.0  # β_SA
    mlp_skip: float = 1.0  # α_FF
    mlp_gain: float = 1.0  # β_FF
    trainable_gains: bool = False  # α/β of the block and the per-head α, β, γ of the attention matrix
    shaped_alpha: float = 1.0  # per-head α of the attention matrix at init
    shaped_beta: float = 1.0  # per-head β at init (0 for Eq. 4 Value-SkipInit)
    shaped_gamma: float = 1.0  # per-head γ at init (shaped attention only)
    value: str = "linear"  # W^V: linear | orthogonal | identity (removed) | reparam (Eq. 6)
    proj: str = "linear"  # W^P, same choices
    first_value: str | None = None  # layer-1 override of `value` (SAS keeps a trainable W^V_1)
    reparam_init: str = "identity"  # W_init of Eq. 6
    reparam_alpha: float = 1.0  # α_V, α_P at init
    reparam_beta: float = 1.0  # β_V, β_P at init
    reparam_trainable: bool = True  # are α_V, β_V (α_P, β_P) trained
    # Tie W^P's initial matrix (official code `tie_valproj_init`, Fig 15): "all" sets W^P_init = W^V_initᵀ
    # in every layer; "last" ("LL-tied") sets the last layer's W^P_init to the transpose of the chain
    # V_L P_{L-1} ... P_1 V_1 of all other initial matrices, so the whole chain is the identity at init;
    # "none" keeps independent initial matrices. Applies to reparam W_init and to trainable orthogonal W^V, W^P.
    reparam_tie: str = "none"
    query_init_zero: bool = False  # W^Q = 0 (and its bias) at init, so A = C exactly

    def validate(self, where: str = "block") -> None:
        """The relation between fields (each field's own values are checked by the model's schema)."""
        if self.parallel and self.post_norm:
            raise ConfigError(f"{where}: a block cannot be both parallel and post_norm")

    def value_kind(self, layer: int) -> str:
        return self.first_value if (layer == 0 and self.first_value is not None) else self.value

    @property
    def ties_every_layer(self) -> bool:
        """Whether `reparam_tie` involves the initial W^V, W^P of every layer (both ties do)."""
        return self.reparam_tie != "none"

    @property
    def removes_attention_skip(self) -> bool:
        return self.attn_skip == 0.0


_SIMPLIFIED = dict(
    attention="shaped",
    attn_skip=0.0,
    attn_gain=1.0,
    mlp_skip=1.0,
    mlp_gain=0.1,
    trainable_gains=True,
    value="identity",
    proj="identity",
    first_value="reparam",
    reparam_init="identity",
    query_init_zero=True,
)

# The block kinds of He & Hofmann (2024), following the official code's configs
# (catalog simplified_blocks.md §1, "Configs").
BLOCK_PRESETS: dict[str, BlockSpec] = {
    "pre_ln": BlockSpec(),
    "post_ln": BlockSpec(post_norm=True),
    "parallel": BlockSpec(parallel=True),
    # SAS: no attention skip, shaped attention, no W^V/W^P except a trainable W^V_1 = I + ΔW.
    "sas": BlockSpec(**_SIMPLIFIED),
    # SAS-P: the parallel block with no skip at all.
    "sas_p": BlockSpec(**{**_SIMPLIFIED, "parallel": True, "mlp_skip": 0.0}),
    # Value-SkipInit as in the paper's Eq. 4: A <- αI + βA with α=1, β=0 at init,
    # trainable orthogonal W^V, W^P and W^Q = 0 (He et al. 2023), MLP skip kept.
    "vskipinit": BlockSpec(
        attention="eq4",
        attn_skip=0.0,
        mlp_gain=0.1,
        trainable_gains=True,
        shaped_alpha=1.0,
        shaped_beta=0.0,
        value="orthogonal",
        proj="orthogonal",
        query_init_zero=True,
    ),
    # The official code's "Value-SkipInit" baseline (baseline_comparison.sh): shaped
    # attention (α=β=γ=1) with trainable orthogonal W^V, W^P and the MLP skip.
    "vskipinit_code": BlockSpec(
        attention="shaped",
        attn_skip=0.0,
        mlp_gain=0.1,
        trainable_gains=True,
        value="orthogonal",
        proj="orthogonal",
        query_init_zero=True,
    ),
}
BLOCK_KINDS = tuple(BLOCK_PRESETS)


def _per_layer(name: str, value: Any, n_layers: int) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * n_layers
    values = tuple(value)
    if len(values) != n_layers:
        raise ConfigError(
            f"{name} has {len(values)} entries but n_layers={n_layers}; give one per layer or a single int"
        )
    return values


@dataclass
class TransformerConfig:
    """Everything needed to build one model of the family (see module docstring).

    `n_heads` and `head_dim` accept one int for all layers or one value per layer;
    `head_dim` defaults to d_model // n_heads. `d_ff` is the MLP hidden width (per
    half for the gated activations swiglu/geglu).
    """

    vocab_size: int
    n_layers: int = 4
    d_model: int = 128
    n_heads: int | tuple[int, ...] = 4
    head_dim: int | tuple[int, ...] | None = None
    d_ff: int = 512
    max_seq_len: int = 128
    block: str = "pre_ln"
    block_overrides: dict[str, Any] = field(default_factory=dict)
    norm: str = "layernorm"
    norm_eps: float = 1e-5
    final_norm: bool = True
    # The final norm's kind: "block" uses the blocks' norm (LayerNorm when they have none), as Llama
    # does; "layernorm" keeps GPT-2's ln_f whatever the blocks use, as the official
    # simplified-transformers model does (its blocks are swapped into a GPT-2 whose ln_f stays).
    final_norm_kind: str = "block"
    # With norm="none" the official code still normalises the embeddings with a
    # LayerNorm in layer 1 (its ln_1); keep_first_norm reproduces that.
    keep_first_norm: bool = True
    activation: str = "gelu"
    leaky_slope: float = 0.0
    position: str = "learned"
    causal: bool = True
    cross_attention: bool = False  # decoder blocks of an encoder-decoder
    output: str = "lm"
    n_classes: int | None = None
    pool: str = "first"
    pooler: bool = True  # BERT-style dense + tanh before the classifier
    tie_embeddings: bool = True
    qk_bias: bool = True
    vo_bias: bool = True
    mlp_bias: bool = True
    dropout: float = 0.0
    attn_dropout: float = 0.0
    init_std: float = 0.02
    # Options that pretrained checkpoints need (repro.hub converters); their defaults keep every
    # model above unchanged, and `to_dict` leaves them out while they hold their defaults.
    embed_norm: bool = False  # a norm on the embeddings before block 1 (BERT's embedding LayerNorm)
    n_token_types: int = 0  # segment embeddings added to the tokens (BERT's token types); 0 = none
    # A separator token id: without explicit token types, a token's type is the number of these strictly
    # before it (capped at n_token_types - 1): BERT's types for [CLS] A [SEP] B. None: every token type 0.
    type_sep_id: int | None = None
    rope_base: float = 10000.0  # θ of the rotary frequencies θ^(-2i/d)
    rope_dim: int | None = None  # rotate only the first rope_dim dims of each head (Phi); None = all
    lm_head_bias: bool = False  # a bias on the output logits (Phi's lm_head)

    def __post_init__(self) -> None:
        self._check_fields()
        self.n_heads = _per_layer("n_heads", self.n_heads, self.n_layers)
        if self.head_dim is None:
            for layer, heads in enumerate(self.n_heads):
                if self.d_model % heads:
                    raise ConfigError(
                        f"n_heads={heads} (layer {layer}) must divide d_model={self.d_model} when head_dim is not given"
                    )
            self.head_dim = tuple(self.d_model // h for h in self.n_heads)
        else:
            self.head_dim = _per_layer("head_dim", self.head_dim, self.n_layers)
        self.block_overrides = dict(self.block_overrides)
        self._check_relations()

    # -- validation -----------------------------------------------------------------
    def _check_fields(self, where: str = "model") -> None:
        """Each field against the schema (types, ranges, allowed values)."""
        problems = schemas.field_problems(self, SCHEMA_FILE, prefix=f"{where}.")
        if problems:
            raise ConfigError("; ".join(problems))

    def _check_relations(self, where: str = "model") -> None:
        """What the schema cannot say: the relations between fields."""
        spec = self.block_spec
        spec.validate(f"{where} (block {self.block!r})")
        for layer, (heads, dim) in enumerate(zip(self.n_heads, self.head_dim)):
            needs_square = spec.value_kind(layer) in ("identity", "reparam") or spec.proj in ("identity", "reparam")
            if needs_square and heads * dim != self.d_model:
                raise ConfigError(
                    f"{where}: block {self.block!r} has identity or reparameterised value/projection matrices, "
                    f"so n_heads × head_dim must equal d_model={self.d_model}; layer {layer} has "
                    f"{heads} × {dim} = {heads * dim}"
                )
            if spec.ties_every_layer:
                kinds = (spec.value_kind(layer), spec.proj)
                if kinds[0] != kinds[1] or kinds[0] not in ("reparam", "orthogonal"):
                    raise ConfigError(
                        f"{where}: reparam_tie={spec.reparam_tie!r} ties W^P_init to W^V_init, which needs value and "
                        f"proj both 'reparam' or both 'orthogonal' in every layer; layer {layer} has value={kinds[0]!r}, proj={kinds[1]!r}"
                    )
            if self.position == "rope" and dim % 2:
                raise ConfigError(f"{where}: position='rope' needs an even head_dim; layer {layer} has {dim}")
        if self.rope_dim is not None and self.rope_dim > min(self.head_dim):
            raise ConfigError(
                f"{where}: rope_dim={self.rope_dim} must be at most head_dim (smallest {min(self.head_dim)})"
            )
        if self.type_sep_id is not None and not (self.n_token_types and self.type_sep_id < self.vocab_size):
            raise ConfigError(
                f"{where}: type_sep_id={self.type_sep_id} needs n_token_types >= 1 (got {self.n_token_types}) "
                f"and a token id below vocab_size={self.vocab_size}"
            )
        if self.lm_head_bias and self.output != "lm":
            raise ConfigError(f"{where}: lm_head_bias=True needs output='lm' (got {self.output!r})")
        if self.output == "classifier" and (self.n_classes is None or self.n_classes < 2):
            raise ConfigError(f"{where}: output='classifier' needs n_classes >= 2 (got {self.n_classes!r})")
        if self.cross_attention and (spec.parallel or spec.attention != "softmax"):
            raise ConfigError(
                f"{where}: cross_attention is supported for sequential softmax blocks (pre_ln, post_ln), "
                f"not block {self.block!r}"
            )

    # -- derived --------------------------------------------------------------------
    @property
    def block_spec(self) -> BlockSpec:
        return dataclasses.replace(BLOCK_PRESETS[self.block], **self.block_overrides)

    @property
    def has_block_norms(self) -> bool:
        return self.norm != "none"

    @property
    def final_norm_type(self) -> str:
        """The norm kind of the final norm: the blocks' norm, or LayerNorm without one or by `final_norm_kind`."""
        return self.norm if self.has_block_norms and self.final_norm_kind == "block" else "layernorm"

    def to_dict(self) -> dict[str, Any]:
        """Every field, lists for the per-layer tuples (the inverse of `config_from_dict`)."""
        d = dataclasses.asdict(self)
        d["n_heads"] = list(self.n_heads)
        d["head_dim"] = list(self.head_dim)
        return d


# The format of a saved model config (model.json): 2 writes every field beside `format_version`.
# Format 1 (no `format_version`) left out the options below when they were at these defaults; the
# table is that format's definition, so it never grows: a new option is written by format 2 files.
MODEL_FORMAT_VERSION = 2
FORMAT_1_OMITTED: dict[str, Any] = {
    "embed_norm": False,
    "n_token_types": 0,
    "type_sep_id": None,
    "rope_base": 10000.0,
    "rope_dim": None,
    "lm_head_bias": False,
    "final_norm_kind": "block",
}


def config_to_file_dict(cfg: TransformerConfig) -> dict[str, Any]:
    """What a model.json holds: every field and the format version."""
    return {"format_version": MODEL_FORMAT_VERSION, **cfg.to_dict()}


def config_from_file_dict(values: dict[str, Any], where: str = "model.json") -> TransformerConfig:
    """Read a saved model config of format 1 or 2 (see MODEL_FORMAT_VERSION)."""
    values = dict(values)
    version = values.pop("format_version", 1)
    fields = [f.name for f in dataclasses.fields(TransformerConfig)]
    if version == 1:
        required = [name for name in fields if name not in FORMAT_1_OMITTED]
        values = {**FORMAT_1_OMITTED, **values}
    elif version == MODEL_FORMAT_VERSION:
        required = fields
    else:
        raise ConfigError(
            f"{where}: format_version {version!r} is not one this code reads (1 or {MODEL_FORMAT_VERSION}); "
            "it was written by another version of the project"
        )
    missing = [name for name in required if name not in values]
    if missing:
        raise ConfigError(
            f"{where}: a format-{version} model config must name {', '.join(missing)}; the file is truncated or "
            "was edited by hand: rebuild it with the job that wrote it"
        )
    return config_from_dict(values, where=where)


def config_from_dict(values: dict[str, Any], where: str = "model") -> TransformerConfig:
    """Build a config from a plain dict (JSON/YAML), rejecting unknown keys by name."""
    allowed = {f.name for f in dataclasses.fields(TransformerConfig)}
    unknown = set(values) - allowed
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed keys: {', '.join(sorted(allowed))}")
    if "vocab_size" not in values:
        raise ConfigError(f"{where}: vocab_size is required")
    try:
        return TransformerConfig(**values)
    except ConfigError as err:
        message = str(err).removeprefix("model: ")
        raise ConfigError(f"{where}: {message}") from None
    except TypeError as err:
        raise ConfigError(f"{where}: {err}") from None
