"""TrainConfig rejects bad values with messages naming the field."""

from __future__ import annotations

import pytest

from repro.training import TrainConfig, TrainConfigError

BASE = dict(steps=100, batch_size=8, lr=1e-3)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"steps": -5}, r"TrainConfig\.steps is -5; it must be ≥ 1"),
        ({"steps": 0}, r"TrainConfig\.steps is 0"),
        ({"steps": 10.0}, r"TrainConfig\.steps is 10\.0 \(float\); it must be of type integer"),
        ({"batch_size": True}, r"TrainConfig\.batch_size is True \(bool\)"),
        ({"lr": 0.0}, r"TrainConfig\.lr is 0\.0; it must be > 0"),
        ({"lr": float("nan")}, r"TrainConfig\.lr is nan"),
        ({"lr": float("inf")}, r"TrainConfig\.lr is inf"),
        (
            {"schedule": "step"},
            r"TrainConfig\.schedule is 'step'; allowed values: constant, linear, cosine, inverse_sqrt, triangular",
        ),
        ({"warmup_steps": 100}, r"TrainConfig\.warmup_steps is 100; it must be less than steps=100"),
        ({"warmup_steps": 5, "warmup_fraction": 0.1}, r"warmup_steps.*not both"),
        ({"warmup_fraction": 1.0}, r"TrainConfig\.warmup_fraction is 1\.0; it must be < 1"),
        ({"schedule": "inverse_sqrt"}, r"TrainConfig\.schedule is 'inverse_sqrt'; .*positive warmup"),
        ({"schedule": "triangular", "warmup_fraction": 0.1}, r"'triangular' rises to its peak at peak_fraction"),
        ({"peak_fraction": 1.0}, r"TrainConfig\.peak_fraction is 1\.0"),
        ({"min_lr": 1.0}, r"TrainConfig\.min_lr is 1\.0; it must be at most lr=0\.001"),
        ({"weight_decay": -0.1}, r"TrainConfig\.weight_decay is -0\.1"),
        ({"betas": (0.9, 1.0)}, r"TrainConfig\.betas\.1 is 1\.0; it must be < 1"),
        ({"betas": (0.9,)}, r"TrainConfig\.betas is \[0\.9\]; it must have at least 2 items"),
        ({"eps": 0}, r"TrainConfig\.eps is 0"),
        ({"grad_clip": -1.0}, r"TrainConfig\.grad_clip is -1\.0; it must be > 0"),
        ({"lr_multipliers": {"(": 2.0}}, r"TrainConfig\.lr_multipliers is '\('; its keys must be regular expressions"),
        ({"lr_multipliers": {"value": -1}}, r"TrainConfig\.lr_multipliers\.value is -1; it must be ≥ 0"),
        ({"eval_every": -1}, r"TrainConfig\.eval_every is -1"),
        ({"log_every": 0}, r"TrainConfig\.log_every is 0; it must be ≥ 1"),
        ({"threads": 0}, r"TrainConfig\.threads is 0"),
        ({"seed": -1}, r"TrainConfig\.seed is -1"),
        ({"keep_checkpoints_at": (0, 50)}, r"TrainConfig\.keep_checkpoints_at\.0 is 0; it must be ≥ 1"),
        (
            {"keep_checkpoints_at": (101,)},
            r"TrainConfig\.keep_checkpoints_at is \(101,\); \[101\] are after the last step, steps=100",
        ),
        ({"time_budget_s": 0}, r"TrainConfig\.time_budget_s is 0; it must be > 0"),
        (
            {"time_budget_s": 60, "warmup_steps": 5},
            r"TrainConfig\.warmup_steps is 5; with time_budget_s .* give warmup_fraction",
        ),
        ({"device": "gpu7"}, r"TrainConfig\.device is 'gpu7'; it must be 'auto' or a torch device string"),
        ({"init_from": ""}, r"TrainConfig\.init_from is ''; it must have at least 1 characters"),
    ],
)
def test_bad_values_are_rejected_by_name(overrides, message):
    with pytest.raises(TrainConfigError, match=message):
        TrainConfig(**{**BASE, **overrides})


def test_from_dict_rejects_unknown_and_missing_keys():
    with pytest.raises(TrainConfigError, match=r"unknown key\(s\) \['learning_rate'\]"):
        TrainConfig.from_dict({**BASE, "learning_rate": 1e-3})
    with pytest.raises(TrainConfigError, match=r"missing required key\(s\) \['lr'\]"):
        TrainConfig.from_dict({"steps": 10, "batch_size": 2})


def test_round_trip_through_plain_values():
    config = TrainConfig(**BASE, betas=[0.9, 0.98], keep_checkpoints_at=[30, 10, 30], lr_multipliers={"value": 2.0})
    # exact: the given values, copied (no arithmetic)
    assert config.betas == (0.9, 0.98) and config.keep_checkpoints_at == (10, 30)
    assert TrainConfig.from_dict(config.to_dict()) == config


def test_execution_fields_are_left_out_of_the_result_fields():
    fields = TrainConfig(**BASE).result_fields()
    assert "threads" not in fields and "device" not in fields and "checkpoint_every" not in fields
    assert fields["lr"] == 1e-3 and fields["seed"] == 0  # exact: the given lr, copied
