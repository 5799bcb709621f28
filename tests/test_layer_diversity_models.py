"""The residual stream read as an ensemble on real models of the family (float64), the multitask
prompt LM task, and the closed-form parameter count."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from repro.analysis.parameter_count import analytic_parameter_count
from repro.analysis.residual_stream import (
    NotAdditiveError,
    frozen_norm_contributions,
    read_residual_stream,
)
from repro.models import Transformer, TransformerConfig, count_parameters
from repro.models.layers import RMSNorm
from repro.papers.layer_diversity.layer_ensemble import analyse_readout
from repro.training import evaluate
from repro.training.prompt_lm import PromptLMTask, stack_prompt_rows

FAMILIES = {
    "gpt": dict(norm="layernorm", activation="gelu", block="pre_ln", position="learned", d_ff=48),
    "llama": dict(
        norm="rmsnorm",
        activation="swiglu",
        block="pre_ln",
        position="rope",
        d_ff=40,
        qk_bias=False,
        vo_bias=False,
        mlp_bias=False,
        tie_embeddings=False,
    ),
    "phi": dict(norm="layernorm", activation="gelu", block="parallel", position="rope", d_ff=48, tie_embeddings=False),
}
LABELS = [3, 5, 7, 11]


def model(family, n_layers=3, seed=0):
    torch.manual_seed(seed)
    m = Transformer(
        TransformerConfig(
            vocab_size=30, n_layers=n_layers, d_model=16, n_heads=2, max_seq_len=16, init_std=0.2, **FAMILIES[family]
        )
    )
    with torch.no_grad():  # move norms and biases away from their init, so every term matters
        for name, p in m.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(0.3 * torch.randn_like(p))
    return m.eval()


def batch(n=40, t=12, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(1, 30, (n, t), generator=g), torch.randint(0, t, (n,), generator=g)


@pytest.mark.parametrize("family", FAMILIES)
def test_members_sum_to_stream_and_logits(family):
    m = model(family)
    ids, pos = batch()
    r = read_residual_stream(m, ids, pos, LABELS, batch_size=16)
    assert r.contributions.shape == (40, 7, 4) and r.lens.shape == (40, 4, 4)
    assert r.member_names == ("embed", "attn.0", "mlp.0", "attn.1", "mlp.1", "attn.2", "mlp.2")
    assert r.stream_error <= 1e-12
    assert r.logit_error <= 1e-12
    assert np.abs(r.contributions.sum(axis=1) - r.logits).max() <= 1e-12
    assert np.abs(r.lens[:, -1] - r.logits).max() <= 1e-12  # the last logit-lens readout is the output
    with torch.no_grad():
        own = m(ids)[torch.arange(40), pos][:, LABELS].double().numpy()
    assert np.abs(own - r.logits).max() <= 1e-4  # float32 model vs its float64 copy
    assert next(m.parameters()).dtype == torch.float32  # the caller's model is untouched


def test_right_padding_does_not_change_a_causal_readout():
    m = model("gpt")
    ids, _ = batch(n=5, t=8)
    padded = torch.cat([ids, torch.zeros(5, 4, dtype=torch.long)], dim=1)
    pos = torch.tensor([7, 3, 5, 7, 0])
    a = read_residual_stream(m, ids, pos, LABELS)
    b = read_residual_stream(m, padded, pos, LABELS)
    assert np.abs(a.contributions - b.contributions).max() <= 1e-12


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
def test_frozen_norm_contributions_sum_to_the_norm(norm):
    torch.manual_seed(0)
    layer = torch.nn.LayerNorm(8, eps=1e-5) if norm == "layernorm" else RMSNorm(8, 1e-5)
    with torch.no_grad():
        for p in layer.parameters():
            p.add_(torch.randn_like(p))
    layer = layer.double()
    members = torch.randn(6, 5, 8, dtype=torch.float64)
    stream = members.sum(dim=1)
    parts = frozen_norm_contributions(members, stream, layer)
    assert (parts.sum(dim=1) - layer(stream)).abs().max() <= 1e-13


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(block="post_ln"), "post-norm"),
        (dict(block="sas"), "skip weights"),
        (dict(output="classifier", n_classes=2), "output="),
    ],
)
def test_models_whose_stream_is_not_a_sum_are_refused(overrides, message):
    m = Transformer(TransformerConfig(vocab_size=30, n_layers=2, d_model=16, n_heads=2, max_seq_len=16, **overrides))
    with pytest.raises(NotAdditiveError, match=message):
        read_residual_stream(m, *batch(), LABELS)


def test_bad_positions_and_labels_are_refused():
    m = model("gpt")
    ids, _ = batch()
    with pytest.raises(ValueError, match="positions must lie"):
        read_residual_stream(m, ids, torch.full((40,), 12), LABELS)
    with pytest.raises(ValueError, match="label_token_ids"):
        read_residual_stream(m, ids, torch.zeros(40, dtype=torch.long), [3, 99])


def test_analyse_readout_tables_are_consistent():
    m = model("phi", n_layers=2)
    ids, pos = batch(n=300, seed=2)
    labels = np.random.default_rng(0).integers(0, 4, size=300)
    tables = analyse_readout(read_residual_stream(m, ids, pos, LABELS), labels, seed=0)
    units = tables["units"]
    assert len(units) == 3 * (3 + 1)  # per target: prefixes 0..2 and the module ensemble
    assert units["identity_residual"].max() <= 1e-12
    assert units["omega_residual"].max() <= 1e-9
    assert units["div_over_bias_max"].max() <= 0.0
    module = units[(units["form"] == "module") & (units["target"] == "onehot")].iloc[0]
    lens_last = units[(units["form"] == "lens") & (units["target"] == "onehot") & (units["prefix"] == 2)].iloc[0]
    # exact: both are k/300 shares of integer counts; the two logit forms agree to 1e-12 and the smallest
    # gap between label logits is ~1e-3, so their argmaxes agree
    assert module["n_members"] == 5 and module["layer_accuracy"] == lens_last["layer_accuracy"]
    groups = tables["groups"]
    assert groups["split_residual"].max() <= 1e-9
    assert set(groups["type"]) == {"embed", "attn", "mlp"}
    checks = tables["checks"].iloc[0]
    # exact: a duplicate leaves the cell counts, hence every entropy, bit for bit the same: x − x = 0
    assert checks["duplicate_gain"] == 0.0 and checks["independent_gain"] > 0
    assert checks["label_entropy_given_layers"] > 0  # an untrained model leaves random labels uncertain
    assert checks["module_mse_error"] <= 1e-9
    info = tables["info"]
    assert info["identity_residual"].max() <= 1e-12
    assert (np.diff(info["joint_information"]) >= -1e-12).all()


# --------------------------------------------------------------------------- prompt LM task


def prompt_rows():
    a = torch.tensor([[1, 9, 9, 3, 5], [1, 8, 3, 6, 0]])  # [BOS] body [ANS] label, right-padded
    b = torch.tensor([[1, 7, 7, 7, 3, 4]])
    return stack_prompt_rows([a, b], [torch.tensor([3, 2]), torch.tensor([4])], pad_id=0)


def test_stacking_pads_to_the_widest_task():
    ids, pos = prompt_rows()
    assert ids.shape == (3, 6) and ids[0, 5] == 0 and pos.tolist() == [3, 2, 4]


def test_loss_weights_the_answer_token():
    ids, pos = prompt_rows()
    task = PromptLMTask(ids, pos, ids, pos, pad_id=0, label_weight=5.0)
    b = task.train_batch(0, 3, seed=0)
    # row 1 is [1, 8, 3, 6, 0, 0]: targets 8, 3, 6 (weights 1, 1, 5 at the ANS position), then padding
    row = int((b["input_ids"] == 8).any(dim=1).nonzero())
    assert b["weights"][row].tolist() == [1.0, 1.0, 5.0, 0.0, 0.0, 0.0]  # exact: weights set by the code
    torch.manual_seed(0)
    m = Transformer(TransformerConfig(vocab_size=10, n_layers=1, d_model=8, n_heads=2, d_ff=16, max_seq_len=8))
    out = task.loss(m, b)
    ce = F.cross_entropy(m(b["input_ids"]).reshape(-1, 10), b["targets"].reshape(-1), reduction="none")
    w = b["weights"].reshape(-1)
    assert torch.allclose(out.loss, (ce * w).sum() / w.sum())
    # evaluate() weights batches by n_targets = Σw, so it equals the loss over the whole held-out set
    whole = PromptLMTask(ids, pos, ids, pos, pad_id=0, label_weight=5.0, eval_batch_size=2)
    with torch.no_grad():
        whole_loss = float(task.loss(m, task._batch(ids, pos)).loss)
    assert evaluate(m, whole) == pytest.approx(whole_loss, rel=1e-6)


def test_batches_are_trimmed_and_deterministic():
    ids, pos = prompt_rows()
    task = PromptLMTask(ids[:2], pos[:2], ids, pos, pad_id=0)
    b = task.train_batch(0, 2, seed=0)
    assert b["input_ids"].shape[1] == 5  # the all-padding last column is dropped
    assert torch.equal(task.train_batch(3, 2, seed=7)["input_ids"], task.train_batch(3, 2, seed=7)["input_ids"])


def test_prompt_task_rejects_bad_input():
    ids, pos = prompt_rows()
    with pytest.raises(ValueError, match="answer_pos must lie"):
        PromptLMTask(ids, torch.tensor([5, 2, 4]), ids, pos, pad_id=0)
    with pytest.raises(ValueError, match="label_weight"):
        PromptLMTask(ids, pos, ids, pos, pad_id=0, label_weight=0)


# --------------------------------------------------------------------------- parameter count


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("n_layers", [1, 4])
def test_closed_form_parameter_count(family, n_layers):
    cfg = TransformerConfig(
        vocab_size=164, n_layers=n_layers, d_model=64, n_heads=4, max_seq_len=32, **FAMILIES[family]
    )
    m = Transformer(cfg)
    assert analytic_parameter_count(cfg) == count_parameters(m) == sum(p.numel() for p in m.parameters())


def test_gpt_count_by_hand():
    # V=10, d=4, T=6, 1 layer, d_ff=8, tied: emb 40 + pos 24 + attn 4·16 + 8 + 4 + 4 + MLP 32 + 8 + 32 + 4
    # + 2 LayerNorms 16 + final LayerNorm 8
    cfg = TransformerConfig(vocab_size=10, n_layers=1, d_model=4, n_heads=1, d_ff=8, max_seq_len=6)
    assert analytic_parameter_count(cfg) == 40 + 24 + 80 + 76 + 16 + 8 == count_parameters(Transformer(cfg))


def test_closed_form_refuses_other_blocks():
    with pytest.raises(ValueError, match="plain pre_ln"):
        analytic_parameter_count(TransformerConfig(vocab_size=10, n_layers=1, d_model=8, n_heads=2, block="sas"))


# --------------------------------------------------------------------------- duplicated block


@pytest.mark.parametrize("family", FAMILIES)
def test_duplicated_block_applies_the_same_block_twice(family):
    from repro.papers.layer_diversity.block_duplication import duplicate_block

    m = model(family, n_layers=3).double()
    d = duplicate_block(m, 1)
    assert d.cfg.n_layers == 4 and next(d.parameters()).dtype == torch.float64
    one_block = count_parameters(m) - count_parameters(model(family, n_layers=2))
    assert count_parameters(d) == count_parameters(m) + one_block
    ids, _ = batch(n=6, t=10)
    with torch.no_grad():
        _, before = m.run_with_cache(ids, names=["blocks.1.hook_resid_post", "blocks.2.hook_resid_post"])
        out, after = d.run_with_cache(ids, names=["blocks.1.hook_resid_post", "blocks.2.hook_resid_post"])
        twice = m.blocks[1](before["blocks.1.hook_resid_post"])
        rest = m.final_norm(m.blocks[2](twice))
    # exact: the same blocks on the same input, the same computation twice on one machine
    assert torch.equal(after["blocks.1.hook_resid_post"], before["blocks.1.hook_resid_post"])
    assert (after["blocks.2.hook_resid_post"] - twice).abs().max() <= 1e-12
    assert (out - m.unembed(rest)).abs().max() <= 1e-12
    r = read_residual_stream(d, ids, torch.full((6,), 9), LABELS)
    assert r.contributions.shape[1] == 9 and r.logit_error <= 1e-12


def test_duplicating_a_missing_block_is_refused():
    from repro.papers.layer_diversity.block_duplication import duplicate_block

    with pytest.raises(ValueError, match="layer 3 does not exist"):
        duplicate_block(model("gpt", n_layers=3), 3)
