"""Streams, one-layer models, trainer tasks, sweep drivers, claims helpers and the config check of
param_allocation: hand-computed examples, determinism, and bad input named clearly."""

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from repro.data.errors import DataError
from repro.data.streams import TeacherAttention, make_stream
from repro.data.streams.common import IGNORE_INDEX, shift
from repro.models.config import ConfigError
from repro.models.shallow import (
    LowRankHead,
    ShallowAttentionModel,
    ShallowConfig,
    alibi_pattern,
    attention_parameters,
    initial_slopes,
)
from repro.papers.param_allocation.head_allocation import fit_low_rank_students, sweep_heads
from repro.papers.param_allocation.u_shape import edge_contrasts
from repro.pipeline.configcheck import PipelineConfigError, check_config
from repro.training.seeding import generator
from repro.training.stream_tasks import SequenceStreamTask

ROOT = Path(__file__).resolve().parents[1]
TINY_TRAIN = {"steps": 3, "batch_size": 4, "lr": 1e-3, "eval_every": 0, "log_every": 1, "checkpoint_every": 0}


# -- streams ------------------------------------------------------------------------------------------
def test_shift_pads_the_start():
    x = torch.arange(6).view(1, 6)
    assert shift(x, 2).tolist() == [[0, 0, 0, 1, 2, 3]]
    assert shift(x, 1, fill=-1).tolist() == [[-1, 0, 1, 2, 3, 4]]


def test_discrete_ngram_labels_read_the_table():
    stream = make_stream("discrete_ngram", 5, vocab=3, order=3)
    tokens = torch.tensor([[2, 0, 1, 1, 2]])
    labels = stream.labels(tokens)[0, :, 0]
    assert labels[:2].tolist() == [IGNORE_INDEX, IGNORE_INDEX]
    for t in range(2, 5):
        a, b, c = tokens[0, t - 2 : t + 1].tolist()
        assert labels[t] == stream.table[a * 9 + b * 3 + c]


def test_continuous_ngram_targets_are_the_lagged_rotations():
    stream = make_stream("continuous_ngram", 1, dim=4, lags=2, decay=0.5)
    batch = stream.sample(2, 6, generator(0, "x"))
    x, y = batch["inputs"], batch["targets"]
    assert torch.allclose(x.norm(dim=-1), torch.full((2, 6), 2.0))  # radius √d
    t = 4
    expected = stream.rotations[0] @ x[:, t - 1].T + math.exp(-0.5) * stream.rotations[1] @ x[:, t - 2].T
    assert torch.allclose(y[:, t], expected.T, atol=1e-6)
    assert torch.allclose(y[:, 0], torch.zeros(2, 4))
    q = stream.rotations[0]
    assert torch.allclose(q @ q.T, torch.eye(4), atol=1e-6)
    profile = stream.lag_profile()
    assert profile["lags"] == [1, 2] and profile["weights"][1] == pytest.approx(2.0 * math.exp(-0.5))


def test_previous_tokens_and_nonlinear_targets():
    stream = make_stream("previous_tokens", 0, vocab=5, lags=2)
    tokens = torch.tensor([[3, 1, 4, 0]])
    assert stream.labels(tokens)[0].tolist() == [[IGNORE_INDEX, IGNORE_INDEX], [3, IGNORE_INDEX], [1, 3], [4, 1]]
    nonlinear = make_stream("nonlinear_lags", 2, dim=3, lags=2)
    batch = nonlinear.sample(1, 5, generator(1, "x"))
    x = batch["inputs"][0]
    pre = nonlinear.rotations[0] @ x[3] + nonlinear.rotations[1] @ x[2]
    assert torch.allclose(batch["targets"][0, 4], torch.tanh(pre / math.sqrt(2)), atol=1e-6)


def test_streams_are_deterministic_and_seeded():
    a = make_stream("discrete_ngram", 3, vocab=4, order=2)
    b = make_stream("discrete_ngram", 3, vocab=4, order=2)
    c = make_stream("discrete_ngram", 4, vocab=4, order=2)
    assert torch.equal(a.table, b.table) and not torch.equal(a.table, c.table)
    one = a.sample(3, 7, generator(9, "s"))
    two = b.sample(3, 7, generator(9, "s"))
    assert all(torch.equal(one[key], two[key]) for key in one)


