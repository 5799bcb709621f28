"""The offline code corpus (CodeParrot stand-in): the Python sources of the pinned torch package.

Why torch: it is installed on every machine that runs this pipeline, at one pinned version, and its
2,284 listed ``.py`` files (46 MB) are enough code for a CPU-scale language model. Machines may still
differ, so the corpus is defined by a FROZEN manifest committed in the repository
(``manifests/torch-<version>.tsv``: relative path, size, sha256 of every file). Building the
corpus re-reads every listed file and refuses to continue if any is missing or differs.

Selection and split, both deterministic and seeded:
- files are ordered by sha256("<seed>:order:<path>"); a byte budget ``max_bytes`` takes files in
  that order until their total reaches the budget (the last file may cross it; files are never
  cut; at least two files), so smaller budgets give nested prefixes;
- a file goes to ``valid`` when its own seeded hash, read as a number in [0, 1), is below
  ``valid_fraction`` (a fraction of files, not bytes). Membership does not depend on which other
  files were selected, so the valid files of a small budget are valid files of every larger one.
  If the rule leaves a split empty, the file whose hash is lowest (highest) moves to it (only
  tiny budgets need this, and for them the nesting of valid sets may not hold).

Output directory:
  train.jsonl.gz, valid.jsonl.gz   one JSON record {"path": ..., "text": ...} per file, in the
                                   seeded order; gzip with mtime 0 and no file name, so the bytes
                                   depend only on the contents
  card.json                        see repro.data.cards
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import importlib.util
import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from tqdm import tqdm

from repro.data.cards import check_against_card, drop_stale_card, file_sha256, make_card, write_card
from repro.data.errors import DataError, rebuild_hint

TORCH_VERSION = "2.13.0"  # the version pinned in pyproject.toml
MANIFEST_DIR = Path(__file__).parent / "manifests"
DEFAULT_MANIFEST = MANIFEST_DIR / f"torch-{TORCH_VERSION}.tsv"
SPLITS = ("train", "valid")

# Files that legitimately differ between installs of the same torch release, with the reason.
# Checked by comparing the wheel RECORDs of torch 2.13.0 for linux x86_64 CPU (cp311), linux
# x86_64 CUDA (cp312) and macOS arm64 (cp311): of the 2,285 torch/**/*.py files, only this one
# differs. Other generated files (e.g. torch/testing/_internal/generated/*.py) were identical.
EXCLUDED = {
    "torch/version.py": "generated at build time: holds the build flavour (+cpu, CUDA or ROCm version)",
}

_MAX_LISTED = 20  # offending paths quoted in an error message


class ManifestEntry(NamedTuple):
    path: str  # posix, relative to site-packages, e.g. "torch/nn/modules/linear.py"
    size: int  # bytes
    sha256: str  # hex


@dataclass(frozen=True)
class Manifest:
    torch_version: str
    entries: tuple[ManifestEntry, ...]


# --------------------------------------------------------------------------- the manifest


def torch_site_packages() -> Path:
    """The directory that holds the installed ``torch`` package (its site-packages)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"torch is not installed; install torch=={TORCH_VERSION} to build the code corpus")
    return Path(next(iter(spec.submodule_search_locations))).parent


def installed_torch_version() -> str:
    """The installed torch version without its local label ("2.13.0+cpu" -> "2.13.0")."""
    try:
        return importlib.metadata.version("torch").split("+")[0]
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def scan_sources(site_packages: Path) -> list[ManifestEntry]:
    """Every ``torch/**/*.py`` under ``site_packages`` except EXCLUDED, sorted by path."""
    root = site_packages / "torch"
    if not root.is_dir():
        raise DataError(f"no torch package under {site_packages}")
    entries = []
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(site_packages).as_posix()
        if rel in EXCLUDED or not file.is_file():
            continue
        entries.append(ManifestEntry(rel, file.stat().st_size, file_sha256(file)))
    return sorted(entries)


