"""The sixteen_heads job specs are built from the config section alone (repro.papers.sixteen_heads.specs)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from repro.papers.sixteen_heads import specs

ROOT = Path(__file__).resolve().parents[1]
SECTION = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["sixteen_heads"]


def test_main_and_extra_tasks_split_the_tasks_and_take_their_seeds():
    assert specs.main_tasks(SECTION) == ["nli", "mt"]
    assert sorted(specs.main_tasks(SECTION) + specs.extra_tasks(SECTION)) == sorted(SECTION["tasks"])
    assert specs.task_seeds(SECTION, "mt") == SECTION["seeds"]
    assert specs.task_seeds(SECTION, "sst2") == SECTION["extra_seeds"]


def test_a_task_s_own_seeds_replace_its_group_s_and_shift_with_them():
    from repro.pipeline.seeds import shift_model_seeds

    section = copy.deepcopy(SECTION)
    section["tasks"]["nli"]["seeds"] = [0, 1, 2, 3]
    section["tasks"]["sst2"]["seeds"] = [5]
    assert specs.task_seeds(section, "nli") == [0, 1, 2, 3] and specs.task_seeds(section, "mt") == section["seeds"]
    assert specs.task_seeds(section, "sst2") == [5] and specs.task_seeds(section, "mrpc") == section["extra_seeds"]
    shifted = shift_model_seeds({"seed_offset": 10, "sixteen_heads": section}, ["sixteen_heads"])["sixteen_heads"]
    assert specs.task_seeds(shifted, "nli") == [10, 11, 12, 13] and specs.task_seeds(shifted, "sst2") == [15]


def test_the_during_training_task_takes_its_own_seeds():
    section = copy.deepcopy(SECTION)
    task = section["during_training"]["task"]
    section["during_training"]["seeds"] = [4, 7]
    assert specs.task_seeds(section, task) == [4, 7]
    assert specs.task_seeds(section, "sst2") == section["extra_seeds"]


def test_only_the_during_training_task_keeps_epoch_snapshots():
    task = SECTION["during_training"]["task"]
    spec = specs.train_spec(SECTION, task, 3)
    assert spec["train"]["seed"] == 3 and spec["train"]["steps"] == SECTION["tasks"][task]["steps"]
    assert spec["train"]["keep_checkpoints_at"] == sorted(set(specs.epoch_steps(SECTION, task).values()))
    assert "keep_checkpoints_at" not in specs.train_spec(SECTION, "nli", 0)["train"]
    assert set(specs.analysis_spec(SECTION, task, 0)["epochs"]) == {
        str(e) for e in SECTION["during_training"]["epochs"]
    }


def test_a_run_starts_from_a_checkpoint_only_with_hub_data():
    assert "init_from" not in specs.train_spec(SECTION, "nli", 0)
    hub = copy.deepcopy(SECTION)
    hub["data_source"] = "hub"
    hub["hub"]["pretrained"]["cls"] = "bert-base-uncased"
    assert specs.train_spec(hub, "nli", 0)["init_from"] == "bert-base-uncased"


def test_pretrained_body_only_for_the_listed_tasks_and_synthetic_data():
    section = copy.deepcopy(SECTION)
    section["pretrain"].update(tasks=["nli"], finetune_lr=1e-3)
    spec = specs.train_spec(section, "nli", 2)
    # exact: the lr copied from the section
    assert spec["init_from"] == "masked-LM body of nli" and spec["train"]["lr"] == 1e-3
    assert "init_from" not in specs.train_spec(section, "sst2", 0)
    pre = specs.pretrain_spec(section, "nli")
    assert pre["train"]["seed"] == section["pretrain"]["seed"] and pre["train"]["steps"] == section["pretrain"]["steps"]
    # exact: values copied from the section
    assert pre["model"] == section["families"]["cls"]["model"] and pre["mask_prob"] == section["pretrain"]["mask_prob"]
    section["data_source"] = "hub"  # the paper scale fine-tunes the hub checkpoint instead
    assert not specs.pretrained_here(section, "nli")


def test_early_stopping_keys_reach_the_trainer_only_when_given():
    section = copy.deepcopy(SECTION)
    section["tasks"]["nli"].update(stop_at_eval_loss=None, eval_every=None)
    plain = specs.train_spec(section, "nli", 0)["train"]
    assert "stop_at_eval_loss" not in plain
    assert plain["eval_every"] == section["families"]["cls"]["train"]["eval_every"]
    section["tasks"]["nli"].update(stop_at_eval_loss=0.35, eval_every=7)
    train = specs.train_spec(section, "nli", 0)["train"]
    assert train["stop_at_eval_loss"] == 0.35 and train["eval_every"] == 7  # exact: copied from the section
    assert {k: v for k, v in train.items() if k not in specs.EARLY_STOP_KEYS} == {
        k: v for k, v in plain.items() if k not in specs.EARLY_STOP_KEYS
    }
    from repro.training import TrainConfig

    assert TrainConfig(**train).stop_at_eval_loss == 0.35  # exact: copied
    section["families"]["cls"]["train"]["eval_every"] = 0  # early stopping needs evaluations
    section["tasks"]["nli"]["eval_every"] = None
    from repro.papers.sixteen_heads.checks import check_section

    problems = check_section({"sixteen_heads": section}, "sixteen_heads")
    assert any("tasks.nli" in p and "give eval_every > 0" in p for p in problems), problems
