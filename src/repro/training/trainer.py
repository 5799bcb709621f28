"""The one trainer: AdamW + schedule + clipping over any `Task`, resumable bit for bit.

    model = build_model(...)            # the caller seeds init: torch.manual_seed(seed) first
    task = LanguageModelTask(train_tokens, eval_tokens)
    result = train(model, task, TrainConfig(steps=1000, batch_size=32, lr=1e-3, ...), run_dir)

Run directory (see repro.training.checkpoint for the checkpoint files). The trainer's own files,
which it appends to and resumes from:
  train_log.jsonl     one row per logged update: step, tokens, train_loss (mean since the
                      previous row), eval_loss (null when not evaluated), lr, seconds
  checkpoint.json + checkpoint-<step>.safetensors   the latest resumable state
  snapshots/step-<step>.safetensors                 weights kept at `keep_checkpoints_at`
and the results, published (each written whole, then moved into place) only when the run ends:
  metrics.jsonl       a copy of train_log.jsonl
  model.safetensors   final weights;  run.json  config, final metrics, timing

A workflow manager may delete the published files at any time (Snakemake does so for a failed
or forced job): they are never read back. Calling `train` again on the same directory resumes
from the checkpoint and ends with the same weights, optimizer state and metrics (except
`seconds`) as an uninterrupted run: data order and masking are functions of (seed, step), and
the dropout RNG is restored. A finished run publishes its results again without training.
A checkpoint of a different configuration is refused (ConfigMismatchError) unless
`restart=True` (always) or `move_stale=True` (only when the settings differ) moves the old
files into previous-<k>/; a checkpoint that does not verify raises CheckpointError.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn
from tqdm import tqdm

from repro.training.checkpoint import (
    SNAPSHOT_DIR,
    STATE_FILE,
    CheckpointError,
    TrainingState,
    atomic_write_bytes,
    atomic_write_text,
    check_config,
    load_checkpoint,
    read_pointer,
    save_checkpoint,
    save_weights,
    snapshot_path,
)
from repro.training.config import TrainConfig, resolve_device
from repro.training.heldout import HELDOUT_FILE
from repro.training.optim import build_optimizer
from repro.training.seeding import derive_seed
from repro.training.tasks import Task

METRICS_FILE = "metrics.jsonl"
TRAIN_LOG_FILE = "train_log.jsonl"  # what the trainer appends to; METRICS_FILE is published from it
WEIGHTS_FILE = "model.safetensors"
RUN_FILE = "run.json"
PROGRESS_MININTERVAL_S = 5.0  # keeps Snakemake rule logs small


class RunBusyError(RuntimeError):
    """Another live process is training in the same run directory."""


class TrainingInterrupted(RuntimeError):
    """Raised by the `interrupt_after` test hook to simulate a crash after a given update."""


@dataclasses.dataclass
class TrainResult:
    run_dir: Path
    step: int
    tokens: int
    seconds: float
    train_loss: float | None
    eval_loss: float | None
    resumed_from: int | None  # the checkpoint step this call started from, None for a fresh run


# -- run identity ---------------------------------------------------------------------------


def model_fingerprint(model: nn.Module) -> dict[str, Any]:
    """Class and the name, shape and dtype of every state tensor (not the values)."""
    return {
        "class": f"{type(model).__module__}.{type(model).__qualname__}",
        "state": {k: [list(v.shape), str(v.dtype).removeprefix("torch.")] for k, v in model.state_dict().items()},
    }


# The layout of `run_identity`. Format 1 (no "format" key) left settings out at their defaults; a
# checkpoint of another format does not resume (checkpoint.check_config says why).
RUN_FORMAT_VERSION = 2


def run_identity(model: nn.Module, task: Task, config: TrainConfig) -> dict[str, Any]:
    """Everything that determines what a run computes; its hash guards resuming."""
    return {
        "format": RUN_FORMAT_VERSION,
        "train": config.result_fields(),
        "task": task.fingerprint(),
        "model": model_fingerprint(model),
    }


def identity_hash(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# -- evaluation -----------------------------------------------------------------------------


def _to_device(batch: dict[str, Tensor], device: torch.device) -> dict[str, Tensor]:
    if device.type == "cpu":
        return batch
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


@torch.no_grad()
def evaluate(model: nn.Module, task: Task, device: torch.device | str = "cpu") -> float:
    """Mean loss over every target of the task's held-out set, in eval mode (no dropout).

    The model's train/eval mode is restored afterwards.
    """
    device = resolve_device(device)
    was_training = model.training
    model.eval()
    try:
        total = torch.zeros((), dtype=torch.float64, device=device)
        count: Tensor | int = 0
        for batch in task.eval_batches():
            out = task.loss(model, _to_device(batch, device))
            total += out.loss.double() * out.n_targets
            count = count + out.n_targets
    finally:
        model.train(was_training)
    if isinstance(count, int) and count == 0:
        raise ValueError(f"{type(task).__name__}.eval_batches() yielded no evaluation targets")
    return float(total / count)


def gain_values(model: nn.Module) -> dict[str, list[float]]:
    """{name: flattened values} of every trainable parameter whose name contains "gain"
    (the scalar and per-head gains of the model family, which the optimiser never decays)."""
    return {
        name: [float(v) for v in param.detach().flatten().tolist()]
        for name, param in model.named_parameters()
        if param.requires_grad and "gain" in name
    }


# -- metrics file ---------------------------------------------------------------------------


class MetricsLog:
    """Appends JSON rows to the train log and knows its length, so a resume can cut it back."""

    def __init__(self, path: Path, resume_at: int | None):
        """Start a new file (`resume_at=None`) or keep the first `resume_at` bytes of an existing one."""
        self.path = path
        if resume_at is None:
            self._file = open(path, "wb")
            self.bytes = 0
            return
        size = path.stat().st_size if path.exists() else None
        if size is None or size < resume_at:
            raise CheckpointError(
                f"{path}: the checkpoint recorded {resume_at} bytes of metrics but the file "
                f"{'is missing' if size is None else f'has only {size}'}; it was truncated or replaced"
            )
        self._file = open(path, "r+b")
        self._file.truncate(resume_at)  # drop rows logged after the checkpoint
        self._file.seek(resume_at)
        self.bytes = resume_at

    def write(self, row: dict[str, Any]) -> None:
        line = (json.dumps(row) + "\n").encode()
        self._file.write(line)
        self._file.flush()
        self.bytes += len(line)

    def close(self) -> None:
        self._file.close()


# -- run directory housekeeping -------------------------------------------------------------

# heldout.json is written after training (repro.training.heldout) but belongs to the run's weights: it
# goes aside, or is cleared, with them.
_RUN_OUTPUTS = (STATE_FILE, TRAIN_LOG_FILE, METRICS_FILE, WEIGHTS_FILE, RUN_FILE, HELDOUT_FILE, SNAPSHOT_DIR)


def _run_files(run_dir: Path) -> list[Path]:
    named = [run_dir / name for name in _RUN_OUTPUTS if (run_dir / name).exists()]
    return named + sorted(run_dir.glob("checkpoint-*.safetensors"))


def _move_aside(run_dir: Path) -> Path | None:
    """Move a previous run's files into run_dir/previous-<k>/ (k = first unused); returns that folder."""
    files = _run_files(run_dir)
    if not files:
        return None
    k = 1
    while (run_dir / f"previous-{k}").exists():
        k += 1
    target = run_dir / f"previous-{k}"
    target.mkdir()
    for path in files:
        shutil.move(str(path), str(target / path.name))
    return target


