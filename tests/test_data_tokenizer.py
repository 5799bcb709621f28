"""The byte-level BPE tokenizer: special ids, lossless round trip, byte-identical retraining."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from repro.data import DataError
from repro.data.cards import read_card
from repro.data.corpus import build_corpus, iter_corpus
from repro.data.tokenizer import EOS_ID, EOS_TOKEN, MASK_ID, MASK_TOKEN, load_tokenizer, train_tokenizer, training_texts


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    build_corpus(out, max_bytes=300_000, valid_fraction=0.1, seed=0)
    return out


TRAIN = """
import sys
from repro.data.tokenizer import train_tokenizer
train_tokenizer(sys.argv[1], sys.argv[2], vocab_size=400, train_bytes=200_000)
"""


def test_training_twice_in_fresh_processes_gives_identical_bytes(corpus, tmp_path):
    # Different processes (fresh hash seeds) and different rayon pool sizes must not change a byte.
    outputs = []
    for threads in ("1", "2"):
        out = tmp_path / f"t{threads}" / "tokenizer.json"
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        subprocess.run(
            [sys.executable, "-c", TRAIN, str(corpus), str(out)], check=True, env=env, stderr=subprocess.DEVNULL
        )
        outputs.append(out)
    assert outputs[0].read_bytes() == outputs[1].read_bytes()
    card_a, card_b = (p.with_name("tokenizer.card.json").read_bytes() for p in outputs)
    assert card_a == card_b


def test_special_tokens_vocab_and_lossless_round_trip(corpus, tmp_path):
    out = tmp_path / "tokenizer.json"
    card = train_tokenizer(corpus, out, vocab_size=512)
    tokenizer = load_tokenizer(out)
    assert tokenizer.get_vocab_size() == 512 == card["sizes"]["vocab_size"]
    assert tokenizer.token_to_id(EOS_TOKEN) == EOS_ID == 0 and tokenizer.token_to_id(MASK_TOKEN) == MASK_ID == 1
    _, text = next(iter_corpus(corpus, "valid"))  # text the tokenizer never saw
    for sample in (text[:3000], "def f(x):\n\treturn x  # ünïcode ✓\n", "\x00\x7f" + chr(0x1F600)):
        ids = tokenizer.encode(sample).ids
        assert tokenizer.decode(ids) == sample
        assert EOS_ID not in ids  # plain text never produces the special tokens
    code = tokenizer.encode(text[:3000]).ids
    assert len(code) < 3000 / 1.5  # merges really compress code
    assert json.loads(out.read_text())["pre_tokenizer"]["type"] == "ByteLevel"
    assert card["params"]["corpus_train_sha256"] == read_card(corpus / "card.json")["files"]["train.jsonl.gz"]["sha256"]


def test_train_bytes_takes_whole_files_until_the_budget_is_reached(corpus):
    everything = training_texts(corpus)
    some = training_texts(corpus, 50_000)
    assert some == everything[: len(some)] and len(some) < len(everything)
    assert sum(len(t.encode()) for t in some[:-1]) < 50_000 <= sum(len(t.encode()) for t in some)


def test_errors(corpus, tmp_path):
    with pytest.raises(DataError, match="at least 258"):
        train_tokenizer(corpus, tmp_path / "t.json", vocab_size=100)
    with pytest.raises(DataError, match="not found"):
        load_tokenizer(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text('{"version": ')
    with pytest.raises(DataError, match="could not be read"):
        load_tokenizer(tmp_path / "bad.json")
