"""Claims of Fig 5: the blocks compared at Pre-LN's training time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.papers.simplified_blocks.claim_table import EARLY, NAMES, PAPER, GapRow
from repro.papers.simplified_blocks.claims.common import CURVES, GAP, TIMED_MODELS, TIMINGS, WITHIN_DELTA
from repro.papers.simplified_blocks.equal_budget import benchmarked_seconds, loss_at, total
from repro.papers.simplified_blocks.gates_and_nulls import LEVELS, learned, untrained
from repro.papers.simplified_blocks.run_noise import judge_own
from repro.pipeline.claims import Measurement, format_number, register_table

# ----------------------------------------------------------------------------------------- Fig 5


def _at_reference_time(data, csv: str, variant: str, reference: str, label: str) -> Measurement:
    """L_variant(t*) − L_reference(t*) at t* = the reference run's total training time (per seed), each run's
    time taken at its block's benchmarked speed (`benchmarked_seconds`)."""
    curves = benchmarked_seconds(data[csv], data[TIMINGS], data[TIMED_MODELS])
    budgets = total(curves, reference)
    at = loss_at(curves, budgets).pivot(index="seed", columns="variant", values="loss")
    gaps = (at[variant] - at[reference]).dropna()
    delta = WITHIN_DELTA.margin(float(at[reference].mean()))
    t_star = format_number(float(np.mean(list(budgets.values()))))
    return judge_own(
        at,
        {label: (gaps, GAP, WITHIN_DELTA.region(delta))},
        [variant, reference],
        detail=f"δ = {format_number(delta)} nats; t* = {t_star} s; time = tokens ÷ the block's training tokens/s in "
        "the interleaved timing (median over rounds), not the runs' own seconds.",
        what="the figure's runs at t*",
    )


@dataclass(frozen=True, kw_only=True)
class _InTime(GapRow):
    """The gap of `block` to Pre-LN at Pre-LN's training time t*: no worse than δ (rule WITHIN_DELTA)."""

    block: str


def _in_time_null(row: _InTime):
    return untrained([CURVES], lambda data: [row.block], NAMES[row.block])


def _at_pre_ln_time(data, row: _InTime) -> Measurement:
    return _at_reference_time(data, CURVES, row.block, "pre_ln", f"L_{row.block}(t*) − L_PreLN(t*)")


PRE_LN_TIME = "t* = Pre-LN's training time at its benchmarked speed"
FIG05_IN_TIME = [
    _InTime(
        item="fig05",
        claim_id="sas_p_matches_pre_ln_in_time",
        statement="At Pre-LN's training time, SAS-P has reached at least Pre-LN's loss.",
        paper_value="SAS-P faster than Pre-LN in wall-clock time, matching Parallel",
        rule=WITHIN_DELTA,
        gap="L_SAS-P(t*) − L_PreLN(t*)",
        note=PRE_LN_TIME,
        block="sas_p",
    ),
    _InTime(
        item="fig05",
        claim_id="sas_matches_pre_ln_in_time",
        statement="At Pre-LN's training time, SAS has reached at least Pre-LN's loss.",
        paper_value="SAS slightly faster than Pre-LN in wall-clock time",
        rule=WITHIN_DELTA,
        gap="L_SAS(t*) − L_PreLN(t*)",
        note=PRE_LN_TIME,
        block="sas",
    ),
]
register_table(
    PAPER,
    FIG05_IN_TIME,
    _at_pre_ln_time,
    inputs=[CURVES, LEVELS, TIMINGS, TIMED_MODELS],
    kind="empirical",
    phase=EARLY,
    gate=learned([CURVES]),
    null=_in_time_null,
)
