"""The specs of the sixteen_heads jobs, built from the config section alone: one function per kind of
job, used by the Snakemake rules (which pass the JSON to the commands) and by the tests.

The two main models of the paper are BERT on MNLI (here the task nli) and the WMT Transformer (mt);
every other task (sst2, cola, mrpc, iwslt: Fig. 6) gets an importance pruning curve only, trained
with `extra_seeds`, and the `during_training` task also keeps snapshots (Fig. 5). Kept free of heavy
imports: the Snakefile imports it.
"""

from __future__ import annotations

from typing import Any

MAIN_TASKS = ("nli", "mt")
#: Task keys that override the family's training settings: early stopping at a held-out loss (the
#: trainer's `stop_at_eval_loss`, with `steps` the most updates), the cool-down after it, and how often
#: the loss is checked.
EARLY_STOP_KEYS = ("stop_at_eval_loss", "cooldown_fraction", "eval_every")
SPEED_KEYS = ("seed", "prune_percent", "batch_sizes", "examples", "rounds", "warmup")
#: Keys naming one of the section's model seeds (shifted with them by `seed_offset`, repro.pipeline.seeds).
SEED_REFERENCES = (("speed", "seed"), ("pretrain", "seed"))


def main_tasks(section: dict) -> list[str]:
    return [task for task in MAIN_TASKS if task in section["tasks"]]


def extra_tasks(section: dict) -> list[str]:
    return [task for task in section["tasks"] if task not in MAIN_TASKS]


def task_seeds(section: dict, task: str) -> list[int]:
    """The model seeds of a task: its own `tasks.<task>.seeds` where it has them (its runs cost more or
    less than the others' of its group, docs/decisions/0053-seeds-per-task.md), else `seeds` for nli and mt,
    `during_training.seeds` for the Fig. 5 task and `extra_seeds` for every other."""
    if "seeds" in section["tasks"][task]:
        return list(section["tasks"][task]["seeds"])
    if task in MAIN_TASKS:
        return list(section["seeds"])
    if task == section["during_training"]["task"]:
        return list(section["during_training"]["seeds"])
    return list(section["extra_seeds"])


def pretrained(section: dict, task: str) -> str | None:
    """The hub checkpoint the task's runs are fine-tuned from (hub data only); None: from scratch."""
    if section["data_source"] != "hub":
        return None
    return section["hub"]["pretrained"].get(section["tasks"][task]["family"])


def pretrained_here(section: dict, task: str) -> bool:
    """Whether the task's runs are fine-tuned from a masked-LM body pre-trained by the pipeline on the
    task's own training inputs (synthetic data; `pretrain.tasks`)."""
    return section["data_source"] != "hub" and task in section["pretrain"]["tasks"]


def pretrain_spec(section: dict, task: str) -> dict[str, Any]:
    """The masked-LM pre-training of a task's classifier body: the family's model and training
    settings with the pre-training's steps and seed."""
    settings, pre = section["tasks"][task], section["pretrain"]
    family = section["families"][settings["family"]]
    return {
        "model": family["model"],
        "train": dict(family["train"], steps=pre["steps"], seed=int(pre["seed"])),
        "mask_prob": pre["mask_prob"],
    }


def epoch_steps(section: dict, task: str) -> dict[int, int]:
    """{epoch: update after which its snapshot is kept}; an epoch is train size / batch size updates."""
    settings = section["tasks"][task]
    batch = section["families"][settings["family"]]["train"]["batch_size"]
    per_epoch = settings["sizes"]["train"] / batch
    return {int(epoch): max(1, round(epoch * per_epoch)) for epoch in section["during_training"]["epochs"]}


def train_spec(section: dict, task: str, seed: int) -> dict[str, Any]:
    """One training run: the family's settings plus the task's steps and the seed."""
    settings = section["tasks"][task]
    family = section["families"][settings["family"]]
    spec = {
        "family": settings["family"],
        "model": family["model"],
        "train": dict(family["train"], steps=settings["steps"], seed=int(seed)),
        "label_smoothing": family.get("label_smoothing", 0.0),
    }
    for key in EARLY_STOP_KEYS:  # given only: a task without early stopping keeps its spec (and identity)
        if settings.get(key) is not None:
            spec["train"][key] = settings[key]
    if task == section["during_training"]["task"]:  # Fig. 5 reads the snapshots of these updates
        spec["train"]["keep_checkpoints_at"] = sorted(set(epoch_steps(section, task).values()))
    if pretrained(section, task):  # only then: synthetic runs keep their spec (and identity)
        spec["init_from"] = pretrained(section, task)
    if pretrained_here(section, task):
        spec["init_from"] = f"masked-LM body of {task}"
        if section["pretrain"]["finetune_lr"] is not None:
            spec["train"]["lr"] = section["pretrain"]["finetune_lr"]
    return spec


def analysis_spec(section: dict, task: str, seed: int) -> dict[str, Any]:
    """The ablation, pruning and epoch analyses of one run."""
    settings = section["tasks"][task]
    spec = {
        "task": task,
        "seed": int(seed),
        "data_seed": section["data_seed"],
        "selection": settings["selection"],
        "analysis": section["analysis"],
        "label_smoothing": section["families"][settings["family"]].get("label_smoothing", 0.0),
        "main": task in MAIN_TASKS,
    }
    if task == section["during_training"]["task"]:
        spec["epochs"] = {str(epoch): step for epoch, step in epoch_steps(section, task).items()}
    return spec


def speed_spec(section: dict) -> dict[str, Any]:
    """The pruned-speed timing (Table 4)."""
    return {key: section["speed"][key] for key in SPEED_KEYS}


def trained_models(config: dict) -> list[dict[str, Any]]:
    """Every model shape this paper trains, for the benchmark (repro.bench): one per task,
    each {what, model, batch_size, runs}, with the task family's vocabulary."""
    from repro.data.synthetic.vocab import CLS_VOCAB, S2S_VOCAB

    section = config["sixteen_heads"]
    vocab = {"cls": CLS_VOCAB.size, "s2s": S2S_VOCAB.size}
    out = []
    for task in main_tasks(section) + extra_tasks(section):
        spec = train_spec(section, task, 0)
        out.append(
            {
                "what": f"{spec['family']} {task}",
                "model": dict(spec["model"], vocab_size=vocab[spec["family"]]),
                "batch_size": spec["train"]["batch_size"],
                "runs": len(task_seeds(section, task)),
            }
        )
    return out
