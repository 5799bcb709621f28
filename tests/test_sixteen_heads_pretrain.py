"""The masked-LM pre-training of a classifier body (`sixteen_heads pretrain`) and fine-tuning from it."""

from __future__ import annotations

import json

import pytest
import torch

from repro import task_runs
from repro.cli import main
from repro.data.synthetic import generate_task
from repro.data.synthetic.storage import write_task
from repro.training.checkpoint import read_tensors
from repro.training.tasks import MaskedLMTask

MODEL = {
    "n_layers": 1,
    "d_model": 16,
    "n_heads": 2,
    "d_ff": 32,
    "max_seq_len": 40,
    "pool": "first",
    "pooler": True,
    "n_token_types": 2,
}
TRAIN = {"batch_size": 8, "lr": 1e-3, "schedule": "constant", "log_every": 5, "eval_every": 0, "checkpoint_every": 0}


def pretrain(task_file, run_dir, steps: int) -> int:
    spec = {"model": MODEL, "train": dict(TRAIN, steps=steps, seed=100), "mask_prob": 0.15}
    args = ["--task-file", str(task_file), "--spec", json.dumps(spec), "--run-dir", str(run_dir)]
    return main(["sixteen_heads", "pretrain", *args])


@pytest.fixture(scope="module")
def task_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("task") / "nli.npz"
    write_task(path, generate_task("nli", 0, sizes={"train": 32, "selection": 8, "test": 8, "test_mismatched": 8}))
    return path


def test_fine_tuning_starts_from_the_pretrained_body_with_a_new_pooler_and_classifier(task_file, tmp_path, capsys):
    body = tmp_path / "body"
    assert pretrain(task_file, body, steps=3) == 0
    pretrained = read_tensors(body / "model.safetensors")
    assert not any(name.startswith(("pooler.", "classifier.")) for name in pretrained)

    run = tmp_path / "run"
    spec = {"family": "cls", "model": MODEL, "train": dict(TRAIN, steps=1, seed=0, lr=1e-6)}
    assert (
        main(
            [
                "sixteen_heads",
                "train",
                "--task-file",
                str(task_file),
                "--spec",
                json.dumps(spec),
                "--run-dir",
                str(run),
                "--init-from",
                str(body),
            ]
        )
        == 0
    )
    assert "new: pooler.weight, pooler.bias, classifier.weight, classifier.bias" in capsys.readouterr().err
    _, model = task_runs.load_run_model(run)
    tuned = dict(model.state_dict())
    shared = sorted(set(tuned) & set(pretrained))
    assert "type_emb.weight" in shared and sum(name.startswith("blocks.0.") for name in shared) >= 8
    for name in shared:
        torch.testing.assert_close(tuned[name], pretrained[name], rtol=0, atol=1e-5)  # one step at lr 1e-6
    # The body's weights enter the run's identity (TrainConfig.init_from: name and hash).
    assert '"init_from": "body@sha256:' in (run / "run.json").read_text()


def test_pretraining_refuses_a_task_without_labels_or_mask(tmp_path, capsys):
    mt = tmp_path / "mt.npz"
    write_task(mt, generate_task("mt", 0, sizes={"train": 8, "selection": 2, "test": 2, "test_ood": 2}))
    assert pretrain(mt, tmp_path / "x", steps=1) == 2
    assert "not a classification task" in capsys.readouterr().err


def test_masked_lm_with_a_pad_id_never_selects_padding_and_masks_attention():
    tokens = torch.tensor([[5, 6, 7, 0, 0], [8, 9, 0, 0, 0]])
    task = MaskedLMTask(tokens, tokens, mask_token_id=3, vocab_size=12, mask_prob=0.9, pad_id=0)
    batch = task.train_batch(0, 2, seed=1)
    assert torch.equal(batch["padding_mask"], tokens[batch_rows(task, 0, 2, 1)] != 0)
    assert (batch["labels"][~batch["padding_mask"]] == -100).all()
    assert "pad_id" in task.fingerprint()
    assert "pad_id" not in MaskedLMTask(tokens, tokens, mask_token_id=3, vocab_size=12).fingerprint()


def batch_rows(task, step, batch_size, seed):
    return task.sampler.indices(step, batch_size, seed)
