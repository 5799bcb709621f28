"""Claims of Fig. 6: information and accuracy as layers are added, and submodularity."""

from __future__ import annotations

import numpy as np

from repro.papers.layer_diversity import gates_and_nulls as gn
from repro.papers.layer_diversity.claims.common import (
    DEPTH,
    DEPTH_GATE,
    FITS,
    INFORMATION,
    PAPER,
    PHASE,
    REAL_LAYERS,
    SUBMODULARITY,
    TASK_TABLE,
    _seeds,
    _select_depth_pairs,
)
from repro.papers.layer_diversity.depth_scaling import diminishing_doublings, doubling_chain, doubling_gains
from repro.pipeline.claims import NOT_MEASURABLE, Measurement, Null, claim, format_number, verdict
from repro.pipeline.decisions import Region, judge_parts

# --------------------------------------------------------------------------- Fig. 6


@claim(
    paper=PAPER,
    item="fig06",
    claim_id="information_grows_with_prefix",
    statement="F(S_ℓ) = I(U_{0:ℓ}; Y) over logit-lens prefixes never decreases as layers are added.",
    paper_value="I(U_S; Y) is monotone in S (Theorems 4, 7; I)",
    tolerance="F(S_{ℓ+1}) − F(S_ℓ) ≥ −1e-12 bits for every model, task and ℓ (exact for plug-in estimates)",
    inputs=[INFORMATION],
    kind="identity",
)
def information_grows_with_prefix(data) -> Measurement:
    info = data[INFORMATION].sort_values(["family", "depth", "seed", "task", "prefix"])
    steps = info.groupby(["family", "depth", "seed", "task"])["joint_information"].diff().dropna()
    worst = float(steps.min()) if len(steps) else float("nan")
    return Measurement(
        measured=f"smallest step ΔF = {worst:.3g} bits",
        verdict=verdict(bool(np.isfinite(worst) and worst >= -1e-12)),
        seeds=_seeds(info),
        detail=f"over {len(steps)} prefix steps; share of steps with ΔF > 1e-3 bits: "
        f"{format_number(float((steps > 1e-3).mean()))}",
    )


@claim(
    paper=PAPER,
    item="fig06",
    claim_id="doubling_gains_diminish",
    statement="Accuracy gains per doubling of depth do not grow: diminishing returns, as in log scaling.",
    paper_value="gain from more layers is submodular; linked to log convergence of scaling laws (C, abstract)",
    tolerance="per family, on the mean accuracy over its judged tasks (those in the depth regime: room above the "
    "cue level and below the ceiling, a change with depth; the others are left out and named): each doubling gains at most 0.02 more than the one before "
    "(Δ(4→8) ≤ Δ(2→4) + 0.02 ≤ Δ(1→2) + 0.04 on the doublings trained), every step by its 95% interval over seeds",
    inputs=[DEPTH, FITS, TASK_TABLE],
    kind="empirical",
    phase=PHASE,
    gate=DEPTH_GATE,
    null=gn.linear_in_depth(DEPTH),
)
def doubling_gains_diminish(data) -> Measurement:
    selection = _select_depth_pairs(data)
    depth = data[DEPTH].merge(selection.pairs, on=["family", "task"])
    fits = data[FITS]
    if depth.empty:
        return Measurement("no (family, task) to judge", NOT_MEASURABLE, _seeds(data[DEPTH]), selection.text())
    # per seed, the mean accuracy over the family's judged tasks at each depth
    per_seed = depth.groupby(["family", "seed", "depth"])["accuracy"].mean()
    curves = per_seed.groupby(["family", "depth"]).mean()
    parts, texts = {}, []
    for family in sorted(depth["family"].unique()):
        gains = doubling_gains(curves[family].to_dict())
        chain = doubling_chain(gains)
        if len(chain) < 2:
            continue
        texts.append(f"{family} " + ", ".join(f"Δ({a}→{b}) {gains[(a, b)]:+.3f}" for a, b in chain))
        seed_gains = [doubling_gains(curve.droplevel(0).to_dict()) for _, curve in per_seed[family].groupby(level=0)]
        for earlier, later in zip(chain, chain[1:]):
            steps = [g[later] - g[earlier] for g in seed_gains if earlier in g and later in g]
            parts[f"{family} Δ({later[0]}→{later[1]}) − Δ({earlier[0]}→{earlier[1]})"] = (steps, Region.below(0.02))
    if not parts:
        return Measurement("fewer than two consecutive doublings of depth", NOT_MEASURABLE, _seeds(depth))
    # the same check per task, reported only
    task_curves = depth.groupby(["family", "task", "depth"])["accuracy"].mean()
    per_task = []
    for _, curve in task_curves.groupby(level=[0, 1]):
        gains = doubling_gains(curve.droplevel([0, 1]).to_dict())
        chain = doubling_chain(gains)
        if len(chain) >= 2:
            per_task.append(diminishing_doublings({k: gains[k] for k in chain}, tolerance=0.02))
    r2 = fits[fits["task"] == "all"].set_index("family")
    fit_text = "; ".join(
        f"{f}: b = {r.slope_per_ln_depth:+.3f}/ln L, R² = {format_number(r.r2, 2)}" for f, r in r2.iterrows()
    )
    return judge_parts(
        parts,
        detail=(
            f"Pairs: {selection.text()}. Seed-mean gains: {'; '.join(texts)}. Reported, not judged: the check on "
            "seed means per (family, task) "
            f"holds for {sum(per_task)}/{len(per_task)}. Fit acc ≈ a + b·ln L on the task mean: {fit_text}."
        ),
    )


