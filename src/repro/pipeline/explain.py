"""A claim or an item walked back to its runs, in plain text: `python -m repro explain`.

Auditing one verdict otherwise means reading five files: the claim's row in claims.csv, its code, the
tidy CSVs it read, the jobs that made them and the run.json of every model behind them. `explain_claim`
puts them on one page:

- the claim as registered (statement, class, paper value, tolerance) and its row in the tree's claims.csv
  (decision rule, measured interval, verdict, gate, null, projection, detail);
- each input file with its sha256 and the job (rule) that made it, found in the lineage cards of the
  paper's figures and tables;
- the training runs upstream of those files (their run.json: config hash, steps, final losses);
- the figure or table and notebook the claim belongs to;
- the command that judges it again, and the one that recomputes it from its data.

`explain_item` lists an item's claims with their verdicts and its lineage (steps, seeds, cost).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from repro.pipeline.claims import PHASES, Claim, load_claims
from repro.pipeline.rebuild import rebuild_command
from repro.pipeline.verify import PATH_WORD

#: How many runs an explanation lists before it summarises the rest.
SHOWN_RUNS = 12


class ExplainError(LookupError):
    """The claim or item is not registered, or the tree has no record of it; the message says which."""


@dataclass(frozen=True)
class Step:
    """One job of a lineage card."""

    rule: str
    outputs: tuple[str, ...]
    inputs: tuple[str, ...]
    command: str = ""


def _cards(paper_dir: Path) -> list[dict]:
    cards = []
    for folder in ("figures", "tables"):
        for path in sorted((paper_dir / folder).glob("*.lineage.json")):
            try:
                cards.append(json.loads(path.read_text()))
            except (OSError, json.JSONDecodeError):
                continue  # a damaged card is `repro verify`'s business; explain shows what it can read
    return cards


def _steps(cards: list[dict]) -> dict[str, Step]:
    """Each output path recorded in the cards, with the job that made it."""
    made_by = {}
    for card in cards:
        for step in card.get("steps", []):
            job = Step(step["rule"], tuple(step.get("outputs", [])), tuple(i["path"] for i in step.get("inputs", [])))
            for output in job.outputs:
                made_by[output] = job
    return made_by


def _upstream(paths: list[str], made_by: dict[str, Step]) -> list[Step]:
    """The jobs behind `paths`, nearest first, each once."""
    seen, order, queue = set(), [], list(paths)
    while queue:
        job = made_by.get(queue.pop(0))
        if job is None or job in seen:
            continue
        seen.add(job)
        order.append(job)
        queue.extend(job.inputs)
    return order


def _runs(jobs: list[Step], workdir: Path) -> list[Path]:
    """The training runs (folders holding a run.json) whose files the jobs read or wrote, or that lie in
    a folder a job's command names (a job that trains several runs writes them there, undeclared)."""
    runs = set()
    for job in jobs:
        for path in (*job.inputs, *job.outputs):
            folder = (workdir / path).parent
            if (folder / "run.json").is_file():
                runs.add(folder)
        for word in PATH_WORD.findall(job.command):
            folder = workdir / word.rstrip("/")
            if len(Path(word).parts) > 3 and folder.is_dir():  # below results/<tree>/<paper>/
                runs.update(
                    record.parent
                    for record in folder.rglob("run.json")
                    if not any(part.startswith("previous-") for part in record.parts)
                )
    return sorted(runs)


def _run_line(run: Path, workdir: Path) -> str:
    record = json.loads((run / "run.json").read_text())
    final = record.get("final") or {}
    losses = ", ".join(f"{key} {value:.4g}" for key, value in final.items() if key.endswith("loss"))
    steps = final.get("step", "?")
    seed = (record.get("config") or {}).get("seed", "?")
    return f"{_relative(run, workdir)}  seed {seed}, {steps} steps, {losses or 'no loss recorded'}, " + (
        f"config {str(record.get('config_hash', '?'))[:12]}"
    )


