"""Exact structural claims of "Simplifying Transformer Blocks" (He & Hofmann 2024), in float64.

The identities already covered by tests/test_models_structure.py (shaped attention is the identity
at init, SAS == SAS-P at init, the parameter difference at small sizes) are tested there; this file
tests the analysis functions that put them into the scorecard, the paper-size parameter counts, the
tied initialisations of Fig 15, the learning-rate duality of App. A and the block inventory that
the schematic figures are drawn from.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from repro.models import ConfigError, TransformerConfig, build_model, count_parameters
from repro.papers.simplified_blocks import block_structure as bs
from repro.papers.simplified_blocks.block_diagram import draw_block
from repro.papers.simplified_blocks.lr_duality import duality_gap, plain_twin
from repro.papers.simplified_blocks.structure_checks import run_all


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny float64 models: one thread avoids thread start-up costs that dominate at this size."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


SMALL = dict(
    vocab_size=50,
    n_layers=3,
    d_model=32,
    n_heads=4,
    d_ff=64,
    max_seq_len=16,
    norm="rmsnorm",
    activation="relu",
    vo_bias=False,
    mlp_bias=False,
)


def make(seed=0, **kw):
    torch.manual_seed(seed)
    return build_model(dict(SMALL, **kw)).double().eval()


def tokens(B=2, T=16, seed=1):
    return torch.randint(0, 50, (B, T), generator=torch.Generator().manual_seed(seed))


REPARAM = dict(value="reparam", proj="reparam", first_value="reparam", reparam_beta=0.3, reparam_trainable=False)


# -- identities at initialisation, as measured for the scorecard ------------------------------------


@pytest.mark.parametrize(
    "block,norm", [("sas", "rmsnorm"), ("sas_p", "rmsnorm"), ("sas_p", "none"), ("sas", "layernorm")]
)
def test_identity_errors_vanish_at_init_and_detect_a_perturbation(block, norm):
    model = make(block=block, norm=norm)
    x = tokens()
    assert bs.attention_identity_error(model, x) < 1e-13
    assert bs.shaped_matrix_identity_error(model, x) < 1e-14
    with torch.no_grad():
        model.blocks[1].attn.q_proj.weight.normal_(0, 0.5)  # A != C once W^Q != 0
    assert bs.shaped_matrix_identity_error(model, x) > 1e-3
    assert bs.attention_identity_error(model, x) > 1e-3


def test_sequential_parallel_gap_is_zero_at_init_and_not_after_changing_a_gain():
    sas, sas_p = make(block="sas", norm="none"), make(block="sas_p", norm="none")
    assert bs.sequential_parallel_gap(sas, sas_p, tokens()) < 1e-13
    with torch.no_grad():
        sas.blocks[0].mlp_skip.gain.fill_(0.5)  # SAS-P has no MLP skip: the functions now differ
    assert bs.sequential_parallel_gap(sas, make(block="sas_p", norm="none"), tokens()) > 1e-6


# -- parameter counts --------------------------------------------------------------------------------


def test_paper_size_parameter_difference_by_hand():
    L, d, H = 18, 768, 12
    paper = dict(
        vocab_size=50000,
        n_layers=L,
        d_model=d,
        n_heads=H,
        d_ff=4 * d,
        max_seq_len=1024,
        norm="rmsnorm",
        activation="relu",
        vo_bias=False,
        mlp_bias=False,
    )
    counts = bs.parameter_difference(
        TransformerConfig(**paper, block="pre_ln"), TransformerConfig(**paper, block="sas")
    )
    # SAS gains: β_SA, β_FF, α_FF and per-head α, β, γ in every layer; α_V, β_V of layer 1's W^V.
    gains = L * (3 + 3 * H) + 2
    assert counts["added_gains"] == gains == 704
    assert counts["difference"] == (2 * L - 1) * d * d - gains
    # Pre-LN by hand: embeddings, positions, per block QK (+bias), V, P, MLP, two RMSNorms; final norm.
    block = 2 * (d * d + d) + 2 * d * d + 2 * d * 4 * d + 2 * d
    assert counts["reference_parameters"] == 50000 * d + 1024 * d + L * block + d
    assert abs(counts["reference_parameters"] / 1e6 - 167) < 1 and abs(counts["simplified_parameters"] / 1e6 - 146) < 1


def test_parameter_count_on_meta_device_equals_real_count():
    cfg = TransformerConfig(**SMALL, block="vskipinit_code")
    assert bs.parameter_count_at(cfg) == count_parameters(build_model(cfg))


# -- tied initialisations (Fig 15) -------------------------------------------------------------------


TIE_OVERRIDES = dict(value="reparam", proj="reparam", first_value="reparam", reparam_init="orthogonal")


@pytest.mark.parametrize("tie", ["all", "last", "none"])
def test_tie_overwrites_only_projection_inits(tie):
    tied = make(block="sas", block_overrides=dict(TIE_OVERRIDES, reparam_tie=tie))
    untied = make(block="sas", block_overrides=dict(TIE_OVERRIDES, reparam_tie="none"))
    # The tie overwrites W^P_init after its own draw: every other tensor is the untied model's.
    # exact: the same seeded draws twice on one machine
    untied_state = untied.state_dict()
    changed = {name for name, tensor in tied.state_dict().items() if not torch.equal(tensor, untied_state[name])}
    expected = {"all": {f"blocks.{i}.attn.proj.w_init" for i in range(3)}, "last": {"blocks.2.attn.proj.w_init"}}
    assert changed == expected.get(tie, set())


def test_all_tied_sets_each_projection_init_to_its_value_transpose():
    model = make(block="sas", block_overrides=dict(TIE_OVERRIDES, reparam_tie="all"))
    for blk in model.blocks:
        assert torch.equal(blk.attn.proj.w_init, blk.attn.value.w_init.T)  # exact: a transposed copy


def test_last_layer_tie_makes_the_whole_initial_chain_the_identity():
    """The official code's "last_block" tie: P_3 = (V_3 P_2 V_2 P_1 V_1)ᵀ, written out for three layers."""
    model = make(block="sas", block_overrides=dict(TIE_OVERRIDES, reparam_tie="last"))
    (v1, p1), (v2, p2), (v3, p3) = [(b.attn.value.w_init, b.attn.proj.w_init) for b in model.blocks]
    torch.testing.assert_close(p3, (v3 @ p2 @ v2 @ p1 @ v1).T, rtol=0, atol=1e-6)
    eye = torch.eye(32, dtype=p3.dtype)
    torch.testing.assert_close(p3 @ v3 @ p2 @ v2 @ p1 @ v1, eye, rtol=0, atol=1e-5)  # float32 draws
    assert not torch.allclose(p3 @ v3, eye, atol=1e-2)  # not the last layer's own transpose


