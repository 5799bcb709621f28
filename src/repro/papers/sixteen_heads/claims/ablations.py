"""Claims of the ablations: Fig. 1 (single heads), Table 1 (Enc-Enc heads), Tables 2, 3, 5, 6 (one head per
layer) and Fig. 2 (the ablations across domains)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.papers.sixteen_heads.claims.common import (
    ABLATION,
    ALPHA,
    CLS,
    FAMILY_NAME,
    MIN_CORRELATION,
    PAPER,
    PHASE,
    S2S,
    Row,
    _judge,
    _median,
    _register,
    _single,
    _summary,
)
from repro.papers.sixteen_heads.gates_and_nulls import (
    every_head_critical,
    in_range,
    no_head_improves,
    shifted_scores_uncorrelated,
)
from repro.pipeline.claims import Measurement, Null, claim, format_number
from repro.pipeline.decisions import Region

# --------------------------------------------------------------------------- Figure 1


def _fraction_within(data, task: str, bound: float) -> Measurement:
    single = _single(data, task)
    frac = S.per_seed(single, lambda g: float((g["delta"].abs() < bound).mean()))
    return _judge(
        frac,
        Region.at_least(0.80),
        f"fraction of heads with |Δ| < {bound:g}",
        f"{FAMILY_NAME[task]}, every head masked alone, test set.",
    )


def _some_head_improves(data, task: str) -> Measurement:
    """The best head's z-score beyond what the best of as many noise-only heads would reach."""
    single = _single(data, task)
    n_heads = int(single.groupby("seed").size().min())
    noise_max = S.expected_max_normal(n_heads)
    excess = S.per_seed(single, lambda g: float(S.signed_z(g["delta"], g["p_value"]).max()) - noise_max)
    best = S.per_seed(single, lambda g: float(g["delta"].max()))
    return _judge(
        excess,
        Region.above(0.0),
        f"largest head z − E[max z of {n_heads} noise heads] ({noise_max:.3g})",
        f"{FAMILY_NAME[task]}, test set; z from each head's own test (McNemar / paired bootstrap). "
        f"Largest Δ over heads (points): {_summary(best)}.",
    )


def _median_abs_delta(data, task: str) -> Measurement:
    med = S.per_seed(_single(data, task), lambda g: float(g["delta"].abs().median()))
    return _judge(med, Region.below(0.5), "median |Δ| over heads (points)", f"{FAMILY_NAME[task]}, test set.")


_register(
    ABLATION,
    [
        Row(
            "fig01",
            "cls_most_heads_redundant",
            statement="CLS: removing any single head changes accuracy by less than 1 point for most heads.",
            paper_value="BERT: all 144 ablations within about 0.824-0.838 of 0.835 accuracy (Fig. 1b)",
            tolerance="≥ 80% of heads with |Δ| < 1 accuracy point (95% interval over seeds)",
            gate=in_range(ABLATION, [CLS]),
            null=every_head_critical(ABLATION),
            measure=partial(_fraction_within, task=CLS, bound=1.0),
        ),
        Row(
            "fig01",
            "s2s_most_heads_redundant",
            statement="S2S: removing any single head changes BLEU by less than 0.5 for most heads.",
            paper_value="WMT: ablations within about 35.5-36.3 of 36.05 BLEU (Fig. 1a)",
            tolerance="≥ 80% of heads with |Δ| < 0.5 BLEU (95% interval over seeds)",
            gate=in_range(ABLATION, [S2S]),
            null=every_head_critical(ABLATION),
            measure=partial(_fraction_within, task=S2S, bound=0.5),
        ),
        Row(
            "fig01",
            "cls_some_head_improves",
            statement="CLS: removing some head increases accuracy.",
            paper_value="some ablations score above the unmasked model (Fig. 1b)",
            tolerance="largest z = sign(Δ)·Φ⁻¹(1 − p/2) over the H heads − E[max of H N(0, 1)] > 0 (95% interval "
            "over seeds; H = 32 at laptop scale: 2.07): the best head beats the best of H noise-only heads",
            gate=in_range(ABLATION, [CLS]),
            null=no_head_improves(ABLATION),
            measure=partial(_some_head_improves, task=CLS),
        ),
        Row(
            "fig01",
            "s2s_some_head_improves",
            statement="S2S: removing some head increases BLEU.",
            paper_value="some ablations score above the unmasked model (Fig. 1a)",
            tolerance="largest z = sign(Δ)·Φ⁻¹(1 − p/2) over the H heads − E[max of H N(0, 1)] > 0 (95% interval "
            "over seeds; H = 72 at laptop scale: 2.39): the best head beats the best of H noise-only heads",
            gate=in_range(ABLATION, [S2S]),
            null=no_head_improves(ABLATION),
            measure=partial(_some_head_improves, task=S2S),
        ),
        Row(
            "fig01",
            "cls_median_abs_delta_small",
            statement="CLS: the typical single-head ablation barely moves accuracy.",
            paper_value="most heads cluster near the baseline (Fig. 1b)",
            tolerance="median |Δ| < 0.5 accuracy points (95% interval over seeds)",
            gate=in_range(ABLATION, [CLS]),
            null=every_head_critical(ABLATION),
            measure=partial(_median_abs_delta, task=CLS),
        ),
        Row(
            "fig01",
            "s2s_median_abs_delta_small",
            statement="S2S: the typical single-head ablation barely moves BLEU.",
            paper_value="most heads cluster near the baseline (Fig. 1a)",
            tolerance="median |Δ| < 0.5 BLEU (95% interval over seeds)",
            gate=in_range(ABLATION, [S2S]),
            null=every_head_critical(ABLATION),
            measure=partial(_median_abs_delta, task=S2S),
        ),
    ],
)


