"""Exact structural identities of the model family (He & Hofmann 2024, §4 and §5)."""

import pytest
import torch

from repro.models import BLOCK_KINDS, ConfigError, TransformerConfig, build_model, count_parameters

torch.set_default_dtype(torch.float32)


def make(seed=0, dtype=torch.float64, **kw):
    base = dict(vocab_size=50, n_layers=3, d_model=32, n_heads=4, d_ff=64, max_seq_len=24)
    base.update(kw)
    torch.manual_seed(seed)
    return build_model(base).to(dtype).eval()


def tokens(B=2, T=24, V=50, seed=1):
    return torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("block", ["sas", "sas_p"])
def test_shaped_attention_is_identity_at_init(block, causal):
    model = make(block=block, norm="rmsnorm", causal=causal)
    _, cache = model.run_with_cache(tokens(), names=lambda n: "norm" not in n)
    for layer, blk in enumerate(model.blocks):
        x = cache[f"blocks.{layer}.hook_resid_pre"]
        # attention sub-block output (β_SA = 1) equals its normalised input exactly
        torch.testing.assert_close(cache[f"blocks.{layer}.hook_attn_out"], blk.norm1(x), rtol=0, atol=1e-12)


def test_shaped_attention_matrix_is_identity_via_explicit_path():
    model = make(block="sas", norm="none")
    matrices = {}

    def grab(pattern, name):
        matrices[name] = pattern

    names = [f"blocks.{i}.attn.hook_pattern" for i in range(3)]
    with model.hooks({n: grab for n in names}):
        model(tokens())
    for name, pattern in matrices.items():
        attn = model.get_submodule(name.rsplit(".", 1)[0])
        T = pattern.shape[-1]
        C = torch.tril(torch.ones(T, T, dtype=torch.float64)) / torch.arange(1, T + 1, dtype=torch.float64)[:, None]
        torch.testing.assert_close(pattern, C.expand_as(pattern), rtol=0, atol=1e-15)  # A = C when W^Q = 0
        shaped = (
            attn.mat_skip_gain * torch.eye(T, dtype=torch.float64)
            + attn.mat_resid_gain * pattern
            - attn.centre_gain * C
        )
        torch.testing.assert_close(shaped, torch.eye(T, dtype=torch.float64).expand_as(shaped), rtol=0, atol=1e-15)


def test_sas_equals_sas_p_at_init_without_norm():
    sas, sas_p = make(block="sas", norm="none"), make(block="sas_p", norm="none")
    missing, unexpected = sas_p.load_state_dict(sas.state_dict(), strict=False)
    assert all("mlp_skip" in k for k in unexpected) and not missing
    x = tokens()
    torch.testing.assert_close(sas(x), sas_p(x), rtol=0, atol=1e-12)


def test_sas_equals_sas_p_at_init_with_rmsnorm_up_to_eps():
    sas, sas_p = make(block="sas", norm="rmsnorm", norm_eps=1e-8), make(block="sas_p", norm="rmsnorm", norm_eps=1e-8)
    sas_p.load_state_dict(sas.state_dict(), strict=False)
    x = tokens()
    # SAS applies Norm2(Norm1(x)); RMSNorm with unit weight is idempotent up to eps.
    torch.testing.assert_close(sas(x), sas_p(x), rtol=0, atol=1e-6)


@pytest.mark.parametrize("L,d", [(3, 32), (6, 48)])
def test_parameter_difference_pre_ln_vs_sas(L, d):
    kw = dict(n_layers=L, d_model=d, vo_bias=False, norm="rmsnorm")  # the official code has no V/P bias
    pre, sas = make(block="pre_ln", **kw), make(block="sas", **kw)
    scalar_gains = sum(p.numel() for n, p in sas.named_parameters() if "gain" in n)
    assert not any("gain" in n for n, _ in pre.named_parameters())  # Pre-LN gains are fixed
    assert count_parameters(pre) - count_parameters(sas) == (2 * L - 1) * d * d - scalar_gains


def test_heterogeneous_heads_run_and_count_exactly():
    d, V, T, ff = 32, 50, 24, 64
    heads, dims = (1, 2, 8), (48, 8, 2)
    model = make(d_model=d, n_heads=heads, head_dim=dims, max_seq_len=T, d_ff=ff, norm="layernorm")
    assert model(tokens()).shape == (2, T, V)
    per_layer = []
    for h, dh in zip(heads, dims):
        inner = h * dh
        attn = 3 * (d * inner + inner) + inner * d + d  # Q, K, V with biases; W^O and its bias
        mlp = d * ff + ff + ff * d + d
        norms = 2 * 2 * d
        per_layer.append(attn + mlp + norms)
    expected = V * d + T * d + sum(per_layer) + 2 * d  # tied embedding, positions, final norm
    assert count_parameters(model) == expected


