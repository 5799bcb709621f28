"""Data cards: a deterministic JSON description written next to every dataset.

A card records what a dataset is and how it was made: its name, the module that generated it,
the seed, the parameters, sizes per split, the sha256 of every file written, and the versions of
the packages whose behaviour shaped the bytes. Cards carry no timestamps, paths of the machine
or host names, and are written with sorted keys, so the same inputs give byte-identical cards.

Where a card lives (``card_path_for``): a dataset written as a directory gets ``DIR/card.json``;
a dataset written as one file ``NAME.EXT`` gets ``NAME.card.json`` beside it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from repro.data.errors import DataError, rebuild_hint

CARD_FORMAT = 1  # bump when the card's layout changes


def file_sha256(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def package_versions(names: Iterable[str]) -> dict[str, str]:
    """Installed version of each named distribution ("not installed" where absent)."""
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def card_path_for(dataset_path: str | Path) -> Path:
    """Where the card of a dataset lives: ``DIR/card.json`` or ``NAME.card.json`` beside a file."""
    path = Path(dataset_path)
    if path.is_dir() or not path.suffix:
        return path / "card.json"
    return path.with_name(path.name.split(".")[0] + ".card.json")


def make_card(
    *,
    name: str,
    generator: str,
    seed: int | None,
    params: Mapping[str, Any],
    sizes: Mapping[str, Any],
    files: Iterable[str | Path],
    packages: Iterable[str],
    environment: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble a card; ``files`` are hashed now and recorded by base name.

    ``packages`` are distribution names whose installed versions are recorded; ``environment``
    holds other versions that shape the bytes (e.g. zlib for gzip output); ``extra`` adds fields
    particular to one kind of dataset (e.g. a synthetic task's vocabulary size).
    """
    hashed = {}
    for file in files:
        file = Path(file)
        hashed[file.name] = {"bytes": file.stat().st_size, "sha256": file_sha256(file)}
    card = {
        "card_format": CARD_FORMAT,
        "name": name,
        "generator": generator,
        "seed": seed,
        "params": dict(params),
        "sizes": dict(sizes),
        "files": hashed,
        "packages": package_versions(sorted(set(packages))),
        "environment": dict(environment or {}),
    }
    clash = set(card) & set(extra or {})
    if clash:
        raise ValueError(f"extra card fields {sorted(clash)} would overwrite standard ones")
    card.update(extra or {})
    return card


def card_bytes(card: Mapping[str, Any]) -> bytes:
    """The canonical serialisation: sorted keys, 2-space indent, UTF-8, final newline."""
    return (json.dumps(card, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def write_card(path: str | Path, card: Mapping[str, Any]) -> Path:
    """Write ``card`` to ``path`` in the canonical form and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(card_bytes(card))
    return path


def read_card(path: str | Path) -> dict[str, Any]:
    """Read a card, raising DataError if it is missing or not valid JSON."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"data card not found: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"data card {path} is not valid JSON ({err}); rebuild the dataset") from None


def verify_card_files(card_path: str | Path) -> None:
    """Check that every file a card lists is present beside it with the recorded sha256."""
    card_path = Path(card_path)
    card = read_card(card_path)
    bad = []
    for name, entry in sorted(card.get("files", {}).items()):
        file = card_path.parent / name
        if not file.is_file():
            bad.append(f"{name} (missing)")
        elif file_sha256(file) != entry["sha256"]:
            bad.append(f"{name} (sha256 differs)")
    if bad:
        raise DataError(f"files listed in {card_path} do not match it: {', '.join(bad)}; rebuild the dataset")


def _cards_of(path: Path) -> list[Path]:
    return [card for card in (card_path_for(path), path.parent / "card.json") if card.is_file()]


def drop_stale_card(path: str | Path) -> None:
    """Remove the card that lists `path` before the file is written anew; the builder writes the new
    card once every file of the dataset is in place."""
    path = Path(path)
    for card_path in _cards_of(path):
        try:
            listed = path.name in read_card(card_path).get("files", {})
        except DataError:
            listed = True  # an unreadable card describes nothing
        if listed:
            card_path.unlink()


def check_against_card(path: str | Path) -> None:
    """Raise DataError if a dataset file differs from the sha256 its data card records.

    The card is looked up beside the file (``NAME.card.json``) or in its directory (``card.json``);
    a file no card lists (a test fixture, a file of another tool) is not checked.
    """
    path = Path(path)
    for card_path in _cards_of(path):
        entry = read_card(card_path).get("files", {}).get(path.name)
        if entry is None:
            continue
        if file_sha256(path) != entry["sha256"]:
            raise DataError(
                f"{path} is not the file its data card {card_path} describes (sha256 differs): it is corrupt or was "
                f"changed after it was made; {rebuild_hint(path)}"
            )
        return
