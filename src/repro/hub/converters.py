"""Pretrained Hugging Face checkpoints as models of our family.

`convert(hf_model)` reads a `transformers` model (BERT, GPT-2, Llama, Mistral, Phi, Phi-3) and
returns the equivalent `TransformerConfig` and a state dict for `Transformer`, so that every
analysis of the library (head masks, importance, pruning, hooks, logit lens) runs unchanged on
a pretrained model. The converted model computes the same function; tests check the logits of
tiny random models of each architecture against the originals.

What a conversion has to rewrite, per architecture:
  GPT-2    Conv1D weights are stored [in, out]: transposed; the fused c_attn is split in Q, K, V.
  BERT     post-LN blocks, embedding LayerNorm (`embed_norm`), segment embeddings (`n_token_types`).
  Llama    RMSNorm, SwiGLU (gate and up stacked in `fc_in`), RoPE with θ from the config.
           HF rotates the pairs (i, i + d/2) of a head ("rotate_half"); we rotate (2i, 2i + 1), so the
           rows of W^Q and W^K are permuted inside every head, which leaves Q·Kᵀ unchanged.
           Grouped-query attention (fewer K/V heads) is expanded: each K/V head is copied to the query
           heads that share it, the same computation with H separate K/V heads (more parameters).
  Mistral  as Llama; the sliding window is not represented (identical for sequences up to the window,
           which `ConversionResult.notes` states).
  Phi      parallel block with one shared LayerNorm, partial rotary (`rope_dim`), gelu_new
           (`gelu_tanh`), biases everywhere including the output logits (`lm_head_bias`).
  Phi-3    as Llama with fused qkv_proj and gate_up_proj.
Variants that the family cannot represent (rotary scaling, relative positions, QK-norm, ...) raise
`ConversionError` naming the setting rather than converting to a different function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from repro.models import Transformer, TransformerConfig

SUPPORTED = ("bert", "gpt2", "llama", "mistral", "phi", "phi3")


class ConversionError(ValueError):
    """A checkpoint that cannot be represented exactly by the model family; the message says why."""


@dataclass
class ConversionResult:
    config: TransformerConfig
    state_dict: dict[str, Tensor]
    source: str  # model_type and class of the HF model
    notes: list[str] = field(default_factory=list)  # what differs in form (not in function)

    def build(self) -> Transformer:
        """The converted model, in eval mode, in the dtype of the converted weights."""
        model = Transformer(self.config)
        dtype = next(iter(self.state_dict.values())).dtype
        model.to(dtype)
        missing, unexpected = model.load_state_dict(self.state_dict, strict=False)
        if missing or unexpected:
            raise ConversionError(
                f"{self.source}: converted weights do not fit: missing {missing}, unexpected {unexpected}"
            )
        return model.eval()


def convert(hf_model: Any) -> ConversionResult:
    """Config and weights of our `Transformer` equivalent to `hf_model` (a transformers PreTrainedModel).

    Heads: LM models (…ForCausalLM, …LMHeadModel) give output='lm'; BertForSequenceClassification gives
    output='classifier' with its pooler; base models (BertModel, GPT2Model, LlamaModel, ...) give
    output='none' (the final hidden states).
    """
    hf_cfg = hf_model.config
    kind = getattr(hf_cfg, "model_type", None)
    if kind not in SUPPORTED:
        raise ConversionError(f"model_type {kind!r} is not supported; supported: {', '.join(SUPPORTED)}")
    source = f"{kind} ({type(hf_model).__name__})"
    state = {k: v.detach().clone() for k, v in hf_model.state_dict().items()}
    head = _head_kind(hf_model, state)
    convert_fn = {"bert": _bert, "gpt2": _gpt2, "phi": _phi}.get(kind, _llama_like)
    result = convert_fn(hf_cfg, state, head, source)
    return result


def from_pretrained(name_or_path: str, task: str = "lm", **kwargs: Any) -> ConversionResult:
    """Load a checkpoint with transformers (downloads from the hub unless cached) and convert it.

    task: 'lm' (AutoModelForCausalLM), 'classifier' (AutoModelForSequenceClassification) or
    'encoder' (AutoModel). kwargs go to `from_pretrained` (e.g. revision=, num_labels=, dtype=).
    """
    import transformers

    loaders = {
        "lm": transformers.AutoModelForCausalLM,
        "classifier": transformers.AutoModelForSequenceClassification,
        "encoder": transformers.AutoModel,
    }
    if task not in loaders:
        raise ConversionError(f"task={task!r} is not one of {', '.join(loaders)}")
    return convert(loaders[task].from_pretrained(name_or_path, **kwargs).eval())


def save_converted(result: ConversionResult, out_dir: str | Path) -> Path:
    """Write model.json and model.safetensors, the layout `repro.runs.load_model` reads.

    Weights are stored in float32, the dtype every run of the pipeline uses (checkpoints published
    in bf16/fp16 are widened exactly; float64 test models are rounded).
    """
    from repro.runs import WEIGHTS_FILE, write_model_config
    from repro.training import save_weights

    out_dir = Path(out_dir)
    write_model_config(out_dir, result.config)
    save_weights(result.build().float(), out_dir / WEIGHTS_FILE, metadata={"source": result.source})
    return out_dir


# -- helpers ---------------------------------------------------------------------------------


def _head_kind(hf_model: Any, state: dict[str, Tensor]) -> str:
    name = type(hf_model).__name__
    if name.endswith("ForSequenceClassification"):
        return "classifier"
    if "lm_head.weight" in state or name.endswith(("ForCausalLM", "LMHeadModel")):
        return "lm"
    if name.endswith("Model"):
        return "none"
    raise ConversionError(f"{name}: only base models, causal LMs and BertForSequenceClassification are supported")


def _take(state: dict[str, Tensor], key: str, source: str) -> Tensor:
    if key not in state:
        raise ConversionError(f"{source}: weight {key!r} is missing from the checkpoint")
    return state.pop(key)


def _strip_prefix(state: dict[str, Tensor], prefixes: tuple[str, ...]) -> dict[str, Tensor]:
    out = {}
    for key, value in state.items():
        for prefix in prefixes:
            if key.startswith(prefix):
                key = key[len(prefix) :]
                break
        out[key] = value
    return out


def _activation(name: str, source: str) -> str:
    table = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}
    if name not in table:
        raise ConversionError(f"{source}: activation {name!r} is not supported; supported: {', '.join(table)}")
    return table[name]


def _rope(hf_cfg: Any, source: str) -> tuple[float, float]:
    """(θ, partial rotary factor) from a transformers 5 config; other rope types are refused."""
    params = dict(getattr(hf_cfg, "rope_parameters", None) or {})
    rope_type = params.get("rope_type", "default")
    if rope_type != "default":
        raise ConversionError(f"{source}: rope_type {rope_type!r} (rotary scaling) is not supported, only 'default'")
    theta = params.get("rope_theta", getattr(hf_cfg, "rope_theta", 10000.0))
    factor = params.get("partial_rotary_factor", getattr(hf_cfg, "partial_rotary_factor", 1.0))
    return float(theta), float(factor)


def _rotate_half_to_pairs(dh: int, rotary: int) -> Tensor:
    """Row order that turns HF's rotate-half layout into our interleaved pairs, within one head.

    Our row 2i takes HF row i and our row 2i+1 takes HF row i + rotary/2 (i < rotary/2);
    rows past `rotary` are not rotated and keep their place.
    """
    half = rotary // 2
    order = torch.stack((torch.arange(half), torch.arange(half) + half), dim=1).reshape(-1)
    return torch.cat((order, torch.arange(rotary, dh)))


def _permute_heads(w: Tensor, n_heads: int, order: Tensor) -> Tensor:
    """Apply the per-head row order to a [H·dh, ...] weight or [H·dh] bias."""
    dh = w.shape[0] // n_heads
    shaped = w.reshape(n_heads, dh, *w.shape[1:])
    return shaped[:, order].reshape(w.shape)


def _expand_kv(w: Tensor, n_kv: int, n_heads: int) -> Tensor:
    """Grouped-query K/V [n_kv·dh, ...] -> one copy per query head [n_heads·dh, ...]."""
    if n_kv == n_heads:
        return w
    if n_heads % n_kv:
        raise ConversionError(f"num_attention_heads={n_heads} is not a multiple of num_key_value_heads={n_kv}")
    dh = w.shape[0] // n_kv
    shaped = w.reshape(n_kv, dh, *w.shape[1:])
    return shaped.repeat_interleave(n_heads // n_kv, dim=0).reshape(n_heads * dh, *w.shape[1:])


def _linear(out: dict[str, Tensor], ours: str, weight: Tensor, bias: Tensor | None = None) -> None:
    out[f"{ours}.weight"] = weight.contiguous()
    if bias is not None:
        out[f"{ours}.bias"] = bias.contiguous()


def _norm(out: dict[str, Tensor], ours: str, state: dict[str, Tensor], theirs: str, source: str) -> None:
    out[f"{ours}.weight"] = _take(state, f"{theirs}.weight", source)
    if f"{theirs}.bias" in state:
        out[f"{ours}.bias"] = state.pop(f"{theirs}.bias")


def _finish(
    cfg: TransformerConfig,
    out: dict[str, Tensor],
    state: dict[str, Tensor],
    source: str,
    notes: list[str],
    ignore: tuple[str, ...] = (),
) -> ConversionResult:
    left = [k for k in state if not k.endswith(ignore)] if ignore else list(state)
    if left:
        raise ConversionError(f"{source}: weights not converted (unsupported structure): {sorted(left)[:8]}")
    return ConversionResult(cfg, out, source, notes)


# -- GPT-2 -----------------------------------------------------------------------------------


def _config(hf_cfg: Any, **fields: Any) -> TransformerConfig:
    """Our config of a BERT/Llama/Phi-style model: the fields those configs name alike, then the rest."""
    return TransformerConfig(
        vocab_size=hf_cfg.vocab_size,
        n_layers=hf_cfg.num_hidden_layers,
        d_model=hf_cfg.hidden_size,
        d_ff=hf_cfg.intermediate_size,
        max_seq_len=hf_cfg.max_position_embeddings,
        init_std=hf_cfg.initializer_range,
        **fields,
    )


def _gpt2(hf_cfg: Any, state: dict[str, Tensor], head: str, source: str) -> ConversionResult:
    if getattr(hf_cfg, "scale_attn_by_inverse_layer_idx", False) or not getattr(hf_cfg, "scale_attn_weights", True):
        raise ConversionError(f"{source}: only the standard 1/sqrt(d_head) attention scaling is supported")
    if getattr(hf_cfg, "add_cross_attention", False):
        raise ConversionError(f"{source}: add_cross_attention is not supported")
    d, n_layers, heads = hf_cfg.n_embd, hf_cfg.n_layer, hf_cfg.n_head
    cfg = TransformerConfig(
        vocab_size=hf_cfg.vocab_size,
        n_layers=n_layers,
        d_model=d,
        n_heads=heads,
        d_ff=hf_cfg.n_inner or 4 * d,
        max_seq_len=hf_cfg.n_positions,
        block="pre_ln",
        norm="layernorm",
        norm_eps=hf_cfg.layer_norm_epsilon,
        activation=_activation(hf_cfg.activation_function, source),
        position="learned",
        causal=True,
        output="lm" if head == "lm" else "none",
        tie_embeddings=True,
        dropout=hf_cfg.resid_pdrop,
        attn_dropout=hf_cfg.attn_pdrop,
        init_std=hf_cfg.initializer_range,
    )
    state = _strip_prefix(state, ("transformer.",))
    if head == "lm":
        lm = _take(state, "lm_head.weight", source)
        if not torch.equal(lm, state["wte.weight"]):
            raise ConversionError(f"{source}: lm_head is not tied to wte, which GPT-2 conversion assumes")
    out = {"tok_emb.weight": _take(state, "wte.weight", source), "pos_emb.weight": _take(state, "wpe.weight", source)}
    for i in range(n_layers):
        p, q = f"h.{i}.", f"blocks.{i}."
        _norm(out, q + "norm1", state, p + "ln_1", source)
        _norm(out, q + "norm2", state, p + "ln_2", source)
        w_qkv = _take(state, p + "attn.c_attn.weight", source).T  # Conv1D [d, 3d] -> [3d, d]
        b_qkv = _take(state, p + "attn.c_attn.bias", source)
        for name, w, b in zip(("q_proj", "k_proj", "value"), w_qkv.split(d), b_qkv.split(d)):
            _linear(out, q + f"attn.{name}", w, b)
        _linear(
            out,
            q + "attn.proj",
            _take(state, p + "attn.c_proj.weight", source).T,
            _take(state, p + "attn.c_proj.bias", source),
        )
        _linear(
            out,
            q + "mlp.fc_in",
            _take(state, p + "mlp.c_fc.weight", source).T,
            _take(state, p + "mlp.c_fc.bias", source),
        )
        _linear(
            out,
            q + "mlp.fc_out",
            _take(state, p + "mlp.c_proj.weight", source).T,
            _take(state, p + "mlp.c_proj.bias", source),
        )
    _norm(out, "final_norm", state, "ln_f", source)
    # older checkpoints carry the causal mask as buffers attn.bias / attn.masked_bias
    return _finish(cfg, out, state, source, [], ignore=(".attn.bias", ".attn.masked_bias"))


# -- BERT ------------------------------------------------------------------------------------


def _bert(hf_cfg: Any, state: dict[str, Tensor], head: str, source: str) -> ConversionResult:
    if getattr(hf_cfg, "position_embedding_type", "absolute") != "absolute":
        raise ConversionError(f"{source}: position_embedding_type={hf_cfg.position_embedding_type!r}; only 'absolute'")
    if getattr(hf_cfg, "is_decoder", False):
        raise ConversionError(f"{source}: BERT as a decoder is not supported")
    if head == "lm":
        raise ConversionError(
            f"{source}: BERT's masked-LM head is not supported; convert BertModel or BertForSequenceClassification"
        )
    n_classes = hf_cfg.num_labels if head == "classifier" else None
    if head == "classifier" and (n_classes < 2 or getattr(hf_cfg, "problem_type", None) == "regression"):
        raise ConversionError(f"{source}: a classifier needs num_labels >= 2 (regression heads are not supported)")
    n_layers = hf_cfg.num_hidden_layers
    cfg = _config(
        hf_cfg,
        n_heads=hf_cfg.num_attention_heads,
        block="post_ln",
        norm="layernorm",
        norm_eps=hf_cfg.layer_norm_eps,
        final_norm=False,
        activation=_activation(hf_cfg.hidden_act, source),
        position="learned",
        causal=False,
        output=head,
        n_classes=n_classes,
        pool="first",
        pooler=True,
        embed_norm=True,
        n_token_types=hf_cfg.type_vocab_size,
        dropout=hf_cfg.hidden_dropout_prob,
        attn_dropout=hf_cfg.attention_probs_dropout_prob,
    )
    state = _strip_prefix(state, ("bert.",))
    out = {
        "tok_emb.weight": _take(state, "embeddings.word_embeddings.weight", source),
        "pos_emb.weight": _take(state, "embeddings.position_embeddings.weight", source),
        "type_emb.weight": _take(state, "embeddings.token_type_embeddings.weight", source),
    }
    _norm(out, "embed_norm", state, "embeddings.LayerNorm", source)
    for i in range(n_layers):
        p, q = f"encoder.layer.{i}.", f"blocks.{i}."
        for theirs, ours in (("query", "q_proj"), ("key", "k_proj"), ("value", "value")):
            _linear(
                out,
                q + f"attn.{ours}",
                _take(state, p + f"attention.self.{theirs}.weight", source),
                _take(state, p + f"attention.self.{theirs}.bias", source),
            )
        _linear(
            out,
            q + "attn.proj",
            _take(state, p + "attention.output.dense.weight", source),
            _take(state, p + "attention.output.dense.bias", source),
        )
        _norm(out, q + "norm1", state, p + "attention.output.LayerNorm", source)
        _linear(
            out,
            q + "mlp.fc_in",
            _take(state, p + "intermediate.dense.weight", source),
            _take(state, p + "intermediate.dense.bias", source),
        )
        _linear(
            out,
            q + "mlp.fc_out",
            _take(state, p + "output.dense.weight", source),
            _take(state, p + "output.dense.bias", source),
        )
        _norm(out, q + "norm2", state, p + "output.LayerNorm", source)
    if head == "classifier":
        _linear(out, "pooler", _take(state, "pooler.dense.weight", source), _take(state, "pooler.dense.bias", source))
        _linear(out, "classifier", _take(state, "classifier.weight", source), _take(state, "classifier.bias", source))
    notes = []
    if head == "none" and "pooler.dense.weight" in state:
        state.pop("pooler.dense.weight"), state.pop("pooler.dense.bias")
        notes.append("BertModel's pooler is dropped: output='none' returns the final hidden states")
    return _finish(cfg, out, state, source, notes, ignore=("embeddings.position_ids", "embeddings.token_type_ids"))


# -- Llama, Mistral, Phi-3 ------------------------------------------------------------------


def _llama_like(hf_cfg: Any, state: dict[str, Tensor], head: str, source: str) -> ConversionResult:
    kind = hf_cfg.model_type
    if getattr(hf_cfg, "hidden_act", "silu") != "silu":
        raise ConversionError(f"{source}: hidden_act={hf_cfg.hidden_act!r}; only 'silu' (SwiGLU) is supported")
    theta, factor = _rope(hf_cfg, source)
    d, n_layers, heads = hf_cfg.hidden_size, hf_cfg.num_hidden_layers, hf_cfg.num_attention_heads
    n_kv = getattr(hf_cfg, "num_key_value_heads", None) or heads
    dh = getattr(hf_cfg, "head_dim", None) or d // heads
    rotary = int(dh * factor)
    attn_bias = bool(getattr(hf_cfg, "attention_bias", False))
    mlp_bias = bool(getattr(hf_cfg, "mlp_bias", False))
    tied = bool(getattr(hf_cfg, "tie_word_embeddings", False))
    cfg = _config(
        hf_cfg,
        n_heads=heads,
        head_dim=dh,
        block="pre_ln",
        norm="rmsnorm",
        norm_eps=hf_cfg.rms_norm_eps,
        activation="swiglu",
        position="rope",
        causal=True,
        output="lm" if head == "lm" else "none",
        tie_embeddings=tied,
        qk_bias=attn_bias,
        vo_bias=attn_bias,
        mlp_bias=mlp_bias,
        rope_base=theta,
        rope_dim=None if rotary == dh else rotary,
        attn_dropout=float(getattr(hf_cfg, "attention_dropout", 0.0)),
    )
    notes = []
    window = getattr(hf_cfg, "sliding_window", None)
    if window:
        notes.append(
            f"sliding-window attention ({window} tokens) is not represented: the converted model attends "
            f"to the full context, which is identical for sequences of at most {window} tokens"
        )
    if n_kv != heads:
        notes.append(
            f"grouped-query attention ({n_kv} K/V heads for {heads} query heads) expanded to {heads} K/V heads"
        )
    state = _strip_prefix(state, ("model.",))
    order = _rotate_half_to_pairs(dh, rotary)
    out = {"tok_emb.weight": _take(state, "embed_tokens.weight", source)}
    for i in range(n_layers):
        p, q = f"layers.{i}.", f"blocks.{i}."
        if kind == "phi3":
            qkv = _take(state, p + "self_attn.qkv_proj.weight", source)
            wq, wk, wv = qkv.split([heads * dh, n_kv * dh, n_kv * dh])
            bq = bk = bv = None
            fc_in = _take(state, p + "mlp.gate_up_proj.weight", source)  # [gate; up], our stacking too
        else:
            wq, wk, wv = (_take(state, p + f"self_attn.{n}_proj.weight", source) for n in "qkv")
            bq, bk, bv = (state.pop(p + f"self_attn.{n}_proj.bias", None) for n in "qkv")
            fc_in = torch.cat(
                (_take(state, p + "mlp.gate_proj.weight", source), _take(state, p + "mlp.up_proj.weight", source))
            )
        wk, wv = _expand_kv(wk, n_kv, heads), _expand_kv(wv, n_kv, heads)
        bk = None if bk is None else _expand_kv(bk, n_kv, heads)
        bv = None if bv is None else _expand_kv(bv, n_kv, heads)
        _linear(
            out,
            q + "attn.q_proj",
            _permute_heads(wq, heads, order),
            None if bq is None else _permute_heads(bq, heads, order),
        )
        _linear(
            out,
            q + "attn.k_proj",
            _permute_heads(wk, heads, order),
            None if bk is None else _permute_heads(bk, heads, order),
        )
        _linear(out, q + "attn.value", wv, bv)
        _linear(
            out,
            q + "attn.proj",
            _take(state, p + "self_attn.o_proj.weight", source),
            state.pop(p + "self_attn.o_proj.bias", None),
        )
        if kind != "phi3":
            fc_in_bias = state.pop(p + "mlp.gate_proj.bias", None)
            if fc_in_bias is not None:
                fc_in_bias = torch.cat((fc_in_bias, _take(state, p + "mlp.up_proj.bias", source)))
        else:
            fc_in_bias = None
        _linear(out, q + "mlp.fc_in", fc_in, fc_in_bias)
        _linear(
            out,
            q + "mlp.fc_out",
            _take(state, p + "mlp.down_proj.weight", source),
            state.pop(p + "mlp.down_proj.bias", None),
        )
        _norm(out, q + "norm1", state, p + "input_layernorm", source)
        _norm(out, q + "norm2", state, p + "post_attention_layernorm", source)
    _norm(out, "final_norm", state, "norm", source)
    if head == "lm":
        lm = _take(state, "lm_head.weight", source)
        if not tied:
            out["lm_head.weight"] = lm
    return _finish(cfg, out, state, source, notes, ignore=("rotary_emb.inv_freq",))


# -- Phi (phi-1, phi-1.5, phi-2) -------------------------------------------------------------


def _phi(hf_cfg: Any, state: dict[str, Tensor], head: str, source: str) -> ConversionResult:
    if getattr(hf_cfg, "qk_layernorm", False):
        raise ConversionError(f"{source}: qk_layernorm=True is not supported")
    theta, factor = _rope(hf_cfg, source)
    d, n_layers, heads = hf_cfg.hidden_size, hf_cfg.num_hidden_layers, hf_cfg.num_attention_heads
    n_kv = getattr(hf_cfg, "num_key_value_heads", None) or heads
    dh = d // heads
    rotary = int(dh * factor)
    tied = bool(getattr(hf_cfg, "tie_word_embeddings", False))
    has_lm_bias = "lm_head.bias" in state
    cfg = _config(
        hf_cfg,
        n_heads=heads,
        block="parallel",
        norm="layernorm",
        norm_eps=hf_cfg.layer_norm_eps,
        activation=_activation(hf_cfg.hidden_act, source),
        position="rope",
        causal=True,
        output="lm" if head == "lm" else "none",
        tie_embeddings=tied,
        lm_head_bias=head == "lm" and has_lm_bias,
        rope_base=theta,
        rope_dim=None if rotary == dh else rotary,
        dropout=float(getattr(hf_cfg, "resid_pdrop", 0.0)),
        attn_dropout=float(getattr(hf_cfg, "attention_dropout", 0.0)),
    )
    state = _strip_prefix(state, ("model.",))
    order = _rotate_half_to_pairs(dh, rotary)
    out = {"tok_emb.weight": _take(state, "embed_tokens.weight", source)}
    for i in range(n_layers):
        p, q = f"layers.{i}.", f"blocks.{i}."
        w = {n: _take(state, p + f"self_attn.{n}_proj.weight", source) for n in "qkv"}
        b = {n: _take(state, p + f"self_attn.{n}_proj.bias", source) for n in "qkv"}
        _linear(out, q + "attn.q_proj", _permute_heads(w["q"], heads, order), _permute_heads(b["q"], heads, order))
        wk, bk = _expand_kv(w["k"], n_kv, heads), _expand_kv(b["k"], n_kv, heads)
        _linear(out, q + "attn.k_proj", _permute_heads(wk, heads, order), _permute_heads(bk, heads, order))
        _linear(out, q + "attn.value", _expand_kv(w["v"], n_kv, heads), _expand_kv(b["v"], n_kv, heads))
        _linear(
            out,
            q + "attn.proj",
            _take(state, p + "self_attn.dense.weight", source),
            _take(state, p + "self_attn.dense.bias", source),
        )
        _linear(
            out, q + "mlp.fc_in", _take(state, p + "mlp.fc1.weight", source), _take(state, p + "mlp.fc1.bias", source)
        )
        _linear(
            out, q + "mlp.fc_out", _take(state, p + "mlp.fc2.weight", source), _take(state, p + "mlp.fc2.bias", source)
        )
        _norm(out, q + "norm1", state, p + "input_layernorm", source)
    _norm(out, "final_norm", state, "final_layernorm", source)
    if head == "lm":
        lm = _take(state, "lm_head.weight", source)
        bias = state.pop("lm_head.bias", None)
        if not tied:
            out["lm_head.weight"] = lm
            if bias is not None:
                out["lm_head.bias"] = bias
        elif bias is not None:
            out["lm_bias"] = bias
    notes = [] if n_kv == heads else [f"grouped-query attention ({n_kv} K/V heads) expanded to {heads} K/V heads"]
    return _finish(cfg, out, state, source, notes, ignore=("rotary_emb.inv_freq",))


def main(argv: list[str] | None = None) -> None:
    """`python -m repro.hub.converters NAME_OR_PATH OUT_DIR [--task lm|classifier|encoder]`."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m repro.hub.converters", description=main.__doc__)
    parser.add_argument("checkpoint", help="hub id (e.g. gpt2, bert-base-uncased) or a local checkpoint directory")
    parser.add_argument("out_dir", help="directory for model.json and model.safetensors (repro.runs.load_model)")
    parser.add_argument("--task", default="lm", choices=("lm", "classifier", "encoder"))
    parser.add_argument("--revision", default=None, help="a hub revision (commit) to pin")
    args = parser.parse_args(argv)
    result = from_pretrained(args.checkpoint, task=args.task, revision=args.revision)
    save_converted(result, args.out_dir)
    print(f"{result.source} -> {args.out_dir}")
    for note in result.notes:
        print(f"note: {note}")


if __name__ == "__main__":
    main()
