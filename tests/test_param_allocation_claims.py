"""The param_allocation claims that read the theory, sweep and saturation tables, and the replacement claims
not covered in test_param_allocation_replacement.py, judged on small hand-made tables whose verdicts and
numbers are worked out by hand."""

import math

import numpy as np
import pandas as pd

import repro.papers.param_allocation.claims as claims
from repro.pipeline.claims import load_claims


def test_every_catalog_check_is_registered_once():
    ids = [c.claim_id for c in load_claims("param_allocation")]
    assert len(ids) == len(set(ids))
    tasks = ("ngram_discrete", "ngram_continuous", "induction", "nonlinear")
    assert {i for i in ids if i.startswith("u_shape_")} == {f"u_shape_{t}_learned" for t in tasks}
    assert {i for i in ids if i.startswith("fewer_heads_cost_")} == {f"fewer_heads_cost_{t}_alibi" for t in tasks}
    assert {
        "jacobian_bound_holds",
        "jacobian_scales_as_one_over_length",
        "svd_per_entry_error_bound",
        "svd_output_error_slope",
        "trained_normalised_error_falls_with_length",
        "trained_rank_gap_shrinks_with_length",
        "svd_student_recovers_at_rank8",
        "svd_init_beats_random_init",
        "recovery_grows_with_rank",
        "every_head_recovers_at_rank8",
        "late_positions_suffer_less",
        "head_dim_gain_shrinks_with_length",
        "logit_norms_grow_with_length",
    } <= set(ids)


# -- fig01 ------------------------------------------------------------------------------------------------
def _jacobian(ratios, scaled):
    lengths = [16, 64, 256, 1024]
    return pd.DataFrame(
        [
            dict(kind="uniform", logit_bound=1.0, length=L, ratio=r, scaled_norm=s)
            for L, r, s in zip(lengths, ratios, scaled)
        ]
    )


def test_jacobian_claims_on_hand_tables():
    ok = _jacobian([0.5, 0.9, 1.0 + 1e-12, 0.3], [2.0, 2.0, 2.0, 2.0])
    assert claims.jacobian_bound_holds({claims.JACOBIAN: ok}).verdict == "reproduced"  # float rounding allowed
    assert claims.jacobian_scales_as_one_over_length({claims.JACOBIAN: ok}).measured == "max CV = 0.000"
    # ‖J‖ that does not fall with L: L·‖J‖ = 1, 2, 4, 8 has mean 3.75 and sd √(28.75/3), CV 0.826
    bad = _jacobian([0.5, 0.9, 1.01, 0.3], [1.0, 2.0, 4.0, 8.0])
    assert claims.jacobian_bound_holds({claims.JACOBIAN: bad}).verdict == "not reproduced"
    result = claims.jacobian_scales_as_one_over_length({claims.JACOBIAN: bad})
    assert result.verdict == "not reproduced" and result.measured == f"max CV = {math.sqrt(28.75 / 3) / 3.75:.3f}"


# -- fig02, fig07, fig08 --------------------------------------------------------------------------------------
def _sweep(means, seeds=(0, 1, 2), noise=0.1):
    rows = [
        dict(task="induction", position="alibi", heads=h, seed=s, eval_loss=m + noise * (i - 1))
        for h, m in means.items()
        for i, s in enumerate(seeds)
    ]
    return pd.DataFrame(rows)


BOUND = pd.DataFrame(
    [dict(task="induction", kind="sweep", heads=h, bound=b) for h, b in ((1, 3.0), (4, 2.0), (16, 1.0))]
    + [dict(task="induction", kind="minimiser", heads=12, bound=0.5)]
)


