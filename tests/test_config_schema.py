"""Bad configurations stop the pipeline before any job starts, naming the key and what is allowed."""

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from repro.models import config as model_config
from repro.pipeline.configcheck import SCHEMA_PATH, PipelineConfigError, check_config
from repro.training.schedules import SCHEDULES

ROOT = Path(__file__).resolve().parents[1]
SCALES = ["config.yaml", "smoke.yaml", "paper.yaml"]


def load(name="config.yaml"):
    return yaml.safe_load((ROOT / "config" / name).read_text())


@pytest.mark.parametrize("name", SCALES)
def test_every_scale_file_is_valid(name):
    check_config(load(name))


# Keys a scale may set alone because they say where a run executes, not what it computes: `device` of a
# train section is left out of the run's identity (TrainConfig's execution fields), and adding it to the
# CPU scales would change every laptop command line and rerun every job. Paper scale sets it to auto.
SCALE_ONLY_TRAIN_KEYS = {"device"}
# Keys compared without their fields: the variants and figures each scale chooses, and objects that are
# null at a scale where their feature is off.
NULLABLE_OBJECT_KEYS = {"variants", "figures", "budget_updates_of"}


def test_scale_files_define_the_same_keys():
    def keys(d, prefix=""):
        out = set()
        for k, v in d.items():
            if prefix.endswith("train.") and k in SCALE_ONLY_TRAIN_KEYS:
                continue
            out.add(prefix + k)
            if isinstance(v, dict) and k not in NULLABLE_OBJECT_KEYS:
                out |= keys(v, prefix + k + ".")
        return out

    reference = keys(load("config.yaml"))
    for name in SCALES[1:]:
        assert keys(load(name)) == reference, name


#: Train settings that are counted in a scale's own steps: a variant that sets one at laptop scale
#: would hand the laptop's value to every scale layered over config.yaml.
STEP_COUNT_KEYS = {"steps", "eval_every", "log_every", "checkpoint_every"}


def test_a_variants_step_counts_do_not_leak_from_the_laptop_scale():
    laptop = load("config.yaml")["simplified_blocks"]["variants"]
    for name in SCALES[1:]:
        scale = load(name)["simplified_blocks"]["variants"]
        for variant, spec in laptop.items():
            counted = STEP_COUNT_KEYS & set(spec.get("train", {}))
            own = set(scale.get(variant, {}).get("train", {}))
            assert counted <= own, f"{name}: {variant} inherits {sorted(counted - own)} from config.yaml"


def test_scale_only_train_keys_are_execution_fields():
    from repro.training.config import EXECUTION_FIELDS

    assert SCALE_ONLY_TRAIN_KEYS <= set(EXECUTION_FIELDS)


def broken(edit):
    config = copy.deepcopy(load())
    edit(config)
    return config


CASES = [
    # (edit, fragments that must appear in the message)
    (
        lambda c: c["simplified_blocks"]["train"].update(stepz=3),
        ["simplified_blocks.train.stepz", "allowed keys", "steps"],
    ),
    (lambda c: c.update(sacle="laptop"), ["unknown config key sacle", "scale"]),
    (lambda c: c["simplified_blocks"]["train"].update(steps=-10), ["simplified_blocks.train.steps", "-10", "≥ 1"]),
    (lambda c: c["simplified_blocks"]["train"].update(lr="fast"), ["simplified_blocks.train.lr", "'fast'", "number"]),
    (
        lambda c: c["simplified_blocks"]["variants"]["sas"]["model"].update(block="sandwich"),
        ["variants.sas.model.block", "'sandwich'", "pre_ln", "sas_p"],
    ),
    (lambda c: c["simplified_blocks"]["model"].update(n_heads=3), ["n_heads=3", "divide d_model=128"]),
    (
        lambda c: c["simplified_blocks"]["variants"]["sas"]["model"].update(head_dim=16, n_heads=4),
        ["variants.{sas}.model", "n_heads × head_dim must equal d_model=128", "4 × 16 = 64"],
    ),
    (
        lambda c: c["simplified_blocks"]["train"].update(schedule="exp"),
        ["simplified_blocks.train.schedule", "'exp'", "cosine"],
    ),
    (lambda c: c["simplified_blocks"]["figures"]["fig26"]["variants"].append("sas3"), ["fig26.variants names 'sas3'"]),
    (
        lambda c: c["simplified_blocks"]["figures"]["fig06"]["variant_seeds"].update(deep_sass=1),
        ["fig06.variant_seeds names 'deep_sass'", "not defined under simplified_blocks.variants"],
    ),
    (
        lambda c: c["simplified_blocks"]["figures"]["fig26"].update(variant_seeds={"sas": 1}),
        ["fig26.variant_seeds gives ['sas'] fewer seeds", "cross_paper.blocks reads them"],
    ),
    (lambda c: c["sixteen_heads"]["tasks"]["nli"].update(seeds=[]), ["sixteen_heads.tasks.nli.seeds"]),
    (lambda c: c["simplified_blocks"].update(seeds=[]), ["simplified_blocks.seeds"]),
    (lambda c: c["corpus"].update(valid_fraction=0.9), ["corpus.valid_fraction", "0.9", "< 0.5"]),
    (
        lambda c: c["simplified_blocks"]["train"].update(warmup_steps=10),
        ["warmup_steps", "give warmup_steps or warmup_fraction, not both"],
    ),
]


