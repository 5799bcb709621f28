"""The run at a glance: verdicts and compute per paper, for results/SUMMARY.md and the README.

``results/SUMMARY.md`` is written by the DAG after the scorecard and the compute accounting.
It says when the run happened (the first job's start and the last job's end, from
Snakemake's job records), from which commit, at which scale, how many claims of each paper
reproduced, and what the jobs cost. ``python -m repro report readme`` copies it between the
README's ``<!-- run-summary:begin -->`` and ``<!-- run-summary:end -->`` markers, so that the
README quotes a run instead of numbers typed by hand.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from repro.pipeline.claims import INCONCLUSIVE, NEW_FINDING, NOT_MEASURABLE, NOT_REPRODUCED, REPRODUCED, VERDICTS
from repro.pipeline.compute import all_jobs, paper_of
from repro.pipeline.lineage import code_version
from repro.pipeline.scorecard import reason, summarise
from repro.pipeline.tables import to_markdown

BEGIN, END = "<!-- run-summary:begin -->", "<!-- run-summary:end -->"


def _utc(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def job_spans(workdir: Path, results_dir: str, papers: list[str]) -> pd.DataFrame:
    """One row per recorded job with its paper and start/end times (seconds since the epoch)."""
    rows = [
        {"paper": paper_of(job, results_dir, papers), "start": job.starttime, "end": job.endtime}
        for job in all_jobs(workdir, results_dir)
        if job.starttime is not None and job.endtime is not None
    ]
    return pd.DataFrame(rows, columns=["paper", "start", "end"])


def summary_table(scorecard: pd.DataFrame, compute: pd.DataFrame) -> pd.DataFrame:
    """Per paper: verdict counts (from the scorecard) and job time (from compute.csv)."""
    verdicts = summarise(scorecard)
    per_paper = compute[compute["level"] == "paper"].set_index("paper")
    rows = []
    for _, row in verdicts.iterrows():
        cost = per_paper.loc[row["paper"]] if row["paper"] in per_paper.index else None
        rows.append(
            {
                "paper": row["paper"],
                "scale": row["scale"],
                **{v: row[v] for v in VERDICTS},
                "claims": row["claims"],
                "job wall (min)": round(cost["wall_seconds"] / 60, 1) if cost is not None else float("nan"),
                "job CPU (min)": round(cost["cpu_seconds"] / 60, 1) if cost is not None else float("nan"),
                "peak RSS (MB)": round(cost["max_rss_mb"]) if cost is not None else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def by_class(scorecard: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts per class of claim, over every paper."""
    if "class" not in scorecard:  # a scorecard written before claims had classes
        scorecard = scorecard.assign(**{"class": "unclassified"})
    counts = scorecard.groupby("class")["verdict"].value_counts().unstack(fill_value=0)
    table = counts.reindex(columns=list(VERDICTS), fill_value=0)
    return table.assign(claims=table.sum(axis=1)).reset_index()


#: Why an empirical claim was not measurable, in the summary's words (see repro.pipeline.scorecard.REASONS).
UNMEASURED = {
    "its runs failed their health gate": "gate",
    "too few seeds (or rounds)": "seeds",
    "its null did not come out 'not reproduced'": "null",
}


def empirical_by_paper(scorecard: pd.DataFrame) -> pd.DataFrame:
    """Per paper, the verdicts of its empirical claims (effects of trained models), the share decided
    (reproduced or not reproduced), why the not-measurable ones were not judged (a failed health gate,
    too few seeds, a null that did not reject, anything else), and the most that more seeds alone could
    decide: the decided, the inconclusive and those short of seeds. The rest need runs that pass their
    gates (longer or different training) or nulls that reject."""
    if "class" not in scorecard:
        return pd.DataFrame()
    empirical = scorecard[scorecard["class"] == "empirical"]
    counts = empirical.groupby("paper")["verdict"].value_counts().unstack(fill_value=0)
    table = counts.reindex(columns=list(VERDICTS), fill_value=0)
    unmeasured = empirical[empirical["verdict"] == NOT_MEASURABLE]
    details = unmeasured["detail"] if "detail" in unmeasured else [""] * len(unmeasured)
    why = [UNMEASURED.get(reason(detail), "other") for detail in details]
    reasons = pd.crosstab(unmeasured["paper"], pd.Series(why, index=unmeasured.index, name="why"))
    reasons = reasons.reindex(index=table.index, columns=[*UNMEASURED.values(), "other"], fill_value=0)
    table.loc["all"] = table.sum()
    reasons.loc["all"] = reasons.sum()
    claims = table.sum(axis=1)
    decided = table[REPRODUCED] + table[NOT_REPRODUCED]
    reach = decided + table[INCONCLUSIVE] + reasons["seeds"]

    def share(n: pd.Series) -> list[str]:
        return [f"{k} ({p:.0f}%)" for k, p in zip(n, (100 * n / claims.where(claims > 0)).round(0))]

    not_measured = {f"not measurable: {what}": reasons[what].astype(int) for what in (*UNMEASURED.values(), "other")}
    return table.assign(
        claims=claims, decided=share(decided), **not_measured, **{"decidable by seeds": share(reach)}
    ).reset_index()


def new_findings(scorecard: pd.DataFrame) -> pd.DataFrame:
    """The claims of class "new finding" (questions no paper asked), each with its verdict and interval:
    listed apart from the reproductions."""
    if "class" not in scorecard:
        return pd.DataFrame()
    rows = scorecard[scorecard["class"] == NEW_FINDING]
    columns = ["paper", "item", "claim", "verdict", "measured"]
    return rows[columns].sort_values(["paper", "item"], kind="stable").reset_index(drop=True)


#: Buckets of projected seeds: how far each inconclusive claim is from a decision.
PROJECTION_BUCKETS = (5, 10, 30)


