"""The papers' datasets, read from the Hugging Face hub (or local copies of its files) and written in
the same tidy formats as the CPU-scale generators, so every downstream rule runs unchanged.

Two output formats, the ones the pipeline already reads:
  task file   (`repro.data.synthetic.write_task` / `load_task`): one .npz with int64 arrays per split,
              the same array names as the synthetic analogue of the dataset:
                classification  input_ids [N,T], lengths [N], labels [N] (+ segment_ids [N,T] for pairs)
                translation     src [N,Ts], tgt [N,Tt], src_lengths [N], tgt_lengths [N]
                prompt          input_ids [N,T], answer_pos [N], labels [N]  (label_token_ids in meta)
  token stream (`repro.data.lm_tokens.load_token_stream`): {split}.npz with tokens, offsets, paths,
              for the language-model corpora (WikiText-103, CodeParrot, the Pile): one document per
              row, except WikiText, whose rows are lines, joined into one document per article.

Rows come from `datasets.load_dataset(hub_id, config, split=...)` when `source` is None, or from a
local directory holding the hub's own files for a split (``{split}.parquet``, ``{split}.jsonl`` or
``{split}.csv``; parquet needs pyarrow), read with pandas: the offline path the tests use, and the
way to run from a pre-downloaded mirror on a cluster without internet.

Tokenisation is the caller's `Encoder`: the pretrained model's tokenizer (`Encoder.from_pretrained`,
through transformers) or any `encode(text) -> ids` with the special ids the format needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repro.data.errors import DataError
from repro.data.synthetic.common import TaskData, classification_arrays, lengths, pad

PAD_ID = 0


@dataclass(frozen=True)
class HubDataset:
    """Where a paper's dataset lives on the hub and how its rows map to our format."""

    name: str  # our name (the synthetic analogue's task name where there is one)
    hub_id: str
    config: str | None
    kind: str  # classification | pair_classification | translation | prompt | lm
    splits: dict[str, str]  # our split -> the hub's split
    fields: tuple[str, ...]  # text fields read from a row (one, two for pairs, source/target for MT)
    label: str | None = None  # label field
    label_names: tuple[str, ...] = ()
    paper: str = ""  # which paper uses it
    approx_size: str = ""  # download size, for the README's table
    options: dict[str, Any] = field(default_factory=dict)