def _relative(path: Path, workdir: Path) -> str:
    try:
        return path.resolve().relative_to(workdir.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _sha(path: Path) -> str:
    from repro.data.cards import file_sha256

    return file_sha256(path)[:12] if path.is_file() else "missing"


def find_claim(paper: str, key: str) -> Claim:
    """The registered claim `key` of `paper` (its id, or "item/id")."""
    claim_id = key.rsplit("/", 1)[-1]
    for c in load_claims(paper):
        if c.claim_id == claim_id:
            return c
    raise ExplainError(f"{paper} has no claim {claim_id!r}; `python -m repro claims list --paper {paper}` lists them")


def _row(paper_dir: Path, c: Claim) -> pd.Series | None:
    path = paper_dir / "claims.csv"
    if not path.is_file():
        return None
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    rows = table[table["claim"].str.startswith(f"{c.claim_id}: ")]
    return rows.iloc[0] if len(rows) else None


def _item_files(paper_dir: Path, item: str, workdir: Path) -> list[str]:
    candidates = [
        paper_dir / "figures" / f"{item}.png",
        paper_dir / "tables" / f"{item}.md",
        paper_dir / "notebooks" / f"{item}.ipynb",
        paper_dir / "notebooks" / f"{item}.html",
    ]
    return [_relative(path, workdir) for path in candidates if path.is_file()]


def explain_claim(paper: str, key: str, results: str | Path, workdir: str | Path = ".") -> str:
    """The page of one claim in the results tree `results` (e.g. results/laptop)."""
    workdir, results = Path(workdir), Path(results)
    c = find_claim(paper, key)
    paper_dir = results / paper
    lines = [
        f"{c.paper} / {c.item} / {c.claim_id}  ({c.kind})",
        f"  statement:   {c.statement}",
        f"  paper:       {c.paper_value}",
        f"  tolerance:   {c.tolerance}",
        f"  gate:        {c.gate.description if c.gate else 'none declared'}",
        f"  null:        {c.null.description if c.null else 'none declared'}",
    ]
    if c.phase:
        lines.append(f"  phase:       {c.phase} ({PHASES[c.phase]})")
    lines.append("")
    row = _row(paper_dir, c)
    if row is None:
        lines += [f"Not judged in {results.as_posix()}: its claims.csv has no row for it (run the workflow first).", ""]
    else:
        lines += [f"Verdict in {results.as_posix()} ({row['scale']} scale): {row['verdict']}"]
        for name in ("rule", "measured", "gate", "null", "seeds", "seeds_to_decide", "detail"):
            if row.get(name, ""):
                lines.append(f"  {name.replace('_', ' ') + ':':<16} {row[name]}")
        lines.append("")
    made_by = _steps(_cards(paper_dir))
    lines.append(f"Inputs (relative to {paper_dir.as_posix()}/):")
    paths = []
    for name in c.inputs:
        path = paper_dir / name
        shown = _relative(path, workdir)
        paths.append(shown)
        job = made_by.get(shown)
        made = f"made by {job.rule}" if job else "not in a lineage card"
        lines.append(f"  {name}  sha256 {_sha(path)}…  {made}")
    jobs = _upstream(paths, made_by)
    runs = _runs(jobs, workdir)
    lines += ["", f"Runs behind them: {len(runs)}"]
    lines += [f"  {_run_line(run, workdir)}" for run in runs[:SHOWN_RUNS]]
    if len(runs) > SHOWN_RUNS:
        lines.append(
            f"  ... and {len(runs) - SHOWN_RUNS} more (`python -m repro explain {paper} {c.item}` lists the jobs)"
        )
    files = _item_files(paper_dir, c.item, workdir)
    lines += ["", f"Belongs to {c.item}: {', '.join(files) if files else 'not drawn in this tree'}", ""]
    claims_csv = _relative(paper_dir / "claims.csv", workdir)
    lines += [
        "Judge it again (every claim of the paper; fast):",
        f"  {rebuild_command([claims_csv], results_root=results)}",
    ]
    data = [p for p in paths if p in made_by]
    if data:
        lines += [
            "Recompute its data and everything downstream (the jobs above, and the judging):",
            f"  {rebuild_command(data, results_root=results)}",
        ]
    return "\n".join(lines) + "\n"


def explain_item(paper: str, item: str, results: str | Path, workdir: str | Path = ".") -> str:
    """The page of one figure or table: its claims and verdicts, then its lineage."""
    workdir, results = Path(workdir), Path(results)
    paper_dir = results / paper
    claims = [c for c in load_claims(paper) if c.item == item]
    card_path = next(
        (
            p
            for p in (paper_dir / "figures" / f"{item}.lineage.json", paper_dir / "tables" / f"{item}.lineage.json")
            if p.is_file()
        ),
        None,
    )
    if not claims and card_path is None:
        raise ExplainError(f"{paper} has no item {item!r} with claims or a lineage card in {paper_dir.as_posix()}")
    lines = [f"{paper} / {item}", ""]
    lines.append(f"Claims: {len(claims)}")
    for c in claims:
        row = _row(paper_dir, c)
        verdict = row["verdict"] if row is not None else "not judged in this tree"
        lines.append(f"  {c.claim_id} ({c.kind}): {verdict}")
    files = _item_files(paper_dir, item, workdir)
    lines += ["", f"Files: {', '.join(files) if files else 'not drawn in this tree'}"]
    if card_path is not None:
        card = json.loads(card_path.read_text())
        totals = card.get("totals", {})
        code = card.get("code", {})
        lines += [
            f"Lineage ({_relative(card_path, workdir)}): {len(card.get('steps', []))} jobs, seeds {card.get('seeds', [])}, "
            f"{totals.get('wall_seconds', 0) / 60:.1f} min of job wall time, commit {str(code.get('commit'))[:10]}",
        ]
        for step in card.get("steps", []):
            outputs = step.get("outputs", [])
            shown = ", ".join(outputs[:2]) + (f" (+{len(outputs) - 2})" if len(outputs) > 2 else "")
            lines.append(f"  {step['rule']}: {shown}")
        target = card.get("file")
        if target:
            lines += ["", "Draw it again from its data:", f"  {rebuild_command([target], results_root=results)}"]
    lines += ["", f"Each claim in full: python -m repro explain {paper} <claim id>"]
    return "\n".join(lines) + "\n"


def explain(paper: str, key: str, results: str | Path, workdir: str | Path = ".") -> str:
    """`key` is a claim id (or item/claim id) or an item of `paper`."""
    ids = {c.claim_id for c in load_claims(paper)}
    if "/" in key or key in ids:
        return explain_claim(paper, key, results, workdir)
    return explain_item(paper, key, results, workdir)


__all__ = ["ExplainError", "explain", "explain_claim", "explain_item", "find_claim"]
