"""The output comparison of the cluster test (tests/cluster/compare_results.py) on hand-made trees."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).parent / "cluster" / "compare_results.py"
spec = importlib.util.spec_from_file_location("compare_results", SCRIPT)
compare_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_results)


def write_weights(path: Path, value: float, metadata: dict) -> None:
    import torch
    from safetensors.torch import save_file

    save_file({"w": torch.full((2,), value), "b": torch.zeros(1)}, str(path), metadata=metadata)


def make_tree(root: Path, seconds: str = "1.5", loss: str = "0.25", weight: float = 1.0, extra: bool = False) -> Path:
    (root / "p" / "runs").mkdir(parents=True)
    (root / "benchmarks").mkdir()
    (root / "p" / "curve.csv").write_text(f"step,loss,seconds\n1,{loss},{seconds}\n")
    write_weights(root / "p" / "runs" / "model.safetensors", weight, {"step": "8", "config_hash": "abc"})
    (root / "p" / "fig.png").write_bytes(seconds.encode())
    (root / "benchmarks" / "job.tsv").write_text(seconds)
    (root / "p" / "runs" / "metrics.jsonl").write_text(f'{{"step": 1, "loss": {loss}, "seconds": {seconds}}}\n')
    if extra:
        (root / "p" / "extra.csv").write_text("a\n1\n")
    return root


def test_timings_may_differ_but_values_and_weights_may_not(tmp_path, capsys):
    local = make_tree(tmp_path / "local")
    assert compare_results.main(str(local), str(make_tree(tmp_path / "same-values", seconds="9.0"))) == 0
    out = capsys.readouterr().out
    assert "metrics.jsonl: differs only in time fields" in out
    assert (
        "differs only in time columns or timing claims" in out
        and "p/fig.png: bytes differ" in out
        and "benchmarks" not in out
    )
    assert compare_results.main(str(local), str(make_tree(tmp_path / "other-loss", loss="0.5"))) == 1
    out = capsys.readouterr().out
    assert "values differ in columns ['loss']" in out and "metrics.jsonl: values differ outside time fields" in out
    assert compare_results.main(str(local), str(make_tree(tmp_path / "other-weights", weight=2.0))) == 1
    assert "tensor w differs" in capsys.readouterr().out
    assert compare_results.main(str(local), str(make_tree(tmp_path / "more-files", extra=True))) == 1
    assert "only in SLURM run: p/extra.csv" in capsys.readouterr().out


def test_weights_compare_by_content_not_header_order(tmp_path):
    write_weights(tmp_path / "a.safetensors", 1.0, {"step": "8", "config_hash": "abc"})
    write_weights(tmp_path / "b.safetensors", 1.0, {"config_hash": "abc", "step": "8"})
    assert compare_results.weights_difference(tmp_path / "a.safetensors", tmp_path / "b.safetensors") is None
    write_weights(tmp_path / "c.safetensors", 1.0, {"step": "9", "config_hash": "abc"})
    assert "metadata" in compare_results.weights_difference(tmp_path / "a.safetensors", tmp_path / "c.safetensors")


def test_timing_claims_are_left_out_of_claims_csv_only(tmp_path):
    for name, speed in (("a", "+1%"), ("b", "+9%")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "claims.csv").write_text(f"claim,measured\nspeedup_at_batch_64,{speed}\nloss_drop,0.5\n")
        (tmp_path / name / "other.csv").write_text(f"claim,measured\nspeedup_at_batch_64,{speed}\n")
    a, b = tmp_path / "a", tmp_path / "b"
    assert compare_results.csv_difference(a / "claims.csv", b / "claims.csv") is None
    assert compare_results.csv_difference(a / "other.csv", b / "other.csv") is not None


def test_wall_clock_budgeted_outputs_are_held_to_their_form(tmp_path, capsys):
    """The masked-LM runs train for a wall-clock budget: their weights and scores may differ in value,
    not in tensor names and shapes, columns or rows; their claims (mlm_*, glue_*) are left out."""
    trees = {}
    for name, value, rows in (("a", 1.0, "0.5"), ("b", 2.0, "0.7")):
        root = tmp_path / name / "simplified_blocks"
        (root / "mlm_runs" / "sas" / "seed0").mkdir(parents=True)
        (root / "data").mkdir()
        write_weights(root / "mlm_runs" / "sas" / "seed0" / "model.safetensors", value, {"step": str(int(value))})
        (root / "data" / "glue_scores.csv").write_text(f"variant,score\nsas,{rows}\n")
        (root / "claims.csv").write_text(f"claim,measured\nglue_sas_matches_pre_ln,{rows}\nshaped_identity,1\n")
        trees[name] = tmp_path / name
    assert compare_results.main(str(trees["a"]), str(trees["b"])) == 0
    assert "glue_scores.csv: from a wall-clock-budgeted run" in capsys.readouterr().out
    # other metadata of a budgeted model is fine; a non-budgeted claim that differs still fails
    write_weights(trees["b"] / "simplified_blocks" / "mlm_runs" / "sas" / "seed0" / "model.safetensors", 2.0, {})
    (trees["b"] / "simplified_blocks" / "claims.csv").write_text(
        "claim,measured\nglue_sas_matches_pre_ln,0.7\nshaped_identity,2\n"
    )
    assert compare_results.main(str(trees["a"]), str(trees["b"])) == 1
    assert "claims.csv: values differ in columns ['measured']" in capsys.readouterr().out
    # and so does a budgeted model whose tensors changed shape
    import torch
    from safetensors.torch import save_file

    save_file(
        {"w": torch.zeros(3), "b": torch.zeros(1)},
        str(trees["b"] / "simplified_blocks" / "mlm_runs" / "sas" / "seed0" / "model.safetensors"),
    )
    assert "tensor w differs" in compare_results.weights_difference(
        trees["a"] / "simplified_blocks" / "mlm_runs" / "sas" / "seed0" / "model.safetensors",
        trees["b"] / "simplified_blocks" / "mlm_runs" / "sas" / "seed0" / "model.safetensors",
        values=False,
    )


def test_runs_given_the_same_step_times_are_compared_in_value(tmp_path, capsys):
    """With the same step-time table both trees' masked-LM runs make the same updates: their outputs and
    claims are compared like every other run's. A run published again from its finished checkpoint
    (resumed_from) is the same run."""
    trees = {}
    for name, value, resumed in (("a", 1.0, "null"), ("b", 2.0, "8")):
        root = tmp_path / name / "simplified_blocks"
        (root / "mlm_runs" / "sas" / "seed0").mkdir(parents=True)
        (root / "data").mkdir()
        (root / "data" / "mlm_step_times.csv").write_text("variant,seconds_per_step\nsas,0.01\n")
        write_weights(root / "mlm_runs" / "sas" / "seed0" / "model.safetensors", value, {"step": "8"})
        (root / "mlm_runs" / "sas" / "seed0" / "run.json").write_text(f'{{"step": 8, "resumed_from": {resumed}}}')
        trees[name] = tmp_path / name
    assert compare_results.main(str(trees["a"]), str(trees["b"])) == 1
    failures = [line for line in capsys.readouterr().out.splitlines() if "FAIL" in line]
    assert (
        len(failures) == 1 and "weights differ: simplified_blocks/mlm_runs/sas/seed0/model.safetensors" in failures[0]
    )
    path = trees["b"] / "simplified_blocks" / "data" / "mlm_step_times.csv"
    path.write_text("variant,seconds_per_step\nsas,0.02\n")  # timed again: held to their form only
    assert compare_results.main(str(trees["a"]), str(trees["b"])) == 0


def test_across_commits_lineage_cards_may_differ_in_commit_and_source_digests_only(tmp_path, capsys):
    import json

    def card(root: Path, commit: str, digest: str, scale: str = "'smoke'") -> Path:
        (root / "p").mkdir(parents=True)
        doc = {
            "code": {"commit": commit, "dirty": False},
            "item": "fig01",
            "steps": [{"rule": "figure_notebook", "params": [f"'{digest * 64}'", scale], "benchmark": {"seconds": 1}}],
        }
        (root / "p" / "fig01.lineage.json").write_text(json.dumps(doc))
        return root

    before = card(tmp_path / "before", "a" * 40, "1")
    after = card(tmp_path / "after", "b" * 40, "2")
    assert compare_results.main(str(before), str(after)) == 1  # same commit expected: a new digest is a difference
    assert "fig01.lineage.json: values differ outside time fields" in capsys.readouterr().out
    assert compare_results.main(str(before), str(after), across_commits=True) == 0
    other = card(tmp_path / "other-scale", "b" * 40, "2", scale="'laptop'")
    assert compare_results.main(str(before), str(other), across_commits=True) == 1  # other params still count
