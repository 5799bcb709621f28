"""sixteen_heads at paper scale (data_source hub), offline: a tiny random HF BERT classifier with its own
WordPiece tokenizer saved to a directory stands for bert-base-uncased, tiny files in the hub's row formats
stand for MNLI, SST-2, WMT14 En-Fr and MTNT (a local mirror). The CLI steps hub-data -> convert ->
train --init-from -> ablate run on them end to end, as the paper-scale rules call them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

transformers = pytest.importorskip("transformers")

from repro import task_runs  # noqa: E402
from repro.cli import main  # noqa: E402
from repro.data.synthetic import generate_task, load_task  # noqa: E402
from repro.papers.sixteen_heads import runs  # noqa: E402
from repro.runs import load_model, read_model_config  # noqa: E402
from repro.training import TrainConfig  # noqa: E402
from repro.training.checkpoint import CheckpointError, load_initial_weights, read_tensors, sha256_file  # noqa: E402
from repro.training.config import TrainConfigError  # noqa: E402
from repro.training.trainer import identity_hash  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-5
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "is",
    "not",
    "on",
    "mat",
    "film",
    "good",
    "bad",
    "it",
    "was",
    "le",
    "la",
    "chat",
    "chien",
    "est",
    "sur",
    "tapis",
    "film",
    "bon",
    "mauvais",
    "lol",
    "u",
    "r",
    ".",
]
VOCAB = SPECIAL + list(dict.fromkeys(WORDS))
MNLI = {
    "train": [
        ("the cat sat on the mat", "a cat sat", 0),
        ("the dog ran", "the dog sat", 2),
        ("it was good", "it was not bad", 0),
        ("the film was bad", "the film was good", 2),
        ("a dog sat on a mat", "a dog is on the mat", 1),
        ("the cat ran", "the cat is bad", 1),
        ("the mat is good", "the mat is not good", 2),
        ("a cat is not a dog", "a cat is a cat", 1),
    ],
    "validation_matched": [
        ("the dog sat", "a dog sat", 0),
        ("it is bad", "it is good", 2),
        ("the cat is on the mat", "the cat sat", 1),
    ],
    "validation_mismatched": [("lol the film", "the film is good", 1), ("u r bad", "it is bad", 0)],
}
SST2 = {
    "train": [("the film was good", 1), ("the film was bad", 0), ("not good", 0), ("good good film", 1)],
    "validation": [("it was good", 1), ("it was not good", 0)],
}
WMT = {
    "train": [
        ("the cat sat", "le chat est sur le tapis"),
        ("the dog ran", "le chien"),
        ("the film is good", "le film est bon"),
        ("the film is bad", "le film est mauvais"),
        ("a cat", "la chat"),
        ("the dog is on the mat", "le chien est sur le tapis"),
    ],
    "validation": [("the cat is good", "le chat est bon"), ("the dog", "le chien")],
    "test": [("the mat", "le tapis"), ("a dog sat", "la chien est")],
}
MTNT = [("lol the cat", "lol le chat"), ("u r good", "u r bon")]
PAIRS = [("the cat sat", "a cat sat", 1), ("the dog ran", "the mat is good", 0), ("it was bad", "it was not good", 1)]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_mirror(root: Path) -> None:
    """Rows in each hub dataset's own format, under MIRROR/<dataset>/<hub split>.jsonl."""
    for split, rows in MNLI.items():
        write_jsonl(
            root / "mnli" / f"{split}.jsonl",
            [{"premise": p, "hypothesis": h, "label": y, "idx": i} for i, (p, h, y) in enumerate(rows)],
        )
    for split, rows in SST2.items():
        write_jsonl(
            root / "sst2" / f"{split}.jsonl", [{"sentence": s, "label": y, "idx": i} for i, (s, y) in enumerate(rows)]
        )
    for split, rows in WMT.items():  # wmt14's rows nest the pair under "translation"
        write_jsonl(root / "mt" / f"{split}.jsonl", [{"translation": {"en": e, "fr": f}} for e, f in rows])
    write_jsonl(root / "mtnt" / "test.jsonl", [{"en": e, "fr": f} for e, f in MTNT])
    for split in ("train", "validation"):  # CoLA, MRPC and IWSLT (German side: the few words the vocabulary has)
        write_jsonl(
            root / "cola" / f"{split}.jsonl",
            [{"sentence": a, "label": y, "idx": i} for i, (a, _, y) in enumerate(PAIRS)],
        )
        write_jsonl(
            root / "mrpc" / f"{split}.jsonl",
            [{"sentence1": a, "sentence2": b, "label": y, "idx": i} for i, (a, b, y) in enumerate(PAIRS)],
        )
    for split in ("train", "validation", "test"):
        write_jsonl(root / "iwslt" / f"{split}.jsonl", [{"translation": {"de": f, "en": e}} for e, f in WMT["train"]])


