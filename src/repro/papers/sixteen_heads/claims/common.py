"""What the sixteen_heads claims share: their input tables, tasks and phase, the judging of one statistic
per seed, and the table of claims whose rows differ in a task, threshold or label."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.pipeline.claims import (
    NOT_MEASURABLE,
    ClaimInputs,
    ClaimRow,
    Gate,
    Measurement,
    Null,
    format_mean_spread,
    format_number,
    register_table,
)
from repro.pipeline.decisions import Region, judge_seeds

PAPER = "sixteen_heads"
ABLATION = "data/ablation.csv"
PRUNING = "data/pruning.csv"
ALPHA = 0.01
#: The catalog's smallest cross-domain correlation (Fig. 2: the paper's r are 0.68 and 0.56).
MIN_CORRELATION = 0.3
CLS, S2S = "nli", "mt"
FAMILY_NAME = {CLS: "CLS (MNLI analogue)", S2S: "S2S (WMT analogue)"}
AUC_MAX_PERCENT = 60
#: Where every empirical claim reads its models: the classifiers stopped at their held-out level (early
#: stopping), the translation models at the end of their schedule.
PHASE = "end of schedule"


def _summary(values: pd.Series, digits: int = 3) -> str:
    values = values.dropna()
    if values.empty:
        return "undefined for every seed"
    return f"{format_mean_spread(values, digits)}; median {format_number(float(values.median()), digits)}"


def _median(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.median()) if len(values) else float("nan")


def _judge(values: pd.Series, region: Region, label: str, detail: str = "") -> Measurement:
    """The verdict on one statistic per seed: the 95% t-interval of its mean against `region`
    (repro.pipeline.decisions.judge_seeds; not measurable below 3 seeds). Seeds where the statistic is
    undefined are left out, and the detail says how many."""
    defined = values.dropna()
    if len(defined) < len(values):
        detail = f"{detail} Undefined for {len(values) - len(defined)} of {len(values)} seeds, left out.".strip()
    if defined.empty:
        return Measurement(f"{label}: undefined for every seed", NOT_MEASURABLE, 0, detail)
    judged = judge_seeds(defined, region, detail=detail)
    return replace(judged, measured=f"{label}: {judged.measured}")


def _single(data, task: str) -> pd.DataFrame:
    return S.rows(data[ABLATION], task, "single", "test")


@dataclass(frozen=True)
class Row(ClaimRow):
    """One claim of a table, with the measure that judges it (``measure(data)``, a partial of one of this
    module's measures with the task, threshold or label of this claim)."""

    measure: Callable[[ClaimInputs], Measurement]
    kind: str = "empirical"
    gate: Gate | None = None
    null: Null | None = None


def _register(inputs: str, rows: Iterable[Row]) -> None:
    """Registers one claim per row, each reading the one file ``inputs``."""
    register_table(
        PAPER,
        rows,
        _measure_row,
        inputs=[inputs],
        kind=lambda row: row.kind,
        gate=lambda row: row.gate,
        null=lambda row: row.null,
        phase=lambda row: PHASE if row.kind == "empirical" else "",
    )


def _measure_row(data: ClaimInputs, row: Row) -> Measurement:
    return row.measure(data)
