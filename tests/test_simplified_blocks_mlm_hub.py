"""simplified_blocks masked-LM part at paper scale (mlm.data.source hub), offline: a tiny WordPiece
vocabulary saved as a BERT fast tokenizer, tiny files in the Pile's and GLUE's own row formats (a
local mirror), through `data hub-tokens --masked-lm` / `simplified_blocks hub-glue` and on into `pretrain` and
`finetune` unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

transformers = pytest.importorskip("transformers")

from repro.cli import main  # noqa: E402
from repro.data.glue_standin import TASKS, load_glue_standin  # noqa: E402
from repro.data.lm_tokens import load_token_chunks, load_token_stream  # noqa: E402
from repro.data.npz import read_npz  # noqa: E402
from repro.hub.glue import GLUE_TASKS  # noqa: E402
from repro.papers.simplified_blocks.specs import mlm_run_spec as run_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # ids 0-4
WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "mat",
    "is",
    "good",
    "bad",
    "film",
    "not",
    "it",
    "was",
    "what",
    "why",
    "who",
    "did",
    "see",
    "##s",
    "##ed",
    ".",
]
VOCAB = SPECIAL + WORDS
ID = {w: i for i, w in enumerate(VOCAB)}
SENTENCES = [
    "the cat sat on the mat .",
    "a dog ran .",
    "the film is good .",
    "it was not bad .",
    "who did see the dog ?",
    "the cats sat .",
    "what is it ?",
    "a good film .",
]


def save_wordpiece(directory: Path) -> Path:
    """A BERT-style WordPiece tokenizer (lower-casing normaliser, BERT pre-tokenizer) as a fast tokenizer."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece

    tok = Tokenizer(WordPiece(ID, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    fast.save_pretrained(directory / "bert")
    return directory / "bert"


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_mirror(root: Path) -> Path:
    """The Pile's rows ({"text", "meta"}) and each GLUE task's rows under MIRROR/<name>/<hub split>.jsonl."""
    docs = [" ".join(SENTENCES[(i + k) % len(SENTENCES)] for k in range(3 + i % 4)) for i in range(12)]
    write_jsonl(root / "pile" / "train.jsonl", [{"text": d, "meta": {"pile_set_name": "Pile-CC"}} for d in docs[:9]])
    write_jsonl(
        root / "pile" / "validation.jsonl", [{"text": d, "meta": {"pile_set_name": "Pile-CC"}} for d in docs[9:]]
    )
    for task, (fields, splits) in GLUE_TASKS.items():
        for j, hub_split in enumerate(splits.values()):
            rows = []
            for i in range(6 + j):
                row = {name: SENTENCES[(i + k + j) % len(SENTENCES)] for k, name in enumerate(fields)}
                row["label"] = round(0.7 * i, 1) if task == "stsb" else (i % 3 if task == "mnli" else i % 2)
                row["idx"] = i
                rows.append(row)
            rows.append(dict(rows[0], label=-1))  # an unlabeled row (GLUE's test sets): dropped
            write_jsonl(root / task / f"{hub_split}.jsonl", rows)
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("sb_mlm_hub")
    tok = save_wordpiece(root / "tok")
    mirror = write_mirror(root / "mirror")
    assert (
        main(
            [
                "data",
                "hub-tokens",
                "--masked-lm",
                "--dataset",
                "pile",
                "--tokenizer",
                str(tok),
                "--out-dir",
                str(root / "text"),
                "--train-rows",
                "8",
                "--valid-rows",
                "3",
                "--mirror",
                str(mirror),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "simplified_blocks",
                "hub-glue",
                "--tokenizer",
                str(tok),
                "--out",
                str(root / "glue.npz"),
                "--max-tokens",
                "12",
                "--mirror",
                str(mirror),
            ]
        )
        == 0
    )
    return {"root": root, "tok": tok, "mirror": mirror}


def test_the_text_files_are_token_streams_with_the_tokenizers_mask_and_special_ids(built):
    arrays, meta = read_npz(built["root"] / "text" / "train.npz")
    assert sorted(arrays) == ["offsets", "paths", "tokens"] and arrays["tokens"].dtype == np.uint16
    assert meta["vocab_size"] == len(VOCAB) and meta["eos_id"] == ID["[SEP]"] and meta["mask_id"] == ID["[MASK]"]
    assert meta["special_ids"] == [0, 1, 2, 3, 4]
    tokens, offsets, _ = load_token_stream(built["root"] / "text" / "train.npz")
    assert len(offsets) == 9  # the first 8 documents
    first = (built["mirror"] / "pile" / "train.jsonl").read_text().splitlines()[0]
    words = json.loads(first)["text"].split()  # whole vocabulary words only: one id each
    assert all(w in ID for w in words)
    assert tokens[offsets[0] : offsets[1]].tolist() == [ID[w] for w in words] + [ID["[SEP]"]]
    assert json.loads((built["root"] / "text" / "card.json").read_text())["sizes"]["valid"]["documents"] == 3


def test_the_glue_file_holds_every_task_in_the_stand_in_format(built):
    tasks, meta = load_glue_standin(built["root"] / "glue.npz")
    assert set(tasks) == set(TASKS) and meta["vocab_size"] == len(VOCAB)
    assert set(tasks["mnli"]) == {"train", "eval", "eval_mm"} and set(tasks["cola"]) == {"train", "eval"}
    cola = tasks["cola"]["train"]
    assert len(cola.labels) == 6 and cola.labels.dtype.is_floating_point is False  # the -1 row dropped
    # "the cat sat on the mat ." -> [CLS] the cat sat on the mat . [SEP], padded with 0 to 12
    assert cola.input_ids[0].tolist() == [2, 5, 7, 9, 11, 5, 12, 27, 3, 0, 0, 0]
    assert cola.padding_mask[0].tolist() == [True] * 9 + [False] * 3
    rte = tasks["rte"]["train"]  # a pair cut to 12 tokens: the longer text loses its end first
    ids = rte.input_ids[0].tolist()
    assert ids[0] == ID["[CLS]"] and ids.count(ID["[SEP]"]) == 2 and ids[-1] == ID["[SEP]"]
    stsb = tasks["stsb"]["train"]
    assert stsb.labels.dtype.is_floating_point and stsb.labels.tolist() == pytest.approx([0.0, 0.7, 1.4, 2.1, 2.8, 3.5])
    assert tasks["mnli"]["eval_mm"].labels.tolist() == [0, 1, 2, 0, 1, 2, 0, 1]


def test_pretrain_and_finetune_read_the_hub_files_unchanged(built, tmp_path):
    config = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())
    section = config["simplified_blocks"]["mlm"]
    spec = run_spec(section, "pre_ln", 0)
    spec["model"].update(max_seq_len=8)
    spec["train"].update(time_budget_s=0.5, eval_every=2, log_every=1)
    spec["budget_updates_of"] = None  # the budget in seconds, as at paper scale
    spec["eval_chunks"] = 2
    assert len(load_token_chunks(built["root"] / "text" / "valid.npz", 8)) >= 2
    run = tmp_path / "mlm_runs" / "pre_ln" / "seed0"
    step_times = tmp_path / "step_times.csv"
    timing = ["simplified_blocks", "step-times", "--specs", json.dumps([spec]), "--out", str(step_times)]
    settings = json.dumps({"warmup_rounds": 0, "timed_steps": 1, "rounds": 1})
    assert main([*timing, "--settings", settings, "--tokens", str(built["root"] / "text" / "train.npz")]) == 0
    assert (
        main(
            [
                "simplified_blocks",
                "pretrain",
                "--spec",
                json.dumps(spec),
                "--train-tokens",
                str(built["root"] / "text" / "train.npz"),
                "--valid-tokens",
                str(built["root"] / "text" / "valid.npz"),
                "--step-times",
                str(step_times),
                "--run-dir",
                str(run),
            ]
        )
        == 0
    )
    assert (run / "model.safetensors").is_file()
    # fine-tuning needs inputs no longer than the encoder's positions: a GLUE file of 8 tokens
    assert (
        main(
            [
                "simplified_blocks",
                "hub-glue",
                "--tokenizer",
                str(built["tok"]),
                "--out",
                str(tmp_path / "g.npz"),
                "--max-tokens",
                "8",
                "--mirror",
                str(built["mirror"]),
            ]
        )
        == 0
    )
    out = tmp_path / "part0.csv"
    settings = dict(section["finetune"], epochs=1, batch_size=4)
    assert (
        main(
            [
                "simplified_blocks",
                "finetune",
                "--run-dirs",
                str(run),
                "--glue",
                str(tmp_path / "g.npz"),
                "--settings",
                json.dumps(settings),
                "--seeds",
                "0",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    import pandas as pd

    scores = pd.read_csv(out)
    assert set(scores["task"]) == set(TASKS) and len(scores) == len(TASKS) + 1  # mnli: matched and mismatched
    assert scores.loc[scores["task"] == "cola", "n_eval"].item() == 7


def test_a_tokenizer_without_a_mask_token_is_refused(built, tmp_path, capsys):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    plain = transformers.PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]")),
        unk_token="[UNK]",
        sep_token="[SEP]",
    )
    plain.save_pretrained(tmp_path / "plain")
    assert (
        main(
            [
                "data",
                "hub-tokens",
                "--masked-lm",
                "--dataset",
                "pile",
                "--tokenizer",
                str(tmp_path / "plain"),
                "--out-dir",
                str(tmp_path / "t"),
                "--train-rows",
                "2",
                "--valid-rows",
                "1",
                "--mirror",
                str(built["mirror"]),
            ]
        )
        == 1
    )
    assert "has no mask token" in capsys.readouterr().err


def test_glue_from_the_hub_reads_each_task_config_and_split(built, tmp_path, monkeypatch):
    """Without a mirror every task comes from `datasets.load_dataset("nyu-mll/glue", task, split)` (a
    stand-in module here serving the mirror's rows); the file equals the one built from the mirror."""
    import sys
    import types

    calls = []

    def load_dataset(hub_id, config, split, **kwargs):
        calls.append((hub_id, config, split))
        path = built["mirror"] / config / f"{split}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    out = tmp_path / "glue.npz"
    assert (
        main(
            ["simplified_blocks", "hub-glue", "--tokenizer", str(built["tok"]), "--out", str(out), "--max-tokens", "12"]
        )
        == 0
    )
    assert {c[0] for c in calls} == {"nyu-mll/glue"} and len(calls) == 17  # 8 tasks x 2 splits + MNLI mismatched
    assert ("nyu-mll/glue", "mnli", "validation_mismatched") in calls and ("nyu-mll/glue", "stsb", "train") in calls
    hub, mirror = read_npz(out)[0], read_npz(built["root"] / "glue.npz")[0]
    assert sorted(hub) == sorted(mirror)
    for name in mirror:
        np.testing.assert_array_equal(hub[name], mirror[name])  # exact: the same rows parsed from text twice