def test_bad_stream_input_is_named():
    with pytest.raises(DataError, match="unknown stream 'trigram'"):
        make_stream("trigram", 0)
    with pytest.raises(DataError, match="unexpected keyword"):
        make_stream("discrete_ngram", 0, vocabulary=3)
    with pytest.raises(DataError, match="seq_len=3 leaves no position"):
        make_stream("continuous_ngram", 0, dim=2, lags=3).sample(1, 3, generator(0))
    with pytest.raises(DataError, match="dim=0"):
        make_stream("nonlinear_lags", 0, dim=0)


def test_teacher_attention_logits_are_bounded_and_targets_match():
    teacher = TeacherAttention(0, dim=6, logit_bound=2.0, spectrum_decay=0.5)
    assert torch.linalg.matrix_norm(teacher.bilinear, ord=2) == pytest.approx(2.0, rel=1e-5)
    batch = teacher.sample(3, 10, 4, generator(0, "t"))
    z = teacher.logits(batch["queries"], batch["keys"])
    assert z.abs().max() <= 2.0 + 1e-5
    expected = torch.softmax(z, dim=-1) @ batch["values"]
    assert torch.allclose(batch["targets"], expected, atol=1e-6)


def test_realised_teacher_reaches_its_bound_on_the_calibration_draw():
    from repro.data.streams.common import sphere
    from repro.data.streams.teacher_attention import CALIBRATION_PAIRS

    spectral = TeacherAttention(3, dim=8, logit_bound=2.0, spectrum_decay=0.5)
    realised = TeacherAttention(3, dim=8, logit_bound=2.0, spectrum_decay=0.5, scale="realised")
    gen = generator(3, "TeacherAttention", "calibration")  # the calibration draw, redrawn
    q, k = sphere(gen, 1, CALIBRATION_PAIRS[0], 8), sphere(gen, 1, CALIBRATION_PAIRS[1], 8)
    assert float(realised.logits(q, k).abs().max()) == pytest.approx(2.0, rel=1e-6)
    assert float(spectral.logits(q, k).abs().max()) < 2.0  # unit-sphere inputs fall short of ‖A‖₂ = Λ
    ratio = realised.bilinear / spectral.bilinear  # the same A up to one factor
    assert torch.allclose(ratio, ratio.flatten()[0].expand_as(ratio), rtol=1e-5) and float(ratio.flatten()[0]) > 1
    assert torch.equal(realised.value_map, spectral.value_map)  # exact: the same draw, computed twice on one machine
    with pytest.raises(ValueError, match="scale='tight'"):
        TeacherAttention(0, scale="tight")


# -- models -------------------------------------------------------------------------------------------
def test_alibi_pattern_hand_computed():
    pattern = alibi_pattern(torch.tensor([math.log(2.0)], dtype=torch.float64), 3)[0]
    # row t: weights ∝ 2^{−(t−s)} for s ≤ t
    np.testing.assert_allclose(pattern[2].numpy(), np.array([1, 2, 4]) / 7, rtol=1e-12)
    np.testing.assert_allclose(pattern[1].numpy(), [1 / 3, 2 / 3, 0.0], rtol=1e-12)
    assert float(pattern[0, 0]) == pytest.approx(1.0, rel=1e-15)  # float64 softmax of one entry: at most an ulp
    slopes = initial_slopes(2, (-1.0, 1.0))
    np.testing.assert_allclose(slopes.numpy(), [2**-0.5, 2**0.5], rtol=1e-6)


def test_alibi_layer_matches_explicit_attention_and_ignores_content():
    torch.manual_seed(0)
    cfg = ShallowConfig("vectors", 3, 2, d_model=8, n_heads=4, head_dim=2, d_ff=0, max_seq_len=6, position="alibi")
    model = ShallowAttentionModel(cfg).double()
    x = torch.randn(5, 6, 8, dtype=torch.float64)
    attn = model.attn
    v = attn.value(x).view(5, 6, 4, 2).transpose(1, 2)
    explicit = torch.einsum("hts,bhsd->bhtd", alibi_pattern(attn.slopes, 6), v)
    expected = attn.out(explicit.transpose(1, 2).reshape(5, 6, 8))
    assert torch.allclose(attn(x), expected, atol=1e-12)
    # Causal: changing the last position leaves earlier outputs unchanged.
    y = x.clone()
    y[:, -1] += 1.0
    assert torch.allclose(attn(x)[:, :-1], attn(y)[:, :-1], atol=1e-12)


