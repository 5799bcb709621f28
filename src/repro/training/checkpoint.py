"""Resumable checkpoints in safetensors (no pickle), written atomically and verified on load.

Layout in a run directory:
  checkpoint.json                 the pointer: which tensor file is current, its SHA-256,
                                  the training counters, the metrics-file offset, the hashed
                                  run config (so a mismatch can be explained field by field)
  checkpoint-<step:06d>.safetensors
      model/<state_dict key>      model parameters and buffers
      optim/<param name>/<key>    AdamW state per parameter (exp_avg, exp_avg_sq, step)
      rng/cpu, rng/cuda           torch RNG states as uint8 tensors (dropout stream)
      train/loss_sum              running train-loss sum since the last metrics row
  snapshots/step-<step:06d>.safetensors   weights only (`keep_checkpoints_at`)

A tensor file is complete before checkpoint.json points at it, and each file is written
to a temporary name and moved into place with `os.replace`, so a crash at any moment
leaves either the previous checkpoint or the new one. Anything that does not verify
(unreadable JSON, SHA-256 mismatch, unreadable safetensors, missing or misshapen tensors)
raises CheckpointError naming the file and the problem.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from repro.data.errors import rebuild_hint, writing
from repro.training.optim import named_parameters_in_order

STATE_FILE = "checkpoint.json"
SNAPSHOT_DIR = "snapshots"
FORMAT_VERSION = 1


class CheckpointError(RuntimeError):
    """A checkpoint exists but cannot be trusted or read; the message names the file and the problem."""


class ConfigMismatchError(RuntimeError):
    """The run directory holds a checkpoint of a different run configuration."""


@dataclasses.dataclass
class TrainingState:
    """Counters of a run that a checkpoint must restore besides the tensors."""

    step: int = 0  # updates done
    tokens: int = 0  # tokens processed so far
    seconds: float = 0.0  # training wall time so far (evaluation and checkpointing excluded)
    loss_steps: int = 0  # updates summed in the running train-loss accumulator
    metrics_bytes: int = 0  # length of the train log when the checkpoint was written
    metrics_rows: int = 0
    finished: bool = False
    last_train_loss: float | None = None
    last_eval_loss: float | None = None
    cooldown_from: int | None = None  # the update at which an early-stopped run began its cool-down
    cooldown_lr: float | None = None  # the learning rate of that update, from which the cool-down falls


# -- files ----------------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync_replace(tmp: Path, path: Path) -> None:
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with writing(path):
        tmp.write_bytes(data)
        _fsync_replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def _without_shared_storage(tensors: dict[str, Tensor]) -> dict[str, Tensor]:
    """safetensors refuses tensors that share memory (tied weights): copy all but the first."""
    seen: set[int] = set()
    out = {}
    for name, tensor in tensors.items():
        tensor = tensor.detach()
        ptr = tensor.untyped_storage().data_ptr()
        if ptr in seen and tensor.numel():
            tensor = tensor.clone()
        seen.add(ptr)
        out[name] = tensor.contiguous().cpu()
    return out


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _sort_metadata(path: Path) -> None:
    """Rewrite a safetensors header with its metadata keys sorted, in place.

    safetensors writes the metadata in hash-map order, which changes from process to process, so
    equal tensors would give different bytes (and lineage hashes). The tensor entries already come
    in a fixed order. The sorted header has the same length, so the data does not move.
    """
    with open(path, "r+b") as f:
        size = int.from_bytes(f.read(8), "little")
        raw = f.read(size)
        header = json.loads(raw)
        metadata = header.get("__metadata__")
        if not metadata or len(metadata) < 2:
            return
        header["__metadata__"] = dict(sorted(metadata.items()))
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
        if len(text) > size:  # cannot happen for a reordering of the same header; keep the file as written
            return
        f.seek(8)
        f.write(text + b" " * (size - len(text)))  # spaces are the format's header padding


def save_tensors(path: Path, tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> None:
    """Write a safetensors file atomically (temporary file, fsync, os.replace); the same tensors and
    metadata always give the same bytes."""
    tmp = path.with_name(path.name + ".tmp")
    with writing(path):
        save_file(_without_shared_storage(tensors), str(tmp), metadata=metadata)
        _sort_metadata(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # safetensors creates files readable by the owner only
        _fsync_replace(tmp, path)


def read_tensors(path: Path) -> dict[str, Tensor]:
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"{path}: unreadable safetensors file ({err})") from None


def save_weights(model: nn.Module, path: Path, metadata: dict[str, str] | None = None) -> None:
    """The model's state_dict (parameters and persistent buffers) as a safetensors file."""
    save_tensors(path, model.state_dict(), metadata)


