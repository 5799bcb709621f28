"""The trainer end to end on a tiny stand-in model: determinism, bit-exact resume, refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch import nn

import repro.training.checkpoint as checkpoint_module
from repro.training import (
    CheckpointError,
    ConfigMismatchError,
    LanguageModelTask,
    TrainConfig,
    TrainingInterrupted,
    train,
)
from repro.training.checkpoint import STATE_FILE, sha256_file

VOCAB, WIDTH, LENGTH = 17, 8, 9


class StandIn(nn.Module):
    """Embedding, a Linear with bias, a LayerNorm, a trainable gain, dropout and a tied head."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.norm1 = nn.LayerNorm(WIDTH)
        self.mix = nn.Linear(WIDTH, WIDTH)
        self.mix_gain = nn.Parameter(torch.tensor(0.5))
        self.dropout = nn.Dropout(0.3)
        self.head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.head.weight = self.embed.weight  # tied, as in the GPT models

    def forward(self, input_ids, *, head_mask=None, padding_mask=None):
        x = self.embed(input_ids)  # [B, T, d]
        context = x.cumsum(dim=1) / torch.arange(1, x.shape[1] + 1).view(1, -1, 1)  # causal mean
        x = x + self.mix_gain * self.dropout(torch.tanh(self.mix(self.norm1(context))))
        return self.head(x)  # [B, T, V]


def make_task() -> LanguageModelTask:
    g = torch.Generator().manual_seed(123)
    return LanguageModelTask(
        torch.randint(VOCAB, (40, LENGTH), generator=g),
        torch.randint(VOCAB, (12, LENGTH), generator=g),
        eval_batch_size=5,
    )


def make_config(**overrides) -> TrainConfig:
    values = dict(
        steps=12,
        batch_size=8,
        lr=3e-2,
        warmup_steps=2,
        weight_decay=0.1,
        eval_every=4,
        log_every=2,
        checkpoint_every=3,
        keep_checkpoints_at=(5, 10),
        seed=1,
    )
    values.update(overrides)
    return TrainConfig(**values)


def fresh_model(init_seed: int = 0) -> StandIn:
    torch.manual_seed(init_seed)
    return StandIn()


def run(run_dir: Path, config: TrainConfig | None = None, **kwargs):
    model = fresh_model()
    result = train(model, make_task(), config or make_config(), run_dir, progress=False, **kwargs)
    return model, result


def metrics_rows(run_dir: Path, drop=("seconds",)) -> list[dict]:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in row.items() if k not in drop} for row in rows]


def final_checkpoint_tensors(run_dir: Path) -> dict[str, torch.Tensor]:
    pointer = json.loads((run_dir / STATE_FILE).read_text())
    return load_file(str(run_dir / pointer["file"]))


