"""Byte-deterministic .npz files.

``numpy.savez_compressed`` stamps each member with the current time, so the same arrays give
different bytes on every call. ``write_npz`` writes the same zip layout (``NAME.npy`` members,
deflate) with a fixed timestamp and in sorted key order, so the file's sha256 (recorded in the
data card) depends only on the arrays. ``read_npz`` loads every member without pickle and turns
any missing, truncated or corrupt file into a DataError.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from repro.data.cards import card_path_for, check_against_card, drop_stale_card, make_card, write_card
from repro.data.errors import DataError, rebuild_hint, writing

_FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip entry can hold
META_KEY = "meta.json"  # a uint8 array holding JSON metadata, readable without pickle


def write_npz(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any] | None = None) -> Path:
    """Write ``arrays`` (and optional JSON ``meta``) to a deflated .npz with fixed bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    members = {key: np.ascontiguousarray(value) for key, value in arrays.items()}
    if meta is not None:
        text = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False)
        members[META_KEY] = np.frombuffer(text.encode(), dtype=np.uint8)
    drop_stale_card(path)
    with writing(path):
        tmp = path.with_name(path.name + ".tmp")
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for key in sorted(members):
                if members[key].dtype == object:
                    raise DataError(f"array {key!r} has dtype object, which cannot be stored without pickle")
                info = zipfile.ZipInfo(key + ".npy", date_time=_FIXED_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                with archive.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, members[key], allow_pickle=False)
        tmp.replace(path)  # never leave a half-written file under the final name
    return path


def write_npz_with_card(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any], **card) -> dict:
    """Write one dataset file with `write_npz` and its card beside it (``NAME.card.json``); return the card.

    ``card`` holds `make_card`'s fields but ``files``, which is this one file."""
    path = write_npz(path, arrays, meta=meta)
    made = make_card(files=[path], **card)
    write_card(card_path_for(path), made)
    return made


def read_npz(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any] | None]:
    """Read every array of an .npz written by ``write_npz``; returns (arrays, meta or None)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"dataset file not found: {path}; {rebuild_hint(path)}")
    check_against_card(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as err:
        raise DataError(
            f"dataset file {path} is corrupt or not an .npz ({type(err).__name__}: {err}); {rebuild_hint(path)}"
        ) from None
    meta = None
    if META_KEY in arrays:
        try:
            meta = json.loads(arrays.pop(META_KEY).tobytes().decode())
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise DataError(f"metadata in {path} is corrupt ({err}); {rebuild_hint(path)}") from None
    return arrays, meta
