"""The offline code corpus: manifest, verification, seeded selection and split, output bytes."""

from __future__ import annotations

import gzip
import hashlib

import pytest

from repro.data import DataError
from repro.data.cards import card_bytes, read_card
from repro.data.corpus import (
    DEFAULT_MANIFEST,
    EXCLUDED,
    ManifestEntry,
    build_corpus,
    iter_corpus,
    order_files,
    read_manifest,
    read_verified_sources,
    select_by_budget,
    split_files,
    write_manifest,
)


def make_fake_torch(root, n_files=30):
    """A site-packages with a small fake ``torch`` package (and an excluded version.py)."""
    pkg = root / "torch"
    (pkg / "nn").mkdir(parents=True)
    for i in range(n_files):
        sub = pkg / "nn" if i % 3 else pkg
        (sub / f"mod_{i:02d}.py").write_text(f"# module {i}\n" + "x = 1\n" * (10 + 7 * i) + "def f(): return 'é'\n")
    (pkg / "version.py").write_text("__version__ = '9.9.9+cpu'\n")
    (pkg / "data.txt").write_text("not python\n")
    return root


@pytest.fixture()
def fake(tmp_path):
    site = make_fake_torch(tmp_path / "site")
    manifest = write_manifest(tmp_path / "torch-9.9.9.tsv", site_packages=site, torch_version="9.9.9")
    return site, manifest


def test_manifest_lists_py_files_sorted_and_excludes_generated(fake):
    site, manifest_path = fake
    manifest = read_manifest(manifest_path)
    paths = [e.path for e in manifest.entries]
    assert manifest.torch_version == "9.9.9"
    assert len(paths) == 30 and paths == sorted(paths)
    assert "torch/version.py" not in paths and all(p.endswith(".py") for p in paths)
    entry = manifest.entries[0]
    data = (site / entry.path).read_bytes()
    assert entry.size == len(data) and entry.sha256 == hashlib.sha256(data).hexdigest()
    assert "# excluded: torch/version.py" in manifest_path.read_text()


def test_committed_manifest_matches_the_installed_torch():
    manifest = read_manifest(DEFAULT_MANIFEST)
    assert manifest.torch_version == "2.13.0"
    assert len(manifest.entries) > 2000
    assert not set(EXCLUDED) & {e.path for e in manifest.entries}
    contents = read_verified_sources(manifest)  # raises if this install differs
    assert len(contents) == len(manifest.entries)


def test_mismatch_is_reported_with_paths_count_and_remedy(fake):
    site, manifest_path = fake
    paths = [e.path for e in read_manifest(manifest_path).entries]
    (site / paths[0]).write_text("changed\n")
    (site / paths[1]).unlink()
    with open(site / paths[2], "ab") as handle:  # same prefix, one more byte
        handle.write(b"\n")
    with pytest.raises(DataError) as err:
        build_corpus(site.parent / "out", manifest_path=manifest_path, site_packages=site)
    message = str(err.value)
    assert message.startswith("3 of 30 corpus files")
    assert f"{paths[0]} (size" in message or f"{paths[0]} (sha256" in message
    assert f"{paths[1]} (missing)" in message and f"{paths[2]} (size" in message
    assert "pip install torch==9.9.9" in message
    assert not (site.parent / "out" / "train.jsonl.gz").exists()


def test_same_size_edit_is_caught_by_sha256(fake):
    site, manifest_path = fake
    path = read_manifest(manifest_path).entries[5].path
    data = bytearray((site / path).read_bytes())
    data[0] ^= 1
    (site / path).write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"sha256 differs"):
        read_verified_sources(read_manifest(manifest_path), site)


def test_many_problems_are_summarised(fake):
    site, manifest_path = fake
    for entry in read_manifest(manifest_path).entries:
        (site / entry.path).unlink()
    with pytest.raises(DataError) as err:
        read_verified_sources(read_manifest(manifest_path), site)
    assert "30 of 30" in str(err.value) and "... and 10 more" in str(err.value)
    assert str(err.value).count("(missing)") == 20