def assert_same_tensors(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name  # exact: the same computation twice on one machine (by design)


def interrupted_then_resumed(run_dir: Path, monkeypatch=None) -> StandIn:
    with pytest.raises(TrainingInterrupted):
        run(run_dir, interrupt_after=8)  # last checkpoint at 6; rows for 8 are logged, then the crash
    # A new process: a different init and a disturbed global RNG, which resuming must overwrite.
    model = fresh_model(init_seed=99)
    torch.rand(1000)
    train(model, make_task(), make_config(), run_dir, progress=False)
    return model


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[StandIn, Path]:
    run_dir = tmp_path_factory.mktemp("straight")
    model, _ = run(run_dir)
    return model, run_dir


def test_resumed_run_is_bit_identical(uninterrupted, tmp_path):
    model_a, dir_a = uninterrupted
    model_b = interrupted_then_resumed(tmp_path)
    assert_same_tensors(model_a.state_dict(), model_b.state_dict())
    # Final checkpoints hold model, AdamW state (exp_avg, exp_avg_sq, step), RNG and loss accumulator.
    tensors_a, tensors_b = final_checkpoint_tensors(dir_a), final_checkpoint_tensors(tmp_path)
    assert any(k.endswith("/exp_avg_sq") for k in tensors_a)
    assert_same_tensors(tensors_a, tensors_b)
    assert_same_tensors(load_file(str(dir_a / "model.safetensors")), load_file(str(tmp_path / "model.safetensors")))
    for step in (5, 10):
        name = f"snapshots/step-{step:06d}.safetensors"
        assert_same_tensors(load_file(str(dir_a / name)), load_file(str(tmp_path / name)))
    # The row logged at step 8 before the crash was cut and written again, once.
    rows = metrics_rows(tmp_path)
    assert [r["step"] for r in rows] == [2, 4, 6, 8, 10, 12]
    assert rows == metrics_rows(dir_a)  # exact: the same run twice on one machine
    assert [r["eval_loss"] is not None for r in rows] == [False, True, False, True, False, True]
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["resumed_from"] == 6 and summary["final"]["step"] == 12


def test_a_resume_removes_the_half_written_files_of_the_killed_attempt(tmp_path):
    with pytest.raises(TrainingInterrupted):
        run(tmp_path, interrupt_after=8)
    # A kill during a write leaves our atomic writes' .tmp and safetensors' (Rust tempfile) .tmpXXXXXX.
    (tmp_path / "model.safetensors.tmp").write_bytes(b"half")
    (tmp_path / ".tmpEDu4KU").write_bytes(b"half")
    train(fresh_model(init_seed=99), make_task(), make_config(), tmp_path, progress=False)
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".tmp*"))


def test_resume_depends_on_restoring_the_dropout_rng(uninterrupted, tmp_path, monkeypatch):
    """Negative control: without the RNG restore the resumed weights differ, so the test above has teeth."""
    model_a, _ = uninterrupted
    monkeypatch.setattr(checkpoint_module, "restore_rng", lambda tensors, device: None)
    model_b = interrupted_then_resumed(tmp_path)
    assert not torch.equal(model_a.mix.weight, model_b.mix.weight)


def test_same_seed_same_run_other_seed_differs(uninterrupted, tmp_path):
    model_a, dir_a = uninterrupted
    model_b, _ = run(tmp_path / "again")
    assert_same_tensors(model_a.state_dict(), model_b.state_dict())
    assert metrics_rows(dir_a) == metrics_rows(tmp_path / "again")  # exact: the same run twice on one machine
    model_c, _ = run(tmp_path / "other", make_config(seed=2))
    assert not torch.equal(model_a.mix.weight, model_c.mix.weight)
    assert metrics_rows(dir_a) != metrics_rows(tmp_path / "other")


def test_finished_run_is_not_trained_again(uninterrupted, tmp_path):
    model_a, dir_a = uninterrupted
    shutil.copytree(dir_a, tmp_path / "copy")
    model, result = run(tmp_path / "copy")
    assert result.step == 12 and result.resumed_from == 12
    assert_same_tensors(model.state_dict(), model_a.state_dict())
    assert metrics_rows(tmp_path / "copy") == metrics_rows(dir_a)  # exact: copied, not recomputed


def test_results_are_published_only_when_the_run_ends(checkpointed):
    """A workflow manager deletes the declared outputs of a failed job; the trainer never needs them."""
    assert (checkpointed / STATE_FILE).exists() and (checkpointed / "train_log.jsonl").exists()
    for name in ("metrics.jsonl", "model.safetensors", "run.json"):
        assert not (checkpointed / name).exists(), name


def test_deleted_results_of_a_finished_run_come_back_without_training(uninterrupted, tmp_path):
    _, dir_a = uninterrupted
    run_dir = tmp_path / "copy"
    shutil.copytree(dir_a, run_dir)
    published = {name: (dir_a / name).read_bytes() for name in ("metrics.jsonl", "model.safetensors")}
    for name in ("metrics.jsonl", "model.safetensors", "run.json"):
        (run_dir / name).unlink()
    _, result = run(run_dir)
    assert result.resumed_from == 12  # loaded, not trained
    for name, data in published.items():
        assert (run_dir / name).read_bytes() == data, name  # exact: published again from the kept checkpoint
    # exact: as above
    assert (
        json.loads((run_dir / "run.json").read_text())["final"] == json.loads((dir_a / "run.json").read_text())["final"]
    )