def tiny_bert() -> torch.nn.Module:
    cfg = transformers.BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=40,
        max_position_embeddings=64,
        type_vocab_size=2,
        num_labels=2,
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(cfg).eval()
    with torch.no_grad():  # random norms and biases too, so every mapped weight matters
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.randn_like(p) * 0.3 + (1.0 if "LayerNorm.weight" in name else 0.0))
    return model


def save_checkpoint(directory: Path) -> torch.nn.Module:
    """The tiny BERT and its WordPiece tokenizer, saved as a pretrained checkpoint directory."""
    directory.mkdir(parents=True, exist_ok=True)
    tok = transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB)}, do_lower_case=True)
    tok.save_pretrained(directory)
    model = tiny_bert()
    model.save_pretrained(directory)
    return model


def cls_spec(steps: int = 6) -> dict:
    return {
        "family": "cls",
        "model": {"n_layers": 2, "d_model": 32, "n_heads": 4, "d_ff": 40},
        "train": {
            "steps": steps,
            "batch_size": 4,
            "lr": 1e-3,
            "schedule": "linear",
            "warmup_fraction": 0.1,
            "weight_decay": 0.01,
            "eval_every": 0,
            "log_every": 2,
            "seed": 0,
        },
        "label_smoothing": 0.0,
        "init_from": "tiny-bert",
    }


def analysis_spec(task: str, selection: str) -> dict:
    return {
        "task": task,
        "seed": 0,
        "data_seed": 0,
        "selection": selection,
        "main": True,
        "analysis": {
            "selection_examples": 4,
            "importance_examples": 8,
            "eval_batch_size": 4,
            "sweep_batch_rows": 8,
            "random_orders": 1,
            "bootstrap_resamples": 50,
            "alpha": 0.01,
            "decode_extra_tokens": 4,
        },
        "label_smoothing": 0.0,
    }


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory):
    """hub-data (every task), convert and fine-tune (nli) through the CLI."""
    root = tmp_path_factory.mktemp("sh_hub")
    checkpoint = root / "tiny-bert"
    hf = save_checkpoint(checkpoint)
    mirror = root / "mirror"
    write_mirror(mirror)
    tasks = root / "hub_tasks"
    sizes = {
        "nli": ["train=8", "selection=3", "test=3", "test_mismatched=2"],
        "sst2": ["train=4", "selection=2", "test=2"],
        "mt": ["train=6", "selection=2", "test=2", "test_ood=2"],
        "cola": ["train=3", "selection=2", "test=2"],
        "mrpc": ["train=3", "selection=2", "test=2"],
        "iwslt": ["train=6", "valid=2", "test=2"],
    }
    for task, task_sizes in sizes.items():
        options = ["--final-sep"] if task not in ("mt", "iwslt") else []
        args = [
            "sixteen_heads",
            "hub-data",
            "--task",
            task,
            "--tokenizer",
            str(checkpoint),
            "--max-len",
            "32",
            "--seed",
            "0",
            "--mirror",
            str(mirror),
            "--out",
            str(tasks / f"{task}.npz"),
            *options,
        ]
        assert main(args + [a for s in task_sizes for a in ("--size", s)]) == 0, task
    converted = root / "pretrained" / "cls"
    assert main(["sixteen_heads", "convert", "--checkpoint", str(checkpoint), "--out-dir", str(converted)]) == 0
    run = root / "runs" / "nli" / "seed0"
    assert (
        main(
            [
                "sixteen_heads",
                "train",
                "--task-file",
                str(tasks / "nli.npz"),
                "--spec",
                json.dumps(cls_spec()),
                "--run-dir",
                str(run),
                "--init-from",
                str(converted),
            ]
        )
        == 0
    )
    return {
        "root": root,
        "hf": hf,
        "checkpoint": checkpoint,
        "tasks": tasks,
        "converted": converted,
        "run": run,
        "mirror": mirror,
    }