def test_alibi_heads_split_with_tied_slopes_compute_the_same_layer():
    """Why the ALiBi sweeps judge only the left arm: H heads of dimension d_h are computed exactly by kH heads
    of dimension d_h/k whose slopes repeat each of theirs k times (same W_V and W_O matrices)."""
    torch.manual_seed(0)
    cfg = ShallowConfig("vectors", 3, 2, d_model=8, n_heads=2, head_dim=4, d_ff=16, max_seq_len=6, position="alibi")
    few = ShallowAttentionModel(cfg).double()
    many = ShallowAttentionModel(ShallowConfig(**dict(cfg.__dict__, n_heads=8, head_dim=1))).double()
    state = dict(few.state_dict(), **{"attn.log_slope": few.attn.log_slope.detach().repeat_interleave(4)})
    many.load_state_dict(state)
    x = torch.randn(5, 6, 3, dtype=torch.float64)
    assert torch.allclose(few(x), many(x), atol=1e-12)


def test_learned_layer_is_causal_and_budget_fixes_attention_parameters():
    torch.manual_seed(0)
    counts = {}
    for heads in (1, 2, 8):
        for position in ("alibi", "learned"):
            cfg = ShallowConfig(
                "tokens", 5, 5, d_model=8, n_heads=heads, head_dim=8 // heads, d_ff=4, max_seq_len=6, position=position
            )
            model = ShallowAttentionModel(cfg)
            counts[(heads, position)] = attention_parameters(model)
    assert counts[(1, "learned")] == counts[(8, "learned")] == 4 * 8 * 8
    assert counts[(2, "alibi")] == 2 * 8 * 8 + 2  # W_V, W_O and one slope per head
    model = ShallowAttentionModel(
        ShallowConfig("tokens", 5, 5, d_model=8, n_heads=2, head_dim=4, d_ff=4, max_seq_len=6, position="learned")
    )
    ids = torch.randint(0, 5, (2, 6))
    changed = ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % 5
    assert torch.allclose(model(ids)[:, :-1], model(changed)[:, :-1], atol=1e-6)
    assert model.attention_logits(ids).shape == (2, 2, 6, 6)


def test_shallow_config_names_bad_values():
    with pytest.raises(ConfigError, match="position='rope'"):
        ShallowConfig("tokens", 4, 4, position="rope")
    with pytest.raises(ConfigError, match="input_kind='pixels'"):
        ShallowConfig("pixels", 4, 4)
    with pytest.raises(ConfigError, match="n_heads=0"):
        ShallowConfig("tokens", 4, 4, n_heads=0)


def test_svd_student_reproduces_the_truncated_bilinear_form():
    teacher = TeacherAttention(1, dim=8, logit_bound=3.0, spectrum_decay=0.5)
    A = teacher.bilinear.double()
    u, s, vh = torch.linalg.svd(A)
    for rank in (1, 3, 8):
        head = LowRankHead.from_bilinear(teacher.bilinear, rank)
        expected = (u[:, :rank] * s[:rank]) @ vh[:rank]
        assert torch.allclose(head.bilinear().double(), expected, atol=1e-5)
    # At full rank the student's output equals the teacher's.
    batch = teacher.sample(2, 12, 3, generator(0, "t"))
    full = LowRankHead.from_bilinear(teacher.bilinear, 8)
    assert torch.allclose(full(batch["queries"], batch["keys"], batch["values"]), batch["targets"], atol=1e-5)


# -- tasks and sweeps ---------------------------------------------------------------------------------
def test_regression_task_loss_is_normalised_mse():
    stream = make_stream("continuous_ngram", 0, dim=4, lags=2)
    task = SequenceStreamTask(stream, 6, eval_sequences=8, eval_seed=1)

    class Zero(torch.nn.Module):
        def forward(self, x):
            return torch.zeros_like(x)

    batch = next(task.eval_batches())
    out = task.loss(Zero(), batch)
    # Predicting 0 costs E‖y‖² / E‖y‖² = 1 on the held-out set.
    assert float(out.loss) == pytest.approx(1.0, rel=1e-5)
    assert task.metric(Zero()) == pytest.approx(1.0, rel=1e-5)


