"""Data cards and deterministic .npz files."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from repro.data import DataError
from repro.data.cards import card_path_for, make_card, read_card, verify_card_files, write_card
from repro.data.npz import read_npz, write_npz


def test_card_is_canonical_and_byte_identical(tmp_path):
    data = tmp_path / "x.bin"
    data.write_bytes(b"abc")
    kwargs = dict(
        name="x",
        generator="tests",
        seed=1,
        params={"b": 2, "a": [1, 2]},
        sizes={"train": 3},
        files=[data],
        packages=["numpy", "numpy"],
    )
    first = write_card(tmp_path / "one.card.json", make_card(**kwargs))
    second = write_card(tmp_path / "two.card.json", make_card(**kwargs))
    assert first.read_bytes() == second.read_bytes()
    text = first.read_text()
    card = json.loads(text)
    assert list(card) == sorted(card) and text.endswith("}\n")
    assert card["files"]["x.bin"] == {
        "bytes": 3,
        "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    }
    assert set(card["packages"]) == {"numpy"} and card["seed"] == 1
    assert "time" not in text and str(tmp_path) not in text  # nothing machine- or time-specific


def test_card_location_convention(tmp_path):
    assert card_path_for(tmp_path) == tmp_path / "card.json"
    assert card_path_for(tmp_path / "tokenizer.json") == tmp_path / "tokenizer.card.json"
    assert card_path_for(tmp_path / "nli.npz") == tmp_path / "nli.card.json"


def test_card_file_check_and_read_errors(tmp_path):
    data = tmp_path / "d.bin"
    data.write_bytes(b"123")
    card_path = write_card(
        tmp_path / "d.card.json",
        make_card(name="d", generator="t", seed=None, params={}, sizes={}, files=[data], packages=[]),
    )
    verify_card_files(card_path)
    data.write_bytes(b"124")
    with pytest.raises(DataError, match=r"d.bin \(sha256 differs\)"):
        verify_card_files(card_path)
    card_path.write_text("{")
    with pytest.raises(DataError, match="not valid JSON"):
        read_card(card_path)
    with pytest.raises(DataError, match="not found"):
        read_card(tmp_path / "none.json")


def test_npz_bytes_do_not_depend_on_time_or_key_order(tmp_path):
    arrays = {"b": np.arange(5, dtype=np.uint16), "a/x": np.array(["p", "qr"])}
    write_npz(tmp_path / "1.npz", arrays, meta={"k": 1})
    time.sleep(2.1)  # zip timestamps have 2-second resolution
    write_npz(tmp_path / "2.npz", dict(reversed(list(arrays.items()))), meta={"k": 1})
    assert (tmp_path / "1.npz").read_bytes() == (tmp_path / "2.npz").read_bytes()
    loaded, meta = read_npz(tmp_path / "1.npz")
    assert meta == {"k": 1} and loaded["b"].dtype == np.uint16
    np.testing.assert_array_equal(loaded["a/x"], arrays["a/x"])
    # numpy's own loader reads it too
    with np.load(tmp_path / "1.npz") as archive:
        assert sorted(archive.files) == ["a/x", "b", "meta.json"]


def test_npz_errors(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_npz(tmp_path / "none.npz")
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(DataError, match="corrupt"):
        read_npz(tmp_path / "junk.npz")
    with pytest.raises(DataError, match="dtype object"):
        write_npz(tmp_path / "o.npz", {"o": np.array([{}, 1], dtype=object)})


def _carded_npz(directory, name="train.npz", value=1):
    path = write_npz(directory / name, {"x": np.full(4, value, dtype=np.int64)})
    card = make_card(name="d", generator="test", seed=0, params={}, sizes={}, files=[path], packages=[])
    write_card(directory / "card.json", card)
    return path


def test_a_file_that_differs_from_its_card_is_refused_on_load(tmp_path):
    path = _carded_npz(tmp_path)
    read_npz(path)  # as written: fine
    other = write_npz(tmp_path / "other.npz", {"x": np.zeros(4, dtype=np.int64)})
    path.write_bytes(other.read_bytes())  # a valid .npz, but not the one the card describes
    with pytest.raises(
        DataError,
        match=r"train.npz is not the file its data card .*card.json describes"
        r".*run: .*snakemake .*--forcerun .*train.npz$",
    ):
        read_npz(path)


def test_writing_a_dataset_file_anew_drops_the_card_of_the_old_one(tmp_path):
    path = _carded_npz(tmp_path)
    write_npz(path, {"x": np.arange(4)})  # rebuilt with other settings; the builder writes the card last
    assert not (tmp_path / "card.json").exists()
    read_npz(path)  # no stale card to refuse it
    _carded_npz(tmp_path, value=2)
    write_npz(tmp_path / "unrelated.npz", {"x": np.arange(2)})  # a card that does not list it stays
    assert (tmp_path / "card.json").exists()