def test_u_shape_on_hand_tables():
    u = claims._u_shape({claims.SWEEP: _sweep({1: 2.0, 4: 1.0, 16: 1.5}), claims.BOUND: BOUND}, "induction", "alibi")
    assert u.verdict == "reproduced" and u.measured.startswith("argmin H = 4; edges 2× / 1.5× min")
    assert "Bound's sweep argmin H = 16 (|log2 ratio| = 2" in u.detail  # the minimiser row is not the sweep's
    two_seeds = claims._u_shape(
        {claims.SWEEP: _sweep({1: 2.0, 4: 1.0, 16: 1.5}, seeds=(0, 1)), claims.BOUND: BOUND}, "induction", "alibi"
    )
    assert two_seeds.verdict == "not reproduced" and "Failed: ≥3 seeds" in two_seeds.detail
    monotone = claims._u_shape(
        {claims.SWEEP: _sweep({1: 3.0, 4: 2.0, 16: 1.0}), claims.BOUND: BOUND}, "induction", "alibi"
    )
    assert monotone.verdict == "not reproduced" and "interior argmin" in monotone.detail
    assert "lowest seed-mean loss is at the most heads (H = 16)" in monotone.detail
    plateau = claims._u_shape(
        {claims.SWEEP: _sweep({1: 2.0, 4: 1.0, 16: 1.05}), claims.BOUND: BOUND}, "induction", "alibi"
    )
    assert plateau.verdict == "not reproduced" and "within 1.1× of the minimum at H = 16 (1.05× min)" in plateau.detail


def test_left_arm_of_the_alibi_sweeps_on_hand_tables():
    data = {claims.BOUND: BOUND}
    plateau = claims._left_arm(dict(data, **{claims.SWEEP: _sweep({1: 2.0, 4: 1.0, 16: 1.05})}), "induction")
    assert plateau.verdict == "reproduced" and plateau.measured.startswith("argmin H = 4; loss(H = 1) 2× min")
    assert "Right edge (not judged): loss(H = 16) 1.05× min" in plateau.detail
    falling = claims._left_arm(dict(data, **{claims.SWEEP: _sweep({1: 3.0, 4: 2.0, 16: 1.0})}), "induction")
    assert falling.verdict == "reproduced"  # the best loss at the most heads is what the design allows
    best_at_one = claims._left_arm(dict(data, **{claims.SWEEP: _sweep({1: 1.0, 4: 1.2, 16: 1.3})}), "induction")
    assert best_at_one.verdict == "not reproduced" and "Failed: argmin above H = 1, loss(H = 1) ≥ 1.1× min" in (
        best_at_one.detail
    )
    shallow = claims._left_arm(
        dict(data, **{claims.SWEEP: _sweep({1: 1.05, 4: 1.0, 16: 1.0}, noise=0.001)}), "induction"
    )
    assert shallow.verdict == "not reproduced" and "loss(H = 1) ≥ 1.1× min" in shallow.detail


# -- fig03 ----------------------------------------------------------------------------------------------------
def _low_rank(power, error_scale=0.5):
    rows = []
    for rank in (1, 2, 4):  # 4 = the full rank: left out of the slope
        for L in (16, 64, 256, 1024):
            bound = 2.0 * math.exp(2.0) / L
            rows.append(
                dict(
                    rank=rank,
                    length=L,
                    logit_bound=1.0,
                    max_abs_logit=0.9,
                    output_error=L**power,
                    max_entry_error=error_scale * bound,
                    per_entry_bound=bound,
                )
            )
    return pd.DataFrame(rows)


def test_low_rank_claims_on_hand_tables():
    ok = _low_rank(-0.5)
    result = claims.svd_per_entry_error_bound({claims.LOW_RANK: ok})
    assert result.verdict == "reproduced" and "max error/bound = 0.5" in result.measured
    slope = claims.svd_output_error_slope({claims.LOW_RANK: ok})
    assert slope.verdict == "reproduced" and slope.measured == "slopes -0.500 … -0.500"
    above = claims.svd_per_entry_error_bound({claims.LOW_RANK: _low_rank(-0.5, 1.5)})
    assert above.verdict == "not reproduced" and "Failed: error above the corollary's bound." in above.detail
    assert claims.svd_output_error_slope({claims.LOW_RANK: _low_rank(-1.0)}).verdict == "not reproduced"


