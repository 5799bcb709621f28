"""Claims of Fig. 7: redundancy, duplicated members and duplicated blocks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from repro.papers.layer_diversity import gates_and_nulls as gn
from repro.papers.layer_diversity.claims.common import (
    DEPTH,
    DEPTH_GATE,
    DUPLICATION,
    GAINS,
    INFORMATION,
    PAPER,
    PHASE,
    TASK_TABLE,
    _seeds,
    _select_depth_pairs,
)
from repro.pipeline.claims import NOT_MEASURABLE, Measurement, Null, claim, verdict
from repro.pipeline.decisions import Region, judge_parts

# --------------------------------------------------------------------------- Fig. 7


@claim(
    paper=PAPER,
    item="fig07",
    claim_id="redundancies_never_fall",
    statement="Redundancy and conditional redundancy never decrease when a layer is added (Theorems 5, 6).",
    paper_value="Theorems 5 and 6: both redundancy terms grow monotonically with the number of layers (C)",
    tolerance="every step of both terms over prefixes ≥ −1e-12 bits (exact for plug-in estimates)",
    inputs=[INFORMATION],
    kind="identity",
)
def redundancies_never_fall(data) -> Measurement:
    info = data[INFORMATION].sort_values(["family", "depth", "seed", "task", "prefix"])
    grouped = info.groupby(["family", "depth", "seed", "task"])
    red = grouped["redundancy"].diff().dropna()
    cond = grouped["conditional_redundancy"].diff().dropna()
    worst = float(min(red.min(), cond.min())) if len(red) else float("nan")
    return Measurement(
        measured=f"smallest step: Redundancy {red.min():.3g}, Conditional redundancy {cond.min():.3g} bits",
        verdict=verdict(bool(np.isfinite(worst) and worst >= -1e-12)),
        seeds=_seeds(info),
        detail=f"over {len(red)} prefix steps each",
    )


@claim(
    paper=PAPER,
    item="fig07",
    claim_id="duplicate_member_adds_nothing",
    statement="Appending a copy of an existing layer's prediction adds exactly zero information.",
    paper_value="adding layers helps only when they are diverse; ΔI = 0 for a copy (C abstract; formula I)",
    tolerance="|ΔI| < 1e-12 bits for every model and task",
    inputs=[GAINS],
    kind="identity",
)
def duplicate_member_adds_nothing(data) -> Measurement:
    gains = data[GAINS]
    worst = float(gains["duplicate_gain"].abs().max())
    return Measurement(
        f"max |ΔI(duplicate)| = {worst:.3g} bits", verdict(worst < 1e-12), _seeds(gains), f"over {len(gains)} rows"
    )


#: H(Y | layers) below this (bits) means the layers determine the label: nothing is left for a member to add.
DETERMINED = 1e-12


@claim(
    paper=PAPER,
    item="fig07",
    claim_id="no_member_loses_information",
    statement="Appending a member never lowers the information the ensemble carries about Y.",
    paper_value="I(U_S, U_new; Y) − I(U_S; Y) = I(U_new; Y | U_S) ≥ 0 (chain rule; formula I)",
    tolerance="ΔI(independent member) ≥ −1e-12 bits for every model and task",
    inputs=[GAINS],
    kind="identity",
    null=Null(
        "the smallest ΔI(independent) set to −1e-6 bits (one member that loses information)",
        lambda data: {GAINS: gn.with_one_loss(data[GAINS])},
    ),
)
def no_member_loses_information(data) -> Measurement:
    gains = data[GAINS]["independent_gain"]
    worst = float(gains.min()) if len(gains) else float("nan")
    return Measurement(
        f"min ΔI(independent) = {worst:.3g} bits",
        verdict(bool(len(gains) > 0 and worst >= -1e-12)),
        _seeds(data[GAINS]),
        f"over {len(gains)} rows",
    )


@claim(
    paper=PAPER,
    item="fig07",
    claim_id="independent_member_adds_information",
    statement="Where the layers leave the label uncertain, appending an independent noisy copy of the label adds "
    "information.",
    paper_value="a new, diverse member gains relevancy − Δredundancy + Δconditional redundancy > 0 (I)",
    tolerance="ΔI > 0 for every model and task with H(Y | layers) > 1e-12 bits; rows where the layers determine "
    "Y (ΔI = 0 exactly there) are left out and counted",
    inputs=[GAINS],
    kind="simulation",
    gate=gn.label_left_uncertain(GAINS),
    null=Null(
        "ΔI(independent) = 0 on every row (a member that adds nothing)",
        lambda data: {GAINS: data[GAINS].assign(independent_gain=0.0)},
    ),
)
def independent_member_adds_information(data) -> Measurement:
    rows = data[GAINS]
    open_rows = rows[rows["label_entropy_given_layers"] > DETERMINED]
    left_out = len(rows) - len(open_rows)
    if open_rows.empty:
        return Measurement(
            f"the layers determine Y in all {len(rows)} rows: nothing is left to add", NOT_MEASURABLE, _seeds(rows)
        )
    gains = open_rows["independent_gain"]
    return Measurement(
        measured=f"ΔI(independent) min {gains.min():.3g}, median {gains.median():.3g} bits",
        verdict=verdict(bool((gains > 0).all())),
        seeds=_seeds(rows),
        detail=f"over {len(open_rows)} rows where H(Y | layers) > 0; {left_out} rows where the layers determine Y "
        "left out",
    )


#: The smallest accuracy difference of interest between the duplicated and the trained model: one point,
#: about the sampling error of one accuracy near 0.8 on a 2,000-row test split (√(0.8·0.2/2000) = 0.009).
DUPLICATION_SESOI = 0.01


@claim(
    paper=PAPER,
    item="fig07",
    claim_id="duplicated_block_no_better_than_trained",
    statement="A copy of the last trained block, inserted untrained, helps less than a trained extra layer.",
    paper_value="optional intervention of the catalog (Fig. 7 content U): expect duplicated ≤ trained",
    tolerance="per family, acc(duplicated) − acc(trained L+1), averaged over its judged tasks (those in the depth "
    "regime: room above the cue level and below the ceiling, a change with depth; the others are left out and "
    "named) and the base depths, is < 0 by its 95% "
    f"interval over seeds; an interval within ±{DUPLICATION_SESOI} of 0 (the smallest difference of interest, one "
    "point of accuracy) reads not reproduced: a tie does not show that the copy helps less",
    inputs=[DUPLICATION, DEPTH, TASK_TABLE],
    kind="empirical",
    phase=PHASE,
    gate=DEPTH_GATE,
    null=gn.duplicated_as_good_as_trained(DUPLICATION),
)
def duplicated_block_no_better_than_trained(data) -> Measurement:
    selection = _select_depth_pairs(data)
    rows = data[DUPLICATION].merge(selection.pairs, on=["family", "task"])
    wide = rows.pivot_table(
        index=["family", "base_depth", "task", "seed"], columns="variant", values=["accuracy", "diversity"]
    )
    if wide.empty or "trained" not in wide["accuracy"] or "duplicated" not in wide["accuracy"]:
        return Measurement(
            "no duplicated model on a judged task has a trained model one layer deeper",
            NOT_MEASURABLE,
            None,
            selection.text(),
        )
    wide = wide.dropna()
    acc, div = wide["accuracy"], wide["diversity"]
    per_seed = (acc["duplicated"] - acc["trained"]).groupby(["family", "seed"]).mean()  # over tasks, base depths
    d_dup = (acc["duplicated"] - acc["original"]).groupby("family").mean()
    d_trained = (acc["trained"] - acc["original"]).groupby("family").mean()
    div_dup = (div["duplicated"] - div["original"]).groupby("family").mean()
    div_trained = (div["trained"] - div["original"]).groupby("family").mean()
    families = sorted(per_seed.index.get_level_values("family").unique())
    judged = judge_parts(
        {family: (per_seed.loc[family].to_numpy(), Region.below(0.0, sesoi=DUPLICATION_SESOI)) for family in families},
        detail=f"acc(duplicated) − acc(trained L+1) per family; pairs: {selection.text()}.",
    )
    return replace(
        judged,
        detail=(
            judged.detail
            + " Δacc from the original depth L, duplicated vs trained: "
            + ", ".join(f"{f} {d_dup[f]:+.3f} vs {d_trained[f]:+.3f}" for f in families)
            + ". ΔDiv (logit lens), duplicated vs trained: "
            + ", ".join(f"{f} {div_dup[f]:+.3g} vs {div_trained[f]:+.3g}" for f in families)
            + f". Base depths {sorted(rows['base_depth'].unique().tolist())}."
        ),
    )
