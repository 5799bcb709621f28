"""layer_diversity at paper scale (data.source hub), offline: a tiny random HF Llama with its own word-level
tokenizer saved to a directory stands for a pretrained family, tiny files in the hub's row formats stand
for SST-2, RTE, AG News and ARC (a local mirror). The CLI steps hub-data -> train (convert) -> readout ->
collect run on them end to end; the converted run must compute the HF model's function."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from repro.cli import main  # noqa: E402
from repro.data.errors import DataError  # noqa: E402
from repro.data.synthetic import load_task  # noqa: E402
from repro.hub.datasets import DATASETS, Encoder, build_task  # noqa: E402
from repro.papers.layer_diversity.checks import check_section as check_config_section
from repro.papers.layer_diversity.specs import family_run_spec, hub_data_spec  # noqa: E402
from repro.runs import load_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TASKS = ["sent", "entail", "topic", "mc"]
TOL = 1e-5
SPECIAL = ["<pad>", "<unk>", "<bos>", "<eos>"]
WORDS = [
    "Answer:",
    "negative",
    "positive",
    "yes",
    "no",
    "world",
    "sports",
    "business",
    "technology",
    "A",
    "B",
    "C",
    "D",
    "A.",
    "B.",
    "C.",
    "D.",
    "a",
    "the",
    "film",
    "is",
    "good",
    "bad",
    "not",
    "team",
    "won",
    "market",
    "fell",
    "new",
    "chip",
    "war",
    "ended",
    "sky",
    "blue",
    "red",
    "green",
    "what",
    "color",
    "it",
    "rains",
    "wet",
    "dry",
    "cat",
    "sat",
]
VOCAB = SPECIAL + WORDS


def paper_config() -> dict:
    return yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())


def smoke_config() -> dict:
    return yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())


def save_tokenizer(directory: Path) -> None:
    """A word-level tokenizer (split on whitespace) saved as a transformers fast tokenizer."""
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    tok = tokenizers.Tokenizer(WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    tok.pre_tokenizer = WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>"
    )
    fast.save_pretrained(directory)


def tiny_llama() -> torch.nn.Module:
    cfg = transformers.LlamaConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=40,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        bos_token_id=2,
        eos_token_id=3,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg).double().eval()
    with torch.no_grad():  # random norms too, so every mapped weight matters
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn_like(p) * 0.3 + (1.0 if "norm" in name else 0.0))
    return model


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_mirror(root: Path) -> None:
    """Rows in each hub dataset's own format, under MIRROR/<task>/<hub split>.jsonl."""
    write_jsonl(
        root / "sent" / "validation.jsonl",
        [
            {"sentence": s, "label": y, "idx": i}
            for i, (s, y) in enumerate(
                [
                    ("the film is good", 1),
                    ("the film is bad", 0),
                    ("not good", 0),
                    ("a good film", 1),
                    ("bad bad film", 0),
                    ("the film is not bad", 1),
                    ("good", 1),
                    ("it is bad", 0),
                ]
            )
        ],
    )
    write_jsonl(
        root / "entail" / "validation.jsonl",
        [
            {"sentence1": a, "sentence2": b, "label": y, "idx": i}
            for i, (a, b, y) in enumerate(
                [
                    ("it rains", "it is wet", 0),
                    ("it rains", "it is dry", 1),
                    ("the cat sat", "a cat sat", 0),
                    ("the sky is blue", "the sky is red", 1),
                    ("it is dry", "not wet", 0),
                    ("the team won", "the team fell", 1),
                ]
            )
        ],
    )
    write_jsonl(
        root / "topic" / "test.jsonl",
        [
            {"text": t, "label": y}
            for t, y in [
                ("the war ended", 0),
                ("the team won", 1),
                ("the market fell", 2),
                ("a new chip", 3),
                ("war", 0),
                ("team", 1),
                ("market", 2),
                ("chip", 3),
                ("new war", 0),
            ]
        ],
    )
    colors = {"text": ["red", "blue", "green", "cat"], "label": ["A", "B", "C", "D"]}
    numbered = {"text": ["wet", "dry", "blue", "red"], "label": ["1", "2", "3", "4"]}  # some ARC rows number choices
    five = {"text": ["red", "blue", "green", "cat", "dry"], "label": ["A", "B", "C", "D", "E"]}  # dropped
    write_jsonl(
        root / "mc" / "test.jsonl",
        [
            {"id": str(i), "question": q, "choices": c, "answerKey": k}
            for i, (q, c, k) in enumerate(
                [
                    ("what color is the sky", colors, "B"),
                    ("what color is a cat", colors, "D"),
                    ("what is red", colors, "A"),
                    ("it is", five, "E"),
                    ("what is green", colors, "C"),
                    ("the sky is", colors, "B"),
                    ("the sky is", numbered, "3"),
                ]
            )
        ],
    )


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory):
    """hub-data, train (convert), readout and collect through the CLI, as the paper-scale rules call them."""
    root = tmp_path_factory.mktemp("ld_hub")
    checkpoint = root / "tiny-llama"
    hf = tiny_llama()
    hf.save_pretrained(checkpoint)
    save_tokenizer(checkpoint)
    write_mirror(root / "mirror")

    config = paper_config()
    section = config["layer_diversity"]
    section["families"] = ["llama"]
    section["depths"] = [2]
    section["data"]["mirror"] = str(root / "mirror")
    section["data"]["test_size"] = 7  # the first 7 rows of each split (some have fewer)
    section["variants"]["llama"]["hub"] = [str(checkpoint)]
    assert check_config_section(config, "layer_diversity") == []

    data = root / "data" / "tasks" / "llama"
    spec = hub_data_spec(config, "layer_diversity", "llama")
    assert (
        main(
            [
                "layer_diversity",
                "hub-data",
                "--tasks",
                *TASKS,
                "--tokenizer",
                spec["tokenizer"],
                "--out-dir",
                str(data),
                "--test-size",
                str(spec["test_size"]),
                "--train-sizes",
                json.dumps(spec["train_sizes"]),
                "--hub",
                json.dumps(spec["hub"]),
                "--max-tokens",
                str(spec["max_tokens"]),
                "--mirror",
                spec["mirror"],
            ]
        )
        == 0
    )
    run_spec = family_run_spec(config, "layer_diversity", "llama", seed=0)
    assert (
        main(
            [
                "layer_diversity",
                "train",
                "--spec",
                json.dumps(run_spec),
                "--data-dir",
                str(data),
                "--runs-root",
                str(root / "runs"),
            ]
        )
        == 0
    )
    run = root / "runs" / "llama" / "L2" / "seed0"
    readout = root / "readout" / "llama_seed0"
    assert (
        main(
            [
                "layer_diversity",
                "readout",
                "--runs",
                str(run),
                "--family",
                "llama",
                "--seed",
                "0",
                "--data-dir",
                str(data),
                "--tasks",
                *TASKS,
                "--out-dir",
                str(readout),
            ]
        )
        == 0
    )
    collected = root / "collected"
    assert (
        main(
            [
                "layer_diversity",
                "collect",
                "--inputs",
                str(readout),
                "--data-dir",
                str(data),
                "--tasks",
                *TASKS,
                "--stands-for",
                json.dumps({t: e["stands_for"] for t, e in section["data"]["tasks"].items()}),
                "--out-dir",
                str(collected),
            ]
        )
        == 0
    )
    return {
        "root": root,
        "hf": hf,
        "checkpoint": checkpoint,
        "data": data,
        "run": run,
        "readout": readout,
        "collected": collected,
        "config": config,
    }


