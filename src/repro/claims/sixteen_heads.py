"""Claims of "Are Sixteen Heads Really Better than One?" (Michel, Levy & Neubig, NeurIPS 2019).

Every "Check" of the catalog (../shared/papers/sixteen_heads.md §2) for Figures 1-3 and Tables
1-3, 5 and 6, with the catalog's thresholds, fixed here before any laptop-scale result was seen.
CLS is the encoder classifier on the MNLI analogue (task nli, accuracy in points); S2S is the
encoder-decoder on the WMT analogue (task mt, BLEU). Δ = masked score − unmasked score on the
in-domain test set unless a claim says otherwise.

Seeds: each statistic is computed per seed; the verdict applies the threshold to the median over
seeds (the catalog: "run 2-3 seeds and check the claims on the median"); a yes/no statistic (which
attention type holds the worst layer) must hold in more than half of the seeds. The measured text
gives mean ± sd over seeds and the median.

Choices fixed with the thresholds:
- "largest p with score ≥ …" (Fig. 3) is the largest level up to which *every* level keeps the
  score (pruning is cumulative, so a later recovery does not count);
- the score "at 90-100%" is the score at the last level: 100% for CLS (BERT's levels) and 90% for
  S2S (fairseq's levels stop at 90%); chance for CLS is 100 / (number of classes);
- AUC is the mean score over 0-60% pruned (trapezoid rule over the 10% levels), in points;
- a cell or head is significant when p < alpha (0.01, the paper's level; McNemar's exact test
  for accuracy, paired bootstrap with 1000 resamples for BLEU).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.analysis import head_summaries as S
from repro.pipeline.claims import Measurement, claim, format_mean_spread, format_number, verdict

PAPER = "sixteen_heads"
ABLATION = "data/ablation.csv"
PRUNING = "data/pruning.csv"
ALPHA = 0.01
CLS, S2S = "nli", "mt"
FAMILY_NAME = {CLS: "CLS (MNLI analogue)", S2S: "S2S (WMT analogue)"}
AUC_MAX_PERCENT = 60


def _summary(values: pd.Series, digits: int = 3) -> str:
    values = values.dropna()
    if values.empty:
        return "undefined for every seed"
    return f"{format_mean_spread(values, digits)}; median {format_number(float(values.median()), digits)}"


def _median(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.median()) if len(values) else float("nan")


def _majority(flags: pd.Series) -> bool:
    return bool(flags.sum() > len(flags) / 2)


def _single(data, task: str) -> pd.DataFrame:
    return S.rows(data[ABLATION], task, "single", "test")


# --------------------------------------------------------------------------- Figure 1


def _fraction_within(data, task: str, bound: float) -> Measurement:
    single = _single(data, task)
    frac = S.per_seed(single, lambda g: float((g["delta"].abs() < bound).mean()))
    return Measurement(f"fraction of heads with |Δ| < {bound:g}: {_summary(frac)}",
                       verdict(_median(frac) >= 0.80), seeds=len(frac),
                       detail=f"{FAMILY_NAME[task]}, every head masked alone, test set")


@claim(paper=PAPER, item="fig01", claim_id="cls_most_heads_redundant",
       statement="CLS: removing any single head changes accuracy by less than 1 point for most heads.",
       paper_value="BERT: all 144 ablations within about 0.824-0.838 of 0.835 accuracy (Fig. 1b)",
       tolerance="≥ 80% of heads with |Δ| < 1 accuracy point (median over seeds)", inputs=[ABLATION])
def cls_most_heads_redundant(data) -> Measurement:
    return _fraction_within(data, CLS, 1.0)


@claim(paper=PAPER, item="fig01", claim_id="s2s_most_heads_redundant",
       statement="S2S: removing any single head changes BLEU by less than 0.5 for most heads.",
       paper_value="WMT: ablations within about 35.5-36.3 of 36.05 BLEU (Fig. 1a)",
       tolerance="≥ 80% of heads with |Δ| < 0.5 BLEU (median over seeds)", inputs=[ABLATION])
def s2s_most_heads_redundant(data) -> Measurement:
    return _fraction_within(data, S2S, 0.5)


def _some_head_improves(data, task: str) -> Measurement:
    best = S.per_seed(_single(data, task), lambda g: float(g["delta"].max()))
    return Measurement(f"largest Δ over heads: {_summary(best)} points", verdict(_median(best) > 0),
                       seeds=len(best), detail=f"{FAMILY_NAME[task]}, test set")


@claim(paper=PAPER, item="fig01", claim_id="cls_some_head_improves",
       statement="CLS: removing some head increases accuracy.",
       paper_value="some ablations score above the unmasked model (Fig. 1b)",
       tolerance="max Δ over heads > 0 (median over seeds)", inputs=[ABLATION])
def cls_some_head_improves(data) -> Measurement:
    return _some_head_improves(data, CLS)


@claim(paper=PAPER, item="fig01", claim_id="s2s_some_head_improves",
       statement="S2S: removing some head increases BLEU.",
       paper_value="some ablations score above the unmasked model (Fig. 1a)",
       tolerance="max Δ over heads > 0 (median over seeds)", inputs=[ABLATION])
def s2s_some_head_improves(data) -> Measurement:
    return _some_head_improves(data, S2S)


def _median_abs_delta(data, task: str) -> Measurement:
    med = S.per_seed(_single(data, task), lambda g: float(g["delta"].abs().median()))
    return Measurement(f"median |Δ| over heads: {_summary(med)} points", verdict(_median(med) < 0.5),
                       seeds=len(med), detail=f"{FAMILY_NAME[task]}, test set")


@claim(paper=PAPER, item="fig01", claim_id="cls_median_abs_delta_small",
       statement="CLS: the typical single-head ablation barely moves accuracy.",
       paper_value="most heads cluster near the baseline (Fig. 1b)",
       tolerance="median |Δ| < 0.5 accuracy points (median over seeds)", inputs=[ABLATION])
def cls_median_abs_delta_small(data) -> Measurement:
    return _median_abs_delta(data, CLS)


@claim(paper=PAPER, item="fig01", claim_id="s2s_median_abs_delta_small",
       statement="S2S: the typical single-head ablation barely moves BLEU.",
       paper_value="most heads cluster near the baseline (Fig. 1a)",
       tolerance="median |Δ| < 0.5 BLEU (median over seeds)", inputs=[ABLATION])
def s2s_median_abs_delta_small(data) -> Measurement:
    return _median_abs_delta(data, S2S)


# --------------------------------------------------------------------------- Table 1


def _enc_enc(data) -> pd.DataFrame:
    single = _single(data, S2S)
    return single[single["type"] == "enc_self"]


@claim(paper=PAPER, item="table01", claim_id="few_enc_enc_heads_significant",
       statement="S2S: few Enc-Enc heads change BLEU significantly when removed.",
       paper_value="8 of 96 Enc-Enc heads significant at p<0.01 (4 negative, 4 positive)",
       tolerance="≤ 25% of Enc-Enc heads with p < 0.01 (paired bootstrap, median over seeds)", inputs=[ABLATION])
def few_enc_enc_heads_significant(data) -> Measurement:
    frac = S.per_seed(_enc_enc(data), lambda g: float((g["p_value"] < ALPHA).mean()))
    return Measurement(f"fraction significant: {_summary(frac)}", verdict(_median(frac) <= 0.25), seeds=len(frac))


@claim(paper=PAPER, item="table01", claim_id="enc_enc_deltas_small",
       statement="S2S: no single Enc-Enc head removal changes BLEU by 2 or more.",
       paper_value="all Enc-Enc cells within [−0.53, +0.24] BLEU",
       tolerance="max |Δ| over Enc-Enc heads < 2 BLEU (median over seeds)", inputs=[ABLATION])
def enc_enc_deltas_small(data) -> Measurement:
    worst = S.per_seed(_enc_enc(data), lambda g: float(g["delta"].abs().max()))
    return Measurement(f"max |Δ|: {_summary(worst)} BLEU", verdict(_median(worst) < 2.0), seeds=len(worst))


# --------------------------------------------------------------------------- Tables 2, 3, 5, 6


def _best(data, task: str, choose_on: str) -> pd.DataFrame:
    return S.best_per_layer(data[ABLATION], task, choose_on=choose_on, report_on="test")


@claim(paper=PAPER, item="table02", claim_id="s2s_most_layers_one_head",
       statement="S2S: most layers lose at most 1 BLEU when reduced to their best single head.",
       paper_value="15 of 18 cells ≥ −1 BLEU; last Enc-Dec layer −13.56",
       tolerance="≥ 60% of (type, layer) cells with best Δ ≥ −1 BLEU (median over seeds)", inputs=[ABLATION])
def s2s_most_layers_one_head(data) -> Measurement:
    frac = S.per_seed(_best(data, S2S, "test"), lambda g: float((g["delta"] >= -1.0).mean()))
    return Measurement(f"fraction of cells ≥ −1: {_summary(frac)}", verdict(_median(frac) >= 0.60), seeds=len(frac))


def _worst_type(best: pd.DataFrame) -> tuple[pd.Series, str]:
    worst = best.loc[best.groupby("seed")["delta"].idxmin()].set_index("seed")
    text = ", ".join(f"seed {seed}: {S.TYPE_LABELS[row.type]} layer {int(row.layer) + 1} ({row.delta:+.2f})"
                     for seed, row in worst.iterrows())
    return worst["type"], text


@claim(paper=PAPER, item="table02", claim_id="s2s_worst_layer_is_enc_dec",
       statement="S2S: the layer that suffers most from keeping one head is an Enc-Dec layer.",
       paper_value="last Enc-Dec layer: −13.56 BLEU, the most negative cell",
       tolerance="the most negative cell is Enc-Dec in more than half of the seeds", inputs=[ABLATION])
def s2s_worst_layer_is_enc_dec(data) -> Measurement:
    types, text = _worst_type(_best(data, S2S, "test"))
    return Measurement(f"worst cell: {text}", verdict(_majority(types == "cross")), seeds=len(types))


@claim(paper=PAPER, item="table03", claim_id="cls_most_layers_one_head",
       statement="CLS: most layers lose at most 1 point when reduced to their best single head.",
       paper_value="all 12 BERT layers within −0.96..+0.10 points",
       tolerance="≥ 75% of layers with best Δ ≥ −1 point (median over seeds)", inputs=[ABLATION])
def cls_most_layers_one_head(data) -> Measurement:
    frac = S.per_seed(_best(data, CLS, "test"), lambda g: float((g["delta"] >= -1.0).mean()))
    return Measurement(f"fraction of layers ≥ −1: {_summary(frac)}", verdict(_median(frac) >= 0.75), seeds=len(frac))


@claim(paper=PAPER, item="table03", claim_id="cls_no_layer_collapses",
       statement="CLS: no layer loses more than 5 points when reduced to its best single head.",
       paper_value="worst BERT layer −0.96 points",
       tolerance="min over layers of best Δ ≥ −5 points (median over seeds)", inputs=[ABLATION])
def cls_no_layer_collapses(data) -> Measurement:
    worst = S.per_seed(_best(data, CLS, "test"), lambda g: float(g["delta"].min()))
    return Measurement(f"worst layer: {_summary(worst)} points", verdict(_median(worst) >= -5.0), seeds=len(worst))


@claim(paper=PAPER, item="table05", claim_id="s2s_held_out_many_cells_unaffected",
       statement="S2S: with the head chosen on a separate set, many layers show no significant change.",
       paper_value="9 of 18 cells not significant (50%)",
       tolerance="≥ 40% of cells with p ≥ 0.01 on the test set (median over seeds)", inputs=[ABLATION])
def s2s_held_out_many_cells_unaffected(data) -> Measurement:
    frac = S.per_seed(_best(data, S2S, "selection"), lambda g: float((g["p_value"] >= ALPHA).mean()))
    return Measurement(f"fraction not significant: {_summary(frac)}", verdict(_median(frac) >= 0.40), seeds=len(frac))


@claim(paper=PAPER, item="table05", claim_id="s2s_held_out_worst_is_enc_dec",
       statement="S2S: with held-out selection, the worst layer is still an Enc-Dec layer.",
       paper_value="last Enc-Dec layer −18.89 BLEU, the most negative cell",
       tolerance="the most negative cell is Enc-Dec in more than half of the seeds", inputs=[ABLATION])
def s2s_held_out_worst_is_enc_dec(data) -> Measurement:
    types, text = _worst_type(_best(data, S2S, "selection"))
    return Measurement(f"worst cell: {text}", verdict(_majority(types == "cross")), seeds=len(types))


def _optimism(data, task: str) -> Measurement:
    held = S.per_seed(_best(data, task, "selection"), lambda g: float(g["delta"].mean()))
    same = S.per_seed(_best(data, task, "test"), lambda g: float(g["delta"].mean()))
    gap = held - same
    return Measurement(f"mean Δ (held-out choice) − mean Δ (test-set choice): {_summary(gap)} points",
                       verdict(_median(gap) <= 0.0), seeds=len(gap),
                       detail="holds by construction in every cell (the test-set choice maximises the test score); "
                              "the size of the gap is the selection optimism")


@claim(paper=PAPER, item="table05", claim_id="s2s_selection_optimism",
       statement="S2S: choosing the kept head on a separate set gives lower Δ than choosing it on the test set.",
       paper_value="Table 5 cells are mostly below Table 2 cells",
       tolerance="mean Δ over cells, held-out choice ≤ test-set choice (median over seeds)", inputs=[ABLATION])
def s2s_selection_optimism(data) -> Measurement:
    return _optimism(data, S2S)


@claim(paper=PAPER, item="table06", claim_id="cls_held_out_layers_unaffected",
       statement="CLS: with the head chosen on training examples, most layers show no significant change.",
       paper_value="none of the 12 BERT layers significant (100%)",
       tolerance="≥ 75% of layers with p ≥ 0.01 on the test set (McNemar, median over seeds)", inputs=[ABLATION])
def cls_held_out_layers_unaffected(data) -> Measurement:
    frac = S.per_seed(_best(data, CLS, "selection"), lambda g: float((g["p_value"] >= ALPHA).mean()))
    return Measurement(f"fraction not significant: {_summary(frac)}", verdict(_median(frac) >= 0.75), seeds=len(frac))


@claim(paper=PAPER, item="table06", claim_id="cls_selection_optimism",
       statement="CLS: choosing the kept head on training examples gives lower Δ than choosing it on the test set.",
       paper_value="Table 6 cells ≤ Table 3 cells (equal in 9 of 12 layers)",
       tolerance="mean Δ over layers, held-out choice ≤ test-set choice (median over seeds)", inputs=[ABLATION])
def cls_selection_optimism(data) -> Measurement:
    return _optimism(data, CLS)


# --------------------------------------------------------------------------- Figure 2


def _correlation(data, task: str) -> Measurement:
    corr = S.cross_domain_correlation(data[ABLATION], task).set_index("seed")
    r, p = corr["r"], corr["p_value"]
    ok = _median(r) > 0.3 and _median(p) < 0.01
    return Measurement(f"Pearson r = {_summary(r)}; p: median {format_number(_median(p), 2)}",
                       verdict(bool(ok)), seeds=len(corr),
                       detail=f"{FAMILY_NAME[task]}: single-ablation scores, test vs shifted set, one point per head")


@claim(paper=PAPER, item="fig02", claim_id="cls_cross_domain_correlation",
       statement="CLS: heads that matter on the matched test set matter on the mismatched one.",
       paper_value="r = 0.68 (MNLI matched vs mismatched)",
       tolerance="Pearson r > 0.3 and p < 0.01 (medians over seeds)", inputs=[ABLATION])
def cls_cross_domain_correlation(data) -> Measurement:
    return _correlation(data, CLS)


@claim(paper=PAPER, item="fig02", claim_id="s2s_cross_domain_correlation",
       statement="S2S: heads that matter in domain matter out of domain.",
       paper_value="r = 0.56 (newstest2013 vs MTNT)",
       tolerance="Pearson r > 0.3 and p < 0.01 (medians over seeds)", inputs=[ABLATION])
def s2s_cross_domain_correlation(data) -> Measurement:
    return _correlation(data, S2S)


# --------------------------------------------------------------------------- Figure 3


def _importance_curves(data, task: str) -> pd.DataFrame:
    return S.curve(data[PRUNING], task, "importance")


def _safe_fraction(data, task: str) -> Measurement:
    curves = _importance_curves(data, task)

    def safe(g):
        base = float(g["baseline"].iloc[0])
        floor = base - 1.0 if task == CLS else 0.97 * base
        return S.largest_safe_percent(g["percent"], g["score"], floor)

    pct = S.per_seed(curves, safe)
    return Measurement(f"largest safe pruning level: {_summary(pct)} %", verdict(_median(pct) >= 20.0),
                       seeds=len(pct), detail=f"{FAMILY_NAME[task]}, heads pruned by normalised importance")


@claim(paper=PAPER, item="fig03", claim_id="cls_prune_20pct_safely",
       statement="CLS: at least 20% of heads can be pruned by importance within 1 point of accuracy.",
       paper_value="BERT: 40% pruned without noticeable loss",
       tolerance="largest p with accuracy ≥ baseline − 1 at every level up to p is ≥ 20% (median over seeds)",
       inputs=[PRUNING])
def cls_prune_20pct_safely(data) -> Measurement:
    return _safe_fraction(data, CLS)


@claim(paper=PAPER, item="fig03", claim_id="s2s_prune_20pct_safely",
       statement="S2S: at least 20% of heads can be pruned by importance keeping 97% of BLEU.",
       paper_value="WMT: 20% pruned without noticeable loss",
       tolerance="largest p with BLEU ≥ 0.97·BLEU₀ at every level up to p is ≥ 20% (median over seeds)",
       inputs=[PRUNING])
def s2s_prune_20pct_safely(data) -> Measurement:
    return _safe_fraction(data, S2S)


@claim(paper=PAPER, item="fig03", claim_id="cls_collapses_when_all_pruned",
       statement="CLS: with every head pruned, accuracy falls to near chance.",
       paper_value="BERT accuracy collapses at 100% pruned",
       tolerance="accuracy at 100% pruned ≤ chance + 10 points (median over seeds)", inputs=[PRUNING])
def cls_collapses_when_all_pruned(data) -> Measurement:
    curves = _importance_curves(data, CLS)
    chance = 100.0 / 3  # three balanced NLI classes
    last = S.per_seed(curves, lambda g: float(g.loc[g["percent"].idxmax(), "score"]))
    return Measurement(f"accuracy at 100%: {_summary(last)} (chance {chance:.1f})",
                       verdict(_median(last) <= chance + 10.0), seeds=len(last))


@claim(paper=PAPER, item="fig03", claim_id="s2s_collapses_at_90pct",
       statement="S2S: with 90% of heads pruned, BLEU collapses.",
       paper_value="WMT BLEU drops sharply beyond about 60% pruned",
       tolerance="BLEU at 90% pruned ≤ 0.3·BLEU₀ (median over seeds)", inputs=[PRUNING])
def s2s_collapses_at_90pct(data) -> Measurement:
    curves = _importance_curves(data, S2S)
    ratio = S.per_seed(curves, lambda g: float(g.loc[g["percent"].idxmax(), "score"] / g["baseline"].iloc[0]))
    return Measurement(f"BLEU at 90% / BLEU₀: {_summary(ratio)}", verdict(_median(ratio) <= 0.3), seeds=len(ratio))


def _auc_compare(data, task: str, other: str, margin: float) -> Measurement:
    auc = S.auc_by_order(data[PRUNING], task, AUC_MAX_PERCENT).set_index("seed")
    gap = auc["importance"] - auc[other]
    return Measurement(f"AUC(importance) − AUC({other}) over 0-{AUC_MAX_PERCENT}%: {_summary(gap)} points",
                       verdict(_median(gap) >= -margin), seeds=len(gap),
                       detail=f"AUC(importance) = {_summary(auc['importance'])}; AUC({other}) = {_summary(auc[other])}")


@claim(paper=PAPER, item="fig03", claim_id="cls_importance_beats_random",
       statement="CLS: pruning by importance keeps more accuracy than pruning in random order.",
       paper_value="importance order well above random (implied by Fig. 3b)",
       tolerance="AUC(importance) ≥ mean AUC(random) over 0-60% (median over seeds)", inputs=[PRUNING])
def cls_importance_beats_random(data) -> Measurement:
    return _auc_compare(data, CLS, "random", 0.0)


@claim(paper=PAPER, item="fig03", claim_id="s2s_importance_beats_random",
       statement="S2S: pruning by importance keeps more BLEU than pruning in random order.",
       paper_value="importance order well above random (implied by Fig. 3a)",
       tolerance="AUC(importance) ≥ mean AUC(random) over 0-60% (median over seeds)", inputs=[PRUNING])
def s2s_importance_beats_random(data) -> Measurement:
    return _auc_compare(data, S2S, "random", 0.0)


@claim(paper=PAPER, item="fig03", claim_id="cls_importance_near_oracle",
       statement="CLS: importance pruning is about as good as the single-ablation oracle order.",
       paper_value="I_h is faster and yields better results than the oracle (Fig. 3b)",
       tolerance="AUC(importance) ≥ AUC(oracle) − 2 points over 0-60% (median over seeds)", inputs=[PRUNING])
def cls_importance_near_oracle(data) -> Measurement:
    return _auc_compare(data, CLS, "oracle", 2.0)


@claim(paper=PAPER, item="fig03", claim_id="s2s_importance_near_oracle",
       statement="S2S: importance pruning is about as good as the single-ablation oracle order.",
       paper_value="I_h is faster and yields better results than the oracle (Fig. 3a)",
       tolerance="AUC(importance) ≥ AUC(oracle) − 2 BLEU over 0-60% (median over seeds)", inputs=[PRUNING])
def s2s_importance_near_oracle(data) -> Measurement:
    return _auc_compare(data, S2S, "oracle", 2.0)


__all__ = ["ALPHA", "AUC_MAX_PERCENT", "np"]
