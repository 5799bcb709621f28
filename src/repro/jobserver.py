"""A warm process that runs `python -m repro` commands without importing their libraries again.

Every Snakemake job is one `python -m repro ...` call, and a short job spends most of its time
importing torch, pandas, papermill and matplotlib (about 3 s of a 3.4 s smoke training job). With
the environment variable ``REPRO_JOB_SERVER`` set (the workflow sets it where the config's
``job_server`` is true), ``python -m repro`` hands its command to a server that imported those
libraries once, and the server forks a fresh child for each command::

    client (python -m repro ARGS)  -- unix socket: argv, cwd, environment, sys.path; fds 0, 1, 2 -->  server
    server forks; the child takes the client's directory, environment, stdin, stdout and stderr,
    imports repro afresh and runs the command
    server  -- exit status, the child's CPU seconds and peak memory -->  client, which exits with it

So each command still runs in a process of its own with its own files, and the code of repro is
read from disk by every child (only third-party libraries are preloaded): an edit is seen by the
next job. If the client goes away (Snakemake killed the job, or its whole process group), the
server kills the child's process group at once, so an interrupted trainer never outlives its job
and holds its run directory.

The server is started by the first client and exits after ``IDLE_S`` seconds without work. A server
serves only clients that would run the command as its own children do: the same interpreter and user,
the same working tree (the client's directory and the repro package it imports), and the same
niceness, resource limits and glibc malloc settings (``GLIBC_TUNABLES``), which the server took from
the client that started it and which every child inherits. A client that differs in any of these (a
second checkout, a job started under `nice`, a lower `ulimit`) gets a server of its own. Where it
cannot be started, the command runs in the client's own process, as without the server. Snakemake's
benchmark files measure a job's own process tree, which here is the client: their wall time is the
job's, their CPU time and memory the client's, so the client appends the child's to the job's stderr
(its log).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

ENV_VAR = "REPRO_JOB_SERVER"
IDLE_S = 120.0  # the server exits after this long without a job
START_TIMEOUT_S = 60.0
# Set in the server before it imports anything, and so in every child (and in every notebook,
# repro.pipeline.notebook_engine): the headless plotting backend, a fixed hash seed, and one
# thread per numeric library (the jobs set torch's threads themselves).
SERVER_ENV = {
    "MPLBACKEND": "Agg",
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}
PRELOAD = (
    "numpy",
    "torch",
    "pandas",
    "scipy.stats",
    "matplotlib.pyplot",
    "seaborn",
    "safetensors.torch",
    "tqdm",
    "yaml",
    "jsonschema",
    "papermill",
    "nbformat",
    "nbconvert",
    "IPython.core.interactiveshell",
    "ipykernel.compiler",
    "papermill.engines",
)
_HEADER = struct.Struct("!I")


def enabled() -> bool:
    """Whether the workflow asked for the server; never inside a SLURM job, whose processes the
    scheduler ends with the job (a server started there would take other jobs' children with it),
    nor where the server cannot watch its children (pidfds: Linux only)."""
    return bool(os.environ.get(ENV_VAR)) and "SLURM_JOB_ID" not in os.environ and hasattr(os, "pidfd_open")


def client_identity() -> dict:
    """What a served command must share with the client for the child to run it as the client would
    have: the interpreter, the working tree (directory and the repro package imported), the niceness,
    the resource limits and glibc's malloc settings (a child inherits the server's, and the server has
    those of the client that started it)."""
    import resource

    limits = {
        name: resource.getrlimit(getattr(resource, name))
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    }
    return {
        "python": [os.path.realpath(sys.executable), sys.prefix, sys.version],
        "cwd": os.path.realpath(os.getcwd()),
        "package": os.path.realpath(os.path.dirname(__file__)),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "limits": limits,
        "malloc": os.environ.get("GLIBC_TUNABLES", ""),  # read by glibc at start, so inherited too
    }


def socket_path() -> str:
    """One server per user, client identity (`client_identity`) and version of this file, in the
    temporary directory (a unix socket path must be short); a server of an older version of this file
    is left to its idle end."""
    key = json.dumps(client_identity(), sort_keys=True).encode()
    with open(__file__, "rb") as source:
        digest = hashlib.sha256(key + source.read()).hexdigest()[:12]
    return os.path.join(tempfile.gettempdir(), f"repro-jobs-{os.getuid()}-{digest}.sock")


# -- messages: a 4-byte length, then JSON ------------------------------------------------------


def _send(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("the connection closed mid-message")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(sock: socket.socket) -> dict:
    (length,) = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))
    return json.loads(_recv_exactly(sock, length))


# -- client ---------------------------------------------------------------------------------


def _connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def _start_server(path: str) -> socket.socket | None:
    """Connect to the server, starting it first if none answers; None if it cannot be started."""
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one client starts it, the others wait and connect
        sock = _connect(path)
        if sock is not None:
            return sock
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # left by a server that died
        env = {**os.environ, **SERVER_ENV}
        env.pop(ENV_VAR, None)
        with open(path + ".log", "ab") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "repro.jobserver", "--serve", path],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                cwd="/",
                start_new_session=True,  # outlives the job that started it, and its process group
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            sock = _connect(path)
            if sock is not None:
                return sock
            if server.poll() is not None:  # it failed to start (its log says why)
                return None
            time.sleep(0.05)
    return None


# The line the client appends to a job's log; repro.pipeline.provenance reads it back (served_usage).
USAGE_LINE = "[job server] the command's own process used {cpu:.2f} s of CPU and {rss:.1f} MB of peak memory"
_USAGE_PATTERN = re.compile(
    r"^\[job server\] the command's own process used ([0-9.]+) s of CPU and ([0-9.]+) MB of peak memory", re.M
)


def served_usage(log_text: str) -> tuple[float, float] | None:
    """(CPU seconds, peak memory in MB) of a served command, from the last usage line in its log."""
    found = _USAGE_PATTERN.findall(log_text)
    return (float(found[-1][0]), float(found[-1][1])) if found else None


def run(argv: list[str]) -> int:
    """Run `python -m repro ARGV` in a child of the server, and return its exit code. SIGINT and SIGTERM
    sent to this process go to the child."""
    path = socket_path()
    try:
        sock = _connect(path) or _start_server(path)
    except OSError as err:  # no writable temporary directory, say
        print(f"[job server] {err}", file=sys.stderr)
        sock = None
    if sock is None:
        print(f"[job server] could not start one at {path} (see {path}.log); running here", file=sys.stderr)
        return _run_here(argv)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "path": sys.path}
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda number, _frame: sock.send(bytes([number])))
    try:
        socket.send_fds(sock, [b"\0"], [0, 1, 2])
        _send(sock, request)
        reply = _recv(sock)
    except (OSError, ConnectionError) as err:
        print(f"[job server] lost the server while it ran the command ({err}); see {path}.log", file=sys.stderr)
        return 1
    finally:
        sock.close()
    print(USAGE_LINE.format(cpu=reply["cpu_seconds"], rss=reply["max_rss_mb"]), file=sys.stderr)
    return int(reply["exit_code"])


def _run_here(argv: list[str]) -> int:
    from repro.cli import main

    return main(argv)


# -- server ---------------------------------------------------------------------------------


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


class _Job:
    """A running child, the connection of its client, and a pidfd that becomes readable when it ends."""

    def __init__(self, conn: socket.socket, pid: int):
        self.conn, self.pid = conn, pid
        self.pidfd = os.pidfd_open(pid)
        self.client_gone = False

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)


def _child(request: dict, fds: list[int], inherited: list) -> None:
    """In the forked child: become the client's command, run it, and exit with its code."""
    code = 1
    try:
        os.setpgid(0, 0)  # a group of its own, so that the server can kill it with whatever it started
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for item in inherited:  # the server's listener, connections and pidfds
            if isinstance(item, int):
                os.close(item)
            else:
                item.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:] = request["path"]
        for name in [m for m in sys.modules if m == "repro" or m.startswith("repro.")]:
            del sys.modules[name]  # the client's code, read from disk now
        import importlib

        importlib.invalidate_caches()
        sys.argv = ["python -m repro", *request["argv"]]
        try:
            code = _run_here(request["argv"])
        except SystemExit as exit_:
            if exit_.code is None or isinstance(exit_.code, int):
                code = exit_.code or 0
            else:  # as the interpreter does: the message on stderr, status 1
                print(exit_.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            code = 128 + signal.SIGINT
        except BaseException:
            traceback.print_exc()
            code = 1
        import atexit

        atexit._run_exitfuncs()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _warm_up() -> None:
    """Export a small notebook once, so that every child finds the regular expressions of the
    markdown renderer and the syntax highlighter already compiled (about 1 s of each HTML export)."""
    try:
        import nbformat
        from nbconvert import HTMLExporter

        cells = [
            nbformat.v4.new_markdown_cell("# A *title*\n\n- an item, `code`"),
            nbformat.v4.new_code_cell("x = [1]"),
        ]
        HTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=cells))
    except Exception as err:  # only a warm-up
        print(f"warm-up failed: {err!r}", flush=True)