def load_weights(model: nn.Module, path: str | Path) -> None:
    """Load a file written by `save_weights` into `model` (strict: every key must match)."""
    path = Path(path)
    try:
        _load_model_state(model, read_tensors(path), path, prefix="")
    except CheckpointError as err:
        raise CheckpointError(f"{err}; {rebuild_hint(path)}") from None


def load_initial_weights(model: nn.Module, path: str | Path, keep_init: tuple[str, ...] = ()) -> list[str]:
    """Start `model` from the weights in `path` (a `save_weights` file, e.g. a converted pretrained
    checkpoint), except the tensors whose names start with a prefix in `keep_init`, which keep the
    model's own (seeded) initialisation: a new task head on a pretrained body.

    Every other tensor must be in the file with the model's shape and dtype; tensors of the file that
    the model lacks are an error unless they fall under `keep_init` (a head of another size).
    Returns the names of the tensors left at their initialisation.
    """
    path = Path(path)
    return _load_model_state(model, read_tensors(path), path, prefix="", keep_init=keep_init)


# -- what goes into a checkpoint ------------------------------------------------------------


def capture_rng(device: torch.device) -> dict[str, Tensor]:
    states = {"rng/cpu": torch.get_rng_state()}
    if device.type == "cuda":
        states["rng/cuda"] = torch.cuda.get_rng_state(device)
    return states


def restore_rng(tensors: dict[str, Tensor], device: torch.device) -> None:
    torch.set_rng_state(tensors["rng/cpu"])
    if device.type == "cuda":
        torch.cuda.set_rng_state(tensors["rng/cuda"], device)


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, Tensor], dict[str, list[str]]]:
    """AdamW state flattened to named tensors, and {param name: its state keys} to check on load."""
    tensors: dict[str, Tensor] = {}
    keys: dict[str, list[str]] = {}
    for name, param in named_parameters_in_order(optimizer):
        state = optimizer.state.get(param, {})
        for key, value in state.items():
            if not torch.is_tensor(value):
                value = torch.tensor(value)  # plain-number state of other optimizers
            tensors[f"optim/{name}/{key}"] = value
        if state:
            keys[name] = sorted(state)
    return tensors, keys


def _require(tensors: dict[str, Tensor], names: list[str], path: Path) -> None:
    missing = [n for n in names if n not in tensors]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise CheckpointError(f"{path}: missing tensors: {shown}")


def _load_model_state(
    model: nn.Module, tensors: dict[str, Tensor], path: Path, prefix: str, keep_init: tuple[str, ...] = ()
) -> list[str]:
    """Strictly load `tensors[prefix + name]` into `model`, checking presence, shape and dtype first.

    Names starting with a prefix in `keep_init` keep the model's own values and may be absent from, or
    of another shape in, the file. Returns those kept names.
    """
    expected = model.state_dict()
    kept = [k for k in expected if k.startswith(keep_init)] if keep_init else []
    _require(tensors, [prefix + k for k in expected if k not in kept], path)
    unexpected = sorted(
        k[len(prefix) :]
        for k in tensors
        if k.startswith(prefix)
        and k[len(prefix) :] not in expected
        and not (keep_init and k[len(prefix) :].startswith(keep_init))
    )
    if unexpected:
        raise CheckpointError(f"{path}: tensors the model does not have: {', '.join(unexpected[:5])}")
    state = {}
    for key, current in expected.items():
        saved = current if key in kept else tensors[prefix + key]
        if saved.shape != current.shape or saved.dtype != current.dtype:
            raise CheckpointError(
                f"{path}: {prefix}{key} has shape {tuple(saved.shape)} {saved.dtype}, "
                f"the model expects {tuple(current.shape)} {current.dtype}"
            )
        state[key] = saved
    model.load_state_dict(state, strict=True)
    return kept


