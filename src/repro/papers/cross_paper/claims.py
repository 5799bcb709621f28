"""The cross-paper claims: questions none of the four papers asked, each fixed with its direction or
margin, gate and null before any of its results existed (docs/decisions/0051-cross-paper-claims.md).
Their class is "new finding": no paper states them, so the scorecard and the report list them apart
from the reproductions, and one that reads "not reproduced" is a finding too (the prediction failed).

Figure 1 (study 1): Sixteen Heads' head importance and prune-by-importance curve on simplified_blocks'
decoders of each block. Figure 2 (study 2): Diversity of Layers' bias-diversity decomposition of the
same decoders' layer increments. Figure 3 (study 3): Sixteen Heads' prune-by-importance on Allocation of
Parameters' head-count sweeps at a fixed width. Figure 4 (study 4): Allocation of Parameters' softmax saturation of the
heads of Sixteen Heads' NLI classifiers, against their importance. Every comparison is paired by seed (the blocks of one seed share data
order and held-out chunks) and judged by the 95 % t-interval over seeds (docs/verdicts.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from repro.papers.cross_paper.block_heads import top_share
from repro.papers.cross_paper.gates_and_nulls import (
    DECOMPOSITION,
    LEVELS,
    SATURATION,
    SWEEP_PRUNING,
    classifiers_in_range,
    copied,
    decoders_learned,
    reversed_ranking,
    smallest_sweep_everywhere,
    sweeps_in_range,
    sweeps_learned,
    uncorrelated_losses,
)
from repro.papers.cross_paper.head_saturation import quarter_gap
from repro.papers.cross_paper.specs import CLAIMED_BLOCKS
from repro.pipeline.claims import NOT_MEASURABLE, Measurement, claim
from repro.pipeline.decisions import Region, judge_parts, judge_seeds

PAPER = "cross_paper"
HEADS = "data/block_heads.csv"
PRUNE = "data/block_prune.csv"
#: The share of heads masked at which studies 1a and 1b compare the blocks (record 0051).
JUDGED_PERCENT = 50
NAMES = {"pre_ln": "Pre-LN", "parallel": "Parallel", "sas": "SAS", "sas_p": "SAS-P"}
NEW = "none: a new question (record 0051)"
PHASE = "early training"

#: What the studies do differently from the papers whose measures they borrow.
DEVIATIONS = [
    "Studies 1-2 read simplified_blocks' Fig 26 decoders, which end in early training (at least 1 nat below the "
    "unigram level of their held-out text, above its bigram level): the answers are about these models, not about "
    "fully trained ones.",
    "Study 1 computes head importance on the same held-out chunks it prunes on (record 0051), where Sixteen Heads "
    "estimates it on a separate set; the ranking is fixed once, on the whole model.",
    "Study 2 reads every position of the held-out chunks against the one-hot next token over the whole vocabulary, "
    "where Diversity of Layers reads one answer position against a few label words.",
]


def _per_seed(table: pd.DataFrame, column: str, variant: str, reference: str) -> pd.Series:
    """value(variant) − value(reference) for each seed that has both (a paired difference)."""
    by = table.set_index(["variant", "seed"])[column]
    a, b = by.xs(variant, level="variant"), by.xs(reference, level="variant")
    return (a - b).dropna().sort_index()


def _delta_at(data, percent: int = JUDGED_PERCENT) -> pd.DataFrame:
    prune = data[PRUNE]
    return prune[prune["percent"] == percent]


_STUDY1_INPUTS = [PRUNE, HEADS, DECOMPOSITION, LEVELS]
_STUDY2_INPUTS = [DECOMPOSITION, LEVELS]


@claim(
    paper=PAPER,
    item="fig01",
    claim_id="skipless_heads_harder_to_remove",
    statement="Masking the least important half of the heads costs SAS and SAS-P more loss than Pre-LN.",
    paper_value=NEW + "; predicted: without the attention skip a masked head removes its slice of the stream",
    tolerance="ΔL50(SAS) − ΔL50(Pre-LN) > 0 and ΔL50(SAS-P) − ΔL50(Pre-LN) > 0, paired per seed",
    inputs=_STUDY1_INPUTS,
    kind="new finding",
    gate=decoders_learned(),
    null=copied([PRUNE], {"sas": "pre_ln", "sas_p": "pre_ln"}, "SAS's and SAS-P's prune curves replaced by Pre-LN's"),
    phase=PHASE,
)
def skipless_heads_harder_to_remove(data) -> Measurement:
    deltas = _delta_at(data)
    region = Region.above(0.0, sesoi=0.05)
    return judge_parts(
        {f"{NAMES[v]} − Pre-LN": (_per_seed(deltas, "delta_loss", v, "pre_ln"), region) for v in ("sas", "sas_p")},
        detail=f"Loss increase with the lowest-importance {JUDGED_PERCENT}% of the heads masked (nats), per seed.",
    )


@claim(
    paper=PAPER,
    item="fig01",
    claim_id="parallel_prunes_like_pre_ln",
    statement="Parallel blocks lose as much loss as Pre-LN when half of their heads are masked.",
    paper_value=NEW + "; predicted: both keep the attention skip",
    tolerance="|ΔL50(Parallel) − ΔL50(Pre-LN)| ≤ 0.05 nats, paired per seed (equivalence)",
    inputs=_STUDY1_INPUTS,
    kind="new finding",
    gate=decoders_learned(),
    null=copied([PRUNE], {"parallel": "sas"}, "Parallel's prune curve replaced by SAS's"),
    phase=PHASE,
)
def parallel_prunes_like_pre_ln(data) -> Measurement:
    gaps = _per_seed(_delta_at(data), "delta_loss", "parallel", "pre_ln")
    return judge_seeds(
        gaps,
        Region.equivalent(0.0, 0.05),
        unit=" nats",
        detail=f"ΔL{JUDGED_PERCENT}(Parallel) − ΔL{JUDGED_PERCENT}(Pre-LN) per seed.",
    )


def _top_quarter(data) -> pd.DataFrame:
    heads = data[HEADS]
    shares = heads.groupby(["variant", "seed"])["importance"].apply(top_share).rename("top_share")
    return shares.reset_index()


@claim(
    paper=PAPER,
    item="fig01",
    claim_id="skipless_importance_spread_out",
    statement="SAS spreads head importance more evenly than Pre-LN: its top quarter of heads holds less of it.",
    paper_value=NEW + "; predicted: each SAS head carries its own slice of the stream",
    tolerance="top-quarter share of layer-normalised importance, SAS − Pre-LN < 0, paired per seed",
    inputs=_STUDY1_INPUTS,
    kind="new finding",
    gate=decoders_learned(),
    null=copied([HEADS], {"sas": "pre_ln"}, "SAS's importances replaced by Pre-LN's"),
    phase=PHASE,
)
def skipless_importance_spread_out(data) -> Measurement:
    gaps = _per_seed(_top_quarter(data), "top_share", "sas", "pre_ln")
    return judge_seeds(
        gaps,
        Region.below(0.0, sesoi=0.05),
        detail="Share of the total importance held by the top 4 of 16 heads, SAS − Pre-LN per seed.",
    )


@claim(
    paper=PAPER,
    item="fig02",
    claim_id="skipless_layers_more_diverse",
    statement="The layer increments of SAS and SAS-P are more diverse, relative to their error, than Pre-LN's.",
    paper_value=NEW + "; predicted: without skips successive increments partly cancel",
    tolerance="D/B(SAS) − D/B(Pre-LN) > 0 and D/B(SAS-P) − D/B(Pre-LN) > 0, paired per seed",
    inputs=_STUDY2_INPUTS,
    kind="new finding",
    gate=decoders_learned(),
    null=copied(
        [DECOMPOSITION], {"sas": "pre_ln", "sas_p": "pre_ln"}, "SAS's and SAS-P's members replaced by Pre-LN's"
    ),
    phase=PHASE,
)
def skipless_layers_more_diverse(data) -> Measurement:
    table = data[DECOMPOSITION]
    region = Region.above(0.0, sesoi=0.05)
    return judge_parts(
        {f"{NAMES[v]} − Pre-LN": (_per_seed(table, "share", v, "pre_ln"), region) for v in ("sas", "sas_p")},
        detail="Diversity share D / B of the layer increments (module form, one-hot next token), per seed.",
    )


def _rank_correlations(table: pd.DataFrame) -> pd.Series:
    """Per seed, Spearman's ρ over the claimed blocks between D / B and the held-out loss."""
    rows = table[table["variant"].isin(CLAIMED_BLOCKS)]
    out = {}
    for seed, group in rows.groupby("seed"):
        if len(group) == len(CLAIMED_BLOCKS):
            out[seed] = float(spearmanr(group["share"], group["heldout_loss"]).statistic)
    return pd.Series(out, dtype=float)


