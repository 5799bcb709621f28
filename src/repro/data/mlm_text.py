"""English text for a masked-LM stand-in: the docstrings and comments of the code corpus.

Crammed BERT (He & Hofmann 2024, §5) is pre-trained on English text. Offline, the closest English we
have is the prose inside the code corpus (repro.data.corpus): docstrings and full-line comments.
Both are extracted with regular expressions, not `ast`, because parsing the 45 MB corpus takes about
a minute on one core while the expressions take a few seconds:

- a docstring is a triple-quoted string that starts a line (after indentation and an optional
  r/u prefix); this also catches a few statement-level strings that are not docstrings;
- a comment is a line whose first non-blank character is ``#``; consecutive comment lines are
  joined into one paragraph.

Each source file becomes one document: its paragraphs, in source order, separated by blank lines.
Files with no prose are skipped. The output has the layout of repro.data.corpus (train.jsonl.gz,
valid.jsonl.gz with {"path", "text"} records, gzip with mtime 0, card.json), so repro.data.lm_tokens
tokenises it unchanged. The train split keeps whole documents, in corpus order, until their UTF-8
size reaches ``max_bytes``; the valid split keeps every document of the corpus' valid files.
"""

from __future__ import annotations

import gzip
import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path

from repro.data.cards import drop_stale_card, make_card, write_card
from repro.data.corpus import SPLITS, iter_corpus
from repro.data.errors import DataError

_DOCSTRING = re.compile(r'^[ \t]*[rRuU]?("""|\'\'\')(.*?)\1', re.MULTILINE | re.DOTALL)
_COMMENT_LINE = re.compile(r"^[ \t]*#")


def _comment_paragraphs(source: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each run of consecutive full-line comments, '#' marks removed."""
    run: list[str] = []
    start = 0
    for number, line in enumerate(source.splitlines()):
        if _COMMENT_LINE.match(line):
            if not run:
                start = number
            text = line.strip().lstrip("#").strip()
            if text:
                run.append(text)
            continue
        if run:
            yield start, " ".join(run)
            run = []
    if run:
        yield start, " ".join(run)


def extract_prose(source: str) -> str:
    """The docstrings and comment paragraphs of one Python source, in source order, separated by
    blank lines ("" if it has none). Docstrings are dedented with `inspect.cleandoc`."""
    pieces: list[tuple[int, str]] = []
    for match in _DOCSTRING.finditer(source):
        text = inspect.cleandoc(match.group(2))
        if text:
            pieces.append((source.count("\n", 0, match.start()), text))
    pieces.extend(_comment_paragraphs(source))
    pieces.sort(key=lambda item: item[0])
    return "\n\n".join(text for _, text in pieces)


def _write_records(path: Path, records: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as handle:
        for file_path, text in records:
            handle.write((json.dumps({"path": file_path, "text": text}, ensure_ascii=False) + "\n").encode("utf-8"))
    tmp.replace(path)


def build_prose_corpus(corpus_dir: str | Path, out_dir: str | Path, max_bytes: int | None = None) -> dict:
    """Write the prose of the code corpus at `corpus_dir` to `out_dir` (see module docstring).

    Returns the data card. Raises DataError if a split ends up with no document.
    """
    if max_bytes is not None and max_bytes < 1:
        raise DataError(f"max_bytes must be a positive number of bytes or None, got {max_bytes}")
    out_dir = Path(out_dir)
    sizes, written = {}, []
    for split in SPLITS:
        records, total, scanned = [], 0, 0
        for file_path, source in iter_corpus(corpus_dir, split):
            if split == "train" and max_bytes is not None and total >= max_bytes:
                break
            scanned += 1
            text = extract_prose(source)
            if text:
                records.append((file_path, text))
                total += len(text.encode("utf-8"))
        if not records:
            raise DataError(f"the {split} split of {corpus_dir} has no docstring or comment; use a larger corpus")
        path = out_dir / f"{split}.jsonl.gz"
        drop_stale_card(path)
        _write_records(path, records)
        written.append(path)
        sizes[split] = {"files_scanned": scanned, "documents": len(records), "bytes": total}
    card = make_card(
        name="code-prose",
        generator=__name__,
        seed=None,
        params={"source": str(corpus_dir), "max_bytes": max_bytes, "extraction": "docstrings and full-line comments"},
        sizes=sizes,
        files=written,
        packages=[],
    )
    write_card(out_dir / "card.json", card)
    return card
