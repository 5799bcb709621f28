"""Verdicts with uncertainty: judge a claim only where an interval over seeds can tell.

A comparison claim measures one value per seed (a per-seed difference where the runs are paired)
and states the region its true value should lie in, such as "gap > 0" or "|gap| ≤ 0.05 nats". The
t-interval of the mean over seeds (95 % unless said otherwise) decides:

* reproduced: the interval lies inside the region;
* not reproduced: the interval lies wholly outside it;
* inconclusive: it straddles a boundary, so this many seeds cannot tell.

With fewer values than the claim's minimum (3 seeds for comparisons) the interval is shown and
nothing is judged: "not measurable at this scale".

Two refinements make "inconclusive" say less often what the data can answer:

* a claim of equality ("matches", "no effect") is an equivalence test: its region is ±δ around the
  reference, with the margin δ fixed in the claim before any result, so the interval must lie inside
  the margin to reproduce, wholly outside it not to (Lakens, 2017, "Equivalence tests"; with the
  two-sided 95% interval this is two one-sided tests at 2.5% each);
* a directional claim may declare the smallest effect it cares about (``sesoi``): an interval that
  lies within ±δ of the region's boundary then reads "not reproduced: no effect as large as δ",
  rather than inconclusive (Lakens, Scheel & Isager, 2018, smallest effect size of interest).

An inconclusive verdict carries a projection: the number of seeds at which, with the spread observed,
the interval's half-width would fall below the distance from the estimate to the boundary it
straddles (a projection from this run, not a promise).

The papers' margins and where they come from: docs/decisions/0001-verdict-margins.md.

    gaps = loss_sas_p - loss_pre_ln          # one paired difference per seed
    return judge_seeds(gaps, Region.around(0.0, 0.05), unit=" nats")
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from repro.pipeline.claims import INCONCLUSIVE, NOT_MEASURABLE, NOT_REPRODUCED, REPRODUCED, Gate, Measurement

#: Seeds a comparison rests on before it is judged.
MIN_SEEDS = 3
LEVEL = 0.95


@dataclass(frozen=True)
class Region:
    """The interval a claim's quantity should lie in: [low, high], or (low, high) when `open` (an effect
    "above 0" is not shown by an interval that ends at 0). Either end may be infinite."""

    low: float = -math.inf
    high: float = math.inf
    open: bool = False
    #: The smallest effect of interest of a one-sided region: an interval within ±sesoi of its one
    #: finite boundary shows no effect that large, which reads "not reproduced".
    sesoi: float | None = None
    #: The region is an equivalence margin around a reference (a claim of equality).
    equivalence: bool = False

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise ValueError(f"region [{self.low}, {self.high}] is empty")
        if self.sesoi is not None:
            if not (math.isfinite(self.sesoi) and self.sesoi > 0):
                raise ValueError(f"a smallest effect of interest must be a positive number, got {self.sesoi}")
            if len(self.boundaries) != 1:
                raise ValueError("a smallest effect of interest applies to a one-sided region (one finite boundary)")

    @classmethod
    def above(cls, value: float, sesoi: float | None = None) -> Region:
        """x > value (with `sesoi`: an interval within value ± sesoi reads "no effect as large as sesoi")."""
        return cls(low=value, open=True, sesoi=sesoi)

    @classmethod
    def below(cls, value: float, sesoi: float | None = None) -> Region:
        """x < value (with `sesoi`, as for `above`)."""
        return cls(high=value, open=True, sesoi=sesoi)

    @classmethod
    def at_least(cls, value: float, sesoi: float | None = None) -> Region:
        """x ≥ value (with `sesoi`, as for `above`)."""
        return cls(low=value, sesoi=sesoi)

    @classmethod
    def at_most(cls, value: float, sesoi: float | None = None) -> Region:
        """x ≤ value (with `sesoi`, as for `above`)."""
        return cls(high=value, sesoi=sesoi)

    @classmethod
    def equivalent(cls, reference: float, margin: float) -> Region:
        """|x − reference| ≤ margin: a claim of equality, with its equivalence margin fixed in advance."""
        if not (math.isfinite(margin) and margin > 0):
            raise ValueError(f"an equivalence margin must be a positive number, got {margin}")
        return cls(reference - margin, reference + margin, equivalence=True)

    @property
    def boundaries(self) -> tuple[float, ...]:
        """The finite ends of the region."""
        return tuple(b for b in (self.low, self.high) if math.isfinite(b))

    def negligible(self, low: float, high: float) -> bool:
        """The interval [low, high] lies within ±sesoi of the boundary: no effect as large as sesoi."""
        if self.sesoi is None:
            return False
        (boundary,) = self.boundaries
        return boundary - self.sesoi < low and high < boundary + self.sesoi

    @classmethod
    def around(cls, target: float, tolerance: float) -> Region:
        """|x − target| ≤ tolerance."""
        return cls(target - tolerance, target + tolerance)

    def contains(self, low: float, high: float) -> bool:
        if self.open:
            return self.low < low and high < self.high
        return self.low <= low and high <= self.high

    def misses(self, low: float, high: float) -> bool:
        if self.open:
            return high <= self.low or low >= self.high
        return high < self.low or low > self.high

    def __str__(self) -> str:
        strict = "" if self.open else "="
        if math.isinf(self.low) and math.isinf(self.high):
            return "any value"
        if math.isinf(self.high):
            return f">{strict} {self.low:.4g}"
        if math.isinf(self.low):
            return f"<{strict} {self.high:.4g}"
        brackets = "()" if self.open else "[]"
        return f"in {brackets[0]}{self.low:.4g}, {self.high:.4g}{brackets[1]}"

    def describe(self) -> str:
        """The region with its smallest effect of interest, if any."""
        return str(self) if self.sesoi is None else f"{self} (smallest effect of interest {self.sesoi:.4g})"

    def rule(self) -> str:
        """What the region adds to a decision rule: its equivalence margin or smallest effect of interest."""
        if self.equivalence:
            return f"equivalence margin ±{(self.high - self.low) / 2:.4g}"
        if self.sesoi is not None:
            return f"smallest effect of interest {self.sesoi:.4g}"
        return ""


@dataclass(frozen=True)
class Interval:
    """The mean of `n` values and its two-sided t-interval at `level`; `sd` is the spread of one value
    that sets its width (NaN where unknown)."""

    estimate: float
    low: float
    high: float
    n: int
    level: float = LEVEL
    sd: float = math.nan

    def format(self, unit: str = "", digits: int = 3) -> str:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return f"{self.estimate:.{digits}g}{unit} (n={self.n}, no interval)"
        return (
            f"{self.estimate:.{digits}g}{unit} [{self.low:.{digits}g}, {self.high:.{digits}g}] "
            f"({self.level:.0%} CI, n={self.n})"
        )


def seed_interval(values: Iterable[float], level: float = LEVEL) -> Interval:
    """The mean over seeds and its t-interval (infinite for a single value, exact for identical ones)."""
    from scipy.stats import t

    xs = [float(v) for v in values]
    if not xs or not all(math.isfinite(x) for x in xs):
        raise ValueError(f"seed_interval needs finite values, got {xs}")
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return Interval(mean, -math.inf, math.inf, n, level)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, level, sd)


def decide(interval: Interval, region: Region) -> str:
    """Reproduced (inside), not reproduced (outside, or within the smallest effect of interest of the
    boundary) or inconclusive (straddling a boundary)."""
    if region.contains(interval.low, interval.high):
        return REPRODUCED
    if region.misses(interval.low, interval.high) or region.negligible(interval.low, interval.high):
        return NOT_REPRODUCED
    return INCONCLUSIVE


#: Projections stop here: a claim that needs more seeds than this is out of reach of any run.
MAX_PROJECTED_SEEDS = 1000


def seeds_to_decide(interval: Interval, region: Region) -> int | None:
    """A projection: the fewest seeds at which an interval with this estimate and spread would no
    longer straddle `region`'s boundaries (t-quantile at n − 1 df). None when it cannot be projected
    (no spread, an estimate on a boundary, or more than MAX_PROJECTED_SEEDS seeds)."""
    from scipy.stats import t

    if not (math.isfinite(interval.sd) and interval.sd > 0) or not region.boundaries:
        return None
    distance = _distance(interval, region)
    if distance <= 0:
        return None
    for n in range(max(2, interval.n), MAX_PROJECTED_SEEDS + 1):
        if float(t.ppf(0.5 + interval.level / 2, n - 1)) * interval.sd / math.sqrt(n) < distance:
            return n
    return None


#: The power a seed count is planned for: the chance that the interval decides an effect of the size observed.
POWER = 0.8


def _distance(interval: Interval, region: Region) -> float:
    """How far the estimate is from where a narrower interval would decide: the nearest boundary, or,
    within the smallest effect of interest, the farther of the boundary and the edge of ±sesoi."""
    distance = min(abs(interval.estimate - b) for b in region.boundaries)
    if region.sesoi is not None:
        distance = max(distance, region.sesoi - distance)
    return distance


def seeds_for_power(interval: Interval, region: Region, power: float = POWER) -> int | None:
    """A projection for planning: the fewest seeds at which an interval over units with this spread,
    centred at an effect as far from the boundary as this one's estimate, decides with probability
    `power` ((t(level) + t(power)) · sd / √n below the distance, t at n − 1 df). None where it cannot
    be projected (no spread, no boundary, an estimate on a boundary, or more than MAX_PROJECTED_SEEDS)."""
    from scipy.stats import t

    if not (math.isfinite(interval.sd) and interval.sd > 0) or not region.boundaries:
        return None
    distance = _distance(interval, region)
    if distance <= 0:
        return None
    for n in range(2, MAX_PROJECTED_SEEDS + 1):
        quantiles = float(t.ppf(0.5 + interval.level / 2, n - 1)) + float(t.ppf(power, n - 1))
        if quantiles * interval.sd / math.sqrt(n) < distance:
            return n
    return None


def seed_rule(n: int, what: str = "seeds", level: float = LEVEL, regions: Iterable[Region] = ()) -> str:
    """The decision rule of an interval over replicates, in words, with the margins of `regions`."""
    margins = sorted({region.rule() for region in regions} - {""})
    return "; ".join([f"{level:.0%} t-interval over {n} {what}", *margins])


def _verdict_sentence(what: str, verdict: str, interval: Interval, region: Region) -> str:
    """'The 95% interval lies inside the claim's region (> 0).' and its siblings; `what` names the interval."""
    if verdict == NOT_REPRODUCED and region.negligible(interval.low, interval.high):
        return (
            f"The {what} lies within ±{region.sesoi:.4g} of the boundary of the claim's region ({region}): "
            "no effect as large as the smallest of interest."
        )
    where = {REPRODUCED: "lies inside", NOT_REPRODUCED: "lies outside", INCONCLUSIVE: "straddles a boundary of"}
    return f"The {what} {where[verdict]} the claim's region ({region.describe()})."