def serve(path: str) -> None:
    """Accept commands on `path` until IDLE_S seconds pass without one running."""
    os.environ.update(SERVER_ENV)
    os.close(os.pidfd_open(os.getpid()))  # a kernel without pidfds (before Linux 5.3) ends the server here
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener.bind(path)  # first: a path it cannot bind ends it before the imports; clients queue meanwhile
    listener.listen(64)
    identity = os.stat(path).st_ino
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    _warm_up()
    # The children never free what the server imported: keep it out of their garbage collections,
    # which would otherwise walk (and copy on write) every preloaded object.
    gc.freeze()
    jobs: list[_Job] = []
    last_busy = time.monotonic()

    def shut_down(*_) -> None:
        for job in jobs:
            job.kill()
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == identity:  # not a newer server's socket
                os.unlink(path)
        os._exit(0)

    signal.signal(signal.SIGTERM, shut_down)
    print(f"{time.strftime('%F %T')} serving {path} (pid {os.getpid()})", flush=True)
    while True:
        if jobs:
            last_busy = time.monotonic()
        wait = 1.0 if jobs else IDLE_S - (time.monotonic() - last_busy)
        if wait <= 0:
            shut_down()
        watched = {listener.fileno(): None}
        for job in jobs:
            watched[job.pidfd] = job
            if not job.client_gone:
                watched[job.conn.fileno()] = job
        ready, _, _ = select.select(list(watched), [], [], wait)
        for fd in ready:
            job = watched[fd]
            if job is not None and job not in jobs:
                continue  # it ended earlier in this round (its pidfd and its connection were both ready)
            if job is None:
                _accept(listener, jobs)
            elif fd == job.pidfd:
                _finish(job)
                jobs.remove(job)
            else:
                _signal_or_kill(job)


