"""Single-head replacement, logit statistics, the head-dim decoder grid and their claims (param_allocation,
slice 2): exact identities in float64, hand-computed examples, determinism, and bad input named clearly."""

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from repro.data.npz import write_npz
from repro.models import Transformer, config_from_dict
from repro.papers.param_allocation.head_dim_decoders import run_name, train_head_dim_grid
from repro.papers.param_allocation.head_replacement import (
    HeadDistillationTask,
    StudentHead,
    attention_io,
    bilinear_forms,
    head_output,
    position_losses,
    random_student,
    replaced_logits,
    svd_student,
    token_losses,
)
from repro.papers.param_allocation.logit_norms import logit_statistics
from repro.papers.param_allocation.recovery import (
    ablation_gaps,
    at_sweep_heads,
    bucket_means,
    position_deltas,
    recovery_of_means,
    spearman,
    sweep_head_label,
    with_recovery,
)
from repro.papers.param_allocation.replacement_study import (
    LARGEST_GAP,
    choose_sweep_heads,
    replacement_study,
    student_jobs,
)
from repro.papers.param_allocation.specs import grid_spec
from repro.pipeline.configcheck import PipelineConfigError, check_config
from repro.training import LanguageModelTask, evaluate

ROOT = Path(__file__).resolve().parents[1]
MODEL = dict(
    vocab_size=23,
    n_layers=2,
    d_model=12,
    n_heads=3,
    d_ff=16,
    max_seq_len=10,
    norm="layernorm",
    activation="gelu",
    position="learned",
    qk_bias=False,
    vo_bias=False,
    mlp_bias=True,
    init_std=0.3,
)


def _model(dtype=torch.float64, **overrides) -> Transformer:
    torch.manual_seed(0)
    return Transformer(config_from_dict(dict(MODEL, **overrides))).to(dtype).eval()


def _tokens(n=5, length=10, seed=1) -> torch.Tensor:
    return torch.randint(0, MODEL["vocab_size"], (n, length), generator=torch.Generator().manual_seed(seed))


# -- student heads ------------------------------------------------------------------------------------------
def test_full_rank_svd_student_is_the_teacher_head_exactly():
    model, tokens = _model(), _tokens()
    teacher = model(tokens)
    for layer in range(2):
        for head in range(3):
            student = svd_student(model.blocks[layer].attn, head, rank=4).double()  # d_h = 12 / 3 = 4
            replaced = replaced_logits(model, tokens, layer, head, student)
            assert torch.allclose(replaced, teacher, atol=1e-10, rtol=0)
            assert not torch.allclose(
                replaced_logits(model, tokens, layer, head), teacher, atol=1e-6
            )  # ablation differs


def test_svd_student_forms_are_the_truncated_svds():
    model = _model()
    attn = model.blocks[1].attn
    scores, output = bilinear_forms(attn, 2)
    sigma = torch.linalg.svdvals(scores)
    for rank in (1, 2, 3):
        student = svd_student(attn, 2, rank).double()
        a_r = student.w_query.T @ student.w_key / math.sqrt(rank)  # the student's own 1/√r scale
        m_r = student.w_out @ student.w_value
        assert torch.linalg.matrix_rank(a_r) == rank
        assert torch.isclose(torch.linalg.matrix_norm(scores - a_r, ord=2), sigma[rank], atol=1e-6)  # Eckart-Young
        u, s, vh = torch.linalg.svd(output)
        assert torch.allclose(m_r, (u[:, :rank] * s[:rank]) @ vh[:rank], atol=1e-6)


def test_head_matrices_follow_the_layer_weights():
    """A = W_Qᵀ W_K/√d_h and M = W^P W_V read off the layer's weights by hand for head 1 (rows 4:8)."""
    model = _model()
    attn = model.blocks[0].attn
    scores, output = bilinear_forms(attn, 1)
    wq, wk = attn.q_proj.weight[4:8], attn.k_proj.weight[4:8]
    wv, wp = attn.value.weight[4:8], attn.proj.weight[:, 4:8]
    assert torch.allclose(scores, wq.T @ wk / 2.0)
    assert torch.allclose(output, wp @ wv)


