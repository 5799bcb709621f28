"""Run one figure or table notebook: jupytext script -> papermill -> executed .ipynb + .html.

Every figure and table of the project is made the same way::

    python -m repro notebook run notebooks/<paper>/<item>.py --paper <paper> --item <item> \\
        --results-dir results --scale laptop [--params-file params.yaml] [--param key=value ...]

1. The jupytext percent script is read into a notebook in memory. It must have a cell tagged
   ``parameters`` (``# %% tags=["parameters"]``) with a default for every parameter.
2. papermill executes it in a ``python3`` kernel that runs this very interpreter, injecting the
   parameters plus ``results_dir``, ``paper``, ``item``, ``scale`` and the output paths
   (``figure_png``, ``figure_pdf``, ``table_csv``, ``table_md``). The kernel runs in the caller's
   working directory, so relative paths mean the same inside and out, with a fixed environment
   (see :data:`KERNEL_ENV`), a per-cell timeout, and the notebook saved after every cell.
3. The executed notebook is written to ``RESULTS/<paper>/notebooks/<item>.ipynb`` without volatile
   metadata (timings, random cell ids) and exported to ``<item>.html`` beside it.

If a cell fails, :class:`NotebookFailed` names the cell and the partial notebook, which is also
copied to ``<item>.failed.ipynb`` because Snakemake deletes the declared outputs of a failed job.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import yaml

from repro import jobserver
from repro.pipeline.plotting import figure_paths
from repro.pipeline.tables import check_scale, table_paths

KERNEL_NAME = "python3"
KERNELSPEC = {"name": KERNEL_NAME, "display_name": "Python 3 (ipykernel)", "language": "python"}
DEFAULT_TIMEOUT_S = 600
# Kernels may be slow to start when Snakemake launches several at once (papermill #776).
START_TIMEOUT_S = 120
# Unix socket paths longer than this (sun_path, 108 bytes on Linux, 104 on macOS) cannot be bound.
_MAX_SOCKET_PATH = 100

#: Environment of the kernel. SOURCE_DATE_EPOCH keeps a value set by the caller; the rest are fixed:
#: a headless backend, a fixed hash seed (set iteration order), and one thread per numeric library,
#: since notebooks only read and plot and Snakemake may run several side by side. They are the job
#: server's own settings, so that a kernel forked from it is the kernel started alone.
KERNEL_ENV = jobserver.SERVER_ENV
DEFAULT_SOURCE_DATE_EPOCH = "0"

#: Parameters every notebook receives from the runner, whatever the rule passes.
RUNNER_PARAMETERS = ("results_dir", "paper", "item", "scale", "figure_png", "figure_pdf", "table_csv", "table_md")

# Timing fields papermill and nbclient add; they differ on every run and say nothing about results.
_VOLATILE_NOTEBOOK_KEYS = ("start_time", "end_time", "duration", "input_path", "output_path")
_VOLATILE_CELL_KEYS = ("start_time", "end_time", "duration")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Where a warning raised in a cell points: ipykernel names each cell's file after the kernel's pid.
_CELL_FILE = re.compile(r"(?:/[^\s/]+)*/ipykernel_\d+/(\d+)\.py")


class NotebookError(RuntimeError):
    """The notebook could not be prepared (bad source, parameters or kernel)."""


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
    kernel's pid in the file name of a warning raised in a cell (``<cell 1234>.py:83: UserWarning``).

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


def kernel_command() -> list[str]:
    """The command jupyter_client would start for the ``python3`` kernel."""
    from jupyter_client.manager import KernelManager

    return KernelManager(kernel_name=KERNEL_NAME).format_kernel_cmd()


@contextlib.contextmanager
def _pinned_kernelspec() -> Iterator[None]:
    """Make ``python3`` launch this interpreter, through the job server where the workflow uses one.

    ipykernel's own spec says ``python``, which jupyter_client replaces by ``sys.executable``; a
    spec installed elsewhere (say in ``~/.local/share/jupyter``) may name another interpreter, one
    without this package. Only then, or for the job server, is a spec put first on ``JUPYTER_PATH``.
    """
    served = jobserver.enabled()
    launcher = jobserver.kernel_argv() if served else [sys.executable, "-m", "ipykernel_launcher"]
    try:
        command = kernel_command()
    except Exception:  # no spec found at all: ipykernel's is pinned below
        command = []
    if not served and command[:1] == [sys.executable]:
        yield
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="repro-kernel-") as tmp:
        spec_dir = Path(tmp) / "kernels" / KERNEL_NAME
        spec_dir.mkdir(parents=True)
        spec = {
            "argv": [*launcher, "-f", "{connection_file}"],
            "display_name": KERNELSPEC["display_name"],
            "language": "python",
        }
        (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
        with _environ({"JUPYTER_PATH": os.pathsep.join(filter(None, [tmp, os.environ.get("JUPYTER_PATH")]))}):
            yield


@contextlib.contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables for the duration of the block (the kernel inherits them)."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def kernel_environment() -> dict[str, str]:
    """The variables set for the kernel: :data:`KERNEL_ENV` plus ``SOURCE_DATE_EPOCH``."""
    return {**KERNEL_ENV, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_SOURCE_DATE_EPOCH)}


# --------------------------------------------------------------------------- running


class _QuietAboutFixedParameters(logging.Filter):
    """Hide papermill's "Passed unknown parameter" warning for the parameters every notebook gets.

    A notebook need not declare the output paths it does not use; the warning stays on for the
    parameters a rule passes, where it catches typos.
    """

    def __init__(self, names: set[str]):
        super().__init__()
        self.messages = {f"Passed unknown parameter: {name}" for name in names}

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in self.messages


@contextlib.contextmanager
def _papermill_log_filter(names: set[str]) -> Iterator[None]:
    logger = logging.getLogger("papermill")
    quiet = _QuietAboutFixedParameters(names)
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


@contextlib.contextmanager
def _kernel_manager_class() -> Iterator[type]:
    """The kernel manager nbclient should use: one talking over Unix sockets where possible.

    Over TCP, jupyter_client picks five free ports by binding and releasing them, and the kernel
    binds them again a moment later; when Snakemake starts kernels side by side, another kernel can
    take a port in between ("Address already in use") and the run dies after the start timeout.
    Here the sockets live in a fresh private directory, so two kernels never collide. TCP stays
    where Unix sockets cannot be used (Windows) or their path would be too long to bind.
    """
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    if os.name == "nt":
        yield AsyncKernelManager
        return
    with tempfile.TemporaryDirectory(prefix="repro-kernel-") as tmp:
        prefix = os.path.join(tmp, "ipc")  # sockets are <prefix>-1 ... <prefix>-5
        if len(prefix.encode()) + 3 > _MAX_SOCKET_PATH:
            yield AsyncKernelManager
            return

        class UnixSocketKernelManager(AsyncKernelManager):
            def __init__(self, **kwargs: Any):
                kwargs.setdefault("transport", "ipc")
                kwargs.setdefault("ip", prefix)
                super().__init__(**kwargs)

        yield UnixSocketKernelManager


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

    ``timeout`` is per cell, in seconds. ``cwd`` (default: the current directory) is the kernel's
    working directory. Raises :class:`NotebookFailed` if a cell raises, times out or the kernel dies.
    """
    import papermill

    parameters = build_parameters(results_dir, paper, item, scale, params)
    outputs = NotebookOutputs.for_item(results_dir, paper, item)
    outputs.notebook.parent.mkdir(parents=True, exist_ok=True)
    outputs.failed.unlink(missing_ok=True)
    nb = load_script(src)
    cwd = Path(cwd) if cwd is not None else Path.cwd()

    with (
        _environ(kernel_environment()),
        _pinned_kernelspec(),
        _papermill_log_filter(set(RUNNER_PARAMETERS)),
        _kernel_manager_class() as manager_class,
    ):
        try:
            papermill.execute_notebook(
                nb,
                str(outputs.notebook),
                parameters=parameters,
                kernel_name=KERNEL_NAME,
                request_save_on_cell_execute=True,
                execution_timeout=timeout,
                start_timeout=START_TIMEOUT_S,
                progress_bar=False,
                log_output=log_output,
                cwd=str(cwd),
                kernel_manager_class=manager_class,
                shutdown_kernel="immediate",  # every output is in by then; a graceful stop waits about 0.5 s
            )
        except Exception as err:  # papermill, nbclient (timeout, dead kernel) and kernel start errors
            raise _failure(src, outputs, err) from err

    executed = normalise(nbformat.read(outputs.notebook, as_version=4))
    executed.metadata.setdefault("papermill", {})["input_path"] = Path(src).as_posix()
    nbformat.write(executed, outputs.notebook)
    kind = "figures" if item.startswith("fig") else "tables"
    export_html(executed, outputs.html, title=f"{paper} {item}", lineage_href=f"../{kind}/{item}.lineage.json")
    return outputs


def _failure(src: str | Path, outputs: NotebookOutputs, err: BaseException) -> NotebookFailed:
    """Describe a failed run: which cell, what it raised, where the partial notebook is."""
    partial = None
    cell_text = ""
    if outputs.notebook.is_file():
        nb = normalise(nbformat.read(outputs.notebook, as_version=4))
        nbformat.write(nb, outputs.notebook)
        shutil.copyfile(outputs.notebook, outputs.failed)
        partial = outputs.failed
        cell_text = _describe_failing_cell(nb)
    detail = _ANSI.sub("", str(err)).strip()
    lines = [f"notebook {Path(src).as_posix()} failed: {type(err).__name__}"]
    if cell_text:
        lines.append(cell_text)
    lines.append(detail)
    if partial is not None:
        lines.append(f"partial notebook: {partial.as_posix()} (also at {outputs.notebook.as_posix()})")
    else:
        lines.append("no partial notebook was written (the kernel did not start)")
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