def tokenizer(paper_run):
    return transformers.AutoTokenizer.from_pretrained(paper_run["checkpoint"])


# -- task files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["nli", "sst2", "cola", "mrpc", "mt", "iwslt"])
def test_hub_task_file_has_the_synthetic_layout(paper_run, task):
    hub = load_task(paper_run["tasks"] / f"{task}.npz", task)
    synthetic = generate_task(task, 0, sizes={split: 4 for split in hub.splits})
    assert sorted(hub.splits) == sorted(synthetic.splits)
    for split in hub.splits:
        assert sorted(hub.splits[split]) == sorted(synthetic.splits[split]), split
        for name, values in hub.splits[split].items():
            assert values.dtype == synthetic.splits[split][name].dtype == np.int64, (split, name)
            assert values.ndim == synthetic.splits[split][name].ndim, (split, name)
    for key in ("metric", "shifted_splits"):
        assert hub.meta.get(key) == synthetic.meta.get(key), key
    assert len(hub.meta["label_names"] or []) == len(synthetic.meta["label_names"] or [])


def test_nli_rows_are_berts_own_pair_encoding(paper_run):
    """Each MNLI row is exactly what BERT's tokenizer makes of the pair, with its token types; test is
    validation_matched in order, the train split a sample of all training rows."""
    tok = tokenizer(paper_run)
    task = load_task(paper_run["tasks"] / "nli.npz", "nli")
    test = task.splits["test"]
    for row, (premise, hypothesis, label) in enumerate(MNLI["validation_matched"]):
        enc = tok(premise, hypothesis)
        n = int(test["lengths"][row])
        assert test["input_ids"][row, :n].tolist() == enc["input_ids"]
        assert test["segment_ids"][row, :n].tolist() == enc["token_type_ids"]
        assert not test["input_ids"][row, n:].any()  # padded with 0 = [PAD]
        assert test["labels"][row] == label
    shifted = task.splits["test_mismatched"]
    assert shifted["labels"].tolist() == [y for _, _, y in MNLI["validation_mismatched"]]
    train = task.splits["train"]
    rows = {tuple(train["input_ids"][i, : train["lengths"][i]].tolist()) for i in range(len(train["labels"]))}
    assert rows == {tuple(tok(p, h)["input_ids"]) for p, h, _ in MNLI["train"]}
    assert task.meta["special_ids"]["sep"] == tok.sep_token_id and runs.separator_id(task) == tok.sep_token_id
    # the model's separator-derived token types are the tokenizer's
    from repro.models.transformer import segment_ids

    derived = segment_ids(torch.from_numpy(test["input_ids"]), tok.sep_token_id, 2)
    real = torch.from_numpy(test["input_ids"]) != 0
    assert torch.equal(derived[real], torch.from_numpy(test["segment_ids"])[real])


def test_translation_rows_come_from_wmt_and_mtnt(paper_run):
    tok = tokenizer(paper_run)
    task = load_task(paper_run["tasks"] / "mt.npz", "mt")
    bos, eos = runs.special_id(task, "bos"), runs.special_id(task, "eos")
    assert (bos, eos) == (tok.cls_token_id, tok.sep_token_id)
    expected = {"test": WMT["validation"], "selection": WMT["test"], "test_ood": MTNT}  # newstest2013 is the test set
    for split, pairs in expected.items():
        arrays = task.splits[split]
        for row, (en, fr) in enumerate(pairs):
            src = arrays["src"][row, : arrays["src_lengths"][row]].tolist()
            tgt = arrays["tgt"][row, : arrays["tgt_lengths"][row]].tolist()
            assert src == tok.encode(en, add_special_tokens=False) + [eos]
            assert tgt == [bos] + tok.encode(fr, add_special_tokens=False) + [eos]
    assert task.meta["shifted_splits"] == ["test_ood"] and task.meta["metric"] == "bleu"


