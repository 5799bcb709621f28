"""JSON schemas of settings, and their problems as one readable line each.

A setting's type, range and allowed values are written down once, in a schema file: the library's
own config types keep theirs beside them (`repro/models/transformer_config.schema.yaml`,
`repro/training/train_config.schema.yaml`), and the pipeline's configuration schema
(`workflow/schemas/`) refers to those files for its `model` and `train` sections. The dataclasses
check themselves against their schema when they are made and add only the relations between
fields that a schema cannot say; the pipeline's check (`repro.pipeline.configcheck`) uses the same
validator and the same wording.

Integers and numbers are strict: `true` is not an integer, `10.0` is not an integer, and a number
must be finite.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

PACKAGE_DIR = Path(__file__).resolve().parent


def _is_integer(checker, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(checker, value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    ),
)


def read_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _schema_contents(path: Path) -> dict:
    # Without "$schema", a `$ref` into this file keeps `Validator` (jsonschema would switch to the
    # stock Draft 2020-12 validator, with its lax integers); the registry's default is Draft 2020-12.
    return {key: value for key, value in read_yaml(path).items() if key != "$schema"}


def load_schema(path: Path | str) -> dict:
    """A schema file, its `$id` set to its file URI so that its relative `$ref`s resolve."""
    path = Path(path).resolve()
    return {"$id": path.as_uri(), **_schema_contents(path)}


@functools.cache
def registry(*schema_dirs: Path) -> Registry:
    """Every *.schema.yaml of the library and of `schema_dirs`, addressable by its file URI, read once."""
    paths = sorted(PACKAGE_DIR.rglob("*.schema.yaml"))
    for directory in schema_dirs:
        paths += sorted(Path(directory).resolve().glob("*.schema.yaml"))
    resources = [(p.as_uri(), Resource(_schema_contents(p), DRAFT202012)) for p in paths]
    return Registry().with_resources(resources)


@functools.cache
def _validator(path: Path) -> jsonschema.protocols.Validator:
    return Validator(load_schema(path), registry=registry())


def problems(instance: Any, schema_file: Path, prefix: str) -> list[str]:
    """What is wrong with `instance` by the schema in `schema_file`, one line each (see `describe`)."""
    return describe_all(_validator(schema_file).iter_errors(instance), prefix)


def field_problems(instance: Any, schema_file: Path, prefix: str) -> list[str]:
    """`problems` of a dataclass instance's fields (tuples read as JSON arrays)."""
    values = {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance)}
    return problems({k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}, schema_file, prefix)


def describe_all(errors: Iterable[jsonschema.ValidationError], prefix: str) -> list[str]:
    ordered = sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [describe(error, prefix) for error in ordered]


def _key(path, prefix: str) -> str:
    """`prefix` and the key path: "config key a.b", "TrainConfig.steps"."""
    joined = ".".join(str(p) for p in path)
    return f"{prefix}{joined}" if joined else f"{prefix}(top level)"


def describe(error: jsonschema.ValidationError, prefix: str) -> str:
    """One line that names the key (after `prefix`), its value and what is allowed."""
    key = _key(error.absolute_path, prefix)
    kind, schema, value = error.validator, error.schema, error.instance
    if kind in ("oneOf", "anyOf") and error.context:
        # the alternative that matched the value's type says what is wrong with it
        specific = [e for e in error.context if e.validator != "type"]
        if specific:
            return describe(specific[0], prefix)
    if kind in ("not", "pattern", "const") and "description" in schema:  # the schema says why
        return f"{key} is {value!r}; {schema['description']}"
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        extra = sorted(set(value) - set(allowed)) if isinstance(value, dict) else []
        parent = ".".join(map(str, error.absolute_path))
        keys = ", ".join(f"{parent}.{k}" if parent else k for k in extra)
        return f"unknown {prefix}{keys}; allowed keys under {parent or '(top level)'}: {', '.join(allowed)}"
    if kind == "enum":
        return f"{key} is {value!r}; allowed values: {', '.join(map(str, error.validator_value))}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        sign = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤", "exclusiveMaximum": "<"}[kind]
        return f"{key} is {value!r}; it must be {sign} {error.validator_value}"
    if kind == "type":
        wanted = error.validator_value
        wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
        return f"{key} is {value!r} ({type(value).__name__}); it must be of type {wanted}"
    if kind in ("minItems", "maxItems", "minLength", "maxLength"):
        bound = "at least" if kind.startswith("min") else "at most"
        unit = "items" if kind.endswith("Items") else "characters"
        return f"{key} is {value!r}; it must have {bound} {error.validator_value} {unit}"
    if kind == "multipleOf":
        return f"{key} is {value!r}; it must be a multiple of {error.validator_value}"
    if kind == "pattern":
        return f"{key} is {value!r}; it must match {error.validator_value}"
    if kind == "required":
        return f"{key} is missing: {error.message}"
    if kind == "propertyNames":
        return f"{key} has an invalid name: {error.message}"
    return f"{key}: {error.message}"
