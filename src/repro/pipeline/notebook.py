"""Run one figure or table notebook: jupytext script -> papermill -> executed .ipynb + .html.

Every figure and table of the project is made the same way::

    python -m repro notebook run notebooks/<paper>/<item>.py --paper <paper> --item <item> \\
        --results-dir results --scale laptop [--params-file params.yaml] [--param key=value ...]

1. The jupytext percent script is read into a notebook in memory. It must have a cell tagged
   ``parameters`` (``# %% tags=["parameters"]``) with a default for every parameter.
2. papermill executes it, injecting the parameters plus ``results_dir``, ``paper``, ``item``,
   ``scale`` and the output paths (``figure_png``, ``figure_pdf``, ``table_csv``, ``table_md``).
   The cells run in an IPython shell in a child process of this one, not in a Jupyter kernel
   (:mod:`repro.pipeline.notebook_engine`), in the caller's working directory, so relative paths
   mean the same inside and out, with a fixed environment
   (:func:`~repro.pipeline.notebook_engine.notebook_environment`), a per-cell timeout, and the
   notebook saved after every cell.
3. The executed notebook is written to ``RESULTS/<paper>/notebooks/<item>.ipynb`` without volatile
   metadata (timings, random cell ids) and exported to ``<item>.html`` beside it.

If a cell fails, :class:`NotebookFailed` names the cell and the partial notebook, which is also
copied to ``<item>.failed.ipynb`` because Snakemake deletes the declared outputs of a failed job.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import yaml

from repro.pipeline.plotting import figure_paths
from repro.pipeline.tables import check_scale, table_paths

# Recorded in the executed notebook, so that Jupyter opens it with a Python kernel.
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
DEFAULT_TIMEOUT_S = 600

#: Parameters every notebook receives from the runner, whatever the rule passes.
RUNNER_PARAMETERS = ("results_dir", "paper", "item", "scale", "figure_png", "figure_pdf", "table_csv", "table_md")

# Timing fields papermill and nbclient add; they differ on every run and say nothing about results.
_VOLATILE_NOTEBOOK_KEYS = ("start_time", "end_time", "duration", "input_path", "output_path")
_VOLATILE_CELL_KEYS = ("start_time", "end_time", "duration")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Where a warning raised in a cell points: ipykernel's compiler, which the engine uses, puts each
# cell's file in a directory named after the process id.
_CELL_FILE = re.compile(r"(?:/[^\s/]+)*/ipykernel_\d+/(\d+)\.py")


class NotebookError(RuntimeError):
    """The notebook could not be prepared (bad source or parameters)."""


class NotebookFailed(NotebookError):
    """A cell raised or timed out. The message names the cell and the partial notebook."""

    def __init__(self, message: str, partial: Path | None):
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class NotebookOutputs:
    """Where the runner writes the executed notebook, its HTML, and where the notebook may write."""

    notebook: Path
    html: Path
    failed: Path
    figure_png: Path
    figure_pdf: Path
    table_csv: Path
    table_md: Path

    @classmethod
    def for_item(cls, results_dir: str | Path, paper: str, item: str) -> NotebookOutputs:
        stem = Path(results_dir) / paper / "notebooks" / item
        figures = figure_paths(results_dir, paper, item)
        tables = table_paths(results_dir, paper, item)
        return cls(
            notebook=stem.with_suffix(".ipynb"),
            html=stem.with_suffix(".html"),
            failed=stem.with_suffix(".failed.ipynb"),
            figure_png=figures["png"],
            figure_pdf=figures["pdf"],
            table_csv=tables["csv"],
            table_md=tables["md"],
        )


# --------------------------------------------------------------------------- parameters


def parse_param(text: str) -> tuple[str, Any]:
    """Parse ``key=value`` from the command line.

    The value is read as JSON when it is valid JSON (``3``, ``1e-3``, ``true``, ``null``,
    ``[1, 2]``, ``"text"``) and kept as a plain string otherwise (``results/x.csv``).
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise NotebookError(f"--param expects key=value with a Python identifier as key, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def read_params_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping of parameters (the file a Snakemake rule writes with ``params``)."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise NotebookError(f"{path}: a params file must hold a mapping, found {type(data).__name__}")
    return data


def build_parameters(
    results_dir: str | Path,
    paper: str,
    item: str,
    scale: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """All parameters injected into the notebook.

    ``params`` (from a params file and ``--param``) may not contradict the runner's own arguments.
    ``scale`` comes from the argument, else from ``params``, else it is "laptop" (the default scale).
    """
    params = dict(params or {})
    if scale is None:
        scale = params.get("scale", "laptop")
    check_scale(scale)
    outputs = NotebookOutputs.for_item(results_dir, paper, item)
    fixed = {
        "results_dir": Path(results_dir).as_posix(),
        "paper": paper,
        "item": item,
        "scale": scale,
        "figure_png": outputs.figure_png.as_posix(),
        "figure_pdf": outputs.figure_pdf.as_posix(),
        "table_csv": outputs.table_csv.as_posix(),
        "table_md": outputs.table_md.as_posix(),
    }
    for key, value in fixed.items():
        if key in params and params[key] != value:
            raise NotebookError(f"parameter {key}={params[key]!r} contradicts the runner's {key}={value!r}")
    # The rule's own parameters first, then the runner's, in a fixed order.
    return {**{k: v for k, v in params.items() if k not in fixed}, **fixed}


# --------------------------------------------------------------------------- notebook handling


def load_script(src: str | Path) -> nbformat.NotebookNode:
    """Read a jupytext percent script as a notebook with a ``python3`` kernel and stable cell ids."""
    import jupytext

    src = Path(src)
    if not src.is_file():
        raise NotebookError(f"notebook source {src} does not exist")
    nb = jupytext.read(src, fmt="py:percent")
    if not any("parameters" in cell.metadata.get("tags", []) for cell in nb.cells):
        raise NotebookError(
            f"{src} has no cell tagged 'parameters'; start its parameter cell with # %% tags=[\"parameters\"]"
        )
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata.setdefault("language_info", {"name": "python"})
    _renumber_cells(nb)
    return nb


def _renumber_cells(nb: nbformat.NotebookNode) -> None:
    # nbformat draws random cell ids; numbering them keeps reruns identical.
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"


def normalise(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip what changes from run to run without the results changing: timings, cell ids, and the
    process id in the file name of a warning raised in a cell (``<cell 1234>.py:83: UserWarning``).

    Execution counts are kept: a linear run numbers cells 1, 2, 3... every time.
    """
    papermill = nb.metadata.get("papermill", {})
    for key in _VOLATILE_NOTEBOOK_KEYS:
        papermill.pop(key, None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # nbclient's per-message timestamps
        for key in _VOLATILE_CELL_KEYS:
            cell.metadata.get("papermill", {}).pop(key, None)
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                text = output["text"] if isinstance(output["text"], str) else "".join(output["text"])
                output["text"] = _CELL_FILE.sub(r"<cell \1>.py", text)
    _renumber_cells(nb)
    return nb


def export_html(nb: nbformat.NotebookNode, path: Path, title: str, lineage_href: str | None = None) -> None:
    """Write ``nb`` as a standalone HTML page (nbconvert's default lab template).

    With ``lineage_href``, the page ends with a link to the item's lineage card (written by
    the workflow after the notebook, next to the figure or table).
    """
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nb, resources={"metadata": {"name": title}})
    if lineage_href is not None:
        link = (
            f'<p style="margin:2em 1em;font-family:sans-serif">Lineage of this item (rules, parameters, seeds, '
            f'input hashes, compute): <a href="{lineage_href}">{lineage_href}</a></p>\n'
        )
        body = body.replace("</body>", link + "</body>", 1)
    path.write_text(body, encoding="utf-8")


# --------------------------------------------------------------------------- running


def run_notebook(
    src: str | Path,
    *,
    results_dir: str | Path,
    paper: str,
    item: str,
    scale: str | None = None,
    params: Mapping[str, Any] | None = None,
    timeout: int = DEFAULT_TIMEOUT_S,
    cwd: str | Path | None = None,
    log_output: bool = False,
) -> NotebookOutputs:
    """Execute ``src`` with papermill and write the executed notebook and its HTML.

    ``timeout`` is per cell, in seconds. ``cwd`` (default: the current directory) is the cells' working
    directory. Raises :class:`NotebookFailed` if a cell raises or times out, or the cells' process dies.
    """
    from repro.pipeline.notebook_engine import NotebookJob, run_in_child

    parameters = build_parameters(results_dir, paper, item, scale, params)
    outputs = NotebookOutputs.for_item(results_dir, paper, item)
    outputs.notebook.parent.mkdir(parents=True, exist_ok=True)
    outputs.failed.unlink(missing_ok=True)
    job = NotebookJob(
        load_script(src),
        outputs.notebook,
        parameters,
        cwd=Path(cwd) if cwd is not None else Path.cwd(),
        timeout=timeout,
        log_output=log_output,
        quiet_parameters=RUNNER_PARAMETERS,
    )
    error = run_in_child(job)
    if error is not None:
        raise _failure(src, outputs, error)

    executed = normalise(nbformat.read(outputs.notebook, as_version=4))
    executed.metadata.setdefault("papermill", {})["input_path"] = Path(src).as_posix()
    nbformat.write(executed, outputs.notebook)
    kind = "figures" if item.startswith("fig") else "tables"
    export_html(executed, outputs.html, title=f"{paper} {item}", lineage_href=f"../{kind}/{item}.lineage.json")
    return outputs


def _failure(src: str | Path, outputs: NotebookOutputs, error: str) -> NotebookFailed:
    """Describe a failed run: which cell, what it raised, where the partial notebook is."""
    partial = None
    cell_text = ""
    if outputs.notebook.is_file():
        nb = normalise(nbformat.read(outputs.notebook, as_version=4))
        nbformat.write(nb, outputs.notebook)
        shutil.copyfile(outputs.notebook, outputs.failed)
        partial = outputs.failed
        cell_text = _describe_failing_cell(nb)
    detail = _ANSI.sub("", error).strip()
    lines = [f"notebook {Path(src).as_posix()} failed"]
    if cell_text:
        lines.append(cell_text)
    lines.append(detail)
    if partial is not None:
        lines.append(f"partial notebook: {partial.as_posix()} (also at {outputs.notebook.as_posix()})")
    else:
        lines.append("no partial notebook was written (the notebook did not start)")
    return NotebookFailed("\n".join(lines), partial)


def _describe_failing_cell(nb: nbformat.NotebookNode) -> str:
    """Point at the failing code cell by its place among the source's code cells, with its first lines.

    papermill flags a cell that raised; a cell that timed out is left marked "completed", so
    failing that, the last cell that started (it has an execution count) is the one named.
    """
    code_cells = [
        cell
        for cell in nb.cells
        if cell.cell_type == "code" and "injected-parameters" not in cell.metadata.get("tags", [])
    ]
    flagged = [i for i, cell in enumerate(code_cells) if cell.metadata.get("papermill", {}).get("exception")]
    started = [i for i, cell in enumerate(code_cells) if cell.get("execution_count") is not None]
    if flagged:
        index, how = flagged[0], "failing cell"
    elif started:
        index, how = started[-1], "last cell started"
    else:
        return ""
    cell = code_cells[index]
    head = "\n".join("    " + line for line in cell.source.splitlines()[:6])
    return f"{how}: code cell {index + 1} of the source (In [{cell.get('execution_count')}]):\n{head}"
