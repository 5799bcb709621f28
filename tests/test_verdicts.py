"""Verdicts only where the experiment can tell: intervals over seeds, health gates, nulls, classes."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from repro.pipeline import claims, scorecard
from repro.pipeline.claims import Gate, Measurement, Null, claim
from repro.pipeline.decisions import (
    INCONCLUSIVE,
    NOT_MEASURABLE,
    NOT_REPRODUCED,
    REPRODUCED,
    Interval,
    Region,
    additive_noise,
    bootstrap_interval,
    combine_any,
    combine_at_least,
    contrast_interval,
    decide,
    interpolated_crossing,
    judge_bootstrap,
    judge_contrasts,
    judge_parts,
    judge_seeds,
    seed_interval,
    seeds_to_decide,
)

PAPER = "verdict_paper"
GAPS = "data/gaps.csv"
RUNS = "data/runs.csv"
UNIGRAM = 6.0  # the reference level of the example's language models


def test_additive_noise_is_the_two_way_residual_and_ignores_seed_and_variant_effects():
    rng = np.random.default_rng(0)
    residual = rng.normal(size=(4, 5))
    residual -= residual.mean(axis=0, keepdims=True)  # rows and columns summing to 0: the fit's residual
    residual -= residual.mean(axis=1, keepdims=True)
    sd = math.sqrt((residual**2).sum() / (3 * 4))
    effects = rng.normal(size=(4, 1)) + rng.normal(size=(1, 5)) + 7.0  # seed + variant effects
    table = pd.DataFrame(effects + residual, columns=list("abcde"))
    noise = additive_noise(table, "test runs")
    assert noise.df == 12 and noise.sd == pytest.approx(sd, rel=1e-12)
    # a seed missing one variant is dropped; one complete seed leaves no estimate
    table.iloc[3, 0] = np.nan
    assert additive_noise(table, "test runs").df == 8
    assert additive_noise(table.iloc[:1], "test runs") is None


def test_a_contrast_interval_takes_its_width_from_the_pooled_spread():
    noise = additive_noise(pd.DataFrame([[0.0, 0.1], [0.1, 0.0], [0.05, 0.05]]), "test runs")
    half = stats.t.ppf(0.975, noise.df) * noise.sd
    one = contrast_interval([0.3], 2.0, noise)  # a gap on one seed: variance 2σ²
    assert (one.low, one.high) == pytest.approx((0.3 - half * math.sqrt(2), 0.3 + half * math.sqrt(2)), abs=1e-12)
    four = contrast_interval([0.3, 0.3, 0.3, 0.3], 4.0, noise)  # a difference of gaps on four seeds
    assert four.high - four.low == pytest.approx(2 * half, abs=1e-12)
    assert "n=1" in one.format() and "no interval" not in one.format()


def test_judge_contrasts_needs_a_spread_and_combines_its_parts():
    noise = additive_noise(pd.DataFrame([[0.0, 0.01], [0.01, 0.0], [0.005, 0.005]]), "test runs")
    judged = judge_contrasts({"a": ([0.5], 2.0, Region.above(0.1)), "b": ([-0.5], 2.0, Region.below(0.0))}, noise)
    assert judged.verdict == REPRODUCED and judged.seeds == 1
    mixed = judge_contrasts({"a": ([0.5], 2.0, Region.above(0.1)), "b": ([0.0], 2.0, Region.below(0.0))}, noise)
    assert mixed.verdict == "inconclusive"
    missing = judge_contrasts({"a": ([0.5], 2.0, Region.above(0.1))}, None)
    assert missing.verdict == NOT_MEASURABLE and "spread" in missing.detail
    # "one of them holds": one reproduced part suffices, every part must fail to refute it
    some = {"a": ([0.5], 2.0, Region.above(0.1)), "b": ([0.0], 2.0, Region.below(0.0))}
    assert judge_contrasts(some, noise, rule=combine_any).verdict == REPRODUCED
    none = {"a": ([-0.5], 2.0, Region.above(0.1)), "b": ([0.5], 2.0, Region.below(0.0))}
    assert judge_contrasts(none, noise, rule=combine_any).verdict == "not reproduced"
    assert combine_any(["not reproduced", "inconclusive"]) == "inconclusive"


def test_at_least_k_parts_is_refuted_only_when_k_can_no_longer_hold():
    two_of_three = combine_at_least(2)
    assert two_of_three(["reproduced", "reproduced", "not reproduced"]) == REPRODUCED
    assert two_of_three(["reproduced", "inconclusive", "not reproduced"]) == "inconclusive"
    assert two_of_three(["reproduced", "not reproduced", "not reproduced"]) == "not reproduced"
    assert two_of_three(["reproduced", "reproduced", NOT_MEASURABLE]) == NOT_MEASURABLE
    assert combine_at_least(2)(["reproduced"]) == "not reproduced"  # a part left out counts against


def test_seed_interval_is_the_t_interval_of_the_mean():
    values = [0.3, -0.1, 0.2, 0.05]
    interval = seed_interval(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert interval.estimate == pytest.approx(np.mean(values), abs=1e-15)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)
    # exact: the mean of three 1.0s is 1.0 and their sd is 0 (every partial sum representable)
    assert seed_interval([1.0, 1.0, 1.0]).low == seed_interval([1.0, 1.0, 1.0]).high == 1.0
    one = seed_interval([2.0])
    assert math.isinf(one.low) and math.isinf(one.high) and "no interval" in one.format()
    with pytest.raises(ValueError, match="finite"):
        seed_interval([1.0, float("nan")])


def test_decide_inside_outside_and_straddling():
    gap_positive = Region.above(0.0)
    assert decide(seed_interval([0.5, 0.6, 0.55]), gap_positive) == claims.REPRODUCED
    assert decide(seed_interval([-0.5, -0.6, -0.55]), gap_positive) == claims.NOT_REPRODUCED
    assert decide(seed_interval([0.3, -0.2, 0.1]), gap_positive) == claims.INCONCLUSIVE
    near = Region.around(0.0, 0.05)
    assert decide(seed_interval([0.01, -0.01, 0.0]), near) == claims.REPRODUCED
    # The Fig 26 case of the verdicts issue: 0.011 ± 0.089 nats is no evidence of "matches".
    noisy = [0.011 + 0.089 * z for z in (-1.0, 0.0, 1.0)]
    assert decide(seed_interval(noisy), near) == claims.INCONCLUSIVE
    # An interval that ends on the boundary of "above 0" does not show an effect.
    assert decide(seed_interval([0.0, 0.0, 0.0]), gap_positive) == claims.NOT_REPRODUCED
    assert str(gap_positive) == "> 0" and str(near) == "in [-0.05, 0.05]"
    with pytest.raises(ValueError, match="empty"):
        Region(1.0, 0.0)


def test_equivalence_needs_the_interval_inside_the_margin():
    region = Region.equivalent(0.0, 0.05)
    inside = judge_seeds([0.01, 0.02, 0.015], region)
    assert inside.verdict == REPRODUCED and inside.rule == "95% t-interval over 3 seeds; equivalence margin ±0.05"
    assert judge_seeds([0.2, 0.21, 0.22], region).verdict == NOT_REPRODUCED
    # a noisy gap no longer passes for equality: its interval reaches past the margin
    assert judge_seeds([0.0, 3.0, -3.0], region).verdict == INCONCLUSIVE
    with pytest.raises(ValueError, match="margin"):
        Region.equivalent(0.0, 0.0)


def test_a_smallest_effect_of_interest_turns_a_negligible_effect_into_not_reproduced():
    tight = [0.004, 0.005, 0.006]  # clearly above 0, but far below the effect the claim is about
    assert judge_seeds(tight, Region.above(0.0)).verdict == REPRODUCED
    m = judge_seeds([0.001, -0.002, 0.004], Region.above(0.0, sesoi=0.05))
    assert m.verdict == NOT_REPRODUCED and "no effect as large as" in m.detail
    assert judge_seeds([0.001, -0.002, 0.004], Region.above(0.0)).verdict == INCONCLUSIVE
    assert judge_seeds([0.04, -0.03, 0.08], Region.above(0.0, sesoi=0.05)).verdict == INCONCLUSIVE
    with pytest.raises(ValueError, match="one-sided"):
        Region(-1.0, 1.0, sesoi=0.1)


def test_the_projection_is_the_first_seed_count_whose_interval_would_decide():
    m = judge_seeds([0.1, 0.05, -0.02], Region.above(0.0))
    assert m.verdict == INCONCLUSIVE and m.seeds_to_decide is not None and "Projection" in m.detail
    n = m.seeds_to_decide
    sd = np.std([0.1, 0.05, -0.02], ddof=1)
    half = lambda k: stats.t.ppf(0.975, k - 1) * sd / math.sqrt(k)  # noqa: E731
    assert half(n) < 0.13 / 3 <= half(n - 1)
    assert m.rule == "95% t-interval over 3 seeds"
    assert judge_seeds([0.1, 0.11, 0.12], Region.above(0.0)).seeds_to_decide is None  # decided: nothing to project
    on_the_boundary = Interval(0.0, -1.0, 1.0, 3, sd=1.0)
    assert seeds_to_decide(on_the_boundary, Region.above(0.0)) is None


def test_bootstrap_intervals_are_repeatable_and_judge_other_units_than_seeds():
    values = np.arange(20.0)
    a, b = bootstrap_interval(values), bootstrap_interval(values)
    assert (a.low, a.high) == (b.low, b.high)  # exact: the same seeded generator
    assert a.low < 9.5 < a.high and a.estimate == pytest.approx(9.5)
    m = judge_bootstrap(values, Region.above(5.0), what="heads")
    assert m.verdict == REPRODUCED and "bootstrap over 20 heads" in m.rule
    assert judge_bootstrap(values[:3], Region.above(5.0), what="heads").verdict == NOT_MEASURABLE


def test_a_threshold_on_a_grid_is_interpolated_between_its_points():
    assert interpolated_crossing([0, 10, 20, 30], [0.0, 0.5, 1.5, 3.0], 1.0) == pytest.approx(15.0)
    # exact: a curve that starts above the level crosses at its first x
    assert interpolated_crossing([0, 10], [2.0, 3.0], 1.0) == 0
    assert math.isnan(interpolated_crossing([0, 10], [0.0, 0.5], 1.0))
    assert interpolated_crossing([0, 10, 20], [5.0, 3.0, 1.0], 2.0, rising=False) == pytest.approx(15.0)


def test_judge_seeds_needs_three_seeds_and_says_why():
    two = judge_seeds([0.5, 0.6], Region.above(0.0))
    assert two.verdict == claims.NOT_MEASURABLE and "at least 3 seeds" in two.detail and two.seeds == 2
    three = judge_seeds([0.3, -0.2, 0.1], Region.above(0.0), unit=" nats", detail="SAS minus Pre-LN.")
    assert three.verdict == claims.INCONCLUSIVE and "straddles" in three.detail and "nats [" in three.measured


@pytest.fixture
def example_claims():
    """A gated comparison with an honest null, and a claim written to pass on anything."""

    def lm_gate(data):
        worst = float(data[RUNS]["eval_loss"].max())
        return worst <= UNIGRAM - 1.0, f"worst final eval loss {worst:.2f} nats (unigram {UNIGRAM})"

    def no_effect(data):  # the comparison with the effect removed: B's runs are A's runs
        gaps = data[GAPS]
        return {GAPS: gaps.assign(gap=0.0)}

    gate = Gate(f"every run at least 1 nat below the unigram level {UNIGRAM}", lm_gate)
    null = Null("the gaps set to zero (no effect)", no_effect)

    @claim(
        paper=PAPER,
        item="fig1",
        claim_id="b_beats_a",
        statement="B ends below A.",
        paper_value="B < A",
        tolerance="95% interval of loss(A) - loss(B) over seeds above 0",
        inputs=[GAPS, RUNS],
        kind="empirical",
        gate=gate,
        null=null,
    )
    def b_beats_a(data):
        return judge_seeds(data[GAPS]["gap"], Region.above(0.0))

    @claim(
        paper=PAPER,
        item="fig2",
        claim_id="anything_goes",
        statement="A check that cannot fail.",
        paper_value="anything",
        tolerance="gap is a number",
        inputs=[GAPS],
        kind="empirical",
        null=null,
    )
    def anything_goes(data):
        gaps = data[GAPS]["gap"]
        return Measurement(float(gaps.mean()), claims.REPRODUCED, seeds=len(gaps), rule="always reproduced")

    yield
    claims.unregister(PAPER)


def write_results(tmp_path, gaps, losses):
    data = tmp_path / PAPER / "data"
    data.mkdir(parents=True)
    pd.DataFrame({"seed": range(len(gaps)), "gap": gaps}).to_csv(data / "gaps.csv", index=False)
    pd.DataFrame({"seed": range(len(losses)), "eval_loss": losses}).to_csv(data / "runs.csv", index=False)
    return tmp_path


def judged(tmp_path, gaps, losses):
    return claims.judge_paper(PAPER, write_results(tmp_path, gaps, losses), "laptop").set_index("item")


def test_a_gated_claim_with_an_honest_null_is_judged(tmp_path, example_claims):
    rows = judged(tmp_path, [0.20, 0.25, 0.22], [4.1, 4.2, 4.0])
    row = rows.loc["fig1"]
    assert row["verdict"] == claims.REPRODUCED and row["class"] == "empirical"
    assert row["gate"].startswith("passed: every run at least 1 nat below")
    assert row["null"] == "not reproduced on the gaps set to zero (no effect)"


def test_a_failed_gate_makes_the_claim_not_measurable(tmp_path, example_claims):
    rows = judged(tmp_path, [0.20, 0.25, 0.22], [5.6, 5.5, 5.7])  # runs that did not learn
    row = rows.loc["fig1"]
    assert row["verdict"] == claims.NOT_MEASURABLE
    assert row["gate"].startswith("failed:") and "5.70 nats" in row["gate"]
    assert row["detail"].startswith("Health gate failed") and "would read 'reproduced'" in row["detail"]
    assert scorecard.reason(row["detail"]) == "its runs failed their health gate"


def test_a_straddling_interval_is_inconclusive(tmp_path, example_claims):
    row = judged(tmp_path, [0.3, -0.2, 0.1], [4.1, 4.2, 4.0]).loc["fig1"]
    assert row["verdict"] == claims.INCONCLUSIVE and "straddles" in row["detail"]


def test_the_null_catches_a_claim_written_to_pass_on_anything(tmp_path, example_claims):
    row = judged(tmp_path, [0.20, 0.25, 0.22], [4.1, 4.2, 4.0]).loc["fig2"]
    assert row["null"].startswith("reproduced on")
    assert row["verdict"] == claims.NOT_MEASURABLE and row["detail"].startswith("Null not rejected")
    assert scorecard.reason(row["detail"]) == "its null did not come out 'not reproduced'"


def test_claim_classes_are_checked_and_counted(tmp_path, example_claims):
    with pytest.raises(ValueError, match="kind 'vibes'"):
        claim(
            paper=PAPER,
            item="fig3",
            claim_id="bad_kind",
            statement="s",
            paper_value="v",
            tolerance="t",
            inputs=[GAPS],
            kind="vibes",
        )
    card = claims.judge_paper(PAPER, write_results(tmp_path, [0.3, -0.2, 0.1], [5.6, 5.5, 5.7]), "laptop")
    summary = scorecard.summarise(card, by_class=True)
    assert summary[["class", "claims"]].values.tolist() == [["empirical", 2]]
    why = scorecard.unjudged(card)
    assert sorted(why["reason"]) == ["its null did not come out 'not reproduced'", "its runs failed their health gate"]


def test_lm_and_classifier_gates(tmp_path):
    from repro.pipeline.decisions import CODE_REFERENCE_LEVELS, classifier_gate, lm_gate

    levels = tmp_path / "data" / "code_corpus" / "tokens" / "reference_levels.json"
    levels.parent.mkdir(parents=True)
    levels.write_text('{"unigram_nats": 6.18, "bigram_nats": 3.65}')
    runs = tmp_path / PAPER / RUNS
    runs.parent.mkdir(parents=True)

    @claim(
        paper=PAPER,
        item="fig9",
        claim_id="gated",
        statement="s",
        paper_value="v",
        tolerance="t",
        inputs=[RUNS, CODE_REFERENCE_LEVELS],
        kind="empirical",
        gate=lm_gate(lambda data: data[RUNS]["eval_loss"]),
    )
    def gated(data):
        return Measurement(1.0, claims.REPRODUCED, rule="fixed for the test")

    try:
        for losses, verdict in (([4.9, 5.1], claims.REPRODUCED), ([4.9, 5.6], claims.NOT_MEASURABLE)):
            pd.DataFrame({"eval_loss": losses}).to_csv(runs, index=False)
            row = claims.judge_paper(PAPER, tmp_path, "laptop").iloc[0]
            assert row["verdict"] == verdict, row["gate"]
        assert "worst final eval loss 5.600 nats against unigram 6.180" in row["gate"]
    finally:
        claims.unregister(PAPER)

    gate = classifier_gate(lambda data: data, chance=50.0)
    assert gate.check([70.0, 88.0]) == (True, "scores 70 to 88 (chance 50, ceiling 100)")
    assert not gate.check([55.0, 88.0])[0]  # one model barely learned
    assert not gate.check([70.0, 100.0])[0]  # one model at the ceiling: no room for an improvement
    with pytest.raises(ValueError, match="must be relative"):
        claim(paper=PAPER, item="f", claim_id="x", statement="s", paper_value="v", tolerance="t", inputs=["../a.csv"])


def test_every_claim_of_the_four_papers_declares_its_class():
    from repro.papers import PAPERS

    for paper in PAPERS:
        undeclared = [c.claim_id for c in claims.load_claims(paper) if c.kind not in claims.CLASSES]
        assert not undeclared, (
            f"{paper}: claims without a class (identity, simulation, empirical or timing): {undeclared}"
        )


def test_every_empirical_claim_declares_a_gate_and_a_null():
    from repro.papers import PAPERS

    for paper in PAPERS:
        missing = [
            c.claim_id
            for c in claims.load_claims(paper)
            if c.kind == "empirical" and (c.gate is None or c.null is None)
        ]
        assert not missing, f"{paper}: empirical claims without a gate or a null: {missing}"


def test_every_timing_claim_says_its_verdict_is_one_machines():
    from repro.papers import PAPERS
    from repro.pipeline.claims import ONE_MACHINE

    timing = [c for paper in PAPERS for c in claims.load_claims(paper) if c.kind == "timing"]
    assert len(timing) >= 7  # the decoder and masked-LM speed orders, Table 4's speedups
    silent = [c.label for c in timing if not c.tolerance.endswith(ONE_MACHINE)]
    assert not silent, f"timing claims whose tolerance does not say the rounds are one machine's: {silent}"


#: Statements that claim equality ("matches", "as fast as") or non-inferiority ("no worse than", "near
#: the oracle"): an interval can only show them inside a margin fixed in advance.
EQUALITY = re.compile(
    r"\b(match(es)?|same final|as fast|no worse|not worse|no better|not better|at least as good|about as good)\b", re.I
)
#: How a tolerance names its margin: an equivalence region, a ±δ, an ε or δ allowance, or a stated margin.
MARGIN = re.compile(r"equivalence|±|\bδ\b|\bε\b|margin", re.I)


def test_every_claim_of_equality_declares_its_margin():
    from repro.papers import PAPERS

    equalities = [
        c
        for paper in PAPERS
        for c in claims.load_claims(paper)
        if c.kind in claims.INTERVAL_CLASSES and EQUALITY.search(c.statement)
    ]
    assert len(equalities) >= 10  # the pattern still finds the papers' "matches" and "no worse than" claims
    bare = [c.label for c in equalities if not MARGIN.search(c.tolerance)]
    assert not bare, f"claims of equality without a margin in their tolerance: {bare}"


def test_every_empirical_claim_states_its_phase():
    from repro.papers import PAPERS

    empirical = [c for paper in PAPERS for c in claims.load_claims(paper) if c.kind == "empirical"]
    unstated = [c.label for c in empirical if c.phase not in claims.PHASES]
    assert not unstated, f"empirical claims that do not state the phase they are judged in: {unstated}"
    # A claim judged past the bigram level is gated there: nothing else would make the phase true.
    ungated = [c.label for c in empirical if c.phase == "past the bigram level" and "bigram" not in c.gate.description]
    assert not ungated, f"claims judged past the bigram level without a gate on it: {ungated}"


def test_a_claim_is_judged_only_when_its_null_reads_not_reproduced(tmp_path):
    for null_verdict, expected in (
        (claims.NOT_REPRODUCED, REPRODUCED),
        (INCONCLUSIVE, NOT_MEASURABLE),
        (NOT_MEASURABLE, NOT_MEASURABLE),
        (REPRODUCED, NOT_MEASURABLE),
    ):

        @claim(
            paper=PAPER,
            item="fig3",
            claim_id="strict_null",
            statement="s",
            paper_value="v",
            tolerance="t",
            inputs=[GAPS],
            kind="empirical",
            null=Null("the effect removed", lambda data: {GAPS: data[GAPS].assign(on_null=1)}),
        )
        def strict_null(data, null_verdict=null_verdict):
            frame = data[GAPS]
            on_null = "on_null" in frame
            return Measurement(1.0, null_verdict if on_null else REPRODUCED, seeds=3, rule="fixed for the test")

        try:
            row = claims.judge_paper(
                PAPER, write_results(tmp_path / null_verdict.replace(" ", "_"), [1, 2, 3], [4.0]), "laptop"
            ).iloc[0]
        finally:
            claims.unregister(PAPER)
        assert row["verdict"] == expected, (null_verdict, row["detail"])
        if expected == NOT_MEASURABLE:
            assert row["detail"].startswith("Null not rejected"), row["detail"]


def test_a_claim_of_several_comparisons():
    from repro.pipeline.decisions import combine, judge_parts

    assert combine([claims.REPRODUCED, claims.REPRODUCED]) == claims.REPRODUCED
    assert combine([claims.REPRODUCED, claims.INCONCLUSIVE]) == claims.INCONCLUSIVE
    assert combine([claims.INCONCLUSIVE, claims.NOT_REPRODUCED]) == claims.NOT_REPRODUCED
    faster = [1.10, 1.12, 1.11, 1.09]  # per-round throughput ratios to a reference
    same = [1.02, 0.97, 1.01, 0.99]
    m = judge_parts({"a": (faster, Region.above(1.0)), "b": (same, Region.below(1.0))}, what="rounds")
    assert m.verdict == claims.INCONCLUSIVE and "over 4 rounds" in m.detail and m.seeds == 4
    m = judge_parts({"a": (faster, Region.above(1.0)), "b": (faster, Region.below(1.0))}, what="rounds")
    assert m.verdict == claims.NOT_REPRODUCED
    m = judge_parts({"a": (faster[:2], Region.above(1.0))}, what="rounds")
    assert m.verdict == claims.NOT_MEASURABLE and scorecard.reason(m.detail) == "too few seeds (or rounds)"


def test_speed_orders_are_judged_on_rounds_and_fail_on_their_null(tmp_path):
    """simplified_blocks Table 1: per-round tokens/s ratios, paired within the interleaved rounds."""
    speed = {"pre_ln": 1.0, "sas": 1.08, "sas_p": 1.15, "vskipinit": 0.95, "parallel": 1.03, "sas_p_nonorm": 1.2}
    rows = [
        dict(variant=v, mode=mode, round=r, position=0, seconds_per_step=1.0, tokens_per_s=1000 * s * (1 + 0.03 * r))
        for mode in ("train", "inference")
        for r in range(4)
        for v, s in speed.items()
    ]
    data = tmp_path / "simplified_blocks" / "data"
    data.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(data / "throughput_timings.csv", index=False)
    order = next(c for c in claims.load_claims("simplified_blocks") if c.claim_id == "training_speed_order")
    row = claims.judge_claim(order, tmp_path, "laptop")
    assert row["verdict"] == claims.REPRODUCED and row["class"] == "timing" and "over 4 rounds" in row["detail"]
    assert row["null"].startswith("not reproduced on every block at Pre-LN's tokens/s")


def test_seeds_for_power_decide_an_effect_of_the_size_seen_four_times_in_five():
    from repro.pipeline.decisions import seeds_for_power

    effect, sd = 0.3, 0.5
    n = seeds_for_power(Interval(effect, -1.0, 1.0, 3, sd=sd), Region.above(0.0))
    rng = np.random.default_rng(0)

    def power_at(k: int) -> float:
        draws = rng.normal(effect, sd, size=(20000, k))
        low = draws.mean(axis=1) - stats.t.ppf(0.975, k - 1) * draws.std(axis=1, ddof=1) / math.sqrt(k)
        return float((low > 0).mean())

    assert 0.78 <= power_at(n) <= 0.86  # the noncentral t puts it slightly above 0.8
    assert power_at(n - 1) < 0.8
    assert seeds_for_power(Interval(0.0, -1.0, 1.0, 3, sd=sd), Region.above(0.0)) is None  # on the boundary


def test_combined_parts_keep_their_intervals_and_the_strictest_projection():
    from repro.pipeline.decisions import combine_measurements

    collapse = judge_seeds([0.2, 0.25, 0.22], Region.below(0.5))
    survival = judge_parts({"enc": ([0.9, 0.95, 0.6], Region.at_least(0.7))}, rule=combine_any)
    m = combine_measurements({"collapse": collapse, "survival": survival})
    assert m.verdict == INCONCLUSIVE and m.seeds_to_decide == survival.seeds_to_decide
    assert [name for name, _, _ in m.parts] == ["collapse", "survival: enc"]
    assert m.rule.startswith("every part, each by 95% t-interval over 3 seeds")


def test_power_proposals_respect_the_cap_and_never_take_seeds_away():
    from repro.pipeline.power import CLAIM_COLUMNS, propose

    rows = [
        ("p", "fig1", "a", "empirical", "inconclusive", 3, 7, ""),
        ("p", "fig1", "b", "empirical", "reproduced", 3, 2, ""),
        ("p", "fig1", "c", "empirical", "inconclusive", 3, 40, ""),
        ("p", "fig2", "d", "empirical", "not measurable at this scale", 1, None, "no interval over seeds of its own"),
    ]
    plan = propose(pd.DataFrame(rows, columns=list(CLAIM_COLUMNS)), max_seeds=10).set_index("item")
    assert plan.loc["fig1", ["seeds", "proposed", "planned", "beyond_cap", "not_planned"]].tolist() == [3, 7, 2, 1, 0]
    assert plan.loc["fig2", ["seeds", "proposed", "not_planned"]].tolist() == [1, 1, 1]