def judge_seeds(
    values: Iterable[float],
    region: Region,
    *,
    min_seeds: int = MIN_SEEDS,
    level: float = LEVEL,
    unit: str = "",
    detail: str = "",
) -> Measurement:
    """The Measurement of a comparison over seeds: the interval, and the verdict `decide` gives it, or
    "not measurable" below `min_seeds` values. `detail` says what was compared."""
    interval = seed_interval(values, level)
    measured = interval.format(unit)
    said = f"{detail} " if detail else ""
    if interval.n < min_seeds:
        why = f"judged on at least {min_seeds} seeds; this scale has {interval.n}"
        return Measurement(measured, NOT_MEASURABLE, seeds=interval.n, detail=f"Replicates: {why}. {said}".strip())
    verdict = decide(interval, region)
    projected = seeds_to_decide(interval, region) if verdict == INCONCLUSIVE else None
    return Measurement(
        measured,
        verdict,
        seeds=interval.n,
        detail=f"{said}{_verdict_sentence(f'{level:.0%} interval', verdict, interval, region)}"
        + _projection_words(projected, verdict),
        rule=seed_rule(interval.n, level=level, regions=[region]),
        seeds_to_decide=projected,
        parts=(("", interval, region),),
    )


def _projection_words(projected: int | None, verdict: str) -> str:
    if verdict != INCONCLUSIVE:
        return ""
    if projected is None:
        return " Projection: no number of seeds within reach would decide it at this spread."
    return f" Projection: about {projected} seeds would decide it at the spread observed."