def _label_logits(logits: torch.Tensor, task) -> torch.Tensor:
    """[N, K] logits of the label words at each row's answer position."""
    test = task.tensors("test")
    rows = torch.arange(len(test["answer_pos"]))
    return logits[rows, test["answer_pos"]][:, task.meta["label_token_ids"]]


def test_hub_rows_become_prompt_files_tokenised_by_the_family_tokenizer(paper_run):
    task = load_task(paper_run["data"] / "sent.npz", "sent")
    ids = {w: i for i, w in enumerate(VOCAB)}
    test = task.splits["test"]
    # row 0: "the film is good", label positive -> <bos> the film is good Answer: positive
    row = [ids[w] for w in ["<bos>", "the", "film", "is", "good", "Answer:", "positive"]]
    assert test["input_ids"][0, :7].tolist() == row and int(test["answer_pos"][0]) == 5
    assert task.meta["label_token_ids"] == [ids["negative"], ids["positive"]]
    assert test["labels"].tolist() == [1, 0, 0, 1, 0, 1, 1]  # test_size 7 of the 8 rows, in file order
    assert list(task.splits) == ["test"]  # train_size 0 at paper scale: prompted zero-shot
    mc = load_task(paper_run["data"] / "mc.npz", "mc")
    assert mc.meta["sizes"]["test"] == 6 and mc.meta["dropped_rows"] == 1  # the five-choice question
    assert mc.meta["label_token_ids"] == [ids[c] for c in "ABCD"]
    numbered = mc.splits["test"]["input_ids"][5].tolist()  # choices 1-4 shown as A-D, answer "3" read as C
    words = ["<bos>", "the", "sky", "is", "A.", "wet", "B.", "dry", "C.", "blue", "D.", "red", "Answer:", "C"]
    assert numbered[: len(words)] == [ids[w] for w in words] and mc.splits["test"]["labels"][5] == 2
    assert mc.meta["tokenizer"] == str(paper_run["checkpoint"])