def test_classification_task_accuracy_and_loss():
    stream = make_stream("previous_tokens", 0, vocab=3, lags=1)
    task = SequenceStreamTask(stream, 5, eval_sequences=4, eval_seed=0)

    class Oracle(torch.nn.Module):  # reads the previous token exactly: accuracy 1
        def forward(self, ids):
            prev = shift(ids, 1)
            return 50.0 * torch.nn.functional.one_hot(prev, 3).float()

    assert task.metric(Oracle()) == 1.0  # exact: a ratio of equal integer counts (every valid label correct)
    assert float(task.loss(Oracle(), next(task.eval_batches())).loss) < 1e-10


def test_sweep_heads_runs_is_deterministic_and_resumes(tmp_path):
    stream = make_stream("discrete_ngram", 0, vocab=3, order=2)
    kwargs = dict(
        position="learned",
        head_counts=[1, 4],
        budget=4,
        d_model=8,
        d_ff=8,
        seq_len=5,
        train_config=TINY_TRAIN,
        seed=0,
        eval_sequences=4,
        threads=1,
    )
    first = sweep_heads(stream, runs_dir=tmp_path / "a", **kwargs)
    second = sweep_heads(stream, runs_dir=tmp_path / "b", **kwargs)
    again = sweep_heads(stream, runs_dir=tmp_path / "a", **kwargs)  # finished runs are read back
    columns = ["heads", "head_dim", "eval_loss", "metric", "logit_std", "n_parameters"]
    pd.testing.assert_frame_equal(first[columns], second[columns])
    pd.testing.assert_frame_equal(first[columns], again[columns])
    assert (tmp_path / "a" / "h004" / "model.safetensors").is_file()
    with pytest.raises(ValueError, match="does not divide"):
        sweep_heads(stream, runs_dir=tmp_path / "c", **dict(kwargs, head_counts=[3]))


def test_fit_low_rank_students_rows(tmp_path):
    teacher = TeacherAttention(0, dim=4, logit_bound=2.0)
    table = fit_low_rank_students(
        teacher,
        lengths=[4, 8],
        ranks=[1, 4],
        queries_per_set=2,
        eval_sets=2,
        train_config=dict(TINY_TRAIN, batch_size=2),
        seed=0,
        runs_dir=tmp_path,
    )
    assert len(table) == 4
    assert table.loc[table["rank"] == 4, "svd_mse"].max() < 1e-10  # full-rank SVD student is exact
    np.testing.assert_allclose(table["normalised_mse"], table["excess_mse"] / table["target_power"])


def test_svd_started_students_start_at_the_svd_student(tmp_path):
    """student_init="svd": a student begins as the truncated-SVD student, so three small updates leave the
    full-rank one next to the teacher and the rank-1 one next to its SVD error; random starts are far from both."""
    teacher = TeacherAttention(0, dim=4, logit_bound=2.0)
    kwargs = dict(
        lengths=[8], ranks=[1, 4], queries_per_set=2, eval_sets=2, train_config=dict(TINY_TRAIN, batch_size=2), seed=0
    )
    svd = fit_low_rank_students(teacher, runs_dir=tmp_path / "svd", student_init="svd", **kwargs).set_index("rank")
    random = fit_low_rank_students(teacher, runs_dir=tmp_path / "random", **kwargs).set_index("rank")
    assert svd.loc[4, "excess_mse"] < 1e-6 * random.loc[4, "excess_mse"]
    assert svd.loc[1, "excess_mse"] == pytest.approx(svd.loc[1, "svd_mse"], rel=0.02)
    assert abs(random.loc[1, "excess_mse"] / random.loc[1, "svd_mse"] - 1) > 0.02
    # the same runs directory holds both, apart: a finished random start is not read back as an SVD start
    again = fit_low_rank_students(teacher, runs_dir=tmp_path / "random", student_init="svd", **kwargs)
    pd.testing.assert_frame_equal(again.set_index("rank")[["excess_mse"]], svd[["excess_mse"]])
    with pytest.raises(ValueError, match="student_init"):
        fit_low_rank_students(teacher, runs_dir=tmp_path / "x", student_init="orthogonal", **kwargs)


# -- claims helper ------------------------------------------------------------------------------------
def _frame(values):
    return pd.DataFrame(
        [{"heads": h, "seed": s, "eval_loss": v} for h, per_seed in values.items() for s, v in enumerate(per_seed)]
    )


