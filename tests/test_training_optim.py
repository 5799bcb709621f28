"""AdamW groups: which parameters are decayed, and the per-name LR multipliers."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from repro.training import build_optimizer, decay_exempt_names, parameter_groups


class RMSNorm(nn.Module):
    """A hand-written norm, detected by its class name."""

    def __init__(self, d):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(d))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = RMSNorm(d)
        self.qk = nn.Linear(d, 2 * d)  # weight decayed, bias not
        self.value = nn.Linear(d, d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.attn_mat_resid_gain = nn.Parameter(torch.ones(1, 2, 1, 1))  # per-head β: not decayed
        self.mlp_block_resid_gain = nn.Parameter(torch.tensor(0.1))
        self.delta_w = nn.Parameter(torch.zeros(d, d))  # ΔW of a reparameterised W^V: decayed


class PlainScale(nn.Module):
    """A module named like a norm but of another class: only its vectors are exempt."""

    def __init__(self, d):
        super().__init__()
        self.vector = nn.Parameter(torch.ones(d))
        self.matrix = nn.Parameter(torch.ones(d, d))


class Model(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.embed = nn.Embedding(10, d)
        self.pos = nn.Embedding(6, d)
        self.blocks = nn.ModuleList([Block(d), Block(d)])
        self.final_norm = PlainScale(d)
        self.head = nn.Linear(d, 10, bias=False)
        self.head.weight = self.embed.weight
        self.frozen = nn.Parameter(torch.ones(d), requires_grad=False)


def test_decay_groups_follow_the_simplified_transformers_rule():
    model = Model()
    exempt = decay_exempt_names(model)
    expected_exempt = {
        "final_norm.vector",
        *(
            f"blocks.{i}.{name}"
            for i in range(2)
            for name in (
                "norm1.weight",
                "norm1.bias",
                "norm2.scale",
                "qk.bias",
                "attn_mat_resid_gain",
                "mlp_block_resid_gain",
            )
        ),
    }
    assert exempt == expected_exempt
    groups = parameter_groups(model, weight_decay=0.1)
    decay_of = {name: g["weight_decay"] for g in groups for name in g["param_names"]}
    decayed = {n for n, wd in decay_of.items() if wd == 0.1}
    assert decayed == {
        "embed.weight",  # embeddings (tied with the head) are decayed
        "pos.weight",
        "final_norm.matrix",
        *(f"blocks.{i}.{n}" for i in range(2) for n in ("qk.weight", "value.weight", "proj.weight", "delta_w")),
    }
    assert all(decay_of[n] == 0.0 for n in expected_exempt)
    assert "frozen" not in decay_of  # frozen parameters are not optimised
    # Every trainable parameter appears exactly once.
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert sorted(decay_of) == sorted(trainable) and len(decay_of) == len(trainable)


def test_lr_multipliers_make_their_own_groups():
    model = Model()
    optimizer = build_optimizer(
        model, lr=1e-3, weight_decay=0.1, betas=(0.9, 0.98), eps=1e-9, lr_multipliers={r"\.(value|proj)\.weight$": 4.0}
    )
    by_name = {n: g for g in optimizer.param_groups for n in g["param_names"]}
    assert by_name["blocks.0.value.weight"]["lr"] == pytest.approx(4e-3)
    assert by_name["blocks.1.proj.weight"]["lr_multiplier"] == 4.0
    assert by_name["blocks.0.qk.weight"]["lr_multiplier"] == 1.0
    assert by_name["blocks.0.value.weight"]["weight_decay"] == 0.1
    assert optimizer.param_groups[0]["betas"] == (0.9, 0.98) and optimizer.param_groups[0]["eps"] == 1e-9


def test_a_multiplier_pattern_that_matches_nothing_is_an_error():
    with pytest.raises(ValueError, match=r"lr_multipliers: pattern\(s\) \['W_V'\] match no trainable parameter"):
        parameter_groups(Model(), 0.1, {"W_V": 2.0})


def test_weight_decay_only_shrinks_decayed_parameters():
    """One AdamW step with zero gradients: only decayed parameters move (by lr·wd·p)."""
    model = Model()
    optimizer = build_optimizer(model, lr=0.1, weight_decay=0.5)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    optimizer.step()
    exempt = decay_exempt_names(model)
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        expected = before[name] if name in exempt else before[name] * (1 - 0.1 * 0.5)
        torch.testing.assert_close(param.detach(), expected, rtol=0, atol=1e-7)
