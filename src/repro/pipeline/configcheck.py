"""Check the pipeline configuration before any job starts.

Two layers:
1. the JSON schema (workflow/schemas/config.schema.yaml): unknown keys, types,
   ranges and allowed values, reported as one readable line per problem that names
   the key path and what is allowed;
2. semantic checks the schema cannot express, made by building the very objects a
   run would build: every variant's model config (e.g. a head count that does not
   divide the width where it must) and training config, and the references between
   sections (a figure naming an undefined variant).

`merged_run_config` is also what the Snakemake rules use to write each run's spec,
so what is checked is exactly what runs.
"""

from __future__ import annotations

import copy
from pathlib import Path
from collections.abc import Callable
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from repro.models.config import ConfigError, config_from_dict

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"
MAX_REPORTED = 12


class PipelineConfigError(ConfigError):
    """The pipeline configuration is invalid; the message lists every problem found."""


def load_schema(path: Path | str = SCHEMA_PATH) -> dict:
    """The main schema, with its `$id` set to its file URI so that relative `$ref`s
    to the paper and common schema files beside it resolve (see `schema_registry`)."""
    path = Path(path).resolve()
    schema = yaml.safe_load(path.read_text())
    return {"$id": path.as_uri(), **schema}


def schema_registry(schema_dir: Path | str = SCHEMA_PATH.parent) -> Registry:
    """Every *.schema.yaml of the schema directory, addressable by its file URI."""
    resources = []
    for path in sorted(Path(schema_dir).resolve().glob("*.schema.yaml")):
        contents = yaml.safe_load(path.read_text())
        resources.append((path.as_uri(), Resource.from_contents(contents, default_specification=DRAFT202012)))
    return Registry().with_resources(resources)


def check_config(config: dict, schema: dict | None = None) -> None:
    """Raise PipelineConfigError naming every bad key, or return silently."""
    schema = load_schema() if schema is None else schema
    problems = schema_problems(config, schema)
    if not problems:
        problems = semantic_problems(config)
    if problems:
        shown = problems[:MAX_REPORTED]
        more = f"\n  ... and {len(problems) - MAX_REPORTED} more" if len(problems) > MAX_REPORTED else ""
        raise PipelineConfigError(
            "invalid configuration (nothing was run):\n  - " + "\n  - ".join(shown) + more
        )


# -- schema ------------------------------------------------------------------------
def schema_problems(config: dict, schema: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema, registry=schema_registry())
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [_describe(error) for error in errors]


def _key(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    where = _key(error.absolute_path)
    kind, schema, value = error.validator, error.schema, error.instance
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(value) - set(allowed)) if isinstance(value, dict) else []
        keys = ", ".join(f"{where}.{k}" if where != "(top level)" else k for k in extra)
        return f"unknown config key {keys}; allowed keys under {where}: {', '.join(allowed)}"
    if kind == "enum":
        return f"config key {where} is {value!r}; allowed values: {', '.join(map(str, error.validator_value))}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        sign = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤", "exclusiveMaximum": "<"}[kind]
        return f"config key {where} is {value!r}; it must be {sign} {error.validator_value}"
    if kind == "type":
        return f"config key {where} is {value!r} ({type(value).__name__}); it must be of type {error.validator_value}"
    if kind == "required":
        return f"config key {where} is missing: {error.message}"
    if kind == "propertyNames":
        return f"config key {where} has an invalid name: {error.message}"
    return f"config key {where}: {error.message}"


# -- semantics ---------------------------------------------------------------------
def semantic_problems(config: dict) -> list[str]:
    """Problems found by every registered section check (see SECTION_CHECKS)."""
    problems = []
    for paper, check in SECTION_CHECKS.items():
        if paper in config:
            problems += check(config, paper)
    return problems


def check_lm_section(config: dict, paper: str) -> list[str]:
    """A language-model paper section: every variant's model and training config can be
    built, and every figure names defined variants."""
    from repro.training.config import TrainConfig  # late import: keeps Snakefile parsing light

    problems = []
    section = config[paper]
    failures: dict[str, list[str]] = {}  # message -> variants where it occurs
    for variant in section["variants"]:
        spec = merged_run_config(config, paper, variant, seed=0)
        for part, build in (("model", lambda s: config_from_dict(s, where="")), ("train", lambda s: TrainConfig(**s))):
            try:
                build(spec[part])
            except (ValueError, TypeError) as err:
                failures.setdefault(f"{part}: {str(err).removeprefix(': ')}", []).append(variant)
    for message, variants in failures.items():
        part, text = message.split(": ", 1)
        if len(variants) == len(section["variants"]):
            problems.append(f"{paper}.{part} (every variant): {text}")
        else:
            problems.append(f"{paper}.variants.{{{','.join(variants)}}}.{part}: {text}")
    for item, entry in section.get("figures", {}).items():
        for variant in entry.get("variants", []):
            if variant not in section["variants"]:
                problems.append(
                    f"config key {paper}.figures.{item}.variants names {variant!r}, which is not defined under "
                    f"{paper}.variants (defined: {', '.join(section['variants'])})"
                )
    return problems


def merged_run_config(config: dict, paper: str, variant: str, seed: int) -> dict[str, Any]:
    """The full spec of one run: shared model/train settings with the variant's overrides."""
    section = config[paper]
    overrides = section["variants"][variant] or {}
    model = copy.deepcopy(section["model"])
    model.update(copy.deepcopy(overrides.get("model", {})))
    # Language models on the code corpus take their vocabulary from the tokenizer.
    model.setdefault("vocab_size", config["tokenizer"]["vocab_size"])
    train = copy.deepcopy(section["train"])
    train.update(copy.deepcopy(overrides.get("train", {})))
    train["seed"] = int(seed)
    return {"paper": paper, "variant": variant, "seed": int(seed), "model": model, "train": train}


# Semantic checks per paper section: paper id -> function(config, paper) -> problems.
# Each paper registers its own line below.
SECTION_CHECKS: dict[str, Callable[[dict, str], list[str]]] = {}
SECTION_CHECKS["simplified_blocks"] = check_lm_section
from repro.synthetic_runs import check_config_section as check_sixteen_heads_section  # noqa: E402
SECTION_CHECKS["sixteen_heads"] = check_sixteen_heads_section
from repro.ensemble_runs import check_config_section as check_layer_diversity_section  # noqa: E402
SECTION_CHECKS["layer_diversity"] = check_layer_diversity_section
from repro.commands.simplified_blocks import check_section as check_simplified_blocks_section  # noqa: E402
SECTION_CHECKS["simplified_blocks"] = check_simplified_blocks_section
from repro.commands.param_allocation import check_section as check_param_allocation_section  # noqa: E402
SECTION_CHECKS["param_allocation"] = check_param_allocation_section