__all__ = [
    "CODE_REFERENCE_LEVELS",
    "LM_REFERENCE_LEVELS",
    "LEVEL",
    "MIN_SEEDS",
    "Interval",
    "PooledNoise",
    "Region",
    "additive_noise",
    "contrast_interval",
    "judge_contrasts",
    "both",
    "classifier_gate",
    "combine",
    "combine_any",
    "combine_at_least",
    "combine_measurements",
    "decide",
    "MAX_PROJECTED_SEEDS",
    "POWER",
    "seeds_for_power",
    "bootstrap_interval",
    "interpolated_crossing",
    "judge_bootstrap",
    "judge_parts",
    "judge_seeds",
    "lm_gate",
    "seed_interval",
    "seed_rule",
    "seeds_to_decide",
]


# ----------------------------------------------------------------- other units than seeds
#: Resamples of a bootstrap interval; its generator is seeded, so a verdict is the same on every run.
RESAMPLES = 4000


def bootstrap_interval(
    values: Iterable[float],
    statistic: Callable = None,
    *,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
    seed: int = 0,
) -> Interval:
    """`statistic` (the mean unless given; a function of a 1-D array) of `values` and its percentile
    bootstrap interval over them, for claims whose independent unit is an example, a head or a task
    rather than a seed. Resampling uses a generator seeded with `seed`, so the interval is exact to
    repeat. Each value must be one independent unit (average within a unit first)."""
    import numpy as np

    xs = np.asarray([float(v) for v in values], dtype=float)
    if xs.size == 0 or not np.isfinite(xs).all():
        raise ValueError(f"bootstrap_interval needs finite values, got {xs.tolist()}")
    stat = statistic or np.mean
    estimate = float(stat(xs))
    if xs.size < 2:
        return Interval(estimate, -math.inf, math.inf, int(xs.size), level)
    rng = np.random.default_rng(seed)
    draws = np.array([stat(xs[rng.integers(0, xs.size, xs.size)]) for _ in range(resamples)], dtype=float)
    low, high = np.quantile(draws, [0.5 - level / 2, 0.5 + level / 2])
    return Interval(estimate, float(low), float(high), int(xs.size), level)