def test_zero_student_equals_ablation_and_head_outputs_sum_to_the_attention_output():
    model, tokens = _model(), _tokens()
    zero = StudentHead(12, 2).double()
    # exact: the zero student adds exact zeros to the ablated layer's output
    assert torch.equal(replaced_logits(model, tokens, 1, 0, zero), replaced_logits(model, tokens, 1, 0))
    captured = {}
    handle = model.blocks[1].attn.register_forward_hook(lambda m, a, out: captured.setdefault("out", out))
    io = attention_io(model, tokens, [1])
    model(tokens)
    handle.remove()
    inputs, contexts = io[1]
    assert inputs.shape == (5, 10, 12) and contexts.shape == (5, 3, 10, 4)
    total = sum(head_output(model.blocks[1].attn, h, contexts) for h in range(3))
    assert torch.allclose(total, captured["out"], atol=1e-12)


def test_position_losses_average_to_the_trainers_eval_loss():
    model, tokens = _model(torch.float32), _tokens(7)
    per_position = position_losses(model, tokens, batch_size=3)
    assert per_position.shape == (9,)
    assert math.isclose(float(per_position.mean()), evaluate(model, LanguageModelTask(tokens, tokens)), rel_tol=1e-6)


def test_heads_that_are_not_bilinear_are_refused():
    with pytest.raises(ValueError, match="P10"):
        svd_student(_model(position="rope").blocks[0].attn, 0, 2)
    with pytest.raises(ValueError, match="qk_bias=false"):
        svd_student(_model(qk_bias=True).blocks[0].attn, 0, 2)
    with pytest.raises(ValueError, match="out of range"):
        svd_student(_model().blocks[0].attn, 3, 2)
    with pytest.raises(ValueError, match="rank"):
        StudentHead(12, 0)


def test_distillation_task_scales_errors_by_the_teacher_output():
    model = _model(torch.float32)
    inputs, contexts = attention_io(model, _tokens(6), [0])[0]
    attn = model.blocks[0].attn
    task = HeadDistillationTask(
        inputs[:4], head_output(attn, 0, contexts[:4]), inputs[4:], head_output(attn, 0, contexts[4:])
    )
    assert math.isclose(evaluate(StudentHead(12, 3), task), 1.0, rel_tol=1e-6)  # zero output: the whole target missed
    assert evaluate(svd_student(attn, 0, 4), task) < 1e-10
    assert 0 < evaluate(svd_student(attn, 0, 1), task) < 1
    a, b = random_student(12, 3, 0.1, 5, "x"), random_student(12, 3, 0.1, 5, "x")
    # exact: the same seeded draw twice on one machine
    assert torch.equal(a.w_query, b.w_query) and not torch.equal(a.w_query, random_student(12, 3, 0.1, 6, "x").w_query)
    with pytest.raises(ValueError, match="N, T, d"):
        HeadDistillationTask(inputs, inputs[:, :, :2], inputs, inputs)


# -- the study -----------------------------------------------------------------------------------------------
TINY_TRAIN = {
    "steps": 3,
    "batch_size": 2,
    "lr": 1e-2,
    "schedule": "constant",
    "eval_every": 0,
    "log_every": 1,
    "checkpoint_every": 0,
}


def test_student_jobs_cover_the_sweep_and_the_heatmap():
    jobs = student_jobs(3, {0: 0, 1: 2}, [1, 2], 2)
    assert (0, 0, 1, "random") in jobs and (1, 1, 2, "svd") in jobs and (0, 1, 1, "svd") not in jobs
    assert (1, 2, 1, "random") in jobs and (1, 0, 2, "svd") in jobs and (1, 2, 2, "svd") in jobs
    assert len(jobs) == 2 * (2 * 2 + 2)


def test_sweep_head_is_the_given_one_or_the_largest_gap_per_layer():
    gaps = {(0, 0): 0.1, (0, 1): 0.3, (0, 2): 0.3, (3, 0): -0.01, (3, 1): 0.002, (3, 2): 0.001}
    assert choose_sweep_heads(gaps, [0, 3], 2) == {0: 2, 3: 2}
    assert choose_sweep_heads(gaps, [0, 3], LARGEST_GAP) == {0: 1, 3: 1}  # ties go to the lower index


