"""Check the pipeline configuration before any job starts.

Two layers:
1. the JSON schema (workflow/schemas/config.schema.yaml, whose `model` and `train` sections
   refer to the library's schemas of TransformerConfig and TrainConfig; see repro.schemas):
   unknown keys, types, ranges and allowed values, reported as one readable line per problem
   that names the key path and what is allowed; `fill_defaults` then writes the schema's defaults into
   the config (what Snakemake's `validate` would do, without reloading a schema file per `$ref`);
2. the relations the schema cannot express, found by building the very objects a run would
   build: every variant's model config (e.g. a head count that does not divide the width where
   it must) and training config, and the references between sections (a figure naming an
   undefined variant).

`merged_run_config` is also what the papers' specs (repro.papers.<paper>.specs) build each
variant run from, so what is checked is exactly what runs. Given the config's sources (the Snakefile passes
them), `check_config` also reads `--config` values as YAML and holds each scale file to its
scale (repro.pipeline.configsources). Each paper's own checks, including the relations between
keys that one of its jobs would otherwise trip over, are in repro.papers.<paper>.checks.
"""

from __future__ import annotations

import copy
import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry

from repro import schemas
from repro.models.config import ConfigError, config_from_dict
from repro.pipeline import configsources

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"
MAX_REPORTED = 12
CONFIG_KEY = "config key "  # how a problem line names its key


class PipelineConfigError(ConfigError):
    """The pipeline configuration is invalid; the message lists every problem found."""


def load_schema(path: Path | str = SCHEMA_PATH) -> dict:
    """The main schema, with its `$id` set to its file URI so that relative `$ref`s to the paper,
    common and library schema files resolve (see `schema_registry`)."""
    return schemas.load_schema(path)


def schema_registry(schema_dir: Path | str = SCHEMA_PATH.parent) -> Registry:
    """Every schema file of the workflow and of the library, addressable by its file URI, read once."""
    return schemas.registry(Path(schema_dir).resolve())


def check_config(
    config: dict,
    schema: dict | None = None,
    *,
    configfiles: Iterable[str | Path] = (),
    command_line: Mapping | None = None,
) -> None:
    """Raise PipelineConfigError naming every bad key, or return silently.

    `configfiles` (workflow.configfiles) are held to their scale; `command_line` is what Snakemake
    parsed from `--config` (workflow.config_settings.config): its values, which reach `config` as
    strings, are first re-read as YAML in `config` itself, so the rules see the typed values."""
    from_command_line = configsources.type_command_line(config, command_line)
    schema = load_schema() if schema is None else schema
    problems = configsources.scale_problems(configfiles) + schema_problems(config, schema)
    if not problems:
        problems = semantic_problems(config)
    if problems:
        _raise(problems, _command_line_note(problems, from_command_line))


def check_config_files(paths: Iterable[str | Path]) -> None:
    """Raise PipelineConfigError naming the file, line and column of each file that is not valid
    YAML. For the Snakefile's own `configfile:` (Snakemake's error names neither)."""
    problems = configsources.yaml_problems(paths)
    if problems:
        _raise(problems)


def _raise(problems: list[str], note: str = "") -> None:
    shown = problems[:MAX_REPORTED]
    more = f"\n  ... and {len(problems) - MAX_REPORTED} more" if len(problems) > MAX_REPORTED else ""
    raise PipelineConfigError("invalid configuration (nothing was run):\n  - " + "\n  - ".join(shown) + more + note)


def _command_line_note(problems: list[str], keys: list[str]) -> str:
    """A hint when a reported key was set with --config, whose nested values are easy to get wrong."""
    named = [key for key in keys if any(re.search(rf"(?<![\w.]){re.escape(key)}(?![\w])", p) for p in problems)]
    if not named:
        return ""
    return (
        f"\n{', '.join(named)} came from --config, whose values this check reads as YAML. For nested "
        f"settings use {configsources.OVERLAY_HINT} instead (a few keys in a YAML file of their own, "
        "merged over the scale file): snakemake --configfile config/smoke.yaml my-overlay.yaml"
    )


# -- schema ------------------------------------------------------------------------
def schema_problems(config: dict, schema: dict) -> list[str]:
    validator = schemas.Validator(schema, registry=schema_registry())
    return schemas.describe_all(validator.iter_errors(config), CONFIG_KEY)