def test_edge_contrasts_hand_examples():
    u = edge_contrasts(_frame({1: [2.0, 2.2, 1.8], 4: [1.0, 1.1, 0.9], 16: [1.5, 1.6, 1.4]}), [1, 16], 1.1)
    assert u.best == 4 and u.seeds == 3
    assert u.contrasts[1].tolist() == pytest.approx([0.9, 0.99, 0.81])  # loss(1) − 1.1·loss(4) per seed
    assert u.contrasts[16].tolist() == pytest.approx([0.4, 0.39, 0.41])
    # the best loss at an edge: that edge lies below the best interior H in every seed
    monotone = edge_contrasts(_frame({1: [3.0, 3.1, 2.9], 4: [2.0, 2.1, 1.9], 16: [1.0, 1.1, 0.9]}), [1, 16], 1.1)
    assert monotone.best == 4 and (monotone.contrasts[16] < 0).all()
    # the left arm alone: the best of the other H may be the right edge
    left = edge_contrasts(_frame({1: [3.0, 3.1, 2.9], 4: [2.0, 2.1, 1.9], 16: [1.0, 1.1, 0.9]}), [1], 1.1)
    assert left.best == 16 and list(left.contrasts.columns) == [1]
    # a seed lacking an H is left out, and a sweep with only its edges has nothing to compare them with
    partial = _frame({1: [2.0, 2.2, 1.8], 4: [1.0, 1.1], 16: [1.5, 1.6, 1.4]})
    assert edge_contrasts(partial, [1, 16], 1.1).seeds == 2
    with pytest.raises(ValueError, match="no point besides its edges"):
        edge_contrasts(_frame({1: [2.0], 16: [1.5]}), [1, 16], 1.1)


# -- configuration -----------------------------------------------------------------------------------
def _config():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.mark.parametrize(
    "edit, fragment",
    [
        (lambda s: s["sweep"].update(heads=[1, 3, 4]), "sweep.heads has 3, which does not divide sweep.budget=64"),
        (lambda s: s["sweep"].update(seq_len=4), "leaves no position with a full target"),
        (lambda s: s["saturation"].update(ranks=[1, 64]), "saturation.ranks has 64 > saturation.dim=32"),
        (lambda s: s["sweep"]["tasks"]["induction"]["params"].update(vocabulary=4), "unexpected keyword"),
        (lambda s: s["sweep"]["tasks"]["induction"].update(stream="copy"), "'copy'"),
        (lambda s: s["sweep"].update(positions=["rope"]), "'rope'"),
        (lambda s: s["jacobian"].update(samples=1), "jacobian.samples"),
        (lambda s: s["sweep"]["train"].update(schedule="exp"), "schedule"),
    ],
)
def test_bad_param_allocation_config_is_named(edit, fragment):
    config = copy.deepcopy(_config())
    edit(config["param_allocation"])
    with pytest.raises(PipelineConfigError) as err:
        check_config(config)
    assert fragment in str(err.value), str(err.value)


def test_sweep_command_runs_every_task_of_a_seed_and_names_unknown_tasks(tmp_path, capsys):
    from repro.cli import main

    spec = {
        "heads": [1, 2],
        "budget": 4,
        "d_model": 4,
        "d_ff": 0,
        "seq_len": 4,
        "eval_sequences": 2,
        "positions": ["alibi"],
        "train": {"steps": 1, "batch_size": 2, "lr": 1e-3, "eval_every": 0, "log_every": 1, "checkpoint_every": 0},
        "tasks": {
            "copy": {"stream": "previous_tokens", "params": {"vocab": 3, "lags": 1}},
            "lags": {"stream": "continuous_ngram", "params": {"dim": 2, "lags": 2, "decay": 0.0}},
        },
    }
    out = tmp_path / "seed0.csv"
    args = [
        "param_allocation",
        "sweep",
        "--spec",
        json.dumps(spec),
        "--seed",
        "0",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    table = pd.read_csv(out)
    assert sorted(zip(table["task"], table["heads"])) == [("copy", 1), ("copy", 2), ("lags", 1), ("lags", 2)]
    assert (tmp_path / "runs" / "copy" / "alibi").is_dir() and (tmp_path / "runs" / "lags" / "alibi").is_dir()
    assert main(args + ["--task", "copy", "nope"]) == 2
    assert "'nope' not under sweep.tasks" in capsys.readouterr().err
