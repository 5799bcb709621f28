"""Checks that need the configuration's sources (the YAML files, `snakemake --config`), not only
the merged config; `repro.pipeline.configcheck.check_config` runs them.

* `yaml_problems`: a file that is not valid YAML, named with its line and column. Snakemake says
  only "Config file is not valid JSON or YAML", without the file or the line.
* `scale_problems`: config/config.yaml, config/smoke.yaml and config/paper.yaml describe the laptop,
  smoke and paper scale; a `scale` key in one of them that says otherwise is refused. Other files
  (overlays of your own) are not constrained.
* `type_command_line`: Snakemake 9 reads the value of `--config key=VALUE` with YAML's BaseLoader
  when it is not a plain number or True/False, so every value nested in `key={...}` (and every list
  item) arrives as a string ('5', 'false', 'null') merged over the files' value. They are re-read
  as YAML scalars, which is what the same text means in a YAML file. Dotted keys
  (`--config a.b=1`) never reach the Snakefile: Snakemake refuses them itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

#: The scale each of the three scale files describes (matched on config/<name>).
SCALE_FILES = {"config.yaml": "laptop", "smoke.yaml": "smoke", "paper.yaml": "paper"}

OVERLAY_HINT = "an overlay YAML file passed with --configfile"


def _read(path: Path) -> tuple[Any, str | None]:
    """(parsed YAML, None) or (None, a problem naming the file, line and column)."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8")), None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "an unknown line"
        context = ""
        if err.context and err.context_mark and err.context_mark is not mark:
            context = f" ({err.context} at line {err.context_mark.line + 1}, column {err.context_mark.column + 1})"
        return None, f"config file {path} is not valid YAML at {where}: {err.problem or err}{context}"
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        return None, f"config file {path} is not valid YAML: {err}"


def yaml_problems(paths: Iterable[str | Path]) -> list[str]:
    """One problem per existing file that does not parse (missing files are Snakemake's to report)."""
    problems = []
    for path in map(Path, paths):
        problem = _read(path)[1] if path.is_file() else None
        if problem:
            problems.append(problem)
    return problems


def scale_problems(paths: Iterable[str | Path]) -> list[str]:
    problems = []
    for path in map(Path, paths):
        expected = SCALE_FILES.get(path.name) if path.parent.name == "config" else None
        if expected is None or not path.is_file():
            continue
        data, _ = _read(path)
        scale = data.get("scale") if isinstance(data, dict) else None
        if scale is not None and scale != expected:
            problems.append(
                f"config key scale is {scale!r} in {path}, which is the {expected} scale file; set scale: {expected} "
                "there, or save settings of another scale under another file name"
            )
    return problems


def _scalar(text: str) -> Any:
    """`text` as a YAML scalar (int, float, bool, null or str); other results keep the text."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if value is None or isinstance(value, (bool, int, float, str)) else text


def _typed(value: Any) -> Any:
    if isinstance(value, str):
        return _scalar(value)
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _typed(item) for key, item in value.items()}
    return value


def type_command_line(config: dict, command_line: Mapping | None) -> list[str]:
    """Re-read as YAML, in `config` (in place), every value that `--config` set; returns their key paths.

    `command_line` is what Snakemake parsed from `--config` (workflow.config_settings.config). Snakemake
    merges mappings key by key and replaces anything else whole, so each non-mapping value of
    `command_line` sits at the same path in `config`; it is replaced only while it is still that value.
    """
    keys: list[str] = []

    def walk(given: Mapping, node: dict, prefix: str) -> None:
        for key, value in given.items():
            path = f"{prefix}{key}"
            if not isinstance(node, dict) or key not in node:
                continue
            if isinstance(value, Mapping):
                walk(value, node[key], path + ".")
            elif node[key] == value:
                node[key] = _typed(value)
                keys.append(path)

    walk(command_line or {}, config, "")
    return keys


__all__ = ["OVERLAY_HINT", "SCALE_FILES", "scale_problems", "type_command_line", "yaml_problems"]