def judge_bootstrap(
    values: Iterable[float],
    region: Region,
    *,
    what: str,
    statistic: Callable = None,
    statistic_name: str = "mean",
    min_n: int = 5,
    level: float = LEVEL,
    unit: str = "",
    detail: str = "",
) -> Measurement:
    """Like `judge_seeds`, with a percentile bootstrap over independent units named by `what` ("heads",
    "tasks", "examples") instead of a t-interval over seeds; "not measurable" below `min_n` units."""
    xs = [float(v) for v in values]
    said = f"{detail} " if detail else ""
    if len(xs) < min_n:
        why = f"judged on at least {min_n} {what}; this scale has {len(xs)}"
        shown = f"{statistic_name} over {len(xs)} {what}"
        return Measurement(shown, NOT_MEASURABLE, detail=f"Replicates: {why}. {said}".strip())
    interval = bootstrap_interval(xs, statistic, level=level)
    verdict = decide(interval, region)
    rule = "; ".join(
        [f"{level:.0%} percentile bootstrap over {interval.n} {what} ({RESAMPLES} resamples, {statistic_name})"]
        + [region.rule()] * bool(region.rule())
    )
    return Measurement(
        interval.format(unit),
        verdict,
        detail=f"{said}{_verdict_sentence(rule, verdict, interval, region)}",
        rule=rule,
    )


def interpolated_crossing(x: Iterable[float], y: Iterable[float], level: float, *, rising: bool = True) -> float:
    """Where the curve y(x) first reaches `level` (from below when `rising`, from above otherwise),
    by linear interpolation between the grid points around the crossing: a threshold read off a
    coarse grid without the grid's step as its resolution. The first x if y starts there; NaN if it
    never gets there. `x` must increase."""
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    if len(xs) != len(ys) or not xs:
        raise ValueError("interpolated_crossing needs two sequences of the same, non-zero length")
    if any(b <= a for a, b in zip(xs, xs[1:])):
        raise ValueError(f"interpolated_crossing needs increasing x, got {xs}")
    sign = 1.0 if rising else -1.0
    reached = [sign * (yv - level) >= 0 for yv in ys]
    if reached[0]:
        return xs[0]
    for i in range(1, len(xs)):
        if reached[i]:
            y0, y1 = ys[i - 1], ys[i]
            return xs[i - 1] + (xs[i] - xs[i - 1]) * (level - y0) / (y1 - y0)
    return math.nan


