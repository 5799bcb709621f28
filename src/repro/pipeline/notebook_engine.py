"""papermill's engine without a Jupyter kernel: a notebook's cells run in an IPython shell in a child of
the runner's own process.

A kernel costs about a second of every notebook job (its start, the ZeroMQ handshake, a round trip per
message), more than many figure notebooks spend drawing. The engine runs each code cell with IPython's
``InteractiveShell`` (the shell ipykernel wraps, with ipykernel's cell file names) and records what a
kernel would have sent back, in the order it happened: text on stdout and stderr (consecutive text on
one stream joins one output), displayed objects, the cell's result, and errors. papermill still
injects the parameters, keeps the per-cell metadata, saves the notebook after every cell and raises
on the first cell that failed.

The cells run in a child process, so nothing they do (working directory, environment, imports,
matplotlib's settings) reaches the caller, and a cell that crashes the interpreter fails its
notebook, not the runner. The child is forked where this interpreter hashes strings with the fixed
seed (the job server's children, or an interpreter started with ``PYTHONHASHSEED=0``); elsewhere a
fresh interpreter is started with :func:`notebook_environment`, since set iteration order, and so
what some cells print, depends on that seed.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat
from ipykernel.compiler import XCachingCompiler
from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from papermill.engines import Engine, papermill_engines
from traitlets import Type
from traitlets.config import Config

from repro import jobserver

ENGINE_NAME = "repro-in-process"
# What ipykernel reports about its language, which a notebook keeps in its metadata (nbconvert picks
# its syntax highlighter from it).
LANGUAGE_INFO = {
    "name": "python",
    "version": sys.version.split()[0],
    "mimetype": "text/x-python",
    "codemirror_mode": {"name": "ipython", "version": sys.version_info[0]},
    "pygments_lexer": "ipython3",
    "nbconvert_exporter": "python",
    "file_extension": ".py",
}
DEFAULT_SOURCE_DATE_EPOCH = "0"


def notebook_environment() -> dict[str, str]:
    """The variables a notebook runs with: the job server's (a headless plotting backend, the fixed hash
    seed, one thread per numeric library, since notebooks only read and plot and Snakemake may run
    several side by side) and ``SOURCE_DATE_EPOCH``, which keeps a value the caller set."""
    return {
        **jobserver.SERVER_ENV,
        "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_SOURCE_DATE_EPOCH),
    }


class CellTimeout(BaseException):
    """A cell ran past the per-cell limit (a BaseException, so that a cell's ``except Exception`` lets
    it through to the shell, which records it as the cell's error)."""


# --------------------------------------------------------------------------- recording outputs


class _Recorder:
    """The outputs of the running cell, as nbformat outputs."""

    def __init__(self, echo: io.TextIOBase | None):
        self.cell: nbformat.NotebookNode | None = None
        self.echo = echo  # where text is also written as it comes (--log-output), or None

    def add(self, output: nbformat.NotebookNode) -> None:
        if self.cell is not None:
            self.cell.outputs.append(output)

    def text(self, name: str, text: str) -> None:
        if self.echo is not None:
            self.echo.write(text)
        outputs = self.cell.outputs if self.cell is not None else None
        if not text or outputs is None:
            return
        if outputs and outputs[-1].output_type == "stream" and outputs[-1].name == name:
            outputs[-1].text += text
        else:
            outputs.append(nbformat.v4.new_output("stream", name=name, text=text))

    def clear(self) -> None:
        if self.cell is not None:
            self.cell.outputs = []


class _Stream(io.TextIOBase):
    """sys.stdout or sys.stderr of the cells: every write becomes text of the running cell."""

    def __init__(self, recorder: _Recorder, name: str):
        super().__init__()
        self._recorder, self._name = recorder, name

    @property
    def name(self) -> str:
        return f"<{self._name}>"

    @property
    def encoding(self) -> str:
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        self._recorder.text(self._name, text)
        return len(text)


def _mime_bundle(data: Mapping[str, Any]) -> dict[str, Any]:
    """A display's data as a notebook stores it: binary images base64-encoded, as ipykernel sends them."""
    return {
        mime: base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
        for mime, value in data.items()
    }


class _Publisher(DisplayPublisher):
    """``display(...)`` inside a cell: a display_data output."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        output = nbformat.v4.new_output("display_data", data=_mime_bundle(data), metadata=metadata or {})
        self.shell.recorder.add(output)

    def clear_output(self, wait=False) -> None:
        self.shell.recorder.clear()


class _ResultHook(DisplayHook):
    """The value of a cell's last expression: an execute_result output (``;`` at the end hides it)."""

    def start_displayhook(self) -> None:
        pass

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        output = nbformat.v4.new_output(
            "execute_result",
            data=_mime_bundle(format_dict),
            metadata=md_dict or {},
            execution_count=self.prompt_count,
        )
        self.shell.recorder.add(output)

    def finish_displayhook(self) -> None:
        pass


class CellShell(InteractiveShell):
    """The shell the cells run in. ``writes_notebook`` tells repro.pipeline.tables.in_kernel that what
    a cell displays is kept, as in a kernel."""

    displayhook_class = Type(_ResultHook)
    display_pub_class = Type(_Publisher)
    writes_notebook = True
    recorder: _Recorder

    def _showtraceback(self, etype, evalue, stb) -> None:
        output = nbformat.v4.new_output("error", ename=etype.__name__, evalue=str(evalue), traceback=stb)
        self.recorder.add(output)


# --------------------------------------------------------------------------- the papermill engine


@contextlib.contextmanager
def _time_limit(seconds: int | None):
    """Raise CellTimeout in the cell after `seconds` (main thread only: that is where signals land)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_number, _frame):
        raise CellTimeout(f"the cell ran longer than the per-cell limit of {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class InProcessEngine(Engine):
    """Runs the cells in this process; stops at the first cell that fails, as papermill's own engine does."""

    @classmethod
    def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, execution_timeout=None, **kwargs):
        recorder = _Recorder(echo=sys.__stderr__ if log_output else None)
        config = Config()
        config.HistoryManager.enabled = False  # no history database under ~/.ipython
        shell = CellShell.instance(config=config, compiler_class=XCachingCompiler)
        shell.recorder = recorder
        nb_man.nb.metadata["language_info"] = dict(LANGUAGE_INFO)
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Stream(recorder, "stdout"), _Stream(recorder, "stderr")
        try:
            for index, cell in enumerate(nb_man.nb.cells):
                nb_man.cell_start(cell, index)
                success = True
                if cell.cell_type == "code" and cell.source.strip():  # nbclient skips the others too
                    cell.outputs = []
                    cell.execution_count = shell.execution_count
                    recorder.cell = cell
                    with _time_limit(execution_timeout):
                        success = shell.run_cell(cell.source, store_history=True).success
                    recorder.cell = None
                if not success:
                    nb_man.cell_exception(cell, cell_index=index)
                nb_man.cell_complete(cell, cell_index=index)
                if not success:
                    break
        finally:
            sys.stdout, sys.stderr = saved
            CellShell.clear_instance()


