"""Mixed precision in the trainer: bf16 autocast is opt-in, changes the run's identity, and leaves
fp32 runs (and the checkpoints written before the option existed) exactly as they were."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import counting_lm, counting_task

from repro.training import ConfigMismatchError, TrainConfig, TrainingInterrupted, train
from repro.training.config import TrainConfigError
from repro.training.trainer import identity_hash

tiny_lm, task = counting_lm, counting_task


def config(**overrides) -> TrainConfig:
    values = dict(steps=30, batch_size=8, lr=1e-2, warmup_steps=2, eval_every=0, log_every=5, seed=1)
    values.update(overrides)
    return TrainConfig(**values)


def test_precision_is_part_of_the_identity():
    cfg = TrainConfig(steps=12, batch_size=8, lr=3e-2, warmup_steps=2, seed=1)
    assert cfg.precision == "fp32" and cfg.autocast_dtype is None and cfg.result_fields()["precision"] == "fp32"
    bf16 = TrainConfig(steps=12, batch_size=8, lr=3e-2, warmup_steps=2, seed=1, precision="bf16")
    assert identity_hash({"train": bf16.result_fields()}) != identity_hash({"train": cfg.result_fields()})


def test_unknown_precision_is_rejected_by_name():
    with pytest.raises(TrainConfigError, match=r"precision is 'fp16'; allowed values: fp32, bf16"):
        config(precision="fp16")


def test_bf16_autocast_trains_with_fp32_weights_and_differs_from_fp32(tmp_path):
    losses = {}
    for precision in ("fp32", "bf16"):
        model = tiny_lm()
        train(model, task(), config(precision=precision), tmp_path / precision, progress=False)
        assert all(p.dtype == torch.float32 for p in model.parameters())  # master weights stay fp32
        rows = [r for r in _metrics(tmp_path / precision) if "train_loss" in r]
        first, last = rows[0]["train_loss"], rows[-1]["train_loss"]
        assert torch.isfinite(torch.tensor(last)) and last < first - 0.5, (precision, first, last)
        losses[precision] = [r["train_loss"] for r in rows]
    # autocast really ran: bf16 rounding changes the losses, but only slightly at the start
    # bf16 moves later losses by 2e-5 to 2e-4 relative; fp32 rounding differs between CPUs by ~1e-7
    assert losses["bf16"] != pytest.approx(losses["fp32"], rel=1e-5)
    assert losses["bf16"][0] == pytest.approx(losses["fp32"][0], abs=0.05)


def test_a_bf16_checkpoint_is_not_resumed_as_fp32(tmp_path):
    with pytest.raises(TrainingInterrupted):
        train(
            tiny_lm(),
            task(),
            config(steps=4, checkpoint_every=2, precision="bf16"),
            tmp_path,
            progress=False,
            interrupt_after=3,
        )
    with pytest.raises(ConfigMismatchError, match="precision"):
        train(tiny_lm(), task(), config(steps=4, checkpoint_every=2), tmp_path, progress=False)


def _metrics(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
