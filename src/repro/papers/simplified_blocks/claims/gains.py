"""Claims of the trainable gains: Figs 4 and 16-22 (value and projection ratios, shaped-attention and MLP
gains)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from repro.papers.simplified_blocks.claim_table import EARLY, PAPER, ClaimRow
from repro.papers.simplified_blocks.claims.common import (
    GAIN_VANISHED,
    GAINS,
    GAINS_CURVES,
    GRID,
    NO_BETTER,
    RATIO_VANISHED,
    VARIANTS,
    _compare,
    _final,
)
from repro.papers.simplified_blocks.claims.losses import _identity_beta0
from repro.papers.simplified_blocks.gain_trajectories import final as final_step
from repro.papers.simplified_blocks.gain_trajectories import ratios
from repro.papers.simplified_blocks.gates_and_nulls import LEVELS, learned, untrained
from repro.pipeline.claims import NOT_MEASURABLE, Gate, Measurement, Null, claim, register_table
from repro.pipeline.decisions import Region, both, judge_parts

# ------------------------------------------------------------------------------- Figs 4, 16-22


def _final_ratios(data, item: str) -> pd.DataFrame:
    r = final_step(ratios(data[GAINS[item]]))
    return r.assign(abs_ratio=r["ratio"].abs())


def _largest_move(start: pd.Series, end: pd.Series) -> float:
    """The largest |end − start| over the cells of a trained quantity (indexed alike)."""
    return float((end - start.reindex(end.index)).abs().max())


def _reachable(what: str, moves: Callable, needed: float | Callable) -> Gate:
    """Reachability: the claim's region lies `needed` away from where its quantity starts (a number, or
    a function of the data), and the runs' largest observed move of the quantity, `moves(data)`, must
    get that far. A quantity that moved less can neither reach the region nor, where staying put is the
    claim, leave it: a run too short to move it says nothing either way."""

    def check(data) -> tuple[bool, str]:
        need = needed(data) if callable(needed) else needed
        seen = moves(data)
        return seen >= need, f"largest move of {what} {seen:.3g}, against the {need:.3g} the claim's region needs"

    return Gate(f"the runs moved {what} as far as the claim's region needs (its distance from the start)", check)


def _abs_ratios(data, item: str) -> tuple[pd.Series, pd.Series]:
    """|β/α| of W^V and W^P per (seed, layer, matrix) at the start and at the end of the run."""
    r = ratios(data[GAINS[item]])
    keys = ["seed", "layer", "matrix"]
    start = r[r["step"] == 0].set_index(keys)["ratio"].abs()
    return start, final_step(r).set_index(keys)["ratio"].abs()


def _ratio_move(item: str) -> Callable:
    return lambda data: _largest_move(*_abs_ratios(data, item))


def _ratio_distance(item: str) -> Callable:
    """From the largest initial |β/α| (0.2) down to the 0.05 line."""
    return lambda data: float(_abs_ratios(data, item)[0].max()) - RATIO_VANISHED


def _can_vanish(item: str) -> Gate:
    return _reachable("|β/α| (any seed, layer, V or P)", _ratio_move(item), _ratio_distance(item))


def _gains_run_gate(item: str) -> Gate:
    return both(learned([f"data/{item}_curves.csv"], None, "the run whose gains are read"), _can_vanish(item))


def _reach_said(data, item: str) -> str:
    return (
        f"|β/α| moved by at most {_ratio_move(item)(data):.3g} from its start; the 0.05 line is "
        f"{_ratio_distance(item)(data):.3g} away"
    )


def _gains_at_init(item: str) -> Null:
    """The gains of the run never moved: every logged value at its step-0 value."""

    def make(data) -> dict[str, pd.DataFrame]:
        gains = data[GAINS[item]]
        keys = ["variant", "seed", "layer", "symbol", "head"]
        start = gains[gains["step"] == 0].set_index(keys)["value"]
        return {GAINS[item]: gains.assign(value=start.reindex(pd.MultiIndex.from_frame(gains[keys])).to_numpy())}

    return Null("the gains at their initial values (a run that did not move them)", make)


def _gains_curves(item: str) -> list[str]:
    return [f"data/{item}_curves.csv", LEVELS]


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="value_proj_ratios_vanish",
    statement="With trainable α, β (init 1, 0.2), β/α of W^V and W^P goes to 0 in almost every layer.",
    paper_value="all ratios → 0 except layer-1 V (> 0.05)",
    tolerance="per seed, the fraction of (layer, V/P) pairs with final |β/α| < 0.05 ≥ 0.9, 95% interval over seeds (≥3)",
    inputs=[GAINS["fig04"], *_gains_curves("fig04")],
    kind="empirical",
    phase=EARLY,
    gate=_gains_run_gate("fig04"),
    null=_gains_at_init("fig04"),
)
def value_proj_ratios_vanish(data) -> Measurement:
    r = _final_ratios(data, "fig04")
    fractions = (r["abs_ratio"] < RATIO_VANISHED).groupby(r["seed"]).mean()
    detail = f"Median final |β/α| {r['abs_ratio'].median():.3f}; {_reach_said(data, 'fig04')}."
    return judge_parts({"fraction of final |β/α| below 0.05": (fractions, Region.at_least(0.9))}, detail=detail)


def _layers_reversed(data) -> dict[str, pd.DataFrame]:
    gains = data[GAINS["fig04"]]
    return {GAINS["fig04"]: gains.assign(layer=gains["layer"].max() - gains["layer"])}


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="first_layer_value_ratio_largest",
    statement="The largest final β/α is in the first layer.",
    paper_value="only layer-1 V stays above 0.05",
    tolerance="per seed, the largest final |β/α| of layer 1 (V or P: the paper's point is the layer, and layer 1's V "
    "and P can nearly tie) minus the largest of the other layers > 0, 95% interval over seeds (≥3)",
    inputs=[GAINS["fig04"], *_gains_curves("fig04")],
    kind="empirical",
    phase=EARLY,
    gate=learned(["data/fig04_curves.csv"], None, "the run whose gains are read"),
    null=Null("the layers in reverse order", _layers_reversed),
)
def first_layer_value_ratio_largest(data) -> Measurement:
    r = _final_ratios(data, "fig04")
    first = r["layer"] == 0
    margins = r[first].groupby("seed")["abs_ratio"].max() - r[~first].groupby("seed")["abs_ratio"].max()
    tops = r.loc[r.groupby("seed")["abs_ratio"].idxmax()]
    found = ", ".join(f"seed {s}: layer {l + 1} {m}" for s, l, m in zip(tops["seed"], tops["layer"], tops["matrix"]))
    return judge_parts(
        {"largest |β/α| of layer 1 − of the others": (margins, Region.above(0.0))}, detail=f"Largest: {found}."
    )


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="trainable_gains_not_better_than_fixed_identity",
    statement="Trainable value/projection gains do not beat fixing W^V = W^P = I.",
    paper_value="1.194 (trainable) vs 1.178 (fixed identity)",
    tolerance=NO_BETTER.words("L_trainable − L_fixed-I"),
    inputs=[GAINS_CURVES, GRID, VARIANTS, LEVELS],
    kind="empirical",
    phase=EARLY,
    gate=learned([GRID], runs="the fixed-identity runs", select=_identity_beta0),
    null=untrained([GRID], _identity_beta0, "the fixed-identity run"),
)
def trainable_gains_not_better_than_fixed_identity(data) -> Measurement:
    fixed = _identity_beta0(data)
    if not fixed:
        return Measurement("no fixed-identity run", NOT_MEASURABLE)
    table = _final(data, GAINS_CURVES, GRID)
    trainable = [v for v in table.columns if v in set(data[GAINS_CURVES]["variant"])][0]
    return _compare(data, [GAINS_CURVES, GRID], trainable, fixed[0], NO_BETTER, "L(trainable) − L(fixed I)")


@claim(
    paper=PAPER,
    item="fig16",
    claim_id="sas_p_only_first_value_ratio_survives",
    statement="In SAS-P with trainable value/projection gains, layer-1 W^V is the only β/α that stays above 0.05.",
    paper_value="same as Fig 4: layer-1 V is the only ratio > 0.05",
    tolerance="per seed, the fraction of final |β/α| other than layer-1 V that stay ≥ 0.05 ≤ 0, 95% interval over "
    "seeds (≥3)",
    inputs=[GAINS["fig16"], *_gains_curves("fig16")],
    kind="empirical",
    phase=EARLY,
    gate=_gains_run_gate("fig16"),
    null=_gains_at_init("fig16"),
)
def sas_p_only_first_value_ratio_survives(data) -> Measurement:
    r = _final_ratios(data, "fig16")
    others = r[~((r["layer"] == 0) & (r["matrix"] == "V"))]
    surviving = (others["abs_ratio"] >= RATIO_VANISHED).groupby(others["seed"]).mean()
    first_v = r[(r["layer"] == 0) & (r["matrix"] == "V")]["abs_ratio"]
    detail = f"Layer-1 V's final |β/α|: median {first_v.median():.3f}; {_reach_said(data, 'fig16')}."
    return judge_parts({"fraction of the other ratios ≥ 0.05": (surviving, Region.at_most(0.0))}, detail=detail)


@claim(
    paper=PAPER,
    item="fig21",
    claim_id="orthogonal_ratios_vanish",
    statement="With orthogonal W_init the trainable β/α ratios still go to 0 (with more outliers).",
    paper_value="ratios → 0 from 0.2, more outliers than identity",
    tolerance="per seed, the median final |β/α| over layers and V/P < 0.05, 95% interval over seeds (≥3)",
    inputs=[GAINS["fig21"], *_gains_curves("fig21")],
    kind="empirical",
    phase=EARLY,
    gate=_gains_run_gate("fig21"),
    null=_gains_at_init("fig21"),
)
def orthogonal_ratios_vanish(data) -> Measurement:
    r = _final_ratios(data, "fig21")
    medians = r.groupby("seed")["abs_ratio"].median()
    detail = f"{int((r['abs_ratio'] >= RATIO_VANISHED).sum())} of {len(r)} final ratios ≥ 0.05; {_reach_said(data, 'fig21')}."
    return judge_parts({"median final |β/α|": (medians, Region.below(RATIO_VANISHED))}, detail=detail)


def _pre_ln_gains_as_sas(data) -> dict[str, pd.DataFrame]:
    pre_ln = data[GAINS["fig22"]]["variant"].iloc[0]
    return {GAINS["fig22"]: data[GAINS["fig04"]].assign(variant=pre_ln)}


@claim(
    paper=PAPER,
    item="fig22",
    claim_id="pre_ln_keeps_value_proj",
    statement="With the attention skip kept (Pre-LN), the trainable β/α ratios do not vanish: they stay above those of the skipless model.",
    paper_value="many Pre-LN ratios increase",
    tolerance="per seed, median final |β/α| (Pre-LN) − median final |β/α| (SAS, Fig 4) > 0, 95% interval over seeds (≥3)",
    inputs=[GAINS["fig22"], GAINS["fig04"], "data/fig22_curves.csv", "data/fig04_curves.csv", LEVELS],
    kind="empirical",
    phase=EARLY,
    gate=learned(["data/fig22_curves.csv", "data/fig04_curves.csv"], None, "both runs whose gains are read"),
    null=Null("no effect: the Pre-LN run given the SAS run's gains", _pre_ln_gains_as_sas),
)
def pre_ln_keeps_value_proj(data) -> Measurement:
    pre, sas = _final_ratios(data, "fig22"), _final_ratios(data, "fig04")
    a, b = pre.groupby("seed")["abs_ratio"].median(), sas.groupby("seed")["abs_ratio"].median()
    detail = f"Median final |β/α| over seeds: Pre-LN {a.median():.3f}, SAS {b.median():.3f}."
    return judge_parts({"median |β/α| Pre-LN − SAS": ((a - b).dropna(), Region.above(0.0))}, detail=detail)


@dataclass(frozen=True, kw_only=True)
class _GainSurvives(ClaimRow):
    symbol: str  # in the gains table
    name: str  # in the measured text


def _kept_share(data, row: _GainSurvives) -> pd.Series:
    """|final gain| / |initial gain| per (seed, layer), the gain a mean over heads: the claim's quantity,
    which starts at 1."""
    gains = data[GAINS["fig04"]]
    rows = gains[gains["symbol"] == row.symbol]
    init = rows[rows["step"] == 0].groupby("layer")["value"].mean()
    last = final_step(rows).groupby(["seed", "layer"])["value"].mean()
    return last.abs() / last.index.get_level_values("layer").map(init.abs()).to_numpy()


def _gain_can_vanish(row: _GainSurvives) -> Gate:
    """ "Does not vanish" can fail only where the share kept could fall from 1 to GAIN_VANISHED: the runs
    must have moved it (in some seed and layer) by 1 − GAIN_VANISHED."""

    def moves(data) -> float:
        return float((_kept_share(data, row) - 1.0).abs().max())

    return _reachable(f"|{row.name}| / |init| (any seed, layer)", moves, 1.0 - GAIN_VANISHED)


def _gain_vanished(row: _GainSurvives) -> Null:
    def make(data) -> dict[str, pd.DataFrame]:
        gains = data[GAINS["fig04"]]
        last = (gains["symbol"] == row.symbol) & (gains["step"] == gains.groupby("seed")["step"].transform("max"))
        return {GAINS["fig04"]: gains.assign(value=gains["value"].where(~last, 0.0))}

    return Null(f"{row.name} at 0 at the end of training (vanished)", make)


def _gain_survives_gate(row: _GainSurvives) -> Gate:
    return both(learned(["data/fig04_curves.csv"], None, "the run whose gains are read"), _gain_can_vanish(row))


def _gain_survives(data, row: _GainSurvives) -> Measurement:
    share = _kept_share(data, row)
    smallest = share.groupby(level="seed").min()
    gains = data[GAINS["fig04"]]
    init = gains.loc[(gains["symbol"] == row.symbol) & (gains["step"] == 0), "value"]
    return judge_parts(
        {f"min over layers of |final {row.name}| / |init|": (smallest, Region.above(GAIN_VANISHED))},
        detail=f"Initial {row.name} {init.iloc[0]:g}; largest move of the share kept {(share - 1).abs().max():.3g}.",
    )


GAINS_SURVIVE = [
    _GainSurvives(
        item="fig17",
        claim_id="shaped_alpha_does_not_vanish",
        statement="The shaped-attention α (identity weight) does not go to 0 during training.",
        paper_value="α stays away from 0 in every layer",
        tolerance="min over layers of |final α| (mean over heads) > 0.1 × init, 95% interval over seeds (≥3)",
        symbol="alpha",
        name="α",
    ),
    _GainSurvives(
        item="fig18",
        claim_id="shaped_beta_does_not_vanish",
        statement="The shaped-attention β (softmax weight) does not go to 0 during training.",
        paper_value="β falls only slightly, to ~0.8–1",
        tolerance="min over layers of |final β| (mean over heads) > 0.1 × init, 95% interval over seeds (≥3)",
        symbol="beta",
        name="β",
    ),
    _GainSurvives(
        item="fig19",
        claim_id="shaped_gamma_does_not_vanish",
        statement="The shaped-attention γ (centring weight) does not go to 0 during training.",
        paper_value="γ stays away from 0 in every layer",
        tolerance="min over layers of |final γ| (mean over heads) > 0.1 × init, 95% interval over seeds (≥3)",
        symbol="gamma",
        name="γ",
    ),
    _GainSurvives(
        item="fig20",
        claim_id="mlp_branch_gain_does_not_vanish",
        statement="The MLP branch weight β_FF does not go to 0 during training.",
        paper_value="β_FF stays away from 0 in every layer",
        tolerance="min over layers of |final β_FF| > 0.1 × init, 95% interval over seeds (≥3)",
        symbol="beta_FF",
        name="β_FF",
    ),
]
register_table(
    PAPER,
    GAINS_SURVIVE,
    _gain_survives,
    inputs=[GAINS["fig04"], *_gains_curves("fig04")],
    kind="empirical",
    phase=EARLY,
    gate=_gain_survives_gate,
    null=_gain_vanished,
)
