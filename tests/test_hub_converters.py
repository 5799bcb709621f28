"""HF checkpoints -> our model family: a tiny random model of each architecture, built offline from
a config, gives the same outputs as its converted twin (float64, to 1e-5)."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")

from repro.hub.converters import ConversionError, _rotate_half_to_pairs, convert, save_converted  # noqa: E402
from repro.models import TransformerConfig, prune_heads  # noqa: E402
from repro.runs import load_model  # noqa: E402

TOL = 1e-5
VOCAB = 61


def _tiny(model_cls, cfg) -> torch.nn.Module:
    torch.manual_seed(0)
    model = model_cls(cfg).double().eval()
    # random (not default-initialised) norms and biases so every weight's mapping is exercised
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn_like(p) * 0.3 + (1.0 if "norm" in name.lower() and "weight" in name else 0.0))
    return model


def _ids(batch=2, t=9, seed=1):
    return torch.randint(0, VOCAB, (batch, t), generator=torch.Generator().manual_seed(seed))


def _assert_close(ours: torch.Tensor, theirs: torch.Tensor) -> None:
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().max().item() < TOL


def _llama_cfg(**kw):
    base = dict(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=40,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    base.update(kw)
    return base


def test_gpt2_lm_logits_match():
    cfg = transformers.GPT2Config(
        vocab_size=VOCAB, n_positions=32, n_embd=24, n_layer=2, n_head=3, bos_token_id=0, eos_token_id=0
    )
    hf = _tiny(transformers.GPT2LMHeadModel, cfg)
    result = convert(hf)
    ours = result.build()
    assert result.config.activation == "gelu_tanh" and result.config.tie_embeddings
    ids = _ids()
    _assert_close(ours(ids), hf(ids).logits)


def test_bert_classifier_logits_match_with_padding_and_segments():
    cfg = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=3,
        intermediate_size=48,
        max_position_embeddings=32,
        num_labels=3,
        pad_token_id=0,
    )
    hf = _tiny(transformers.BertForSequenceClassification, cfg)
    ours = convert(hf).build()
    ids = _ids()
    mask = torch.ones_like(ids, dtype=torch.bool)
    mask[1, 6:] = False  # second example is padded
    segments = torch.zeros_like(ids)
    segments[:, 4:] = 1
    theirs = hf(ids, attention_mask=mask.long(), token_type_ids=segments).logits
    _assert_close(ours(ids, padding_mask=mask, token_type_ids=segments), theirs)


def test_bert_encoder_hidden_states_match_on_real_tokens():
    cfg = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=24,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=48,
        max_position_embeddings=32,
        pad_token_id=0,
    )
    hf = _tiny(transformers.BertModel, cfg)
    result = convert(hf)
    ours = result.build()
    assert result.config.output == "none" and any("pooler" in note for note in result.notes)
    ids = _ids()
    mask = torch.ones_like(ids, dtype=torch.bool)
    mask[0, 5:] = False
    theirs = hf(ids, attention_mask=mask.long()).last_hidden_state
    mine = ours(ids, padding_mask=mask)
    _assert_close(mine[mask], theirs[mask])  # padded positions are free in both models


def test_llama_logits_match_with_one_shared_kv_head():
    # multi-query attention (1 K/V head); Mistral and Phi-3 below use 2 K/V heads for 4 query heads
    cfg = transformers.LlamaConfig(**_llama_cfg(num_key_value_heads=1, rope_theta=500000.0))
    hf = _tiny(transformers.LlamaForCausalLM, cfg)
    result = convert(hf)
    # exact: rope_base is copied from the HF config's rope_theta
    assert result.config.rope_base == 500000.0 and result.config.norm == "rmsnorm"
    assert any("grouped-query" in note for note in result.notes)
    ids = _ids()
    _assert_close(result.build()(ids), hf(ids).logits)


def test_mistral_logits_match_within_window_and_note_says_so():
    cfg = transformers.MistralConfig(**_llama_cfg(sliding_window=16))
    hf = _tiny(transformers.MistralForCausalLM, cfg)
    result = convert(hf)
    assert any("sliding-window" in note for note in result.notes)
    ids = _ids(t=12)
    _assert_close(result.build()(ids), hf(ids).logits)


def test_phi_partial_rotary_parallel_block_and_lm_bias_match():
    cfg = transformers.PhiConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=48,
        max_position_embeddings=64,
        partial_rotary_factor=0.5,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    hf = _tiny(transformers.PhiForCausalLM, cfg)
    result = convert(hf)
    assert result.config.block == "parallel" and result.config.rope_dim == 4 and result.config.lm_head_bias
    ids = _ids()
    _assert_close(result.build()(ids), hf(ids).logits)


def test_phi3_fused_projections_match():
    cfg = transformers.Phi3Config(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=40,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    hf = _tiny(transformers.Phi3ForCausalLM, cfg)
    ids = _ids()
    _assert_close(convert(hf).build()(ids), hf(ids).logits)


def test_converted_model_round_trips_through_a_run_directory_and_supports_head_masks(tmp_path):
    cfg = transformers.LlamaConfig(**_llama_cfg())
    hf = _tiny(transformers.LlamaForCausalLM, cfg)
    result = convert(hf)
    save_converted(result, tmp_path / "llama")
    loaded = load_model(tmp_path / "llama").double()
    ids = _ids()
    _assert_close(loaded(ids), hf(ids).logits)
    # masking head 1 of layer 0 equals pruning it physically (the analyses' contract)
    mask = torch.ones(2, 4, dtype=torch.float64)
    mask[0, 1] = 0.0
    masked = loaded(ids, head_mask=mask)
    prune_heads(loaded, {0: [1]})
    _assert_close(loaded(ids), masked)


def test_rotate_half_order_pairs_each_dim_with_its_partner():
    # head_dim 6, rotary 4: HF pairs (0,2), (1,3); dims 4, 5 stay in place
    assert _rotate_half_to_pairs(6, 4).tolist() == [0, 2, 1, 3, 4, 5]


def test_unsupported_settings_are_refused_by_name():
    llama = _tiny(
        transformers.LlamaForCausalLM,
        transformers.LlamaConfig(**_llama_cfg(rope_scaling={"rope_type": "linear", "factor": 2.0})),
    )
    with pytest.raises(ConversionError, match="linear"):
        convert(llama)
    bert_mlm = _tiny(
        transformers.BertForMaskedLM,
        transformers.BertConfig(
            vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16
        ),
    )
    with pytest.raises(ConversionError, match="BertForMaskedLM"):
        convert(bert_mlm)
    t5 = transformers.T5Config(vocab_size=VOCAB, d_model=16, num_layers=1, num_heads=2, d_ff=16, d_kv=8)
    with pytest.raises(ConversionError, match="'t5' is not supported"):
        convert(transformers.T5Model(t5))


def test_model_files_of_both_formats_read_back(tmp_path):
    """Format 2 writes every field; format 1 left the options of FORMAT_1_OMITTED out at their defaults."""
    from repro.models.config import FORMAT_1_OMITTED, ConfigError, config_from_file_dict, config_to_file_dict
    from repro.runs import read_model_config, write_model_config

    used = TransformerConfig(vocab_size=10, n_layers=1, d_model=8, n_heads=2, d_ff=8, position="rope", rope_dim=2)
    written = config_to_file_dict(used)
    assert written["format_version"] == 2 and set(written) - {"format_version"} == set(used.to_dict())
    write_model_config(tmp_path, used)
    assert read_model_config(tmp_path) == used  # exact: a JSON round trip, floats read back exactly
    plain = TransformerConfig(vocab_size=10, n_layers=1, d_model=8, n_heads=2, d_ff=8)
    format_1 = {k: v for k, v in plain.to_dict().items() if FORMAT_1_OMITTED.get(k, object()) != v}
    # exact: defaults and copied values, no arithmetic
    assert "rope_base" not in format_1 and config_from_file_dict(format_1) == plain
    with pytest.raises(ConfigError, match=r"x.json: a format-1 model config must name d_ff; the file is truncated"):
        config_from_file_dict({k: v for k, v in format_1.items() if k != "d_ff"}, where="x.json")
    with pytest.raises(ConfigError, match=r"format-2 model config must name rope_base"):
        config_from_file_dict({k: v for k, v in written.items() if k != "rope_base"})
    with pytest.raises(ConfigError, match=r"format_version 3 is not one this code reads"):
        config_from_file_dict(dict(written, format_version=3))