def _saturation(r4):
    excess = {(1, 16): 1.0, (1, 64): 0.3, (32, 16): 0.1, (32, 64): 0.1, (4, 16): r4[0], (4, 64): r4[1]}
    return pd.DataFrame(
        [
            dict(seed=s, rank=r, length=L, excess_mse=v, normalised_mse=v * L)
            for s in (0, 1, 2)
            for (r, L), v in excess.items()
        ]
    )


def test_trained_saturation_claims_on_hand_tables():
    # normalised = excess × L: 0.4·16 → 0.05·64 falls, 0.4·16 → 0.2·64 rises though the excess falls
    falling = claims.trained_normalised_error_falls_with_length({claims.SATURATION: _saturation((0.4, 0.05))})
    assert falling.verdict == "reproduced" and falling.seeds == 3
    rising = claims.trained_normalised_error_falls_with_length({claims.SATURATION: _saturation((0.4, 0.2))})
    assert rising.verdict == "not reproduced"
    # gap err(r=1) − err(r=32): 0.9 at L = 16, 0.2 at L = 64; ratio 2/9 ≤ 0.5
    gap = claims.trained_rank_gap_shrinks_with_length({claims.SATURATION: _saturation((0.4, 0.2))})
    assert gap.verdict == "reproduced" and gap.measured == "gap(L=64) / gap(L=16) = 0.222"


def _students(excess_over_svd: float, full_rank_error: float):
    """Seeds 0-2; ranks 4 and 32 (full) at L = 16, 64; SVD errors 0.2 / 0.3 at rank 4 and 0 at full rank."""
    svd = {(4, 16): 0.2, (4, 64): 0.3, (32, 16): 0.0, (32, 64): 0.0}
    trained = {key: v * (1 + excess_over_svd) if key[0] < 32 else full_rank_error for key, v in svd.items()}
    return pd.DataFrame(
        [
            dict(seed=s, rank=r, length=L, svd_mse=v, excess_mse=trained[r, L], normalised_mse=trained[r, L] / 0.5)
            for s in (0, 1, 2)
            for (r, L), v in svd.items()
        ]
    )


def test_the_students_gate_asks_for_convergence_to_the_svd_student():
    check = claims.STUDENTS_GATE.check
    assert check({claims.SATURATION: _students(0.0, 0.0)})[0] is True  # a tie with the stationary point passes
    assert check({claims.SATURATION: _students(-0.1, 0.001)})[0] is True
    assert check({claims.SATURATION: _students(0.049, 0.0)})[0] is True
    above, detail = check({claims.SATURATION: _students(0.06, 0.0)})
    assert above is False and "2 of 2 (r, L) cells more than 5% above" in detail
    unfit, detail = check({claims.SATURATION: _students(0.0, 0.02)})  # normalised 0.04 at full rank
    assert unfit is False and "2 of 2 lengths above a normalised error of 0.01" in detail
    assert check({claims.SATURATION: _students(0.5, 0.3)})[0] is False  # an untrained student


# -- fig04, fig09: recovery against rank; fig06: per-position buckets ------------------------------------------
def _replacement(svd_losses, other_head_loss):
    """One seed, layer 0: teacher 2.0; head 0 ablated 3.0, swept over ranks; head 1 ablated 3.0, rank 8 only."""
    rows = [dict(seed=0, layer=-1, head=-1, rank=0, init="none", stage="none", condition="teacher", eval_loss=2.0)]
    rows += [
        dict(seed=0, layer=0, head=h, rank=0, init="none", stage="zero_shot", condition="ablated", eval_loss=3.0)
        for h in (0, 1)
    ]
    rows += [
        dict(seed=0, layer=0, head=0, rank=r, init="svd", stage="finetuned", condition="student", eval_loss=v)
        for r, v in svd_losses.items()
    ]
    rows += [
        dict(seed=0, layer=0, head=0, rank=r, init="random", stage="finetuned", condition="student", eval_loss=2.5)
        for r in svd_losses
    ]
    rows += [
        dict(
            seed=0,
            layer=0,
            head=1,
            rank=8,
            init="svd",
            stage="finetuned",
            condition="student",
            eval_loss=other_head_loss,
        )
    ]
    return pd.DataFrame(rows)


