"""The notebook runner: a jupytext script in, executed notebook + HTML + figure + table out.

Each test that starts a kernel takes a few seconds; the whole file stays around 15 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from repro.cli import main
from repro.pipeline import notebook

FIGURE_SCRIPT = textwrap.dedent(
    """\
    # %% [markdown]
    # # A tiny figure and table

    # %% tags=["parameters"]
    results_dir = "results"
    paper = "demo"
    item = "fig1"
    scale = "laptop"
    points = 4

    # %%
    import os
    import matplotlib.pyplot as plt
    import pandas as pd
    from repro.pipeline.plotting import line_style, save_figure, use_style
    from repro.pipeline.tables import save_table

    import warnings

    env = {k: os.environ[k] for k in ("MPLBACKEND", "PYTHONHASHSEED", "OMP_NUM_THREADS", "SOURCE_DATE_EPOCH")}
    print(env)
    warnings.warn("a warning names its cell's file, which ipykernel names after its pid")
    with open("env.json", "w") as fh:  # relative: checks the kernel's working directory too
        fh.write(repr(env))

    # %%
    use_style()
    df = pd.DataFrame({"step": range(points), "loss": [1 / (s + 1) for s in range(points)]})
    fig, ax = plt.subplots()
    ax.plot(df["step"], df["loss"], label="Pre-LN", **line_style("pre_ln"))
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    save_figure(fig, results_dir, paper, item, scale);
    save_table(df, results_dir, paper, item, scale);
    """
)

FAILING_SCRIPT = textwrap.dedent(
    """\
    # %% tags=["parameters"]
    results_dir = "results"

    # %%
    ok = 1

    # %%
    raise ValueError("the data look wrong")
    """
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_run_writes_outputs_and_is_byte_identical_on_rerun(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    _write(tmp_path / "notebooks/demo/fig1.py", FIGURE_SCRIPT)
    argv = [
        "notebook",
        "run",
        "notebooks/demo/fig1.py",
        "--paper",
        "demo",
        "--item",
        "fig1",
        "--results-dir",
        "results",
        "--scale",
        "smoke",
        "--param",
        "points=5",
    ]

    assert main(argv) == 0
    first = _snapshot(tmp_path / "results")
    assert sorted(first) == [
        "demo/figures/fig1.pdf",
        "demo/figures/fig1.png",
        "demo/notebooks/fig1.html",
        "demo/notebooks/fig1.ipynb",
        "demo/tables/fig1.csv",
        "demo/tables/fig1.md",
    ]
    assert "results/demo/notebooks/fig1.ipynb" in capsys.readouterr().out

    # The kernel ran in the caller's directory with the fixed environment.
    env = eval((tmp_path / "env.json").read_text())
    assert env == {"MPLBACKEND": "Agg", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "SOURCE_DATE_EPOCH": "0"}

    nb = nbformat.reads(first["demo/notebooks/fig1.ipynb"].decode(), as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    for line in (
        "points = 5",
        'scale = "smoke"',
        'results_dir = "results"',
        'figure_png = "results/demo/figures/fig1.png"',
    ):
        assert line in injected[0].source
    # No volatile metadata survives; the figure is embedded so the HTML shows it.
    assert "start_time" not in json.dumps(nb.metadata) and "duration" not in json.dumps(nb.metadata)
    assert all(c.id == f"cell-{i:03d}" for i, c in enumerate(nb.cells))
    assert any(o.get("data", {}).get("image/png") for c in nb.cells for o in c.get("outputs", []))
    assert nb.metadata.papermill.input_path == "notebooks/demo/fig1.py"
    assert b"<html" in first["demo/notebooks/fig1.html"]
    assert b"Scale: smoke" in first["demo/tables/fig1.md"]
    # A warning points at its cell without the kernel's pid, so that a rerun writes the same notebook.
    stderr = "".join(o["text"] for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr")
    assert "<cell " in stderr and "ipykernel_" not in stderr

    assert main(argv) == 0
    second = _snapshot(tmp_path / "results")
    changed = [name for name in first if first[name] != second[name]]
    assert changed == [], f"rerun changed {changed}"  # exact: the same computation twice on one machine


def test_failing_cell_exits_nonzero_and_names_cell_and_partial_notebook(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "notebooks/demo/bad.py", FAILING_SCRIPT)

    code = main(
        ["notebook", "run", "notebooks/demo/bad.py", "--paper", "demo", "--item", "bad", "--results-dir", "results"]
    )

    assert code != 0
    err = capsys.readouterr().err
    assert "notebooks/demo/bad.py failed" in err
    assert "code cell 3 of the source" in err
    assert 'raise ValueError("the data look wrong")' in err
    assert "ValueError: the data look wrong" in err
    partial = tmp_path / "results/demo/notebooks/bad.failed.ipynb"
    assert "results/demo/notebooks/bad.failed.ipynb" in err
    nb = nbformat.read(partial, as_version=4)
    assert any("the data look wrong" in json.dumps(c.get("outputs", [])) for c in nb.cells)


def test_source_without_parameters_cell_is_refused(tmp_path):
    src = _write(tmp_path / "x.py", "# %%\nx = 1\n")
    with pytest.raises(notebook.NotebookError, match="no cell tagged 'parameters'"):
        notebook.load_script(src)


OUTPUTS_SCRIPT = textwrap.dedent(
    """\
    # %% tags=["parameters"]
    x = 1

    # %%
    import os
    import sys
    from IPython.display import display

    print("one")
    print("two")
    print("to stderr", file=sys.stderr)
    print("three")
    display({"a": 1})
    os.chdir("/")
    os.environ["SET_BY_A_CELL"] = "1"
    x + 41

    # %%
    x + 1;

    # %%
    print(hash("hash seed"), os.getpid())
    """
)


def test_cells_record_their_outputs_in_order_apart_from_the_caller(tmp_path, monkeypatch):
    """What a kernel would have sent back, in the order it happened, from a process of its own: the
    caller's directory and environment stay as they were."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SET_BY_A_CELL", raising=False)
    src = _write(tmp_path / "t.py", OUTPUTS_SCRIPT)
    out = notebook.run_notebook(src, results_dir="results", paper="demo", item="fig1", scale="smoke")
    assert Path.cwd() == tmp_path and "SET_BY_A_CELL" not in os.environ
    code = [c for c in nbformat.read(out.notebook, as_version=4).cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == [1, 2, 3, 4, 5]  # the injected parameters first
    first = code[2]
    assert [o.output_type for o in first.outputs] == ["stream", "stream", "stream", "display_data", "execute_result"]
    assert [o.get("name") for o in first.outputs[:3]] == ["stdout", "stderr", "stdout"]
    assert first.outputs[0].text == "one\ntwo\n" and first.outputs[2].text == "three\n"
    assert first.outputs[3].data["text/plain"] == "{'a': 1}"
    assert first.outputs[4].data["text/plain"] == "42" and first.outputs[4].execution_count == 3
    assert code[3].outputs == []  # a trailing semicolon hides the result
    printed_hash, pid = code[4].outputs[0].text.split()
    assert int(pid) != os.getpid()
    # The fixed hash seed, whichever way the cells' process was started.
    seed0 = subprocess.run(
        [sys.executable, "-c", "print(hash('hash seed'))"],
        env={**os.environ, "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[0]
    assert printed_hash == seed0


def test_a_forked_runner_gives_the_notebook_of_a_fresh_interpreter(tmp_path):
    """An interpreter with the fixed hash seed (a job server's child) forks the cells' process; any
    other starts a fresh interpreter. Both write the same notebook."""
    _write(tmp_path / "t.py", OUTPUTS_SCRIPT)
    written = {}
    for seed in ("0", "random"):
        results = f"results_{seed}"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "repro",
                "notebook",
                "run",
                "t.py",
                "--paper",
                "demo",
                "--item",
                "fig1",
                "--results-dir",
                results,
                "--scale",
                "smoke",
            ],
            cwd=tmp_path,
            env={**{k: v for k, v in os.environ.items() if k != "REPRO_JOB_SERVER"}, "PYTHONHASHSEED": seed},
            check=True,
            capture_output=True,
        )
        nb = nbformat.read(tmp_path / results / "demo/notebooks/fig1.ipynb", as_version=4)
        for cell in nb.cells:  # the pid differs, and so do the paths that name the results directory
            if cell.cell_type == "code" and cell.source.startswith("print(hash"):
                cell.outputs[0].text = cell.outputs[0].text.split()[0]
        written[seed] = nbformat.writes(nb).replace(results, "RESULTS")
    assert written["0"] == written["random"]


def test_a_cell_past_its_time_limit_fails_its_notebook(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "slow.py", '# %% tags=["parameters"]\nx = 1\n\n# %%\nimport time\ntime.sleep(30)\n')
    argv = ["notebook", "run", "slow.py", "--paper", "demo", "--item", "fig1", "--results-dir", "results"]
    assert main([*argv, "--timeout", "1"]) != 0
    err = capsys.readouterr().err
    assert "code cell 2 of the source" in err and "time.sleep(30)" in err
    assert "CellTimeout" in err and "per-cell limit of 1 s" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("n=3", ("n", 3)),
        ("lr=1e-3", ("lr", 1e-3)),
        ("flag=true", ("flag", True)),
        ("seeds=[0, 1]", ("seeds", [0, 1])),
        ("path=results/a.csv", ("path", "results/a.csv")),
        ("name=", ("name", "")),
    ],
)
def test_parse_param(text, expected):
    assert notebook.parse_param(text) == expected  # exact: floats parsed from their literal ("1e-3")


def test_parameters_may_not_contradict_runner_arguments():
    with pytest.raises(notebook.NotebookError, match="contradicts"):
        notebook.build_parameters("results", "demo", "fig1", params={"paper": "other"})
    params = notebook.build_parameters("results", "demo", "fig1", params={"scale": "smoke", "k": 2})
    assert tuple(params)[-len(notebook.RUNNER_PARAMETERS) :] == notebook.RUNNER_PARAMETERS
    assert params["scale"] == "smoke" and params["k"] == 2
    assert params["table_csv"] == "results/demo/tables/fig1.csv"
    assert notebook.build_parameters("results", "demo", "fig1")["scale"] == "laptop"
