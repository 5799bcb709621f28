"""Comparing two results directories, and reading Snakemake's job records."""

import base64
import json
import shutil

import pandas as pd

from repro.cli import main
from repro.pipeline.claims import COLUMNS
from repro.pipeline.compare import agreement_counts, changed_claims, changed_data, verdict_agreement
from repro.pipeline.lineage import in_dependency_order
from repro.pipeline.provenance import Job, upstream_jobs


def make_results(root, rows, data):
    (root / "p" / "data").mkdir(parents=True)
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(root / "scorecard.csv", index=False)
    for name, text in data.items():
        (root / "p" / "data" / name).write_text(text)
    return root


def row(claim, measured, verdict, kind="empirical", paper="p", seeds_to_decide=""):
    values = {"paper": paper, "item": "fig01", "claim": claim, "class": kind, "paper_value": "x"}
    values.update(measured=measured, tolerance="tol", verdict=verdict, gate="none declared", null="none declared")
    values.update(scale="laptop", phase="end of schedule", seeds="2", detail="", rule="95% t-interval over 2 seeds")
    values.update(seeds_to_decide=seeds_to_decide)
    return [values[column] for column in COLUMNS]


def test_compare_reports_changed_rows_and_data(tmp_path, capsys):
    a = make_results(
        tmp_path / "a",
        [row("c1", "1.0", "reproduced"), row("c2", "2.0", "reproduced")],
        {"fig01.csv": "x\n1\n", "fig02.csv": "y\n2\n"},
    )
    b = make_results(
        tmp_path / "b",
        [row("c1", "1.0", "reproduced"), row("c2", "2.5", "not reproduced"), row("c3", "3", "reproduced")],
        {"fig01.csv": "x\n1\n", "fig02.csv": "y\n3\n"},
    )
    changed = changed_claims(a, b)
    assert list(changed["claim"]) == ["c2", "c3"]
    assert changed.loc[0, "verdict_b"] == "not reproduced" and changed.loc[1, "measured_a"] == "(absent)"
    assert changed_data(a, b) == [("p/data/fig02.csv", "content differs")]
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "2 scorecard row(s) changed" in out and "reproduced  ->  not reproduced" in out
    # Two runs with other seeds: every measurement may move; what matters is which verdicts do.
    assert main(["compare", str(a), str(b), "--verdicts"]) == 0
    out = capsys.readouterr().out
    assert "1 of the 2 claims decided in either run have the same verdict in both (50%); 1 went" in out
    assert "reproduced (2.0)  ->  not reproduced (2.5)" in out and "- p fig01 c3 (only in B)" in out
    shutil.copy(b / "scorecard.csv", a / "scorecard.csv")
    (a / "p" / "data" / "fig02.csv").write_text("y\n3\n")
    assert changed_claims(a, b).empty and changed_data(a, b) == []


def test_verdict_agreement_counts_only_what_can_change_and_only_decided_agreement(tmp_path):
    """Identities and simulations cannot change, and "inconclusive" in both runs is no agreement: the
    share is the same decided verdicts over the claims decided in either run, and every flip between
    reproduced and not reproduced is listed."""
    verdicts = [
        ("same_r", "reproduced", "reproduced"),
        ("same_nr", "not reproduced", "not reproduced"),
        ("flip", "reproduced", "not reproduced"),
        ("decided_once", "inconclusive", "reproduced"),
        ("both_inconclusive", "inconclusive", "inconclusive"),
        ("both_nm", "not measurable at this scale", "not measurable at this scale"),
        ("mixed", "inconclusive", "not measurable at this scale"),
    ]
    rows_a = [row(c, "1", va) for c, va, _ in verdicts] + [row("exact", "0", "reproduced", kind="identity")]
    rows_b = [row(c, "2", vb) for c, _, vb in verdicts] + [row("exact", "0", "reproduced", kind="identity")]
    rows_b.append(row("timed", "1.1", "reproduced", kind="timing", paper="q"))
    tmp = tmp_path
    a, b = make_results(tmp / "a", rows_a, {}), make_results(tmp / "b", rows_b, {})
    both, one_side = verdict_agreement(a, b)
    assert dict(zip(both["claim"], both["outcome"])) == {
        "same_r": "same decided", "same_nr": "same decided", "flip": "flip", "decided_once": "decided once",
        "both_inconclusive": "inconclusive in both", "both_nm": "not measurable in both",
        "mixed": "undecided, differently",
    }  # fmt: skip
    assert one_side.to_dict("records") == [{"paper": "q", "item": "fig01", "claim": "timed", "only_in": "B"}]
    total = agreement_counts(both).iloc[-1]
    assert (total["decided in either"], total["same decided"], total["agreement"], total["flips"]) == (4, 2, "50%", 1)
    # A run's verdicts kept as a CSV (docs/runs/) compare as its results directory does.
    kept = tmp / "kept.csv"
    shutil.copy(a / "scorecard.csv", kept)
    assert verdict_agreement(kept, b)[0].equals(both)