def test_recovery_claims_on_hand_tables():
    rising = {claims.REPLACEMENT: _replacement({1: 2.6, 4: 2.2, 8: 2.05}, other_head_loss=2.02)}  # R = .4, .8, .95
    result = claims.recovery_grows_with_rank(rising)
    assert result.verdict == "reproduced" and "r=4: 0.800, r=8: 0.950" in result.detail
    assert claims.svd_student_recovers_at_rank8(rising).measured == "layer 0: R = 0.950"  # head 1 is not the sweep head
    every = claims.every_head_recovers_at_rank8(rising)  # R = .95 and .98
    assert every.verdict == "reproduced" and every.measured == "median R = 0.965 over 2 heads×seeds"
    falling = {claims.REPLACEMENT: _replacement({1: 2.6, 4: 2.2, 8: 2.25}, other_head_loss=2.5)}  # R(8) = .75, drop .05
    assert claims.recovery_grows_with_rank(falling).verdict == "not reproduced"
    assert claims.every_head_recovers_at_rank8(falling).verdict == "not reproduced"  # median of .75 and .5


def _positions(slopes):
    """Three seeds; the zero-shot rank-1 SVD student's loss exceeds the teacher's by 0.1 + slope·t at position t."""
    rows = []
    for seed, slope in enumerate(slopes):
        for t in range(4):
            bucket = dict(bucket_start=0 if t < 2 else 2, bucket_end=2 if t < 2 else 4)
            rows.append(
                dict(
                    seed=seed,
                    layer=-1,
                    head=-1,
                    rank=0,
                    init="none",
                    stage="none",
                    condition="teacher",
                    position=t,
                    loss=1.0,
                    **bucket,
                )
            )
            rows.append(
                dict(
                    seed=seed,
                    layer=0,
                    head=0,
                    rank=1,
                    init="svd",
                    stage="zero_shot",
                    condition="student",
                    position=t,
                    loss=1.1 + slope * t,
                    **bucket,
                )
            )
    return pd.DataFrame(rows)


def test_late_positions_claim_counts_seeds():
    one_seed = _replacement({1: 2.6}, other_head_loss=2.5)
    replacement = pd.concat([one_seed.assign(seed=s) for s in (0, 1, 2)])  # each seed sweeps its head 0
    two_of_three = claims.late_positions_suffer_less(
        {claims.POSITIONS: _positions([-0.01, -0.01, 0.01]), claims.REPLACEMENT: replacement}
    )
    assert two_of_three.verdict == "reproduced" and two_of_three.measured == "L0 r=1: 2/3"
    one_of_three = claims.late_positions_suffer_less(
        {claims.POSITIONS: _positions([-0.01, 0.01, 0.01]), claims.REPLACEMENT: replacement}
    )
    assert one_of_three.verdict == "not reproduced" and "fails in 1 of 1 (layer, rank) cells" in one_of_three.detail
    assert np.isclose(claims._majority(3), 2) and claims._majority(2) == 2


def test_head_dim_gain_claim_names_where_the_gain_rises():
    # gain = val(d_h=4) − val(d_h=16): −0.15, −0.05, −0.08 over L = 32, 128, 512 (the larger heads are worse)
    decoders = pd.DataFrame(
        [
            dict(seed=s, length=L, head_dim=d, eval_loss=5.0 + (g + 0.01 * s * (L == 32) if d == 4 else 0.0))
            for s in (0, 1, 2)
            for L, g in ((32, -0.15), (128, -0.05), (512, -0.08))
            for d in (4, 16)
        ]
    )
    result = claims.head_dim_gain_shrinks_with_length({claims.DECODERS: decoders})
    assert result.verdict == "not reproduced"
    assert "Why: the gain rises at L=32 → 128 (-0.14 → -0.05)." in result.detail
    assert "higher loss at every L" in result.detail
    # two seeds are too few to judge a comparison (the verdicts issue asks for three)
    two = claims.head_dim_gain_shrinks_with_length({claims.DECODERS: decoders[decoders["seed"] < 2]})
    assert two.verdict == "not measurable at this scale" and "at least 3 seeds" in two.detail


