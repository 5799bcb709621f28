"""Claims of pruning by importance: Fig. 3 (the main tasks), Fig. 4 (by attention type) and Fig. 6 (the
other tasks)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.papers.sixteen_heads.claims.common import (
    AUC_MAX_PERCENT,
    CLS,
    FAMILY_NAME,
    PAPER,
    PHASE,
    PRUNING,
    S2S,
    Row,
    _judge,
    _register,
    _summary,
)
from repro.papers.sixteen_heads.gates_and_nulls import CONSTANT_SCORE, in_range, no_collapse, no_redundancy, order_given
from repro.pipeline.claims import NOT_MEASURABLE, Measurement, Null, claim
from repro.pipeline.decisions import Region, combine_any, combine_measurements, judge_parts

# --------------------------------------------------------------------------- Figure 3


def _importance_curves(data, task: str) -> pd.DataFrame:
    return S.curve(data[PRUNING], task, "importance")


def _safe_percents(curves: pd.DataFrame, keep_share: bool) -> pd.Series:
    """Per seed, where the score first falls below 97% of the baseline (``keep_share``, for BLEU) or
    more than 1 point below it (classifiers), interpolated between the pruning levels."""
    return S.per_seed(curves, lambda g: S.safe_percent(g, keep_share))


def _prune_safely(data, task: str) -> Measurement:
    pct = _safe_percents(_importance_curves(data, task), keep_share=task != CLS)
    return _judge(
        pct,
        Region.at_least(20.0),
        "safe pruning level (%, interpolated)",
        f"{FAMILY_NAME[task]}, heads pruned by importance.",
    )


COLLAPSE_PERCENT = 90
#: The smallest AUC gain over random pruning that counts as "well above random" (points or BLEU): the
#: loss Fig. 3's own rule calls noticeable for a classifier (1 accuracy point).
BEATS_RANDOM_SESOI = 1.0  # margins: docs/decisions/0001-verdict-margins.md
#: How far importance pruning may fall below the oracle order and still be "about as good" (points or
#: BLEU): the catalog's margin, twice the noticeable loss of Fig. 3's rule.
NEAR_ORACLE_MARGIN = 2.0
#: AUC differences are rounded to this many decimals (far below any score's resolution).
AUC_DIGITS = 9
#: Importance pruning twice the margin below the oracle at every pruned level: a gap past the margin
#: whatever the seeds' spread (the random order, the other candidate, can itself sit within it).
NEAR_ORACLE_NULL = order_given(PRUNING, "importance", "oracle", lowered_by=2 * NEAR_ORACLE_MARGIN)


def _collapse(data, task: str, at_most: float) -> Measurement:
    """A collapse at 90% of heads pruned, measured from the constant predictor: (score − constant) /
    (baseline − constant) at most ``at_most``. At 100% pruned a classifier *is* a constant predictor, so
    a check there could not fail (or, against the baseline's score, could not pass)."""
    constant = CONSTANT_SCORE[task]
    curves = _importance_curves(data, task)

    def share(g):
        at = g.loc[g["percent"] == COLLAPSE_PERCENT, "score"]
        if at.empty:
            raise ValueError(f"{task}: no pruning level at {COLLAPSE_PERCENT}%")
        return float((at.iloc[0] - constant) / (g["baseline"].iloc[0] - constant))

    kept = S.per_seed(curves, share)
    return _judge(
        kept,
        Region.at_most(at_most),
        f"(score − constant) / (unpruned − constant) at {COLLAPSE_PERCENT}% pruned",
        f"constant predictor's score {constant:.3g}.",
    )


def _auc_compare(data, task: str, other: str, region: Region) -> Measurement:
    auc = S.auc_by_order(data[PRUNING], task, AUC_MAX_PERCENT).set_index("seed")
    # equal curves give an exact 0: AUCs averaged in another order differ by rounding only
    gap = (auc["importance"] - auc[other]).round(AUC_DIGITS)
    return _judge(
        gap,
        region,
        f"AUC(importance) − AUC({other}) over 0-{AUC_MAX_PERCENT}% (points)",
        f"AUC(importance) = {_summary(auc['importance'])}; AUC({other}) = {_summary(auc[other])}.",
    )


_register(
    PRUNING,
    [
        Row(
            "fig03",
            "cls_prune_20pct_safely",
            statement="CLS: at least 20% of heads can be pruned by importance within 1 point of accuracy.",
            paper_value="BERT: 40% pruned without noticeable loss",
            tolerance="the level where accuracy first falls below baseline − 1, interpolated between the 10% levels, "
            "≥ 20% (95% interval over seeds)",
            gate=in_range(PRUNING, [CLS]),
            null=no_redundancy(PRUNING),
            measure=partial(_prune_safely, task=CLS),
        ),
        Row(
            "fig03",
            "s2s_prune_20pct_safely",
            statement="S2S: at least 20% of heads can be pruned by importance keeping 97% of BLEU.",
            paper_value="WMT: 20% pruned without noticeable loss",
            tolerance="the level where BLEU first falls below 0.97·BLEU₀, interpolated between the 10% levels, ≥ 20% "
            "(95% interval over seeds)",
            gate=in_range(PRUNING, [S2S]),
            null=no_redundancy(PRUNING),
            measure=partial(_prune_safely, task=S2S),
        ),
        Row(
            "fig03",
            "s2s_collapses_at_90pct",
            statement="S2S: with 90% of heads pruned, BLEU collapses.",
            paper_value="WMT BLEU drops sharply beyond about 60% pruned",
            tolerance="BLEU at 90% pruned ≤ 0.3·BLEU₀ (95% interval over seeds; the constant predictor scores 0)",
            gate=in_range(PRUNING, [S2S]),
            null=no_collapse(PRUNING),
            measure=partial(_collapse, task=S2S, at_most=0.3),
        ),
        Row(
            "fig03",
            "cls_importance_beats_random",
            statement="CLS: pruning by importance keeps more accuracy than pruning in random order.",
            paper_value="importance order well above random (implied by Fig. 3b)",
            tolerance="AUC(importance) − mean AUC(random) over 0-60% > 0 (95% interval over seeds), smallest effect "
            "of interest 1 point",
            gate=in_range(PRUNING, [CLS]),
            null=order_given(PRUNING, "importance", "random"),
            measure=partial(_auc_compare, task=CLS, other="random", region=Region.above(0.0, sesoi=BEATS_RANDOM_SESOI)),
        ),
        Row(
            "fig03",
            "s2s_importance_beats_random",
            statement="S2S: pruning by importance keeps more BLEU than pruning in random order.",
            paper_value="importance order well above random (implied by Fig. 3a)",
            tolerance="AUC(importance) − mean AUC(random) over 0-60% > 0 (95% interval over seeds), smallest effect "
            "of interest 1 BLEU",
            gate=in_range(PRUNING, [S2S]),
            null=order_given(PRUNING, "importance", "random"),
            measure=partial(_auc_compare, task=S2S, other="random", region=Region.above(0.0, sesoi=BEATS_RANDOM_SESOI)),
        ),
        Row(
            "fig03",
            "cls_importance_near_oracle",
            statement="CLS: importance pruning is about as good as the single-ablation oracle order.",
            paper_value="I_h is faster and yields better results than the oracle (Fig. 3b)",
            tolerance="AUC(importance) − AUC(oracle) over 0-60% ≥ −2 points (95% interval over seeds; "
            "non-inferiority margin 2 points)",
            gate=in_range(PRUNING, [CLS]),
            null=NEAR_ORACLE_NULL,
            measure=partial(_auc_compare, task=CLS, other="oracle", region=Region.at_least(-NEAR_ORACLE_MARGIN)),
        ),
        Row(
            "fig03",
            "s2s_importance_near_oracle",
            statement="S2S: importance pruning is about as good as the single-ablation oracle order.",
            paper_value="I_h is faster and yields better results than the oracle (Fig. 3a)",
            tolerance="AUC(importance) − AUC(oracle) over 0-60% ≥ −2 BLEU (95% interval over seeds; "
            "non-inferiority margin 2 BLEU)",
            gate=in_range(PRUNING, [S2S]),
            null=NEAR_ORACLE_NULL,
            measure=partial(_auc_compare, task=S2S, other="oracle", region=Region.at_least(-NEAR_ORACLE_MARGIN)),
        ),
    ],
)


@claim(
    paper=PAPER,
    item="fig03",
    claim_id="cls_collapses_at_90pct",
    statement="CLS: with 90% of heads pruned, accuracy falls most of the way to the constant predictor's.",
    paper_value="BERT accuracy collapses at high pruning levels (Fig. 3b)",
    tolerance="(accuracy at 90% − chance) / (unpruned − chance) ≤ 0.3 (95% interval over seeds); at 100% pruned a "
    "classifier is a constant predictor, so the check is made at 90%",
    inputs=[PRUNING],
    kind="empirical",
    phase=PHASE,
    gate=in_range(PRUNING, [CLS]),
    null=no_collapse(PRUNING),
)
def cls_collapses_at_90pct(data) -> Measurement:
    return _collapse(data, CLS, 0.3)


# --------------------------------------------------------------------------- Figure 4
# Fixed with the thresholds: AUC is the mean BLEU over 0-90% of the type pruned (all its levels);
# "at 60-70% pruned" is the mean BLEU of the 60% and 70% levels.

TYPE_NAMES = {"enc_self": "Enc-Enc", "cross": "Enc-Dec", "dec_self": "Dec-Dec"}


def _type_curves(data) -> dict[str, pd.DataFrame]:
    return {kind: S.curve(data[PRUNING], S2S, "importance", scope=kind) for kind in TYPE_NAMES}


def _type_aucs(data) -> pd.DataFrame:
    """Per seed (rows) and attention type (columns): the mean BLEU over 0-90% of that type pruned."""
    return pd.DataFrame(
        {
            kind: S.per_seed(curve, lambda g: S.curve_auc(g["percent"], g["score"], 90))
            for kind, curve in _type_curves(data).items()
        }
    )


def _enc_dec_as_sensitive_as_worst_self(data) -> dict[str, pd.DataFrame]:
    """Per seed, the Enc-Dec pruning curve replaced by a copy of the self-attention type with the lower AUC:
    a tie, which the claim's strict region must not read as "Enc-Dec most sensitive"."""
    table = data[PRUNING]
    worse = _type_aucs(data)[["enc_self", "dec_self"]].idxmin(axis=1)
    is_mt = table["task"] == S2S
    copies = [
        table[is_mt & (table["seed"] == seed) & (table["scope"] == kind)].assign(scope="cross")
        for seed, kind in worse.items()
    ]
    return {PRUNING: pd.concat([table[~(is_mt & (table["scope"] == "cross"))], *copies], ignore_index=True)}


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="enc_dec_most_sensitive",
    statement="S2S: pruning Enc-Dec heads hurts BLEU more than pruning either self-attention type.",
    paper_value="Enc-Dec falls fastest; > 60% Enc-Dec pruned is catastrophic (Fig. 4)",
    tolerance="AUC(Enc-Dec) < min(AUC(Enc-Enc), AUC(Dec-Dec)) over 0-90% (95% interval over seeds)",
    inputs=[PRUNING],
    kind="empirical",
    phase=PHASE,
    gate=in_range(PRUNING, [S2S]),
    null=Null(
        "Enc-Dec as sensitive as the more sensitive self-attention type: its curve given that type's, per seed",
        _enc_dec_as_sensitive_as_worst_self,
    ),
)
def enc_dec_most_sensitive(data) -> Measurement:
    auc = _type_aucs(data)
    gap = auc[["enc_self", "dec_self"]].min(axis=1) - auc["cross"]
    text = "; ".join(f"AUC {TYPE_NAMES[k]} {_summary(auc[k], 2)}" for k in TYPE_NAMES)
    return _judge(gap, Region.above(0.0), "min self-attention AUC − Enc-Dec AUC (BLEU)", f"{text}.")


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="enc_dec_collapses_self_survives",
    statement="S2S: at 60-70% of a type pruned, Enc-Dec has lost half its BLEU while a self-attention type keeps 70%.",
    paper_value="Enc-Dec BLEU near 0 beyond 60%; self-attention types about 30 of 36 BLEU with 20% of heads left",
    tolerance="mean BLEU at 60-70% pruned / BLEU₀: Enc-Dec < 0.5, and Enc-Enc or Dec-Dec ≥ 0.7 (each type's 95% "
    "interval over seeds; one self-attention type suffices)",
    inputs=[PRUNING],
    kind="empirical",
    phase=PHASE,
    gate=in_range(PRUNING, [S2S]),
    null=no_collapse(PRUNING),
)
def enc_dec_collapses_self_survives(data) -> Measurement:
    def at_60_70(g):
        return float(g[g["percent"].isin([60, 70])]["score"].mean() / g["baseline"].iloc[0])

    ratio = pd.DataFrame({kind: S.per_seed(curve, at_60_70) for kind, curve in _type_curves(data).items()})
    ratio = ratio.replace([np.inf, -np.inf], np.nan).dropna()
    if ratio.empty:  # BLEU₀ = 0: no ratio to take
        return Measurement("undefined: the unpruned BLEU is 0", NOT_MEASURABLE, 0)
    return combine_measurements(
        {
            "collapse": judge_parts({"Enc-Dec BLEU at 60-70% / BLEU₀": (ratio["cross"], Region.below(0.5))}),
            "survival": judge_parts(
                {f"{TYPE_NAMES[k]}": (ratio[k], Region.at_least(0.7)) for k in ("enc_self", "dec_self")},
                rule=combine_any,
            ),
        }
    )


