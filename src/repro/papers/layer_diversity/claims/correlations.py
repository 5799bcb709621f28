"""Claims of Figs. 3 and 5: how the MSE, bias and diversity of the layer ensembles go with accuracy and
with each other."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from repro.papers.layer_diversity import gates_and_nulls as gn
from repro.papers.layer_diversity.claims.common import (
    CORRELATIONS,
    DEPTH,
    EXAMPLES,
    PAPER,
    PHASE,
    PREFIXES,
    SIGNAL_GATE,
    TASK_TABLE,
    TASKS,
    UNITS,
    _seeds,
    _select_pairs,
    _worst,
)
from repro.pipeline.claims import NOT_MEASURABLE, Measurement, Null, claim, format_mean_spread, format_number, verdict
from repro.pipeline.decisions import Region, combine_at_least, judge_parts, judge_seeds

# --------------------------------------------------------------------------- Fig. 3


def _rho(correlations: pd.DataFrame, quantity: str, form: str = "lens") -> dict[str, pd.Series]:
    """Per task: ρ(quantity, accuracy) of each seed, one-hot target, families pooled (logit-lens units by default)."""
    rows = correlations[
        (correlations["form"] == form)
        & (correlations["target"] == "onehot")
        & (correlations["scope"] == "all")
        & (correlations["quantity"] == quantity)
    ]
    return {task: rows[rows["task"] == task].set_index("seed")["spearman"] for task in TASKS}


def _rho_text(values: dict[str, pd.Series]) -> str:
    parts = []
    for task, rho in values.items():
        finite = rho.dropna()
        parts.append(f"{task} {format_mean_spread(finite)}" if len(finite) else f"{task} undefined")
    return "; ".join(parts)


def _model_rho(units: pd.DataFrame, quantity: str) -> dict[str, pd.Series]:
    """Per task: Spearman ρ(quantity, accuracy) of each seed over the models (module form: one unit per
    model, ō = its logits; one-hot target; families and depths pooled)."""
    from scipy.stats import spearmanr

    rows = units[(units["form"] == "module") & (units["target"] == "onehot")]
    out = {}
    for task in TASKS:
        per_seed = {}
        for seed, group in rows[rows["task"] == task].groupby("seed", sort=True):
            x, y = group[quantity].to_numpy(), group["accuracy"].to_numpy()
            defined = len(group) > 2 and np.ptp(x) > 0 and np.ptp(y) > 0
            per_seed[seed] = float(spearmanr(x, y).statistic) if defined else np.nan
        out[task] = pd.Series(per_seed, dtype=float)
    return out


#: The smallest correlation of interest of the correlation claims (Figs. 3, 5): Cohen's (1988) conventional
#: "small" correlation, 0.1. An interval of ρ within ±0.1 of 0 shows no correlation as large as that.
RHO_SESOI = 0.1  # margins: docs/decisions/0001-verdict-margins.md


@claim(
    paper=PAPER,
    item="fig03",
    claim_id="mse_anticorrelates_with_accuracy",
    statement="Across models, lower MSE goes with higher accuracy: Spearman ρ(MSE, acc) < 0 on most tasks.",
    paper_value="MSE correlates strongly (negatively) with accuracy; Bias and Diversity vary by task (C, reviewers)",
    tolerance=f"ρ(MSE, acc) < 0 by its 95% interval over seeds (smallest effect of interest |ρ| = {RHO_SESOI}) on at "
    "least 3/4 of the judged tasks: those on which every family has signal and ρ is defined in every seed (the "
    "others are left out and named; none left: not measurable); module form: one unit per model, its own logits "
    "against the one-hot target; families and depths pooled",
    inputs=[UNITS, CORRELATIONS, DEPTH, TASK_TABLE],
    kind="empirical",
    phase=PHASE,
    gate=gn.every_family_gate(DEPTH, TASK_TABLE, TASKS),
    null=gn.accuracy_permuted(UNITS),
)
def mse_anticorrelates_with_accuracy(data) -> Measurement:
    tasks, left_out = gn.tasks_all_families(data, DEPTH, TASK_TABLE, TASKS)
    mse = _model_rho(data[UNITS], "mse")
    # A task whose ρ is undefined in some seed (every model equally accurate) can show neither sign.
    undefined = [t for t in tasks if mse[t].empty or mse[t].isna().any()]
    left_out += [f"{t} (ρ undefined: every model equally accurate in some seed)" for t in undefined]
    judged = [t for t in tasks if t not in undefined]
    said = f"Left out: {', '.join(left_out) or 'none'}."
    if not judged:
        return Measurement("no task to judge", NOT_MEASURABLE, _seeds(data[UNITS]), said)
    needed = int(np.ceil(0.75 * len(judged)))
    parts = {f"ρ {t}": (mse[t], Region.below(0.0, sesoi=RHO_SESOI)) for t in judged}
    correlations = data[CORRELATIONS]
    detail = (
        f"Judged on {', '.join(judged)} (at least {needed} must hold). {said} Reported, not judged "
        f"(the paper finds them inconsistent): ρ(Bias, acc) {_rho_text(_model_rho(data[UNITS], 'bias'))}; ρ(Div, "
        f"acc) {_rho_text(_model_rho(data[UNITS], 'diversity'))}. For context, the logit-lens prefixes ℓ ≥ 1 (the "
        f"embedding's readout of the fixed answer token left out) give ρ(MSE, acc) {_rho_text(_rho(correlations, 'mse'))}: "
        "in logit space the one-hot MSE grows with the logits' scale, which grows along the layers (catalog pitfall 4)."
    )
    return judge_parts(parts, rule=combine_at_least(needed), detail=detail)


# --------------------------------------------------------------------------- Fig. 5


@claim(
    paper=PAPER,
    item="fig05",
    claim_id="diversity_never_exceeds_bias",
    statement="Diversity ≤ Bias for every prefix ensemble and example (Theorem 2: MSE ≥ 0).",
    paper_value="Theorem 2: bias–diversity trade-off; bias does not reach 0 in practice (I/C)",
    tolerance="max over examples and prefixes of (Div − Bias) ≤ 1e-12",
    inputs=[PREFIXES],
    kind="identity",
)
def diversity_never_exceeds_bias(data) -> Measurement:
    prefixes = data[PREFIXES]
    worst = _worst(prefixes["div_over_bias_max"])
    smallest_bias = float(prefixes.loc[prefixes["target"] == "onehot", "bias"].min())
    return Measurement(
        measured=f"max (Div − Bias) = {worst:.3g}",
        verdict=verdict(bool(np.isfinite(worst) and worst <= 1e-12)),
        seeds=_seeds(prefixes),
        detail=f"smallest mean Bias of any prefix (one-hot target) = {format_number(smallest_bias)}",
    )


def lag_share(prefixes: pd.DataFrame) -> tuple[float, int]:
    """Share of (model, task) with depth ≥ 2 whose largest diversity rise comes no earlier than its
    largest bias drop (argmax_ℓ ΔDiv ≥ argmin_ℓ ΔBias, ℓ = 1..L), one-hot target; and their count."""
    rows = prefixes[(prefixes["target"] == "onehot") & (prefixes["depth"] >= 2)]
    hits = []
    for _, run in rows.groupby(["family", "depth", "seed", "task"], sort=True):
        run = run.sort_values("prefix")
        d_div, d_bias = np.diff(run["diversity"].to_numpy()), np.diff(run["bias"].to_numpy())
        hits.append(int(np.argmax(d_div)) >= int(np.argmin(d_bias)))
    return (float(np.mean(hits)) if hits else float("nan")), len(hits)


@claim(
    paper=PAPER,
    item="fig05",
    claim_id="bias_and_diversity_rise_together",
    statement="Per example, diversity is larger where bias is larger (diversity matters when outputs are far from "
    "the truth), beyond what their shared Ω gives.",
    paper_value="diversity is especially critical when layers' outputs are far from the ground truth (C, abstract)",
    tolerance="the per-seed mean, over the runs of the (family, task) pairs with signal, of the per-run partial "
    f"Spearman ρ(Bias_i, Div_i | Ω_i) over pooled prefixes ℓ ≥ 1 is > 0 by its 95% interval over seeds (smallest "
    f"effect of interest {RHO_SESOI}); Bias = Ω − 2⟨ō, y⟩ + ‖y‖² and Div = Ω − ‖ō‖² share Ω, which alone makes "
    "the plain ρ positive",
    inputs=[EXAMPLES, PREFIXES, DEPTH, TASK_TABLE],
    kind="empirical",
    phase=PHASE,
    gate=SIGNAL_GATE,
    null=Null(
        "Bias and Div related through Ω only (partial ρ = 0 in every run)",
        lambda data: {EXAMPLES: data[EXAMPLES].assign(partial_spearman_given_omega=0.0)},
    ),
)
def bias_and_diversity_rise_together(data) -> Measurement:
    selection = _select_pairs(data)
    judged = data[EXAMPLES].merge(selection.pairs, on=["family", "task"])
    examples = judged.dropna(subset=["partial_spearman_given_omega"])
    per_seed = examples.groupby("seed")["partial_spearman_given_omega"].mean()
    per_task = examples.groupby("task")["partial_spearman_given_omega"].mean()
    plain = judged.groupby("seed")["spearman_bias_diversity"].mean().dropna()
    share, runs = lag_share(data[PREFIXES])
    detail = (
        f"Pairs: {selection.text()}. Per task (all seeds): "
        + ", ".join(f"{t} {format_number(per_task[t])}" for t in per_task.index)
        + f". Reported, not judged: the plain ρ(Bias_i, Div_i) = "
        f"{format_mean_spread(plain) if len(plain) else 'undefined'}; the largest diversity rise comes no "
        f"earlier than the largest bias drop in {format_number(share)} of {runs} runs (depth ≥ 2)."
    )
    if per_seed.empty:
        return Measurement("partial ρ undefined in every judged run", NOT_MEASURABLE, 0, detail)
    judged_m = judge_seeds(per_seed, Region.above(0.0, sesoi=RHO_SESOI), detail=detail)
    return replace(judged_m, measured=f"ρ(Bias_i, Div_i | Ω_i) {judged_m.measured}")