def _with_defaults(validator_class: type) -> type:
    """`validator_class` that also writes each property's `default` into the instance when absent
    (the recipe of jsonschema's FAQ, which Snakemake's `validate` uses too)."""
    check_properties = validator_class.VALIDATORS["properties"]

    def properties(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, subschema["default"])
        yield from check_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": properties})


def fill_defaults(config: dict, schema: dict | None = None) -> dict:
    """Write the schema's defaults into `config` in place and return it; raise PipelineConfigError
    if it does not validate (`check_config` reports the same problems one per line first)."""
    schema = load_schema() if schema is None else schema
    validator = _with_defaults(schemas.Validator)(schema, registry=schema_registry())
    problems = schemas.describe_all(validator.iter_errors(config), CONFIG_KEY)
    if problems:
        _raise(problems)
    return config


# -- semantics ---------------------------------------------------------------------
def section_checks() -> dict[str, Callable[[dict, str], list[str]]]:
    """Every paper's section check: the `check_section` of repro.papers.<id>.checks, imported by
    name so that this module imports no paper."""
    from repro.papers import PAPERS, part

    return {paper: importlib.import_module(part(paper, "checks")).check_section for paper in PAPERS}


def semantic_problems(config: dict) -> list[str]:
    """Problems found by the section check of every paper in `config` (see section_checks)."""
    problems = []
    for paper, check in section_checks().items():
        if paper in config:
            problems += check(config, paper)
    return problems


def heldout_problems(
    section: dict, where: str, periodic: str = "eval_chunks", final: str = "heldout_chunks"
) -> list[str]:
    """The periodic evaluation set (key `periodic`) is drawn from the final held-out set (key `final`,
    repro.data.lm_tokens.heldout_draw), so it cannot be larger; `where` is the section's config path."""
    if section.get(periodic, 0) > section.get(final, float("inf")):
        return [
            f"config key {where}.{periodic}={section[periodic]} exceeds {where}.{final}={section[final]}: the "
            f"periodic evaluation set is drawn from the final held-out set; raise {final} or lower {periodic}"
        ]
    return []


def check_lm_section(config: dict, paper: str) -> list[str]:
    """A language-model paper section: every variant's model and training config can be
    built, every figure names defined variants, and the periodic evaluation set fits in the final one."""
    section = config[paper]
    problems = variant_build_problems(paper, section, config["tokenizer"]["vocab_size"])
    problems += heldout_problems(section, paper)
    for item, entry in section.get("figures", {}).items():
        for variant in entry.get("variants", []):
            if variant not in section["variants"]:
                problems.append(
                    f"config key {paper}.figures.{item}.variants names {variant!r}, which is not defined under "
                    f"{paper}.variants (defined: {', '.join(section['variants'])})"
                )
        # Checked against the section's variants, not the figure's: a scale file layered over config.yaml
        # may train fewer variants in a figure and inherits its variant_seeds.
        for variant in entry.get("variant_seeds", {}):
            if variant not in section["variants"]:
                problems.append(
                    f"config key {paper}.figures.{item}.variant_seeds names {variant!r}, which is not defined "
                    f"under {paper}.variants"
                )
    return problems


def figure_seeds(section: dict, item: str, variant: str | None = None) -> list[int]:
    """The seeds figure `item` of a language-model paper section trains its variants on: the first
    `figures.<item>.seeds` of the section's seeds (all of them by default, or when there are fewer), or
    for `variant` the first `figures.<item>.variant_seeds.<variant>` of those where the entry names it."""
    entry = section["figures"][item]
    seeds = list(section["seeds"][: entry.get("seeds", len(section["seeds"]))])
    if variant is not None and variant in entry.get("variant_seeds", {}):
        return seeds[: entry["variant_seeds"][variant]]
    return seeds


# The field a build error is about: "TrainConfig.steps is ..." or "n_heads=3 (layer 0) ...".
_ERROR_FIELD = re.compile(r"^(?:TrainConfig\.)?(\w+)(?:=| is )")


def _error_field(message: str | None) -> str | None:
    match = _ERROR_FIELD.match(message or "")
    return match.group(1) if match else None


