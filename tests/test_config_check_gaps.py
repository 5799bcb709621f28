"""The config check's sources and relations: `--config` values, YAML errors, scale files, keys that a
job would otherwise refuse, and shared settings named once."""

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.cli import parse_config
from snakemake.utils import update_config

from repro.pipeline.configcheck import PipelineConfigError, check_config, check_config_files
from repro.pipeline.configsources import SCALE_FILES

ROOT = Path(__file__).resolve().parents[1]
SCALES = ["config.yaml", "smoke.yaml", "paper.yaml"]


def load(name="config.yaml"):
    return yaml.safe_load((ROOT / "config" / name).read_text())


def rejected(config, **sources) -> str:
    with pytest.raises(PipelineConfigError) as err:
        check_config(config, **sources)
    return str(err.value)


def edited(edit, name="config.yaml"):
    config = copy.deepcopy(load(name))
    edit(config)
    return config


@pytest.mark.parametrize("name", SCALES)
def test_scale_files_pass_with_their_sources(name):
    """As the Snakefile calls it: config.yaml, then the scale file, both as sources."""
    config = load()
    update_config(config, load(name))
    check_config(config, configfiles=[ROOT / "config" / name, "config/config.yaml"], command_line={})


# -- --config ----------------------------------------------------------------------------------


def from_command_line(*entries, name="config.yaml"):
    """(config, command_line) as Snakemake 9 builds them for `--config ENTRY ...`."""
    command_line = parse_config(list(entries))
    config = load(name)
    update_config(config, command_line)
    return config, command_line


def test_snakemake_passes_nested_config_values_as_strings():
    """What Snakemake really gives the Snakefile: mappings merged key by key, every nested value a string."""
    config, command_line = from_command_line("simplified_blocks={train: {steps: 5}, data: {mirror: null}}")
    assert command_line == {"simplified_blocks": {"train": {"steps": "5"}, "data": {"mirror": "null"}}}
    assert config["simplified_blocks"]["train"]["steps"] == "5"
    # the file's other keys stay
    assert config["simplified_blocks"]["train"]["lr"] == 1.0e-3  # exact: parsed from the file's literal 1.0e-3


def test_snakemake_refuses_dotted_config_keys_itself():
    with pytest.raises(ValueError, match="must start with a valid identifier"):
        parse_config(["simplified_blocks.train.steps=5"])


def test_nested_config_values_are_read_as_yaml():
    config, command_line = from_command_line(
        "simplified_blocks={train: {steps: 5, lr: 2.0e-3}, seeds: [3, 4], data: {mirror: null},"
        " variants: {sas: {model: {block: sas, qk_bias: false}}}}",
        "scale=laptop",
    )
    check_config(config, command_line=command_line)
    section = config["simplified_blocks"]
    assert section["train"]["steps"] == 5 and section["train"]["lr"] == 2.0e-3  # exact: parsed from the literal 2.0e-3
    assert section["seeds"] == [3, 4]
    assert section["data"]["mirror"] is None  # not the directory "null"
    assert section["variants"]["sas"]["model"] == {"block": "sas", "qk_bias": False}


def test_a_bad_config_value_names_the_key_and_the_overlay_file():
    config, command_line = from_command_line("simplified_blocks={train: {steps: -1}, seeds: [0, x]}")
    message = rejected(config, command_line=command_line)
    assert "simplified_blocks.train.steps is -1" in message
    assert "simplified_blocks.seeds.1 is 'x'" in message
    assert "came from --config" in message and "overlay YAML file passed with --configfile" in message


def test_the_overlay_hint_is_only_for_keys_from_the_command_line():
    config, command_line = from_command_line("simplified_blocks={train: {steps: 5}}")
    config["simplified_blocks"]["train"]["lr"] = "fast"
    message = rejected(config, command_line=command_line)
    assert "simplified_blocks.train.lr is 'fast'" in message and "--config" not in message