def test_replacement_study_is_deterministic_and_complete(tmp_path):
    model = _model(torch.float32)
    kwargs = dict(
        layers=[0, 1], head=0, ranks=[1, 4], heatmap_rank=1, train_config=TINY_TRAIN, seed=3, distill_eval_chunks=2
    )
    summary, positions = replacement_study(model, _tokens(4, seed=2), _tokens(3), runs_dir=tmp_path / "a", **kwargs)
    again, _ = replacement_study(
        _model(torch.float32), _tokens(4, seed=2), _tokens(3), runs_dir=tmp_path / "b", **kwargs
    )
    pd.testing.assert_frame_equal(summary.drop(columns="train_seconds"), again.drop(columns="train_seconds"))
    # 1 teacher + 2 layers × (3 ablations + (2 ranks × 2 inits + 2 other heads) × 2 stages)
    assert len(summary) == 1 + 2 * (3 + 6 * 2)
    assert len(positions) == len(summary) * 9
    full = summary[(summary["rank"] == 4) & (summary["init"] == "svd")]
    teacher = float(summary.loc[summary["condition"] == "teacher", "eval_loss"].iloc[0])
    assert np.allclose(full["eval_loss"], teacher, atol=1e-5)  # rank = d_h: the teacher itself, before and after
    rows = with_recovery(summary)
    assert np.allclose(rows.loc[(rows["rank"] == 4) & (rows["init"] == "svd"), "recovery"], 1.0, atol=1e-2)
    tuned = summary[summary["stage"] == "finetuned"]
    assert (tuned["steps"] == np.where((tuned["init"] == "svd") & (tuned["rank"] == 4), 0, 3)).all()


def test_largest_gap_sweeps_the_head_costliest_to_remove_on_the_selection_chunks(tmp_path):
    model, finetune, held = _model(torch.float32), _tokens(5, seed=2), _tokens(3)
    summary, _ = replacement_study(
        model, finetune, held, layers=[0, 1], head=LARGEST_GAP, ranks=[1], heatmap_rank=1,
        train_config=dict(TINY_TRAIN, steps=1), seed=3, runs_dir=tmp_path, distill_eval_chunks=2,
    )  # fmt: skip
    ablated = summary[summary["condition"] == "ablated"]
    selection = finetune[: len(held)]  # the first len(eval) fine-tuning chunks, never the held-out set
    base = float(position_losses(model, selection).mean())
    for row in ablated.itertuples():
        gap = float(position_losses(model, selection, row.layer, row.head).mean()) - base
        assert row.selection_gap == pytest.approx(gap, abs=1e-9)
    teacher = token_losses(model, held)
    for row in ablated.itertuples():  # the held-out gap's standard error, paired over the chunks
        gaps = (token_losses(model, held, row.layer, row.head) - teacher).mean(1)
        assert row.ablation_gap_se == pytest.approx(float(gaps.std() / math.sqrt(len(gaps))), rel=1e-9)
        assert row.eval_loss == pytest.approx(float(teacher.mean() + gaps.mean()), abs=1e-9)
    chosen = summary[summary["init"] == "random"].groupby("layer")["head"].unique()
    for layer, rows in ablated.groupby("layer"):
        assert list(chosen[layer]) == [int(rows.loc[rows["selection_gap"].idxmax(), "head"])]
    assert summary.loc[summary["condition"] != "ablated", ["selection_gap", "ablation_gap_se"]].isna().all().all()


# -- logit statistics -------------------------------------------------------------------------------------------
def test_logit_statistics_hand_computed_and_bound_holds():
    model, tokens = _model(), _tokens(4)
    table = logit_statistics(model, tokens, [2, 6, 10], seed=1)
    assert len(table) == 2 * 3 * 3 and (table["seed"] == 1).all()
    attn = model.blocks[1].attn
    _, cache = model.run_with_cache(tokens, names=["blocks.1.attn.hook_q", "blocks.1.attn.hook_k"])
    q, k = cache["blocks.1.attn.hook_q"], cache["blocks.1.attn.hook_k"]  # [N, H, T, dh]
    z = torch.einsum("nd,nsd->ns", q[:, 2, 5], k[:, 2, :6]) / math.sqrt(attn.head_dim)  # query 5 sees 6 keys
    row = table[(table["layer"] == 1) & (table["head"] == 2) & (table["length"] == 6)].iloc[0]
    assert math.isclose(row["max_abs_logit"], float(z.abs().max(1).values.mean()), rel_tol=1e-9)
    assert math.isclose(row["logit_std"], float(z.std(1, unbiased=False).mean()), rel_tol=1e-9)
    p = torch.softmax(z, 1)
    assert math.isclose(row["max_prob"], float(p.max(1).values.mean()), rel_tol=1e-9)
    assert (table["jacobian_norm"] <= np.exp(table["log_bound"]) * (1 + 1e-12)).all()  # Theorem 2, shift-reduced Λ
    with pytest.raises(ValueError, match="prefix length"):
        logit_statistics(model, tokens, [11])