def projected_seeds(scorecard: pd.DataFrame) -> pd.DataFrame:
    """Per paper, its inconclusive claims by the seeds projected to decide them (column
    ``seeds_to_decide`` of the scorecard: a projection from each claim's observed spread)."""
    if "seeds_to_decide" not in scorecard:  # a scorecard written before verdicts carried projections
        return pd.DataFrame()
    rows = []
    for paper, group in scorecard[scorecard["verdict"] == INCONCLUSIVE].groupby("paper", sort=True):
        seeds = pd.to_numeric(group["seeds_to_decide"], errors="coerce")
        row = {"paper": paper, "inconclusive": len(group)}
        low = 0
        for high in PROJECTION_BUCKETS:
            row[f"{low + 1}-{high} seeds"] = int(((seeds > low) & (seeds <= high)).sum())
            low = high
        row[f"more than {low}"] = int((seeds > low).sum())
        row["no projection"] = int(seeds.isna().sum())
        row["median projected"] = float(seeds.median()) if seeds.notna().any() else float("nan")
        row["claims (item/id: projected seeds)"] = ", ".join(
            f"{item}/{claim.split(':', 1)[0]}: {'–' if pd.isna(n) else int(n)}"
            for item, claim, n in sorted(zip(group["item"], group["claim"], seeds), key=lambda t: (t[0], t[1]))
        )
        rows.append(row)
    return pd.DataFrame(rows)


def render_summary(results_dir: Path | str, papers: list[str], workdir: Path | str = ".") -> str:
    """The markdown of results/SUMMARY.md (see the module docstring)."""
    results_dir, workdir = Path(results_dir), Path(workdir)
    scorecard = pd.read_csv(results_dir / "scorecard.csv", dtype=str, keep_default_na=False)
    compute = pd.read_csv(results_dir / "compute.csv")
    table = summary_table(scorecard, compute)
    total = compute[compute["level"] == "total"].iloc[0]
    spans = job_spans(workdir, str(results_dir), papers)
    code = code_version(workdir)
    commit = code.get("commit") or "unknown"
    dirty = " (with uncommitted changes)" if code.get("dirty") else ""
    scales = ", ".join(sorted(set(scorecard["scale"]))) or "none"
    lines = [f"Scale: {scales}. Code: commit `{str(commit)[:10]}`{dirty}."]
    if len(spans):
        first, last = spans["start"].min(), spans["end"].max()
        lines.append(
            f"Jobs ran from {_utc(first)} to {_utc(last)} ({_duration(last - first)} from the first start to "
            "the last end; this span includes any pause between separate invocations)."
        )
    lines += [
        f"All jobs together: {int(total['jobs'])} jobs, {_duration(total['wall_seconds'])} of job wall time, "
        f"{_duration(total['cpu_seconds'])} of CPU time, peak memory of one job {total['max_rss_mb']:.0f} MB "
        f"(from the rules' benchmark files; {(results_dir / 'compute.csv').as_posix()} has every rule and claim).",
        "",
        to_markdown(table).rstrip(),
        "",
    ]
    empirical = empirical_by_paper(scorecard)
    if len(empirical):
        lines += [
            "Empirical claims (effects of trained models) by paper, the share decided (reproduced or not "
            "reproduced), why the rest were not measurable (gate: runs failed their health gate; seeds: too few; "
            "null: not rejected), and the most that more seeds alone could decide (decided, inconclusive or short "
            "of seeds; the others need runs that pass their gates):",
            "",
            to_markdown(empirical).rstrip(),
            "",
        ]
    findings = new_findings(scorecard)
    if len(findings):
        lines += [
            "New findings (questions across the papers that none of them asked, each fixed before its results; "
            "'not reproduced' means the predicted effect was not found):",
            "",
            to_markdown(findings).rstrip(),
            "",
        ]
    lines += [
        "By class of claim (identity: exact identities; simulation: analytic results on constructed inputs; "
        "empirical: effects of trained models; timing; new finding: effects no paper states):",
        "",
        to_markdown(by_class(scorecard)).rstrip(),
        "",
    ]
    projection = projected_seeds(scorecard)
    if len(projection):
        lines += [
            "Inconclusive claims by the number of seeds projected to decide them (from each claim's observed "
            "spread: the seeds at which its interval would no longer straddle its boundary; a projection, not a "
            "promise; 'no projection' (–) where the estimate sits on the boundary or no spread was measured), "
            "each claim named:",
            "",
            to_markdown(projection).rstrip(),
            "",
        ]
    lines += [
        'Claims at smoke scale are never judged ("not measurable at this scale"); at laptop scale they',
        "judge small-scale analogues of the papers' experiments, not the original settings.",
    ]
    return "\n".join(lines) + "\n"


def write_summary(results_dir: Path | str, papers: list[str], out: Path | str, workdir: Path | str = ".") -> Path:
    out = Path(out)
    out.write_text("# Run summary\n\n" + render_summary(results_dir, papers, workdir), encoding="utf-8")
    return out


def replace_block(readme: str, block: str) -> str:
    """`readme` with the text between the run-summary markers replaced by `block`."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise ValueError(f"the README must hold one {BEGIN} line followed by one {END} line")
    head, rest = readme.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{block.strip()}\n{END}{tail}"


def update_readme(summary: Path | str, readme: Path | str) -> Path:
    """Copy results/SUMMARY.md (without its title) into the README between the markers."""
    text = Path(summary).read_text(encoding="utf-8")
    body = text.split("\n", 1)[1] if text.startswith("# ") else text
    readme = Path(readme)
    readme.write_text(replace_block(readme.read_text(encoding="utf-8"), body), encoding="utf-8")
    return readme
