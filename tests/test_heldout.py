"""The held-out evaluation of language models: the stratified draw of valid chunks, the periodic set
nested in it, heldout.json (per-chunk losses, bootstrap error) and its survival of an interrupted job."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from repro.data.errors import DataError
from repro.data.lm_tokens import heldout_draw, load_lm_splits, load_token_chunks, stratified_indices
from repro.data.npz import write_npz
from repro.data.tokenizer import EOS_ID
from repro.models import config_from_dict
from repro.pipeline.configcheck import heldout_problems
from repro.runs import lm_heldout_set, load_model, train_new_run
from repro.training import LanguageModelTask, MaskedLMTask, TrainConfig, TrainingInterrupted, train
from repro.training.heldout import chunk_losses, paired_difference, read_heldout
from repro.training.sparse_mlm import SparseMaskedLMTask


def write_stream(path, lengths, vocab_size=17, seed=0):
    """A token file of files of the given lengths (EOS included), random ids in [1, vocab_size)."""
    rng = np.random.default_rng(seed)
    files = [np.append(rng.integers(1, vocab_size, size=n - 1), EOS_ID) for n in lengths]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    write_npz(
        path,
        {"tokens": np.concatenate(files).astype(np.uint16), "offsets": offsets},
        meta={"vocab_size": vocab_size, "eos_id": EOS_ID},
    )
    return path


# -- the draw --------------------------------------------------------------------------------------------
def test_the_draw_is_deterministic_stratified_and_all_when_asked_for_more():
    a, b = stratified_indices(1000, 64), stratified_indices(1000, 64)
    assert np.array_equal(a, b) and len(set(a.tolist())) == 64 and np.all(np.diff(a) > 0)
    assert not np.array_equal(a, stratified_indices(1000, 64, seed=1))
    # one index in each stratum [floor(i N / n), floor((i+1) N / n)): every part of the split is read
    edges = np.arange(65) * 1000 // 64
    assert np.all((a >= edges[:-1]) & (a < edges[1:]))
    assert np.array_equal(stratified_indices(10, 10), np.arange(10))
    assert np.array_equal(stratified_indices(10, 50), np.arange(10))
    with pytest.raises(DataError, match="positive integer"):
        stratified_indices(10, 0)


def test_the_draw_covers_every_file_in_proportion_to_its_chunks(tmp_path):
    # 12 files: one very long generated-like file first, then 11 short ones; chunks of 8 tokens
    lengths = [8 * 200 + 3] + [8 * 20 + 5] * 11
    path = write_stream(tmp_path / "valid.npz", lengths)
    n_valid = len(load_token_chunks(path, 8))
    assert n_valid == 200 + 11 * 20
    draw = heldout_draw(n_valid, 8, 105)  # a quarter of the chunks
    file_of = np.repeat(np.arange(12), [200] + [20] * 11)[draw.heldout]
    per_file = np.bincount(file_of, minlength=12)
    assert per_file.min() >= 4  # every file is read (the first 8 chunks would read one file only)
    expected = np.array([200] + [20] * 11) * 105 / n_valid
    assert np.all(np.abs(per_file - expected) <= 1.0 + 1e-9)  # proportional, within a stratum's rounding


def test_the_periodic_set_is_a_stratified_subset_of_the_final_one():
    draw = heldout_draw(5000, 64, 1024)
    assert set(draw.periodic.tolist()) <= set(draw.heldout.tolist()) and len(draw.periodic) == 64
    positions = np.searchsorted(draw.heldout, draw.periodic)
    edges = np.arange(65) * 1024 // 64
    assert np.all((positions >= edges[:-1]) & (positions < edges[1:]))
    # every run of these settings, whatever its seed, reads the same chunks
    again = heldout_draw(5000, 64, 1024)
    assert np.array_equal(draw.heldout, again.heldout) and np.array_equal(draw.periodic, again.periodic)


def test_bad_sizes_are_refused_with_the_key_to_change(tmp_path):
    path = write_stream(tmp_path / "valid.npz", [41, 41])  # 10 chunks of 8
    with pytest.raises(DataError, match="exceeds heldout_chunks=4.*lower eval_chunks"):
        load_lm_splits(path, path, 8, 5, 4, "lower eval_chunks", train=False)
    with pytest.raises(DataError, match="fewer than eval_chunks=12"):
        load_lm_splits(path, path, 8, 12, 20, "hint", train=False)
    with pytest.raises(DataError, match="heldout_chunks must be a positive integer"):
        heldout_draw(10, 1, 0)
    assert load_lm_splits(path, path, 8, 2, 50, "hint", train=False).heldout.shape == (10, 8)  # all of them
    problems = heldout_problems({"eval_chunks": 64, "heldout_chunks": 32}, "simplified_blocks")
    assert problems and "simplified_blocks.eval_chunks=64 exceeds simplified_blocks.heldout_chunks=32" in problems[0]
    assert heldout_problems({"eval_chunks": 64, "heldout_chunks": 64}, "x") == []


# -- the evaluation --------------------------------------------------------------------------------------
MODEL = {
    "n_layers": 1,
    "d_model": 16,
    "n_heads": 2,
    "d_ff": 32,
    "max_seq_len": 8,
    "vocab_size": 17,
    "norm": "layernorm",
    "position": "learned",
}
TRAIN = {"steps": 6, "batch_size": 4, "lr": 1e-2, "schedule": "constant", "eval_every": 3, "log_every": 1}


def _splits(tmp_path):
    train = write_stream(tmp_path / "train.npz", [81] * 6, seed=1)
    valid = write_stream(tmp_path / "valid.npz", [33, 17, 65, 25], seed=2)  # 4 + 2 + 8 + 3 chunks of 8
    return train, valid, load_lm_splits(train, valid, 8, 2, 6, "hint")


def _train(tmp_path, name, interrupt_after=None):
    train_path, valid, splits = _splits(tmp_path)
    cfg = config_from_dict(MODEL)
    heldout = lm_heldout_set(splits, LanguageModelTask(splits.train, splits.heldout), valid)
    run_dir = tmp_path / name
    if interrupt_after is not None:  # a job killed mid-training, then rerun by the workflow
        torch.manual_seed(0)
        from repro.runs import new_run_model

        with pytest.raises(TrainingInterrupted):
            train(
                new_run_model(run_dir, cfg, 0),
                LanguageModelTask(splits.train, splits.periodic),
                TrainConfig(**TRAIN, checkpoint_every=1, seed=0),
                run_dir,
                progress=False,
                interrupt_after=interrupt_after,
            )
        assert read_heldout(run_dir) is None
    train_new_run(
        cfg,
        LanguageModelTask(splits.train, splits.periodic),
        TrainConfig(**TRAIN, checkpoint_every=1, seed=0),
        run_dir,
        "test",
        "",
        heldout=heldout,
    )
    return run_dir, splits


def test_heldout_json_is_the_target_weighted_mean_of_its_chunks(tmp_path):
    run_dir, splits = _train(tmp_path, "run")
    final = read_heldout(run_dir)
    assert final["n_chunks"] == 6 and final["seq_len"] == 8 and final["n_targets"] == 6 * 7
    assert final["chunk_index"] == splits.draw.heldout.tolist()
    losses, targets = np.array(final["chunk_loss"]), np.array(final["chunk_targets"])
    assert final["loss"] == pytest.approx(float((losses * targets).sum() / targets.sum()), rel=1e-12)
    assert 0 < final["bootstrap_se"] < losses.std() + 1e-12  # the error of a mean of 6, below one chunk's spread
    # the same numbers as the trainer's own evaluation of the final weights on those chunks
    from repro.training import evaluate

    model = load_model(run_dir)
    assert final["loss"] == pytest.approx(evaluate(model, LanguageModelTask(splits.train, splits.heldout)), rel=1e-6)
    # a paired difference of a run with itself is zero, with no width
    same = paired_difference(final, final)
    assert abs(same["difference"]) < 1e-12 and same["half_width"] < 1e-12
    with pytest.raises(ValueError, match="different chunks"):
        paired_difference(final, dict(final, chunk_index=final["chunk_index"][::-1]))


def test_an_interrupted_run_ends_with_the_same_heldout_json(tmp_path):
    whole, _ = _train(tmp_path, "whole")
    resumed, _ = _train(tmp_path, "resumed", interrupt_after=4)
    a, b = read_heldout(whole), read_heldout(resumed)
    assert a["chunk_index"] == b["chunk_index"]
    assert b["chunk_loss"] == pytest.approx(a["chunk_loss"], rel=1e-9, abs=1e-12)
    # a finished run, run again, is not trained again but writes its evaluation again
    (resumed / "heldout.json").unlink()
    _train(tmp_path, "resumed")
    assert read_heldout(resumed)["loss"] == pytest.approx(b["loss"], rel=1e-12)
    assert not list(resumed.glob("*.tmp"))


@pytest.mark.parametrize("task_class", [MaskedLMTask, SparseMaskedLMTask])
def test_masked_lm_row_losses_add_up_to_the_task_loss(task_class):
    torch.manual_seed(0)
    model_cfg = dict(MODEL, causal=False, output="none" if task_class is SparseMaskedLMTask else "lm")
    if task_class is SparseMaskedLMTask:
        model_cfg["tie_embeddings"] = True
    from repro.models import Transformer

    model = Transformer(config_from_dict(model_cfg)).eval()
    tokens = torch.randint(1, 17, (5, 8))
    task = task_class(tokens, tokens, mask_token_id=16, vocab_size=17, mask_prob=0.3, special_ids=(0,))
    sums, counts = chunk_losses(model, task)
    batch = next(iter(task.eval_batches()))
    with torch.no_grad():
        out = task.loss(model, batch)
    assert int(counts.sum()) == int(out.n_targets)
    assert float(sums.sum() / counts.sum()) == pytest.approx(float(out.loss), rel=1e-5)


def test_the_draw_is_recorded_in_heldout_json(tmp_path):
    run_dir, splits = _train(tmp_path, "run")
    final = json.loads((run_dir / "heldout.json").read_text())
    assert final["periodic_chunks"] == 2 and final["bootstrap"]["unit"] == "chunk" and len(final["valid_sha256"]) == 64


def test_final_losses_read_the_heldout_loss_where_a_run_has_one():
    import pandas as pd

    from repro.analysis.training_curves import HELDOUT, final_losses

    rows = [("a", 0, step, "eval", loss) for step, loss in [(1, 5.0), (2, 4.0), (3, 3.0), (4, 2.0)]]
    rows += [("b", 0, step, "eval", loss) for step, loss in [(1, 6.0), (2, 5.0)]]
    rows += [("a", 0, 4, HELDOUT, 2.5)]
    curves = pd.DataFrame(rows, columns=["variant", "seed", "step", "split", "loss"])
    final = final_losses(curves).set_index("variant")["final_loss"]
    assert final["a"] == pytest.approx(2.5) and final["b"] == pytest.approx(5.5)  # b: mean of its last evaluations
    assert final_losses(curves, split="train").empty