# --------------------------------------------------------------------------- Table 1


def _enc_enc(data) -> pd.DataFrame:
    single = _single(data, S2S)
    return single[single["type"] == "enc_self"]


@claim(
    paper=PAPER,
    item="table01",
    claim_id="few_enc_enc_heads_significant",
    statement="S2S: few Enc-Enc heads change BLEU significantly when removed.",
    paper_value="8 of 96 Enc-Enc heads significant at p<0.01 (4 negative, 4 positive)",
    tolerance="≤ 25% of Enc-Enc heads with p < 0.01 (paired bootstrap; 95% interval over seeds)",
    inputs=[ABLATION],
    kind="empirical",
    phase=PHASE,
    gate=in_range(ABLATION, [S2S]),
    null=every_head_critical(ABLATION),
)
def few_enc_enc_heads_significant(data) -> Measurement:
    frac = S.per_seed(_enc_enc(data), lambda g: float((g["p_value"] < ALPHA).mean()))
    return _judge(frac, Region.at_most(0.25), "fraction significant")


@claim(
    paper=PAPER,
    item="table01",
    claim_id="enc_enc_deltas_small",
    statement="S2S: no single Enc-Enc head removal changes BLEU by 2 or more.",
    paper_value="all Enc-Enc cells within [−0.53, +0.24] BLEU",
    tolerance="max |Δ| over Enc-Enc heads < 2 BLEU (95% interval over seeds)",
    inputs=[ABLATION],
    kind="empirical",
    phase=PHASE,
    gate=in_range(ABLATION, [S2S]),
    null=every_head_critical(ABLATION),
)
def enc_enc_deltas_small(data) -> Measurement:
    worst = S.per_seed(_enc_enc(data), lambda g: float(g["delta"].abs().max()))
    return _judge(worst, Region.below(2.0), "max |Δ| (BLEU)")


# --------------------------------------------------------------------------- Tables 2, 3, 5, 6


def _best(data, task: str, choose_on: str) -> pd.DataFrame:
    return S.best_per_layer(data[ABLATION], task, choose_on=choose_on, report_on="test")


def _worst_cells(best: pd.DataFrame) -> str:
    """Per seed, the type and layer of the most negative cell, in words."""
    worst = best.loc[best.groupby("seed")["delta"].idxmin()].set_index("seed")
    return ", ".join(
        f"seed {seed}: {S.TYPE_LABELS[row.type]} layer {int(row.layer) + 1} ({row.delta:+.2f})"
        for seed, row in worst.iterrows()
    )


def _most_layers_one_head(data, task: str, cells: str, share: float) -> Measurement:
    frac = S.per_seed(_best(data, task, "test"), lambda g: float((g["delta"] >= -1.0).mean()))
    return _judge(frac, Region.at_least(share), f"fraction of {cells} ≥ −1")