def write_record(workdir, output, rule, inputs, log):
    directory = workdir / ".snakemake" / "metadata"
    directory.mkdir(parents=True, exist_ok=True)
    name = base64.urlsafe_b64encode(output.encode()).decode()
    record = {"rule": rule, "input": inputs, "log": [log], "shellcmd": f"make {output}", "params": [], "starttime": 1.0}
    (directory / name).write_text(json.dumps(record))


def test_upstream_jobs_follow_records_and_find_benchmarks(tmp_path):
    write_record(tmp_path, "r/data.csv", "make_data", [], "r/logs/data.log")
    write_record(tmp_path, "r/fig.png", "plot", ["nb.py", "r/data.csv"], "r/logs/plot/fig.log")
    bench = tmp_path / "r" / "benchmarks" / "plot" / "fig.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tcpu_time\n2.5\t0:00:02\t100.0\t2.0\n")
    jobs = upstream_jobs("r/fig.png", tmp_path)
    assert [j.rule for j in jobs] == ["plot", "make_data"]
    # exact: parsed from the literals "2.5" and "100.0" (a mean over one row)
    assert jobs[0].benchmark(tmp_path).wall_seconds == 2.5 and jobs[0].benchmark(tmp_path).max_rss_mb == 100.0
    assert jobs[1].benchmark(tmp_path) is None
    # A stop predicate keeps the walk out of annotation inputs (a notebook's claims.csv).
    assert [j.rule for j in upstream_jobs("r/fig.png", tmp_path, stop_at=lambda p: p.endswith("data.csv"))] == ["plot"]
    assert Job("t", 'x --spec {"seed": 3}', [], [], [], ["r/runs/a/seed1/model"]).seeds() == [1, 3]


def test_compute_and_spans_count_only_the_jobs_of_their_results_directory(tmp_path):
    """One working directory holds a run and a run with shifted seeds; each summary counts its own jobs."""
    from repro.pipeline.compute import compute_accounting
    from repro.pipeline.run_summary import job_spans

    for root, seconds in (("results/laptop", 2.5), ("results/laptop-seeds+10", 4.0)):
        write_record(tmp_path, f"{root}/p/data.csv", "make_data", [], f"{root}/logs/data.log")
        bench = tmp_path / root / "benchmarks" / "data.tsv"
        bench.parent.mkdir(parents=True)
        bench.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{seconds}\t0:00:02\t100.0\t2.0\n")
    for record in (tmp_path / ".snakemake" / "metadata").iterdir():
        record.write_text(json.dumps(dict(json.loads(record.read_text()), endtime=2.0)))
    table = compute_accounting(tmp_path, "results/laptop", ["p"], {}).set_index("level")
    # exact: one job's "2.5" parsed from text, summed alone
    assert table.loc["total", "jobs"] == 1 and table.loc["total", "wall_seconds"] == 2.5
    assert table.loc["paper", "paper"] == "p"
    assert len(job_spans(tmp_path, "results/laptop-seeds+10", ["p"])) == 1


def test_lineage_steps_follow_dependencies_not_start_times():
    """Two schedulers start independent jobs in different orders; the card lists them the same way."""

    def job(rule, inputs, output, start):
        return Job(rule, f"{rule} {output}", [], inputs, [], [output], starttime=start)

    chain = [
        job("notebook", ["d/b.csv", "d/a.csv"], "fig.png", 1.0),
        job("train_b", ["corpus"], "d/b.csv", 3.0),
        job("train_a", ["corpus"], "d/a.csv", 4.0),
        job("corpus", [], "corpus", 9.0),
    ]
    expected = ["corpus", "train_a", "train_b", "notebook"]
    assert [j.rule for j in in_dependency_order(chain)] == expected
    for j, start in zip(chain, (9.0, 2.0, 1.0, 0.5)):
        j.starttime = start
    assert [j.rule for j in in_dependency_order(list(reversed(chain)))] == expected


