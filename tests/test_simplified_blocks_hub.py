"""simplified_blocks at paper scale (data.source hub), offline: tiny files in the hub CodeParrot
datasets' own row format (a local mirror) and a tiny byte-level BPE saved as a transformers fast
tokenizer go through `data hub-tokens`, the command of rule simplified_blocks_hub_tokens.
Its token files must be the offline corpus's token files (rule code_tokens) for the same source
files: same arrays, dtypes and ids, so the training step and everything after it read them unchanged."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from repro.cli import main  # noqa: E402
from repro.data.cards import make_card, read_card, write_card  # noqa: E402
from repro.data.lm_tokens import load_token_chunks, load_token_stream, tokenize_corpus  # noqa: E402
from repro.data.npz import read_npz  # noqa: E402
from repro.data.tokenizer import EOS_ID, EOS_TOKEN, SPECIAL_TOKENS, new_tokenizer  # noqa: E402
from repro.hub.datasets import DATASETS  # noqa: E402
from repro.pipeline.configcheck import merged_run_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SB = "simplified_blocks"
N_TRAIN, N_VALID = 10, 4


def source_file(i: int) -> str:
    """A small Python file; its length grows with i so files give 0 to several chunks."""
    body = "".join(f"    total = total + value_{k} * {k}\n" for k in range(i % 5 + (i // 2)))
    return f"import numpy as np\n\n\ndef function_{i}(values):\n    total = 0\n{body}    return total\n"


FILES = {
    split: [(f"repo_{split}_{i}/module_{i}.py", source_file(i + (0 if split == "train" else 3))) for i in range(n)]
    for split, n in (("train", N_TRAIN), ("valid", N_VALID))
}


def hub_row(path: str, content: str) -> dict:
    """A row as codeparrot-ds stores it (its columns: repo_name, path, copies, size, content, license)."""
    return {
        "repo_name": path.split("/")[0],
        "path": path,
        "copies": "1",
        "size": str(len(content)),
        "content": content,
        "license": "mit",
    }


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_mirror(root: Path) -> Path:
    """MIRROR/<dataset>/<hub split>.jsonl for the train and valid hub datasets."""
    write_jsonl(root / "codeparrot_ds" / "train.jsonl", [hub_row(p, c) for p, c in FILES["train"]])
    write_jsonl(root / "codeparrot_ds_valid" / "validation.jsonl", [hub_row(p, c) for p, c in FILES["valid"]])
    return root


def write_offline_corpus(root: Path) -> Path:
    """The same files as the offline corpus stores them (repro.data.corpus: {split}.jsonl.gz + card)."""
    root.mkdir(parents=True, exist_ok=True)
    for split, files in FILES.items():
        with gzip.open(root / f"{split}.jsonl.gz", "wt", encoding="utf-8") as handle:
            for path, text in files:
                handle.write(json.dumps({"path": path, "text": text}, sort_keys=True) + "\n")
    card = make_card(
        name="code-corpus",
        generator="test",
        seed=0,
        params={},
        sizes={},
        files=[root / "train.jsonl.gz", root / "valid.jsonl.gz"],
        packages=[],
    )
    write_card(root / "card.json", card)
    return root


def save_tokenizers(root: Path) -> tuple[Path, Path]:
    """One byte-level BPE trained on the files: as the offline pipeline's tokenizer.json, and wrapped
    as a transformers fast tokenizer directory (what a hub tokenizer id resolves to)."""
    tok = new_tokenizer()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([text for files in FILES.values() for _, text in files], trainer=trainer)
    root.mkdir(parents=True, exist_ok=True)
    offline = root / "tokenizer.json"
    offline.write_text(tok.to_str())
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOS_TOKEN, eos_token=EOS_TOKEN)
    hf_dir = root / "hf"
    fast.save_pretrained(hf_dir)
    return offline, hf_dir


# What rule simplified_blocks_hub_tokens runs: the generic hub-tokens step on the CodeParrot entries.
CODEPARROT = ["data", "hub-tokens", "--dataset", "codeparrot_ds", "--valid-dataset", "codeparrot_ds_valid"]


def hub_tokens(
    out: Path,
    tokenizer: Path,
    mirror: Path,
    vocab_size: int,
    train_files: int = N_TRAIN,
    valid_files: int = N_VALID,
    seed: int = 0,
) -> int:
    return main(
        [
            *CODEPARROT,
            "--tokenizer",
            str(tokenizer),
            "--out-dir",
            str(out),
            "--train-rows",
            str(train_files),
            "--valid-rows",
            str(valid_files),
            "--shuffle-seed",
            str(seed),
            "--vocab-size",
            str(vocab_size),
            "--mirror",
            str(mirror),
        ]
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("sb_hub")
    offline_tok, hf_dir = save_tokenizers(root / "tok")
    vocab_size = transformers.AutoTokenizer.from_pretrained(hf_dir).__len__()
    mirror = write_mirror(root / "mirror")
    corpus = write_offline_corpus(root / "corpus")
    tokenize_corpus(corpus, offline_tok, root / "offline_tokens")
    assert hub_tokens(root / "hub_tokens", hf_dir, mirror, vocab_size) == 0
    return {
        "root": root,
        "hf": hf_dir,
        "mirror": mirror,
        "vocab_size": vocab_size,
        "offline": root / "offline_tokens",
        "hub": root / "hub_tokens",
    }


def test_the_valid_split_equals_the_offline_token_file_of_the_same_files(built):
    hub_arrays, hub_meta = read_npz(built["hub"] / "valid.npz")
    off_arrays, off_meta = read_npz(built["offline"] / "valid.npz")
    assert sorted(hub_arrays) == sorted(off_arrays) == ["offsets", "paths", "tokens"]
    for name in off_arrays:
        assert hub_arrays[name].dtype == off_arrays[name].dtype, name
        np.testing.assert_array_equal(hub_arrays[name], off_arrays[name])
    assert hub_arrays["tokens"].dtype == np.uint16 and hub_arrays["offsets"].dtype == np.int64
    assert (hub_meta["vocab_size"], hub_meta["eos_id"]) == (off_meta["vocab_size"], off_meta["eos_id"]) == (300, EOS_ID)


def test_the_train_split_is_the_offline_files_in_the_seeded_shuffle_order(built):
    tokens, offsets, _ = load_token_stream(built["offline"] / "train.npz")
    off_paths = read_npz(built["offline"] / "train.npz")[0]["paths"]
    order = np.random.default_rng(0).permutation(N_TRAIN)  # read_rows' seeded sample
    assert sorted(order.tolist()) == list(range(N_TRAIN)) and order.tolist() != list(range(N_TRAIN))
    expected = np.concatenate([tokens[offsets[i] : offsets[i + 1]] for i in order])
    arrays, _ = read_npz(built["hub"] / "train.npz")
    assert arrays["tokens"].dtype == tokens.dtype
    np.testing.assert_array_equal(arrays["tokens"], expected)
    assert arrays["paths"].tolist() == [off_paths[i] for i in order]
    np.testing.assert_array_equal(np.diff(arrays["offsets"]), np.diff(offsets)[order])


def test_the_card_records_the_files_and_sizes(built):
    card = read_card(built["hub"] / "card.json")
    assert set(card["files"]) == {"train.npz", "valid.npz"}
    assert card["sizes"]["train"]["documents"] == N_TRAIN and card["sizes"]["valid"]["documents"] == N_VALID
    tokens, _, _ = load_token_stream(built["hub"] / "train.npz")
    assert card["sizes"]["train"]["tokens"] == len(tokens)
    assert card["params"]["hub_ids"] == {
        "train": DATASETS["codeparrot_ds"].hub_id,
        "valid": DATASETS["codeparrot_ds_valid"].hub_id,
    }


def test_a_sample_keeps_the_first_shuffled_train_files_and_the_first_valid_files(built, tmp_path):
    out = tmp_path / "sample"
    assert hub_tokens(out, built["hf"], built["mirror"], built["vocab_size"], train_files=6, valid_files=2, seed=3) == 0
    order = np.random.default_rng(3).permutation(N_TRAIN)[:6]
    assert read_npz(out / "train.npz")[0]["paths"].tolist() == [FILES["train"][i][0] for i in order]
    assert read_npz(out / "valid.npz")[0]["paths"].tolist() == [p for p, _ in FILES["valid"][:2]]


def test_the_training_step_reads_the_hub_token_files_unchanged(built, tmp_path):
    """`train lm`, as rule simplified_blocks_train calls it, on the hub token files: a few steps."""
    config = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())
    spec = merged_run_config(config, SB, "pre_ln", 0)
    spec["model"].update(n_layers=1, d_model=16, n_heads=2, d_ff=32, max_seq_len=8)
    spec["train"].update(steps=3, batch_size=2, eval_every=3, log_every=1, checkpoint_every=3)
    spec["train"].pop("time_budget_s", None)
    chunks = load_token_chunks(built["hub"] / "valid.npz", 8)
    assert chunks.shape[1] == 8 and len(chunks) >= 2
    run = tmp_path / "run"
    rc = main(
        [
            "train",
            "lm",
            "--spec",
            json.dumps(spec),
            "--train-tokens",
            str(built["hub"] / "train.npz"),
            "--valid-tokens",
            str(built["hub"] / "valid.npz"),
            "--eval-chunks",
            "2",
            "--heldout-chunks",
            "4",
            "--run-dir",
            str(run),
        ]
    )
    assert rc == 0
    assert (run / "model.safetensors").is_file() and (run / "heldout.json").is_file()
    evals = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert any("eval_loss" in row for row in evals)


def test_a_tokenizer_of_another_size_than_the_config_is_refused(built, tmp_path, capsys):
    rc = hub_tokens(tmp_path / "x", built["hf"], built["mirror"], 50000)
    assert rc == 1
    err = capsys.readouterr().err
    assert "has 300 ids" in err and "vocab_size is 50000" in err
    assert not (tmp_path / "x" / "train.npz").exists()


def test_a_mirror_without_the_valid_split_is_a_clear_error(built, tmp_path, capsys):
    mirror = tmp_path / "mirror"
    write_jsonl(mirror / "codeparrot_ds" / "train.jsonl", [hub_row(p, c) for p, c in FILES["train"]])
    assert hub_tokens(tmp_path / "x", built["hf"], mirror, built["vocab_size"]) == 1
    assert "no validation.parquet, validation.jsonl or validation.csv" in capsys.readouterr().err


def test_only_the_paper_scale_reads_hub_data():
    configs = {
        name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text()) for name in ("smoke", "config", "paper")
    }
    assert configs["smoke"][SB]["data"]["source"] == configs["config"][SB]["data"]["source"] == "offline"
    paper = configs["paper"]
    assert paper[SB]["data"]["source"] == "hub"
    assert configs["smoke"][SB]["mlm"]["data"]["source"] == configs["config"][SB]["mlm"]["data"]["source"] == "offline"
    assert paper[SB]["mlm"]["data"]["source"] == "hub"
    # the models' vocabulary is the paper's tokenizer size, as in the parameter counts of Table 1
    assert merged_run_config(paper, SB, "pre_ln", 0)["model"]["vocab_size"] == paper[SB]["paper_size"]["vocab_size"]
    assert paper[SB]["model"]["max_seq_len"] == 128  # T = 128 (catalog §1)


def test_the_paper_dag_trains_on_the_hub_data_not_the_offline_corpus(planned_rules):
    """Decoder runs read simplified_blocks_hub_tokens; the masked-LM runs and GLUE fine-tuning read the
    hub text and GLUE files. (The smoke and laptop DAGs keep the offline rules: their data.source is
    offline, tested above, and every smoke run of the pipeline tests plans them.)"""
    paper = planned_rules(
        "config/paper.yaml",
        f"results/paper/{SB}/runs/pre_ln/seed0/model.safetensors",
        f"results/paper/{SB}/data/glue_scores.csv",
    )
    assert {
        "simplified_blocks_hub_tokens",
        "simplified_blocks_train",
        "simplified_blocks_mlm_hub_text",
        "simplified_blocks_mlm_hub_glue",
        "simplified_blocks_mlm_pretrain",
        "simplified_blocks_mlm_finetune",
    } <= paper
    offline = {
        "code_corpus",
        "code_tokenizer",
        "code_tokens",
        "simplified_blocks_mlm_prose",
        "simplified_blocks_mlm_tokens",
        "simplified_blocks_mlm_glue_data",
    }
    assert not paper & offline


class _FakeTable:
    """The part of a `datasets.Dataset` read_rows uses: len, iteration, select(indices)."""

    def __init__(self, rows):
        self.rows = list(rows)

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def select(self, indices):
        return _FakeTable([self.rows[int(i)] for i in indices])


def test_the_hub_path_reads_each_split_from_its_own_dataset_in_the_seeded_order(built, tmp_path, monkeypatch):
    """Without a mirror the rows come from `datasets.load_dataset` (a stand-in module here): the train
    split from codeparrot-ds-train in the seeded sample order, the valid split from
    codeparrot-ds-valid in hub order; the token files equal the mirror's."""
    import sys
    import types

    calls = []
    by_id = {DATASETS["codeparrot_ds"].hub_id: FILES["train"], DATASETS["codeparrot_ds_valid"].hub_id: FILES["valid"]}

    def load_dataset(hub_id, config, split, **kwargs):
        calls.append((hub_id, config, split, kwargs))
        return _FakeTable(hub_row(p, c) for p, c in by_id[hub_id])

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    out = tmp_path / "from_hub"
    assert (
        main(
            [
                *CODEPARROT,
                "--tokenizer",
                str(built["hf"]),
                "--out-dir",
                str(out),
                "--train-rows",
                str(N_TRAIN),
                "--valid-rows",
                str(N_VALID),
                "--shuffle-seed",
                "0",
                "--vocab-size",
                str(built["vocab_size"]),
            ]
        )
        == 0
    )
    assert calls == [
        ("huggingface-course/codeparrot-ds-train", None, "train", {}),
        ("huggingface-course/codeparrot-ds-valid", None, "validation", {}),
    ]
    for split in ("train", "valid"):
        hub, mirror = read_npz(out / f"{split}.npz")[0], read_npz(built["hub"] / f"{split}.npz")[0]
        for name in mirror:
            np.testing.assert_array_equal(hub[name], mirror[name])


def test_the_pile_is_streamed_and_cut_at_the_limit(monkeypatch):
    import sys
    import types

    from repro.data.errors import DataError
    from repro.hub.datasets import read_rows

    calls = []

    def load_dataset(hub_id, config, split, **kwargs):
        calls.append((hub_id, split, kwargs))
        return ({"text": f"document {i}"} for i in range(10**9))  # endless: only a stream can be read

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    rows = read_rows(DATASETS["pile"], "valid", limit=3)
    assert [r["text"] for r in rows] == ["document 0", "document 1", "document 2"]
    assert calls == [("monology/pile-uncopyrighted", "validation", {"streaming": True})]
    with pytest.raises(DataError, match="read as a stream: give a limit"):
        read_rows(DATASETS["pile"], "train")