def test_tie_of_trainable_orthogonal_matrices():
    model = make(block="vskipinit_code", block_overrides={"reparam_tie": "all"})
    for blk in model.blocks:
        assert torch.equal(blk.attn.proj.weight, blk.attn.value.weight.T)  # exact: a transposed copy


def test_tie_needs_matching_matrix_kinds():
    with pytest.raises(ConfigError, match="reparam_tie='all' ties W\\^P_init to W\\^V_init"):
        TransformerConfig(**SMALL, block="sas", block_overrides={"reparam_tie": "all"})  # identity maps
    with pytest.raises(
        ConfigError, match="reparam_tie='last' .* every layer; layer 0 has value='reparam', proj='identity'"
    ):
        TransformerConfig(**SMALL, block="sas", block_overrides={"reparam_tie": "last"})  # the chain needs every layer
    with pytest.raises(ConfigError, match="reparam_tie"):
        TransformerConfig(**SMALL, block="sas", block_overrides={"reparam_tie": "first"})


# -- learning-rate duality (App. A, Fig 9) ------------------------------------------------------------


@pytest.mark.parametrize("init", ["identity", "orthogonal"])
@pytest.mark.parametrize("optimizer,lr,momentum", [("sgd", 0.05, 0.0), ("sgd", 0.05, 0.9), ("adam", 1e-3, 0.0)])
def test_one_step_duality_is_exact_and_the_wrong_scale_is_not(init, optimizer, lr, momentum):
    model = make(block="sas", block_overrides=dict(REPARAM, reparam_init=init))
    result = duality_gap(model, [tokens()], optimizer=optimizer, lr=lr, momentum=momentum)
    assert result["other_gap"] == 0.0  # exact: identical gradients and arithmetic in both models on one machine
    assert result["matrix_gap"] <= 1e-10 * result["matrix_change"]
    wrong = result["lr_scale"] ** 0.5 if optimizer == "sgd" else result["lr_scale"] ** 2
    control = duality_gap(
        make(block="sas", block_overrides=dict(REPARAM, reparam_init=init)),
        [tokens()],
        optimizer=optimizer,
        lr=lr,
        momentum=momentum,
        lr_scale=wrong,
    )
    assert control["matrix_gap"] >= 0.1 * control["matrix_change"]


