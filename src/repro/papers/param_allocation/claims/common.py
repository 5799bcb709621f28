"""What the param_allocation claims share: their input tables, phases and thresholds, and the judging of
per-seed values."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from repro.papers.param_allocation.gates_and_nulls import decoders_learned
from repro.pipeline.claims import NOT_MEASURABLE, Measurement
from repro.pipeline.decisions import LM_REFERENCE_LEVELS, Region, judge_parts

PAPER = "param_allocation"
#: The phase each empirical claim is judged in: the one-layer models and students of the synthetic tasks
#: train through their schedules; the code-corpus teachers of Figs 4, 6, 9 and 10 end more than 1 nat
#: below the unigram level of their text, near its bigram level.
SYNTHETIC_PHASE = "end of schedule"
DECODER_PHASE = "early training"
#: Fig 5's claim is about what a trained head dimension can represent (where training ends): judged past
#: the bigram level, or not at all.
PAST_BIGRAM = "past the bigram level"
JACOBIAN = "data/jacobian.csv"
LOW_RANK = "data/low_rank_scores.csv"
SWEEP = "data/heads_sweep.csv"
BOUND = "data/allocation_bound.csv"
SATURATION = "data/saturation_trained.csv"
REPLACEMENT = "data/replacement.csv"
POSITIONS = "data/replacement_positions.csv"
LOGITS = "data/logit_norms.csv"
DECODERS = "data/decoders.csv"
LEVELS = LM_REFERENCE_LEVELS

RATIO_SLACK = 1e-9  # float64 rounding allowed above an exact bound
CV_LIMIT = 0.5
EDGE_RATIO = 1.1  # the catalog's U-shape check: each edge at least 1.1× the minimum
#: The relative output error must fall at least as fast as L^−0.3, the slow end of the 1/√L range this
#: check once read on the absolute error; a flat relative error (slope 0) is no saturation.
RELATIVE_SLOPE_MAX = -0.3
GAP_RATIO = 0.5  # the catalog's Fig 3 check: the rank gap at the longest L at most half that at the shortest
TRAINED_RANK = 4
RECOVERY_RANK = 8
RECOVERY_MIN = 0.9
#: Recovery differences smaller than this are noise to the catalog (its Fig 4 check allowed R to fall by
#: 0.02 between ranks): the smallest effect of interest of the claims that compare recoveries.
RECOVERY_NOISE = 0.02  # docs/decisions/0001-verdict-margins.md
SVD_VS_RANDOM_MIN_RANK = 4
BUCKET_MAX_RANK = 8
SPEARMAN_MIN = 0.8
HEAD_FRACTION = 0.5


# -- interval helpers ---------------------------------------------------------------------------------
def _judge(parts: dict[str, tuple[pd.Series, Region]], detail: str = "") -> Measurement:
    """`judge_parts` over paired per-seed values (NaNs dropped), every part to hold; "not measurable"
    where some comparison has no seed at all (a run that failed or was not written)."""
    values = {name: (pd.Series(v, dtype=float).dropna(), region) for name, (v, region) in parts.items()}
    empty = [name for name, (v, _) in values.items() if v.empty]
    if empty or not values:
        said = ", ".join(empty) or "any comparison"
        return Measurement(f"no seed for {said}", NOT_MEASURABLE, seeds=0, detail=f"Replicates: no seed has {said}.")
    return judge_parts({name: (v.tolist(), region) for name, (v, region) in values.items()}, detail=detail)


def _with_detail(judged: Measurement, detail: str, measured: str | None = None) -> Measurement:
    """`judged` with `detail` after its own (and `measured` in place of its intervals, which then move
    into the detail)."""
    shown = judged.measured if measured is None else measured
    intervals = "" if measured is None else f" Intervals: {judged.measured}."
    return replace(judged, measured=shown, detail=f"{judged.detail}{intervals} {detail}".strip())


def _require_rank(ranks, rank: int, key: str) -> None:
    """The config check requires every rank a claim reads at the scales where claims are judged, so a
    missing one is an error naming the config key, never a verdict."""
    if rank not in set(ranks):
        raise ValueError(f"{PAPER}.{key} lacks rank {rank}, which the claim reads; add it to the config")


def _teacher_final_losses(data) -> pd.Series:
    """The teachers' final held-out losses (`heldout_loss`; a table without it, of an older run, gives their
    loss on the replacement study's chunks)."""
    teachers = data[REPLACEMENT][data[REPLACEMENT]["condition"] == "teacher"]
    return teachers["heldout_loss"] if "heldout_loss" in teachers else teachers["eval_loss"]


#: The teachers of Figs 4, 6, 9 and 10 end at least 1 nat below the unigram level of their text.
TEACHERS_GATE = decoders_learned(_teacher_final_losses, "the teacher decoders")
