"""The one exception type of the data layer."""

from __future__ import annotations

import contextlib
import errno


class DataError(RuntimeError):
    """A dataset could not be built or read: missing, corrupt or mismatched input.

    The message always says what is wrong and, where there is one, what to do about it;
    the CLI prints it as is and exits non-zero.
    """


def rebuild_hint(path) -> str:
    """How to remake a damaged or missing pipeline file: a command to paste (repro.pipeline.rebuild)."""
    from repro.pipeline.rebuild import rebuild_command

    return f"to make it again, and what was computed from it, run: {rebuild_command([path])}"


@contextlib.contextmanager
def writing(path):
    """Turn a full disk while writing `path` into an error that names the file (the OS's own message
    does not) and says what to do; other errors pass unchanged."""
    try:
        yield
    except Exception as err:  # safetensors reports the OS error inside its own exception type
        full = getattr(err, "errno", None) == errno.ENOSPC or "os error 28" in str(err).lower()
        if not full:
            raise
        raise OSError(
            errno.ENOSPC,
            f"no space left on the device while writing {path}; free some space (`python -m repro clean "
            "results/<scale> --previous --optimizer-state` removes what finished runs no longer need) and "
            "rerun the same command: what was computed before is kept",
        ) from err
