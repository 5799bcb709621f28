"""Claims that hold exactly: Table 2 (parameter counts), the decompositions of the residual stream behind
Figs. 2-5 and 7, and Table 1 (balanced tasks)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from repro.papers.layer_diversity import gates_and_nulls as gn
from repro.papers.layer_diversity.claims.common import (
    GROUPS,
    INFORMATION,
    MODELS,
    PAPER,
    PREFIXES,
    RECONSTRUCTED,
    RECONSTRUCTION,
    TASK_TABLE,
    TASKS,
    UNITS,
    _bound,
    _seeds,
)
from repro.pipeline.claims import ClaimRow, Measurement, claim, register_table, verdict

# --------------------------------------------------------------------------- Table 2


@claim(
    paper=PAPER,
    item="table02",
    claim_id="parameter_counts_exact",
    statement="Every model's parameter count equals the closed-form count and sum(p.numel()).",
    paper_value="T2 lists #params per model (table existence U)",
    tolerance="exact equality for every (family, depth, seed)",
    inputs=[MODELS],
    kind="identity",
)
def parameter_counts_exact(data) -> Measurement:
    models = data[MODELS]
    same = (models["parameters"] == models["parameters_formula"]) & (models["parameters"] == models["parameters_numel"])
    return Measurement(
        measured=f"{int(same.sum())}/{len(models)} models match",
        verdict=verdict(bool(same.all()) and len(models) > 0),
        seeds=_seeds(models),
    )


# --------------------------------------------------------------------------- Figs. 2-5, 7: residual bounds


@dataclass(frozen=True)
class _ResidualBound(ClaimRow):
    """An exact identity judged by the largest value of one residual column of one input.

    These claims share their measurement (:func:`_bound`) and class, so a row holds only what differs.
    """

    source: str  # the input file the residual column is in
    column: str
    limit: float  # the bound the tolerance text states
    what: str  # how the measured maximum is named
    strict: bool = False  # the tolerance reads "< limit" rather than "≤ limit"


_RESIDUAL_BOUNDS = (
    _ResidualBound(
        item="fig02",
        claim_id="stream_is_sum_of_members",
        statement="The last residual state is the plain sum of embedding, attention and MLP outputs (Eq. 1).",
        paper_value="x_L = u_0 + Σ_l (a_l + m_l) (Eq. 1, C)",
        tolerance="max |Σ_i u_i − x_L| < 1e-10 (float64), every model and task",
        source=RECONSTRUCTION,
        column="stream_error",
        limit=1e-10,
        what="|Σu − x_L|",
        strict=True,
    ),
    _ResidualBound(
        item="fig02",
        claim_id="frozen_norm_reconstructs_logits",
        statement="With the final norm's scale frozen, the module contributions sum to the model's logits.",
        paper_value="z ≈ Σ_i W_U·ũ_i (softmax omitted, norm treated as linear; I)",
        tolerance="max |Σ_i W_K ũ_i + const − z| < 1e-8 (float64), every model and task",
        source=RECONSTRUCTION,
        column="logit_error",
        limit=1e-8,
        what="|Σc − z|",
        strict=True,
    ),
    _ResidualBound(
        item="fig03",
        claim_id="mse_equals_bias_minus_diversity",
        statement="MSE = Bias − Diversity holds for every unit, in both forms and every target convention.",
        paper_value="Theorem 1 (Eq. 8): MSE = Bias − Diversity (C)",
        tolerance="|MSE − (Bias − Div)| ≤ 1e-9·max(1, Bias) for every example of every unit",
        source=UNITS,
        column="identity_residual",
        limit=1e-9,
        what="|MSE − (Bias − Div)| / max(1, Bias)",
    ),
    _ResidualBound(
        item="fig04",
        claim_id="group_split_sums_to_diversity",
        statement="Diversity splits exactly into within- and between-group parts of embedding, MHA and MLP members.",
        paper_value=f"module graphs by type (Fig. 4 exists, C; the split is {RECONSTRUCTED})",
        tolerance="|Σ_g (within_g + between_g) − Diversity| ≤ 1e-9 for every example, model, task and target",
        source=GROUPS,
        column="split_residual",
        limit=1e-9,
        what="|Σ_g share_g − Div|",
    ),
    _ResidualBound(
        item="fig04",
        claim_id="module_form_reproduces_model_mse",
        statement="In the module form (o_i = M·c_i, frozen norm) the ensemble mean is the model, so MSE(ō) = MSE(z).",
        paper_value="residual stream = sum of module outputs (Eq. 1, C); sum→mean rescaling (I)",
        tolerance="max over examples |MSE_module − MSE(z, y)| ≤ 1e-8, every model and task",
        source=RECONSTRUCTION,
        column="module_mse_error",
        limit=1e-8,
        what="|MSE_module − MSE(z)|",
    ),
    _ResidualBound(
        item="fig05",
        claim_id="omega_identities_hold",
        statement="Bias = Ω − 2⟨ō, y⟩ + ‖y‖² and Diversity = Ω − ‖ō‖² (the shared component behind the trade-off).",
        paper_value="Theorem 3 (shared component Ω; I, from the sister paper)",
        tolerance="max absolute residual ≤ 1e-9 for every example, prefix and target",
        source=PREFIXES,
        column="omega_residual",
        limit=1e-9,
        what="Ω-identity residual",
    ),
    _ResidualBound(
        item="fig07",
        claim_id="information_decomposition_exact",
        statement="I(U;Y) = Relevancy − Redundancy + Conditional redundancy (Eq. 13) for every prefix.",
        paper_value="Eq. 13 information-theoretic diversity decomposition (role C, formula I)",
        tolerance="|I − (Rel − Red + CondRed)| ≤ 1e-9 bits for every model, task and prefix",
        source=INFORMATION,
        column="identity_residual",
        limit=1e-9,
        what="|Eq. 13 residual| (bits)",
    ),
)


def _measure_bound(data, row: _ResidualBound) -> Measurement:
    frame = data[row.source]
    return _bound(frame[row.column], row.limit, row.what, _seeds(frame), strict=row.strict)


register_table(
    PAPER,
    _RESIDUAL_BOUNDS,
    _measure_bound,
    inputs=lambda row: [row.source],
    kind="identity",
    null=lambda row: gn.residual_off_by_one(row.source, row.column),
)


# --------------------------------------------------------------------------- Table 1


@claim(
    paper=PAPER,
    item="table01",
    claim_id="tasks_are_balanced",
    statement="Every task's classes are balanced in the train and test splits (counts differ by at most one).",
    paper_value="T1 lists the datasets (table existence U); SST-2, RTE, AG News, ARC named (C)",
    tolerance="max − min class count ≤ 1 in every split of every task",
    inputs=[TASK_TABLE],
    kind="identity",
)
def tasks_are_balanced(data) -> Measurement:
    tasks = data[TASK_TABLE]
    spread = pd.concat(
        [tasks["train_max_class"] - tasks["train_min_class"], tasks["test_max_class"] - tasks["test_min_class"]]
    )
    return Measurement(
        measured=f"largest class-count spread = {int(spread.max())}",
        verdict=verdict(bool(len(tasks) == len(TASKS) and spread.max() <= 1)),
        seeds=None,
        detail=f"{len(tasks)} tasks, "
        + ", ".join(f"{r.task}: {r.train_examples}/{r.test_examples}" for r in tasks.itertuples())
        + " train/test examples",
    )
