"""config/README.md, the configuration key reference, against the schemas in workflow/schemas.

The README's convention (stated at its top): each `| key | meaning |` table documents the keys of the
section named by the heading above it (`## \\`corpus\\`` → `corpus.…`, `## Top level` → top-level keys,
`### \\`model\\` keys` and `### \\`train\\` keys` → the fields of every `model` and `train` section). The
key cell lists one or more key paths in backticks, relative to the section; `<name>` stands for any name
(a map such as `variants.<name>`). A key may also be documented in its parent's row, by its name in
backticks in the meaning cell (e.g. `glue`'s row names `train_sizes`, `eval_size`, …).

Both directions are checked: every key the schemas allow is documented, and every documented key is one
the schemas allow. A test cannot check that a meaning is true; it makes sure no key is missing or stale.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "workflow" / "schemas"
README = ROOT / "config" / "README.md"
LIBRARY = {  # the library's own schemas: `model` and `train` sections, documented in their own tables
    (ROOT / "src/repro/models/transformer_config.schema.yaml").resolve(): "model",
    (ROOT / "src/repro/training/train_config.schema.yaml").resolve(): "train",
}
ANY = "<*>"


@cache
def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _resolve(node: dict, file: Path) -> tuple[dict, Path, str | None]:
    """Follow `$ref`s: the node to walk, its file, and "model"/"train" where it is a library schema."""
    while "$ref" in node:
        ref_file, _, pointer = node["$ref"].partition("#")
        target_file = (file.parent / ref_file).resolve() if ref_file else file
        if target_file in LIBRARY:
            return node, target_file, LIBRARY[target_file]
        target = _load(target_file)
        for part in filter(None, pointer.split("/")):
            target = target[part]
        extra = {k: v for k, v in node.items() if k != "$ref"}
        node, file = {**target, **extra} if extra and "$ref" not in target else target, target_file
    return node, file, None


def _children(node: dict, file: Path) -> list[tuple[str, dict, Path]]:
    out = []
    for part in [node, *node.get("allOf", [])]:
        part, part_file, _ = _resolve(part, file)
        for name, sub in part.get("properties", {}).items():
            out.append((name, sub, part_file))
        extra = part.get("additionalProperties")
        if isinstance(extra, dict):
            sub, _, _ = _resolve(extra, part_file)
            if "properties" in sub or "allOf" in sub or "object" in str(sub.get("type", "")):
                out.append((ANY, extra, part_file))
    return out


def schema_keys(node: dict, file: Path, prefix: str = "") -> dict[str, str | None]:
    """Every key path the schema allows under `prefix`: path → "model"/"train" for library sections."""
    keys: dict[str, str | None] = {}
    for name, sub, sub_file in _children(node, file):
        path = f"{prefix}{name}"
        resolved, resolved_file, library = _resolve(sub, sub_file)
        if resolved.get("not") == {}:
            continue  # set per job by the workflow (seed, threads): no config file gives it
        for part in resolved.get("allOf", []):
            library = library or _resolve(part, resolved_file)[2]
        keys[path] = library
        if library is None:
            keys.update(schema_keys(resolved, resolved_file, path + "."))
    return keys


def library_keys(kind: str) -> set[str]:
    file = next(f for f, k in LIBRARY.items() if k == kind)
    return set(_load(file)["properties"])


def _normalise(key: str) -> str:
    return re.sub(r"<[^>]+>", ANY, key)


def readme_tables(text: str) -> list[tuple[str, str, list[str], str]]:
    """(section, row's key cell, keys in it, meaning cell) for every row of every `| key | meaning |` table."""
    rows = []
    section, in_table = None, False
    for line in text.splitlines():
        heading = re.match(r"^#{2,3} (.*)", line)
        if heading:
            title = heading.group(1)
            named = re.match(r"`([^`]+)`", title)
            if title.startswith("Top level"):
                section = ""
            elif named and title.startswith(f"`{named.group(1)}` keys"):
                section = f"@{named.group(1)}"  # the library's model / train fields
            elif named:
                section = named.group(1) + "."
            else:
                section = None
            in_table = False
            continue
        if line.startswith("| key | meaning |"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if in_table and section is not None and not line.startswith("|---"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            key_cell, meaning = cells[0], " | ".join(cells[1:])
            rows.append((section, key_cell, re.findall(r"`([^`]+)`", key_cell), meaning))
    return rows


def documented() -> tuple[dict[str, set[str]], dict[str, str]]:
    """section → documented keys (full paths; "@model"/"@train" for the library tables) and key → meaning."""
    keys: dict[str, set[str]] = {}
    meanings: dict[str, str] = {}
    for section, _, names, meaning in readme_tables(README.read_text()):
        for name in names:
            full = name if section.startswith("@") else _normalise(section + name)
            keys.setdefault(section, set()).add(full)
            meanings[section + "|" + full] = meaning
    return keys, meanings


def _config_schema() -> dict[str, str | None]:
    file = SCHEMAS / "config.schema.yaml"
    return schema_keys(_load(file), file)


def test_the_readme_states_its_convention():
    assert "| key | meaning |" in README.read_text().split("\n## ")[0]


def _matches(documented_key: str, schema_path: str) -> bool:
    """A documented key names a schema path; `<*>` in either stands for any one name."""
    pattern = re.escape(documented_key).replace(re.escape(ANY), r"[^.]+")
    return (
        re.fullmatch(pattern, schema_path) is not None
        or re.fullmatch(re.escape(schema_path).replace(re.escape(ANY), r"[^.]+"), documented_key) is not None
    )


def test_every_schema_key_is_documented():
    """Every key without sub-keys (a value, a list, a map of values, or a `model`/`train` section) has a
    row, or its name in backticks in the row of a key above it."""
    _, meanings = documented()
    rows = [(k.split("|", 1)[1], m) for k, m in meanings.items() if not k.startswith("@")]
    schema = _config_schema()
    leaves = [p for p in schema if not any(q.startswith(p + ".") for q in schema)]
    missing = []
    for path in leaves:
        name = path.rpartition(".")[2]
        if any(_matches(key, path) for key, _ in rows):
            continue
        ancestors = [path.rsplit(".", n)[0] for n in range(1, path.count(".") + 1)]
        if any(_matches(key, a) and f"`{name}`" in meaning for key, meaning in rows for a in ancestors):
            continue
        missing.append(path)
    assert not missing, "schema keys not documented in config/README.md: " + ", ".join(missing)


def test_every_documented_key_exists():
    keys, _ = documented()
    schema = _config_schema()
    stale = [
        k
        for section, ks in keys.items()
        if not section.startswith("@")
        for k in ks
        if not any(_matches(k, path) for path in schema)
    ]
    for kind in ("model", "train"):
        stale += [f"{kind}.{k}" for k in keys.get(f"@{kind}", set()) if k not in library_keys(kind)]
    assert not stale, "config/README.md documents keys the schemas do not allow: " + ", ".join(sorted(stale))


@pytest.mark.parametrize("kind", ["model", "train"])
def test_every_library_field_is_documented(kind):
    keys, _ = documented()
    set_per_job = {"seed", "threads", "init_from", "vocab_size"}
    missing = library_keys(kind) - keys.get(f"@{kind}", set()) - set_per_job
    assert not missing, f"`{kind}` fields not documented in config/README.md: " + ", ".join(sorted(missing))