# The papers' datasets (catalogs: sixteen_heads.md, simplified_blocks.md, layer_diversity.md).
DATASETS: dict[str, HubDataset] = {
    d.name: d
    for d in (
        HubDataset(
            "mnli",
            "nyu-mll/glue",
            "mnli",
            "pair_classification",
            {"train": "train", "valid": "validation_matched", "test": "validation_mismatched"},
            ("premise", "hypothesis"),
            "label",
            ("entailment", "neutral", "contradiction"),
            "sixteen_heads",
            "~300 MB",
        ),
        HubDataset(
            "sst2",
            "nyu-mll/glue",
            "sst2",
            "classification",
            {"train": "train", "valid": "validation"},
            ("sentence",),
            "label",
            ("negative", "positive"),
            "sixteen_heads",
            "~5 MB",
        ),
        HubDataset(
            "cola",
            "nyu-mll/glue",
            "cola",
            "classification",
            {"train": "train", "valid": "validation"},
            ("sentence",),
            "label",
            ("unacceptable", "acceptable"),
            "sixteen_heads",
            "~1 MB",
        ),
        HubDataset(
            "mrpc",
            "nyu-mll/glue",
            "mrpc",
            "pair_classification",
            {"train": "train", "valid": "validation", "test": "test"},
            ("sentence1", "sentence2"),
            "label",
            ("not_equivalent", "equivalent"),
            "sixteen_heads",
            "~1 MB",
        ),
        HubDataset(
            "mt",
            "wmt/wmt14",
            "fr-en",
            "translation",
            {"train": "train", "selection": "validation", "test": "test"},
            ("en", "fr"),
            paper="sixteen_heads",
            approx_size="~10 GB (train); newstest sets ~1 MB",
            options={"translation_field": "translation"},
        ),
        # MTNT (Michel & Neubig 2018) has no canonical copy on the hub: download its release and pass
        # `source=` a directory with test.tsv converted to test.jsonl ({"en": ..., "fr": ...} per line).
        HubDataset(
            "mtnt",
            "",
            None,
            "translation",
            {"test_ood": "test"},
            ("en", "fr"),
            paper="sixteen_heads",
            approx_size="~2 MB",
            options={"local_only": True},
        ),
        # The paper used IWSLT14 De-En as prepared by fairseq's script; the hub has the 2017 release, a
        # different split of the same TED talks: use it knowingly, or pass `source=` with the IWSLT14 files.
        HubDataset(
            "iwslt",
            "IWSLT/iwslt2017",
            "iwslt2017-de-en",
            "translation",
            {"train": "train", "valid": "validation", "test": "test"},
            ("de", "en"),
            paper="sixteen_heads",
            approx_size="~30 MB",
            options={"translation_field": "translation", "differs": "IWSLT 2017 release, not the paper's IWSLT14"},
        ),
        # A row is a line; the lines of each article (from its " = Title = " line) make one document.
        HubDataset(
            "wikitext103",
            "Salesforce/wikitext",
            "wikitext-103-raw-v1",
            "lm",
            {"train": "train", "valid": "validation"},
            ("text",),
            paper="param_allocation",
            approx_size="~300 MB",
            options={"lines_of_articles": True},
        ),
        HubDataset(
            "codeparrot",
            "codeparrot/codeparrot-clean-train",
            None,
            "lm",
            {"train": "train"},
            ("content",),
            paper="simplified_blocks",
            approx_size="~50 GB",
        ),
        # What the simplified-blocks code trains on (HF course's CodeParrot subset of data-science files;
        # catalog simplified_blocks.md §1): its train and validation splits are two hub datasets, so two
        # entries; a local mirror holds train.<ext> and validation.<ext> side by side.
        HubDataset(
            "codeparrot_ds",
            "huggingface-course/codeparrot-ds-train",
            None,
            "lm",
            {"train": "train"},
            ("content",),
            paper="simplified_blocks",
            approx_size="606,720 files (size not checked offline)",
        ),
        HubDataset(
            "codeparrot_ds_valid",
            "huggingface-course/codeparrot-ds-valid",
            None,
            "lm",
            {"valid": "validation"},
            ("content",),
            paper="simplified_blocks",
            approx_size="3,322 files (size not checked offline)",
        ),
        # The paper's masked-LM text is the Pile as cramming prepared it. The Pile itself is no longer
        # distributed on the hub; this copy is the Pile without its copyrighted subsets (see its card).
        # ~800 GB in all, so it is streamed: the first `limit` documents of each split.
        HubDataset(
            "pile",
            "monology/pile-uncopyrighted",
            None,
            "lm",
            {"train": "train", "valid": "validation"},
            ("text",),
            paper="simplified_blocks",
            approx_size="streamed: ~5 GB per 1M documents (estimate)",
            options={"streaming": True},
        ),
        HubDataset(
            "sent",
            "nyu-mll/glue",
            "sst2",
            "prompt",
            {"train": "train", "test": "validation"},
            ("sentence",),
            "label",
            ("negative", "positive"),
            "layer_diversity",
            "~5 MB",
        ),
        HubDataset(
            "entail",
            "nyu-mll/glue",
            "rte",
            "prompt",
            {"train": "train", "test": "validation"},
            ("sentence1", "sentence2"),
            "label",
            ("yes", "no"),
            "layer_diversity",
            "~2 MB",
        ),
        HubDataset(
            "topic",
            "fancyzhx/ag_news",
            None,
            "prompt",
            {"train": "train", "test": "test"},
            ("text",),
            "label",
            ("world", "sports", "business", "technology"),
            "layer_diversity",
            "~30 MB",
        ),
        HubDataset(
            "mc",
            "allenai/ai2_arc",
            "ARC-Challenge",
            "prompt",
            {"train": "train", "test": "test"},
            ("question",),
            "answerKey",
            ("A", "B", "C", "D"),
            "layer_diversity",
            "~1 MB",
            # a few ARC questions number their choices 1-4 (shown and read as A-D here); the few with
            # 3 or 5 choices are dropped, since the readout compares exactly the four label words
            options={"choices_field": "choices", "label_aliases": {"1": "A", "2": "B", "3": "C", "4": "D"}},
        ),
    )
}
KINDS = ("classification", "pair_classification", "translation", "prompt", "lm")