def write_manifest(out: str | Path, site_packages: str | Path | None = None, torch_version: str | None = None) -> Path:
    """(Re)generate the frozen manifest from an installed torch. For maintainers only.

    The committed manifest defines the corpus; regenerate it only when the pinned torch changes.
    """
    site = Path(site_packages) if site_packages is not None else torch_site_packages()
    version = torch_version or installed_torch_version()
    entries = scan_sources(site)
    lines = [
        f"# torch {version}: Python sources of the torch package, the offline code corpus (repro.data.corpus)",
        "# columns: path relative to site-packages, size in bytes, sha256; sorted by path",
    ]
    lines += [f"# excluded: {path}: {why}" for path, why in sorted(EXCLUDED.items())]
    lines += ["path\tsize\tsha256"]
    lines += [f"{e.path}\t{e.size}\t{e.sha256}" for e in entries]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def read_manifest(path: str | Path = DEFAULT_MANIFEST) -> Manifest:
    """Parse a manifest written by ``write_manifest``."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"corpus manifest not found: {path}") from None
    if not lines or not lines[0].startswith("# torch "):
        raise DataError(f"{path} is not a corpus manifest: its first line must be '# torch <version>: ...'")
    version = lines[0].removeprefix("# torch ").split(":")[0].strip()
    entries = []
    for number, line in enumerate(lines[1:], start=2):
        if not line or line.startswith("#") or line == "path\tsize\tsha256":
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not fields[1].isdigit() or len(fields[2]) != 64:
            raise DataError(f"{path}:{number}: expected 'path<TAB>size<TAB>sha256', got {line!r}")
        entries.append(ManifestEntry(fields[0], int(fields[1]), fields[2]))
    if not entries:
        raise DataError(f"corpus manifest {path} lists no files")
    return Manifest(version, tuple(entries))


def read_verified_sources(manifest: Manifest, site_packages: str | Path | None = None) -> dict[str, bytes]:
    """Read every file the manifest lists and check its size and sha256.

    Raises DataError naming the offending files (up to 20) and their count if any is missing or
    differs: a corpus that silently skipped files would not be the corpus the results describe.
    """
    site = Path(site_packages) if site_packages is not None else torch_site_packages()
    contents: dict[str, bytes] = {}
    problems: list[str] = []
    for entry in tqdm(manifest.entries, desc="verify corpus sources", unit="file", leave=False):
        file = site / entry.path
        try:
            data = file.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            problems.append(f"{entry.path} (missing)")
            continue
        if len(data) != entry.size:
            problems.append(f"{entry.path} (size {len(data)} != {entry.size})")
        elif hashlib.sha256(data).hexdigest() != entry.sha256:
            problems.append(f"{entry.path} (sha256 differs)")
        else:
            contents[entry.path] = data
    if problems:
        shown = "\n  ".join(problems[:_MAX_LISTED])
        more = f"\n  ... and {len(problems) - _MAX_LISTED} more" if len(problems) > _MAX_LISTED else ""
        raise DataError(
            f"{len(problems)} of {len(manifest.entries)} corpus files listed in the manifest are missing or "
            f"differ under {site} (installed torch: {installed_torch_version()}, manifest: torch "
            f"{manifest.torch_version}):\n  {shown}{more}\n"
            f"Install the pinned version (pip install torch=={manifest.torch_version}) so that the corpus "
            f"is the one the manifest defines."
        )
    return contents


# --------------------------------------------------------------------------- selection and split


def _unit_hash(*parts: object) -> float:
    """A number in [0, 1) from sha256 of the parts: a seeded, platform-independent hash."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def order_files(entries: Sequence[ManifestEntry], seed: int) -> list[ManifestEntry]:
    """The seeded file order that every byte budget takes a prefix of."""
    return sorted(entries, key=lambda e: (_unit_hash(seed, "order", e.path), e.path))


def prefix_reaching(sizes: Sequence[int], budget: int | None) -> int:
    """How many leading items to take so that their total first reaches ``budget`` (None: all).

    The last item taken may cross the budget, so any positive budget takes at least one item,
    and a larger budget always takes a longer prefix of the same order.
    """
    if budget is None:
        return len(sizes)
    total = 0
    for count, size in enumerate(sizes, start=1):
        total += size
        if total >= budget:
            return count
    return len(sizes)


