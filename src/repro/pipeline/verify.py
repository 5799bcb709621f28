"""Check a results tree against every sha256 it records, without running the DAG.

A job checks a data file against its card when it reads it; a file damaged after the fact (a flipped
bit, an edit whose timestamp was put back) is otherwise found only by the next job that happens to read
it, or never. `damaged_files` checks every file whose sha256 the tree records somewhere:

- data cards (``card.json``, ``NAME.card.json``): every dataset file they list (data, tokens, tokenizers);
- checkpoint pointers (``checkpoint.json``): the checkpoint file of each training run;
- lineage cards (``*.lineage.json``): every input of every step of an item's chain (the model files,
  tidy CSVs and datasets) and the figure or table itself.

For each damaged file it names what to force so that the DAG makes it again (repro.pipeline.rebuild):
the file itself where a rule declares it, the declared output of the job that trained a run for a
checkpoint (whose pointer is removed first, so that the run trains from the start).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from repro.data.cards import file_sha256
from repro.training.checkpoint import STATE_FILE

CARD_PATTERNS = ("card.json", "*.card.json")


@dataclass(frozen=True)
class Damage:
    """A file that is missing or differs from the sha256 recorded in `source`, and how to make it again:
    delete `remove`, then force `target`."""

    path: Path
    problem: str
    source: Path
    target: Path | None
    remove: tuple[Path, ...] = field(default=())


@dataclass
class _Record:
    path: Path
    sha256: str
    source: Path
    target: Path | None
    remove: tuple[Path, ...] = ()


def _skipped(path: Path, root: Path) -> bool:
    """Folders that hold no current output: superseded runs, logs and benchmarks."""
    parts = path.relative_to(root).parts
    return any(part.startswith("previous-") for part in parts) or parts[:1] in (("logs",), ("benchmarks",))


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


#: A results path in a job's command line (a job that trains several runs names their folder there).
PATH_WORD = re.compile(r"results/[^\s'\",\]]+")


class _JobOutputs:
    """Which declared output to force for a run directory, from the steps of the lineage cards: an output
    in the run directory itself, else the first output of a job whose command names the run directory or
    the deepest folder above it (below results/<tree>/<paper>), as a job that trains several runs does."""

    def __init__(self, steps: list[dict], workdir: Path):
        self.workdir, self.in_dir, self.named = workdir, {}, {}
        for step in steps:
            outputs = [workdir / output for output in step.get("outputs") or []]
            for output in outputs:
                self.in_dir.setdefault(output.parent, output)
            for word in PATH_WORD.findall(step.get("command", "")) if outputs else []:
                self.named.setdefault(word.rstrip("/"), outputs[0])

    def of_run(self, run_dir: Path) -> Path | None:
        if run_dir in self.in_dir:
            return self.in_dir[run_dir]
        for folder in [run_dir, *run_dir.parents]:
            if len(folder.relative_to(self.workdir).parts) <= 3:
                return None
            if folder.relative_to(self.workdir).as_posix() in self.named:
                return self.named[folder.relative_to(self.workdir).as_posix()]
        return None


def _records(root: Path, problems: list[Damage]) -> list[_Record]:
    workdir = root.parent.parent  # results/<tree>: lineage cards name files relative to the workdir
    records, lineage, steps = [], [], {}  # the data cards' and checkpoints' records first, then the lineage's
    for card in sorted(root.rglob("*.lineage.json")):
        content = _read_json(card)
        if not isinstance(content, dict):
            problems.append(Damage(card, "not a readable lineage card", card, card))
            continue
        if content.get("file") and content.get("sha256"):
            item = workdir / content["file"]
            lineage.append(_Record(item, content["sha256"], card, item))
        for step in content.get("steps", []):
            if not isinstance(step, dict):
                continue
            steps.setdefault((step.get("rule"), step.get("command")), step)
            for entry in step.get("inputs", []):
                path = workdir / entry.get("path", "") if isinstance(entry, dict) else None
                if path is not None and entry.get("sha256") and path.is_relative_to(root):
                    lineage.append(_Record(path, entry["sha256"], card, path))
    for pattern in CARD_PATTERNS:
        for card in sorted(root.rglob(pattern)):
            if card.name.endswith(".lineage.json") or _skipped(card, root):
                continue
            content = _read_json(card)
            if not isinstance(content, dict) or not isinstance(content.get("files"), dict):
                stem = card.name.removesuffix(".card.json")
                siblings = sorted(p for p in card.parent.glob(f"{stem}.*") if p != card)
                target = card if card.name == "card.json" or not siblings else siblings[0]
                problems.append(Damage(card, "not a readable data card", card, target))
                continue
            for name, entry in sorted(content["files"].items()):
                records.append(_Record(card.parent / name, entry.get("sha256", ""), card, card.parent / name))
    jobs = _JobOutputs(list(steps.values()), workdir)
    for pointer_file in sorted(root.rglob(STATE_FILE)):
        if _skipped(pointer_file, root):
            continue
        run_dir, pointer = pointer_file.parent, _read_json(pointer_file)
        target = jobs.of_run(run_dir)
        if not isinstance(pointer, dict) or "file" not in pointer or "sha256" not in pointer:
            problems.append(
                Damage(pointer_file, "not a readable checkpoint record", pointer_file, target, (pointer_file,))
            )
            continue
        records.append(_Record(run_dir / pointer["file"], pointer["sha256"], pointer_file, target, (pointer_file,)))
    return records + lineage


def damaged_files(root: str | Path) -> tuple[int, list[Damage]]:
    """(number of files checked, what is damaged) for the results tree `root` (results/<tree>)."""
    root = Path(root)
    problems: list[Damage] = []
    records = _records(root, problems)
    hashes: dict[Path, str | None] = {}
    for record in records:
        if record.path not in hashes:
            hashes[record.path] = file_sha256(record.path) if record.path.is_file() else None
        actual = hashes[record.path]
        if actual != record.sha256 and all(d.path != record.path for d in problems):
            what = f"missing (recorded in {record.source})" if actual is None else f"differs from {record.source}"
            problems.append(Damage(record.path, what, record.source, record.target, record.remove))
    return len(hashes), problems
