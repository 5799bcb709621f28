"""Closed-form parameter count of a decoder of the family, to check against the built model.

    embeddings   V·d  (+ T_max·d for learned positions)  (+ V·d for an untied LM head)
    per layer    attention  d·(H·d_h)·3 + (H·d_h)·d,  biases 2·H·d_h (W^Q, W^K) and H·d_h + d (W^V, W^P)
                 MLP        d·d_ff·g + d_ff·d,  biases d_ff·g + d,  g = 2 for gated activations
                 norms      2 (sequential) or 1 (parallel), each 2d (LayerNorm) or d (RMSNorm)
    final norm   2d or d

Only the plain blocks (pre_ln, post_ln, parallel with linear W^V, W^P, fixed gains) are covered;
anything else raises ValueError rather than returning a wrong number.
"""

from __future__ import annotations

from repro.models import TransformerConfig


def analytic_parameter_count(cfg: TransformerConfig) -> int:
    """Trainable parameters of ``Transformer(cfg)``, from the formula of the module docstring."""
    spec = cfg.block_spec
    plain = (
        cfg.block in ("pre_ln", "post_ln", "parallel")
        and spec.value == "linear"
        and spec.proj == "linear"
        and spec.first_value in (None, "linear")
        and not spec.trainable_gains
        and spec.attention == "softmax"
    )
    if not plain or cfg.output != "lm" or cfg.cross_attention or cfg.norm == "none":
        raise ValueError(
            f"analytic_parameter_count covers plain pre_ln/post_ln/parallel LM decoders with norms; "
            f"got block={cfg.block!r}, output={cfg.output!r}, norm={cfg.norm!r}, overrides={cfg.block_overrides}"
        )
    d, v = cfg.d_model, cfg.vocab_size
    norm = 2 * d if cfg.norm == "layernorm" else d
    total = v * d
    if cfg.position == "learned":
        total += cfg.max_seq_len * d
    if not cfg.tie_embeddings:
        total += v * d
    gated = 2 if cfg.activation in ("swiglu", "geglu") else 1
    for heads, head_dim in zip(cfg.n_heads, cfg.head_dim):
        inner = heads * head_dim
        attention = 4 * d * inner + (2 * inner if cfg.qk_bias else 0) + (inner + d if cfg.vo_bias else 0)
        mlp = d * cfg.d_ff * gated + cfg.d_ff * d + ((cfg.d_ff * gated + d) if cfg.mlp_bias else 0)
        norms = (1 if spec.parallel else 2) * norm
        total += attention + mlp + norms
    if cfg.final_norm:
        total += 2 * d if cfg.final_norm_type == "layernorm" else d
    return total


__all__ = ["analytic_parameter_count"]