def _worst_is_enc_dec(data, choose_on: str) -> Measurement:
    """Per seed, how far the worst Enc-Dec cell lies below the worst cell of the other types (> 0: the
    worst cell is Enc-Dec)."""
    best = _best(data, S2S, choose_on)
    enc_dec = best["type"] == "cross"
    margin = S.per_seed(best[~enc_dec], lambda g: float(g["delta"].min())) - S.per_seed(
        best[enc_dec], lambda g: float(g["delta"].min())
    )
    return _judge(
        margin,
        Region.above(0.0),
        "worst other cell − worst Enc-Dec cell (BLEU)",
        f"Worst cell: {_worst_cells(best)}.",
    )


def _enc_dec_ties_worst_other(choose_on: str) -> Null:
    """Per seed, every Enc-Dec layer's keep-one rows replaced by a copy of those of the worst Enc-Enc or
    Dec-Dec layer (its kept head chosen on `choose_on`): a tie, which the claim's strict region must not
    read as "the worst layer is Enc-Dec"."""

    def make(data) -> dict[str, pd.DataFrame]:
        table = data[ABLATION]
        best = _best(data, S2S, choose_on)
        others = best[best["type"] != "cross"]
        worst = others.loc[others.groupby("seed")["delta"].idxmin()]
        kept = (table["task"] == S2S) & (table["experiment"] == "keep_one")
        enc_dec = kept & (table["type"] == "cross")
        layers = sorted(table.loc[enc_dec, "layer"].unique())
        copies = [
            table[kept & (table["seed"] == w.seed) & (table["type"] == w.type) & (table["layer"] == w.layer)].assign(
                type="cross", layer=layer
            )
            for w in worst.itertuples()
            for layer in layers
        ]
        return {ABLATION: pd.concat([table[~enc_dec], *copies], ignore_index=True)}

    return Null("Enc-Dec tied with the worst other layer: each Enc-Dec layer given its rows, per seed", make)


def _held_out_unaffected(data, task: str, share: float) -> Measurement:
    frac = S.per_seed(_best(data, task, "selection"), lambda g: float((g["p_value"] >= ALPHA).mean()))
    return _judge(frac, Region.at_least(share), "fraction not significant")


_register(
    ABLATION,
    [
        # Table 2 (S2S) and Table 3 (CLS): the head kept in each layer is chosen on the test set.
        Row(
            "table02",
            "s2s_most_layers_one_head",
            statement="S2S: most layers lose at most 1 BLEU when reduced to their best single head.",
            paper_value="15 of 18 cells ≥ −1 BLEU; last Enc-Dec layer −13.56",
            tolerance="≥ 60% of (type, layer) cells with best Δ ≥ −1 BLEU (95% interval over seeds)",
            gate=in_range(ABLATION, [S2S]),
            null=every_head_critical(ABLATION),
            measure=partial(_most_layers_one_head, task=S2S, cells="cells", share=0.60),
        ),
        Row(
            "table02",
            "s2s_worst_layer_is_enc_dec",
            statement="S2S: the layer that suffers most from keeping one head is an Enc-Dec layer.",
            paper_value="last Enc-Dec layer: −13.56 BLEU, the most negative cell",
            tolerance="min best Δ over Enc-Enc and Dec-Dec cells − min over Enc-Dec cells > 0 BLEU "
            "(95% interval over seeds)",
            gate=in_range(ABLATION, [S2S]),
            null=_enc_dec_ties_worst_other("test"),
            measure=partial(_worst_is_enc_dec, choose_on="test"),
        ),
        Row(
            "table03",
            "cls_most_layers_one_head",
            statement="CLS: most layers lose at most 1 point when reduced to their best single head.",
            paper_value="all 12 BERT layers within −0.96..+0.10 points",
            tolerance="≥ 75% of layers with best Δ ≥ −1 point (95% interval over seeds)",
            gate=in_range(ABLATION, [CLS]),
            null=every_head_critical(ABLATION),
            measure=partial(_most_layers_one_head, task=CLS, cells="layers", share=0.75),
        ),
        # Table 5 (S2S) and Table 6 (CLS): the kept head is chosen on a held-out set.
        Row(
            "table05",
            "s2s_held_out_many_cells_unaffected",
            statement="S2S: with the head chosen on a separate set, many layers show no significant change.",
            paper_value="9 of 18 cells not significant (50%)",
            tolerance="≥ 40% of cells with p ≥ 0.01 on the test set (95% interval over seeds)",
            gate=in_range(ABLATION, [S2S]),
            null=every_head_critical(ABLATION),
            measure=partial(_held_out_unaffected, task=S2S, share=0.40),
        ),
        Row(
            "table05",
            "s2s_held_out_worst_is_enc_dec",
            statement="S2S: with held-out selection, the worst layer is still an Enc-Dec layer.",
            paper_value="last Enc-Dec layer −18.89 BLEU, the most negative cell",
            tolerance="min best Δ over Enc-Enc and Dec-Dec cells − min over Enc-Dec cells > 0 BLEU, the kept head "
            "chosen on the selection set (95% interval over seeds)",
            gate=in_range(ABLATION, [S2S]),
            null=_enc_dec_ties_worst_other("selection"),
            measure=partial(_worst_is_enc_dec, choose_on="selection"),
        ),
        Row(
            "table06",
            "cls_held_out_layers_unaffected",
            statement="CLS: with the head chosen on training examples, most layers show no significant change.",
            paper_value="none of the 12 BERT layers significant (100%)",
            tolerance="≥ 75% of layers with p ≥ 0.01 on the test set (McNemar; 95% interval over seeds)",
            gate=in_range(ABLATION, [CLS]),
            null=every_head_critical(ABLATION),
            measure=partial(_held_out_unaffected, task=CLS, share=0.75),
        ),
    ],
)


