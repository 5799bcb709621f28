"""On-the-fly synthetic sequence streams for the parameter-allocation experiments.

Unlike `repro.data.synthetic` (finite datasets written to disk), these tasks draw a fresh batch for
every training step: inputs are white noise (i.i.d. over positions), so there is nothing to store.
Every stream is a pure function of its seed: the task instance (an n-gram table, lag rotations, a
teacher head) is drawn from ``(seed, "rule")``, and `sample(n, seq_len, generator)` draws a batch
from a `torch.Generator` the caller seeds (the trainer passes one per (seed, step)).

Families, one module each:
  ngram            `discrete_ngram` (token x_t, label = T[x_{t−n+1..t}]) and `continuous_ngram`
                   (vectors, y_t = Σ_m α_m Q_m x_{t−m}): the 4-gram task on white noise (Fig 2)
  induction        `previous_tokens`: labels x_{t−1}, …, x_{t−k}, the first step of an induction head
  nonlinear        `nonlinear_lags`: y_t = tanh(s·Σ_m Q_m x_{t−m})
  teacher_attention `TeacherAttention`: the output of one bounded-logit teacher head over L keys,
                   for the saturation experiments (not a sequence stream: queries attend to key sets)

`make_stream(name, seed, **params)` builds a sequence stream by name.
"""

from __future__ import annotations

from repro.data.errors import DataError
from repro.data.streams.common import SequenceStream
from repro.data.streams.induction import PreviousTokens
from repro.data.streams.ngram import ContinuousNGram, DiscreteNGram
from repro.data.streams.nonlinear import NonlinearLags
from repro.data.streams.teacher_attention import TeacherAttention

STREAMS: dict[str, type[SequenceStream]] = {
    "discrete_ngram": DiscreteNGram,
    "continuous_ngram": ContinuousNGram,
    "previous_tokens": PreviousTokens,
    "nonlinear_lags": NonlinearLags,
}


def make_stream(name: str, seed: int, **params) -> SequenceStream:
    """The stream `name` with task instance drawn from `seed`; unknown names or parameters are refused."""
    try:
        cls = STREAMS[name]
    except KeyError:
        raise DataError(f"unknown stream {name!r}; known streams: {', '.join(STREAMS)}") from None
    try:
        return cls(seed=seed, **params)
    except TypeError as err:
        raise DataError(f"stream {name!r}: {err}") from None


__all__ = [
    "STREAMS",
    "ContinuousNGram",
    "DiscreteNGram",
    "NonlinearLags",
    "PreviousTokens",
    "SequenceStream",
    "TeacherAttention",
    "make_stream",
]