@pytest.mark.parametrize("norm", ["rmsnorm", "none"])
def test_layernorm_final_norm_is_gpt2s_ln_f_whatever_the_blocks_use(norm):
    """final_norm_kind="layernorm": logits = ((h − mean) / √(var + eps) · w + b) Eᵀ, written out by hand."""
    model = make(block="sas", norm=norm, final_norm_kind="layernorm", norm_eps=1e-5)
    model.final_norm.weight.data.uniform_(0.5, 1.5)
    model.final_norm.bias.data.uniform_(-0.5, 0.5)
    logits, cache = model.run_with_cache(tokens(), names=lambda n: n == "hook_resid_final")
    h = cache["hook_resid_final"]
    mean, var = h.mean(-1, keepdim=True), h.var(-1, unbiased=False, keepdim=True)
    by_hand = (
        (h - mean) / torch.sqrt(var + 1e-5) * model.final_norm.weight + model.final_norm.bias
    ) @ model.tok_emb.weight.T
    torch.testing.assert_close(logits, by_hand, rtol=0, atol=1e-10)
    rms_final = make(block="sas", norm="rmsnorm").final_norm
    assert not hasattr(rms_final, "bias") and count_parameters(model) == count_parameters(
        make(block="sas", norm=norm)
    ) + (32 if norm == "rmsnorm" else 0)


def test_reparameterised_value_is_identity_at_init():
    model = make(block="sas", norm="none", block_overrides={"value": "reparam", "proj": "reparam", "reparam_beta": 0.3})
    attn = model.blocks[1].attn
    eye = torch.eye(32, dtype=torch.float64)
    # exact: 1.0·I + 0.3·ΔW with ΔW zero at init, every product and sum exact
    torch.testing.assert_close(attn.value.effective_weight(), eye, rtol=0, atol=0)
    torch.testing.assert_close(attn.proj.effective_weight(), eye, rtol=0, atol=0)


@pytest.mark.parametrize("block", BLOCK_KINDS)
@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm", "none"])
def test_every_block_and_norm_trains_one_step(block, norm):
    model = make(block=block, norm=norm, dtype=torch.float32).train()
    x = tokens()
    loss = torch.nn.functional.cross_entropy(model(x)[:, :-1].reshape(-1, 50), x[:, 1:].reshape(-1))
    loss.backward()
    assert torch.isfinite(loss)
    missing = [n for n, p in model.named_parameters() if p.grad is None]
    assert not missing, f"parameters outside the graph: {missing}"


def test_same_seed_same_init_and_different_seed_differs():
    a, b, c = make(seed=3), make(seed=3), make(seed=4)
    for (n, p), (_, q) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(p, q), n  # exact: the same seeded initialisation twice on one machine
    assert not torch.equal(a.tok_emb.weight, c.tok_emb.weight)


@pytest.mark.parametrize(
    "kw, fragment",
    [
        (dict(block="sandwich"), "model.block is 'sandwich'; allowed values: pre_ln,"),
        (dict(n_heads=5), "n_heads=5 (layer 0) must divide d_model=32"),
        (dict(n_heads=[4, 0]), "model.n_heads.1 is 0; it must be ≥ 1"),
        (dict(norm="batchnorm"), "model.norm is 'batchnorm'"),
        (dict(d_ff=64.0), "model.d_ff is 64.0 (float); it must be of type integer"),
        (dict(rope_dim=3), "model.rope_dim is 3; it must be a multiple of 2"),
        (dict(rope_dim=16), "rope_dim=16 must be at most head_dim (smallest 8)"),
        (dict(block="sas", n_heads=4, head_dim=6), "n_heads × head_dim must equal d_model"),
        (dict(n_layers=-1), "model.n_layers is -1; it must be ≥ 1"),
        (dict(block_overrides={"skip": 0}), "unknown model.block_overrides.skip; allowed keys under block_overrides"),
        (dict(output="classifier"), "n_classes"),
        (dict(position="rope", n_heads=1, head_dim=33, d_model=33), "even head_dim"),
    ],
)
def test_invalid_configs_name_the_field(kw, fragment):
    base = dict(vocab_size=50, n_layers=2, d_model=32, n_heads=4, d_ff=64)
    base.update(kw)
    with pytest.raises(ConfigError, match=None) as err:
        TransformerConfig(**base)
    assert fragment in str(err.value)


def test_module_apply_reaches_every_submodule_of_a_model_with_trainable_gains():
    """nn.Module.apply(fn) is how initialisers walk a model; a gain module must not shadow it."""
    model = make(block="sas_p", dtype=torch.float32)
    assert any("gain" in name for name, _ in model.named_parameters())
    visited = []
    model.apply(lambda module: visited.append(type(module).__name__))
    assert "Gain" in visited
    x = tokens()
    assert torch.equal(model(x), model(x))  # exact: the same computation twice on one machine
