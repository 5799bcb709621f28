"""The masked-LM step-time table: a kept table is checked against the blocks before it is used again,
copied byte for byte, and refused (before any job starts) when it timed other settings."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from repro.cli import main
from repro.papers.simplified_blocks.specs import mlm_run_spec
from repro.papers.simplified_blocks.step_times import (
    budget_steps,
    reference_budget_steps,
    table_problems,
    timed_setup,
)
from repro.pipeline.configcheck import PipelineConfigError, check_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())
MLM = CONFIG["simplified_blocks"]["mlm"]
VOCAB = CONFIG["tokenizer"]["vocab_size"]


def specs(section=MLM, seed=0):
    return [mlm_run_spec(section, variant, seed) for variant in section["variants"]]


def table(section=MLM, threads=1, vocab=VOCAB, rounds=2) -> pd.DataFrame:
    """A table as `simplified_blocks step-times` writes it: `rounds` rounds of every block."""
    rows = [
        dict(variant=spec["variant"], round=r, position=i, seconds=0.02 * (i + 1), seconds_per_step=0.01 * (i + 1),
             batch_size=spec["train"]["batch_size"], vocab_size=vocab, setup=timed_setup(spec, threads))
        for r in range(rounds)
        for i, spec in enumerate(specs(section))
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_setup_is_the_cost_of_an_update_not_the_seed_or_learning_rate():
    base = specs()[0]
    assert timed_setup(base, 1) == timed_setup(mlm_run_spec(MLM, base["variant"], 7), 1)
    assert timed_setup(base, 1) == timed_setup(dict(base, train=dict(base["train"], lr=0.5, time_budget_s=9.0)), 1)
    assert timed_setup(base, 1) == timed_setup(dict(base, model=dict(base["model"], vocab_size=3)), 1)
    assert timed_setup(base, 1) != timed_setup(base, 2)
    assert timed_setup(base, 1) != timed_setup(dict(base, model=dict(base["model"], d_model=64)), 1)
    assert timed_setup(base, 1) != timed_setup(dict(base, train=dict(base["train"], batch_size=3)), 1)


def test_a_table_is_refused_for_what_it_did_not_time(tmp_path):
    path = tmp_path / "times.csv"
    table().to_csv(path, index=False)
    assert table_problems(path, specs(), 1, VOCAB) == []
    assert table_problems(path, specs(), 1, None) == []  # a hub vocabulary, known only to the job
    assert "with a vocabulary of [512] ids, but the tokens have 300" in table_problems(path, specs(), 1, 300)[0]
    assert "with other settings than this config's" in table_problems(path, specs(), 2, VOCAB)[0]
    wider = copy.deepcopy(MLM)
    wider["model"]["d_model"] = 64
    assert len(table_problems(path, specs(wider), 1, VOCAB)) == len(MLM["variants"])
    table().query("variant != 'sas'").to_csv(path, index=False)
    assert table_problems(path, specs(), 1, VOCAB) == [f"{path} has no step times of block 'sas' (timed: "
                                                       "parallel, pre_ln, sas_p, sas_p_nonorm, vskipinit)"]  # fmt: skip
    table().drop(columns="setup").to_csv(path, index=False)
    assert "has no column setup" in table_problems(path, specs(), 1, VOCAB)[0]
    path.write_bytes(b"\x00\xff not a table")
    assert table_problems(path, specs(), 1, VOCAB)
    assert table_problems(tmp_path / "absent.csv", specs(), 1, VOCAB) == [f"{tmp_path / 'absent.csv'} does not exist"]


def test_step_times_reuse_copies_a_kept_table_byte_for_byte_and_times_nothing(tmp_path, capsys):
    kept, out = tmp_path / "kept.csv", tmp_path / "out" / "mlm_step_times.csv"
    table().to_csv(kept, index=False, float_format="%.6g")
    args = [
        "simplified_blocks",
        "step-times",
        "--specs",
        json.dumps(specs()),
        "--settings",
        json.dumps(MLM["step_timing"]),
    ]
    assert main([*args, "--vocab-size", str(VOCAB), "--reuse", str(kept), "--out", str(out)]) == 0
    assert out.read_bytes() == kept.read_bytes()
    assert "nothing timed" in capsys.readouterr().err
    assert main([*args, "--vocab-size", "300", "--reuse", str(kept), "--out", str(tmp_path / "other.csv")]) == 2
    printed = capsys.readouterr().err
    assert printed.startswith("error: the kept step-time table cannot be used") and "step_times_file to null" in printed
    assert not (tmp_path / "other.csv").exists()


def test_the_config_check_refuses_a_kept_table_before_any_job(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kept = tmp_path / "kept.csv"
    table().to_csv(kept, index=False)

    def with_table(path, edit=lambda section: None):
        config = copy.deepcopy(CONFIG)
        config["simplified_blocks"]["mlm"]["step_times_file"] = str(path)
        edit(config["simplified_blocks"]["mlm"])
        return config

    check_config(with_table(kept))
    for path, edit, expected in [
        (tmp_path / "absent.csv", lambda s: None, "absent.csv does not exist"),
        (kept, lambda s: s["model"].update(d_model=64), "timed block 'pre_ln' with other settings"),
        (kept, lambda s: s.update(threads=2), "timed block 'pre_ln' with other settings"),
        ("results/smoke/simplified_blocks/data/mlm_step_times.csv", lambda s: None, "inside results/"),
    ]:
        with pytest.raises(PipelineConfigError) as err:
            check_config(with_table(path, edit))
        message = str(err.value)
        assert "config key simplified_blocks.mlm.step_times_file" in message and expected in message, message


def test_budget_steps_are_the_budget_over_the_median_timed_step(tmp_path):
    sas = next(spec for spec in specs() if spec["variant"] == "sas")
    frame = table(rounds=3)
    frame.loc[frame["variant"] == "sas", "seconds_per_step"] = [0.05, 0.04, 0.5]  # median 0.05
    path = tmp_path / "times.csv"
    frame.to_csv(path, index=False)
    # exact: 3.0 / 0.05 rounds to 60.0 (one correctly rounded division of the values read back from the CSV)
    assert budget_steps(path, sas, 1, VOCAB, budget_s=3.0, cap=10**9) == 60
    assert budget_steps(path, sas, 1, VOCAB, budget_s=3.0, cap=7) == 7
    assert budget_steps(path, sas, 1, VOCAB, budget_s=0.001, cap=10**9) == 1
    frame.query("variant != 'sas'").to_csv(tmp_path / "other.csv", index=False)
    with pytest.raises(ValueError, match="has no step times of block 'sas'"):
        budget_steps(tmp_path / "other.csv", sas, 1, VOCAB, budget_s=3.0, cap=10)
    with pytest.raises(ValueError, match="with a vocabulary of \\[512\\] ids, but the tokens have 32"):
        budget_steps(path, sas, 1, 32, budget_s=3.0, cap=10)


def test_a_budget_in_reference_updates_gives_the_reference_block_exactly_its_updates(tmp_path):
    by_variant = {spec["variant"]: spec for spec in specs()}
    frame = table(rounds=3)
    frame.loc[frame["variant"] == "pre_ln", "seconds_per_step"] = [0.03, 0.07, 0.0301]  # median 0.0301
    frame.loc[frame["variant"] == "sas", "seconds_per_step"] = [0.02, 0.02, 0.9]  # median 0.02
    path = tmp_path / "times.csv"
    frame.to_csv(path, index=False)
    reference = {"block": "pre_ln", "updates": 1000}
    # the reference block makes its updates whatever the float division would round to
    assert reference_budget_steps(path, by_variant["pre_ln"], 1, VOCAB, reference, cap=10**9) == (1000, 1000 * 0.0301)
    steps, seconds = reference_budget_steps(path, by_variant["sas"], 1, VOCAB, reference, cap=10**9)
    assert (steps, seconds) == (int(1000 * 0.0301 / 0.02), 1000 * 0.0301)  # 1505: the same time at SAS's step
    assert reference_budget_steps(path, by_variant["sas"], 1, VOCAB, reference, cap=99)[0] == 99
    frame.query("variant != 'pre_ln'").to_csv(tmp_path / "no_reference.csv", index=False)
    with pytest.raises(ValueError, match="no step times of the budget's reference block 'pre_ln'"):
        reference_budget_steps(tmp_path / "no_reference.csv", by_variant["sas"], 1, VOCAB, reference, cap=10)


def test_exactly_one_masked_lm_budget_is_given_before_any_job_starts():
    both = copy.deepcopy(CONFIG)
    both["simplified_blocks"]["mlm"]["train"]["time_budget_s"] = 1.0
    both["simplified_blocks"]["mlm"]["budget_updates_of"] = {"block": "pre_ln", "updates": 10}
    neither = copy.deepcopy(both)
    neither["simplified_blocks"]["mlm"]["train"]["time_budget_s"] = None
    neither["simplified_blocks"]["mlm"]["budget_updates_of"] = None
    unknown = copy.deepcopy(neither)
    unknown["simplified_blocks"]["mlm"]["budget_updates_of"] = {"block": "nope", "updates": 10}
    for config, expected in [
        (both, "give exactly one budget"),
        (neither, "give exactly one budget"),
        (unknown, "budget_updates_of"),
    ]:
        with pytest.raises(PipelineConfigError) as err:
            check_config(config)
        assert expected in str(err.value), str(err.value)