@dataclass
class Encoder:
    """Text -> token ids, with the special ids our formats need (None where a format does not use one)."""

    encode: Callable[[str], list[int]]
    vocab_size: int
    name: str
    cls_id: int | None = None
    sep_id: int | None = None
    bos_id: int | None = None
    eos_id: int | None = None
    pad_id: int = PAD_ID

    @classmethod
    def from_pretrained(cls, name_or_path: str, **kwargs: Any) -> Encoder:
        """The tokenizer of a pretrained checkpoint (transformers.AutoTokenizer)."""
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(name_or_path, **kwargs)
        return cls(
            encode=lambda text: tok.encode(text, add_special_tokens=False),
            vocab_size=len(tok),
            name=name_or_path,
            cls_id=tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id,
            sep_id=tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id,
            bos_id=tok.bos_token_id if tok.bos_token_id is not None else tok.cls_token_id,
            eos_id=tok.eos_token_id if tok.eos_token_id is not None else tok.sep_token_id,
            pad_id=tok.pad_token_id if tok.pad_token_id is not None else 0,
        )

    def need(self, *names: str) -> list[int]:
        missing = [n for n in names if getattr(self, n) is None]
        if missing:
            raise DataError(f"tokenizer {self.name} has no {', '.join(missing)}, which this dataset format needs")
        return [getattr(self, n) for n in names]


# -- reading rows ----------------------------------------------------------------------------


def read_rows(
    spec: HubDataset,
    split: str,
    source: str | Path | None = None,
    limit: int | None = None,
    shuffle_seed: int | None = None,
) -> list[dict]:
    """Rows of one of our splits: from local files in `source`, else from the hub via `datasets`.

    `limit` keeps the first rows; with `shuffle_seed` it keeps a seeded random sample of that many
    rows instead (in the sampled order), for corpora whose file order is not random (WMT14's train
    split is a concatenation of corpora). The hub path samples on the memory-mapped table, so a
    2M-row sample of a 40M-row corpus never holds the whole corpus as Python rows.
    """
    if split not in spec.splits:
        raise DataError(f"dataset {spec.name} has no split {split!r}; it has {sorted(spec.splits)}")
    hub_split = spec.splits[split]
    if source is not None:
        rows = _read_local(Path(source), hub_split)
        if shuffle_seed is not None:
            order = np.random.default_rng(shuffle_seed).permutation(len(rows))
            rows = [rows[i] for i in order[:limit]]
    elif spec.options.get("local_only"):
        raise DataError(f"dataset {spec.name} has no canonical copy on the hub; pass a local directory as source")
    else:
        try:
            import datasets
        except ImportError:
            raise DataError(
                f"dataset {spec.name}: reading {spec.hub_id} from the hub needs the `datasets` package "
                "(pip install -e '.[paper]'), or pass a local directory with the split's files"
            ) from None
        if spec.options.get("streaming"):  # a corpus too large to download whole: its first `limit` rows
            if limit is None or shuffle_seed is not None:
                raise DataError(f"dataset {spec.name} is read as a stream: give a limit and no shuffle_seed")
            from itertools import islice

            stream = datasets.load_dataset(spec.hub_id, spec.config, split=hub_split, streaming=True)
            return list(islice(stream, limit))
        table = datasets.load_dataset(spec.hub_id, spec.config, split=hub_split)
        if shuffle_seed is not None:
            order = np.random.default_rng(shuffle_seed).permutation(len(table))
            table = table.select(order[:limit])
        rows = list(table)
    return rows[:limit] if limit is not None else rows