@claim(
    paper=PAPER,
    item="fig02",
    claim_id="diversity_goes_with_lower_loss",
    statement="Across the four blocks, the more diverse a decoder's layers, the lower its held-out loss.",
    paper_value=NEW + "; predicted from Diversity of Layers: at equal bias, diversity lowers the ensemble's error",
    tolerance="mean over seeds of Spearman ρ(D/B, loss) over the four blocks < 0",
    inputs=_STUDY2_INPUTS,
    kind="new finding",
    gate=decoders_learned(),
    null=uncorrelated_losses(
        DECOMPOSITION, "share", CLAIMED_BLOCKS, "the losses permuted across the blocks of each seed (ρ = 0 exactly)"
    ),
    phase=PHASE,
)
def diversity_goes_with_lower_loss(data) -> Measurement:
    return judge_seeds(
        _rank_correlations(data[DECOMPOSITION]),
        Region.below(0.0, sesoi=0.1),
        detail="Spearman ρ over Pre-LN, Parallel, SAS and SAS-P between D / B and the held-out loss, per seed.",
    )


@claim(
    paper=PAPER,
    item="fig04",
    claim_id="unimportant_heads_saturated",
    statement="The heads Sixteen Heads ranks least important are more saturated than the most important ones.",
    paper_value=NEW + "; predicted: a head fixed on one position adds a nearly constant vector",
    tolerance="mean saturation of the lowest-importance quarter of heads − that of the highest quarter > 0, per seed",
    inputs=[SATURATION],
    kind="new finding",
    gate=classifiers_in_range(),
    null=reversed_ranking(SATURATION, "importance", "the importance ranking reversed"),
    phase="end of schedule",
)
def unimportant_heads_saturated(data) -> Measurement:
    gaps = data[SATURATION].groupby("seed").apply(quarter_gap, include_groups=False)
    return judge_seeds(
        gaps,
        Region.above(0.0, sesoi=0.05),
        detail="Softmax saturation (mean largest attention weight per query) on the NLI test inputs, the "
        "8 least minus the 8 most important of 32 heads, per classifier seed.",
    )