def test_sgd_duality_holds_over_several_steps():
    model = make(block="sas", block_overrides=REPARAM)
    batches = [tokens(seed=s) for s in range(3)]
    result = duality_gap(model, batches, optimizer="sgd", lr=0.05, momentum=0.9)
    assert result["matrix_gap"] <= 1e-8 * result["matrix_change"]


def test_plain_twin_computes_the_same_function():
    model = make(block="sas", block_overrides=dict(REPARAM, reparam_init="orthogonal"))
    twin = plain_twin(model)
    assert twin.blocks[1].attn.value.kind == "linear"
    torch.testing.assert_close(twin(tokens()), model(tokens()), rtol=0, atol=1e-12)


def test_duality_refuses_trainable_gains_and_models_without_reparam():
    with pytest.raises(ValueError, match="reparam_trainable=False"):
        duality_gap(
            make(block="sas", block_overrides=dict(REPARAM, reparam_trainable=True)),
            [tokens()],
            optimizer="sgd",
            lr=0.1,
        )
    with pytest.raises(ValueError, match="no reparameterised"):
        plain_twin(make(block="pre_ln"))


# -- inventory and the schematic figures ------------------------------------------------------------


def _present(rows, layer):
    return {r["component"] for r in rows if r["layer"] == layer and r["present"]}


def test_inventory_of_the_simplified_blocks():
    ours = bs.block_inventory(make(block="sas_p", norm="none"), "ours")
    assert _present(ours, 1) == {"query_key", "attention", "attn_gain", "mlp", "mlp_gain"}
    assert _present(ours, 0) == {"norm1", "query_key", "value", "attention", "attn_gain", "mlp", "mlp_gain"}
    sas = bs.block_inventory(make(block="sas"), "sas")
    assert _present(sas, 2) == {"norm1", "query_key", "attention", "attn_gain", "norm2", "mlp", "mlp_gain", "mlp_skip"}
    pre = bs.block_inventory(make(block="pre_ln"), "pre_ln")
    assert _present(pre, 1) == set(bs.COMPONENTS)
    counted = sum(r["parameters"] for r in sas)
    model = make(block="sas")
    outside_blocks = sum(p.numel() for n, p in model.named_parameters() if not n.startswith("blocks."))
    assert counted + outside_blocks == count_parameters(model)  # the inventory accounts for every parameter


@pytest.mark.parametrize(
    "block,norm,removed",
    [
        ("pre_ln", "rmsnorm", []),
        ("parallel", "rmsnorm", []),
        ("sas", "rmsnorm", ["$W^V$", "$W^P$", "attention skip"]),
        ("sas_p", "rmsnorm", ["$W^V$", "$W^P$", "attention skip", "MLP skip"]),
        ("sas_p", "none", ["Norm", "$W^V$", "$W^P$", "attention skip", "MLP skip"]),
    ],
)
def test_block_diagram_draws_what_the_model_has(block, norm, removed):
    rows = [r for r in bs.block_inventory(make(block=block, norm=norm)) if r["layer"] == 1]
    fig, ax = plt.subplots()
    assert draw_block(ax, rows, title=block) == removed
    texts = " ".join(t.get_text() for t in ax.texts)
    assert ("shaped attention" in texts) == block.startswith("sas")
    assert ("RMSNorm" in texts) == (norm == "rmsnorm")
    plt.close(fig)


def test_run_all_passes_every_check_on_a_small_family():
    cfgs = {
        name: TransformerConfig(**dict(SMALL, norm=norm), block=block)
        for name, block, norm in [
            ("pre_ln", "pre_ln", "rmsnorm"),
            ("parallel", "parallel", "rmsnorm"),
            ("sas", "sas", "rmsnorm"),
            ("sas_p", "sas_p", "rmsnorm"),
            ("sas_p_nonorm", "sas_p", "none"),
        ]
    }
    inventory, checks, params = run_all(
        cfgs, dict(n_layers=6, d_model=64, n_heads=4, d_ff=128, vocab_size=100, max_seq_len=32)
    )
    assert checks["passed"].all(), checks[~checks["passed"]]
    assert set(checks["check"]) >= {
        "identity_at_init",
        "shaped_matrix_is_identity",
        "sas_equals_sas_p_at_init",
        "parameter_difference",
        "lr_duality_sgd",
        "lr_duality_adam",
        "lr_duality_sgd_control",
        "lr_duality_adam_control",
    }
    assert set(inventory["variant"]) == set(cfgs)
    assert len(params) == 2 * len(cfgs)
