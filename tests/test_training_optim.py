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
    decayed = {n for n, wd in decay_of.items() if wd == 0.1}  # exact: the given weight decay, copied
    assert decayed == {
        "embed.weight",  # embeddings (tied with the head) are decayed
        "pos.weight",
        "final_norm.matrix",
        *(f"blocks.{i}.{n}" for i in range(2) for n in ("qk.weight", "value.weight", "proj.weight", "delta_w")),
    }
    assert all(decay_of[n] == 0.0 for n in expected_exempt)  # exact: 0.0 set by the code
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
    # exact: multipliers, decay, betas and eps copied from the arguments (or the default 1.0)
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


def _train_steps(model, optimizer, steps=6):
    """A few updates with changing LR (as the trainer sets it) and a gradient-free parameter."""
    torch.manual_seed(1)
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = 0.05 / (step + 1) * group["lr_multiplier"]
        x = torch.randint(0, 6, (3, 5))
        loss = model.blocks[0].qk(model.embed(x) + model.pos(x)).square().mean() + model.head(model.embed(x)).mean()
        loss = loss + sum(b.attn_mat_resid_gain.sum() * b.delta_w.square().sum() for b in model.blocks)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def test_fused_adamw_is_torch_fused_adamw_bit_for_bit():
    """Our optimizer calls torch's fused kernel outside torch.optim: the updates must be identical."""
    torch.manual_seed(0)
    ours_model = Model()
    torch_model = Model()
    torch_model.load_state_dict(ours_model.state_dict())
    ours = build_optimizer(ours_model, lr=0.05, weight_decay=0.1, lr_multipliers={"delta_w": 3.0})
    assert type(ours).__name__ == "FusedAdamW"
    groups = parameter_groups(torch_model, 0.1, {"delta_w": 3.0})
    for group in groups:
        group["lr"] = 0.05 * group["lr_multiplier"]
    reference = torch.optim.AdamW(groups, lr=0.05, fused=True)

    _train_steps(ours_model, ours)
    _train_steps(torch_model, reference)
    for (name, a), b in zip(ours_model.named_parameters(), torch_model.parameters()):
        assert torch.equal(a, b), name  # exact: the same fused kernel on the same inputs, one machine
    ours_state, torch_state = ours.state_dict()["state"], reference.state_dict()["state"]
    assert ours_state.keys() == torch_state.keys() and ours_state  # parameters without gradients have none
    for index, entry in torch_state.items():
        for key, value in entry.items():
            assert torch.equal(ours_state[index][key], value), (index, key)  # exact: as above
            assert ours_state[index][key].dtype == value.dtype


def test_fused_adamw_state_round_trips_through_state_dict():
    torch.manual_seed(0)
    model = Model()
    optimizer = build_optimizer(model, lr=0.05, weight_decay=0.1)
    _train_steps(model, optimizer, steps=2)
    copy = Model()
    copy.load_state_dict(model.state_dict())
    restored = build_optimizer(copy, lr=0.05, weight_decay=0.1)
    restored.load_state_dict(optimizer.state_dict())
    _train_steps(model, optimizer, steps=3)
    _train_steps(copy, restored, steps=3)
    for a, b in zip(model.parameters(), copy.parameters()):
        assert torch.equal(a, b)  # exact: the same steps from the same state, one machine


def test_training_imports_no_dynamo():
    """torch.optim's optimizers import torch._dynamo (1.6 s per process); a training step must not."""
    import subprocess
    import sys

    code = (
        "import sys, torch\n"
        "from repro.models import TransformerConfig, build_model\n"
        "from repro.training import build_optimizer\n"
        "model = build_model(TransformerConfig(vocab_size=11, d_model=8, n_layers=1, n_heads=2, max_seq_len=4))\n"
        "opt = build_optimizer(model, lr=1e-3, weight_decay=0.1)\n"
        "loss = model(torch.randint(0, 11, (2, 4))).float().square().mean()\n"
        "loss.backward()\n"
        "torch.nn.utils.clip_grad_norm_(list(model.parameters()), 1.0)\n"
        "opt.step(); opt.zero_grad(set_to_none=True)\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