def _read_local(directory: Path, split: str) -> list[dict]:
    import pandas as pd

    for suffix, reader in (
        (".parquet", pd.read_parquet),
        (".jsonl", lambda p: pd.read_json(p, lines=True)),
        (".csv", pd.read_csv),
    ):
        path = directory / f"{split}{suffix}"
        if path.exists():
            frame = reader(path)
            return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
    raise DataError(f"no {split}.parquet, {split}.jsonl or {split}.csv in {directory}")


def _plain(value: Any) -> Any:
    """numpy scalars and arrays from pandas -> plain Python (nested choices of ARC arrive as arrays)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _field(row: dict, name: str, spec: HubDataset) -> Any:
    if name not in row:
        raise DataError(f"dataset {spec.name}: a row has no field {name!r} (fields: {sorted(row)})")
    return row[name]


# -- building task files ---------------------------------------------------------------------


def build_task(
    spec: HubDataset | str,
    encoder: Encoder,
    source: str | Path | None = None,
    splits: Sequence[str] | None = None,
    max_len: int = 128,
    limit: int | None = None,
    shuffle_seed: int | None = None,
    final_sep: bool = False,
) -> TaskData:
    """A task in the synthetic generators' layout (write it with `repro.data.synthetic.write_task`).

    Sequences longer than `max_len` tokens are truncated (the end of the text is cut, the special
    tokens are kept); rows whose label is missing (-1, GLUE's unlabeled test sets) are dropped.
    `limit` and `shuffle_seed` choose the rows of each split as in `read_rows`. `final_sep` ends
    classification inputs with the separator as BERT was pretrained to read them (``[CLS] A [SEP]``,
    ``[CLS] A [SEP] B [SEP]``); by default they end where the synthetic analogues end (``[CLS] A``,
    ``[CLS] A [SEP] B``).
    """
    spec = DATASETS[spec] if isinstance(spec, str) else spec
    if spec.kind == "lm":
        raise DataError(f"dataset {spec.name} is a language-model corpus: use build_token_stream")
    arrays: dict[str, dict[str, np.ndarray]] = {}
    extra: dict[str, Any] = {}
    for split in splits or list(spec.splits):
        rows = read_rows(spec, split, source, limit, shuffle_seed)
        if spec.kind in ("classification", "pair_classification"):
            arrays[split] = _classification(spec, rows, encoder, max_len, final_sep)
        elif spec.kind == "translation":
            arrays[split] = _translation(spec, rows, encoder, max_len)
        else:
            arrays[split], extra = _prompt(spec, rows, encoder, max_len)
        if not len(next(iter(arrays[split].values()))):
            raise DataError(f"dataset {spec.name}: split {split!r} has no usable rows")
    meta = {
        "task": spec.name,
        "generator": __name__,
        "family": f"hub:{encoder.name}",
        "vocab_size": encoder.vocab_size,
        "vocab": {"name": encoder.name, "size": encoder.vocab_size},
        "pad_id": encoder.pad_id,
        "seed": 0,
        "params": {
            "hub_id": spec.hub_id,
            "config": spec.config,
            "max_len": max_len,
            "limit": limit,
            "source": "local files" if source is not None else "hub",
        },
        "sizes": {s: int(len(next(iter(a.values())))) for s, a in arrays.items()},
        "arrays": {s: sorted(a) for s, a in arrays.items()},
        "metric": {"translation": "bleu", "prompt": "accuracy"}.get(spec.kind, "accuracy"),
        "label_names": list(spec.label_names) if spec.label_names else None,
        **extra,
    }
    return TaskData(spec.name, meta, arrays)


def _labelled(spec: HubDataset, rows: Iterable[dict]) -> list[tuple[dict, int]]:
    aliases = spec.options.get("label_aliases", {})
    out = []
    for row in rows:
        raw = _field(row, spec.label, spec)
        if isinstance(raw, str):
            raw = aliases.get(raw, raw)
            if raw not in spec.label_names:
                raise DataError(f"dataset {spec.name}: label {raw!r} is not one of {list(spec.label_names)}")
        label = spec.label_names.index(raw) if isinstance(raw, str) else int(raw)
        if label >= 0:
            out.append((row, label))
    return out


def _classification(
    spec: HubDataset, rows, encoder: Encoder, max_len: int, final_sep: bool = False
) -> dict[str, np.ndarray]:
    cls_id, sep_id = encoder.need("cls_id", "sep_id")
    end = [sep_id] if final_sep else []
    sequences, segments, labels = [], [], []
    for row, label in _labelled(spec, rows):
        texts = [encoder.encode(str(_field(row, f, spec))) for f in spec.fields]
        if spec.kind == "classification":
            ids = [cls_id, *texts[0][: max_len - 1 - len(end)], *end]
            seg = None
        else:  # [CLS] A [SEP] B, cutting the longer text first (BERT's truncation)
            first, second = _truncate_pair(texts[0], texts[1], max_len - 2 - len(end))
            ids = [cls_id, *first, sep_id, *second, *end]
            seg = [0] * (len(first) + 2) + [1] * (len(second) + len(end))
        sequences.append(ids)
        segments.append(seg)
        labels.append(label)
    pair = spec.kind == "pair_classification"
    return classification_arrays(sequences, np.asarray(labels, dtype=np.int64), segments if pair else None)


def _truncate_pair(a: list[int], b: list[int], budget: int) -> tuple[list[int], list[int]]:
    a, b = list(a), list(b)
    while len(a) + len(b) > budget:
        (a if len(a) >= len(b) else b).pop()
    return a, b


def _translation(spec: HubDataset, rows, encoder: Encoder, max_len: int) -> dict[str, np.ndarray]:
    bos_id, eos_id = encoder.need("bos_id", "eos_id")
    src_lang, tgt_lang = spec.fields
    nested = spec.options.get("translation_field")
    src, tgt = [], []
    for row in rows:
        pair = _field(row, nested, spec) if nested and nested in row else row
        s = encoder.encode(str(_field(pair, src_lang, spec)))[: max_len - 1]
        t = encoder.encode(str(_field(pair, tgt_lang, spec)))[: max_len - 2]
        src.append([*s, eos_id])
        tgt.append([bos_id, *t, eos_id])
    return {"src": pad(src), "tgt": pad(tgt), "src_lengths": lengths(src), "tgt_lengths": lengths(tgt)}


def _prompt(spec: HubDataset, rows, encoder: Encoder, max_len: int) -> tuple[dict[str, np.ndarray], dict]:
    """`[BOS] text [ANS] label-word`: the label words and the answer marker are encoded by the tokenizer."""
    (bos_id,) = encoder.need("bos_id")
    answer = encoder.encode(" Answer:")
    choices = spec.options.get("choices_field")
    aliases = spec.options.get("label_aliases", {})
    rows = list(rows)
    if choices:  # only questions with one choice per label word
        kept = [row for row in rows if len(_field(row, choices, spec)["text"]) == len(spec.label_names)]
        dropped, rows = len(rows) - len(kept), kept
    label_ids = []
    for name in spec.label_names:
        ids = encoder.encode(" " + name)
        label_ids.append(ids[0])  # the first token of " name" stands for the class
    if len(set(label_ids)) != len(label_ids):
        # SentencePiece tokenizers (Llama 2, Mistral) encode a lone " name" as a bare "▁" piece first;
        # tokenised after the answer marker, as the model reads it, the word's own first piece comes out.
        label_ids = [_label_in_context(encoder, answer, name) for name in spec.label_names]
    if len(set(label_ids)) != len(label_ids):
        raise DataError(f"dataset {spec.name}: label words {spec.label_names} share a first token in {encoder.name}")
    rows_out, answer_pos, labels = [], [], []
    for row, label in _labelled(spec, rows):
        body: list[int] = []
        for f in spec.fields:
            body += encoder.encode(str(_field(row, f, spec)))
        if choices:
            c = _field(row, choices, spec)
            for letter, text in zip(c["label"], c["text"]):
                body += encoder.encode(f" {aliases.get(letter, letter)}. {text}")
        body = body[: max_len - 2 - len(answer)]
        ids = [bos_id, *body, *answer, label_ids[label]]
        rows_out.append(ids)
        answer_pos.append(len(ids) - 2)
        labels.append(label)
    arrays = {
        "input_ids": pad(rows_out),
        "answer_pos": np.asarray(answer_pos, dtype=np.int64),
        "labels": np.asarray(labels, dtype=np.int64),
    }
    extra = {"label_token_ids": label_ids}
    if choices:
        extra["dropped_rows"] = dropped  # questions without exactly one choice per label word
    return arrays, extra


def _label_in_context(encoder: Encoder, answer: list[int], name: str) -> int:
    """First token of ``name`` tokenised after " Answer:"; the lone word's first token where the marker
    itself tokenises differently in that context."""
    ids = encoder.encode(" Answer: " + name)
    if ids[: len(answer)] != answer or len(ids) == len(answer):
        return encoder.encode(" " + name)[0]
    return ids[len(answer)]


# -- language-model corpora ------------------------------------------------------------------


# A top-level WikiText heading, " = Title = "; section headings are " = = Section = = ".
_ARTICLE_HEADING = re.compile(r"^ = [^=].* =\s*$")


def _documents(rows: list[dict], spec: HubDataset, split: str) -> Iterator[tuple[str, str]]:
    """(path, text) of each document of the rows: a row each, or, with the option lines_of_articles
    (WikiText stores a line per row), the lines of each article joined, an article running from its
    heading line to the next. Language-model chunks never cross a document's end, so WikiText read a
    line at a time would lose every paragraph shorter than the context."""
    if not spec.options.get("lines_of_articles"):
        for i, row in enumerate(rows):
            yield str(row.get("path", f"{spec.name}/{split}/{i}")), str(_field(row, spec.fields[0], spec))
        return
    lines: list[str] = []
    start = 0
    for i, row in enumerate(rows):
        line = str(_field(row, spec.fields[0], spec))
        if _ARTICLE_HEADING.match(line) and lines:
            yield f"{spec.name}/{split}/{start}", "".join(lines)
            lines, start = [], i
        lines.append(line)
    if lines:  # the last article, possibly cut by the row limit
        yield f"{spec.name}/{split}/{start}", "".join(lines)


def build_token_stream(
    spec: HubDataset | str,
    encoder: Encoder,
    out_dir: str | Path,
    source: str | Path | None = None,
    splits: Sequence[str] | None = None,
    limit: int | None = None,
    shuffle_seed: int | None = None,
    extra_meta: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Write ``{split}.npz`` token streams in `repro.data.lm_tokens`'s format (one document per row,
    or per article for corpora stored a line per row, each followed by EOS); returns the written paths. `limit` and `shuffle_seed` choose the rows of
    each split as in `read_rows` (with a seed: the first `limit` rows of a numpy permutation seeded by it);
    `extra_meta` adds keys to each file's meta (e.g. the mask id a masked-LM reader needs)."""
    from repro.data.lm_tokens import token_dtype
    from repro.data.npz import write_npz

    spec = DATASETS[spec] if isinstance(spec, str) else spec
    if spec.kind != "lm":
        raise DataError(f"dataset {spec.name} is not a language-model corpus (kind {spec.kind!r})")
    (eos_id,) = encoder.need("eos_id")
    dtype = token_dtype(encoder.vocab_size)
    written = {}
    for split in splits or list(spec.splits):
        pieces, offsets, paths = [], [0], []
        for path, text in _documents(read_rows(spec, split, source, limit, shuffle_seed), spec, split):
            if not text.strip():  # nothing to read (a blank row)
                continue
            ids = [*encoder.encode(text), eos_id]
            pieces.append(np.asarray(ids, dtype=dtype))
            offsets.append(offsets[-1] + len(ids))
            paths.append(path)
        tokens = np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)
        arrays = {
            "tokens": tokens,
            "offsets": np.asarray(offsets, dtype=np.int64),
            "paths": np.asarray(paths, dtype=str),
        }
        meta = {
            "vocab_size": encoder.vocab_size,
            "eos_id": eos_id,
            "tokenizer": encoder.name,
            "hub_id": spec.hub_id,
            **(extra_meta or {}),
        }
        written[split] = write_npz(Path(out_dir) / f"{split}.npz", arrays, meta=meta)
    return written
