"""What `python -m repro verify` finds in a results tree, and the command it prints to make it again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from repro.data.cards import file_sha256, make_card, write_card
from repro.pipeline import rebuild
from repro.pipeline.verify import damaged_files


def test_the_kept_command_drops_what_forced_or_only_planned_a_run():
    argv = [".venv/bin/snakemake", "-n", "--forcerun", "a.csv", "b.csv", "--cores", "2", "-F", "--forcerun=c.csv"]
    argv += ["--configfile", "config/smoke.yaml", "over lay.yaml", "--dry-run"]
    assert (
        rebuild.workflow_command(argv) == ".venv/bin/snakemake --cores 2 --configfile config/smoke.yaml 'over lay.yaml'"
    )


def test_a_tree_without_a_kept_command_gets_the_readme_command_of_its_scale(tmp_path, monkeypatch):
    monkeypatch.delenv(rebuild.COMMAND_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    snakemake = str(Path(sys.executable).parent / "snakemake")
    assert rebuild.tree_command("results/laptop") == f"{snakemake} --cores all"
    assert rebuild.tree_command("results/smoke-seeds+10") == (
        f"{snakemake} --cores all --configfile config/smoke.yaml --config seed_offset=10"
    )
    command = rebuild.rebuild_command(["results/smoke/x.npz"], remove=["results/smoke/run/checkpoint.json"])
    assert command == (
        f"rm -f results/smoke/run/checkpoint.json && {snakemake} --cores all --configfile config/smoke.yaml "
        "--forcerun results/smoke/x.npz"
    )
    rebuild.kept_command_file("results/smoke").parent.mkdir(parents=True)
    rebuild.kept_command_file("results/smoke").write_text("snakemake --configfile config/smoke.yaml mine.yaml\n")
    assert rebuild.rebuild_command(["results/smoke/x.npz"]) == (
        "snakemake --configfile config/smoke.yaml mine.yaml --forcerun results/smoke/x.npz"
    )
    monkeypatch.setenv(rebuild.COMMAND_VARIABLE, "snakemake results/smoke/claims.csv --configfile config/smoke.yaml")
    assert rebuild.rebuild_command(["results/smoke/x.npz"]).endswith("smoke.yaml --forcerun results/smoke/x.npz")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """results/smoke with a dataset and its card, a training run with its checkpoint record, a job that
    trains runs it does not declare, and a lineage card that read the dataset and the run's model."""
    monkeypatch.chdir(tmp_path)
    root = Path("results/smoke")
    data = root / "paper/data"
    data.mkdir(parents=True)
    (data / "task.npz").write_bytes(b"data")
    write_card(data / "task.card.json", make_card(name="task", generator="g", seed=0, params={}, sizes={},
                                                  files=[data / "task.npz"], packages=[]))  # fmt: skip
    for run in (root / "paper/runs/a/seed0", root / "paper/runs/sweep/seed0/h1"):
        run.mkdir(parents=True)
        (run / "checkpoint-000004.safetensors").write_bytes(b"state")
        pointer = {
            "file": "checkpoint-000004.safetensors",
            "sha256": file_sha256(run / "checkpoint-000004.safetensors"),
        }
        (run / "checkpoint.json").write_text(json.dumps(pointer))
        (run / "model.safetensors").write_bytes(b"weights")
    model = root / "paper/runs/a/seed0/model.safetensors"
    steps = [
        {"rule": "train", "command": "python -m repro train", "outputs": [str(model)], "inputs": []},
        {"rule": "sweep", "command": f"python -m repro sweep --runs-dir {root}/paper/runs/sweep/seed0 --out x",
         "outputs": [str(root / "paper/data/sweep.csv")], "inputs": []},
        {"rule": "fig", "command": "python -m repro notebook", "outputs": [str(root / "paper/figures/fig01.png")],
         "inputs": [{"path": str(data / "task.npz"), "sha256": file_sha256(data / "task.npz")},
                    {"path": str(model), "sha256": file_sha256(model)},
                    {"path": "notebooks/paper/fig01.py", "sha256": "0" * 64}]},
    ]  # fmt: skip
    (root / "paper/figures").mkdir()
    (root / "paper/figures/fig01.lineage.json").write_text(json.dumps({"steps": steps}))
    return root


def test_verify_finds_each_kind_of_damage_and_what_to_force(tree):
    assert damaged_files(tree) == (4, [])  # dataset, two checkpoints, the model; not the notebook source
    (tree / "paper/data/task.npz").write_bytes(b"dat4")
    (tree / "paper/runs/a/seed0/checkpoint-000004.safetensors").write_bytes(b"stat3")
    (tree / "paper/runs/sweep/seed0/h1/checkpoint-000004.safetensors").unlink()
    (tree / "paper/runs/a/seed0/model.safetensors").write_bytes(b"weight5")
    checked, damaged = damaged_files(tree)
    found = {d.path.as_posix(): (d.target.as_posix(), [p.as_posix() for p in d.remove]) for d in damaged}
    run, sweep = "results/smoke/paper/runs/a/seed0", "results/smoke/paper/runs/sweep/seed0/h1"
    assert found == {
        "results/smoke/paper/data/task.npz": ("results/smoke/paper/data/task.npz", []),
        f"{run}/checkpoint-000004.safetensors": (f"{run}/model.safetensors", [f"{run}/checkpoint.json"]),
        f"{sweep}/checkpoint-000004.safetensors": ("results/smoke/paper/data/sweep.csv", [f"{sweep}/checkpoint.json"]),
        f"{run}/model.safetensors": (f"{run}/model.safetensors", []),
    }
    missing = next(d for d in damaged if d.path.as_posix().startswith(sweep))
    assert missing.problem.startswith("missing (recorded in")


def test_verify_names_an_unreadable_card(tree):
    (tree / "paper/data/task.card.json").write_text("{not json")
    _, damaged = damaged_files(tree)
    assert [(d.path.name, d.problem, d.target.name) for d in damaged] == [
        ("task.card.json", "not a readable data card", "task.npz")
    ]