def combine(verdicts: Iterable[str]) -> str:
    """The verdict of a claim made of several comparisons: reproduced only if each one is; not reproduced
    if any one is (when all are measurable); otherwise inconclusive."""
    verdicts = list(verdicts)
    for verdict in (NOT_MEASURABLE, NOT_REPRODUCED, INCONCLUSIVE):
        if verdict in verdicts:
            return verdict
    return REPRODUCED


def combine_any(verdicts: Iterable[str]) -> str:
    """The verdict of a claim that one of several comparisons holds ("some setting is better"):
    reproduced if one is; not reproduced if every one is not; otherwise inconclusive."""
    verdicts = list(verdicts)
    if NOT_MEASURABLE in verdicts:
        return NOT_MEASURABLE
    if REPRODUCED in verdicts:
        return REPRODUCED
    return NOT_REPRODUCED if set(verdicts) == {NOT_REPRODUCED} else INCONCLUSIVE


def combine_at_least(k: int) -> Callable[[Iterable[str]], str]:
    """The rule of a claim that at least `k` of its comparisons hold ("on most tasks"): reproduced when
    `k` are; not reproduced when so many are not that `k` no longer can be; otherwise inconclusive."""

    def rule(verdicts: Iterable[str]) -> str:
        verdicts = list(verdicts)
        if NOT_MEASURABLE in verdicts:
            return NOT_MEASURABLE
        if verdicts.count(REPRODUCED) >= k:
            return REPRODUCED
        if len(verdicts) - verdicts.count(NOT_REPRODUCED) < k:
            return NOT_REPRODUCED
        return INCONCLUSIVE

    return rule


def combine_measurements(
    parts: dict[str, Measurement], rule: Callable[[Iterable[str]], str] = combine, what: str = "every part"
) -> Measurement:
    """One Measurement of several parts each judged by its own intervals (say, a collapse and a survival
    that must both hold, or "at least k of n tasks"): the verdict is `rule` of theirs (`what` says the rule
    in words); their measured texts, details and decision rules are listed by name, their intervals kept
    (for power projections) and their projections combined (the most any inconclusive part needs)."""
    verdict = rule([m.verdict for m in parts.values()])
    seeds = [m.seeds for m in parts.values() if m.seeds is not None]
    projected = [m.seeds_to_decide for m in parts.values() if m.verdict == INCONCLUSIVE]
    rules = list(dict.fromkeys(m.rule for m in parts.values() if m.rule))
    return Measurement(
        "; ".join(f"{name}: {m.measured}" for name, m in parts.items()),
        verdict,
        seeds=min(seeds) if seeds else None,
        detail=f"Reproduced when {what} holds. "
        + " ".join(f"[{name}: {m.verdict}] {m.detail}" for name, m in parts.items()),
        rule=f"{what}, each by {' / '.join(rules)}" if rules and verdict != NOT_MEASURABLE else "",
        seeds_to_decide=max(projected) if verdict == INCONCLUSIVE and projected and None not in projected else None,
        parts=tuple(
            (f"{name}: {part}" if part else name, interval, region)
            for name, m in parts.items()
            for part, interval, region in m.parts
        ),
    )


def judge_parts(
    parts: dict[str, tuple[Iterable[float], Region]],
    *,
    min_n: int = MIN_SEEDS,
    level: float = LEVEL,
    what: str = "seeds",
    detail: str = "",
    rule: Callable[[Iterable[str]], str] = combine,
) -> Measurement:
    """A claim made of several comparisons, each {name: (values, region)} judged like `judge_seeds` (the
    values are paired replicates: seeds, or the rounds of an interleaved timing), combined by `rule`
    (`combine`: every one must hold)."""
    intervals = {name: seed_interval(values, level) for name, (values, _) in parts.items()}
    n = min(interval.n for interval in intervals.values())
    said = f"{detail} " if detail else ""
    if n < min_n:
        why = f"judged on at least {min_n} {what}; this scale has {n}"
        return Measurement(_listed(intervals), NOT_MEASURABLE, seeds=n, detail=f"Replicates: {why}. {said}".strip())
    regions = {name: region for name, (_, region) in parts.items()}
    return _judge_intervals(
        intervals,
        regions,
        rule,
        n,
        f"{said}{level:.0%} intervals over {n} {what}",
        rule_text=seed_rule(n, what, level, regions.values()),
    )


