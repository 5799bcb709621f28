"""What the simplified_blocks claims share: the block names of their measured texts, the regions of a
loss gap (the catalog's "matches" and "clearly worse", the orderings' "no better" and "no worse") and
the rules that judge a gap by one of them at a margin relative to Pre-LN's loss (`GapRule`, whose words
are the tolerance text of the claims that use it: `GapRow`, a row of a claim table), and the null of a
speed order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from repro.pipeline.claims import ClaimRow
from repro.pipeline.decisions import Region

__all__ = [
    "EARLY",
    "NAMES",
    "PAPER",
    "PAST_BIGRAM",
    "OWN_SEEDS",
    "ClaimRow",
    "GapRow",
    "GapRule",
    "as_fast_as_pre_ln",
    "clearly_worse",
    "higher",
    "lower",
    "matches",
    "not_better",
    "not_worse",
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


def higher(sesoi: float) -> Region:
    """A loss gap above 0, an interval within ±`sesoi` of 0 reading "no effect as large as sesoi"."""
    return Region.above(0.0, sesoi=sesoi)


def not_better(epsilon: float) -> Region:
    """An ordering's "no better" (a loss gap): gap ≥ −ε."""
    return Region.at_least(-epsilon)


def not_worse(epsilon: float) -> Region:
    """An ordering's "no worse" (a loss gap): gap ≤ ε."""
    return Region.at_most(epsilon)


#: Where the width of a gap's interval comes from, in the words of most claims (repro.papers.simplified_blocks.run_noise).
OWN_SEEDS = "σ of the runs' own seeds"

_REGIONS: dict[str, Callable[[float], Region]] = {
    "matches": matches,
    "clearly worse": clearly_worse,
    "lower": lower,
    "higher": higher,
    "no better": not_better,
    "no worse": not_worse,
}


@dataclass(frozen=True)
class GapRule:
    """How a claim judges a loss gap: one of the regions above ("matches", "clearly worse", "lower", "higher",
    "no better", "no worse") at a margin that is `relative` × a reference loss (Pre-LN's), named `symbol` (δ or
    ε) in the rule's words, which are the claim's tolerance text."""

    kind: str
    relative: float
    symbol: str

    def __post_init__(self) -> None:
        if self.kind not in _REGIONS:
            raise ValueError(f"gap rule {self.kind!r}; choose one of {', '.join(_REGIONS)}")

    def region(self, margin: float) -> Region:
        """The region of the gap, given the margin in nats."""
        return _REGIONS[self.kind](margin)

    def margin(self, reference_loss: float) -> float:
        return self.relative * reference_loss

    def words(
        self, gap: str, *, scope: str = "", scale: str = "L_PreLN", noise: str = OWN_SEEDS, note: str = ""
    ) -> str:
        """The rule as a tolerance text: `gap` in symbols ("L_SAS − L_PreLN"), `scope` what it applies to
        (", for SAS and SAS-P"), `scale` the loss the margin is a share of, `noise` where the interval's
        width comes from, and `note` anything the rule leaves out."""
        m = self.symbol
        share = f"{m} = {self.relative * 100:g}% of {scale}"
        text = {
            "matches": f"equivalence: the 95% interval of {gap}{scope} within ±{m}, {share} ({noise})",
            "clearly worse": f"{gap} > {m}{scope}, {share}, 95% interval ({noise})",
            "no better": f"{gap} ≥ −{m}{scope}, {share}, 95% interval ({noise})",
            "no worse": f"{gap} ≤ {m}{scope}, {share}, 95% interval ({noise})",
            "lower": f"{gap} < 0{scope}, 95% interval ({noise}); an interval within ±{m} ({share}, the smallest "
            "effect of interest) reads no effect",
            "higher": f"{gap} > 0{scope}, 95% interval ({noise}); an interval within ±{m} ({share}, the smallest "
            "effect of interest) reads no effect",
        }[self.kind]
        return f"{text}; {note}" if note else text


@dataclass(frozen=True, kw_only=True)
class GapRow(ClaimRow):
    """A claim row judged on a loss gap by `rule`; its tolerance text is the rule's words (the arguments
    of GapRule.words are its fields)."""

    tolerance: str = ""
    rule: GapRule
    gap: str
    scope: str = ""
    scale: str = "L_PreLN"
    noise: str = OWN_SEEDS
    note: str = ""

    def __post_init__(self) -> None:
        if self.tolerance:
            raise ValueError(f"claim {self.claim_id}: a GapRow's tolerance is its rule's words; give note= instead")
        words = self.rule.words(self.gap, scope=self.scope, scale=self.scale, noise=self.noise, note=self.note)
        object.__setattr__(self, "tolerance", words)


def as_fast_as_pre_ln(timings: pd.DataFrame, value: str, keys: list[str]) -> pd.DataFrame:
    """`timings` with every block's `value` replaced by Pre-LN's at the same `keys` (such as the
    timing round): the null of a speed order, where no block is faster or slower than Pre-LN."""
    pre_ln = timings.loc[timings["variant"] == "pre_ln", [*keys, value]]
    return timings.assign(**{value: timings[keys].merge(pre_ln, on=keys, how="left")[value].to_numpy()})
