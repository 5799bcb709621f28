"""`seed_offset` shifts every model seed, and only model seeds; the shifted config still checks."""

from __future__ import annotations

import yaml

from repro.papers import PAPERS
from repro.pipeline.configcheck import check_config
from repro.pipeline.seeds import results_name, shift_model_seeds


def laptop_config(**extra):
    with open("config/config.yaml") as handle:
        return {**yaml.safe_load(handle), **extra}


def test_every_model_seed_moves_and_no_data_seed_does():
    config = laptop_config(seed_offset=10)
    shifted = shift_model_seeds(config, PAPERS)
    sb, sh, pa, ld = (shifted[p] for p in ("simplified_blocks", "sixteen_heads", "param_allocation", "layer_diversity"))
    assert sb["seeds"] == [s + 10 for s in config["simplified_blocks"]["seeds"]]
    assert sb["mlm"]["finetune_seeds"] == [s + 10 for s in config["simplified_blocks"]["mlm"]["finetune_seeds"]]
    assert sb["mlm"]["finetune_pretrain_seed"] == config["simplified_blocks"]["mlm"]["finetune_pretrain_seed"] + 10
    assert sh["extra_seeds"] == [s + 10 for s in config["sixteen_heads"]["extra_seeds"]]
    assert sh["speed"]["seed"] == config["sixteen_heads"]["speed"]["seed"] + 10
    assert pa["lm"]["seeds"] == [s + 10 for s in config["param_allocation"]["lm"]["seeds"]]
    assert ld["seeds"] == [s + 10 for s in config["layer_diversity"]["seeds"]]
    # the data stay the same: corpus split, task samples, simulations
    assert shifted["corpus"]["seed"] == config["corpus"]["seed"]
    assert sh["data_seed"] == config["sixteen_heads"]["data_seed"]
    assert sb["mlm"]["glue"]["seed"] == config["simplified_blocks"]["mlm"]["glue"]["seed"]
    check_config(shifted)  # the seeds a key refers to are still among the trained ones
    assert config["simplified_blocks"]["seeds"] == laptop_config()["simplified_blocks"]["seeds"]  # a copy


def test_no_offset_changes_nothing():
    config = laptop_config()
    assert shift_model_seeds(config, PAPERS) == config
    assert shift_model_seeds(laptop_config(seed_offset=0), PAPERS) == laptop_config(seed_offset=0)
    assert results_name("laptop", 0) == "laptop" and results_name("laptop", 10) == "laptop-seeds+10"
