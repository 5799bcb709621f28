"""Derived seeds: one run seed, independent random streams for each purpose.

A run has one integer seed. Data order, masking and dropout each need their own
stream, and none of them may coincide with the stream that initialised the model
(`torch.manual_seed(seed)` at model build time). Hashing the seed together with a
purpose tag gives such streams without any state to save.
"""

from __future__ import annotations

import hashlib

import torch


def derive_seed(seed: int, *purpose: object) -> int:
    """A 63-bit seed that depends on `seed` and on every item of `purpose`.

    The same arguments always give the same value (on every machine and Python
    version: it is a SHA-256 of their text form, not Python's salted `hash`).
    """
    text = "/".join(str(part) for part in (seed, *purpose))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def generator(seed: int, *purpose: object) -> torch.Generator:
    """A CPU `torch.Generator` seeded with `derive_seed(seed, *purpose)`."""
    return torch.Generator().manual_seed(derive_seed(seed, *purpose))
