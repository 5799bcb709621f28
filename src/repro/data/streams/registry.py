"""The sequence streams by name: `make_stream(name, seed, **params)`."""

from __future__ import annotations

from repro.data.errors import DataError
from repro.data.streams.common import SequenceStream
from repro.data.streams.induction import PreviousTokens
from repro.data.streams.ngram import ContinuousNGram, DiscreteNGram
from repro.data.streams.nonlinear import NonlinearLags
from repro.data.streams.params import CHECKS

STREAMS: dict[str, type[SequenceStream]] = {
    "discrete_ngram": DiscreteNGram,
    "continuous_ngram": ContinuousNGram,
    "previous_tokens": PreviousTokens,
    "nonlinear_lags": NonlinearLags,
}
assert set(STREAMS) == set(CHECKS), "every stream has its parameter check in repro.data.streams.params"


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