def test_hub_data_errors_name_the_problem(paper_run, tmp_path, capsys):
    base = [
        "sixteen_heads",
        "hub-data",
        "--task",
        "mt",
        "--tokenizer",
        str(paper_run["checkpoint"]),
        "--max-len",
        "32",
        "--out",
        str(tmp_path / "mt.npz"),
    ]
    assert main(base + ["--size", "test_ood=2"]) == 2  # MTNT has no hub copy: without a mirror it cannot be read
    assert "mtnt" in capsys.readouterr().err
    assert main(base + ["--size", "valid=2", "--mirror", str(paper_run["mirror"])]) == 2
    assert "no hub split(s) ['valid']" in capsys.readouterr().err


# -- conversion and fine-tuning -----------------------------------------------------------------------


def pair_batch(tok) -> dict:
    pairs = [("the cat sat on the mat", "a cat sat"), ("it was good", "it was not bad"), ("the dog", "lol")]
    return tok([p for p, _ in pairs], [h for _, h in pairs], padding=True, return_tensors="pt")


def test_converted_bert_computes_the_hf_function(paper_run):
    """The converted checkpoint's logits equal the HF model's; the run's model, which derives token types
    from the separators, equals HF given BERT's token_type_ids."""
    tok = tokenizer(paper_run)
    batch = pair_batch(tok)
    with torch.no_grad():
        expected = paper_run["hf"](**batch).logits
        converted = load_model(paper_run["converted"])
        mask = batch["attention_mask"].bool()
        plain = converted(batch["input_ids"], padding_mask=mask, token_type_ids=batch["token_type_ids"])
        cfg = read_model_config(paper_run["converted"])
        typed = task_runs.build_model("cls", {"model": replace(cfg, type_sep_id=tok.sep_token_id)})
        load_initial_weights(typed, paper_run["converted"] / "model.safetensors")
        derived = typed.eval()(batch["input_ids"], padding_mask=mask)
    assert (plain - expected).abs().max() < TOL
    assert (derived - expected).abs().max() < TOL
    record = json.loads((paper_run["converted"] / "convert.json").read_text())
    assert record["checkpoint"] == str(paper_run["checkpoint"]) and record["new_head"] == ["classifier."]


def test_fine_tuned_run_starts_from_the_pretrained_body(paper_run):
    """The run loads as a token-typed BERT with the task's 3 classes; its identity names the checkpoint
    and the hash of the converted weights; every pretrained tensor moved under fine-tuning but started
    from the checkpoint (rebuilding the step-0 model reproduces the converted body exactly)."""
    family, model = task_runs.load_run_model(paper_run["run"])
    assert family == "cls" and model.cfg.type_sep_id is not None
    assert model.cfg.n_classes == 3 and model.cfg.n_token_types == 2 and model.cfg.embed_norm
    run = json.loads((paper_run["run"] / "run.json").read_text())
    digest = sha256_file(paper_run["converted"] / "model.safetensors")
    assert run["config"]["init_from"] == f"tiny-bert@sha256:{digest[:16]}"
    pretrained = read_tensors(paper_run["converted"] / "model.safetensors")
    trained = model.state_dict()
    body = [k for k in trained if not k.startswith("classifier.")]
    assert set(body) <= set(pretrained)
    assert any(not torch.equal(trained[k], pretrained[k]) for k in body), "fine-tuning changed nothing"
    # step 0, rebuilt as the train step builds it: the body is the checkpoint, the classifier the seeded init
    from repro.training.seeding import derive_seed

    cfg = model.cfg
    torch.manual_seed(derive_seed(0, "init"))
    fresh = task_runs.build_model("cls", {"model": cfg})
    head = {k: v.clone() for k, v in fresh.state_dict().items() if k.startswith("classifier.")}
    kept = load_initial_weights(fresh, paper_run["converted"] / "model.safetensors", keep_init=("classifier.",))
    assert kept == ["classifier.weight", "classifier.bias"]
    state = fresh.state_dict()
    # exact: tensors loaded from the file, and a clone of the same seeded init
    assert all(torch.equal(state[k], pretrained[k]) for k in body)
    assert all(torch.equal(state[k], head[k]) for k in kept) and not head["classifier.bias"].any()