def _load_optimizer_state(
    optimizer: torch.optim.Optimizer, tensors: dict[str, Tensor], keys: dict[str, list[str]], path: Path
) -> None:
    named = named_parameters_in_order(optimizer)
    unknown = sorted(set(keys) - {n for n, _ in named})
    if unknown:
        raise CheckpointError(f"{path}: optimizer state for parameters the model does not train: {unknown[:5]}")
    _require(tensors, [f"optim/{name}/{key}" for name, ks in keys.items() for key in ks], path)
    state_dict = optimizer.state_dict()
    state: dict[int, dict[str, Tensor]] = {}
    for index, (name, param) in enumerate(named):
        if name not in keys:
            continue
        entry = {key: tensors[f"optim/{name}/{key}"] for key in keys[name]}
        for key, value in entry.items():
            if key != "step" and value.shape != param.shape:
                raise CheckpointError(
                    f"{path}: optim/{name}/{key} has shape {tuple(value.shape)}, the parameter {tuple(param.shape)}"
                )
        state[index] = entry
    state_dict["state"] = state
    optimizer.load_state_dict(state_dict)


# -- the checkpoint as a whole --------------------------------------------------------------


def tensor_file_name(step: int) -> str:
    return f"checkpoint-{step:06d}.safetensors"


def snapshot_path(run_dir: Path, step: int) -> Path:
    return run_dir / SNAPSHOT_DIR / f"step-{step:06d}.safetensors"


def save_checkpoint(
    run_dir: Path,
    *,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    state: TrainingState,
    loss_sum: Tensor,
    device: torch.device,
    config_hash: str,
    run_config: dict[str, Any],
) -> None:
    """Write checkpoint-<step>.safetensors, then point checkpoint.json at it, then delete older tensor files."""
    optim_tensors, optim_keys = optimizer_tensors(optimizer)
    tensors = {f"model/{k}": v for k, v in model.state_dict().items()}
    tensors.update(optim_tensors)
    tensors.update(capture_rng(device))
    tensors["train/loss_sum"] = loss_sum.detach().reshape(())
    name = tensor_file_name(state.step)
    save_tensors(run_dir / name, tensors)
    pointer = {
        "format": FORMAT_VERSION,
        "file": name,
        "sha256": sha256_file(run_dir / name),
        "state": dataclasses.asdict(state),
        "optimizer_state_keys": optim_keys,
        "config_hash": config_hash,
        "run_config": run_config,
    }
    atomic_write_text(run_dir / STATE_FILE, json.dumps(pointer, indent=1, sort_keys=True) + "\n")
    for old in run_dir.glob("checkpoint-*.safetensors"):
        if old.name != name:
            old.unlink()


def read_pointer(run_dir: Path) -> dict[str, Any] | None:
    """The parsed checkpoint.json, or None when the run directory has none."""
    path = run_dir / STATE_FILE
    if not path.exists():
        return None
    try:
        pointer = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path}: not valid JSON ({err})") from None
    required = ("format", "file", "sha256", "state", "optimizer_state_keys", "config_hash", "run_config")
    missing = [k for k in required if k not in pointer] if isinstance(pointer, dict) else list(required)
    if missing:
        raise CheckpointError(f"{path}: missing fields {missing}")
    if pointer["format"] != FORMAT_VERSION:
        raise CheckpointError(f"{path}: format {pointer['format']!r}, this code reads format {FORMAT_VERSION}")
    return pointer


