"""What the layer_diversity claims share: their input tables, tasks and phase, and the helpers that judge
per-seed values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.layer_diversity import gates_and_nulls as gn
from repro.pipeline.claims import Measurement, verdict

PAPER = "layer_diversity"
TASKS = ("sent", "entail", "topic", "mc")
#: Where the empirical claims read their models: each depth trained through its whole schedule on the
#: synthetic tasks.
PHASE = "end of schedule"
TASK_TABLE = "data/table01_tasks.csv"
TOY = "data/fig01_toy.csv"
RECONSTRUCTION = "data/fig02_reconstruction.csv"
UNITS = "data/fig03_units.csv"
CORRELATIONS = "data/fig03_correlations.csv"
GROUPS = "data/fig04_groups.csv"
PREFIXES = "data/fig05_prefixes.csv"
EXAMPLES = "data/fig05_examples.csv"
DEPTH = "data/fig06_depth.csv"
FITS = "data/fig06_fits.csv"
SUBMODULARITY = "data/fig06_submodularity.csv"
REAL_LAYERS = "data/fig06_real_layers.csv"
INFORMATION = "data/fig07_information.csv"
GAINS = "data/fig07_gains.csv"
DUPLICATION = "data/fig07_duplication.csv"
MODELS = "data/table02_models.csv"
SUMMARY = "data/table03_summary.csv"
RECONSTRUCTED = "inferred from the reviews and the sister paper (catalog §0); reconstructed analogue"


def _seeds(frame: pd.DataFrame) -> int:
    return int(frame["seed"].nunique())


def _worst(values: pd.Series) -> float:
    return float(np.nanmax(values.to_numpy(dtype=float))) if len(values) else float("nan")


def _bound(values: pd.Series, tolerance: float, what: str, seeds: int, strict: bool = False) -> Measurement:
    worst = _worst(values)
    # A "< tolerance" claim is a bare comparison (a NaN maximum fails it); a "≤ tolerance" claim also
    # refuses any non-finite maximum. Both rules are kept exactly as the claims were first written.
    ok = worst < tolerance if strict else bool(np.isfinite(worst) and worst <= tolerance)
    return Measurement(
        measured=f"max {what} = {worst:.3g}",
        verdict=verdict(ok),
        seeds=seeds,
        detail=f"over {len(values)} rows",
    )


#: The (family, task) pairs a claim reads: those with signal (Figs. 3, 5) or in the depth regime (Figs. 6, 7).
_select_pairs = gn.signal_pairs(DEPTH, TASK_TABLE)
_select_depth_pairs = gn.depth_regime_pairs(DEPTH, TASK_TABLE)
#: Claims about the runs' bias and diversity: every pair they read has signal.
SIGNAL_GATE = gn.pairs_gate(_select_pairs, gn.SIGNAL_WORDS)
#: Claims about how accuracy moves with depth: a pair at its cue level or its ceiling would force their region
#: (a gain that cannot grow, a copy that cannot beat a model at the ceiling), and a pair whose change with
#: depth the seeds do not resolve has nothing to diminish or to copy.
DEPTH_GATE = gn.pairs_gate(_select_depth_pairs, gn.DEPTH_REGIME_WORDS)