def test_two_runs_write_identical_weight_files(uninterrupted, tmp_path):
    _, dir_a = uninterrupted
    run(tmp_path)
    # exact: the same run twice on one machine
    assert (tmp_path / "model.safetensors").read_bytes() == (dir_a / "model.safetensors").read_bytes()


def test_run_of_the_older_layout_resumes_from_its_metrics_file(checkpointed, tmp_path, uninterrupted):
    """Before the train log, the trainer appended to metrics.jsonl itself."""
    run_dir, _ = copy_of(checkpointed, tmp_path)
    (run_dir / "train_log.jsonl").rename(run_dir / "metrics.jsonl")
    _, result = run(run_dir)
    assert result.resumed_from == 6
    assert metrics_rows(run_dir) == metrics_rows(uninterrupted[1])  # exact: the same run on one machine


def test_metrics_rows_have_the_documented_keys(uninterrupted):
    _, run_dir = uninterrupted
    rows = metrics_rows(run_dir, drop=())
    assert all(set(r) == {"step", "tokens", "train_loss", "eval_loss", "lr", "seconds"} for r in rows)
    assert rows[-1]["tokens"] == 12 * 8 * LENGTH
    assert all(a["seconds"] <= b["seconds"] for a, b in zip(rows, rows[1:]))


# -- refusals -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpointed(tmp_path_factory) -> Path:
    """A run directory whose run crashed after its checkpoint at step 6."""
    run_dir = tmp_path_factory.mktemp("crashed")
    with pytest.raises(TrainingInterrupted):
        run(run_dir, interrupt_after=6)
    return run_dir


def copy_of(run_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    target = tmp_path / "run"
    shutil.copytree(run_dir, target)
    pointer = json.loads((target / STATE_FILE).read_text())
    return target, target / pointer["file"]


def test_truncated_checkpoint_is_refused(checkpointed, tmp_path):
    run_dir, tensors = copy_of(checkpointed, tmp_path)
    data = tensors.read_bytes()
    tensors.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=rf"{tensors.name}.*SHA-256.*corrupt or truncated"):
        run(run_dir)
    assert tensors.stat().st_size == len(data) // 2  # left as it was: not restarted over


def test_flipped_byte_is_refused(checkpointed, tmp_path):
    run_dir, tensors = copy_of(checkpointed, tmp_path)
    data = bytearray(tensors.read_bytes())
    data[-10] ^= 0xFF
    tensors.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="SHA-256"):
        run(run_dir)


def _rewrite_with_matching_sha(run_dir: Path, tensors: Path, content: bytes | None = None, drop: str = "") -> None:
    if content is None:
        kept = {k: v for k, v in load_file(str(tensors)).items() if not k.startswith(drop)}
        save_file(kept, str(tensors))
    else:
        tensors.write_bytes(content)
    pointer = json.loads((run_dir / STATE_FILE).read_text())
    pointer["sha256"] = sha256_file(tensors)
    (run_dir / STATE_FILE).write_text(json.dumps(pointer))


def test_missing_tensors_are_refused(checkpointed, tmp_path):
    run_dir, tensors = copy_of(checkpointed, tmp_path)
    _rewrite_with_matching_sha(run_dir, tensors, drop="optim/")
    with pytest.raises(CheckpointError, match=rf"{tensors.name}: missing tensors: optim/"):
        run(run_dir)


def test_unreadable_safetensors_is_refused(checkpointed, tmp_path):
    run_dir, tensors = copy_of(checkpointed, tmp_path)
    _rewrite_with_matching_sha(run_dir, tensors, content=b"\x10\x00\x00\x00\x00\x00\x00\x00not a header")
    with pytest.raises(CheckpointError, match="unreadable safetensors"):
        run(run_dir)