def _build_error(part: str, values: dict, vocab_size: int) -> str | None:
    """Why the model or train settings `values` do not build (None if they do)."""
    from repro.training.config import TrainConfig  # late import: keeps Snakefile parsing light

    try:
        if part == "model":
            config_from_dict({"vocab_size": vocab_size, **values}, where="")
        else:
            TrainConfig(**{**values, "seed": 0})
    except (ValueError, TypeError) as err:
        return str(err).removeprefix(": ")
    return None


def variant_build_problems(where: str, section: dict, vocab_size: int) -> list[str]:
    """Every variant's model and training settings (the shared `model`/`train` of `section`
    updated by `variants.<name>.model/train`) build. A failure that variants inherit from the
    shared settings is reported once, at the shared key, not once per variant; the other
    failures are grouped by message, naming the variants."""
    problems = []
    variants = section["variants"]
    for part in ("model", "train"):
        shared = section[part]
        shared_error = _build_error(part, shared, vocab_size)
        field = _error_field(shared_error)
        inherited = False
        failures: dict[str, list[str]] = {}  # message -> variants where it occurs
        for variant, overrides in variants.items():
            own = (overrides or {}).get(part) or {}
            error = _build_error(part, {**shared, **own}, vocab_size)
            if error is None:
                continue
            # the shared error again, or the same field failing where the variant keeps the shared value
            same_field = field is not None and field not in own and _error_field(error) == field
            if shared_error and (error == shared_error or same_field):
                inherited = True
            else:
                failures.setdefault(error, []).append(variant)
        if inherited:
            key = f"{where}.{part}.{field}" if field in shared else f"{where}.{part}"
            problems.append(f"config key {key} (shared by the variants): {shared_error}")
        for text, names in failures.items():
            if len(names) == len(variants):
                problems.append(f"{where}.{part} (every variant): {text}")
            else:
                problems.append(f"{where}.variants.{{{','.join(names)}}}.{part}: {text}")
    return problems


# Positions whose table has max_seq_len rows; rope, alibi and none take any length.
TABLE_POSITIONS = ("learned", "sinusoidal")


def source_key(where: str, section: dict, variant: str, part: str, field: str) -> str:
    """The key a variant's `part.field` comes from: its own override, else the shared setting (so a
    shared value is named once, however many variants inherit it)."""
    own = (section["variants"].get(variant) or {}).get(part) or {}
    return f"{where}.variants.{variant}.{part}.{field}" if field in own else f"{where}.{part}.{field}"


def variant_settings(section: dict, variant: str, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(model, train) of one variant of a section with `model`, `train` and `variants`: the shared
    settings updated by the variant's own (a shallow merge), and the seed."""
    if variant not in section["variants"]:
        raise KeyError(f"no variant {variant!r} (defined: {', '.join(section['variants'])})")
    overrides = section["variants"][variant] or {}
    model = copy.deepcopy(section["model"])
    model.update(copy.deepcopy(overrides.get("model", {})))
    train = copy.deepcopy(section["train"])
    train.update(copy.deepcopy(overrides.get("train", {})))
    train["seed"] = int(seed)
    return model, train


def merged_run_config(config: dict, paper: str, variant: str, seed: int) -> dict[str, Any]:
    """The full spec of one run: shared model/train settings with the variant's overrides."""
    model, train = variant_settings(config[paper], variant, seed)
    # Language models on the code corpus take their vocabulary from the tokenizer.
    model.setdefault("vocab_size", config["tokenizer"]["vocab_size"])
    return {"paper": paper, "variant": variant, "seed": int(seed), "model": model, "train": train}


def merge_into(config: dict, overlay: Mapping) -> dict:
    """`overlay` merged into `config` in place, nested mappings key by key, as Snakemake merges
    --configfile (without importing Snakemake, which a GPU machine's python may not have)."""
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(config.get(key), dict):
            merge_into(config[key], value)
        else:
            config[key] = value
    return config


def load_scale_files(paths: Iterable[str | Path]) -> dict:
    """The config the Snakefile sees for these files (later ones over earlier ones), checked, with
    its defaults filled in: for commands run outside Snakemake."""
    import yaml

    config: dict = {}
    for path in paths:
        merge_into(config, yaml.safe_load(Path(path).read_text()) or {})
    check_config(config)
    return fill_defaults(config)