def test_malformed_manifest_is_rejected(tmp_path):
    bad = tmp_path / "m.tsv"
    bad.write_text("# torch 1.0: x\npath\tsize\tsha256\ntorch/a.py\tten\tabc\n")
    with pytest.raises(DataError, match="expected 'path<TAB>size<TAB>sha256'"):
        read_manifest(bad)
    with pytest.raises(DataError, match="not found"):
        read_manifest(tmp_path / "missing.tsv")


def entries(n, size=100):
    return [ManifestEntry(f"torch/f{i}.py", size + i, "0" * 64) for i in range(n)]


def test_budgets_take_nested_prefixes_of_one_seeded_order():
    files = entries(200)
    order = order_files(files, seed=0)
    assert order == order_files(list(reversed(files)), seed=0)  # input order does not matter
    assert order != order_files(files, seed=1)
    small, large = select_by_budget(order, 2_000), select_by_budget(order, 9_000)
    assert large[: len(small)] == small
    assert sum(e.size for e in small[:-1]) < 2_000 <= sum(e.size for e in small)  # stops once reached
    assert select_by_budget(order, None) == order == select_by_budget(order, 10**9)
    assert len(select_by_budget(order, 1)) == 2  # enough whole files for a train and a valid split


def test_split_is_by_file_deterministic_nonempty_and_stable_across_budgets():
    order = order_files(entries(400), seed=3)
    train, valid = split_files(order, 0.1, seed=3)
    assert {e.path for e in train}.isdisjoint(e.path for e in valid)
    assert len(train) + len(valid) == 400 and 20 <= len(valid) <= 60
    assert (train, valid) == split_files(order, 0.1, seed=3)
    _, valid_small = split_files(order[:100], 0.1, seed=3)
    assert set(valid_small) <= set(valid)  # a file's split does not depend on the budget
    tiny_train, tiny_valid = split_files(order[:2], 0.001, seed=3)
    assert len(tiny_train) == 1 and len(tiny_valid) == 1
    with pytest.raises(DataError, match="at least 2 files"):
        split_files(order[:1], 0.1, seed=3)
    with pytest.raises(DataError, match="valid_fraction"):
        split_files(order, 1.0, seed=3)


def test_build_writes_records_and_byte_identical_outputs(fake, tmp_path):
    site, manifest_path = fake
    kwargs = dict(max_bytes=3_000, valid_fraction=0.2, seed=5, manifest_path=manifest_path, site_packages=site)
    card = build_corpus(tmp_path / "a", **kwargs)
    build_corpus(tmp_path / "b", **kwargs)
    for name in ("train.jsonl.gz", "valid.jsonl.gz", "card.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert card_bytes(read_card(tmp_path / "a" / "card.json")) == (tmp_path / "a" / "card.json").read_bytes()
    records = {split: list(iter_corpus(tmp_path / "a", split)) for split in ("train", "valid")}
    assert records["valid"] and records["train"]
    for split, items in records.items():
        assert card["sizes"][split]["files"] == len(items)
        assert card["sizes"][split]["bytes"] == sum(len(text.encode()) for _, text in items)
        for path, text in items:
            assert text == (site / path).read_text(encoding="utf-8")
    assert card["sizes"]["train"]["bytes"] + card["sizes"]["valid"]["bytes"] >= 3_000
    assert card["params"]["torch_version"] == "9.9.9" and card["seed"] == 5
    assert "version.py" not in {p for items in records.values() for p, _ in items}


def test_reading_a_missing_or_corrupt_split_fails_clearly(fake, tmp_path):
    site, manifest_path = fake
    build_corpus(tmp_path / "c", manifest_path=manifest_path, site_packages=site, valid_fraction=0.2)
    path = tmp_path / "c" / "train.jsonl.gz"
    path.write_bytes(path.read_bytes()[:200])  # truncated
    with pytest.raises(DataError, match="corrupt"):
        list(iter_corpus(tmp_path / "c", "train"))
    with pytest.raises(DataError, match="not found"):
        list(iter_corpus(tmp_path / "nowhere", "valid"))
    with gzip.open(path, "wb") as handle:
        handle.write(b"{not json\n")
    with pytest.raises(DataError, match="corrupt"):
        list(iter_corpus(tmp_path / "c", "train"))
