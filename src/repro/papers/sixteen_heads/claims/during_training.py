"""Claims of Fig. 5: pruning during training (the IWSLT analogue's epochs)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from repro.papers.sixteen_heads import head_summaries as S
from repro.papers.sixteen_heads.claims.common import PAPER, PHASE, _judge, _summary
from repro.papers.sixteen_heads.gates_and_nulls import in_range, last_epoch_everywhere, linear_decline
from repro.pipeline.claims import NOT_MEASURABLE, Measurement, claim
from repro.pipeline.decisions import Region

# --------------------------------------------------------------------------- Figure 5
# Fixed with the thresholds: the relative score is BLEU(pruned) / BLEU(unpruned) at the same
# epoch; "epoch 1" is the first kept epoch and "the last epoch" the last kept one; the linear fit
# is over all pruning levels (0-90%) and must reach R² ≥ 0.8 at epoch 1 or at epoch 2, among those
# whose unpruned BLEU is at least 1 (not measurable if neither is). Every check leaves out the epochs
# whose unpruned BLEU is below 1: a ratio of near-zero BLEUs is noise (at epoch 1 of the laptop run,
# BLEU 0.8, pruned models scored up to 115% of it).
MIN_EPOCH_BLEU = 1.0

EPOCHS = "data/epochs.csv"
#: The trained model is gated; the earlier checkpoints are meant to be barely trained, and an epoch is
#: read only where its unpruned BLEU reaches MIN_EPOCH_BLEU.
EPOCHS_GATE = in_range(EPOCHS, ["iwslt"], when=" at their last epoch")


def _epoch_table(data) -> pd.DataFrame:
    """The per-epoch pruning curves of the epochs whose unpruned BLEU is at least MIN_EPOCH_BLEU (per seed)."""
    table = data[EPOCHS]
    if table.empty:
        raise ValueError("epochs.csv has no rows")
    return table[table["baseline"] >= MIN_EPOCH_BLEU]


def _relative(table: pd.DataFrame, epoch: int, percents) -> pd.Series:
    rows = table[(table["epoch"] == epoch) & (table["percent"].isin(percents))]
    return rows.groupby("seed")["relative"].mean()


@claim(
    paper=PAPER,
    item="fig05",
    claim_id="late_epochs_prune_better",
    statement="Pruning hurts less at the end of training than after the first epoch.",
    paper_value="epochs 1-2: roughly linear loss; from epoch 10 on 40% prunable at 85-90% of BLEU",
    tolerance="mean relative BLEU over 10-50% pruned: last epoch − first epoch ≥ 0.10 (95% interval over seeds)",
    inputs=[EPOCHS],
    kind="empirical",
    phase=PHASE,
    gate=EPOCHS_GATE,
    null=last_epoch_everywhere(EPOCHS),
)
def late_epochs_prune_better(data) -> Measurement:
    table = _epoch_table(data)
    if table["epoch"].nunique() < 2:
        return Measurement("fewer than two epochs with unpruned BLEU ≥ 1", NOT_MEASURABLE)
    first, last = int(table["epoch"].min()), int(table["epoch"].max())
    levels = [10, 20, 30, 40, 50]
    gap = _relative(table, last, levels) - _relative(table, first, levels)
    base = table[table["epoch"] == first].groupby("seed")["baseline"].first()
    return _judge(
        gap,
        Region.at_least(0.10),
        f"epoch {last} − epoch {first}",
        f"unpruned BLEU at epoch {first}: {_summary(base, 2)}.",
    )


@claim(
    paper=PAPER,
    item="fig05",
    claim_id="last_epoch_40pct_keeps_85pct",
    statement="At the end of training, 40% of heads can be pruned keeping 85% of BLEU.",
    paper_value="85-90% of BLEU with 40% pruned from epoch 10 on",
    tolerance="relative BLEU at 40% pruned, last epoch ≥ 0.85 (95% interval over seeds)",
    inputs=[EPOCHS],
    kind="empirical",
    phase=PHASE,
    gate=EPOCHS_GATE,
    null=linear_decline(EPOCHS),
)
def last_epoch_40pct_keeps_85pct(data) -> Measurement:
    table = _epoch_table(data)
    if table.empty:
        return Measurement(f"no epoch with unpruned BLEU ≥ {MIN_EPOCH_BLEU:g}", NOT_MEASURABLE)
    last = int(table["epoch"].max())
    rel = _relative(table, last, [40])
    return _judge(rel, Region.at_least(0.85), f"relative BLEU at 40%, epoch {last}")


def _r_squared(x: np.ndarray, y: np.ndarray) -> float:
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = y - y.mean()
    return float(1.0 - (residual @ residual) / (total @ total)) if total @ total > 0 else float("nan")


@claim(
    paper=PAPER,
    item="fig05",
    claim_id="early_epochs_linear",
    statement="Early in training the score falls roughly linearly with the share of heads pruned.",
    paper_value="epochs 1-2: the decrease is roughly linear (heads about equally important)",
    tolerance="R² ≥ 0.8 of a linear fit of relative BLEU on % pruned at epoch 1 or 2 (95% interval over seeds); "
    "epochs with unpruned BLEU < 1 are skipped",
    inputs=[EPOCHS],
    kind="empirical",
    phase=PHASE,
    gate=EPOCHS_GATE,
    null=last_epoch_everywhere(EPOCHS),
)
def early_epochs_linear(data) -> Measurement:
    table = _epoch_table(data)
    found = {}
    for epoch in (1, 2):
        rows = table[table["epoch"] == epoch]
        if not rows.empty:
            found[epoch] = S.per_seed(
                rows, lambda g: _r_squared(g["percent"].to_numpy(float), g["relative"].to_numpy(float))
            )
    if not found:
        return Measurement("unpruned BLEU < 1 at epochs 1 and 2 (or they were not kept)", NOT_MEASURABLE)
    best = pd.concat(found.values(), axis=1).max(axis=1)  # per seed, the better of the kept epochs 1 and 2
    return _judge(
        best,
        Region.at_least(0.8),
        "R² at the more linear of epochs 1-2",
        "; ".join(f"epoch {e}: R² {_summary(r2)}" for e, r2 in found.items()) + ".",
    )
