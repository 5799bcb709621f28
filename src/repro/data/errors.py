"""The one exception type of the data layer."""

from __future__ import annotations


class DataError(RuntimeError):
    """A dataset could not be built or read: missing, corrupt or mismatched input.

    The message always says what is wrong and, where there is one, what to do about it;
    the CLI prints it as is and exits non-zero.
    """