def test_missing_tensor_file_is_refused(checkpointed, tmp_path):
    run_dir, tensors = copy_of(checkpointed, tmp_path)
    tensors.unlink()
    with pytest.raises(CheckpointError, match=rf"points at {tensors.name}, which does not exist"):
        run(run_dir)
    assert (run_dir / STATE_FILE).exists()


def test_broken_state_file_and_short_metrics_are_refused(checkpointed, tmp_path):
    run_dir, _ = copy_of(checkpointed, tmp_path)
    log = run_dir / "train_log.jsonl"
    log.write_text(log.read_text()[:5])
    with pytest.raises(CheckpointError, match=r"train_log.jsonl.*truncated or replaced(.|\n)*delete .*checkpoint.json"):
        run(run_dir)
    (run_dir / STATE_FILE).write_text('{"format": 1, "file": ')
    with pytest.raises(CheckpointError, match=rf"{STATE_FILE}: not valid JSON"):
        run(run_dir)


def test_other_config_is_refused_until_restart(checkpointed, tmp_path):
    run_dir, tensors = copy_of(checkpointed, tmp_path)
    other = make_config(lr=1e-2)
    with pytest.raises(ConfigMismatchError, match=r"train\.lr: 0\.03 -> 0\.01"):
        run(run_dir, other)
    assert tensors.exists()
    _, result = run(run_dir, other, restart=True)
    assert result.resumed_from is None and result.step == 12
    assert (run_dir / "previous-1" / tensors.name).exists()
    assert (run_dir / "previous-1" / "train_log.jsonl").exists()


def test_a_checkpoint_of_the_older_run_format_is_refused_by_its_format(checkpointed, tmp_path):
    """Run format 1 left settings at their defaults out of the identity; its checkpoints do not resume."""
    run_dir, tensors = copy_of(checkpointed, tmp_path)
    pointer = json.loads((run_dir / STATE_FILE).read_text())
    old = pointer["run_config"]
    del old["format"], old["train"]["init_from"], old["train"]["precision"]
    pointer["config_hash"] = "0" * 64
    (run_dir / STATE_FILE).write_text(json.dumps(pointer))
    with pytest.raises(ConfigMismatchError, match=r"written in run format 1, this code writes format 2") as err:
        run(run_dir)
    assert "train.precision: (absent) -> 'fp32'" in str(err.value)
    _, result = run(run_dir, move_stale=True)
    assert result.resumed_from is None and (run_dir / "previous-1" / tensors.name).exists()


def test_move_stale_replaces_only_a_run_of_other_settings(checkpointed, tmp_path):
    """What a pipeline step does when Snakemake reruns it after a settings change."""
    run_dir, _ = copy_of(checkpointed, tmp_path)
    # Same settings: resumed, nothing moved.
    _, result = run(run_dir, move_stale=True)
    assert result.resumed_from is not None and not (run_dir / "previous-1").exists()
    # Other settings: the old run is kept in previous-1/, and the new one equals a fresh run bit for bit.
    other = make_config(lr=1e-2)
    model, result = run(run_dir, other, move_stale=True)
    assert result.resumed_from is None and (run_dir / "previous-1" / STATE_FILE).exists()
    fresh_model_, _ = run(tmp_path / "fresh", other)
    assert_same_tensors(model.state_dict(), fresh_model_.state_dict())
    assert metrics_rows(run_dir) == metrics_rows(tmp_path / "fresh")  # exact: the same run twice on one machine


def test_execution_settings_do_not_block_resume(checkpointed, tmp_path):
    run_dir, _ = copy_of(checkpointed, tmp_path)
    _, result = run(run_dir, make_config(checkpoint_every=5, threads=2))
    assert result.resumed_from == 6 and result.step == 12