# -- YAML syntax and scale files ---------------------------------------------------------------


def test_a_yaml_error_names_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scale: smoke\ncorpus:\n  seed: [1, 2\n  max_bytes: 3\n")
    with pytest.raises(PipelineConfigError) as err:
        check_config_files([ROOT / "config" / "config.yaml", bad])
    message = str(err.value)
    assert f"config file {bad} is not valid YAML at line 4, column 12" in message
    assert "line 3" in message  # where the unclosed list began
    assert message.count("config file") == 1  # the valid file is not reported


def test_valid_and_missing_files_pass_the_yaml_check(tmp_path):
    check_config_files([ROOT / "config" / name for name in SCALES] + [tmp_path / "absent.yaml"])


@pytest.mark.parametrize("name, scale", [("smoke.yaml", "laptop"), ("paper.yaml", "smoke"), ("config.yaml", "paper")])
def test_a_scale_file_must_state_its_own_scale(tmp_path, name, scale):
    path = tmp_path / "config" / name
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"scale": scale}))
    message = rejected(load(), configfiles=[path])
    assert f"config key scale is {scale!r} in {path}" in message
    assert f"set scale: {SCALE_FILES[name]}" in message


def test_other_files_may_set_any_scale(tmp_path):
    overlay = tmp_path / "smoke-on-laptop.yaml"
    overlay.write_text("scale: smoke\n")
    check_config(load(), configfiles=[overlay, "config/config.yaml"])


# -- values that would fail inside a job -------------------------------------------------------


def test_a_measured_block_needs_the_benchmark_length():
    config = edited(lambda c: c["simplified_blocks"]["variants"]["sas"]["model"].update(max_seq_len=32))
    message = rejected(config)
    assert "config key simplified_blocks.variants.sas.model.max_seq_len is 32" in message
    assert "simplified_blocks.model.max_seq_len=64" in message


def test_the_mlm_encoder_must_hold_a_glue_pair():
    message = rejected(edited(lambda c: c["simplified_blocks"]["mlm"]["model"].update(max_seq_len=20)))
    assert "config key simplified_blocks.mlm.model.max_seq_len is 20" in message
    assert "2 + 2 × simplified_blocks.mlm.glue.max_line_tokens = 26 tokens" in message
    assert message.count("max_seq_len is 20") == 1  # the shared key, not one line per block


def test_the_mlm_length_does_not_bind_positions_without_a_table():
    check_config(edited(lambda c: c["simplified_blocks"]["mlm"]["model"].update(max_seq_len=20, position="alibi")))


def test_a_mlm_variant_must_be_an_encoder_with_a_time_budget():
    def edit(c):
        c["simplified_blocks"]["mlm"]["variants"]["sas"] = {"model": {"block": "sas", "causal": True}}
        c["simplified_blocks"]["mlm"]["train"]["time_budget_s"] = None
        c["simplified_blocks"]["mlm"]["budget_updates_of"] = None

    message = rejected(edited(edit))
    assert "config key simplified_blocks.mlm.variants.sas.model.causal is True" in message
    assert (
        "config key simplified_blocks.mlm.train.time_budget_s is null and simplified_blocks.mlm.budget_updates_of "
        "is null" in message
    )


def test_a_mlm_variant_typo_is_caught():
    message = rejected(edited(lambda c: c["simplified_blocks"]["mlm"]["variants"]["sas"].update(model={"blok": "sas"})))
    assert "simplified_blocks.mlm.variants.{sas}.model: unknown key(s) ['blok']" in message


def test_the_trained_mlm_blocks_are_defined_and_include_pre_ln():
    unknown = rejected(edited(lambda c: c["simplified_blocks"]["mlm"].update(trained_variants=["pre_ln", "sass"])))
    assert "config key simplified_blocks.mlm.trained_variants names sass, not among" in unknown
    no_pre_ln = rejected(edited(lambda c: c["simplified_blocks"]["mlm"].update(trained_variants=["sas", "sas_p"])))
    assert "config key simplified_blocks.mlm.trained_variants lacks pre_ln" in no_pre_ln


