"""The claim registry: each paper's claims as small functions over tidy CSVs, and their verdicts.

A claim is registered with everything fixed before any result is seen: the paper's value or finding,
the tolerance, the inputs it reads (paths relative to ``RESULTS/<paper>/``) and the scales at which
it is judged. The function reads its inputs and returns a :class:`Measurement`::

    from repro.pipeline.claims import Measurement, claim, format_mean_spread, verdict, within

    @claim(
        paper="simplified_blocks",
        item="fig26",
        claim_id="sas_p_matches_pre_ln",
        statement="SAS-P reaches the final loss of Pre-LN.",
        paper_value="equal loss per step (Fig. 26)",
        tolerance="|loss(SAS-P) - loss(Pre-LN)| <= 0.05 nats, mean over seeds",
        inputs=["analysis/final_loss.csv"],
    )
    def sas_p_matches_pre_ln(data):
        df = data["analysis/final_loss.csv"]
        gap = ...  # one value per seed
        return Measurement(format_mean_spread(gap), verdict(within(gap.mean(), 0, 0.05)), seeds=len(gap))

A verdict is "reproduced", "not reproduced", "inconclusive" (an interval over seeds straddles the
claim's boundary: see repro.pipeline.decisions) or "not measurable at this scale". A claim also
declares its class (``kind``: identity, simulation, empirical or timing), a health :class:`Gate` its runs must pass
(a model that did not learn, or sits at its ceiling, proves nothing) and a :class:`Null`, inputs on
which it must not be reproduced. The measurement is always computed and shown, but the verdict is
"not measurable at this scale" at a scale the claim is not judged at (say smoke), when its gate
fails, and when its null does not come out "not reproduced" (a null passes only by failing: a check
that also passes, or cannot decide, on inputs without the effect says nothing about the effect). Nothing is ever turned into a verdict silently: a
missing input raises :class:`MissingInputError` naming the file, and a claim function that raises or
returns something malformed raises :class:`ClaimError` naming the claim.

Claims that differ only in the variant, task, threshold or column they measure are written once, as
rows of a table (:class:`ClaimRow`, :func:`register_table`), each row carrying its texts and class.

Claims of paper ``P`` live in ``repro.papers.P.claims``; importing the module registers them.
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pandas as pd

from repro.pipeline.tables import SCALES, check_scale
from repro.pipeline.tidy import write_csv

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_MEASURABLE = "not measurable at this scale"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_MEASURABLE)

#: What a claim checks: an exact identity (verified to float precision), a simulation (an analytic result
#: checked on constructed inputs: no trained model, nothing a seed of a model changes), an empirical
#: effect of trained models, a timing, or a new finding (an effect of trained models that no paper states:
#: a question this project asks, judged like an empirical claim and listed apart from the reproductions).
#: Claims not yet sorted read "unclassified".
CLASSES = ("identity", "simulation", "empirical", "timing", "new finding")
NEW_FINDING = "new finding"
UNCLASSIFIED = "unclassified"

#: Columns of ``RESULTS/<paper>/claims.csv`` and of the scorecard, in this order.
COLUMNS = (
    "paper",
    "item",
    "claim",
    "class",
    "paper_value",
    "measured",
    "tolerance",
    "rule",
    "verdict",
    "gate",
    "null",
    "scale",
    "phase",
    "seeds",
    "seeds_to_decide",
    "detail",
)
#: The phase of training an empirical claim is judged in, and what each means. A paper's claim about where
#: training ends is judged past the bigram level (a gate checks it) or reads "not measurable"; a claim about
#: trainability (which model learns faster) can be judged in early training, and says so.
PHASES = {
    "early training": "the language models end at least 1 nat below the unigram level of the text they "
    "are evaluated on, but above its bigram level",
    "past the bigram level": "the language models end below the bigram level of the text they are evaluated on",
    "end of schedule": "the models (classifiers, translation models, models of synthetic tasks) are read at "
    "the end of their schedule or at their held-out plateau",
}
#: Classes whose verdicts must come from an interval (a Measurement with a decision rule).
INTERVAL_CLASSES = ("empirical", "timing", NEW_FINDING)
#: Appended to every timing claim's tolerance when it is registered: its interval is over the interleaved
#: rounds of one timing job. Fresh builds and processes of one machine vary little more than those rounds,
#: but machines of a CPU kind (or hours of one) move the speed ratios by a few percent, which one job of a
#: minute cannot sample (docs/decisions/0057-speed-claims-unit-of-replication.md).
ONE_MACHINE = (
    "; the rounds are one timing job's on one machine, so a verdict is that machine's (recorded runs of one "
    "CPU kind differ by a few percent: docs/runs.md)"
)
#: How a verdict is reached where the claim's class fixes it (the others name their interval).
CLASS_RULES = {
    "identity": "identity: exact algebra, checked to float64 rounding",
    "simulation": "analytic result checked on constructed inputs",
}
#: Scales at which claims are judged unless a claim says otherwise: smoke runs are too small to mean anything.
DEFAULT_JUDGED_AT = ("laptop", "paper")

_ID = re.compile(r"^[a-z][a-z0-9_]*$")


class MissingInputError(FileNotFoundError):
    """An input file a claim declared does not exist."""


class ClaimError(RuntimeError):
    """A claim function raised, or returned something that is not a valid Measurement."""


class ClaimsFailed(RuntimeError):
    """One or more claims of a paper could not be judged; the message lists each."""

    def __init__(self, errors: list[Exception]):
        self.errors = errors
        super().__init__("\n".join(f"- {err}" for err in errors))


@dataclass(frozen=True)
class Measurement:
    """What a claim function returns.

    ``measured`` is a number or a short text (for example from :func:`format_mean_spread`), never a
    paper number. ``verdict`` is one of :data:`VERDICTS`, judged against the registered tolerance.
    ``seeds`` is how many seeds the measurement rests on (``None`` if seeds do not apply), and
    ``detail`` says in a sentence what was compared and, when it did not reproduce, why it may differ.
    ``rule`` says how the verdict was reached ("95% t-interval over 3 seeds", "equivalence margin
    ±0.05 nats", ...): the functions of :mod:`repro.pipeline.decisions` fill it, and an empirical or
    timing claim may not reach a verdict without it. ``seeds_to_decide`` is, for an inconclusive
    verdict, the projected number of seeds at which the interval would no longer straddle (``None``:
    not projected, or no number would do).
    """

    measured: float | int | str
    verdict: str
    seeds: int | None = None
    detail: str = ""
    rule: str = ""
    seeds_to_decide: int | None = None
    #: The intervals behind the verdict, (name, Interval, Region) per comparison, as the functions of
    #: repro.pipeline.decisions record them (for power projections; not written to claims.csv).
    parts: tuple = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Gate:
    """What the runs a claim rests on must reach before the claim is judged (a model that did not learn,
    or sits at its ceiling, proves nothing). Declared with the claim, before any result is seen.

    ``check(data)`` reads the claim's inputs and returns (passed, the measured level in words)."""

    description: str
    check: Callable[[ClaimInputs], tuple[bool, str]] = field(compare=False, repr=False)


@dataclass(frozen=True)
class Null:
    """A version of a claim's inputs on which the claim must not be reproduced: the effect removed,
    a constant predictor, untrained runs. ``make(data)`` returns replacement frames for some of the
    claim's CSV inputs; the others stay as they are."""

    description: str
    make: Callable[[ClaimInputs], Mapping[str, pd.DataFrame]] = field(compare=False, repr=False)


@dataclass(frozen=True)
class Claim:
    """A registered claim; see :func:`claim` for the meaning of each field."""

    paper: str
    item: str
    claim_id: str
    statement: str
    paper_value: str
    tolerance: str
    inputs: tuple[str, ...]
    judged_at: tuple[str, ...]
    func: Callable[[ClaimInputs], Measurement] = field(compare=False, repr=False)
    kind: str = UNCLASSIFIED
    gate: Gate | None = None
    null: Null | None = None
    phase: str = ""

    @property
    def label(self) -> str:
        return f"{self.paper}/{self.item}/{self.claim_id}"


_REGISTRY: dict[tuple[str, str], Claim] = {}


def claim(
    *,
    paper: str,
    item: str,
    claim_id: str,
    statement: str,
    paper_value: str,
    tolerance: str,
    inputs: Iterable[str],
    judged_at: Iterable[str] = DEFAULT_JUDGED_AT,
    kind: str = UNCLASSIFIED,
    gate: Gate | None = None,
    null: Null | None = None,
    phase: str = "",
) -> Callable[[Callable[[ClaimInputs], Measurement]], Callable[[ClaimInputs], Measurement]]:
    """Decorator registering a claim function ``func(data) -> Measurement``.

    paper, claim_id: lower-case identifiers; ``(paper, claim_id)`` is unique.
    item:        the figure or table the claim belongs to ("fig26", "table1").
    statement:   the claim in one line, in words.
    paper_value: the paper's number or finding, as text.
    tolerance:   the acceptance rule, fixed in advance, as text (the function applies it); a timing
                 claim's ends with :data:`ONE_MACHINE`, appended here.
    inputs:      files the function reads, relative to ``RESULTS/<paper>/`` (``../data/...`` for the data the
                 papers share, such as the corpus' reference levels); the Snakefile makes them
                 inputs of the judging rule, and ``data[name]`` refuses any name not listed here.
    judged_at:   scales at which a verdict is given; elsewhere it is "not measurable at this scale".
    kind:        one of :data:`CLASSES`: "identity", "simulation", "empirical", "timing" or "new finding".
    gate:        a :class:`Gate` the claim's runs must pass to be judged (else "not measurable").
    null:        a :class:`Null` on which the claim must read "not reproduced"; any other outcome on
                 the null (reproduced, inconclusive, not measurable) makes the verdict "not measurable".
    phase:       for an empirical claim, the phase of training it is judged in (a key of :data:`PHASES`).
    """
    inputs = tuple(inputs)
    judged_at = tuple(judged_at)
    for name, value in (("paper", paper), ("claim_id", claim_id)):
        if not _ID.match(value):
            raise ValueError(f"claim {name} {value!r} must be a lower-case identifier")
    for name, value in (
        ("item", item),
        ("statement", statement),
        ("paper_value", paper_value),
        ("tolerance", tolerance),
    ):
        if not value.strip() or "\n" in value:
            raise ValueError(f"claim {paper}/{claim_id}: {name} must be one non-empty line")
    if not inputs:
        raise ValueError(f"claim {paper}/{claim_id}: declare the files it reads in inputs=")
    for name in inputs:
        path = PurePosixPath(name)
        shared = path.parts[:2] == ("..", "data") and ".." not in path.parts[2:]  # RESULTS/data/, the shared data
        if path.is_absolute() or (".." in path.parts and not shared):
            raise ValueError(
                f"claim {paper}/{claim_id}: input {name!r} must be relative to RESULTS/{paper}/ "
                "(or, for the shared data, start with ../data/)"
            )
    for scale in judged_at:
        check_scale(scale)
    if kind not in (*CLASSES, UNCLASSIFIED):
        raise ValueError(f"claim {paper}/{claim_id}: kind {kind!r}; choose one of {', '.join(CLASSES)}")
    if phase and phase not in PHASES:
        raise ValueError(f"claim {paper}/{claim_id}: phase {phase!r}; choose one of {', '.join(PHASES)}")

    if kind == "timing":
        tolerance += ONE_MACHINE

    def register(func: Callable[[ClaimInputs], Measurement]) -> Callable[[ClaimInputs], Measurement]:
        new = Claim(
            paper, item, claim_id, statement, paper_value, tolerance, inputs, judged_at, func, kind, gate, null, phase
        )
        old = _REGISTRY.get((paper, claim_id))
        # Re-importing the same module (importlib.reload, pytest) re-registers the same function.
        if old is not None and _origin(old.func) != _origin(func):
            raise ValueError(f"claim {new.label} is registered twice ({_origin(old.func)} and {_origin(func)})")
        _REGISTRY[(paper, claim_id)] = new
        return func

    return register


@dataclass(frozen=True)
class ClaimRow:
    """One claim of a table (claims that differ only in the variant, task, threshold or column they
    measure): the texts it registers. A table's row type extends it with what its measure reads."""

    item: str
    claim_id: str
    statement: str
    paper_value: str
    tolerance: str


def register_table(
    paper: str,
    rows: Iterable[ClaimRow],
    measure: Callable[[ClaimInputs, ClaimRow], Measurement],
    *,
    inputs: Iterable[str] | Callable[[ClaimRow], Iterable[str]],
    kind: str | Callable[[ClaimRow], str],
    gate: Gate | Callable[[ClaimRow], Gate] | None = None,
    null: Null | Callable[[ClaimRow], Null] | None = None,
    phase: str | Callable[[ClaimRow], str] = "",
) -> dict[str, Callable[[ClaimInputs], Measurement]]:
    """Register a claim of `paper` per row, measured by ``measure(data, row)``; `inputs`, `kind`, `gate`,
    `null` and `phase` are the same for every row, or functions of the row. Each claim's function becomes
    an attribute of the module of `measure`, named after its claim, as a decorated function would be; they
    are also returned by claim id."""
    module = sys.modules[measure.__module__]
    registered = {}
    for row in rows:
        clash = getattr(module, row.claim_id, None)
        # Re-registering the same table (a module reloaded) finds its own functions there.
        if clash is not None and getattr(clash, "__qualname__", None) != row.claim_id:
            raise ValueError(f"claim {paper}/{row.claim_id}: {measure.__module__} already has a {row.claim_id!r}")

        def measure_row(data: ClaimInputs, row: ClaimRow = row) -> Measurement:
            return measure(data, row)

        measure_row.__name__ = measure_row.__qualname__ = row.claim_id
        measure_row.__module__ = measure.__module__
        claim(
            paper=paper,
            item=row.item,
            claim_id=row.claim_id,
            statement=row.statement,
            paper_value=row.paper_value,
            tolerance=row.tolerance,
            inputs=inputs(row) if callable(inputs) else inputs,
            kind=kind(row) if callable(kind) else kind,
            gate=gate(row) if callable(gate) else gate,
            null=null(row) if callable(null) else null,
            phase=phase(row) if callable(phase) else phase,
        )(measure_row)
        setattr(module, row.claim_id, measure_row)
        registered[row.claim_id] = measure_row
    return registered


def _origin(func: Callable) -> str:
    return f"{func.__module__}.{func.__qualname__}"


def unregister(paper: str, claim_id: str | None = None) -> None:
    """Forget one claim, or all claims of ``paper`` (for tests)."""
    for key in [key for key in _REGISTRY if key[0] == paper and claim_id in (None, key[1])]:
        del _REGISTRY[key]


# --------------------------------------------------------------------------- discovery


def natural_key(text: str) -> tuple:
    """Sort key putting "fig2" before "fig10"."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def papers() -> list[str]:
    """The papers of repro.papers, plus any whose claims were registered directly (tests do this)."""
    from repro.papers import PAPERS

    return sorted(set(PAPERS) | {paper for paper, _ in _REGISTRY})


def load_claims(paper: str) -> list[Claim]:
    """Import the paper's claims module (registering its claims) and return them sorted by item and id.

    A paper outside repro.papers has only the claims registered directly (tests do this)."""
    from repro.papers import PAPERS, part

    if paper in PAPERS:
        importlib.import_module(part(paper, "claims"))
    elif not any(key[0] == paper for key in _REGISTRY):
        raise ModuleNotFoundError(f"no claims for paper {paper!r}: the papers are {', '.join(PAPERS)}")
    found = [c for (p, _), c in _REGISTRY.items() if p == paper]
    return sorted(found, key=lambda c: (natural_key(c.item), c.claim_id))


def claim_inputs(paper: str) -> list[str]:
    """Every file the claims of ``paper`` read, relative to ``RESULTS/<paper>/``, sorted, unique.

    The Snakefile's judging rule lists these as its inputs, so the DAG knows what each scorecard needs.
    """
    return sorted({name for c in load_claims(paper) for name in c.inputs})


# --------------------------------------------------------------------------- inputs


class ClaimInputs(Mapping[str, pd.DataFrame]):
    """What a claim function receives: its declared inputs, read on first use.

    ``data["x.csv"]`` is a DataFrame (CSV and TSV files); ``data.path("x.json")`` is the path of any
    declared input, for other formats. Names not declared in the registration are refused, so the
    Snakefile's list of inputs stays complete.
    """

    def __init__(self, claim: Claim, paper_dir: Path, frames: Mapping[str, pd.DataFrame] | None = None):
        self._claim = claim
        self._paper_dir = paper_dir
        self._frames: dict[str, pd.DataFrame] = dict(frames or {})

    def replaced(self, frames: Mapping[str, pd.DataFrame]) -> ClaimInputs:
        """These inputs with some CSV frames replaced (a claim's null); the rest are read as usual."""
        unknown = sorted(set(frames) - set(self._claim.inputs))
        if unknown:
            raise KeyError(f"claim {self._claim.label}: its null replaces {unknown}, which it does not read")
        return ClaimInputs(self._claim, self._paper_dir, {**self._frames, **frames})

    def path(self, name: str) -> Path:
        if name not in self._claim.inputs:
            raise KeyError(f"claim {self._claim.label} reads {name!r}, which is not among its declared inputs")
        path = self._paper_dir / name
        if not path.is_file():
            raise MissingInputError(f"claim {self._claim.label} needs {path.as_posix()}, which does not exist")
        return path

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            path = self.path(name)
            if path.suffix not in (".csv", ".tsv"):
                raise KeyError(f"{name} is not a CSV/TSV file; read it via data.path({name!r})")
            self._frames[name] = pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",")
        return self._frames[name].copy()

    def __contains__(self, name: object) -> bool:
        return name in self._claim.inputs

    def __iter__(self) -> Iterator[str]:
        return iter(self._claim.inputs)

    def __len__(self) -> int:
        return len(self._claim.inputs)


# --------------------------------------------------------------------------- judging


def format_measured(value: float | int | str) -> str:
    """How a measured value is written: text as is, integers exactly, floats to 4 significant digits."""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return f"{value:.4g}"


def _check_measurement(c: Claim, result: object) -> Measurement:
    if not isinstance(result, Measurement):
        raise ClaimError(f"claim {c.label} returned {type(result).__name__}, not a Measurement")
    if result.verdict not in VERDICTS:
        raise ClaimError(f"claim {c.label} returned verdict {result.verdict!r}; expected one of {VERDICTS}")
    if c.kind in INTERVAL_CLASSES and result.verdict != NOT_MEASURABLE and not result.rule:
        raise ClaimError(
            f"claim {c.label} is {c.kind} but reached '{result.verdict}' without an interval: judge it through "
            "repro.pipeline.decisions (judge_seeds, judge_parts, judge_contrasts, judge_bootstrap), which name their rule"
        )
    measured = result.measured
    if isinstance(measured, bool) or not isinstance(measured, (int, float, str)):
        raise ClaimError(f"claim {c.label} measured {measured!r}; return a number or a short text")
    if isinstance(measured, float) and not math.isfinite(measured):
        raise ClaimError(f"claim {c.label} measured {measured}; return a text saying why there is no number")
    for name in ("seeds", "seeds_to_decide"):
        value = getattr(result, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ClaimError(f"claim {c.label} gave {name}={value!r}; expected an int or None")
    return result


def judge_claim(c: Claim, results_dir: str | Path, scale: str) -> dict[str, str]:
    """Run one claim on ``RESULTS/<paper>/`` and return its row (keys :data:`COLUMNS`, all text).

    Raises :class:`MissingInputError` if a declared input is missing (before the function runs) and
    :class:`ClaimError` if the function raises anything else or returns an invalid Measurement.
    """
    check_scale(scale)
    paper_dir = Path(results_dir) / c.paper
    data = ClaimInputs(c, paper_dir)
    missing = [(paper_dir / name).as_posix() for name in c.inputs if not (paper_dir / name).is_file()]
    if missing:
        raise MissingInputError(f"claim {c.label} needs {', '.join(missing)}, which does not exist")
    m = _run(c, c.func, data, "")
    gate_passed, gate_text = True, "none declared"
    if c.gate is not None:
        gate_passed, level = _run(c, c.gate.check, data, "gate ")
        gate_text = f"{'passed' if gate_passed else 'failed'}: {c.gate.description}; measured {level}"
    null_verdict, null_text = None, "none declared"
    if c.null is not None:
        null_m = _run(c, c.func, data.replaced(_run(c, c.null.make, data, "null ")), "on its null ")
        null_verdict = null_m.verdict
        null_text = f"{null_verdict} on {c.null.description}"

    verdict, detail = m.verdict, m.detail
    would = f"here it would read '{m.verdict}'"
    if scale not in c.judged_at:
        verdict, detail = NOT_MEASURABLE, f"Judged at {', '.join(c.judged_at)} scale only; {would}. {m.detail}"
    elif not gate_passed:
        verdict, detail = NOT_MEASURABLE, f"Health gate failed ({gate_text}); {would}. {m.detail}"
    elif null_verdict is not None and null_verdict != NOT_REPRODUCED and m.verdict != NOT_MEASURABLE:
        verdict = NOT_MEASURABLE
        detail = (
            f"Null not rejected: on its null ({c.null.description}) the check reads '{null_verdict}', "
            f"so its verdict here could not be told from the null's; {would}. {m.detail}"
        )
    return {
        "paper": c.paper,
        "item": c.item,
        "claim": f"{c.claim_id}: {c.statement}",
        "class": c.kind,
        "paper_value": c.paper_value,
        "measured": format_measured(m.measured),
        "tolerance": c.tolerance,
        "rule": m.rule or CLASS_RULES.get(c.kind, ""),
        "verdict": verdict,
        "gate": gate_text,
        "null": null_text,
        "scale": scale,
        "phase": c.phase,
        "seeds": "" if m.seeds is None else str(m.seeds),
        "seeds_to_decide": str(m.seeds_to_decide) if verdict == INCONCLUSIVE and m.seeds_to_decide else "",
        "detail": detail.strip(),
    }


def _run(c: Claim, func: Callable, data: ClaimInputs, what: str):
    """Call the claim's function (or its gate, or its null) on `data`, naming the claim in any error."""
    try:
        result = func(data)
    except (MissingInputError, ClaimError):
        raise
    except Exception as err:
        raise ClaimError(f"claim {c.label} {what}raised {type(err).__name__}: {err}") from err
    if func is c.func:
        return _check_measurement(c, result)
    if c.gate is not None and func is c.gate.check:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise ClaimError(f"claim {c.label}: its gate returned {result!r}, not (passed, level)")
        return bool(result[0]), str(result[1])
    return result


def judge_paper(paper: str, results_dir: str | Path, scale: str) -> pd.DataFrame:
    """Judge every claim of ``paper``; a frame with :data:`COLUMNS`, sorted by item then claim.

    Every claim is tried; if any cannot be judged, :class:`ClaimsFailed` lists all that failed.
    """
    rows, errors = [], []
    for c in load_claims(paper):
        try:
            rows.append(judge_claim(c, results_dir, scale))
        except (MissingInputError, ClaimError) as err:
            errors.append(err)
    if errors:
        raise ClaimsFailed(errors)
    return pd.DataFrame(rows, columns=list(COLUMNS), dtype="object")


def write_claims_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a claims frame with exactly :data:`COLUMNS`, ``\\n`` line ends."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_csv(df.loc[:, list(COLUMNS)], path, float_format=None)
    return path


# --------------------------------------------------------------------------- helpers for claim functions


def verdict(ok: bool) -> str:
    """ "reproduced" if ``ok`` else "not reproduced"."""
    return REPRODUCED if ok else NOT_REPRODUCED


def mean_spread(values: Iterable[float]) -> tuple[float, float, int]:
    """Mean, sample standard deviation (ddof=1; 0 for one value) and count of ``values``."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("mean_spread needs at least one value")
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return mean, sd, n


def format_number(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, without a trailing exponent for everyday magnitudes."""
    return f"{x:.{digits}g}"


def format_mean_spread(values: Iterable[float], digits: int = 3) -> str:
    """ "mean ± sd (n=k)" over seeds, e.g. "0.012 ± 0.004 (n=2)"; a single value reads "0.012 (n=1)".

    The spread is the sample standard deviation across seeds (not a standard error).
    """
    mean, sd, n = mean_spread(values)
    if n == 1:
        return f"{format_number(mean, digits)} (n=1)"
    return f"{format_number(mean, digits)} ± {format_number(sd, 2)} (n={n})"


def too_few(n: int, measured: str, minimum: int, what: str = "seeds") -> Measurement | None:
    """A "not measurable" Measurement when a comparison rests on fewer than ``minimum`` seeds, else None.

    Use as ``return too_few(len(gaps), measured, 2) or Measurement(...)``: the measured value is still
    shown, and the detail says how many seeds the claim needs and how many this scale has.
    """
    if n >= minimum:
        return None
    return Measurement(
        measured, NOT_MEASURABLE, seeds=n, detail=f"judged on at least {minimum} {what}; this scale has {n}"
    )


def within(a: float, b: float, tol: float) -> bool:
    """|a − b| ≤ tol."""
    return abs(a - b) <= tol


def at_least(a: float, b: float, margin: float = 0.0) -> bool:
    """a ≥ b + margin (a beats b by at least ``margin``)."""
    return a >= b + margin


__all__ = [
    "COLUMNS",
    "ONE_MACHINE",
    "Claim",
    "ClaimError",
    "ClaimInputs",
    "CLASSES",
    "NEW_FINDING",
    "CLASS_RULES",
    "ClaimsFailed",
    "DEFAULT_JUDGED_AT",
    "Gate",
    "INCONCLUSIVE",
    "Measurement",
    "MissingInputError",
    "NOT_MEASURABLE",
    "PHASES",
    "NOT_REPRODUCED",
    "Null",
    "REPRODUCED",
    "UNCLASSIFIED",
    "SCALES",
    "VERDICTS",
    "at_least",
    "claim",
    "claim_inputs",
    "format_mean_spread",
    "format_measured",
    "format_number",
    "judge_claim",
    "judge_paper",
    "load_claims",
    "mean_spread",
    "natural_key",
    "papers",
    "register_table",
    "too_few",
    "unregister",
    "verdict",
    "within",
]
