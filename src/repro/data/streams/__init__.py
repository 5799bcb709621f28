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

`make_stream(name, seed, **params)` builds a sequence stream by name (`registry`); `params` checks a
stream's parameters without building it. Names load their module on first use (repro.lazy), so
checking a config imports no torch.
"""

from __future__ import annotations

from repro.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "repro.data.streams.common": ("SequenceStream",),
        "repro.data.streams.induction": ("PreviousTokens",),
        "repro.data.streams.ngram": ("ContinuousNGram", "DiscreteNGram"),
        "repro.data.streams.nonlinear": ("NonlinearLags",),
        "repro.data.streams.registry": ("STREAMS", "make_stream"),
        "repro.data.streams.teacher_attention": ("TeacherAttention",),
    },
)
