"""A training run on disk: its directory layout and how to load it back.

results/<paper>/runs/<variant>/seed<k>/
    model.json         the TransformerConfig (rebuilds the architecture), format in repro.models.config
    model.safetensors  final weights
    run.json           the TrainConfig, final metrics and timing (written by the trainer)
    metrics.jsonl      one row per logged step
    heldout.json       language models: the final weights' loss on the held-out chunks, per chunk
                       (repro.training.heldout)
    checkpoint.json, *.safetensors   resumable state (see repro.training.checkpoint)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NamedTuple

from repro.data.errors import rebuild_hint
from repro.models import Transformer, TransformerConfig, config_from_file_dict, config_to_file_dict, count_parameters
from repro.training import load_weights, train

MODEL_CONFIG_FILE = "model.json"
WEIGHTS_FILE = "model.safetensors"


def write_model_config(run_dir: str | Path, cfg: TransformerConfig) -> None:
    path = Path(run_dir) / MODEL_CONFIG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config_to_file_dict(cfg), indent=1, sort_keys=True) + "\n")


def new_run_model(run_dir: str | Path, cfg: TransformerConfig, seed: int) -> Transformer:
    """A freshly initialised model of a run (its init drawn from `seed`), its config written to the run."""
    import torch

    from repro.training.seeding import derive_seed

    torch.manual_seed(derive_seed(seed, "init"))
    model = Transformer(cfg)
    write_model_config(run_dir, cfg)
    return model


class HeldOutSet(NamedTuple):
    """A language model's final held-out set: a task whose eval set is the held-out chunks, their indices
    among the valid split's chunks, and descriptive fields for heldout.json."""

    task: object
    chunk_index: object  # [n] ints
    about: dict


def lm_heldout_set(splits, task, valid_tokens: str | Path) -> HeldOutSet:
    """The `HeldOutSet` of a language model's `splits` (`repro.data.lm_tokens.load_lm_splits`), evaluated by
    `task` (whose eval set is ``splits.heldout``); heldout.json records the valid file's sha256."""
    from repro.data.cards import file_sha256

    return HeldOutSet(
        task,
        splits.draw.heldout,
        {
            "valid_sha256": file_sha256(valid_tokens),
            "periodic_chunks": len(splits.draw.periodic),
            "draw": "stratified over the valid split's chunks in file order (repro.data.lm_tokens.heldout_draw)",
        },
    )


def train_run(
    model,
    task,
    train_cfg,
    run_dir: str | Path,
    label: str,
    about: str,
    restart: bool = False,
    heldout: HeldOutSet | None = None,
):
    """Train the run of a job and report it on stderr: "<label>: <N> parameters, <about>", then the result;
    with `heldout`, evaluate the final weights on it (heldout.json, `repro.training.heldout`).

    The job reruns when its settings change: a run of other settings in `run_dir` is then moved aside
    (previous-<k>/), never resumed or deleted (`move_stale`). A finished run is not trained again but is
    evaluated again, so that a job killed after training and before heldout.json was written ends with it."""
    print(f"{label}: {count_parameters(model):,} parameters, {about}", file=sys.stderr)
    result = train(model, task, train_cfg, run_dir, restart=restart, move_stale=True)
    print(f"done: {result}", file=sys.stderr)
    if heldout is not None:
        from repro.training.heldout import evaluate_heldout

        summary = evaluate_heldout(
            model, heldout.task, heldout.chunk_index, run_dir, device=train_cfg.device, **heldout.about
        )
        print(
            f"held-out: {summary['loss']:.4f} nats/token on {summary['n_chunks']} chunks "
            f"(bootstrap se {summary['bootstrap_se']:.4f})",
            file=sys.stderr,
        )
    return result


def train_new_run(
    cfg: TransformerConfig,
    task,
    train_cfg,
    run_dir: str | Path,
    label: str,
    about: str,
    restart: bool = False,
    heldout: HeldOutSet | None = None,
):
    """`train_run` of a fresh model of `cfg` (`new_run_model`, its init drawn from ``train_cfg.seed``),
    with torch on ``train_cfg.threads`` threads from the model's construction on."""
    import torch

    torch.set_num_threads(train_cfg.threads)
    model = new_run_model(run_dir, cfg, train_cfg.seed)
    return train_run(model, task, train_cfg, run_dir, label, about, restart=restart, heldout=heldout)


def read_model_config(run_dir: str | Path) -> TransformerConfig:
    path = Path(run_dir) / MODEL_CONFIG_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: {run_dir} is not a finished training run; {rebuild_hint(path)}")
    return config_from_file_dict(json.loads(path.read_text()), where=str(path))


def load_model(run_dir: str | Path) -> Transformer:
    """The trained model of a run directory, in eval mode."""
    model = Transformer(read_model_config(run_dir))
    load_weights(model, Path(run_dir) / WEIGHTS_FILE)
    return model.eval()


def read_metrics(run_dir: str | Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; {rebuild_hint(path)}")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
