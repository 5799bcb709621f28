"""Reference levels: n-gram cross-entropies of a token split, and chance / constant / ceiling scores."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from repro.analysis.reference_levels import classification_levels, file_pairs, ngram_levels
from repro.cli import main
from repro.data.npz import write_npz


def brute_force(train, held_out, V):
    """The module docstring's two models, written out token by token."""
    tokens, offsets = train
    n = len(tokens)
    unigram = Counter(int(t) for t in tokens)
    pairs = Counter()
    for start, end in zip(offsets[:-1], offsets[1:]):
        for a, b in zip(tokens[start : end - 1], tokens[start + 1 : end]):
            pairs[int(a), int(b)] += 1
    context = Counter()
    followers = Counter()
    for (a, _), c in pairs.items():
        context[a] += c
        followers[a] += 1
    uni_loss, bi_loss, count = 0.0, 0.0, 0
    tokens, offsets = held_out
    for start, end in zip(offsets[:-1], offsets[1:]):
        for a, b in zip(tokens[start : end - 1], tokens[start + 1 : end]):
            a, b = int(a), int(b)
            p_b = (unigram[b] + 1) / (n + V)
            if context[a]:
                p = (pairs[a, b] + followers[a] * p_b) / (context[a] + followers[a])
            else:
                p = p_b
            uni_loss -= math.log(p_b)
            bi_loss -= math.log(p)
            count += 1
    return uni_loss / count, bi_loss / count, count


def stream(rng, n_files, vocab, eos=None):
    files = [rng.integers(0, vocab, size=rng.integers(2, 30)) for _ in range(n_files)]
    if eos is not None:  # token files end every file with EOS
        files = [np.append(f, eos) for f in files]
    offsets = np.cumsum([0] + [len(f) for f in files])
    return np.concatenate(files).astype(np.uint16), offsets


def test_ngram_levels_match_the_definition():
    rng = np.random.default_rng(0)
    train, held_out = stream(rng, 40, 12), stream(rng, 15, 14)  # ids 12 and 13 never occur in training
    levels = ngram_levels(train, held_out, vocab_size=14)
    uni, bi, count = brute_force(train, held_out, 14)
    assert levels["unigram_nats"] == pytest.approx(uni, abs=1e-12)
    assert levels["bigram_nats"] == pytest.approx(bi, abs=1e-12)
    assert levels["predicted_tokens"] == count


def test_bigram_level_sees_structure_the_unigram_cannot():
    cycle = np.tile(np.arange(8, dtype=np.uint16), 200)
    split = (cycle, np.array([0, len(cycle)]))
    levels = ngram_levels(split, split, vocab_size=8)
    assert levels["unigram_nats"] == pytest.approx(math.log(8), abs=1e-3)
    assert levels["bigram_nats"] < 0.01


def test_pairs_do_not_cross_files():
    prev, nxt = file_pairs(np.array([5, 6, 7, 8]), np.array([0, 2, 4]))
    assert prev.tolist() == [5, 7] and nxt.tolist() == [6, 8]


def test_classification_levels():
    labels = np.array([0, 1, 1, 1, 2, 1, 0, 1])
    levels = classification_levels(labels, 3, "accuracy")
    # exact: 100·count/8 of integer counts is dyadic; the ceiling is the constant 100.0
    assert levels["chance"] == pytest.approx(100 / 3) and levels["constant"] == 62.5 and levels["ceiling"] == 100.0
    assert levels["constant_by_class"] == [25.0, 62.5, 12.5] and levels["majority_class"] == 1  # exact: as above
    # exact: MCC is set to 0.0 where its denominator is 0
    assert classification_levels(labels[labels < 2], 2, "mcc")["constant"] == 0.0
    binary = np.array([1, 1, 1, 0])
    f1 = classification_levels(binary, 2, "f1")
    assert f1["constant"] == pytest.approx(100 * 2 * 3 / (2 * 3 + 1))  # always 1: precision 3/4, recall 1
    # exact: no true positive, so F1 is 0 / a positive integer
    assert f1["chance"] == pytest.approx(100 * 0.75 / 1.25) and f1["constant_by_class"][0] == 0.0


