"""The whole DAG, end to end, at smoke scale, in a fresh copy of the repository."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import copy_checkout, snakemake_command, snakemake_env

from repro.papers import PAPERS
from repro.pipeline import claims
from repro.pipeline.claims import COLUMNS, VERDICTS
from repro.pipeline.code_digest import source_digest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        snakemake_command(*args), cwd=workdir, capture_output=True, text=True, env=snakemake_env(workdir), timeout=900
    )


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    workdir = copy_checkout(tmp_path_factory.mktemp("clone"))
    result = snakemake(workdir)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    report = snakemake(workdir, "--report", "results/smoke/report.html")
    assert report.returncode == 0, report.stderr[-4000:]
    (workdir / "report.stderr").write_text(report.stderr)
    return workdir


def test_report_builds_without_warnings_or_markup_errors(smoke_run):
    """What `make reproduce` prints last: neither Snakemake's warning of a resource it cannot evaluate for the
    report nor docutils' complaint about a caption (an `|x|` in reST is a substitution reference)."""
    printed = (smoke_run / "report.stderr").read_text()
    assert "Report created." in printed
    assert "never awaited" not in printed and "(ERROR/" not in printed, printed[-4000:]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_promised_output_exists(smoke_run):
    results = smoke_run / "results" / "smoke"
    for path in [
        "simplified_blocks/figures/fig26.png",
        "simplified_blocks/figures/fig26.pdf",
        "simplified_blocks/notebooks/fig26.ipynb",
        "simplified_blocks/notebooks/fig26.html",
        "simplified_blocks/data/fig26_curves.csv",
        "scorecard.csv",
        "scorecard.md",
        "data/code_corpus/card.json",
        "data/code_corpus/tokens/card.json",
        "simplified_blocks/figures/fig26.lineage.json",
        "simplified_blocks/REPRODUCIBILITY.md",
        "compute.csv",
        "SUMMARY.md",
        "report.html",
    ]:
        assert (results / path).stat().st_size > 0, path


def test_scorecard_has_the_claims_and_honest_smoke_verdicts(smoke_run):
    card = pd.read_csv(smoke_run / "results" / "smoke" / "scorecard.csv")
    assert list(card.columns) == list(COLUMNS)
    fig26 = card[(card["paper"] == "simplified_blocks") & (card["item"] == "fig26")]
    assert len(fig26) >= 2
    assert set(card["verdict"]) <= set(VERDICTS)
    assert (card["scale"] == "smoke").all()
    assert (card["verdict"] == "not measurable at this scale").all()  # smoke runs are too short to judge
    # Every declared null is one the claim's check can fail on, wherever the claim's gate passes. (A smoke
    # model at chance is itself a null: "every head critical" changes nothing when the unpruned model
    # already scores like a constant predictor, so those claims are left to their failed gate.)
    judged = card[card["class"].isin(["empirical", "timing"]) & ~card["gate"].str.startswith("failed")]
    passes_on_null = judged[judged["null"].str.startswith("reproduced on")]
    assert passes_on_null.empty, passes_on_null[["paper", "claim", "null"]].to_string()


def test_every_claim_judged_as_if_at_laptop_scale_reaches_its_verdict_through_an_interval(smoke_run):
    """The smoke tree judged as if it were a laptop run: every empirical or timing verdict must come from
    repro.pipeline.decisions (judge_claim raises otherwise), and a claim whose null does not come out
    'not reproduced' is not judged."""
    for paper in PAPERS:
        card = claims.judge_paper(paper, smoke_run / "results" / "smoke", "laptop")
        decided = card[card["class"].isin(["empirical", "timing"]) & (card["verdict"] != claims.NOT_MEASURABLE)]
        assert (decided["rule"] != "").all(), decided[["claim", "rule"]].to_string()
        assert decided["null"].str.startswith(claims.NOT_REPRODUCED).all(), decided[["claim", "null"]].to_string()