def _doubling_slopes(table: pd.DataFrame) -> pd.Series:
    """Per seed, the mean over the (task, position) sweeps in range of the least-squares slope of the
    removable share against log2 H."""
    kept, _ = sweeps_in_range(table)
    rows = table[[(t, p) in kept for t, p in zip(table["task"], table["position"])]]
    slopes = {}
    for seed, by_seed in rows.groupby("seed"):
        per_sweep = [
            float(np.polyfit(np.log2(sweep["heads"].to_numpy(float)), sweep["removable_share"].to_numpy(float), 1)[0])
            for _, sweep in by_seed.groupby(["task", "position"])
        ]
        slopes[seed] = float(np.mean(per_sweep))
    return pd.Series(slopes, dtype=float)


@claim(
    paper=PAPER,
    item="fig03",
    claim_id="more_heads_more_removable",
    statement="At a fixed attention width, the more (and smaller) the heads, the larger the share that can be removed.",
    paper_value=NEW + "; predicted: Sixteen Heads' redundancy, each small head limited by its rank d_h",
    tolerance="slope of the removable share against log2 H > 0 per seed (mean over the sweeps in range)",
    inputs=[SWEEP_PRUNING],
    kind="new finding",
    gate=sweeps_learned(),
    null=smallest_sweep_everywhere(
        SWEEP_PRUNING, "removable_share", "every model's share replaced by its sweep's smallest H's"
    ),
    phase="end of schedule",
)
def more_heads_more_removable(data) -> Measurement:
    slopes = _doubling_slopes(data[SWEEP_PRUNING])
    if slopes.empty:
        return Measurement("no sweep in range", NOT_MEASURABLE, detail="No (task, position) sweep passes the gate.")
    return judge_seeds(
        slopes,
        Region.above(0.0, sesoi=0.05),
        detail="Removable share: the most heads masked, lowest importance first, with the held-out loss within 5% "
        "of the way to the constant predictor's; its slope per doubling of H, per seed.",
    )
