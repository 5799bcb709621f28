"""What the simplified_blocks claims share: the block names of their measured texts, the regions of a
loss gap (the catalog's "matches" and "clearly worse", the orderings' "no better" and "no worse"), the
null of a speed order, and the registration of a table of claims (a row per claim, its type extending
repro.pipeline.claims.ClaimRow with what its measure reads).
"""

from __future__ import annotations

import pandas as pd

from repro.pipeline import claims
from repro.pipeline.claims import ClaimRow
from repro.pipeline.decisions import Region

__all__ = [
    "EARLY",
    "NAMES",
    "PAPER",
    "PAST_BIGRAM",
    "ClaimRow",
    "as_fast_as_pre_ln",
    "clearly_worse",
    "lower",
    "matches",
    "not_better",
    "not_worse",
    "register_table",
]

PAPER = "simplified_blocks"

#: The phases the claims are judged in (repro.pipeline.claims.PHASES). The base decoders end between the
#: unigram and bigram levels of their text: claims about which block learns faster are judged there. The
#: 3x runs, and the claims the paper makes about where training ends, are judged past the bigram level.
EARLY = "early training"
PAST_BIGRAM = "past the bigram level"

#: The blocks as the measured texts name them.
NAMES = {
    "pre_ln": "Pre-LN",
    "parallel": "Parallel",
    "sas": "SAS",
    "sas_p": "SAS-P",
    "sas_p_nonorm": "SAS-P no norm",
    "vskipinit": "V-SkipInit",
}


def matches(delta: float) -> Region:
    """The catalog's "matches", an equivalence test: the gap's interval within ±δ (δ fixed in the claim)."""
    return Region.equivalent(0.0, delta)


def clearly_worse(delta: float) -> Region:
    """The catalog's "clearly worse": gap > δ."""
    return Region.above(delta)


def lower(sesoi: float) -> Region:
    """A loss gap below 0, an interval within ±`sesoi` of 0 reading "no effect as large as sesoi"."""
    return Region.below(0.0, sesoi=sesoi)


def not_better(epsilon: float) -> Region:
    """An ordering's "no better" (a loss gap): gap ≥ −ε."""
    return Region.at_least(-epsilon)


def not_worse(epsilon: float) -> Region:
    """An ordering's "no worse" (a loss gap): gap ≤ ε."""
    return Region.at_most(epsilon)


def as_fast_as_pre_ln(timings: pd.DataFrame, value: str, keys: list[str]) -> pd.DataFrame:
    """`timings` with every block's `value` replaced by Pre-LN's at the same `keys` (such as the
    timing round): the null of a speed order, where no block is faster or slower than Pre-LN."""
    pre_ln = timings.loc[timings["variant"] == "pre_ln", [*keys, value]]
    return timings.assign(**{value: timings[keys].merge(pre_ln, on=keys, how="left")[value].to_numpy()})


def register_table(rows, measure, *, inputs, kind, gate=None, null=None, phase=""):
    """repro.pipeline.claims.register_table for this paper."""
    return claims.register_table(PAPER, rows, measure, inputs=inputs, kind=kind, gate=gate, null=null, phase=phase)