def _listed(intervals: dict[str, Interval], unit: str = "") -> str:
    return "; ".join(f"{name} {interval.format(unit)}" for name, interval in intervals.items())


def _judge_intervals(
    intervals: dict[str, Interval],
    regions: dict[str, Region],
    rule: Callable[[Iterable[str]], str],
    n: int,
    how: str,
    unit: str = "",
    rule_text: str = "",
) -> Measurement:
    """Each named interval decided against its region, the verdicts combined by `rule`; `how` says what
    the intervals are, for the detail, and `rule_text` the decision rule. An inconclusive claim is
    projected to decide when its slowest inconclusive part does."""
    verdicts = {name: decide(intervals[name], regions[name]) for name in intervals}
    where = ", ".join(f"{name} {regions[name].describe()} ({verdicts[name]})" for name in intervals)
    verdict = rule(verdicts.values())
    projected = None
    if verdict == INCONCLUSIVE:
        each = [seeds_to_decide(intervals[name], regions[name]) for name, v in verdicts.items() if v == INCONCLUSIVE]
        projected = None if not each or None in each else max(each)
    return Measurement(
        _listed(intervals, unit),
        verdict,
        seeds=n,
        detail=f"{how} against: {where}.".strip() + _projection_words(projected, verdict),
        rule=rule_text,
        seeds_to_decide=projected,
        parts=tuple((name, intervals[name], regions[name]) for name in intervals),
    )


# ------------------------------------------------------------------- pooled noise of paired runs
@dataclass(frozen=True)
class PooledNoise:
    """The spread σ of one run's result under the additive model x[v, s] = μ_v + τ_s + e (e independent
    across runs, one σ), estimated from a complete table of variants × seeds with `df` degrees of
    freedom; `source` says from which runs, in words."""

    sd: float
    df: int
    source: str


def additive_noise(table, source: str) -> PooledNoise | None:
    """σ from `table` (rows: seeds, columns: variants; seeds lacking a variant are dropped): the residual
    mean square of the additive two-way fit, with (variants − 1)(seeds − 1) degrees of freedom. The seed
    effect τ_s (shared data order, shared initial draw) cancels in paired comparisons, so it is not part of
    σ. None when the table has fewer than two complete seeds or two variants."""
    complete = table.dropna()
    n_seeds, n_variants = complete.shape
    if n_seeds < 2 or n_variants < 2:
        return None
    x = complete.to_numpy(float)
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    df = (n_seeds - 1) * (n_variants - 1)
    return PooledNoise(math.sqrt(float((residual**2).sum()) / df), df, source)


def contrast_interval(values: Iterable[float], norm2: float, noise: PooledNoise, level: float = LEVEL) -> Interval:
    """The mean over seeds of a contrast Σ c_v x[v, s] (one value per seed its runs share) and its
    t-interval under `noise`: ± t(df) · σ · √(Σ c² / n), whatever the spread of the values themselves."""
    from scipy.stats import t

    xs = [float(v) for v in values]
    if not xs or not all(math.isfinite(x) for x in xs):
        raise ValueError(f"contrast_interval needs finite values, got {xs}")
    n, mean = len(xs), sum(xs) / len(xs)
    half = float(t.ppf(0.5 + level / 2, noise.df)) * noise.sd * math.sqrt(norm2 / n)
    return Interval(mean, mean - half, mean + half, n, level, noise.sd * math.sqrt(norm2))


