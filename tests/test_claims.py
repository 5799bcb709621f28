"""The claim registry, judging, the claims CLI and the scorecard, on a made-up paper."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from repro.cli import main
from repro.pipeline import claims, scorecard
from repro.pipeline.claims import Measurement, claim

PAPER = "example_paper"
LOSSES = "analysis/final_loss.csv"


@pytest.fixture(autouse=True)
def example_claims():
    """Two claims of a paper that has no module in repro.claims: registered here, removed after."""

    @claim(
        paper=PAPER,
        item="fig10",
        claim_id="b_matches_a",
        statement="Variant b reaches the final loss of variant a.",
        paper_value="equal final loss",
        tolerance="|mean loss(b) - mean loss(a)| <= 0.05",
        inputs=[LOSSES],
    )
    def b_matches_a(data):
        df = data[LOSSES]
        a = df.loc[df.variant == "a", "loss"]
        b = df.loc[df.variant == "b", "loss"]
        gap = b.to_numpy() - a.to_numpy()
        ok = claims.within(b.mean(), a.mean(), 0.05)
        return Measurement(claims.format_mean_spread(gap), claims.verdict(ok), seeds=len(gap), detail="b minus a")

    @claim(
        paper=PAPER,
        item="fig2",
        claim_id="a_below_three",
        statement="Variant a ends below a loss of 3.",
        paper_value="2.5",
        tolerance="mean loss(a) <= 3",
        inputs=[LOSSES, "analysis/extra.csv"],
        judged_at=["smoke", "laptop"],
    )
    def a_below_three(data):
        df = data[LOSSES]
        mean = float(df.loc[df.variant == "a", "loss"].mean())
        return Measurement(mean, claims.verdict(claims.at_least(3.0, mean)), seeds=2)

    yield
    claims.unregister(PAPER)


def _results(tmp_path: Path) -> Path:
    paper_dir = tmp_path / "results" / PAPER / "analysis"
    paper_dir.mkdir(parents=True)
    pd.DataFrame({"variant": ["a", "a", "b", "b"], "seed": [0, 1, 0, 1], "loss": [2.50, 2.60, 2.52, 2.61]}).to_csv(
        paper_dir / "final_loss.csv", index=False
    )
    (paper_dir / "extra.csv").write_text("x\n1\n")
    return tmp_path / "results"


def test_smoke_scale_is_not_measurable_but_still_measured(tmp_path):
    results = _results(tmp_path)
    smoke = claims.judge_paper(PAPER, results, "smoke").set_index("item")
    laptop = claims.judge_paper(PAPER, results, "laptop").set_index("item")

    assert smoke.at["fig10", "verdict"] == claims.NOT_MEASURABLE
    assert smoke.at["fig10", "measured"] == laptop.at["fig10", "measured"] == "0.015 ± 0.0071 (n=2)"
    assert "would read 'reproduced'" in smoke.at["fig10", "detail"]
    assert laptop.at["fig10", "verdict"] == claims.REPRODUCED
    # judged_at includes smoke for this claim, so it gets a real verdict there.
    assert smoke.at["fig2", "verdict"] == claims.REPRODUCED
    assert smoke.at["fig2", "measured"] == "2.55"


def test_rows_sorted_naturally_with_exact_columns(tmp_path):
    df = claims.judge_paper(PAPER, _results(tmp_path), "laptop")
    assert tuple(df.columns) == claims.COLUMNS
    assert list(df["item"]) == ["fig2", "fig10"]
    assert df.iloc[1]["claim"] == "b_matches_a: Variant b reaches the final loss of variant a."
    assert df.iloc[1]["seeds"] == "2" and df.iloc[1]["paper_value"] == "equal final loss"


def test_missing_input_names_the_file(tmp_path, capsys):
    results = _results(tmp_path)
    (results / PAPER / "analysis/extra.csv").unlink()
    (c,) = [c for c in claims.load_claims(PAPER) if c.claim_id == "a_below_three"]
    with pytest.raises(claims.MissingInputError, match=f"results/{PAPER}/analysis/extra.csv"):
        claims.judge_claim(c, results, "laptop")

    out = results / PAPER / "claims.csv"
    code = main(
        ["claims", "judge", "--paper", PAPER, "--results-dir", str(results), "--scale", "laptop", "--out", str(out)]
    )
    assert code == 1
    assert f"{PAPER}/analysis/extra.csv, which does not exist" in capsys.readouterr().err
    assert not out.exists()


def test_failing_claim_function_is_an_error_not_a_verdict(tmp_path):
    results = _results(tmp_path)

    @claim(paper=PAPER, item="fig3", claim_id="broken", statement="s", paper_value="v", tolerance="t", inputs=[LOSSES])
    def broken(data):
        return data[LOSSES]["no_such_column"]

    @claim(
        paper=PAPER, item="fig4", claim_id="bad_verdict", statement="s", paper_value="v", tolerance="t", inputs=[LOSSES]
    )
    def bad_verdict(data):
        return Measurement(1.0, "sort of")

    @claim(
        paper=PAPER, item="fig5", claim_id="undeclared", statement="s", paper_value="v", tolerance="t", inputs=[LOSSES]
    )
    def undeclared(data):
        return Measurement(len(data["analysis/extra.csv"]), claims.REPRODUCED)

    with pytest.raises(claims.ClaimsFailed) as info:
        claims.judge_paper(PAPER, results, "laptop")
    message = str(info.value)
    assert f"{PAPER}/fig3/broken raised KeyError" in message
    assert "verdict 'sort of'" in message
    assert "not among its declared inputs" in message
    assert len(info.value.errors) == 3


def test_registration_checks():
    with pytest.raises(ValueError, match="registered twice"):

        @claim(
            paper=PAPER,
            item="fig2",
            claim_id="a_below_three",
            statement="s",
            paper_value="v",
            tolerance="t",
            inputs=["x.csv"],
        )
        def another(data):
            raise AssertionError

    with pytest.raises(ValueError, match="relative"):
        claim(paper=PAPER, item="f", claim_id="c", statement="s", paper_value="v", tolerance="t", inputs=["../x.csv"])
    with pytest.raises(ValueError, match="unknown scale"):
        claim(
            paper=PAPER,
            item="f",
            claim_id="c",
            statement="s",
            paper_value="v",
            tolerance="t",
            inputs=["x.csv"],
            judged_at=["huge"],
        )
    with pytest.raises(ModuleNotFoundError, match="no claims for paper 'no_such_paper'"):
        claims.load_claims("no_such_paper")


def _threshold_row(data, row):
    mean = float(data[LOSSES]["loss"].mean())
    return Measurement(mean, claims.verdict(claims.at_least(row.limit, mean)), seeds=4)


def test_a_claim_table_registers_one_claim_per_row_as_attributes_of_its_measures_module(tmp_path):
    import dataclasses
    import sys

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Threshold(claims.ClaimRow):
        limit: float

    rows = [
        Threshold(item="fig3", claim_id=f"mean_below_{n}", statement="s", paper_value="v", tolerance="t", limit=n)
        for n in (2, 3)
    ]
    try:
        functions = claims.register_table(PAPER, rows, _threshold_row, inputs=[LOSSES], kind="empirical")
        module = sys.modules[__name__]
        assert module.mean_below_3 is functions["mean_below_3"] and module.mean_below_3.__name__ == "mean_below_3"
        registered = [c for c in claims.load_claims(PAPER) if c.item == "fig3"]
        assert [c.claim_id for c in registered] == ["mean_below_2", "mean_below_3"]
        data = claims.ClaimInputs(registered[0], _results(tmp_path) / PAPER)
        assert module.mean_below_3(data).verdict == claims.REPRODUCED  # mean 2.56 ≤ 3
        assert module.mean_below_2(data).verdict == claims.NOT_REPRODUCED
        clash = Threshold(item="fig3", claim_id="pytest", statement="s", paper_value="v", tolerance="t", limit=1)
        with pytest.raises(ValueError, match="already has a 'pytest'"):
            claims.register_table(PAPER, [clash], _threshold_row, inputs=[LOSSES], kind="empirical")
    finally:
        for name in ("mean_below_2", "mean_below_3"):
            sys.modules[__name__].__dict__.pop(name, None)


def test_claim_inputs_and_list(capsys):
    assert claims.claim_inputs(PAPER) == ["analysis/extra.csv", LOSSES]
    assert main(["claims", "list", "--paper", PAPER, "--inputs-only"]) == 0
    assert capsys.readouterr().out.splitlines() == ["analysis/extra.csv", LOSSES]
    assert main(["claims", "list", "--paper", PAPER]) == 0
    out = capsys.readouterr().out
    assert "fig10 b_matches_a (judged at laptop, paper)" in out and f"inputs: {LOSSES}" in out


def test_helpers():
    assert claims.format_mean_spread([0.008, 0.016]) == "0.012 ± 0.0057 (n=2)"
    assert claims.format_mean_spread([0.012]) == "0.012 (n=1)"
    assert claims.mean_spread([1.0, 2.0, 3.0]) == (2.0, 1.0, 3)  # exact: integer values, pure-Python sums and sqrt(1)
    assert claims.within(1.0, 1.04, 0.05) and not claims.within(1.0, 1.06, 0.05)
    assert claims.at_least(1.2, 1.0, margin=0.1) and not claims.at_least(1.05, 1.0, margin=0.1)
    assert claims.verdict(True) == "reproduced" and claims.verdict(False) == "not reproduced"


def test_judge_cli_and_scorecard(tmp_path, capsys):
    results = _results(tmp_path)
    out = results / PAPER / "claims.csv"
    assert main(["claims", "judge", "--paper", PAPER, "--results-dir", str(results), "--scale", "laptop"]) == 0
    with out.open(newline="") as fh:
        header = next(csv.reader(fh))
    assert header == list(claims.COLUMNS)

    # A second paper's file in the format of earlier versions (no class, gate, null or detail), out of order.
    other = tmp_path / "other_claims.csv"
    pd.DataFrame(
        [
            ["another_paper", "table1", "z: last", "1", "0.9", "|d|<=0.2", "reproduced", "laptop", "3"],
            ["another_paper", "fig1", "y: first", "2", "5", "x>=2", "not reproduced", "laptop", ""],
        ],
        columns=list(scorecard.LEGACY_COLUMNS[:-1]),
    ).to_csv(other, index=False)

    card_csv, card_md = tmp_path / "scorecard.csv", tmp_path / "scorecard.md"
    argv = [
        "claims",
        "scorecard",
        "--inputs",
        str(out),
        str(other),
        "--out-csv",
        str(card_csv),
        "--out-md",
        str(card_md),
    ]
    assert main(argv) == 0
    card = pd.read_csv(card_csv, dtype=str, keep_default_na=False)
    assert tuple(card.columns) == claims.COLUMNS
    assert list(zip(card["paper"], card["item"])) == [
        ("another_paper", "fig1"),
        ("another_paper", "table1"),
        (PAPER, "fig2"),
        (PAPER, "fig10"),
    ]
    assert card.at[0, "seeds"] == "" and card.at[1, "measured"] == "0.9"
    md = card_md.read_text()
    summary = scorecard.summarise(card).set_index("paper")
    assert summary.loc["another_paper", ["reproduced", "not reproduced", "claims"]].tolist() == [1, 1, 2]
    assert summary.loc[PAPER, ["reproduced", "claims"]].tolist() == [2, 2]
    assert "## Summary" in md and f"## {PAPER}" in md and "small-scale analogues" in md
    first_bytes = (card_csv.read_bytes(), card_md.read_bytes())

    # Same inputs in another order give the same bytes.
    argv = [
        "claims",
        "scorecard",
        "--inputs",
        str(other),
        str(out),
        "--out-csv",
        str(card_csv),
        "--out-md",
        str(card_md),
    ]
    assert main(argv) == 0
    assert (card_csv.read_bytes(), card_md.read_bytes()) == first_bytes

    bad = tmp_path / "bad.csv"
    bad.write_text("paper,item\nx,y\n")
    assert (
        main(["claims", "scorecard", "--inputs", str(bad), "--out-csv", str(card_csv), "--out-md", str(card_md)]) == 1
    )
    assert "expected ['paper', 'item', 'claim'" in capsys.readouterr().err
