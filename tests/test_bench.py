"""The throughput benchmark: the shapes a config trains, and one timed step per shape."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
import yaml

from repro.bench import BenchShape, config_shapes, format_shapes, parameter_count, run_shapes, shape_of
from repro.commands.bench import cap_tokens, top_per_paper
from repro.papers import PAPERS
from repro.pipeline.configcheck import load_scale_files, merge_into

ROOT = Path(__file__).resolve().parents[1]


def test_every_paper_lists_the_shapes_it_trains_and_each_shape_appears_once():
    config = load_scale_files([str(ROOT / "config/config.yaml")])
    shapes = config_shapes(config)
    described = [t.shape.describe() for t in shapes]
    assert len(described) == len(set(described))
    users = {user.split(":")[0] for t in shapes for user in t.users}
    assert users == set(PAPERS) - {"cross_paper"}  # the studies across the papers train nothing
    assert [t.runs for t in shapes] == sorted((t.runs for t in shapes), reverse=True)
    # simplified_blocks' base decoder: the shape with the most runs at the laptop scale
    base = config["simplified_blocks"]["model"]
    assert shapes[0].shape == shape_of(
        dict(base, vocab_size=config["tokenizer"]["vocab_size"]), config["simplified_blocks"]["train"]["batch_size"]
    )


def test_a_head_dim_that_is_not_width_over_heads_is_kept_and_has_no_gpt2_twin():
    shape = shape_of({"d_model": 16, "n_layers": 1, "n_heads": 2, "head_dim": 4, "max_seq_len": 8, "vocab_size": 32}, 2)
    assert shape.head_dim == 4 and not shape.gpt2_compatible
    plain = shape_of({"d_model": 16, "n_layers": 1, "n_heads": 2, "head_dim": 8, "max_seq_len": 8, "vocab_size": 32}, 2)
    assert plain.head_dim is None and plain.gpt2_compatible and plain.mlp_width == 64


def test_run_shapes_times_each_shape_in_each_precision_against_that_precisions_peak():
    shapes = [BenchShape(16, 1, 2, 8, 2, 32), BenchShape(16, 1, 2, 8, 2, 32, d_ff=24, head_dim=4)]
    result = run_shapes(
        shapes, threads=1, steps=1, rounds=1, warmup=1, include_hf=False, precisions=["fp32", "bf16"], matmul_size=256
    )
    assert [(BenchShape(**i["shape"]), i["precision"]) for i in result["shapes"]] == [
        (shapes[0], "fp32"),
        (shapes[0], "bf16"),
        (shapes[1], "fp32"),
        (shapes[1], "bf16"),
    ]
    assert result["device"] == "cpu" and set(result["matmul_peak_gflops"]) == {"fp32", "bf16"}
    for item in result["shapes"]:
        (ours,) = item["models"]
        peak = result["matmul_peak_gflops"][item["precision"]]
        assert item["skipped"] is None and item["matmul_peak_gflops"] == peak
        assert ours["tokens_per_s"] > 0 and 0 < ours["fraction_of_peak"]
        assert abs(ours["gflops"] / ours["fraction_of_peak"] - peak) < 1e-6 * peak
        assert ours["peak_memory_gib"] is None  # measured on a GPU only
        assert ours["parameters"] == parameter_count(BenchShape(**item["shape"]))
    table = format_shapes(result)
    assert "hd=4 ff=24" in table and " bf16" in table


def test_a_shape_whose_training_state_exceeds_the_devices_memory_is_skipped_before_any_allocation(monkeypatch):
    import repro.bench as bench

    shape = BenchShape(16, 1, 2, 8, 2, 32)
    need = parameter_count(shape) * bench.TRAINING_STATE_BYTES
    monkeypatch.setattr(bench, "device_memory", lambda device: need - 1)
    monkeypatch.setattr(bench, "_time_precision", lambda *a, **k: pytest.fail("a skipped shape was timed"))
    result = run_shapes([shape], threads=1, steps=1, rounds=1, warmup=1, include_hf=False)
    (item,) = result["shapes"]
    assert item["models"] == [] and item["skipped"].startswith("skipped: ")
    assert "GiB of training state, cpu memory is" in item["skipped"]
    assert result["matmul_peak_gflops"] == {"fp32": None}  # nothing timed, no peak
    assert item["skipped"] in format_shapes(result)


def test_bad_device_or_precision_fails_before_any_timing():
    with pytest.raises(ValueError, match="precision 'fp16' is not one of"):
        run_shapes([BenchShape(16, 1, 2, 8, 2, 32)], threads=1, precisions=["fp16"])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="sees no CUDA device"):
            run_shapes([BenchShape(16, 1, 2, 8, 2, 32)], threads=1, device="cuda")


def test_config_files_merge_as_snakemake_merges_them():
    from snakemake.utils import update_config

    paper = yaml.safe_load((ROOT / "config/paper.yaml").read_text())
    ours, snakemake = (yaml.safe_load((ROOT / "config/config.yaml").read_text()) for _ in range(2))
    update_config(snakemake, paper)
    assert merge_into(ours, paper) == snakemake


def test_shape_selection_keeps_each_papers_most_trained_shapes_and_caps_tokens():
    shapes = config_shapes(load_scale_files([str(ROOT / "config/config.yaml"), str(ROOT / "config/paper.yaml")]))
    kept = top_per_paper(shapes, 1)
    papers = [user.split(":")[0] for t in kept for user in t.users]
    assert set(papers) == {user.split(":")[0] for t in shapes for user in t.users}
    # at paper scale layer_diversity reads pretrained checkpoints and trains nothing
    assert set(papers) == set(PAPERS) - {"cross_paper", "layer_diversity"}
    for paper in set(papers):  # each paper's first shape, in the overall order
        assert next(t for t in shapes if any(u.startswith(paper + ":") for u in t.users)) in kept
    capped = cap_tokens(kept, 4096)
    for before, after in zip(kept, capped):
        assert after.shape.batch_size == max(1, min(before.shape.batch_size, 4096 // before.shape.seq_len))
        assert dataclasses.replace(after.shape, batch_size=before.shape.batch_size) == before.shape
        assert (after.runs, after.users) == (before.runs, before.users)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the error is for machines without a GPU")
def test_the_command_asked_for_a_gpu_it_cannot_see_says_so_before_reading_any_config(capsys):
    from repro.cli import build_parser

    args = build_parser("bench").parse_args(["bench", "--device", "cuda", "--config", "no/such/file.yaml"])
    assert args.func(args) == 2
    assert "sees no CUDA device; run with a python whose torch is a CUDA build" in capsys.readouterr().err