def _signal_or_kill(job: _Job) -> None:
    """After its request a client sends only signal numbers, one byte each; end of file means it has gone."""
    try:
        numbers = job.conn.recv(64)
    except OSError:
        numbers = b""
    if not numbers:
        job.client_gone = True
        job.kill()
    for number in numbers:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(job.pid, number)


def _accept(listener: socket.socket, jobs: list[_Job]) -> None:
    conn, _ = listener.accept()
    try:
        conn.settimeout(10)
        _, fds, _, _ = socket.recv_fds(conn, 1, 3)
        request = _recv(conn)
        conn.settimeout(None)
        if len(fds) != 3:
            raise ValueError(f"expected the client's stdin, stdout and stderr, got {len(fds)} descriptors")
    except (OSError, ConnectionError, ValueError) as err:
        print(f"{time.strftime('%F %T')} dropped a request: {err}", flush=True)
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        _child(request, fds, [listener, conn, *(j.conn for j in jobs), *(j.pidfd for j in jobs)])
    for fd in fds:
        os.close(fd)
    jobs.append(_Job(conn, pid))


def _finish(job: _Job) -> None:
    """Reap the child and tell its client how it ended."""
    _, status, usage = os.wait4(job.pid, 0)
    reply = {
        "exit_code": _exit_code(status),
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "max_rss_mb": usage.ru_maxrss / 1024,
    }
    if not job.client_gone:
        with contextlib.suppress(OSError):
            _send(job.conn, reply)
    job.conn.close()
    os.close(job.pidfd)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--serve"] and len(argv) == 2:
        serve(argv[1])
        return 0
    print("usage: python -m repro.jobserver --serve SOCKET", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
