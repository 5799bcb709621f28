"""The digest of the `repro` source a script runs, for rules whose command line stays the same when that
source changes.

Snakemake reruns a job when its inputs, its command or its params change, not when a module its command
imports does. A notebook rule therefore carries the digest of its notebook's `repro` imports as a param,
so that a changed plot helper or summary redraws the figures that use it, and no other figure; the report
rules carry the digest of the module that writes their file (`module_digest`), and the judging rule that
of its paper's package and the claim machinery (`claims_digest`).

The imports are read statically: every `repro` module a file names in an import statement (at any depth
of the file) or in a package's `lazy_exports` table, followed through the modules they name in turn.
Modules imported by computed names (`importlib.import_module`) are not followed.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE = "repro"
#: The directory that holds the package (src/).
SOURCE_ROOT = Path(__file__).resolve().parents[2]


def _root(root: str | Path | None) -> Path:
    return SOURCE_ROOT if root is None else Path(root).resolve()


def _module_file(name: str, root: Path) -> Path | None:
    """The file of module `name` under `root` (a package's __init__.py), None for a name that is not a module."""
    path = root.joinpath(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


def _named_modules(tree: ast.AST) -> set[str]:
    """Every dotted name a file imports or lists in a `lazy_exports` table (`from a.b import c` names
    a.b and a.b.c, since c may be a module)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_exports":
            for table in node.args[1:2]:
                if isinstance(table, ast.Dict):
                    names.update(
                        k.value for k in table.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
                    )
    return names


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@functools.cache
def _imported_files(path: Path, root: Path, stamp: tuple[int, int]) -> frozenset[Path]:
    """The files of the `repro` modules `path` names, with the packages above them (`stamp`: the file's
    mtime and size, so that an edited file is read again)."""
    files = set()
    for name in _named_modules(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        parts = name.split(".")
        if parts[0] != PACKAGE:
            continue
        for depth in range(1, len(parts) + 1):
            found = _module_file(".".join(parts[:depth]), root)
            if found is not None:
                files.add(found)
    return frozenset(files)


def repro_sources(script: str | Path, root: Path | None = None) -> list[Path]:
    """The files of every `repro` module `script` imports, directly or through other `repro` modules,
    sorted; `root` is the directory holding the package (default: this checkout's src/)."""
    root = _root(root)
    seen: set[Path] = set()
    pending = [Path(script).resolve()]
    while pending:
        path = pending.pop()
        for found in _imported_files(path, root, _stamp(path)):
            if found not in seen:
                seen.add(found)
                pending.append(found)
    return sorted(seen)


@functools.cache
def _file_digest(path: Path, root: Path, stamp: tuple[int, int]) -> str:
    """sha256 of a file's path relative to `root` and its bytes (`stamp`: mtime and size, as above)."""
    return hashlib.sha256(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes()).hexdigest()


def _digest_of(files: list[Path], root: Path) -> str:
    """sha256 over the digests of `files`, in the given order."""
    return hashlib.sha256("".join(_file_digest(path, root, _stamp(path)) for path in files).encode()).hexdigest()


def source_digest(script: str | Path, root: Path | None = None) -> str:
    """sha256 of the `repro` source `script` runs (`repro_sources`); the script itself is not part of it."""
    root = _root(root)
    return _digest_of(repro_sources(script, root), root)


def module_digest(module: str, root: Path | None = None) -> str:
    """sha256 of the `repro` module `module` (a dotted name) and of every `repro` module it imports."""
    root = _root(root)
    path = _module_file(module, root)
    if path is None:
        raise ValueError(f"no module {module!r} under {root}")
    return _digest_of(sorted({path, *repro_sources(path, root)}), root)


def claims_digest(paper: str, root: Path | None = None) -> str:
    """sha256 of the source a paper's verdicts depend on: every module of ``repro.papers.<paper>``, its
    subpackages included (its claims reach some of them by computed names) and the claim machinery (repro.pipeline.claims,
    repro.pipeline.decisions). The judging rule carries it as a param, so that changed claims, gates or
    nulls are judged again on results that did not change."""
    root = _root(root)
    package = root / PACKAGE
    files = sorted((package / "papers" / paper).rglob("*.py")) + [
        package / "pipeline" / "claims.py",
        package / "pipeline" / "decisions.py",
    ]
    if len(files) == 2:
        raise ValueError(f"no modules for paper {paper!r} under {package / 'papers'}")
    return _digest_of(files, root)