def test_ablation_runs_on_the_fine_tuned_bert(paper_run, tmp_path):
    out = tmp_path / "nli_seed0_ablation.csv"
    assert (
        main(
            [
                "sixteen_heads",
                "ablate",
                "--model",
                str(paper_run["run"] / "model.safetensors"),
                "--task-file",
                str(paper_run["tasks"] / "nli.npz"),
                "--spec",
                json.dumps(analysis_spec("nli", "train")),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    df = pd.read_csv(out)
    single = df[(df["experiment"] == "single") & (df["set"] == "test")]
    assert len(single) == 2 * 4  # every head of the 2x4 BERT
    assert set(df["set"]) == {"test", "shifted", "selection"}


def test_translation_trains_from_scratch_on_hub_data_and_decodes(paper_run, tmp_path):
    spec = {
        "family": "s2s",
        "model": {
            "n_layers": 1,
            "d_model": 16,
            "n_heads": 2,
            "d_ff": 32,
            "max_seq_len": 32,
            "block": "post_ln",
            "position": "sinusoidal",
        },
        "train": {
            "steps": 3,
            "batch_size": 2,
            "lr": 1e-3,
            "schedule": "inverse_sqrt",
            "warmup_fraction": 0.34,
            "eval_every": 0,
            "log_every": 1,
            "seed": 0,
        },
        "label_smoothing": 0.1,
    }
    run = tmp_path / "mt" / "seed0"
    task_file = str(paper_run["tasks"] / "mt.npz")
    assert (
        main(["sixteen_heads", "train", "--task-file", task_file, "--spec", json.dumps(spec), "--run-dir", str(run)])
        == 0
    )
    assert json.loads((run / "run.json").read_text())["config"]["init_from"] is None  # trained from scratch
    out = tmp_path / "mt_seed0_ablation.csv"
    assert (
        main(
            [
                "sixteen_heads",
                "ablate",
                "--model",
                str(run / "model.safetensors"),
                "--task-file",
                task_file,
                "--spec",
                json.dumps(analysis_spec("mt", "selection")),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    df = pd.read_csv(out)
    assert set(df["type"].dropna()) == {"enc_self", "dec_self", "cross"} and (df["metric"] == "bleu").all()


def test_init_from_refuses_what_it_cannot_start(paper_run, tmp_path, capsys):
    spec = dict(cls_spec(), family="s2s")
    args = [
        "sixteen_heads",
        "train",
        "--task-file",
        str(paper_run["tasks"] / "mt.npz"),
        "--spec",
        json.dumps(spec),
        "--run-dir",
        str(tmp_path / "a"),
        "--init-from",
        str(paper_run["converted"]),
    ]
    assert main(args) == 2 and "family 's2s' has no converted checkpoint" in capsys.readouterr().err
    wide = dict(cls_spec(), model={"n_layers": 2, "d_model": 64, "n_heads": 4, "d_ff": 40})
    args = [
        "sixteen_heads",
        "train",
        "--task-file",
        str(paper_run["tasks"] / "nli.npz"),
        "--spec",
        json.dumps(wide),
        "--run-dir",
        str(tmp_path / "b"),
        "--init-from",
        str(paper_run["converted"]),
    ]
    assert main(args) == 2 and "d_model (64 vs 32)" in capsys.readouterr().err
    synthetic = tmp_path / "nli_synthetic.npz"
    assert (
        main(["data", "synthetic", "--task", "nli", "--seed", "0", "--size", "train=8", "--out", str(synthetic)]) == 0
    )
    args = [
        "sixteen_heads",
        "train",
        "--task-file",
        str(synthetic),
        "--spec",
        json.dumps(cls_spec()),
        "--run-dir",
        str(tmp_path / "c"),
        "--init-from",
        str(paper_run["converted"]),
    ]
    assert main(args) == 2 and "tokenise the task with the checkpoint's tokenizer" in capsys.readouterr().err


# -- the training option and the configuration ---------------------------------------------------------


def test_the_starting_weights_are_part_of_the_identity():
    cfg = TrainConfig(steps=12, batch_size=8, lr=3e-2, warmup_steps=2, seed=1)
    assert cfg.init_from is None and cfg.result_fields()["init_from"] is None
    started = TrainConfig(steps=12, batch_size=8, lr=3e-2, warmup_steps=2, seed=1, init_from="bert@sha256:00")
    assert started.result_fields()["init_from"] == "bert@sha256:00"
    assert identity_hash({"train": started.result_fields()}) != identity_hash({"train": cfg.result_fields()})
    with pytest.raises(TrainConfigError, match="init_from"):
        TrainConfig(steps=12, batch_size=8, lr=3e-2, init_from="")


def test_load_initial_weights_checks_every_tensor(tmp_path):
    from repro.models import TransformerConfig
    from repro.training import save_weights

    cfg = TransformerConfig(
        vocab_size=11,
        n_layers=1,
        d_model=8,
        n_heads=2,
        d_ff=16,
        max_seq_len=8,
        causal=False,
        output="classifier",
        n_classes=2,
    )
    torch.manual_seed(0)
    source = task_runs.build_model("cls", {"model": cfg})
    save_weights(source, tmp_path / "w.safetensors")
    three = TransformerConfig(**dict(cfg.to_dict(), n_classes=3))
    target = task_runs.build_model("cls", {"model": three})
    with pytest.raises(CheckpointError, match="classifier.weight has shape"):
        load_initial_weights(target, tmp_path / "w.safetensors")
    assert load_initial_weights(target, tmp_path / "w.safetensors", keep_init=("classifier.",)) == [
        "classifier.weight",
        "classifier.bias",
    ]
    assert torch.equal(target.tok_emb.weight, source.tok_emb.weight)  # exact: a copy loaded from the file
    wider = task_runs.build_model("cls", {"model": TransformerConfig(**dict(cfg.to_dict(), d_ff=32))})
    with pytest.raises(CheckpointError, match="fc_in.weight has shape"):
        load_initial_weights(wider, tmp_path / "w.safetensors", keep_init=("classifier.",))


def test_scale_files_select_the_data_source():
    scales = {
        name: yaml.safe_load((ROOT / "config" / f"{name}.yaml").read_text())["sixteen_heads"]
        for name in ("smoke", "config", "paper")
    }
    assert scales["smoke"]["data_source"] == scales["config"]["data_source"] == "synthetic"
    paper = scales["paper"]
    assert paper["data_source"] == "hub"
    assert paper["hub"]["pretrained"] == {"cls": "bert-base-uncased", "s2s": None}
    assert paper["hub"]["tokenizers"]["cls"] == "bert-base-uncased"
    from repro.papers.sixteen_heads.paper_scale import HUB_SPLITS

    for task, settings in paper["tasks"].items():  # every split the paper scale names is built from the hub
        assert set(settings["sizes"]) <= set(HUB_SPLITS[task]), task
        assert settings["selection"] == "train" or settings["selection"] in settings["sizes"]
    # the paper's fine-tuning settings; exact: read from the YAML
    assert paper["families"]["cls"]["train"]["lr"] == 2.0e-5


def test_config_check_wants_the_checkpoints_own_tokenizer():
    from repro.papers.sixteen_heads.checks import check_section as check_config_section

    config = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    assert check_config_section(config, "sixteen_heads") == []
    config["sixteen_heads"]["hub"]["tokenizers"]["cls"] = "roberta-base"
    (problem,) = check_config_section(config, "sixteen_heads")
    assert "hub.tokenizers.cls is 'roberta-base'" in problem and "bert-base-uncased" in problem


def test_read_rows_samples_a_seeded_subset(paper_run):
    """shuffle_seed draws a seeded random sample (the same for the same seed) instead of the first rows."""
    from repro.hub.datasets import DATASETS, read_rows

    source = paper_run["mirror"] / "mnli"
    first = read_rows(DATASETS["mnli"], "train", source, limit=5)
    assert [r["idx"] for r in first] == [0, 1, 2, 3, 4]
    sample = [r["idx"] for r in read_rows(DATASETS["mnli"], "train", source, limit=5, shuffle_seed=0)]
    again = [r["idx"] for r in read_rows(DATASETS["mnli"], "train", source, limit=5, shuffle_seed=0)]
    assert sample == again and len(set(sample)) == 5 and set(sample) <= set(range(8))
    assert sample == np.random.default_rng(0).permutation(8)[:5].tolist()
    everything = [r["idx"] for r in read_rows(DATASETS["mnli"], "train", source, shuffle_seed=1)]
    assert sorted(everything) == list(range(8))
