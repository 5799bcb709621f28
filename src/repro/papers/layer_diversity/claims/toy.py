"""Claims of Fig. 1's toy inset: ensembles of diverse and of identical members."""

from __future__ import annotations

import numpy as np

from repro.papers.layer_diversity import gates_and_nulls as gn
from repro.papers.layer_diversity.claims.common import (
    PAPER,
    TOY,
)
from repro.pipeline.claims import Measurement, claim, format_number, verdict

# --------------------------------------------------------------------------- Fig. 1 (toy inset)


@claim(
    paper=PAPER,
    item="fig01",
    claim_id="toy_diverse_members_lower_mse",
    statement="In the toy inset, adding independent (diverse) members lowers the ensemble MSE at every step.",
    paper_value="adding layers helps only if they are diverse (C, abstract); the schematic itself is inferred (I)",
    tolerance="MSE(M+1) < MSE(M) for every M = 1..M_max−1 (independent members)",
    inputs=[TOY],
    kind="simulation",
    null=gn.identical_as_independent(TOY),
)
def toy_diverse_members_lower_mse(data) -> Measurement:
    toy = data[TOY]
    curve = toy[toy["ensemble"] == "independent"].sort_values("n_members")["mse"].to_numpy()
    steps = np.diff(curve)
    return Measurement(
        measured=f"MSE {format_number(curve[0])} → {format_number(curve[-1])} over M = 1..{len(curve)}; "
        f"largest step {steps.max():.3g}",
        verdict=verdict(bool(len(steps) > 0 and (steps < 0).all())),
        seeds=None,
        detail=f"expected ‖δ‖² + Kσ²/M: {format_number(toy.loc[toy['ensemble'] == 'independent', 'expected_mse'].iloc[-1])} "
        f"at M = {len(curve)}; worst |MSE − (Bias − Div)| = {toy['identity_residual'].max():.2g}",
    )


@claim(
    paper=PAPER,
    item="fig01",
    claim_id="toy_identical_members_keep_mse",
    statement="In the toy inset, adding identical members (no diversity) leaves the ensemble MSE unchanged.",
    paper_value="adding layers helps only if they are diverse (C, abstract); the schematic itself is inferred (I)",
    tolerance="max_M |MSE(M) − MSE(1)| < 1e-12 (identical members)",
    inputs=[TOY],
    kind="identity",
)
def toy_identical_members_keep_mse(data) -> Measurement:
    toy = data[TOY]
    curve = toy[toy["ensemble"] == "identical"].sort_values("n_members")
    change = float((curve["mse"] - curve["mse"].iloc[0]).abs().max())
    return Measurement(
        measured=f"max |MSE(M) − MSE(1)| = {change:.3g}; Diversity max {curve['diversity'].abs().max():.3g}",
        verdict=verdict(bool(len(curve) > 1 and change < 1e-12)),
        seeds=None,
    )
