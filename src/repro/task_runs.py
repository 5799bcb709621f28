"""Run directories of models trained on a task family (repro.data.synthetic, or hub tasks in its format).

Two families: ``cls``, a bidirectional classifier (a `Transformer` with a classifier head), and ``s2s``, an
`EncoderDecoder` with shared embeddings. A run directory holds ``model.json`` ({"family", "configs":
{"model"} or {"encoder", "decoder"}}, each config in the saved format of
`repro.models.config.config_to_file_dict`), written before training, plus the trainer's files
(model.safetensors, run.json, ...). Any step that reads such a run (a paper's sweeps, a study across
papers) loads it with `load_run_model`.
"""

from __future__ import annotations

import json
from pathlib import Path

from repro.models import EncoderDecoder, Transformer, TransformerConfig, config_from_file_dict, config_to_file_dict
from repro.runs import WEIGHTS_FILE
from repro.training import load_weights

FAMILIES = ("cls", "s2s")
MODEL_FILE = "model.json"


def check_family(family: str) -> None:
    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}; choose one of: {', '.join(FAMILIES)}")


def build_model(family: str, configs: dict[str, TransformerConfig]) -> Transformer | EncoderDecoder:
    """A fresh model (seed torch's RNG first for a fixed init)."""
    check_family(family)
    if family == "cls":
        return Transformer(configs["model"])
    return EncoderDecoder(configs["encoder"], configs["decoder"], share_embeddings=True)


def write_run_model(run_dir: str | Path, family: str, configs: dict[str, TransformerConfig]) -> None:
    path = Path(run_dir) / MODEL_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"family": family, "configs": {name: config_to_file_dict(cfg) for name, cfg in configs.items()}}
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")


def read_run_model(run_dir: str | Path) -> tuple[str, dict[str, TransformerConfig]]:
    """(family, configs) of a run directory."""
    path = Path(run_dir) / MODEL_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: {run_dir} is not a run of a synthetic-task model")
    payload = json.loads(path.read_text())
    family = payload.get("family")
    check_family(family)
    if payload.get("sep_id") is not None:
        raise ValueError(
            f"{path} is a run of an older version, whose segment embeddings were a separate module; "
            "retrain it (delete the run directory and rerun the rule that trained it)"
        )
    configs = {
        name: config_from_file_dict(values, where=f"{path}:{name}") for name, values in payload["configs"].items()
    }
    return family, configs


def load_run_model(run_dir: str | Path, weights: str | Path | None = None) -> tuple[str, Transformer | EncoderDecoder]:
    """(family, trained model in eval mode) of a run directory; ``weights`` picks another weights file
    (a snapshot) instead of the final model.safetensors."""
    family, configs = read_run_model(run_dir)
    model = build_model(family, configs)
    load_weights(model, Path(weights) if weights is not None else Path(run_dir) / WEIGHTS_FILE)
    return family, model.eval()


__all__ = [
    "FAMILIES",
    "MODEL_FILE",
    "WEIGHTS_FILE",
    "build_model",
    "check_family",
    "load_run_model",
    "read_run_model",
    "write_run_model",
]