def test_the_run_summary_says_why_claims_were_not_measured_and_what_seeds_alone_could_decide():
    from repro.pipeline.run_summary import empirical_by_paper

    def unmeasured(claim, detail, paper="p"):
        values = dict(zip(COLUMNS, row(claim, "x", "not measurable at this scale", paper=paper)))
        return [detail if column == "detail" else values[column] for column in COLUMNS]

    rows = [row("r", "1", "reproduced"), row("i", "0", "inconclusive", seeds_to_decide="7")]
    rows += [
        unmeasured("g1", "Health gate failed (failed: the runs ...); here it would read 'reproduced'."),
        unmeasured("g2", "Health gate failed (failed: ...).", paper="q"),
        unmeasured("s", "Replicates: the compared runs share 1 seed."),
        unmeasured("n", "Null not rejected: on its null the check reads 'inconclusive'."),
        unmeasured("o", "Judged at laptop scale and above."),
        row("t", "1", "not measurable at this scale", kind="timing"),  # not an empirical claim: not counted
    ]
    table = empirical_by_paper(pd.DataFrame(rows, columns=list(COLUMNS))).set_index("paper")
    reasons = ["not measurable: gate", "not measurable: seeds", "not measurable: null", "not measurable: other"]
    assert table.loc["p", reasons].tolist() == [1, 1, 1, 1]
    assert table.loc["q", reasons].tolist() == [1, 0, 0, 0]
    assert table.loc["all", reasons].tolist() == [2, 1, 1, 1]
    assert table.loc["p", "not measurable at this scale"] == 4 and table.loc["all", "claims"] == 7
    # decided 1, inconclusive 1 and the one short of seeds: 3 of p's 6; of all 7
    assert table.loc["p", "decidable by seeds"] == "3 (50%)" and table.loc["all", "decidable by seeds"] == "3 (43%)"
    assert table.loc["q", "decidable by seeds"] == "0 (0%)"


def test_run_summary_counts_verdicts_and_cost_and_fills_the_readme(tmp_path):
    import pytest

    from repro.pipeline.run_summary import BEGIN, END, render_summary, replace_block, update_readme

    results = tmp_path / "results"
    results.mkdir()
    rows = [row("c1", "1", "reproduced"), row("c2", "2", "not reproduced"), row("c3", "3", "reproduced")]
    rows += [row(f"i{k}", "0", "inconclusive", seeds_to_decide=n) for k, n in enumerate(["4", "12", "12", "400", ""])]
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(results / "scorecard.csv", index=False)
    pd.DataFrame(
        [["total", "all", "all", 3, 180.0, 150.0, 500.0], ["paper", "p", "p", 3, 180.0, 150.0, 500.0]],
        columns=["level", "paper", "name", "jobs", "wall_seconds", "cpu_seconds", "max_rss_mb"],
    ).to_csv(results / "compute.csv", index=False)
    text = render_summary(results, ["p"], tmp_path)
    table_row = next(line for line in text.splitlines() if line.startswith("| p "))
    cells = [c.strip() for c in table_row.strip("|").split("|")]
    assert cells[:7] == ["p", "laptop", "2", "1", "5", "0", "8"]  # paper, scale, verdict counts, claims
    assert cells[7:] == ["3", "2.5", "500"]  # job wall and CPU minutes, peak MB
    assert "3 jobs, 3 min 00 s of job wall time" in text
    by_class = next(line for line in text.splitlines() if line.startswith("| empirical "))
    assert [c.strip() for c in by_class.strip("|").split("|")] == ["empirical", "2", "1", "5", "0", "8"]
    projected = [line for line in text.splitlines() if line.startswith("| p ")][-1]
    # inconclusive, 1-5, 6-10, 11-30, more than 30, no projection, median
    assert [c.strip() for c in projected.strip("|").split("|")][:8] == ["p", "5", "1", "0", "2", "1", "1", "12"]
    named = projected.strip("|").split("|")[8].strip()  # each inconclusive claim with its projection
    assert named == "fig01/i0: 4, fig01/i1: 12, fig01/i2: 12, fig01/i3: 400, fig01/i4: –", named
    empirical = next(line for line in text.splitlines() if line.startswith("| all "))
    # verdicts, claims, decided, not measurable by reason (gate, seeds, null, other), decidable by seeds
    expected = ["all", "2", "1", "5", "0", "8", "3 (38%)", "0", "0", "0", "0", "8 (100%)"]
    assert [c.strip() for c in empirical.strip("|").split("|")] == expected
    readme = tmp_path / "README.md"
    readme.write_text(f"# t\n\nbefore\n{BEGIN}\nold numbers\n{END}\nafter\n")
    (results / "SUMMARY.md").write_text("# Run summary\n\n" + text)
    update_readme(results / "SUMMARY.md", readme)
    once = readme.read_text()
    assert "old numbers" not in once and "| p " in once and once.endswith(f"{END}\nafter\n")
    update_readme(results / "SUMMARY.md", readme)
    assert readme.read_text() == once  # idempotent
    with pytest.raises(ValueError, match="run-summary"):
        replace_block("no markers here", "x")
