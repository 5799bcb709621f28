"""The throughput benchmark: the shapes a config trains, and one timed step per shape."""

from __future__ import annotations

from pathlib import Path

from repro.bench import BenchShape, config_shapes, format_shapes, run_shapes, shape_of
from repro.commands.bench import load_config
from repro.papers import PAPERS

ROOT = Path(__file__).resolve().parents[1]


def test_every_paper_lists_the_shapes_it_trains_and_each_shape_appears_once():
    config = load_config([str(ROOT / "config/config.yaml")])
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


def test_run_shapes_times_each_shape_against_one_peak():
    shapes = [BenchShape(16, 1, 2, 8, 2, 32), BenchShape(16, 1, 2, 8, 2, 32, d_ff=24, head_dim=4)]
    result = run_shapes(shapes, threads=1, steps=1, rounds=1, warmup=1, include_hf=False)
    assert len(result["shapes"]) == 2
    for item in result["shapes"]:
        (ours,) = item["models"]
        assert ours["tokens_per_s"] > 0 and 0 < ours["fraction_of_peak"]
        assert (
            abs(ours["gflops"] / ours["fraction_of_peak"] - result["matmul_peak_gflops"])
            < 1e-6 * result["matmul_peak_gflops"]
        )
    assert "hd=4 ff=24" in format_shapes(result)