def test_the_trained_mlm_blocks_keep_the_order_of_the_variants():
    from repro.papers.simplified_blocks.specs import mlm_trained_variants

    mlm = load()["simplified_blocks"]["mlm"]
    assert mlm_trained_variants(dict(mlm, trained_variants=None)) == list(mlm["variants"])
    assert mlm_trained_variants(dict(mlm, trained_variants=["vskipinit", "pre_ln"])) == ["pre_ln", "vskipinit"]


def test_a_train_split_needs_one_batch():
    message = rejected(edited(lambda c: c["sixteen_heads"]["tasks"]["iwslt"]["sizes"].update(train=10)))
    assert "config key sixteen_heads.tasks.iwslt.sizes.train is 10" in message
    assert "sixteen_heads.families.s2s.train.batch_size=64" in message


def test_hub_task_files_must_fit_a_model_trained_from_scratch():
    config = edited(lambda c: c["sixteen_heads"]["families"]["s2s"]["model"].update(max_seq_len=128), "paper.yaml")
    message = rejected(config)
    assert "config key sixteen_heads.families.s2s.model.max_seq_len is 128" in message
    assert "sixteen_heads.hub.max_len.s2s=256" in message
    # the classifiers start from a pretrained BERT, whose positions are its own
    check_config(edited(lambda c: c["sixteen_heads"]["families"]["cls"]["model"].update(max_seq_len=64), "paper.yaml"))


# -- shared settings -----------------------------------------------------------------------------


@pytest.mark.parametrize("key, value", [("steps", -1), ("keep_checkpoints_at", [100000]), ("warmup_steps", 10)])
def test_a_shared_error_is_named_once(key, value):
    message = rejected(edited(lambda c: c["simplified_blocks"]["train"].update({key: value})))
    assert message.count(f"simplified_blocks.train.{key}") == 1, message
    assert "variants." not in message  # no variant is listed


def test_a_shared_model_error_is_named_once():
    message = rejected(edited(lambda c: c["simplified_blocks"]["model"].update(n_heads=3)))
    assert "config key simplified_blocks.model.n_heads (shared by the variants)" in message
    assert "variants.{" not in message


def test_a_shared_value_every_variant_overrides_is_no_error():
    def edit(c):
        variants = c["simplified_blocks"]["variants"]
        c["simplified_blocks"]["train"]["warmup_steps"] = 10  # with warmup_fraction: fails alone
        for name, variant in variants.items():
            variant = variants[name] = variant or {}
            variant["train"] = dict(variant.get("train", {}), warmup_steps=None)

    check_config(edited(edit))


def test_a_variant_error_still_names_the_variant():
    message = rejected(edited(lambda c: c["simplified_blocks"]["variants"]["sas"]["model"].update(n_heads=3)))
    assert "simplified_blocks.variants.{sas}.model: n_heads=3" in message


# -- through Snakemake ---------------------------------------------------------------------------


def snakemake(*args):
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
def test_snakemake_reports_a_nested_config_value_before_any_job():
    result = snakemake("--config", "simplified_blocks={train: {steps: -1}}")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "simplified_blocks.train.steps is -1" in output and "--configfile" in output
    assert "Job stats" not in output


@pytest.mark.slow
def test_snakemake_refuses_a_scale_file_with_another_scale(tmp_path):
    path = tmp_path / "config" / "smoke.yaml"
    path.parent.mkdir()
    shutil.copy(ROOT / "config" / "smoke.yaml", path)
    path.write_text(path.read_text().replace("\nscale: smoke\n", "\nscale: laptop\n"))
    result = snakemake("--configfile", str(path))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and f"config key scale is 'laptop' in {path}" in output
    assert "Job stats" not in output