def test_explain_walks_every_claim_and_item_back_to_its_files(smoke_run):
    from repro.pipeline.explain import ExplainError, explain

    results = smoke_run / "results" / "smoke"
    for paper in PAPERS:
        registered = claims.load_claims(paper)
        for c in registered:
            page = explain(paper, c.claim_id, results, smoke_run)
            assert f"{paper} / {c.item} / {c.claim_id}" in page and "Verdict in" in page, page
            assert f"--forcerun results/smoke/{paper}/claims.csv" in page, page
        for item in sorted({c.item for c in registered}):
            page = explain(paper, item, results, smoke_run)
            assert page.startswith(f"{paper} / {item}") and "Claims:" in page
    fig26 = explain("simplified_blocks", "sas_p_matches_pre_ln_per_step", results, smoke_run)
    assert "runs/sas_p/seed0" in fig26 and "config " in fig26  # the runs behind its data, with config hashes
    with pytest.raises(ExplainError, match="no claim"):
        explain("simplified_blocks", "fig999/no_such_claim", results, smoke_run)
    cli = subprocess.run(
        [sys.executable, "-m", "repro", "explain", "simplified_blocks", "fig26", "--results", "results/smoke"],
        cwd=smoke_run,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0 and "sas_p_matches_pre_ln_per_step" in cli.stdout, cli.stderr


def test_power_plans_seeds_from_a_finished_tree(smoke_run):
    planned = subprocess.run(
        [sys.executable, "-m", "repro", "power", "results/smoke", "--out", "power.csv"],
        cwd=smoke_run,
        capture_output=True,
        text=True,
    )
    assert planned.returncode == 0 and re.search(r"\|\s+proposed\s+\|", planned.stdout), planned.stderr[-2000:]
    table = pd.read_csv(smoke_run / "power.csv")
    assert set(table["class"]) <= {"empirical", "timing", "new finding"} and set(table["paper"]) == set(PAPERS)


def test_curves_cover_every_variant_and_seed(smoke_run):
    curves = pd.read_csv(smoke_run / "results/smoke/simplified_blocks/data/fig26_curves.csv")
    assert set(curves["variant"]) == {"pre_ln", "parallel", "sas", "sas_p", "sas_p_nonorm", "vskipinit"}
    assert set(curves["split"]) == {"train", "eval", "heldout"}  # heldout: the final weights on the held-out draw
    # SAS has (2L-1)d^2 fewer parameters than Pre-LN, up to its scalar gains
    params = curves.groupby("variant")["parameters"].first()
    assert params["sas"] < params["pre_ln"]


def test_nothing_left_to_do_and_notebooks_rerun_byte_identical(smoke_run):
    dry = snakemake(smoke_run, "-n")
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr
    # New verdicts rerun the report's captioned copies, not the notebooks that drew the figures; only a
    # table whose data are the verdicts themselves (param_allocation's Table 2) is drawn again.
    rejudged = snakemake(smoke_run, "-n", "--forcerun", "paper_claims")
    planned = rejudged.stdout + rejudged.stderr
    assert rejudged.returncode == 0 and "report_entry" in planned, planned[-3000:]
    assert "figure_notebook" not in planned, planned[-3000:]
    assert set(re.findall(r"^table_notebook\s+(\d+)\s*$", planned, re.M)) == {"1"}, planned[-3000:]
    assert "param_allocation/tables/table02.csv" in planned
    # One figure notebook per paper is re-executed (all of them would double the test's time).
    figures = {}
    for paper_dir in sorted((smoke_run / "results" / "smoke").iterdir()):
        drawn = sorted((paper_dir / "figures").glob("fig*.png")) if paper_dir.is_dir() else []
        if drawn:
            figures[paper_dir.name] = drawn[0]
    assert "simplified_blocks" in figures
    before = {paper: sha(png) for paper, png in figures.items()}
    notebooks = [f"results/smoke/{paper}/notebooks/{png.stem}.html" for paper, png in figures.items()]
    rerun = snakemake(smoke_run, "--force", *notebooks)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert {paper: sha(png) for paper, png in figures.items()} == before


def test_lineage_card_traces_the_figure_to_its_data(smoke_run):
    card = json.loads((smoke_run / "results/smoke/simplified_blocks/figures/fig26.lineage.json").read_text())
    rules = [step["rule"] for step in card["steps"]]
    # Steps are in dependency order: the corpus comes before any training and the notebook is last.
    assert rules[-1] == "figure_notebook"
    assert rules.index("code_corpus") < rules.index("simplified_blocks_train")
    # One job tabulates the curves of every figure, so the card lists every smoke training run;
    # among them are the six variants of Fig 26 (one smoke seed).
    # outputs are results/smoke/simplified_blocks/runs/<variant>/seed<k>/<file>
    runs = {
        Path(out).parts[-3] for s in card["steps"] if s["rule"] == "simplified_blocks_train" for out in s["outputs"]
    }
    assert {"pre_ln", "parallel", "sas", "sas_p", "sas_p_nonorm", "vskipinit"} <= runs
    assert card["seeds"] == [0]
    assert card["sha256"] == sha(smoke_run / "results/smoke/simplified_blocks/figures/fig26.png")
    notebook_step = card["steps"][-1]
    # The notebook's job carries the digest of the repro modules it imports, so that they rerun it.
    assert repr(source_digest(ROOT / "notebooks/simplified_blocks/fig26.py")) in notebook_step["params"]
    curves = next(i for i in notebook_step["inputs"] if i["path"].endswith("fig26_curves.csv"))
    assert curves["sha256"] == sha(smoke_run / curves["path"])
    trained = [s for s in card["steps"] if s["rule"] == "simplified_blocks_train"]
    assert all(s["benchmark"]["wall_seconds"] > 0 for s in trained)
    html = (smoke_run / "results/smoke/simplified_blocks/notebooks/fig26.html").read_text()
    assert "../figures/fig26.lineage.json" in html


def test_compute_accounting_adds_up(smoke_run):
    compute = pd.read_csv(smoke_run / "results/smoke/compute.csv")
    total = compute[compute["level"] == "total"].iloc[0]
    for level in ("paper", "rule"):
        rows = compute[compute["level"] == level]
        assert rows["jobs"].sum() == total["jobs"]
        assert rows["wall_seconds"].sum() == pytest.approx(total["wall_seconds"], rel=1e-6)
        assert rows["cpu_seconds"].sum() == pytest.approx(total["cpu_seconds"], rel=1e-6)
    benchmarks = list((smoke_run / "results/smoke/benchmarks").rglob("*.tsv"))
    assert total["jobs"] == len(benchmarks)  # every benchmarked job counted once
    claims = compute[compute["level"] == "claim"]
    assert len(claims) == len(pd.read_csv(smoke_run / "results/smoke/scorecard.csv"))
    assert (claims["jobs"] > 0).all()


def test_report_opens_in_chromium_with_every_scored_item(smoke_run):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Chromium is not installed (Debian package `chromium`; .ci/run installs it)")
    profile = smoke_run / "chromium-profile"
    result = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=20000",
            "--dump-dom",
            (smoke_run / "results/smoke/report.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    dom = result.stdout
    assert result.returncode == 0 and "<html" in dom.lower(), result.stderr[-2000:]
    # What the page rendered (scripts removed): the navigation lists every paper as a category.
    rendered = re.sub(r"<script\b.*?</script>", "", dom, flags=re.S | re.I)
    # What it holds: the report's own index of files per category (paper) and subcategory (item).
    categories = json.loads(re.search(r"var categories = (\{.*?\});\s*</script>", dom, re.S).group(1))
    results = json.loads(re.search(r"var results = (\{.*?\});\s*</script>", dom, re.S).group(1))
    card = pd.read_csv(smoke_run / "results/smoke/scorecard.csv")
    assert "<span>Scorecard</span>" in rendered
    for paper, item in card[["paper", "item"]].drop_duplicates().itertuples(index=False):
        assert f"<span>{paper}</span>" in rendered, f"category {paper} is not shown"
        suffix = "png" if item.startswith("fig") else "csv"
        path = f"results/smoke/{paper}/report/{item}.{suffix}"
        assert path in categories[paper][item], f"{path} is not in the report"
        assert results[path]["data_uri"].startswith("data:"), f"{path} is not embedded"
        assert "verdicts" in results[path]["caption"]


# Figures that plot speeds measured in the run (tokens per second of each block): the only outputs of a
# fresh clone that may differ from another's, besides time columns and fields.
MEASURED_TIME_FIGURES = {"simplified_blocks": {"fig05", "fig08", "fig28"}}


@pytest.fixture(scope="module")
def second_run(smoke_run, tmp_path_factory):
    """The same DAG in a second fresh clone, given the first clone's step-time table
    (simplified_blocks.mlm.step_times_file): the masked-LM runs then make the same number of updates."""
    kept = tmp_path_factory.mktemp("kept") / "mlm_step_times.csv"
    shutil.copy(smoke_run / "results/smoke/simplified_blocks/data/mlm_step_times.csv", kept)
    workdir = copy_checkout(tmp_path_factory.mktemp("second-clone"))
    (workdir / "kept.yaml").write_text(f"simplified_blocks:\n  mlm:\n    step_times_file: {kept}\n")
    result = subprocess.run(
        snakemake_command(configfiles=("config/smoke.yaml", "kept.yaml")),
        cwd=workdir,
        capture_output=True,
        text=True,
        env=snakemake_env(workdir),
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "nothing timed" in (workdir / "results/smoke/logs/simplified_blocks/mlm/step_times.log").read_text()
    return workdir


def test_two_fresh_clones_compute_the_same_models_data_and_figures(smoke_run, second_run):
    """Byte-identical model files (the masked-LM runs too, given the same step times), data CSVs equal
    outside their time columns, and every figure the same except those that plot measured speeds."""
    from cluster import compare_results

    first, second = smoke_run / "results/smoke", second_run / "results/smoke"
    names = sorted(p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file())
    names.remove("report.html")  # the first run's `--report`
    assert names == sorted(p.relative_to(second).as_posix() for p in second.rglob("*") if p.is_file())
    models = [name for name in names if name.endswith(".safetensors")]
    assert any(name.startswith("simplified_blocks/mlm_runs/") for name in models)
    differ = [name for name in models if sha(first / name) != sha(second / name)]
    assert not differ, differ
    for name in names:
        if name.endswith(".csv") and not name.startswith(("benchmarks/", "logs/")):
            assert compare_results.csv_difference(first / name, second / name, budgeted=False) is None, name
    figures = [name for name in names if re.fullmatch(r"[a-z_]+/figures/fig\d\d\.png", name)]
    assert len(figures) > 50
    redrawn = {name for name in figures if sha(first / name) != sha(second / name)}
    expected = {f"{paper}/figures/{item}.png" for paper, items in MEASURED_TIME_FIGURES.items() for item in items}
    assert redrawn <= expected, sorted(redrawn - expected)
    # The trees differ only where they should: the lineage of the step-time table says where it came from.
    assert compare_results.main(str(first), str(second)) == 1
    table = "simplified_blocks/data/mlm_step_times.csv"
    assert sha(first / table) == sha(second / table)


def test_a_damaged_data_file_is_found_by_verify_and_made_again_by_the_command_it_prints(second_run, tmp_path):
    """One byte flipped in a dataset, its timestamp put back (so that Snakemake sees nothing to do):
    `repro verify` names it and prints a command which, pasted into a shell without the venv on its PATH,
    makes it again and leaves every output as it was."""
    from cluster import compare_results

    results = second_run / "results/smoke"
    before = tmp_path / "before"
    shutil.copytree(results, before)
    data = results / "sixteen_heads/data/tasks/nli.npz"
    stat = data.stat()
    damaged = bytearray(data.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    data.write_bytes(bytes(damaged))
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    verify = [sys.executable, "-m", "repro", "verify", "results/smoke"]
    found = subprocess.run(verify, cwd=second_run, capture_output=True, text=True, env=snakemake_env(second_run))
    assert found.returncode == 1, found.stdout + found.stderr
    tasks = "results/smoke/sixteen_heads/data/tasks"
    assert f"damaged: {tasks}/nli.npz: differs from {tasks}/nli.card.json" in found.stdout, found.stdout
    printed = found.stdout.strip().splitlines()[-1].strip()
    assert "--forcerun results/smoke/sixteen_heads/data/tasks/nli.npz" in printed, found.stdout
    env = {"PATH": "/usr/bin:/bin", "HOME": str(second_run), "SOURCE_DATE_EPOCH": "0"}
    repaired = subprocess.run(["bash", "-c", printed], cwd=second_run, capture_output=True, text=True, env=env)
    assert repaired.returncode == 0, repaired.stdout[-3000:] + repaired.stderr[-3000:]
    again = subprocess.run(verify, cwd=second_run, capture_output=True, text=True, env=snakemake_env(second_run))
    assert again.returncode == 0 and "all match" in again.stdout, again.stdout
    assert data.read_bytes() == (before / "sixteen_heads/data/tasks/nli.npz").read_bytes()
    assert compare_results.main(str(before), str(results)) == 0
