"""Run specs of the layer_diversity section: one training job per (model family, seed), every depth.

`family_run_spec` merges the section's shared model and training settings with a family's model
overrides (with data.source hub it also carries the family's checkpoints); the Snakemake rule
passes it to `python -m repro layer_diversity train`. `hub_data_spec` gives the hub-data step a
family's tokenizer and the dataset settings. The config check (checks.py) builds every (family,
depth) model and the training config from the same spec before any job starts, so a bad value is
reported by key. Kept free of heavy imports: the Snakefile imports it.
"""

from __future__ import annotations

import copy
from typing import Any

TASKS = ("sent", "entail", "topic", "mc")
#: Vocabulary size of the PROMPT task family (repro.data.synthetic.vocab); the data step checks it.
PROMPT_VOCAB_SIZE = 164


def family_run_spec(config: dict, paper: str, family: str, seed: int) -> dict[str, Any]:
    """Everything the train step needs for one family and seed (JSON-able)."""
    section = config[paper]
    variant = section["variants"][family]
    model = copy.deepcopy(section["model"])
    model.update(copy.deepcopy(variant["model"]))
    spec = {
        "family": family,
        "seed": int(seed),
        "depths": list(section["depths"]),
        "tasks": list(section["data"]["tasks"]),
        "source": section["data"]["source"],
        "model": model,
        "train": copy.deepcopy(section["train"]),
        "label_weight": section["label_weight"],
        "eval_examples": section["eval_examples"],
    }
    if spec["source"] == "hub":  # frozen pretrained checkpoints, one per depth (synthetic specs stay as they were)
        spec["hub"] = list(variant["hub"])
    return spec


def hub_data_spec(config: dict, paper: str, family: str) -> dict[str, Any]:
    """What the hub-data step needs for one family: its tokenizer (the first checkpoint's) and the tasks."""
    section = config[paper]
    data = section["data"]
    hub = section["variants"][family]["hub"]
    if not hub:
        raise ValueError(f"config key {paper}.variants.{family}.hub is empty; data.source hub needs a checkpoint")
    return {
        "tokenizer": hub[0],
        "hub": {task: entry["hub"] for task, entry in data["tasks"].items()},
        "train_sizes": {task: entry["train_size"] for task, entry in data["tasks"].items()},
        "test_size": data["test_size"],
        "max_tokens": data.get("max_tokens", 512),
        "mirror": data.get("mirror"),
    }


__all__ = ["PROMPT_VOCAB_SIZE", "TASKS", "family_run_spec", "hub_data_spec"]


def trained_models(config: dict, paper: str = "layer_diversity") -> list[dict[str, Any]]:
    """Every model shape this paper trains, for the benchmark (repro.bench): each family at each depth;
    none with hub data, where the families are pretrained checkpoints read as they are."""
    section, out = config[paper], []
    if section["data"]["source"] == "hub":
        return out
    for family in section["variants"]:
        spec = family_run_spec(config, paper, family, 0)
        for depth in spec["depths"]:
            out.append(
                {
                    "what": f"{family} L={depth}",
                    "model": dict(spec["model"], n_layers=int(depth), vocab_size=PROMPT_VOCAB_SIZE),
                    "batch_size": spec["train"]["batch_size"],
                    "runs": len(section["seeds"]),
                }
            )
    return out
