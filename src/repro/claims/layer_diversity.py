"""Claims of "Diversity of Transformer Layers: One Aspect of Parameter Scaling Laws" (Kamigaito et al. 2025).

Every check of the catalog (../shared/papers/layer_diversity.md §3) with the tolerance it states,
fixed here before any laptop-scale result was seen. The paper's full text was not available: items
and findings marked inferred (I) or unknown (U) in the catalog say so in `paper_value`.

Conventions. A *unit* of Fig. 3/5 is one ensemble: a logit-lens prefix S_ℓ = {o_0..o_ℓ} of one
trained model (family, depth, seed) on one task's test split. Correlations are Spearman ρ across the
units of one seed (all families pooled), then mean ± sample sd over seeds. Only signs the catalog
asserts are judged; the other correlations are reported in `detail`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.pipeline.claims import Measurement, claim, format_mean_spread, format_number, verdict

PAPER = "layer_diversity"
TASKS = ("sent", "entail", "topic", "mc")
RECONSTRUCTION = "data/fig02_reconstruction.csv"
UNITS = "data/fig03_units.csv"
CORRELATIONS = "data/fig03_correlations.csv"
GROUPS = "data/fig04_groups.csv"
PREFIXES = "data/fig05_prefixes.csv"
EXAMPLES = "data/fig05_examples.csv"
MODELS = "data/table02_models.csv"
RECONSTRUCTED = "inferred from the reviews and the sister paper (catalog §0); reconstructed analogue"


def _seeds(frame: pd.DataFrame) -> int:
    return int(frame["seed"].nunique())


def _worst(values: pd.Series) -> float:
    return float(np.nanmax(values.to_numpy(dtype=float))) if len(values) else float("nan")


def _bound(values: pd.Series, tolerance: float, what: str, seeds: int) -> Measurement:
    worst = _worst(values)
    return Measurement(
        measured=f"max {what} = {worst:.3g}",
        verdict=verdict(bool(np.isfinite(worst) and worst <= tolerance)),
        seeds=seeds,
        detail=f"over {len(values)} rows",
    )


# --------------------------------------------------------------------------- Table 2


@claim(
    paper=PAPER,
    item="table02",
    claim_id="parameter_counts_exact",
    statement="Every model's parameter count equals the closed-form count and sum(p.numel()).",
    paper_value="T2 lists #params per model (table existence U)",
    tolerance="exact equality for every (family, depth, seed)",
    inputs=[MODELS],
)
def parameter_counts_exact(data) -> Measurement:
    models = data[MODELS]
    same = (models["parameters"] == models["parameters_formula"]) & (models["parameters"] == models["parameters_numel"])
    return Measurement(
        measured=f"{int(same.sum())}/{len(models)} models match",
        verdict=verdict(bool(same.all()) and len(models) > 0),
        seeds=_seeds(models),
    )


# --------------------------------------------------------------------------- Fig. 2


@claim(
    paper=PAPER,
    item="fig02",
    claim_id="stream_is_sum_of_members",
    statement="The last residual state is the plain sum of embedding, attention and MLP outputs (Eq. 1).",
    paper_value="x_L = u_0 + Σ_l (a_l + m_l) (Eq. 1, C)",
    tolerance="max |Σ_i u_i − x_L| < 1e-10 (float64), every model and task",
    inputs=[RECONSTRUCTION],
)
def stream_is_sum_of_members(data) -> Measurement:
    checks = data[RECONSTRUCTION]
    worst = _worst(checks["stream_error"])
    return Measurement(f"max |Σu − x_L| = {worst:.3g}", verdict(worst < 1e-10), _seeds(checks), f"over {len(checks)} rows")


@claim(
    paper=PAPER,
    item="fig02",
    claim_id="frozen_norm_reconstructs_logits",
    statement="With the final norm's scale frozen, the module contributions sum to the model's logits.",
    paper_value="z ≈ Σ_i W_U·ũ_i (softmax omitted, norm treated as linear; I)",
    tolerance="max |Σ_i W_K ũ_i + const − z| < 1e-8 (float64), every model and task",
    inputs=[RECONSTRUCTION],
)
def frozen_norm_reconstructs_logits(data) -> Measurement:
    checks = data[RECONSTRUCTION]
    worst = _worst(checks["logit_error"])
    return Measurement(f"max |Σc − z| = {worst:.3g}", verdict(worst < 1e-8), _seeds(checks), f"over {len(checks)} rows")


# --------------------------------------------------------------------------- Fig. 3


@claim(
    paper=PAPER,
    item="fig03",
    claim_id="mse_equals_bias_minus_diversity",
    statement="MSE = Bias − Diversity holds for every unit, in both forms and every target convention.",
    paper_value="Theorem 1 (Eq. 8): MSE = Bias − Diversity (C)",
    tolerance="|MSE − (Bias − Div)| ≤ 1e-9·max(1, Bias) for every example of every unit",
    inputs=[UNITS],
)
def mse_equals_bias_minus_diversity(data) -> Measurement:
    units = data[UNITS]
    return _bound(units["identity_residual"], 1e-9, "|MSE − (Bias − Div)| / max(1, Bias)", _seeds(units))


def _rho(correlations: pd.DataFrame, quantity: str, form: str = "lens") -> dict[str, pd.Series]:
    """Per task: ρ(quantity, accuracy) of each seed, one-hot target, families pooled (logit-lens units by default)."""
    rows = correlations[
        (correlations["form"] == form) & (correlations["target"] == "onehot")
        & (correlations["scope"] == "all") & (correlations["quantity"] == quantity)
    ]
    return {task: rows[rows["task"] == task].set_index("seed")["spearman"] for task in TASKS}


def _rho_text(values: dict[str, pd.Series]) -> str:
    parts = []
    for task, rho in values.items():
        finite = rho.dropna()
        parts.append(f"{task} {format_mean_spread(finite)}" if len(finite) else f"{task} undefined")
    return "; ".join(parts)


@claim(
    paper=PAPER,
    item="fig03",
    claim_id="mse_anticorrelates_with_accuracy",
    statement="Across ensembles, lower MSE goes with higher accuracy: Spearman ρ(MSE, acc) < 0 on most tasks.",
    paper_value="MSE correlates strongly (negatively) with accuracy; Bias and Diversity vary by task (C, reviewers)",
    tolerance="seed-mean ρ(MSE, acc) < 0 for ≥ 3 of 4 tasks (logit-lens prefix units, one-hot target)",
    inputs=[CORRELATIONS],
)
def mse_anticorrelates_with_accuracy(data) -> Measurement:
    correlations = data[CORRELATIONS]
    mse = _rho(correlations, "mse")
    negative = sum(1 for rho in mse.values() if len(rho.dropna()) and rho.dropna().mean() < 0)
    seeds = max((len(rho) for rho in mse.values()), default=0)
    module = _rho(correlations, "mse", form="module")
    why = "" if negative >= 3 else (
        " Why it may differ: MSE against a one-hot target in logit space grows with the logits' scale, which"
        " grows along the layers as the readouts become confident (catalog pitfall 4), so late, accurate"
        " prefixes have the largest MSE; tasks at chance have no accuracy to rank."
        f" For context, the module form (one unit per model, ō = the model's logits) gives ρ(MSE, acc):"
        f" {_rho_text(module)}."
    )
    return Measurement(
        measured=f"ρ(MSE, acc): {_rho_text(mse)}; {negative}/4 tasks < 0",
        verdict=verdict(negative >= 3),
        seeds=seeds,
        detail=(f"Reported, not judged (the paper finds them inconsistent): ρ(Bias, acc): "
                f"{_rho_text(_rho(correlations, 'bias'))}. ρ(Div, acc): {_rho_text(_rho(correlations, 'diversity'))}."
                + why),
    )


# --------------------------------------------------------------------------- Fig. 4


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="group_split_sums_to_diversity",
    statement="Diversity splits exactly into within- and between-group parts of embedding, MHA and MLP members.",
    paper_value=f"module graphs by type (Fig. 4 exists, C; the split is {RECONSTRUCTED})",
    tolerance="|Σ_g (within_g + between_g) − Diversity| ≤ 1e-9 for every example, model, task and target",
    inputs=[GROUPS],
)
def group_split_sums_to_diversity(data) -> Measurement:
    groups = data[GROUPS]
    return _bound(groups["split_residual"], 1e-9, "|Σ_g share_g − Div|", _seeds(groups))


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="module_form_reproduces_model_mse",
    statement="In the module form (o_i = M·c_i, frozen norm) the ensemble mean is the model, so MSE(ō) = MSE(z).",
    paper_value="residual stream = sum of module outputs (Eq. 1, C); sum→mean rescaling (I)",
    tolerance="max over examples |MSE_module − MSE(z, y)| ≤ 1e-8, every model and task",
    inputs=[RECONSTRUCTION],
)
def module_form_reproduces_model_mse(data) -> Measurement:
    checks = data[RECONSTRUCTION]
    return _bound(checks["module_mse_error"], 1e-8, "|MSE_module − MSE(z)|", _seeds(checks))


# --------------------------------------------------------------------------- Fig. 5


@claim(
    paper=PAPER,
    item="fig05",
    claim_id="diversity_never_exceeds_bias",
    statement="Diversity ≤ Bias for every prefix ensemble and example (Theorem 2: MSE ≥ 0).",
    paper_value="Theorem 2: bias–diversity trade-off; bias does not reach 0 in practice (I/C)",
    tolerance="max over examples and prefixes of (Div − Bias) ≤ 1e-12",
    inputs=[PREFIXES],
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


@claim(
    paper=PAPER,
    item="fig05",
    claim_id="omega_identities_hold",
    statement="Bias = Ω − 2⟨ō, y⟩ + ‖y‖² and Diversity = Ω − ‖ō‖² (the shared component behind the trade-off).",
    paper_value="Theorem 3 (shared component Ω; I, from the sister paper)",
    tolerance="max absolute residual ≤ 1e-9 for every example, prefix and target",
    inputs=[PREFIXES],
)
def omega_identities_hold(data) -> Measurement:
    prefixes = data[PREFIXES]
    return _bound(prefixes["omega_residual"], 1e-9, "Ω-identity residual", _seeds(prefixes))


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
    statement="Per example, diversity is larger where bias is larger (diversity matters when outputs are far from the truth).",
    paper_value="diversity is especially critical when layers' outputs are far from the ground truth (C, abstract)",
    tolerance="seed mean of the mean per-run Spearman ρ(Bias_i, Div_i) over pooled prefixes ℓ ≥ 1 > 0",
    inputs=[EXAMPLES, PREFIXES],
)
def bias_and_diversity_rise_together(data) -> Measurement:
    examples = data[EXAMPLES].dropna(subset=["spearman_bias_diversity"])
    per_seed = examples.groupby("seed")["spearman_bias_diversity"].mean()
    per_task = examples.groupby("task")["spearman_bias_diversity"].mean()
    share, runs = lag_share(data[PREFIXES])
    ok = len(per_seed) > 0 and per_seed.mean() > 0
    return Measurement(
        measured=f"ρ(Bias_i, Div_i) = {format_mean_spread(per_seed) if len(per_seed) else 'undefined'}",
        verdict=verdict(bool(ok)),
        seeds=len(per_seed),
        detail=(
            "per task (all seeds): " + ", ".join(f"{t} {format_number(per_task.get(t, np.nan))}" for t in TASKS)
            + f". Reported, not judged: the largest diversity rise comes no earlier than the largest bias drop "
            f"in {format_number(share)} of {runs} runs (depth ≥ 2)."
        ),
    )