@claim(
    paper=PAPER,
    item="table03",
    claim_id="cls_no_layer_collapses",
    statement="CLS: no layer loses more than 5 points when reduced to its best single head.",
    paper_value="worst BERT layer −0.96 points",
    tolerance="min over layers of best Δ ≥ −5 points (95% interval over seeds)",
    inputs=[ABLATION],
    kind="empirical",
    phase=PHASE,
    gate=in_range(ABLATION, [CLS]),
    null=every_head_critical(ABLATION),
)
def cls_no_layer_collapses(data) -> Measurement:
    worst = S.per_seed(_best(data, CLS, "test"), lambda g: float(g["delta"].min()))
    return _judge(worst, Region.at_least(-5.0), "worst layer (points)")


# --------------------------------------------------------------------------- Figure 2


def _significant_r(n: int, alpha: float = ALPHA) -> float:
    """The smallest Pearson r with a two-sided p < alpha over n points (t-test with n − 2 df)."""
    from scipy import stats

    t = float(stats.t.isf(alpha / 2, n - 2))
    return t / float(np.sqrt(n - 2 + t * t))


def _correlation(data, task: str) -> Measurement:
    """Pearson r per seed above both the catalog's 0.3 and the r that p < 0.01 needs over these heads."""
    corr = S.cross_domain_correlation(data[ABLATION], task).set_index("seed")
    n = int(corr["n_heads"].min())
    bound = max(MIN_CORRELATION, _significant_r(n))
    return _judge(
        corr["r"],
        Region.above(bound),
        "Pearson r",
        f"{FAMILY_NAME[task]}: single-ablation scores, test vs shifted set, one point per head; r > {bound:.3g} "
        f"is r > {MIN_CORRELATION:g} and p < {ALPHA:g} over {n} heads; p median {format_number(_median(corr['p_value']), 2)}.",
    )


_register(
    ABLATION,
    [
        Row(
            "fig02",
            "cls_cross_domain_correlation",
            statement="CLS: heads that matter on the matched test set matter on the mismatched one.",
            paper_value="r = 0.68 (MNLI matched vs mismatched)",
            tolerance="Pearson r > max(0.3, r₀.₀₁(H)), the r whose p < 0.01 over the H heads (0.449 for the laptop's "
            "32; 95% interval of r over seeds)",
            gate=in_range(ABLATION, [CLS], sets=("test", "shifted")),
            null=shifted_scores_uncorrelated(ABLATION),
            measure=partial(_correlation, task=CLS),
        ),
        Row(
            "fig02",
            "s2s_cross_domain_correlation",
            statement="S2S: heads that matter in domain matter out of domain.",
            paper_value="r = 0.56 (newstest2013 vs MTNT)",
            tolerance="Pearson r > max(0.3, r₀.₀₁(H)), the r whose p < 0.01 over the H heads (0.302 for the laptop's "
            "72; 95% interval of r over seeds)",
            gate=in_range(ABLATION, [S2S], sets=("test", "shifted")),
            null=shifted_scores_uncorrelated(ABLATION),
            measure=partial(_correlation, task=S2S),
        ),
    ],
)