def test_converted_run_computes_the_pretrained_models_logits(paper_run):
    model = load_model(paper_run["run"]).double()
    assert model.cfg.n_layers == 2 and model.cfg.vocab_size == len(VOCAB)
    for name in TASKS:
        ids = load_task(paper_run["data"] / f"{name}.npz", name).tensors("test")["input_ids"]
        with torch.no_grad():
            ours, theirs = model(ids), paper_run["hf"](ids).logits
        assert ours.shape == theirs.shape and (ours - theirs).abs().max().item() < TOL
    record = json.loads((paper_run["run"] / "run.json").read_text())
    assert record["trained"] is False and record["checkpoint"] == str(paper_run["checkpoint"])
    assert any("grouped-query" in note for note in record["notes"])


def test_readout_identities_hold_and_accuracy_is_the_pretrained_models(paper_run):
    checks = pd.read_csv(paper_run["readout"] / "checks.csv")
    assert len(checks) == 4
    # float64: the module members sum to the final stream and to the logits; the module-form MSE equals the model's
    assert (checks[["stream_error", "logit_error", "module_mse_error"]] < 1e-9).all().all()
    units = pd.read_csv(paper_run["readout"] / "units.csv")  # full precision (the collected CSVs round)
    final = units[(units["form"] == "lens") & (units["target"] == "onehot") & (units["prefix"] == 2)].set_index("task")
    depth = pd.read_csv(paper_run["collected"] / "fig06_depth.csv").set_index("task")
    for name in TASKS:
        task = load_task(paper_run["data"] / f"{name}.npz", name)
        with torch.no_grad():
            z = _label_logits(paper_run["hf"](task.tensors("test")["input_ids"]).logits, task)
        hf_accuracy = float((z.argmax(dim=1).numpy() == task.splits["test"]["labels"]).mean())
        # exact: both are k/n shares of integer counts (units.csv keeps 17 digits); the argmaxes agree, the
        # smallest gap between label logits being far above rounding
        assert final.loc[name, "layer_accuracy"] == hf_accuracy
        assert depth.loc[name, "accuracy"] == pytest.approx(hf_accuracy, abs=1e-9)
    # one depth-2 model: 3 lens prefixes + 1 module unit per task and target (onehot, soft, ...)
    lens = units[(units["form"] == "lens") & (units["target"] == "onehot")]
    assert sorted(lens["prefix"].unique().tolist()) == [0, 1, 2]
    assert np.allclose(lens["mse"], lens["bias"] - lens["diversity"], atol=1e-9)


def test_table01_describes_hub_tasks(paper_run):
    tasks = pd.read_csv(paper_run["collected"] / "table01_tasks.csv").set_index("task")
    assert tasks.loc["topic", "label_words"] == "world sports business technology"
    assert tasks.loc["sent", "stands_for"] == "SST-2" and tasks.loc["entail", "test_examples"] == 6
    assert (tasks["train_examples"] == 0).all() and (tasks["train_max_class"] == 0).all()
    assert tasks.loc["mc", "test_min_class"] == 1 and tasks.loc["mc", "test_max_class"] == 2  # B and C twice
    assert (tasks["tokenizer"] == str(paper_run["checkpoint"])).all()


def test_convert_refuses_a_depth_that_is_not_the_models(paper_run, capsys):
    spec = family_run_spec(paper_run["config"], "layer_diversity", "llama", seed=0)
    spec["depths"] = [3]
    code = main(
        [
            "layer_diversity",
            "train",
            "--spec",
            json.dumps(spec),
            "--data-dir",
            str(paper_run["data"]),
            "--runs-root",
            str(paper_run["root"] / "bad_runs"),
        ]
    )
    assert code == 2 and "has 2 layers but layer_diversity.depths gives 3" in capsys.readouterr().err
    assert not (paper_run["root"] / "bad_runs").exists()


def test_config_check_pairs_each_depth_with_one_checkpoint():
    config = paper_config()
    assert check_config_section(config, "layer_diversity") == []
    config["layer_diversity"]["variants"]["phi"]["hub"] = []
    problems = check_config_section(config, "layer_diversity")
    assert len(problems) == 1 and "variants.phi.hub lists 0 checkpoint(s)" in problems[0]


def test_synthetic_specs_are_unchanged():
    """The smoke/laptop train spec carries no hub key (its JSON, a Snakemake param, stays byte-identical)."""
    spec = family_run_spec(smoke_config(), "layer_diversity", "llama", seed=0)
    assert sorted(spec) == [
        "depths",
        "eval_examples",
        "family",
        "label_weight",
        "model",
        "seed",
        "source",
        "tasks",
        "train",
    ]
    assert spec["source"] == "synthetic"
    paper = family_run_spec(paper_config(), "layer_diversity", "mistral", seed=0)
    assert paper["hub"] == ["mistralai/Mistral-7B-v0.1"] and paper["depths"] == [32]


