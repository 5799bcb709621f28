"""Hub dataset loaders, offline: tiny files in the hub's own row formats (jsonl/csv as pandas reads
them) become the same task files and token streams the CPU-scale generators write."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repro.data.errors import DataError
from repro.data.lm_tokens import load_token_chunks, load_token_stream
from repro.data.npz import read_npz
from repro.data.synthetic import load_task, write_task
from repro.hub.datasets import DATASETS, Encoder, build_task, build_token_stream, read_rows

WORDS = [
    "<pad>",
    "<cls>",
    "<sep>",
    "<bos>",
    "<eos>",
    "a",
    "cat",
    "sat",
    "dog",
    "ran",
    "le",
    "chat",
    "Answer:",
    "negative",
    "positive",
    "yes",
    "no",
    "A.",
    "B.",
    "C.",
    "D.",
    "A",
    "B",
    "C",
    "D",
    "red",
    "blue",
    "sky",
    "is",
    "=",
]


def word_encoder() -> Encoder:
    ids = {w: i for i, w in enumerate(WORDS)}
    return Encoder(
        encode=lambda text: [ids[w] for w in text.split()],
        vocab_size=len(WORDS),
        name="words",
        cls_id=1,
        sep_id=2,
        bos_id=3,
        eos_id=4,
        pad_id=0,
    )


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_mnli_rows_become_a_pair_classification_task_file(tmp_path):
    write_jsonl(
        tmp_path / "train.jsonl",
        [
            {"premise": "a cat sat", "hypothesis": "a dog", "label": 2, "idx": 0},
            {"premise": "a dog ran", "hypothesis": "a dog ran", "label": 0, "idx": 1},
            {"premise": "a cat", "hypothesis": "a cat", "label": -1, "idx": 2},  # unlabeled: dropped
        ],
    )
    task = build_task("mnli", word_encoder(), source=tmp_path, splits=["train"])
    write_task(tmp_path / "mnli.npz", task)
    back = load_task(tmp_path / "mnli.npz", "mnli").splits["train"]
    # [CLS] a cat sat [SEP] a dog ; [CLS] a dog ran [SEP] a dog ran
    assert back["input_ids"].tolist() == [[1, 5, 6, 7, 2, 5, 8, 0], [1, 5, 8, 9, 2, 5, 8, 9]]
    assert back["segment_ids"].tolist() == [[0, 0, 0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 1, 1, 1]]
    assert back["lengths"].tolist() == [7, 8] and back["labels"].tolist() == [2, 0]


def test_pair_truncation_cuts_the_longer_text_first(tmp_path):
    write_jsonl(tmp_path / "train.jsonl", [{"sentence1": "a cat sat a dog ran", "sentence2": "a dog", "label": 1}])
    task = build_task("mrpc", word_encoder(), source=tmp_path, splits=["train"], max_len=7)
    assert task.splits["train"]["input_ids"].tolist() == [[1, 5, 6, 7, 2, 5, 8]]


def test_wmt_rows_become_src_and_tgt_with_eos_and_bos(tmp_path):
    write_jsonl(tmp_path / "test.jsonl", [{"translation": {"en": "a cat", "fr": "le chat"}}])
    task = build_task("mt", word_encoder(), source=tmp_path, splits=["test"])
    split = task.splits["test"]
    assert split["src"].tolist() == [[5, 6, 4]] and split["tgt"].tolist() == [[3, 10, 11, 4]]
    assert split["src_lengths"].tolist() == [3] and split["tgt_lengths"].tolist() == [4]
    assert task.meta["metric"] == "bleu"


def test_arc_rows_become_prompts_read_at_the_answer_position(tmp_path):
    write_jsonl(
        tmp_path / "test.jsonl",
        [
            {
                "question": "sky is",
                "answerKey": "B",
                "choices": {"text": ["red", "blue", "a", "cat"], "label": ["A", "B", "C", "D"]},
            }
        ],
    )
    task = build_task("mc", word_encoder(), source=tmp_path, splits=["test"])
    split = task.splits["test"]
    answer_pos = int(split["answer_pos"][0])
    ids = split["input_ids"][0].tolist()
    assert ids[0] == 3 and ids[answer_pos] == WORDS.index("Answer:")
    assert ids[answer_pos + 1] == task.meta["label_token_ids"][1] == WORDS.index("B")
    assert split["labels"].tolist() == [1]


def test_wikitext_lines_become_one_document_per_article(tmp_path):
    """A row is a line; an article runs from its " = Title = " line to the next (section headings
    " = = ... = = " and blank lines stay inside it), and ends with one EOS."""
    lines = [" = sky = \n", " a cat sat \n", " \n", " = = red = = \n", " a dog ran \n", " = blue = \n", " a cat \n"]
    write_jsonl(tmp_path / "train.jsonl", [{"text": line} for line in lines])
    written = build_token_stream("wikitext103", word_encoder(), tmp_path / "tokens", source=tmp_path, splits=["train"])
    tokens, offsets, _ = load_token_stream(written["train"])
    ids = {w: i for i, w in enumerate(WORDS)}
    first = [ids[w] for w in "= sky = a cat sat = = red = = a dog ran".split()] + [4]
    second = [ids[w] for w in "= blue = a cat".split()] + [4]
    assert tokens.tolist() == first + second and offsets.tolist() == [0, len(first), len(first) + len(second)]
    assert read_npz(written["train"])[0]["paths"].tolist() == ["wikitext103/train/0", "wikitext103/train/5"]
    assert load_token_chunks(written["train"], 6).tolist() == [first[:6], first[6:12], second[:6]]
    # a row limit cuts the last article where it falls
    cut = build_token_stream(
        "wikitext103", word_encoder(), tmp_path / "cut", source=tmp_path, splits=["train"], limit=2
    )
    assert load_token_stream(cut["train"])[0].tolist() == [ids[w] for w in "= sky = a cat sat".split()] + [4]


def test_csv_sources_and_string_labels_are_read(tmp_path):
    (tmp_path / "validation.csv").write_text("sentence,label\na cat sat,1\na dog,0\n")
    task = build_task("sst2", word_encoder(), source=tmp_path, splits=["valid"])
    assert task.splits["valid"]["labels"].tolist() == [1, 0]
    assert np.array_equal(task.splits["valid"]["input_ids"][:, 0], [1, 1])


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(DataError, match="no train.parquet"):
        read_rows(DATASETS["sst2"], "train", source=tmp_path)
    with pytest.raises(DataError, match="no split 'dev'"):
        read_rows(DATASETS["sst2"], "dev", source=tmp_path)
    with pytest.raises(DataError, match="no canonical copy"):
        read_rows(DATASETS["mtnt"], "test_ood")
    write_jsonl(tmp_path / "train.jsonl", [{"text": "a cat"}])
    with pytest.raises(DataError, match="no field 'label'"):
        build_task("sst2", word_encoder(), source=tmp_path, splits=["train"])
    no_cls = Encoder(encode=str.split, vocab_size=3, name="bare")
    with pytest.raises(DataError, match="has no cls_id"):
        build_task("sst2", no_cls, source=tmp_path, splits=["train"])


def test_every_dataset_spec_is_complete():
    for name, spec in DATASETS.items():
        assert spec.kind in ("classification", "pair_classification", "translation", "prompt", "lm"), name
        assert spec.splits and spec.fields and spec.paper and spec.approx_size, name
        if spec.kind in ("classification", "pair_classification", "prompt"):
            assert spec.label and len(spec.label_names) >= 2, name


def test_encoder_from_a_saved_pretrained_tokenizer(tmp_path):
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(WORDS)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        cls_token="<cls>",
        sep_token="<sep>",
        bos_token="<bos>",
        eos_token="<eos>",
    )
    fast.save_pretrained(tmp_path / "tok")
    encoder = Encoder.from_pretrained(str(tmp_path / "tok"))
    assert encoder.encode("a cat sat") == [5, 6, 7]
    assert (encoder.cls_id, encoder.sep_id, encoder.bos_id, encoder.eos_id, encoder.pad_id) == (1, 2, 3, 4, 0)
    assert encoder.vocab_size == len(WORDS)
