"""Token files: encoding the corpus, validation, and per-file chunking."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.data import DataError
from repro.data.corpus import build_corpus, iter_corpus
from repro.data.lm_tokens import load_token_chunks, load_token_stream, tokenize_corpus
from repro.data.npz import write_npz
from repro.data.tokenizer import EOS_ID, load_tokenizer, train_tokenizer


def write_stream(path, files, vocab_size=50):
    """A token file holding the given per-file token lists (EOS appended to each)."""
    tokens = np.array([t for f in files for t in [*f, EOS_ID]], dtype=np.uint16)
    offsets = np.concatenate([[0], np.cumsum([len(f) + 1 for f in files])]).astype(np.int64)
    write_npz(path, {"tokens": tokens, "offsets": offsets}, meta={"vocab_size": vocab_size, "eos_id": EOS_ID})
    return path


def test_chunks_are_per_file_and_drop_each_remainder(tmp_path):
    # file lengths with EOS: 7, 3, 8, 4 -> with seq_len 4: 1 + 0 + 2 + 1 chunks
    files = [[1, 2, 3, 4, 5, 6], [7, 8], [9, 10, 11, 12, 13, 14, 15], [16, 17, 18]]
    chunks = load_token_chunks(write_stream(tmp_path / "s.npz", files), 4)
    assert chunks.dtype == torch.long and chunks.shape == (4, 4)
    assert chunks.tolist() == [[1, 2, 3, 4], [9, 10, 11, 12], [13, 14, 15, 0], [16, 17, 18, 0]]
    assert load_token_chunks(tmp_path / "s.npz", 1).numel() == 7 + 3 + 8 + 4  # seq_len 1 keeps everything
    assert load_token_chunks(tmp_path / "s.npz", 8).tolist() == [[9, 10, 11, 12, 13, 14, 15, 0]]


def test_no_full_chunk_bad_seq_len_missing_and_corrupt_files(tmp_path):
    path = write_stream(tmp_path / "short.npz", [[1, 2], [3]])
    with pytest.raises(DataError, match="no full chunk of 4 tokens: its longest file has 3"):
        load_token_chunks(path, 4)
    with pytest.raises(DataError, match="positive integer"):
        load_token_chunks(path, 0)
    with pytest.raises(DataError, match="not found"):
        load_token_chunks(tmp_path / "missing.npz", 4)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(DataError, match="corrupt"):
        load_token_chunks(truncated, 2)


@pytest.mark.parametrize(
    "arrays, meta, message",
    [
        ({"tokens": np.array([1, 0], np.uint16)}, {"vocab_size": 5}, "missing"),
        ({"tokens": np.array([1, 0], np.uint16), "offsets": np.array([0, 3])}, {"vocab_size": 5}, "end at len"),
        ({"tokens": np.array([1, 2], np.uint16), "offsets": np.array([0, 2])}, {"vocab_size": 5}, "end with EOS"),
        ({"tokens": np.array([9, 0], np.uint16), "offsets": np.array([0, 2])}, {"vocab_size": 5}, ">= vocab_size"),
        ({"tokens": np.array([1, 0], np.int64), "offsets": np.array([0, 2])}, {"vocab_size": 5}, "unsigned"),
    ],
)
def test_inconsistent_token_files_are_rejected(tmp_path, arrays, meta, message):
    write_npz(tmp_path / "x.npz", arrays, meta=meta)
    with pytest.raises(DataError, match=message):
        load_token_stream(tmp_path / "x.npz")


def test_tokenize_corpus_end_to_end(tmp_path):
    corpus = tmp_path / "corpus"
    build_corpus(corpus, max_bytes=150_000, valid_fraction=0.2, seed=1)
    train_tokenizer(corpus, tmp_path / "tokenizer.json", vocab_size=300)
    card = tokenize_corpus(corpus, tmp_path / "tokenizer.json", tmp_path / "tokens")
    again = tokenize_corpus(corpus, tmp_path / "tokenizer.json", tmp_path / "tokens2")
    assert card == again
    for name in ("train.npz", "valid.npz", "card.json"):
        assert (tmp_path / "tokens" / name).read_bytes() == (tmp_path / "tokens2" / name).read_bytes()

    tokenizer = load_tokenizer(tmp_path / "tokenizer.json")
    tokens, offsets, meta = load_token_stream(tmp_path / "tokens" / "valid.npz")
    assert tokens.dtype == np.uint16 and meta["vocab_size"] == 300
    records = list(iter_corpus(corpus, "valid"))
    assert len(offsets) == len(records) + 1 == card["sizes"]["valid"]["files"] + 1
    assert card["sizes"]["valid"]["tokens"] == len(tokens)
    for i, (_, text) in enumerate(records):  # each file decodes back to its text, then one EOS
        ids = tokens[offsets[i] : offsets[i + 1]].tolist()
        assert ids[-1] == EOS_ID and EOS_ID not in ids[:-1]
        assert tokenizer.decode(ids[:-1]) == text

    chunks = load_token_chunks(tmp_path / "tokens" / "valid.npz", 64)
    lengths = np.diff(offsets)
    assert chunks.shape == (int((lengths // 64).sum()), 64)
    first = tokens[offsets[0] : offsets[0] + 64].astype(np.int64)
    assert chunks[0].tolist() == first.tolist()