# -- recovery helpers -------------------------------------------------------------------------------------------
def _summary_frame():
    rows = [
        dict(seed=s, layer=-1, head=-1, rank=0, init="none", stage="none", condition="teacher", eval_loss=2.0)
        for s in (0, 1)
    ]
    rows += [
        dict(seed=s, layer=0, head=0, rank=0, init="none", stage="zero_shot", condition="ablated", eval_loss=a)
        for s, a in ((0, 3.0), (1, 2.2))
    ]
    rows += [
        dict(seed=s, layer=0, head=0, rank=8, init="svd", stage="finetuned", condition="student", eval_loss=v)
        for s, v in ((0, 2.5), (1, 2.0))
    ]
    return pd.DataFrame(rows)


def test_recovery_per_seed_and_from_seed_means():
    rows = with_recovery(_summary_frame())
    assert rows["recovery"].tolist() == pytest.approx([0.5, 1.0])
    # seed means: gaps (0.5 + 0.2)/2 over (1.0 + 0.2)/2
    assert recovery_of_means(rows, ["layer"]).loc[0] == pytest.approx(0.7 / 1.2)
    with pytest.raises(ValueError, match="ablation row"):
        with_recovery(_summary_frame().query("condition != 'ablated'"))


def test_ablation_gaps_over_seeds_and_when_they_are_resolved():
    # _summary_frame: gaps 1.0 (seed 0) and 0.2 (seed 1): mean 0.6, SE = sd/√2 = 0.4 (0.6 < 3 × 0.4)
    gaps = ablation_gaps(_summary_frame(), ["layer", "head"]).loc[(0, 0)]
    assert gaps["mean"] == pytest.approx(0.6) and gaps["se"] == pytest.approx(0.4) and gaps["seeds"] == 2
    assert not gaps["resolved"]
    steady = _summary_frame().assign(eval_loss=[2.0, 2.0, 2.5, 2.6, 2.5, 2.0])  # gaps 0.5 and 0.6
    assert ablation_gaps(steady, ["layer"]).loc[0, "resolved"]  # 0.55 ≥ 3 × 0.05
    one_seed = ablation_gaps(_summary_frame().query("seed == 0"), ["layer"]).loc[0]
    assert one_seed["se"] == math.inf and not one_seed["resolved"]  # exact: inf set by the code for one seed


def test_position_deltas_and_buckets():
    frame = pd.DataFrame(
        [
            dict(
                seed=0,
                layer=-1,
                head=-1,
                rank=0,
                init="none",
                stage="none",
                condition="teacher",
                position=t,
                loss=1.0,
                bucket_start=0 if t < 2 else 2,
                bucket_end=2 if t < 2 else 4,
            )
            for t in range(4)
        ]
        + [
            dict(
                seed=0,
                layer=0,
                head=0,
                rank=1,
                init="svd",
                stage="zero_shot",
                condition="student",
                position=t,
                loss=1.0 + 0.1 * t,
                bucket_start=0 if t < 2 else 2,
                bucket_end=2 if t < 2 else 4,
            )
            for t in range(4)
        ]
    )
    buckets = bucket_means(position_deltas(frame))
    assert buckets["delta"].tolist() == pytest.approx([0.05, 0.25])
    assert spearman([1, 2, 3], [1, 1, 2]) == pytest.approx(math.sqrt(3) / 2)
    assert math.isnan(spearman([1, 2, 3], [5, 5, 5]))


# -- claims on hand-made tables ---------------------------------------------------------------------------------
def test_replacement_claims_follow_each_seeds_own_sweep_head():
    """Seeds 0 and 2 sweep head 0, seed 1 head 1; each seed's other head is a heatmap student that recovers
    nothing. Matching sweep heads by (layer, head) alone would mix the heatmap students in."""
    from repro.papers.param_allocation.claims import common, replacement

    def row(seed, head, rank, init, stage, condition, loss, layer=0):
        keys = dict(seed=seed, layer=layer, head=head, rank=rank, init=init, stage=stage, condition=condition)
        return dict(keys, eval_loss=loss)

    rows = []
    for seed, sweep in ((0, 0), (1, 1), (2, 0)):
        other = 1 - sweep
        rows.append(row(seed, -1, 0, "none", "none", "teacher", 2.0, layer=-1))
        rows += [row(seed, h, 0, "none", "zero_shot", "ablated", loss) for h, loss in ((sweep, 3.0), (other, 2.01))]
        svd = 2.05 + 0.01 * (seed - 1)
        rows += [
            row(seed, sweep, 8, init, "finetuned", "student", loss) for init, loss in (("svd", svd), ("random", 2.1))
        ]
        rows.append(row(seed, other, 8, "svd", "finetuned", "student", 2.01))
    data = {common.REPLACEMENT: pd.DataFrame(rows)}
    measurement = replacement.svd_student_recovers_at_rank8(data)
    assert measurement.measured.startswith("layer 0: R(8) 0.95 [") and measurement.verdict == "reproduced"
    ok, detail = replacement._gaps_resolved(data)
    assert ok and "layer 0 (head 0/1/0 by seed): 1.0000 ± 0.0000" in detail
    assert sweep_head_label(at_sweep_heads(data[common.REPLACEMENT], data[common.REPLACEMENT])) == "head 0/1/0 by seed"


