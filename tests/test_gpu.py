"""The paper-scale path on a GPU: the trainer, its checkpoints and the benchmarks with device cuda.

Every test here needs a CUDA GPU and is skipped without one (CI has none). On a machine with one:
`python -m pytest tests/test_gpu.py` (docs/paper-scale.md). The same runs on the CPU are tested
elsewhere; these check what only a GPU exercises: batches and optimizer state on the device, its
random state in checkpoints, autocast in bf16, and timings that wait for the device's work.
"""

from __future__ import annotations

import json
import os

# cuBLAS picks reduction orders per call unless its workspace is fixed before CUDA starts
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import pytest
import torch
from conftest import COUNT_LENGTH as LENGTH
from conftest import COUNT_VOCAB as VOCAB
from conftest import counting_lm, counting_task
from safetensors.torch import load_file

from repro.models import TransformerConfig
from repro.training import TrainConfig, TrainingInterrupted, train, update_stepper

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

tiny_lm, task = counting_lm, counting_task


def config(**overrides) -> TrainConfig:
    values = dict(
        steps=30, batch_size=8, lr=1e-2, warmup_steps=2, eval_every=10, log_every=5, checkpoint_every=10, seed=1
    )
    values.update({"device": "cuda", **overrides})
    return TrainConfig(**values)


def rows(run_dir, key: str) -> list[float]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [row[key] for row in map(json.loads, lines) if row.get(key) is not None]


@pytest.fixture
def deterministic():
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    yield
    torch.use_deterministic_algorithms(before)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_run_on_the_gpu_learns_and_keeps_fp32_weights_there(tmp_path, precision):
    model = tiny_lm()
    train(model, task(), config(precision=precision), tmp_path, progress=False)
    assert all(p.device.type == "cuda" and p.dtype == torch.float32 for p in model.parameters())
    losses = rows(tmp_path, "train_loss")
    assert losses[-1] < losses[0] - 0.5, losses
    saved = load_file(str(tmp_path / "model.safetensors"))  # readable on the CPU
    assert all(t.device.type == "cpu" for t in saved.values())


def test_a_gpu_run_agrees_with_the_same_run_on_the_cpu(tmp_path):
    losses = {}
    for device in ("cpu", "cuda"):
        train(tiny_lm(), task(), config(device=device), tmp_path / device, progress=False)
        losses[device] = rows(tmp_path / device, "eval_loss")
    # the same seeds and batches; fp32 kernels that sum in another order move the losses in the last digits
    assert losses["cuda"] == pytest.approx(losses["cpu"], rel=1e-3)


def test_a_gpu_run_resumed_after_a_crash_equals_the_uninterrupted_run(tmp_path, deterministic):
    straight = tiny_lm()
    train(straight, task(), config(), tmp_path / "straight", progress=False)
    with pytest.raises(TrainingInterrupted):
        train(tiny_lm(), task(), config(), tmp_path / "resumed", progress=False, interrupt_after=15)
    resumed = tiny_lm(seed=99)  # another init and another RNG state, which the checkpoint must overwrite
    torch.cuda.manual_seed(7)
    train(resumed, task(), config(), tmp_path / "resumed", progress=False)
    assert json.loads((tmp_path / "resumed" / "run.json").read_text())["resumed_from"] == 10
    for name, tensor in straight.state_dict().items():
        torch.testing.assert_close(resumed.state_dict()[name], tensor, rtol=1e-6, atol=1e-7, msg=name)
    assert rows(tmp_path / "resumed", "eval_loss") == pytest.approx(rows(tmp_path / "straight", "eval_loss"), rel=1e-6)


def test_the_update_stepper_times_the_trainers_update_on_the_gpu():
    model = tiny_lm()
    with update_stepper(model, task(), config(precision="bf16")) as update:
        before = [p.detach().clone() for p in model.parameters()]
        for _ in range(3):  # the first update is at the warm-up's zero rate
            update()
        torch.cuda.synchronize()
    assert next(model.parameters()).device.type == "cuda"
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_the_benchmark_times_and_measures_memory_on_the_gpu():
    from repro.bench import BenchShape, format_shapes, run_shapes

    shape = BenchShape(64, 2, 2, 32, 4, 128)
    result = run_shapes([shape], threads=1, steps=2, rounds=2, warmup=1, device="cuda", precisions=["fp32", "bf16"])
    assert result["device"].startswith("cuda") and result["device_name"]
    for item in result["shapes"]:
        assert item["skipped"] is None
        for row in item["models"]:
            assert row["tokens_per_s"] > 0 and row["fraction_of_peak"] > 0 and row["peak_memory_gib"] > 0
    assert "cuda" in format_shapes(result)


def test_the_block_throughput_times_every_block_on_the_gpu():
    from repro.analysis.throughput import ThroughputSettings, measure_throughput

    small = dict(vocab_size=VOCAB, n_layers=2, d_model=16, n_heads=2, d_ff=32, max_seq_len=LENGTH)
    configs = {block: TransformerConfig(**small, block=block) for block in ("pre_ln", "sas", "sas_p", "parallel")}
    for precision in ("fp32", "bf16"):
        settings = ThroughputSettings(
            batch_size=4, seq_len=LENGTH, warmup_steps=1, timed_steps=2, rounds=2, device="cuda", precision=precision
        )
        timings = measure_throughput(configs, settings)
        assert len(timings) == 4 * 2 * 2 and (timings["tokens_per_s"] > 0).all()
