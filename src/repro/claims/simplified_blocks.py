"""Claims of "Simplifying Transformer Blocks" (He & Hofmann, ICLR 2024).

Tolerances follow the catalog (../shared/papers/simplified_blocks.md §2): L_x is the
final eval loss, the mean of the last 3 evaluations of a run, averaged over seeds;
δ is 2% of the Pre-LN loss. The catalog offers "0.03 nats or 2%": we fixed the relative
form before any run because small models end far above the paper's ≈1.16 nats, where a
fixed 0.03 nats would be a much stricter test than the paper's own figure supports.
Gaps are computed per seed (same seed, same data order) and then averaged.
"""

from __future__ import annotations

import pandas as pd

from repro.analysis.training_curves import final_losses
from repro.pipeline.claims import Measurement, claim, format_mean_spread, format_number, verdict

PAPER = "simplified_blocks"
CURVES = "data/fig26_curves.csv"
RELATIVE_DELTA = 0.02


def _final(data) -> pd.DataFrame:
    """final_loss per (variant, seed), as a variant x seed table."""
    return final_losses(data[CURVES]).pivot(index="seed", columns="variant", values="final_loss")


def _gaps(data, variant: str, reference: str = "pre_ln") -> tuple[pd.Series, float]:
    table = _final(data)
    gaps = (table[variant] - table[reference]).dropna()
    delta = RELATIVE_DELTA * float(table[reference].mean())
    return gaps, delta


def _matches_pre_ln(data, variant: str) -> Measurement:
    gaps, delta = _gaps(data, variant)
    mean = float(gaps.mean())
    return Measurement(
        measured=f"L({variant}) − L(Pre-LN) = {format_mean_spread(gaps)} nats",
        verdict=verdict(abs(mean) <= delta),
        seeds=len(gaps),
        detail=f"δ = {format_number(delta)} nats",
    )


@claim(
    paper=PAPER,
    item="fig26",
    claim_id="sas_matches_pre_ln_per_step",
    statement="SAS trains as fast per step as Pre-LN (same final eval loss).",
    paper_value="SAS ≈ Pre-LN per step (Pre-LN ≈1.155 at 40K steps)",
    tolerance="|L_SAS − L_PreLN| ≤ 2% of L_PreLN, mean over seeds",
    inputs=[CURVES],
)
def sas_matches_pre_ln_per_step(data) -> Measurement:
    return _matches_pre_ln(data, "sas")


@claim(
    paper=PAPER,
    item="fig26",
    claim_id="sas_p_matches_pre_ln_per_step",
    statement="SAS-P trains as fast per step as Pre-LN (same final eval loss).",
    paper_value="SAS-P ≈ Pre-LN per step",
    tolerance="|L_SAS-P − L_PreLN| ≤ 2% of L_PreLN, mean over seeds",
    inputs=[CURVES],
)
def sas_p_matches_pre_ln_per_step(data) -> Measurement:
    return _matches_pre_ln(data, "sas_p")


@claim(
    paper=PAPER,
    item="fig26",
    claim_id="parallel_matches_pre_ln_per_step",
    statement="The parallel block trains as fast per step as Pre-LN.",
    paper_value="Parallel ≈ Pre-LN per step",
    tolerance="|L_Parallel − L_PreLN| ≤ 2% of L_PreLN, mean over seeds",
    inputs=[CURVES],
)
def parallel_matches_pre_ln_per_step(data) -> Measurement:
    return _matches_pre_ln(data, "parallel")


@claim(
    paper=PAPER,
    item="fig26",
    claim_id="no_norm_not_better_than_sas_p",
    statement="Removing the norms from SAS-P makes it slightly worse, not better.",
    paper_value="SAS-P no norm ≈1.245 vs Pre-LN ≈1.155 at 40K steps",
    tolerance="L_SAS-P-nonorm ≥ L_SAS-P, mean over seeds",
    inputs=[CURVES],
)
def no_norm_not_better_than_sas_p(data) -> Measurement:
    gaps, _ = _gaps(data, "sas_p_nonorm", reference="sas_p")
    return Measurement(
        measured=f"L(SAS-P no norm) − L(SAS-P) = {format_mean_spread(gaps)} nats",
        verdict=verdict(float(gaps.mean()) >= 0.0),
        seeds=len(gaps),
    )


@claim(
    paper=PAPER,
    item="fig26",
    claim_id="vskipinit_trains_slower",
    statement="Value-SkipInit (skipless attention, code variant) trains clearly slower than Pre-LN.",
    paper_value="V-SkipInit ≈1.45 vs Pre-LN ≈1.155 at 40K steps",
    tolerance="L_VSkipInit − L_PreLN > 2% of L_PreLN, mean over seeds",
    inputs=[CURVES],
)
def vskipinit_trains_slower(data) -> Measurement:
    gaps, delta = _gaps(data, "vskipinit")
    return Measurement(
        measured=f"L(V-SkipInit) − L(Pre-LN) = {format_mean_spread(gaps)} nats",
        verdict=verdict(float(gaps.mean()) > delta),
        seeds=len(gaps),
        detail=f"δ = {format_number(delta)} nats",
    )
