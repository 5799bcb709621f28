"""What each sequence stream's parameters may be, checked without building the stream.

Each function takes a stream's parameters by name (an unknown one is a TypeError, as for the
class), refuses impossible values with a DataError naming them, and returns the stream's largest
lag. The streams call these functions when they are made; the config check calls them before any
job starts, and this module imports no torch, so reading a config stays cheap.
"""

from __future__ import annotations

from repro.data.errors import DataError


def check_positive(owner: str, **values: int) -> None:
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise DataError(f"{owner}: {name}={value!r} must be a positive integer")


def discrete_ngram(vocab: int = 8, order: int = 4) -> int:
    check_positive("DiscreteNGram", vocab=vocab, order=order)
    if vocab < 2 or vocab**order > 2**22:
        raise DataError(f"DiscreteNGram: need vocab ≥ 2 and vocab**order ≤ 2**22 (got {vocab}**{order})")
    return order - 1


def continuous_ngram(dim: int = 16, lags: int = 4, decay: float = 0.0) -> int:
    check_positive("ContinuousNGram", dim=dim, lags=lags)
    if decay < 0:
        raise DataError(f"ContinuousNGram: decay={decay} must be ≥ 0")
    return lags


def previous_tokens(vocab: int = 16, lags: int = 2) -> int:
    check_positive("PreviousTokens", vocab=vocab, lags=lags)
    if vocab < 2:
        raise DataError(f"PreviousTokens: vocab={vocab} must be ≥ 2")
    return lags


def nonlinear_lags(dim: int = 16, lags: int = 3) -> int:
    check_positive("NonlinearLags", dim=dim, lags=lags)
    return lags


#: stream name -> its parameter check (the names of `repro.data.streams.make_stream`)
CHECKS = {
    "discrete_ngram": discrete_ngram,
    "continuous_ngram": continuous_ngram,
    "previous_tokens": previous_tokens,
    "nonlinear_lags": nonlinear_lags,
}


def max_lag(name: str, **params) -> int:
    """The largest lag of stream `name` with `params`; DataError for an unknown stream or parameter."""
    try:
        check = CHECKS[name]
    except KeyError:
        raise DataError(f"unknown stream {name!r}; known streams: {', '.join(CHECKS)}") from None
    try:
        return check(**params)
    except TypeError as err:
        raise DataError(f"stream {name!r}: {err}") from None


def check_length(owner: str, lag: int, seq_len: int) -> None:
    if seq_len <= lag:
        raise DataError(
            f"{owner}: seq_len={seq_len} leaves no position with a full target; it must exceed the largest lag {lag}"
        )