def judge_contrasts(
    parts: dict[str, tuple[Iterable[float], float, Region]],
    noise: PooledNoise | None,
    *,
    level: float = LEVEL,
    unit: str = "",
    detail: str = "",
    rule: Callable[[Iterable[str]], str] = combine,
) -> Measurement:
    """A claim made of contrasts {name: (per-seed values, Σ c², region)}, each judged by its
    `contrast_interval` against its region and combined by `rule` (`combine`: every part must hold;
    `combine_any`: one part suffices); "not measurable" without a noise estimate. A single seed is
    judged: the pooled σ, not the contrast's own spread, sets the width."""
    said = f"{detail} " if detail else ""
    values = {name: [float(v) for v in part[0]] for name, part in parts.items()}
    missing = [name for name, xs in values.items() if not xs]
    if missing:
        return Measurement(f"no shared seed for {', '.join(missing)}", NOT_MEASURABLE, detail=said.strip())
    n = min(len(xs) for xs in values.values())
    if noise is None:
        means = "; ".join(f"{name} {sum(xs) / len(xs):.3g}{unit} (n={len(xs)})" for name, xs in values.items())
        why = "no estimate of the seed-to-seed spread (the reference runs need at least two seeds)"
        return Measurement(means, NOT_MEASURABLE, seeds=n, detail=f"Replicates: {why}. {said}".strip())
    intervals = {name: contrast_interval(values[name], norm2, noise, level) for name, (_, norm2, _) in parts.items()}
    regions = {name: region for name, (_, _, region) in parts.items()}
    how = (
        f"{said}{level:.0%} intervals with the pooled run-to-run spread σ = {noise.sd:.3g}{unit} "
        f"({noise.df} df, {noise.source})"
    )
    margins = sorted({region.rule() for region in regions.values()} - {""})
    rule_text = "; ".join([f"{level:.0%} interval over {n} seeds with a pooled σ ({noise.df} df)", *margins])
    return _judge_intervals(intervals, regions, rule, n, how, unit, rule_text)


# --------------------------------------------------------------------------- health gates
#: Where the code corpus' reference levels are, as a claim input (relative to RESULTS/<paper>/).
CODE_REFERENCE_LEVELS = "../data/code_corpus/tokens/reference_levels.json"
#: The levels of the held-out split a paper's language models are evaluated on (rule lm_reference_levels:
#: the code corpus offline, the paper's own hub text at paper scale), relative to RESULTS/<paper>/.
LM_REFERENCE_LEVELS = "data/lm_reference_levels.json"


def lm_gate(
    final_losses,
    margin: float = 1.0,
    levels: str = CODE_REFERENCE_LEVELS,
    runs: str = "every language model",
    below: str = "unigram",
) -> Gate:
    """Every language model a claim rests on ends at least `margin` nats below the `below` level
    ("unigram" or "bigram") of its held-out text. `final_losses(data)` gives their final eval losses
    (nats/token); the claim lists `levels` (the JSON of `python -m repro data reference-levels`) among
    its inputs. `runs` says in words which models these are (the gate's description)."""
    if below not in ("unigram", "bigram"):
        raise ValueError(f"below={below!r}; choose 'unigram' or 'bigram'")

    def check(data) -> tuple[bool, str]:
        level = float(json.loads(data.path(levels).read_text())[f"{below}_nats"])
        losses = [float(x) for x in final_losses(data)]
        if not losses:
            return False, "no run to check"
        worst = max(losses)
        return worst <= level - margin, f"worst final eval loss {worst:.3f} nats against {below} {level:.3f}"

    distance = f"at least {margin:g} nat below" if margin else "below"
    return Gate(f"{runs}: each {distance} the {below} level of its split", check)


#: A classifier has learned when it is at least this share of the way from chance to the ceiling ...
LEARNED_SHARE = 0.25
#: ... and leaves room for an effect when it is at least this share of that span below the ceiling.
CEILING_ROOM = 0.02


def classifier_gate(
    scores, chance: float, ceiling: float = 100.0, learned: float = LEARNED_SHARE, room: float = CEILING_ROOM
) -> Gate:
    """Every classifier a claim rests on learned (at least `learned` of the way from `chance` to `ceiling`)
    and leaves room for an effect in both directions (at most `ceiling` − `room`·(ceiling − chance)).
    `scores(data)` gives their scores, in the units of `chance` and `ceiling`."""

    def check(data) -> tuple[bool, str]:
        values = [float(x) for x in scores(data)]
        span = ceiling - chance
        low, high = min(values), max(values)
        ok = low >= chance + learned * span and high <= ceiling - room * span
        return ok, f"scores {low:.4g} to {high:.4g} (chance {chance:g}, ceiling {ceiling:g})"

    description = (
        f"every classifier at least {learned:.0%} of the way from chance to ceiling, "
        f"and {room:.0%} of that span below the ceiling"
    )
    return Gate(description, check)


def both(first: Gate, second: Gate) -> Gate:
    """A gate passed when both are (say, the runs learned and the run could move what the claim reads)."""

    def check(data) -> tuple[bool, str]:
        (ok_a, said_a), (ok_b, said_b) = first.check(data), second.check(data)
        return ok_a and ok_b, f"{said_a}; {said_b}"

    return Gate(f"{first.description}; and {second.description}", check)