def _clear_uncheckpointed(run_dir: Path) -> None:
    """Remove what an attempt that never wrote checkpoint.json left behind (stale tensors, partial outputs)."""
    for path in _run_files(run_dir):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    _remove_half_written(run_dir)


def _remove_half_written(run_dir: Path) -> None:
    """Remove the temporary files of writes a killed attempt left unfinished: ours end in .tmp, and
    writers built on Rust's tempfile crate (safetensors) name theirs .tmpXXXXXX."""
    for tmp in [*run_dir.glob("*.tmp"), *run_dir.glob(".tmp*")]:
        if tmp.is_file():
            tmp.unlink()


def _adopt_published_metrics(run_dir: Path, needed: int) -> None:
    """A run directory of the layout before the train log existed kept its rows in metrics.jsonl only."""
    log, published = run_dir / TRAIN_LOG_FILE, run_dir / METRICS_FILE
    if not log.exists() and published.exists() and published.stat().st_size >= needed:
        atomic_write_bytes(log, published.read_bytes())


@contextlib.contextmanager
def _sole_trainer(run_dir: Path):
    """Hold an OS lock on the run directory while training, so that two processes never write the same
    run (a job left running by a killed workflow manager, and its rerun). The kernel releases it when
    the process ends, however it ends."""
    fd = os.open(run_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunBusyError(
                f"{run_dir}: another process is training this run right now (perhaps a job left running by "
                "an interrupted workflow); wait for it to end or stop it, then rerun the same command"
            ) from None
        yield
    finally:
        os.close(fd)


# -- the loop -------------------------------------------------------------------------------


def _write_outputs(
    run_dir: Path,
    model: nn.Module,
    config: TrainConfig,
    identity: dict[str, Any],
    digest: str,
    state: TrainingState,
    resumed_from: int | None,
) -> None:
    """Publish metrics.jsonl (the train log), model.safetensors (final weights) and run.json
    (config, final metrics, timing), each written whole before it takes its name."""
    log = (run_dir / TRAIN_LOG_FILE).read_bytes()[: state.metrics_bytes]
    atomic_write_bytes(run_dir / METRICS_FILE, log)
    save_weights(model, run_dir / WEIGHTS_FILE, metadata={"step": str(state.step), "config_hash": digest})
    seconds = state.seconds
    summary = {
        "config": config.to_dict(),
        "config_hash": digest,
        "task": identity["task"],
        "model_class": identity["model"]["class"],
        "n_parameters": sum(p.numel() for p in model.parameters()),
        "final": {
            "step": state.step,
            "tokens": state.tokens,
            "train_loss": state.last_train_loss,
            "eval_loss": state.last_eval_loss,
        },
        "timing": {
            "train_seconds": seconds,
            "tokens_per_second": state.tokens / seconds if seconds > 0 else None,
            "steps_per_second": state.step / seconds if seconds > 0 else None,
            "threads": config.threads,
            "device": config.device,
        },
        "resumed_from": resumed_from,
        "torch_version": torch.__version__,
    }
    atomic_write_text(run_dir / RUN_FILE, json.dumps(summary, indent=1, sort_keys=True) + "\n")


class _Run:
    """One call of `train`: the optimizer, the counters and the files of a run directory."""

    def __init__(self, model: nn.Module, task: Task, config: TrainConfig, run_dir: Path):
        self.model, self.task, self.config, self.run_dir = model, task, config, run_dir
        self.device = resolve_device(config.device)
        model.to(self.device)
        model.train()
        self.optimizer = build_optimizer(
            model,
            lr=config.lr,
            weight_decay=config.weight_decay,
            betas=config.betas,
            eps=config.eps,
            lr_multipliers=config.lr_multipliers,
        )
        self.params = [p for group in self.optimizer.param_groups for p in group["params"]]
        self.schedule = config.build_schedule()
        self.identity = run_identity(model, task, config)
        self.digest = identity_hash(self.identity)

    def open(self, restart: bool, move_stale: bool = False) -> None:
        """Resume from the run directory's checkpoint, or start fresh where there is none."""
        if restart:
            _move_aside(self.run_dir)
        pointer = read_pointer(self.run_dir)
        if pointer is not None and move_stale and pointer["config_hash"] != self.digest:
            moved = _move_aside(self.run_dir)
            print(
                f"{self.run_dir}: the checkpoint there is of other settings; moved it to {moved.name}/ "
                "and starting afresh",
                file=sys.stderr,
            )
            pointer = None
        if pointer is None:
            _clear_uncheckpointed(self.run_dir)
            torch.manual_seed(derive_seed(self.config.seed, "dropout"))  # the dropout stream, distinct from init
            self.state, self.loss_sum = TrainingState(), torch.zeros((), device=self.device)
            self.resumed_from = None
            self.metrics = MetricsLog(self.run_dir / TRAIN_LOG_FILE, resume_at=None)
        else:
            _remove_half_written(self.run_dir)
            check_config(self.run_dir, pointer, self.digest, self.identity)
            try:
                self.state, self.loss_sum = load_checkpoint(
                    self.run_dir, pointer, model=self.model, optimizer=self.optimizer, device=self.device
                )
                _adopt_published_metrics(self.run_dir, self.state.metrics_bytes)
                self.metrics = MetricsLog(self.run_dir / TRAIN_LOG_FILE, resume_at=self.state.metrics_bytes)
            except CheckpointError as err:
                raise CheckpointError(
                    f"{err}\nThe checkpoint in {self.run_dir} cannot be resumed. To train this run again from "
                    f"the start, delete {self.run_dir / STATE_FILE} and rerun the same command."
                ) from None
            self.resumed_from = self.state.step

    def update(self) -> float:
        """One optimizer update; returns the peak-group LR it used. No host sync."""
        state, config = self.state, self.config
        started = time.perf_counter()
        # Progress is the fraction of the steps (or of the time budget) already used.
        if state.cooldown_from is not None:
            done = state.step - state.cooldown_from
            lr = state.cooldown_lr * (self.cooldown_steps() - done) / self.cooldown_steps()
        else:
            budget = config.time_budget_s
            fraction = state.seconds / budget if budget is not None else state.step / config.steps
            lr = config.lr * self.schedule(fraction)
        for group in self.optimizer.param_groups:
            group["lr"] = lr * group["lr_multiplier"]
        batch = _to_device(self.task.train_batch(state.step, config.batch_size, config.seed), self.device)
        dtype = config.autocast_dtype
        with torch.autocast(self.device.type, dtype=dtype, enabled=dtype is not None):
            out = self.task.loss(self.model, batch)
        out.loss.backward()
        if config.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(self.params, config.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.loss_sum += out.loss.detach()  # stays on the device until a metrics row needs it
        state.step += 1
        state.loss_steps += 1
        state.tokens += out.n_tokens
        state.seconds += time.perf_counter() - started
        return lr

    def is_last(self) -> bool:
        if self.state.cooldown_from is not None:
            return self.state.step >= self.state.cooldown_from + self.cooldown_steps()
        budget = self.config.time_budget_s
        return self.state.step >= self.config.steps or (budget is not None and self.state.seconds >= budget)

    def cooldown_steps(self) -> int:
        return max(1, math.ceil(self.config.cooldown_fraction * self.state.cooldown_from))

    def reached_target(self, lr: float) -> bool:
        """Whether the last evaluation reached `stop_at_eval_loss` and the run ends here (early stopping).
        With `cooldown_fraction` the run instead begins its cool-down from `lr`, the rate of the update
        just made, and ends when that is over (`is_last`)."""
        target, state = self.config.stop_at_eval_loss, self.state
        reached = target is not None and state.last_eval_loss is not None and state.last_eval_loss <= target
        if not reached or state.cooldown_from is not None:
            return False
        if self.config.cooldown_fraction is None:
            return True
        state.cooldown_from, state.cooldown_lr = state.step, lr
        return False

    def log(self, lr: float, evaluate_now: bool) -> None:
        """Write a metrics row: mean train loss since the previous row, and the eval loss if due."""
        state = self.state
        synced = time.perf_counter()
        state.last_train_loss = (self.loss_sum / state.loss_steps).item()
        state.seconds += time.perf_counter() - synced  # waiting for the device is training time
        self.loss_sum.zero_()
        state.loss_steps = 0
        eval_loss = evaluate(self.model, self.task, self.device) if evaluate_now else None
        if eval_loss is not None:
            state.last_eval_loss = eval_loss
        row = {
            "step": state.step,
            "tokens": state.tokens,
            "train_loss": state.last_train_loss,
            "eval_loss": eval_loss,
            "lr": lr,
            "seconds": round(state.seconds, 3),
        }
        if self.config.log_gains:
            row["gains"] = gain_values(self.model)
        self.metrics.write(row)
        state.metrics_rows += 1

    def save_snapshot(self) -> None:
        path = snapshot_path(self.run_dir, self.state.step)
        path.parent.mkdir(exist_ok=True)
        save_weights(self.model, path, metadata={"step": str(self.state.step), "tokens": str(self.state.tokens)})

    def save_checkpoint(self, finished: bool) -> None:
        self.state.finished = finished
        self.state.metrics_bytes = self.metrics.bytes
        save_checkpoint(
            self.run_dir,
            model=self.model,
            optimizer=self.optimizer,
            state=self.state,
            loss_sum=self.loss_sum,
            device=self.device,
            config_hash=self.digest,
            run_config=self.identity,
        )

    def result(self) -> TrainResult:
        state = self.state
        return TrainResult(
            run_dir=self.run_dir,
            step=state.step,
            tokens=state.tokens,
            seconds=state.seconds,
            train_loss=state.last_train_loss,
            eval_loss=state.last_eval_loss,
            resumed_from=self.resumed_from,
        )


@contextlib.contextmanager
def update_stepper(model: nn.Module, task: Task, config: TrainConfig):
    """A zero-argument callable that makes one optimizer update exactly as `train` makes it (batch,
    schedule, autocast, loss, backward, clipping, AdamW), for timing: its run directory is a scratch
    directory, removed on exit, and nothing is checkpointed or logged. On a GPU each call waits for
    its work to finish, so that a clock around it measures the update."""
    import tempfile

    torch.set_num_threads(config.threads)
    with tempfile.TemporaryDirectory(prefix="repro-steps-") as scratch:
        run = _Run(model, task, config, Path(scratch))
        run.open(restart=False)
        synchronize = torch.cuda.synchronize if run.device.type == "cuda" else (lambda: None)

        def step() -> None:
            run.update()
            synchronize()

        try:
            yield step
        finally:
            run.metrics.close()


def train(
    model: nn.Module,
    task: Task,
    config: TrainConfig,
    run_dir: str | Path,
    *,
    restart: bool = False,
    move_stale: bool = False,
    progress: bool = True,
    interrupt_after: int | None = None,
) -> TrainResult:
    """Train `model` on `task` as `config` says, in `run_dir`, resuming from its checkpoint if any.

    The caller seeds and builds the model; on a fresh start the trainer reseeds torch's
    global RNG for dropout (from `config.seed`), on a resume it restores the saved state.
    `restart=True` moves an existing run's files aside first instead of resuming.
    `move_stale=True` does so only when the checkpoint there is of other settings (instead of
    raising ConfigMismatchError): what a pipeline step wants when its settings changed.
    `progress=False` hides the progress bar. `interrupt_after=k` raises TrainingInterrupted
    right after update k has been logged and checkpointed as usual (a simulated crash).
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with _sole_trainer(run_dir):
        return _train(model, task, config, run_dir, restart, move_stale, progress, interrupt_after)


def _train(model, task, config, run_dir, restart, move_stale, progress, interrupt_after) -> TrainResult:
    torch.set_num_threads(config.threads)
    run = _Run(model, task, config, run_dir)
    run.open(restart, move_stale)
    keep = set(config.keep_checkpoints_at)
    bar = tqdm(
        total=config.steps,
        initial=run.state.step,
        desc=run_dir.name,
        unit="step",
        file=sys.stderr,
        mininterval=PROGRESS_MININTERVAL_S,
        disable=not progress,
    )
    try:
        while not run.state.finished:
            lr = run.update()
            bar.update(1)
            done, last = run.state.step, run.is_last()
            evaluate_now = last or (config.eval_every > 0 and done % config.eval_every == 0)
            if evaluate_now or done % config.log_every == 0:
                run.log(lr, evaluate_now)
                rate = run.state.tokens / run.state.seconds if run.state.seconds > 0 else 0.0
                bar.set_postfix(loss=f"{run.state.last_train_loss:.4f}", tok_s=f"{rate:.0f}", refresh=False)
                last = last or (evaluate_now and run.reached_target(lr))
            if done in keep:
                run.save_snapshot()
            if last or (config.checkpoint_every > 0 and done % config.checkpoint_every == 0):
                run.save_checkpoint(finished=last)
            if interrupt_after is not None and done == interrupt_after and not last:
                raise TrainingInterrupted(f"simulated interruption after update {done}")
    finally:
        bar.close()
        run.metrics.close()

    _write_outputs(run_dir, model, config, run.identity, run.digest, run.state, run.resumed_from)
    return run.result()