def test_time_budget_stops_training_and_drives_the_schedule(tmp_path):
    budget = 0.4
    config = make_config(
        steps=10**6,
        time_budget_s=budget,
        warmup_steps=None,
        warmup_fraction=0.1,
        eval_every=0,
        log_every=5,
        checkpoint_every=0,
        keep_checkpoints_at=(),
    )
    _, result = run(tmp_path, config)
    rows = metrics_rows(tmp_path, drop=())
    assert 0 < result.step < 10**6 and result.seconds >= budget
    assert rows[-1]["eval_loss"] is not None and rows[-1]["step"] == result.step
    # Driven by the clock, warmup ends after 10% of the budget and the LR has peaked;
    # driven by the 10**6 steps it would still be below 1% of the peak.
    assert max(r["lr"] for r in rows) > 0.5 * config.lr
    # The last update came after at least rows[-2]["seconds"] of training, far into the decay.
    schedule = config.build_schedule()
    assert rows[-1]["lr"] <= config.lr * schedule((rows[-2]["seconds"] - 0.001) / budget) + 1e-12


def test_early_stop_ends_at_the_first_evaluation_at_the_target_and_resumes_exactly(uninterrupted, tmp_path):
    _, straight = uninterrupted
    evals = {r["step"]: r["eval_loss"] for r in metrics_rows(straight) if r["eval_loss"] is not None}
    assert evals[4] > evals[8]  # so that a target between them stops the run at update 8
    config = make_config(stop_at_eval_loss=(evals[4] + evals[8]) / 2)
    _, result = run(tmp_path / "a", config)
    # exact (here and below): the same run on one machine, up to the stop
    assert result.step == 8 and result.eval_loss == evals[8]
    # Up to the stop the run is the full run (the schedule's length is still `steps`).
    assert metrics_rows(tmp_path / "a") == [r for r in metrics_rows(straight) if r["step"] <= 8]
    assert json.loads((tmp_path / "a" / "run.json").read_text())["final"]["step"] == 8
    with pytest.raises(TrainingInterrupted):
        run(tmp_path / "b", config, interrupt_after=7)  # last checkpoint at 6
    model_b = fresh_model(init_seed=99)
    again = train(model_b, make_task(), config, tmp_path / "b", progress=False)
    assert again.resumed_from == 6 and again.step == 8
    assert_same_tensors(final_checkpoint_tensors(tmp_path / "a"), final_checkpoint_tensors(tmp_path / "b"))
    assert train(fresh_model(), make_task(), config, tmp_path / "b", progress=False).step == 8  # finished
    # A target never reached runs every step, and an unset target leaves the run's identity as before.
    _, unreached = run(tmp_path / "c", make_config(stop_at_eval_loss=1e-9))
    assert unreached.step == 12 and metrics_rows(tmp_path / "c") == metrics_rows(straight)
    assert "stop_at_eval_loss" not in make_config().result_fields()
    assert make_config(stop_at_eval_loss=0.5).result_fields()["stop_at_eval_loss"] == 0.5  # exact: copied


def test_a_cooldown_after_the_early_stop_falls_linearly_to_zero_and_resumes_exactly(uninterrupted, tmp_path):
    _, straight = uninterrupted
    evals = {r["step"]: r["eval_loss"] for r in metrics_rows(straight) if r["eval_loss"] is not None}
    config = make_config(stop_at_eval_loss=(evals[4] + evals[8]) / 2, cooldown_fraction=0.5)
    _, result = run(tmp_path / "a", config)
    assert result.step == 12  # reached at update 8, then ceil(0.5 * 8) = 4 more
    rows = {r["step"]: r for r in metrics_rows(tmp_path / "a")}
    # exact: the same run up to the stop; then update 8 + j runs at lr(8) * (4 - j) / 4 for j = 1..4
    assert [rows[s] for s in (2, 4, 6, 8)] == [r for r in metrics_rows(straight) if r["step"] <= 8]
    peak = rows[8]["lr"]
    assert rows[10]["lr"] == pytest.approx(peak * 3 / 4, rel=1e-12)
    assert rows[12]["lr"] == pytest.approx(peak * 1 / 4, rel=1e-12)
    assert rows[12]["eval_loss"] is not None  # the model the claims read is evaluated at the end
    for name, stop_after in (("b", 10), ("c", 7)):  # interrupted inside the cool-down, and before the stop
        with pytest.raises(TrainingInterrupted):
            run(tmp_path / name, config, interrupt_after=stop_after)
        again = train(fresh_model(init_seed=99), make_task(), config, tmp_path / name, progress=False)
        assert again.step == 12
        assert_same_tensors(final_checkpoint_tensors(tmp_path / "a"), final_checkpoint_tensors(tmp_path / name))
    assert "cooldown_fraction" not in make_config(stop_at_eval_loss=0.5).result_fields()  # unset: identity kept