@pytest.mark.parametrize("edit, fragments", CASES)
def test_bad_config_is_rejected_with_a_clear_message(edit, fragments):
    with pytest.raises(PipelineConfigError) as err:
        check_config(broken(edit))
    message = str(err.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message}"


def test_library_schemas_describe_the_config_classes_and_what_the_code_implements():
    from repro.training.config import SCHEMA_FILE as TRAIN_SCHEMA
    from repro.training.config import TrainConfig

    model = yaml.safe_load(model_config.SCHEMA_FILE.read_text())["properties"]
    assert set(model) == {f.name for f in model_config.dataclasses.fields(model_config.TransformerConfig)}
    overrides = model["block_overrides"]["properties"]
    assert set(overrides) == {f.name for f in model_config.dataclasses.fields(model_config.BlockSpec)}
    assert model["block"]["enum"] == list(model_config.BLOCK_PRESETS)
    train = yaml.safe_load(TRAIN_SCHEMA.read_text())["properties"]
    assert set(train) == {f.name for f in model_config.dataclasses.fields(TrainConfig)}
    assert train["schedule"]["enum"] == list(SCHEDULES)
    # the pipeline's model and train sections are the library's schemas
    common = yaml.safe_load((SCHEMA_PATH.parent / "common.schema.yaml").read_text())["$defs"]
    for name, path in (("model", model_config.SCHEMA_FILE), ("train", TRAIN_SCHEMA)):
        assert (SCHEMA_PATH.parent / common[name]["$ref"]).resolve() == path


def snakemake(*args, cwd=ROOT, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_snakemake_refuses_a_bad_configfile_before_any_job(tmp_path):
    bad = broken(lambda c: c["simplified_blocks"]["variants"]["sas"]["model"].update(block="sandwich"))
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    result = snakemake("-n", "--configfile", str(path))
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "variants.sas.model.block is 'sandwich'" in output and "allowed values" in output
    assert "Job stats" not in output  # no job was planned, let alone started


@pytest.mark.slow
def test_lint_is_clean():
    lint = snakemake("--lint")
    assert lint.returncode == 0 and "Congratulations" in lint.stdout + lint.stderr, lint.stdout + lint.stderr


def test_cluster_profiles_name_only_rules_that_exist():
    """A typo in a profile's per-rule resources would silently leave that rule on the defaults."""
    import re

    rules = {
        m
        for path in (ROOT / "workflow" / "rules").glob("*.smk")
        for m in re.findall(r"^rule (\w+):", path.read_text(), flags=re.M)
    }
    for profile in sorted((ROOT / "profiles").glob("*/profile.v9+.yaml")):
        settings = yaml.safe_load(profile.read_text())
        for key in ("set-resources", "set-threads"):
            named = set(settings.get(key) or {})
            assert named <= rules, f"{profile.parent.name} {key}: {sorted(named - rules)}"


@pytest.mark.parametrize(
    "configfile, scale",
    [("config/smoke.yaml", "smoke"), ("config/config.yaml", "laptop"), ("config/paper.yaml", "paper")],
)
def test_each_scale_writes_only_into_its_own_results_tree(configfile, scale):
    """Every scale plans, and only into its own tree: so that `make smoke` (or `make test`) after
    `make reproduce` leaves every laptop output in place. (--rerun-incomplete: the plan must not depend
    on a run interrupted in this working tree.)"""
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "snakemake"), "-n", "-F", "--rerun-incomplete", "--configfile", configfile],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    written = [
        path.strip()
        for line in out.splitlines()
        if line.startswith(("    output:", "    log:", "    benchmark:"))
        for path in line.split(":", 1)[1].split(",")
    ]
    assert len(written) > 100
    assert [path for path in written if not path.startswith(f"results/{scale}/")] == []


@pytest.mark.parametrize("name", SCALES)
def test_defaults_are_filled_as_snakemakes_validate_fills_them(name):
    from snakemake.utils import validate

    from repro.pipeline.configcheck import fill_defaults

    config = load(name)
    config.pop("seed_offset", None)  # a key with a schema default, left out as a scale file may
    ours, theirs = fill_defaults(copy.deepcopy(config)), copy.deepcopy(config)
    validate(theirs, schema=str(SCHEMA_PATH))
    assert ours == theirs and ours["seed_offset"] == 0  # exact: parsed and copied values, no arithmetic


def test_fill_defaults_refuses_what_the_schema_refuses():
    from repro.pipeline.configcheck import fill_defaults

    with pytest.raises(PipelineConfigError, match="unknown config key sacle"):
        fill_defaults(broken(lambda c: c.update(sacle="laptop")))


def test_checking_a_config_imports_no_torch():
    """Every snakemake call parses the Snakefile, which checks the config: that must not pay for torch."""
    code = (
        "import sys, yaml\n"
        "from repro.pipeline.configcheck import check_config, fill_defaults\n"
        "for name in ('smoke', 'config', 'paper'):\n"
        "    config = yaml.safe_load(open(f'config/{name}.yaml'))\n"
        "    check_config(config); fill_defaults(config)\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