# --------------------------------------------------------------------------- Figure 6
# Fixed with the thresholds: as Fig. 3 (the level where the score first falls below its floor,
# interpolated; CLS baseline − 1 point, S2S 97% of BLEU₀), and at 90% pruned at most half of what the
# unpruned model adds over the constant predictor left.

EXTRA_TASKS = {
    "sst2": ("SST-2", "accuracy", "cls"),
    "cola": ("CoLA", "Matthews correlation", "cls"),
    "mrpc": ("MRPC", "F1", "cls"),
    "iwslt": ("IWSLT", "BLEU", "s2s"),
}
PAPER_SAFE = {"sst2": "about 60%", "cola": "about 50%", "mrpc": "about 50%", "iwslt": "about 20%"}


def _extra_prune_safely(data, task: str) -> Measurement:
    _, metric, family = EXTRA_TASKS[task]
    curves = _importance_curves(data, task)
    pct = _safe_percents(curves, keep_share=family == "s2s")
    base = S.per_seed(curves, lambda g: float(g["baseline"].iloc[0]))
    return _judge(
        pct,
        Region.at_least(20.0),
        "safe pruning level (%, interpolated)",
        f"unpruned {metric} {_summary(base, 2)} (points).",
    )


def _extra_rows(task: str) -> list[Row]:
    """The two claims of Fig. 6 for one task: safe to prune 20%, collapses at 90% pruned."""
    name, metric, family = EXTRA_TASKS[task]
    rule = "0.97·BLEU₀" if family == "s2s" else f"baseline − 1 {metric} point"
    return [
        Row(
            "fig06",
            f"{task}_prune_20pct_safely",
            statement=f"{name} analogue: at least 20% of heads can be pruned by importance without noticeable loss.",
            paper_value=f"{name}: flat up to {PAPER_SAFE[task]} pruned (Fig. 6)",
            tolerance=f"the level where {metric} first falls below {rule}, interpolated between the 10% levels, ≥ 20% "
            "(95% interval over seeds)",
            gate=in_range(PRUNING, [task]),
            null=no_redundancy(PRUNING),
            measure=partial(_extra_prune_safely, task=task),
        ),
        Row(
            "fig06",
            f"{task}_collapses_when_pruned",
            statement=f"{name} analogue: with 90% of heads pruned the score has lost at least half of what the model "
            "adds over a constant predictor.",
            paper_value=f"{name}: performance drops sharply at high pruning levels (Fig. 6)",
            tolerance=f"({metric} at 90% − constant) / (unpruned − constant) ≤ 0.5 (95% interval over seeds)",
            gate=in_range(PRUNING, [task]),
            null=no_collapse(PRUNING),
            measure=partial(_collapse, task=task, at_most=0.5),
        ),
    ]


_register(PRUNING, [row for task in EXTRA_TASKS for row in _extra_rows(task)])
