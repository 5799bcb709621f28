"""The notebook runner: a jupytext script in, executed notebook + HTML + figure + table out.

Each test that starts a kernel takes a few seconds; the whole file stays around 15 s.
"""

from __future__ import annotations

import json
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
    assert changed == [], f"rerun changed {changed}"


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


def test_kernel_runs_this_interpreter(tmp_path, monkeypatch):
    assert notebook.kernel_command()[0] == sys.executable

    # A python3 spec found first that names another interpreter is overridden for the run.
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps({"argv": ["/usr/bin/false", "{connection_file}"], "language": "python", "display_name": "x"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    assert notebook.kernel_command()[0] == "/usr/bin/false"
    with notebook._pinned_kernelspec():
        assert notebook.kernel_command()[0] == sys.executable
    assert notebook.kernel_command()[0] == "/usr/bin/false"


@pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets only on POSIX")
def test_kernel_talks_over_private_unix_sockets(tmp_path, monkeypatch):
    # TCP ports are picked then released before the kernel binds them: two kernels started at once
    # could take the same port. The kernel must use sockets in a directory of its own, removed after.
    monkeypatch.chdir(tmp_path)
    script = (
        '# %% tags=["parameters"]\nx = 1\n# %%\nfrom ipykernel.kernelapp import IPKernelApp\n'
        "app = IPKernelApp.instance()\nprint(app.transport, app.ip)\n"
    )
    src = _write(tmp_path / "t.py", script)
    out = notebook.run_notebook(src, results_dir=tmp_path / "results", paper="demo", item="fig1", scale="smoke")
    printed = nbformat.read(out.notebook, as_version=4).cells[-1].outputs[0].text.split()
    assert printed[0] == "ipc"
    socket_dir = Path(printed[1]).parent
    assert socket_dir.name.startswith("repro-kernel-") and not socket_dir.exists()
    assert not list(tmp_path.glob("kernel-*"))


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
    assert notebook.parse_param(text) == expected


def test_parameters_may_not_contradict_runner_arguments():
    with pytest.raises(notebook.NotebookError, match="contradicts"):
        notebook.build_parameters("results", "demo", "fig1", params={"paper": "other"})
    params = notebook.build_parameters("results", "demo", "fig1", params={"scale": "smoke", "k": 2})
    assert tuple(params)[-len(notebook.RUNNER_PARAMETERS) :] == notebook.RUNNER_PARAMETERS
    assert params["scale"] == "smoke" and params["k"] == 2
    assert params["table_csv"] == "results/demo/tables/fig1.csv"
    assert notebook.build_parameters("results", "demo", "fig1")["scale"] == "laptop"