def select_by_budget(
    ordered: Sequence[ManifestEntry], max_bytes: int | None, min_files: int = 2
) -> list[ManifestEntry]:
    """The shortest prefix of ``ordered`` whose total size reaches ``max_bytes`` (None: all files),
    but at least ``min_files`` files (a train/valid split needs two)."""
    return list(ordered[: max(min_files, prefix_reaching([e.size for e in ordered], max_bytes))])


def split_files(
    selected: Sequence[ManifestEntry], valid_fraction: float, seed: int
) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
    """Split files into (train, valid), both non-empty, each keeping the order of ``selected``."""
    if not 0.0 < valid_fraction < 1.0:
        raise DataError(f"valid_fraction must be in (0, 1), got {valid_fraction}")
    if len(selected) < 2:
        raise DataError(
            f"a train/valid split needs at least 2 files, the budget selected {len(selected)}; raise max_bytes"
        )
    score = {e.path: _unit_hash(seed, "valid", e.path) for e in selected}
    valid_paths = {path for path, u in score.items() if u < valid_fraction}
    if not valid_paths:
        valid_paths = {min(score, key=score.get)}
    if len(valid_paths) == len(selected):
        valid_paths.remove(max(score, key=score.get))
    train = [e for e in selected if e.path not in valid_paths]
    valid = [e for e in selected if e.path in valid_paths]
    return train, valid


# --------------------------------------------------------------------------- building and reading


def _write_split(path: Path, entries: Sequence[ManifestEntry], contents: dict[str, bytes]) -> None:
    with (
        open(path, "wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as handle,
    ):
        for entry in entries:
            try:
                text = contents[entry.path].decode("utf-8")
            except UnicodeDecodeError as err:
                raise DataError(f"{entry.path} is not UTF-8 ({err})") from None
            record = json.dumps({"path": entry.path, "text": text}, ensure_ascii=False, sort_keys=True)
            handle.write(record.encode("utf-8") + b"\n")


def build_corpus(
    out_dir: str | Path,
    *,
    max_bytes: int | None = None,
    valid_fraction: float = 0.02,
    seed: int = 0,
    manifest_path: str | Path | None = None,
    site_packages: str | Path | None = None,
) -> dict:
    """Verify the sources against the manifest, select, split and write the corpus; returns its card.

    Every listed file is verified, whatever the budget, so a mismatched install fails at every scale.
    """
    manifest_path = Path(manifest_path) if manifest_path is not None else DEFAULT_MANIFEST
    manifest = read_manifest(manifest_path)
    contents = read_verified_sources(manifest, site_packages)
    selected = select_by_budget(order_files(manifest.entries, seed), max_bytes)
    train, valid = split_files(selected, valid_fraction, seed)

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for split, entries in zip(SPLITS, (train, valid)):
        path = out_dir / f"{split}.jsonl.gz"
        drop_stale_card(path)
        _write_split(path, entries, contents)
        written.append(path)
    card = make_card(
        name="torch-code-corpus",
        generator=__name__,
        seed=seed,
        params={
            "max_bytes": max_bytes,
            "valid_fraction": valid_fraction,
            "manifest": manifest_path.name,
            "manifest_sha256": file_sha256(manifest_path),
            "torch_version": manifest.torch_version,
        },
        sizes={
            split: {"files": len(entries), "bytes": sum(e.size for e in entries)}
            for split, entries in zip(SPLITS, (train, valid))
        },
        files=written,
        packages=[],
        environment={"zlib": zlib.ZLIB_RUNTIME_VERSION},
    )
    write_card(out_dir / "card.json", card)
    return card


def iter_corpus(corpus_dir: str | Path, split: str) -> Iterator[tuple[str, str]]:
    """Yield (path, text) for each file of a split written by ``build_corpus``, in order."""
    if split not in SPLITS:
        raise DataError(f"unknown corpus split {split!r}; expected one of {SPLITS}")
    path = Path(corpus_dir) / f"{split}.jsonl.gz"
    if not path.is_file():
        raise DataError(f"corpus split not found: {path}; run `python -m repro data corpus` first")
    check_against_card(path)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                yield record["path"], record["text"]
    except (OSError, EOFError, json.JSONDecodeError, KeyError, UnicodeDecodeError, zlib.error) as err:
        raise DataError(f"corpus split {path} is corrupt ({type(err).__name__}: {err}); {rebuild_hint(path)}") from None