@claim(
    paper=PAPER,
    item="fig06",
    claim_id="independent_members_submodular",
    statement="For members independent given Y, F(S) = I(U_S; Y) is submodular: every prefix test holds.",
    paper_value="Theorem 7: gains are submodular when the U_i are (conditionally) independent (C)",
    tolerance="F(T∪{i}) − F(T) − [F(S∪{i}) − F(S)] ≤ 1e-3 bits for every prefix pair S ⊂ T, i ∉ T (plug-in, judged N)",
    inputs=[SUBMODULARITY, REAL_LAYERS],
    kind="simulation",
    null=Null(
        "the smaller and the larger prefix's gains exchanged in every test (members that complement each other: "
        "F supermodular, each violation of the opposite sign)",
        lambda data: {SUBMODULARITY: gn.exchange_gains(data[SUBMODULARITY])},
    ),
)
def independent_members_submodular(data) -> Measurement:
    # N: the catalog asks for 1e-3 bits at N = 20k. Chosen before any run from the known estimator bias:
    # for K = 4 labels and six noisy copies (flips 0.3, 0.4, 0.5, 0.6, 0.45, 0.55), the first-order plug-in
    # bias of a violation, 9(4^b − 4^a)/(2N ln 2) bits for prefixes of sizes a < b, exceeds the tightest true
    # slack (2.4e-3 bits, computed exactly from the distribution) by 0.31 bits at N = 20k and 0.02 bits at
    # N = 200k, and falls below it at N ≈ 1M; N = 2M (the configured `judged_samples`) costs seconds with the
    # counting fast path, so the judged test uses it and the smaller N are reported beside it.
    tests = data[SUBMODULARITY]
    judged = tests[tests["judged"]]
    worst = float(judged["violation"].max())
    n = int(judged["samples"].iloc[0])
    others = []
    for size, rows in tests[~tests["judged"]].groupby("samples"):
        others.append(
            f"N = {size:,}: max violation {rows['violation'].max():.3g} bits "
            f"({int((rows['violation'] > 1e-3).sum())}/{len(rows)} tests > 1e-3; predicted bias up to "
            f"{rows['predicted_bias'].max():.2g})"
        )
    real = data[REAL_LAYERS]
    tests_real = int(real["submodularity_tests"].sum())
    share = real["submodularity_violations_1e3"].sum() / tests_real if tests_real else float("nan")
    return Measurement(
        measured=f"max violation {worst:.3g} bits at N = {n:,} ({len(judged)} tests)",
        verdict=verdict(bool(worst <= 1e-3)),
        seeds=None,
        detail=(
            f"Exact (population) violation max {judged['exact_violation'].max():.3g} bits; predicted plug-in bias at "
            f"this N up to {judged['predicted_bias'].max():.2g} bits. The catalog's N = 20k is biased by more than "
            f"the tolerance: " + "; ".join(others) + ". Reported, not judged (real layers are not conditionally "
            f"independent): prefix tests of the trained models' per-layer labels violate submodularity by more "
            f"than 1e-3 bits in {format_number(share)} of {tests_real:,} tests, largest "
            f"{format_number(float(real['submodularity_max_violation'].max()))} bits."
        ),
    )