# -- gates and nulls ------------------------------------------------------------------------------------------
def _metric_sweep(task, metrics):
    return pd.DataFrame(
        [
            dict(task=task, position="alibi", heads=h, seed=s, eval_loss=1 - m, metric=m, metric_name="accuracy")
            for h, m in metrics.items()
            for s in (0, 1, 2)
        ]
    )


def test_a_sweep_that_every_head_count_solves_fails_its_gate():
    from repro.papers.param_allocation.gates_and_nulls import sweep_in_range

    bound = pd.DataFrame([dict(task="induction", input_dim=16)])
    gate = sweep_in_range(claims.SWEEP, claims.BOUND, "induction", "alibi")
    solved = {claims.SWEEP: _metric_sweep("induction", {1: 0.999, 4: 1.0, 16: 1.0}), claims.BOUND: bound}
    assert gate.check(solved)[0] is False  # at the ceiling for every H: no room for a U-shape
    in_range = {claims.SWEEP: _metric_sweep("induction", {1: 0.7, 4: 0.9, 16: 0.8}), claims.BOUND: bound}
    assert gate.check(in_range)[0] is True
    at_chance = {claims.SWEEP: _metric_sweep("induction", {1: 0.06, 4: 0.07, 16: 0.065}), claims.BOUND: bound}
    assert gate.check(at_chance)[0] is False  # chance 1/16: nothing learned


def test_param_allocation_claims_fail_on_their_nulls(tmp_path):
    """Judged through the registry: the teacher gate passes (unigram 7) and no claim is reproduced on its null."""
    from conftest import write_reference_levels

    from repro.pipeline.claims import judge_claim

    one_seed = _replacement({1: 2.6, 4: 2.2, 8: 2.05}, other_head_loss=2.02)
    tables = {
        "replacement.csv": pd.concat([one_seed.assign(seed=s) for s in (0, 1, 2)]),
        "heads_sweep.csv": _sweep({1: 2.0, 4: 1.0, 16: 1.5}).assign(metric=0.5, metric_name="normalised_mse"),
        "allocation_bound.csv": BOUND.assign(input_dim=16),
    }
    data_dir = tmp_path / "param_allocation" / "data"
    data_dir.mkdir(parents=True)
    for name, table in tables.items():
        table.to_csv(data_dir / name, index=False)
    write_reference_levels(tmp_path, "param_allocation")
    by_id = {c.claim_id: c for c in load_claims("param_allocation")}
    for claim_id in ("recovery_grows_with_rank", "every_head_recovers_at_rank8", "fewer_heads_cost_induction_alibi"):
        row = judge_claim(by_id[claim_id], tmp_path, "laptop")
        assert row["verdict"] == "reproduced" and row["gate"].startswith("passed"), row
        assert row["null"].startswith("not reproduced"), row


def test_recovery_is_judged_only_where_the_ablation_gap_is_resolved():
    """The gate of the sweep-head claims: the head's ablation gap at least 3 standard errors over seeds."""
    one_seed = _replacement({8: 2.05}, other_head_loss=2.02)  # gap 1.0 nat in seed 0
    seeds = pd.concat([one_seed.assign(seed=s) for s in (0, 1, 2)])
    ok, said = claims._gaps_resolved({claims.REPLACEMENT: seeds})
    assert ok and "layer 0 (head 0): 1.0000 ± 0.0000 nats (SE, n=3)" in said
    noisy = seeds.copy()
    ablated = noisy["condition"] == "ablated"
    noisy.loc[ablated, "eval_loss"] = 2.0 + noisy.loc[ablated, "seed"].map({0: 0.004, 1: -0.002, 2: 0.001})
    assert not claims._gaps_resolved({claims.REPLACEMENT: noisy})[0]  # a gap of 0.001 ± 0.0017 nats
    assert not claims._gaps_resolved({claims.REPLACEMENT: one_seed})[0]  # one seed: no standard error