def test_a_cooldown_needs_an_early_stop():
    from repro.training import TrainConfigError

    with pytest.raises(TrainConfigError, match="cooldown_fraction .* give stop_at_eval_loss"):
        make_config(cooldown_fraction=0.5)


def test_early_stop_needs_evaluations():
    from repro.training import TrainConfigError

    with pytest.raises(TrainConfigError, match="stop_at_eval_loss .* give eval_every > 0"):
        make_config(stop_at_eval_loss=0.5, eval_every=0)


def test_a_run_being_trained_by_another_process_is_refused(tmp_path):
    import fcntl
    import os

    from repro.training.trainer import RunBusyError

    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # what a live trainer holds
    try:
        with pytest.raises(RunBusyError, match="another process is training this run"):
            run(tmp_path)
    finally:
        os.close(fd)
    _, result = run(tmp_path)  # free again once that process is gone
    assert result.step == 12


def test_clean_drops_superseded_runs_and_finished_optimizer_state(uninterrupted, checkpointed, tmp_path):
    from repro.cli import main

    _, dir_a = uninterrupted
    finished, unfinished = tmp_path / "runs/a/seed0", tmp_path / "runs/b/seed0"
    shutil.copytree(dir_a, finished)
    shutil.copytree(checkpointed, unfinished)
    (finished / "previous-1").mkdir()
    (finished / "previous-1" / "train_log.jsonl").write_text("{}\n")
    unfinished_bytes = {p.name: p.read_bytes() for p in unfinished.iterdir() if p.is_file()}
    before = final_checkpoint_tensors(finished)

    assert main(["clean", str(tmp_path), "--previous", "--optimizer-state"]) == 0
    assert not (finished / "previous-1").exists()
    after = final_checkpoint_tensors(finished)
    assert not any(k.startswith("optim/") for k in after) and any(k.startswith("optim/") for k in before)
    assert {p.name: p.read_bytes() for p in unfinished.iterdir() if p.is_file()} == unfinished_bytes
    # The finished run still publishes its results again, the same bytes, without training.
    published = (finished / "model.safetensors").read_bytes()
    (finished / "model.safetensors").unlink()
    _, result = run(finished)
    # exact: published again from the kept checkpoint, no computation
    assert result.resumed_from == 12 and (finished / "model.safetensors").read_bytes() == published


def test_a_full_disk_names_the_file_being_written(tmp_path, monkeypatch):
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoint_module, "save_file", full)
    with pytest.raises(OSError, match=r"no space left on the device while writing .*checkpoint-000003.safetensors"):
        run(tmp_path)


def test_a_damaged_weight_file_says_how_to_rebuild_it(uninterrupted, tmp_path):
    from repro.training.checkpoint import load_weights

    _, dir_a = uninterrupted
    damaged = tmp_path / "model.safetensors"
    damaged.write_bytes((dir_a / "model.safetensors").read_bytes()[:100])
    with pytest.raises(
        CheckpointError,
        match=r"model.safetensors: unreadable safetensors.*run: .*snakemake .*--forcerun .*model.safetensors$",
    ):
        load_weights(fresh_model(), damaged)
