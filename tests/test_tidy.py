"""The one CSV writer and the shared gather step."""

from __future__ import annotations

import pandas as pd
import pytest

from repro.cli import main
from repro.pipeline.tidy import concat_csvs, write_csv


def test_write_csv_writes_whole_files_at_fixed_precision(tmp_path, capsys):
    out = tmp_path / "deep" / "table.csv"
    assert write_csv(pd.DataFrame({"a": [1, 2], "x": [1 / 3, 2.0]}), out, float_format="%.4g") == 0
    assert out.read_bytes() == b"a,x\n1,0.3333\n2,2\n"
    assert list(out.parent.iterdir()) == [out]  # no temporary file left behind
    assert f"wrote 2 rows to {out}" in capsys.readouterr().err


def test_gather_stacks_each_group_in_the_given_order(tmp_path):
    paths = []
    for seed in (2, 10, 1):
        path = tmp_path / f"seed{seed}.csv"
        write_csv(pd.DataFrame({"seed": [seed], "value": [seed / 7]}), path, float_format=None)
        paths.append(str(path))
    other = tmp_path / "other.csv"
    write_csv(pd.DataFrame({"k": ["a"]}), other)
    rc = main(["gather", "--group", str(tmp_path / "all.csv"), *paths, "--group", str(tmp_path / "o.csv"), str(other)])
    assert rc == 0
    gathered = pd.read_csv(tmp_path / "all.csv")
    assert gathered["seed"].tolist() == [2, 10, 1]
    # exact: written at full precision by default and parsed back from the text
    assert gathered["value"].tolist() == [2 / 7, 10 / 7, 1 / 7]
    assert pd.read_csv(tmp_path / "o.csv")["k"].tolist() == ["a"]
    assert concat_csvs(paths).equals(gathered)


def test_gather_refuses_a_group_without_inputs(tmp_path, capsys):
    assert main(["gather", "--group", str(tmp_path / "out.csv")]) == 2
    assert "needs an output and at least one input" in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(
    "command", ["gather", "simplified_blocks", "sixteen_heads", "param_allocation", "layer_diversity"]
)
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: python -m repro " + command in capsys.readouterr().out
