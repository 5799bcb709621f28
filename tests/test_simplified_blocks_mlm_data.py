"""Masked-LM part of simplified_blocks: the prose corpus and the GLUE stand-in tasks."""

from __future__ import annotations

import ast
import gzip
import json

import numpy as np
import pytest

from repro.data import DataError
from repro.data.cards import read_card
from repro.data.corpus import build_corpus, iter_corpus
from repro.data.glue_standin import TASKS, _kept_lines, build_glue_standin, load_glue_standin
from repro.data.lm_tokens import load_token_chunks, tokenize_corpus
from repro.data.mlm_text import build_prose_corpus, extract_prose
from repro.data.tokenizer import EOS_ID, load_tokenizer, train_tokenizer

SOURCE = '''"""Module docstring.

    More text."""
import os  # trailing comment is code, not prose

# First comment line
#   second line of the same paragraph
x = 1


def f():
    r\'\'\'Raw docstring.\'\'\'
    s = """not at the start of a line"""
    return s
'''


def test_extract_prose_keeps_docstrings_and_comment_paragraphs_in_order():
    assert extract_prose(SOURCE) == (
        "Module docstring.\n\nMore text.\n\nFirst comment line second line of the same paragraph\n\nRaw docstring."
    )
    assert extract_prose("x = 1\n") == ""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    build_corpus(out, max_bytes=600_000, valid_fraction=0.1, seed=0)
    train_tokenizer(out, out / "tokenizer.json", vocab_size=400, train_bytes=300_000)
    return out


def test_prose_corpus_budget_layout_and_tokenisation(corpus, tmp_path):
    card = build_prose_corpus(corpus, tmp_path / "prose", max_bytes=20_000)
    records = [json.loads(line) for line in gzip.open(tmp_path / "prose" / "train.jsonl.gz", "rt")]
    sizes = [len(r["text"].encode()) for r in records]
    # whole documents until the budget is reached: all but the last stay below it
    assert sum(sizes[:-1]) < 20_000 <= sum(sizes)
    sources = dict(iter_corpus(corpus, "train"))
    assert all(r["text"] == extract_prose(sources[r["path"]]) and r["text"] for r in records)
    assert card["sizes"]["train"]["documents"] == len(records)
    tokens = tokenize_corpus(tmp_path / "prose", corpus / "tokenizer.json", tmp_path / "tokens")
    assert tokens["sizes"]["valid"]["files"] == card["sizes"]["valid"]["documents"]
    assert load_token_chunks(tmp_path / "tokens" / "train.npz", 16).shape[1] == 16
    with pytest.raises(DataError, match="max_bytes"):
        build_prose_corpus(corpus, tmp_path / "bad", max_bytes=0)


SIZES = {"mnli": 30, "qqp": 20, "qnli": 20, "sst2": 20, "cola": 20, "stsb": 20, "mrpc": 20, "rte": 20}


@pytest.fixture(scope="module")
def glue(corpus, tmp_path_factory):
    path = tmp_path_factory.mktemp("glue") / "glue.npz"
    build_glue_standin(corpus, corpus / "tokenizer.json", path, train_sizes=SIZES, eval_size=16, max_line_tokens=10)
    return load_glue_standin(path)


def _lines(ids, lengths):
    """Split a packed row [EOS] a ([EOS] b) into its lines."""
    row = list(ids[:lengths])
    assert row[0] == EOS_ID
    if EOS_ID in row[1:]:
        cut = row.index(EOS_ID, 1)
        return row[1:cut], row[cut + 1 :]
    return row[1:], None


def test_glue_standin_shapes_balance_and_determinism(corpus, glue, tmp_path):
    tasks, meta = glue
    assert set(tasks) == set(TASKS)
    for name, spec in TASKS.items():
        splits = tasks[name]
        assert len(splits["train"].labels) == SIZES[name]
        for _, split in spec.evals:
            data = splits[split]
            assert data.input_ids.shape[1] == (22 if spec.pair else 11)
            assert bool((data.input_ids[:, 0] == EOS_ID).all())
            if spec.n_outputs > 1:  # balanced classes
                counts = np.bincount(data.labels.numpy(), minlength=spec.n_outputs)
                assert counts.max() - counts.min() <= 1
    again = tmp_path / "again.npz"
    build_glue_standin(corpus, corpus / "tokenizer.json", again, train_sizes=SIZES, eval_size=16, max_line_tokens=10)
    tasks2, _ = load_glue_standin(again)
    assert all(bool((tasks[t]["train"].input_ids == tasks2[t]["train"].input_ids).all()) for t in TASKS)
    with pytest.raises(DataError, match="train_sizes"):
        build_glue_standin(corpus, corpus / "tokenizer.json", tmp_path / "x.npz", train_sizes={"mnli": 4}, eval_size=4)


def test_glue_standin_labels_mean_what_they_say(corpus, glue):
    tasks, _ = glue
    tokenizer = load_tokenizer(corpus / "tokenizer.json")
    tokenizer.encode_special_tokens = True
    # every pair of consecutive kept lines of the corpus, as token ids cut to 10
    adjacent = set()
    for _, source in list(iter_corpus(corpus, "train")) + list(iter_corpus(corpus, "valid")):
        ids = [tuple(e.ids[:10]) for e in tokenizer.encode_batch_fast(_kept_lines(source), add_special_tokens=False)]
        adjacent.update(zip(ids, ids[1:]))
    rte = tasks["rte"]["train"]
    for row, length, label in zip(rte.input_ids.tolist(), rte.padding_mask.sum(1).tolist(), rte.labels.tolist()):
        a, b = _lines(row, length)
        if label == 1:
            assert (tuple(a), tuple(b)) in adjacent
    stsb = tasks["stsb"]["train"]
    for row, length, label in zip(stsb.input_ids.tolist(), stsb.padding_mask.sum(1).tolist(), stsb.labels.tolist()):
        a, b = _lines(row, length)
        assert label == pytest.approx(5 * len(set(a) & set(b)) / len(set(a) | set(b)), abs=1e-6)
    cola = tasks["cola"]["train"]
    for row, length, label in zip(cola.input_ids.tolist(), cola.padding_mask.sum(1).tolist(), cola.labels.tolist()):
        text = tokenizer.decode(_lines(row, length)[0])
        if label == 0:
            with pytest.raises(SyntaxError):
                ast.parse(text)
    card = read_card(corpus / "tokenizer.card.json") if (corpus / "tokenizer.card.json").exists() else None
    assert card is None or card["name"]