def test_task_cards_carry_the_reference_levels(tmp_path):
    from repro.data.synthetic import generate_task, write_task

    card = write_task(tmp_path / "cola.npz", generate_task("cola", 0, {"train": 60, "selection": 20, "test": 40}))
    assert sorted(card["reference_levels"]) == ["selection", "test", "train"]
    # exact: the MCC of a constant predictor, 0.0 set by the code
    assert card["reference_levels"]["test"]["constant"] == 0.0
    mt = write_task(tmp_path / "mt.npz", generate_task("mt", 0, {"train": 8, "selection": 4, "test": 4, "test_ood": 4}))
    assert mt["reference_levels"] == {}  # BLEU: no classification levels


def test_reference_levels_command(tmp_path):
    rng = np.random.default_rng(1)
    for split in ("train", "valid"):
        tokens, offsets = stream(rng, 10, 9, eos=0)
        write_npz(
            tmp_path / f"{split}.npz", {"tokens": tokens, "offsets": offsets}, meta={"vocab_size": 9, "eos_id": 0}
        )
    out = tmp_path / "reference_levels.json"
    argv = ["data", "reference-levels", "--train", str(tmp_path / "train.npz"), "--valid", str(tmp_path / "valid.npz")]
    assert main([*argv, "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["unigram_nats"] > 0 and written["bigram_nats"] > 0 and written["vocab_size"] == 9
    assert "Witten-Bell" in written["definition"]


def test_chunk_levels_match_a_brute_force_count_of_the_chunks_targets():
    from repro.analysis.reference_levels import chunk_levels

    rng = np.random.default_rng(2)
    train = stream(rng, 30, 11)
    chunks = rng.integers(0, 13, size=(6, 5))  # ids 11 and 12 never occur in training
    levels = chunk_levels(train, chunks, vocab_size=13)
    # each chunk is its own "file": its first token is no target, as it is none for the model
    flat = chunks.reshape(-1)
    uni, bi, count = brute_force(train, (flat, np.arange(0, flat.size + 1, 5)), 13)
    assert count == 6 * 4 and levels["predicted_tokens"] == count
    assert levels["unigram_nats"] == pytest.approx(uni, abs=1e-12)
    assert levels["bigram_nats"] == pytest.approx(bi, abs=1e-12)
    with pytest.raises(ValueError, match="chunks must be"):
        chunk_levels(train, chunks[:, :1], vocab_size=13)


def test_reference_levels_command_on_held_out_chunks_keeps_the_whole_split_beside(tmp_path):
    from repro.analysis.reference_levels import chunk_levels
    from repro.data.lm_tokens import heldout_draw, load_token_chunks

    rng = np.random.default_rng(3)
    splits = {split: stream(rng, 40, 9, eos=0) for split in ("train", "valid")}
    for split, (tokens, offsets) in splits.items():
        write_npz(
            tmp_path / f"{split}.npz", {"tokens": tokens, "offsets": offsets}, meta={"vocab_size": 9, "eos_id": 0}
        )
    out = tmp_path / "levels.json"
    argv = ["data", "reference-levels", "--train", str(tmp_path / "train.npz"), "--valid", str(tmp_path / "valid.npz")]
    assert main([*argv, "--seq-len", "4", "--heldout-chunks", "8", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    chunks = load_token_chunks(tmp_path / "valid.npz", 4).numpy()
    expected = chunk_levels(splits["train"], chunks[heldout_draw(len(chunks), 1, 8).heldout], 9)
    whole = ngram_levels(splits["train"], splits["valid"], 9)
    assert written["unigram_nats"] == pytest.approx(expected["unigram_nats"], abs=1e-12)
    assert written["bigram_nats"] == pytest.approx(expected["bigram_nats"], abs=1e-12)
    assert written["heldout_chunks"] == 8 and written["seq_len"] == 4 and written["predicted_tokens"] == 8 * 3
    assert written["whole_split"]["bigram_nats"] == pytest.approx(whole["bigram_nats"], abs=1e-12)
    assert main([*argv, "--seq-len", "4", "--out", str(out)]) == 1  # the two options go together