# -- the decoder grid ---------------------------------------------------------------------------------------------
def _write_tokens(path, n_files=6, length=70, vocab=23):
    rng = np.random.default_rng(0)
    files = [np.append(rng.integers(1, vocab, length), 0) for _ in range(n_files)]
    offsets = np.cumsum([0] + [len(f) for f in files])
    write_npz(
        path,
        {"tokens": np.concatenate(files).astype(np.uint16), "offsets": offsets.astype(np.int64)},
        meta={"vocab_size": vocab, "eos_id": 0},
    )
    return path


def test_head_dim_grid_trains_every_point_with_equal_tokens(tmp_path):
    train = _write_tokens(tmp_path / "train.npz")
    valid = _write_tokens(tmp_path / "valid.npz", n_files=2)
    model = {k: v for k, v in MODEL.items() if k not in ("vocab_size", "max_seq_len")}
    runs, curves = train_head_dim_grid(
        train,
        valid,
        model=model,
        train_config={k: v for k, v in TINY_TRAIN.items() if k != "batch_size"},
        head_dims=[2, 4],
        lengths=[4, 8],
        tokens_per_step=16,
        eval_tokens=32,
        heldout_tokens=64,
        vocab_size=23,
        seed=0,
        runs_dir=tmp_path / "runs",
    )
    assert sorted(zip(runs["length"], runs["head_dim"])) == [(4, 2), (4, 4), (8, 2), (8, 4)]
    assert (runs["tokens"] == 3 * 16).all() and runs.set_index("length")["batch_size"].to_dict() == {4: 4, 8: 2}
    assert (runs["attention_parameters"] == 2 * 4 * 12 * 3 * runs["head_dim"]).all()
    assert set(curves["split"]) == {"train", "eval"}
    # the final loss is the held-out set's: 64 tokens, 16 chunks of 4 or 8 of 8 (where the split has them)
    assert (runs["heldout_chunks"] >= runs["eval_chunks"]).all() and (runs["heldout_se"] >= 0).all()
    for _, run in runs.iterrows():
        final = json.loads((tmp_path / "runs" / run_name(run["length"], run["head_dim"]) / "heldout.json").read_text())
        assert final["loss"] == pytest.approx(run["eval_loss"], rel=1e-12) and final["seq_len"] == run["length"]
    with pytest.raises(ValueError, match="not a multiple"):
        grid_spec(model, {"steps": 1, "lr": 1e-3}, 12, 2, 16, 23, 0)


# -- configuration ----------------------------------------------------------------------------------------------
def _config():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.mark.parametrize(
    "edit, fragment",
    [
        (lambda s: s["replacement"].update(layers=[0, 4]), "replacement.layers has 4"),
        (lambda s: s["replacement"].update(head=4), "replacement.head is 4"),
        (
            lambda s: s["replacement"].update(ranks=[1, 64], heatmap_rank=1),
            "replacement.ranks has 64 > the head dim 32",
        ),
        (lambda s: s["replacement"].update(heatmap_rank=3), "heatmap_rank=3 must be one of"),
        (lambda s: s["replacement"].update(position_buckets=[0, 64, 16]), "position_buckets"),
        (lambda s: s["lm"]["model"].update(position="rope"), "head replacement needs learned"),
        (lambda s: s["lm"]["model"].update(qk_bias=True), "qk_bias and vo_bias must be false"),
        (lambda s: s["logit_norms"].update(lengths=[8, 256]), "logit_norms.lengths has 256"),
        (lambda s: s["decoders"].update(tokens_per_step=1000), "not a multiple of the sequence length 32"),
        (lambda s: s["decoders"]["train"].update(batch_size=4), "batch_size"),
    ],
)
def test_bad_decoder_config_is_named(edit, fragment):
    config = copy.deepcopy(_config())
    edit(config["param_allocation"])
    with pytest.raises(PipelineConfigError) as err:
        check_config(config)
    assert fragment in str(err.value), str(err.value)
