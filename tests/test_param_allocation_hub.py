"""param_allocation at paper scale (data.source hub), offline: tiny WikiText-103 files in the hub's row
format (a local mirror) and a word-level tokenizer saved as a transformers fast tokenizer go through
`data hub-tokens`, the command of rule param_allocation_hub_tokens. The token files keep the first rows
of each split in hub order, join WikiText's lines into articles (one EOS after each), and the Fig 5
decoder step reads them unchanged (its vocabulary is the tokenizer's)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from repro.cli import main  # noqa: E402
from repro.data.cards import read_card  # noqa: E402
from repro.data.lm_tokens import load_token_stream  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PA = "param_allocation"
WORDS = ["<pad>", "<eos>", *"the a cat dog sat ran on mat log and then it was = history of".split()]
EOS = 1


def line(i: int) -> str:
    """Row i of a WikiText-like split: a heading, a blank line or a sentence, so blank rows occur."""
    if i % 7 == 3:
        return " \n"
    if i % 11 == 0:
        return " = history of the cat = \n"
    words = [w for w in WORDS[2:] if w != "="]  # "=" only in headings
    return " " + " ".join(words[(i * 3 + k) % len(words)] for k in range(6 + i % 5)) + " \n"


SPLITS = {"train": [line(i) for i in range(60)], "validation": [line(100 + i) for i in range(20)]}


def encode(text: str) -> list[int]:
    return [WORDS.index(w) for w in text.split()]


@pytest.fixture(scope="module")
def mirror_and_tokenizer(tmp_path_factory):
    root = tmp_path_factory.mktemp("pa_hub")
    mirror = root / "mirror" / "wikitext103"
    mirror.mkdir(parents=True)
    for split, rows in SPLITS.items():
        (mirror / f"{split}.jsonl").write_text("".join(json.dumps({"text": r}) + "\n" for r in rows))
    core = tokenizers.Tokenizer(tokenizers.models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<pad>"))
    core.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>")
    fast.save_pretrained(root / "tok")
    return root / "mirror", root / "tok"


def hub_tokens(out: Path, mirror: Path, tokenizer: Path, train: int, valid: int, *extra: str) -> int:
    return main(
        [
            "data",
            "hub-tokens",
            "--dataset",
            "wikitext103",
            "--tokenizer",
            str(tokenizer),
            "--out-dir",
            str(out),
            "--train-rows",
            str(train),
            "--valid-rows",
            str(valid),
            "--mirror",
            str(mirror),
            *extra,
        ]
    )


def articles(rows: list[str]) -> list[str]:
    """The rows joined into articles, each from its top-level heading to the next (written out here)."""
    out: list[list[str]] = []
    for row in rows:
        if row.startswith(" = ") and not row.startswith(" = = ") or not out:
            out.append([])
        out[-1].append(row)
    return ["".join(article) for article in out]


def test_the_first_rows_become_one_eos_terminated_document_per_article(mirror_and_tokenizer, tmp_path):
    mirror, tok = mirror_and_tokenizer
    assert hub_tokens(tmp_path, mirror, tok, train=30, valid=20) == 0
    for split, hub_split, n in (("train", "train", 30), ("valid", "validation", 20)):
        docs = articles(SPLITS[hub_split][:n])
        tokens, offsets, meta = load_token_stream(tmp_path / f"{split}.npz")
        assert tokens.tolist() == [t for doc in docs for t in (*encode(doc), EOS)], split
        assert len(offsets) - 1 == len(docs) > 1
        assert (meta["vocab_size"], meta["eos_id"]) == (len(WORDS), EOS)
    card = read_card(tmp_path / "card.json")
    assert card["params"]["train_order"] == "the first train_rows, in hub order"
    assert card["params"]["hub_ids"] == {"train": "Salesforce/wikitext", "valid": "Salesforce/wikitext"}
    assert card["sizes"]["train"] == {"documents": 3, "tokens": len(load_token_stream(tmp_path / "train.npz")[0])}


def test_a_corpus_that_is_not_a_language_model_corpus_is_refused(mirror_and_tokenizer, tmp_path, capsys):
    mirror, tok = mirror_and_tokenizer
    rc = main(
        [
            "data",
            "hub-tokens",
            "--dataset",
            "mnli",
            "--tokenizer",
            str(tok),
            "--out-dir",
            str(tmp_path),
            "--train-rows",
            "3",
            "--valid-rows",
            "3",
            "--mirror",
            str(mirror),
        ]
    )
    assert rc == 1
    assert "'mnli' is not a language-model corpus" in capsys.readouterr().err
    assert not (tmp_path / "train.npz").exists()


def test_the_fig5_decoder_step_reads_the_hub_token_files(mirror_and_tokenizer, tmp_path):
    """`param_allocation decoders`, as its rule calls it, with the smoke scale's tiny grid."""
    mirror, tok = mirror_and_tokenizer
    assert hub_tokens(tmp_path / "tokens", mirror, tok, train=60, valid=20) == 0
    spec = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())[PA]["decoders"]
    rc = main(
        [
            "param_allocation",
            "decoders",
            "--spec",
            json.dumps(spec),
            "--seed",
            "0",
            "--train-tokens",
            str(tmp_path / "tokens" / "train.npz"),
            "--valid-tokens",
            str(tmp_path / "tokens" / "valid.npz"),
            "--runs-dir",
            str(tmp_path / "runs"),
            "--out",
            str(tmp_path / "runs.csv"),
            "--out-curves",
            str(tmp_path / "c.csv"),
        ]
    )
    assert rc == 0
    import pandas as pd

    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == len(spec["head_dims"]) * len(spec["lengths"])
    assert np.isfinite(runs["eval_loss"]).all()


def test_only_the_paper_dag_reads_wikitext(planned_rules):
    targets = [f"{{}}/{PA}/data/decoders/seed0.csv", f"{{}}/{PA}/runs/teacher/seed0/model.safetensors"]
    paper = planned_rules("config/paper.yaml", *(t.format("results/paper") for t in targets))
    assert {"param_allocation_hub_tokens", "param_allocation_decoders", "param_allocation_teacher_train"} <= paper
    assert "code_tokens" not in paper
    laptop = planned_rules("config/config.yaml", *(t.format("results/laptop") for t in targets))
    assert "code_tokens" in laptop and "param_allocation_hub_tokens" not in laptop