def test_sentencepiece_label_words_are_read_after_the_answer_marker(tmp_path):
    """A SentencePiece-like encoder gives a lone " yes" a bare "▁" first; in context the word's piece is used."""
    pieces = ["<pad>", "<bos>", "▁", "▁Answer:", "▁yes", "▁no", "▁it", "▁rains", "▁is", "▁wet"]
    ids = {p: i for i, p in enumerate(pieces)}

    def encode(text: str) -> list[int]:
        return ([ids["▁"]] if text.startswith(" ") else []) + [ids["▁" + w] for w in text.split()]

    encoder = Encoder(encode=encode, vocab_size=len(pieces), name="pieces", bos_id=1)
    write_jsonl(tmp_path / "validation.jsonl", [{"sentence1": "it rains", "sentence2": "it is wet", "label": 0}])
    task = build_task(DATASETS["entail"], encoder, source=tmp_path, splits=["test"])
    assert task.meta["label_token_ids"] == [ids["▁yes"], ids["▁no"]]
    row = task.splits["test"]["input_ids"][0].tolist()
    assert row[-2:] == [ids["▁Answer:"], ids["▁yes"]] and int(task.splits["test"]["answer_pos"][0]) == len(row) - 2


def test_hub_data_step_names_a_task_that_is_not_a_prompt_task(tmp_path, capsys, paper_run):
    code = main(
        [
            "layer_diversity",
            "hub-data",
            "--tasks",
            "sent",
            "--tokenizer",
            str(paper_run["checkpoint"]),
            "--out-dir",
            str(tmp_path),
            "--test-size",
            "2",
            "--max-tokens",
            "64",
            "--hub",
            json.dumps({"mnli": "nyu-mll/glue:mnli"}),
        ]
    )
    assert code == 2 and "mnli" in capsys.readouterr().err


def test_an_answer_key_outside_the_label_words_is_named(tmp_path):
    ids = {w: i for i, w in enumerate(VOCAB)}
    encoder = Encoder(encode=lambda text: [ids[w] for w in text.split()], vocab_size=len(VOCAB), name="words", bos_id=2)
    colors = {"text": ["red", "blue", "green", "cat"], "label": ["A", "B", "C", "D"]}
    write_jsonl(tmp_path / "test.jsonl", [{"question": "the sky is", "choices": colors, "answerKey": "Z"}])
    with pytest.raises(DataError, match="label 'Z' is not one of"):
        build_task(DATASETS["mc"], encoder, source=tmp_path, splits=["test"])


def test_phi_checkpoint_converts_and_its_readout_carries_the_lm_bias(paper_run, tmp_path):
    """Phi's parallel block and partial rotary convert exactly; its LM-head bias goes to the embedding
    member, so the module contributions still sum to the model's own logits."""
    cfg = transformers.PhiConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=40,
        max_position_embeddings=64,
        partial_rotary_factor=0.5,
    )
    torch.manual_seed(1)
    hf = transformers.PhiForCausalLM(cfg).double().eval()
    with torch.no_grad():
        for name, p in hf.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn_like(p) * 0.3 + (1.0 if "norm" in name and "weight" in name else 0.0))
    hf.save_pretrained(tmp_path / "tiny-phi")
    spec = family_run_spec(paper_run["config"], "layer_diversity", "llama", seed=0)
    spec.update(family="phi", hub=[str(tmp_path / "tiny-phi")])
    assert (
        main(
            [
                "layer_diversity",
                "train",
                "--spec",
                json.dumps(spec),
                "--data-dir",
                str(paper_run["data"]),
                "--runs-root",
                str(tmp_path / "runs"),
            ]
        )
        == 0
    )
    run = tmp_path / "runs" / "phi" / "L2" / "seed0"
    task = load_task(paper_run["data"] / "mc.npz", "mc")
    ids = task.tensors("test")["input_ids"]
    with torch.no_grad():
        assert (load_model(run).double()(ids) - hf(ids).logits).abs().max().item() < TOL
    assert (
        main(
            [
                "layer_diversity",
                "readout",
                "--runs",
                str(run),
                "--family",
                "phi",
                "--seed",
                "0",
                "--data-dir",
                str(paper_run["data"]),
                "--tasks",
                "mc",
                "--out-dir",
                str(tmp_path / "readout"),
            ]
        )
        == 0
    )
    checks = pd.read_csv(tmp_path / "readout" / "checks.csv")
    assert hf.lm_head.bias.detach()[task.meta["label_token_ids"]].abs().max().item() > 0.1  # a bias to carry
    assert checks["stream_error"].iloc[0] < 1e-9
    assert checks["logit_error"].iloc[0] < 1e-9