def describe_differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    """'path: old -> new' for every leaf where two JSON-like values differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        lines = []
        for key in sorted(set(old) | set(new), key=str):
            where = f"{prefix}.{key}" if prefix else str(key)
            if key not in old:
                lines.append(f"{where}: (absent) -> {new[key]!r}")
            elif key not in new:
                lines.append(f"{where}: {old[key]!r} -> (absent)")
            else:
                lines.extend(describe_differences(old[key], new[key], where))
        return lines
    return [] if old == new else [f"{prefix or '(value)'}: {old!r} -> {new!r}"]


def check_config(run_dir: Path, pointer: dict[str, Any], config_hash: str, run_config: dict[str, Any]) -> None:
    """Raise ConfigMismatchError unless the checkpoint belongs to this run configuration."""
    if pointer["config_hash"] == config_hash:
        return
    diff = describe_differences(pointer["run_config"], run_config) or ["(no field differs; the hash format changed)"]
    formats = pointer["run_config"].get("format", 1), run_config.get("format", 1)
    why = (
        f" It was written in run format {formats[0]}, this code writes format {formats[1]}."
        if formats[0] != formats[1]
        else ""
    )
    raise ConfigMismatchError(
        f"{run_dir / STATE_FILE} belongs to a different run configuration "
        f"(hash {pointer['config_hash'][:12]} there, {config_hash[:12]} now).{why} Differences:\n  "
        + "\n  ".join(diff)
        + "\nRefusing to overwrite it. Use another run directory, or restart=True to move the old run aside."
    )


def load_checkpoint(
    run_dir: Path,
    pointer: dict[str, Any],
    *,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    device: torch.device,
) -> tuple[TrainingState, Tensor]:
    """Verify and load the checkpoint `pointer` refers to; returns the counters and the loss accumulator.

    Restores model weights, optimizer state and the torch RNG in place.
    """
    path = run_dir / pointer["file"]
    if not path.exists():
        raise CheckpointError(f"{run_dir / STATE_FILE}: points at {path.name}, which does not exist")
    actual = sha256_file(path)
    if actual != pointer["sha256"]:
        raise CheckpointError(
            f"{path}: SHA-256 {actual[:16]}… does not match {pointer['sha256'][:16]}… recorded in "
            f"{STATE_FILE}; the file is corrupt or truncated"
        )
    tensors = read_tensors(path)
    rng_names = ["rng/cpu"] + (["rng/cuda"] if device.type == "cuda" else [])
    _require(tensors, rng_names + ["train/loss_sum"], path)
    try:
        state = TrainingState(**pointer["state"])
    except TypeError as err:
        raise CheckpointError(f"{run_dir / STATE_FILE}: bad 'state' field ({err})") from None
    _load_model_state(model, tensors, path, prefix="model/")
    _load_optimizer_state(optimizer, tensors, pointer["optimizer_state_keys"], path)
    restore_rng(tensors, device)
    return state, tensors["train/loss_sum"].to(device)


def strip_optimizer_state(run_dir: Path) -> int:
    """Rewrite the final checkpoint of a finished run without its optimizer state; returns the bytes saved.

    A finished run is only ever loaded again to publish its results, which needs the weights alone.
    A run that has not finished keeps its optimizer state (it must resume exactly); returns 0 then.
    """
    pointer = read_pointer(run_dir)
    if pointer is None or not pointer["state"].get("finished") or not pointer["optimizer_state_keys"]:
        return 0
    path = run_dir / pointer["file"]
    before = path.stat().st_size
    kept = {name: tensor for name, tensor in read_tensors(path).items() if not name.startswith("optim/")}
    save_tensors(path, kept)
    pointer.update(sha256=sha256_file(path), optimizer_state_keys={})
    atomic_write_text(run_dir / STATE_FILE, json.dumps(pointer, indent=1, sort_keys=True) + "\n")
    return before - path.stat().st_size