papermill_engines.register(ENGINE_NAME, InProcessEngine)


# --------------------------------------------------------------------------- the child process


def _die_with_parent() -> None:
    """Let the kernel end this child when its parent dies (Linux; elsewhere the child outlives it)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_in_child(job: NotebookJob) -> str | None:
    """Run `job` in a child process; None if it succeeded, else the text of what it raised.

    The child is forked where this interpreter hashes strings with the fixed seed and can fork;
    elsewhere a fresh interpreter with :func:`notebook_environment` runs
    ``python -m repro.pipeline.notebook_engine``, which receives the job as JSON.
    """
    with tempfile.TemporaryDirectory(prefix="repro-notebook-") as tmp:
        failure = Path(tmp) / "failure.txt"
        if sys.flags.hash_randomization or not hasattr(os, "fork"):
            request = Path(tmp) / "job.json"
            request.write_text(json.dumps(job.to_json()), encoding="utf-8")
            env = {**os.environ, **notebook_environment()}
            code = subprocess.run(
                [sys.executable, "-m", "repro.pipeline.notebook_engine", str(request), str(failure)], env=env
            ).returncode
        else:
            code = _fork_and_wait(job, failure)
        if code == 0:
            return None
        if failure.is_file():
            return failure.read_text(encoding="utf-8")
        return f"the notebook's process ended with status {code} before it could say why"


def _fork_and_wait(job: NotebookJob, failure: Path) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _run_child(job, failure)
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:  # interrupted: the cells must not outlive the runner
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    return os.waitstatus_to_exitcode(status)


def _run_child(job: NotebookJob, failure: Path) -> None:
    """In the forked child: run `job`, write what it raised to `failure`, and exit without returning."""
    code = 1
    try:
        _die_with_parent()
        os.environ.update(notebook_environment())
        job()
        code = 0
    except BaseException as err:  # noqa: BLE001 - every failure is reported to the parent
        with contextlib.suppress(Exception):
            failure.write_text(f"{type(err).__name__}: {err}", encoding="utf-8")
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


class NotebookJob:
    """One papermill execution with this engine: the notebook (parameters not yet injected), where the
    executed notebook goes, and how it runs."""

    def __init__(
        self,
        nb: nbformat.NotebookNode,
        output: Path,
        parameters: dict[str, Any],
        cwd: Path,
        timeout: int,
        log_output: bool,
        quiet_parameters: tuple[str, ...],
    ):
        self.nb, self.output, self.parameters = nb, Path(output), parameters
        self.cwd, self.timeout, self.log_output = Path(cwd), timeout, log_output
        self.quiet_parameters = quiet_parameters

    def to_json(self) -> dict[str, Any]:
        return {
            "nb": self.nb,
            "output": str(self.output),
            "parameters": self.parameters,
            "cwd": str(self.cwd),
            "timeout": self.timeout,
            "log_output": self.log_output,
            "quiet_parameters": list(self.quiet_parameters),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NotebookJob:
        return cls(
            nbformat.from_dict(data["nb"]),
            Path(data["output"]),
            data["parameters"],
            Path(data["cwd"]),
            data["timeout"],
            data["log_output"],
            tuple(data["quiet_parameters"]),
        )

    def __call__(self) -> None:
        import papermill

        with _quiet_about(self.quiet_parameters):
            papermill.execute_notebook(
                self.nb,
                str(self.output),
                parameters=self.parameters,
                engine_name=ENGINE_NAME,
                request_save_on_cell_execute=True,
                execution_timeout=self.timeout,
                progress_bar=False,
                log_output=self.log_output,
                cwd=str(self.cwd),
            )


@contextlib.contextmanager
def _quiet_about(names: tuple[str, ...]):
    """Hide papermill's "Passed unknown parameter" warning for `names`, the parameters every notebook
    gets whether it declares them or not; the warning stays on for the others, where it catches typos."""
    import logging

    messages = {f"Passed unknown parameter: {name}" for name in names}

    class Quiet(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return record.getMessage() not in messages

    logger, quiet = logging.getLogger("papermill"), Quiet()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def main(argv: list[str]) -> int:
    """``python -m repro.pipeline.notebook_engine JOB.json FAILURE.txt``: the fresh-interpreter side of
    :func:`run_in_child`."""
    job = NotebookJob.from_json(json.loads(Path(argv[0]).read_text(encoding="utf-8")))
    try:
        job()
    except Exception as err:
        Path(argv[1]).write_text(f"{type(err).__name__}: {err}", encoding="utf-8")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
