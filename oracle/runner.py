"""The backend under test in a process of its own, so that it cannot reach the reference.

A backend (``oracle.backends.Backend``) turns a program into a trace and runs the few
checks that need the backend's module itself (``call``: ``oracle.numeric``'s finite differences,
the capability probe). The reference always runs in the suite's process (``oracle.backends.InProcess``);
so may a trusted backend (``--isolation none``), which saves the round trips. ``Isolated`` runs
the backend in a worker process (``oracle.worker``) that receives programs and returns traces
over a socket, so that nothing the backend does (patching torch, setting global modes, replacing
``torch`` in ``sys.modules``) can reach the reference. A worker that dies, hangs past ``timeout``
seconds or exhausts its memory limit gives the program a ``crash`` event at the step it was
running (read from a shared progress counter); the next program starts a fresh worker.
"""

from __future__ import annotations

import mmap
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from oracle.backends import Backend, BackendError
from oracle.program import Program
from oracle.trace import Trace

DEFAULT_TIMEOUT_S = 120.0  # one program on the backend
STARTUP_TIMEOUT_S = 900.0  # importing the backend (jittor compiles C++ on its first import)
PROGRESS = struct.Struct("<q")  # the step the worker is running, -1 between programs
NOT_IN_A_PROGRAM = -1


def isolation_options(add: Callable[..., Any]) -> None:
    """Declare ``--isolation`` and ``--backend-timeout`` with ``add`` (argparse's ``add_argument``
    or pytest's ``addoption``): the suite and ``python -m oracle replay`` take them alike."""
    add("--isolation", default="process", choices=("process", "none"),
        help="run the backend in a worker process of its own (default: a crash or hang fails its "
        "program, and the backend cannot reach the reference), or in this process (only for a backend "
        "you trust: it saves the round trips)")
    add("--backend-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
        help=f"seconds one program may take on an isolated backend (default {DEFAULT_TIMEOUT_S:g})")
    add("--backend-python", default=None, metavar="PYTHON",
        help="the Python of the backend's own environment (e.g. a virtualenv's bin/python where the "
        "engine, or another torch, is installed): the worker runs there, with only this oracle added "
        "to its path (default: this Python)")


def default_memory_limit() -> int:
    """Half of this machine's memory, in bytes: what a worker may allocate by default."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


class WorkerError(BackendError):
    """The worker could not load the backend (or answered nonsense): the run cannot go on."""


class Isolated(Backend):
    """The backend ``spec`` on ``device`` in a worker process (``oracle.worker``), started on
    first use and again after it died."""

    def __init__(
        self,
        spec: str,
        device: str = "cpu",
        timeout: float = DEFAULT_TIMEOUT_S,
        memory: int | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_S,
        python: str | None = None,
    ) -> None:
        self.name, self.device, self.timeout = spec, device, timeout
        self.python = python  # None: this interpreter, with this process's path
        self.memory = default_memory_limit() if memory is None else memory  # 0: no limit
        self.startup_timeout = startup_timeout
        self.restarts = 0  # workers started after the first
        self._process: subprocess.Popen | None = None
        self._connection: Connection | None = None
        self._info: dict | None = None
        self._twins: dict[str, Isolated] = {}  # this backend on other devices (``on``)
        self._log = tempfile.NamedTemporaryFile(prefix="oracle-worker-", suffix=".log", delete=False)
        self._progress_file = tempfile.NamedTemporaryFile(prefix="oracle-progress-", delete=False)
        self._progress_file.write(PROGRESS.pack(NOT_IN_A_PROGRAM))
        self._progress_file.flush()
        self._progress = mmap.mmap(self._progress_file.fileno(), PROGRESS.size)
        # the files go on close, or when this object is collected or the process exits unclosed
        self._remove_files = weakref.finalize(self, _remove, self._progress, self._progress_file, self._log)

    # -- requests --------------------------------------------------------------------------------
    def trace(self, program: Program, float64: bool = False, nudge: bool = False) -> Trace:
        return self.start(program, float64, nudge)()

    def start(self, program: Program, float64: bool = False, nudge: bool = False) -> Callable[[], Trace]:
        """Send ``program`` to the worker now; the returned function waits for its trace (so the
        suite can run the reference meanwhile)."""
        try:
            self._send(("trace", program, {"float64": float64, "nudge": nudge}))
        except _Died as died:
            crash = self._crashed(died)
            return lambda: crash

        def result() -> Trace:
            try:
                return self._receive(self.timeout)
            except _Died as died:
                return self._crashed(died)

        return result

    def _crashed(self, died: _Died) -> Trace:
        """The trace of a program whose worker died: one crash event at the step it ran."""
        trace = Trace(backend=str(self))
        if died.step == NOT_IN_A_PROGRAM:
            trace.add("crash", 0, reason=f"{died.why} before the program's first step{died.output}")
        else:
            trace.add("crash", died.step, reason=f"{died.why} at step {died.step}{died.output}")
        return trace

    def call(self, function: str, *args: Any) -> Any:
        try:
            return self._request(("call", function, args), self.timeout)
        except _Died as died:
            raise WorkerCrash(f"{died.why} in {function}{died.output}") from None

    def info(self) -> dict:
        if self._info is None:
            self._start()
        assert self._info is not None
        return self._info

    def on(self, device: str) -> Isolated:
        """This backend on ``device``: itself, or a twin in a worker of its own, started on first
        use and closed with this one."""
        if device == self.device:
            return self
        if device not in self._twins:
            self._twins[device] = Isolated(self.name, device, self.timeout, self.memory, self.startup_timeout,
                                           self.python)
        return self._twins[device]

    def close(self) -> None:
        """Stop the worker (and its twins') and delete its log and progress files."""
        for twin in self._twins.values():
            twin.close()
        self._stop()
        self._remove_files()

    # -- the worker process ----------------------------------------------------------------------
    def _request(self, request: tuple, timeout: float) -> Any:
        self._send(request)
        return self._receive(timeout)

    def _send(self, request: tuple) -> None:
        if self._process is None:
            self._start()
        assert self._connection is not None
        PROGRESS.pack_into(self._progress, 0, NOT_IN_A_PROGRAM)
        try:
            self._connection.send(request)
        except OSError:
            self._died(self._death())

    def _receive(self, timeout: float) -> Any:
        assert self._connection is not None
        try:
            if not self._connection.poll(timeout):
                self._died(f"backend process timed out after {timeout:g} s")
            status, value = self._connection.recv()
        except (EOFError, OSError, pickle.UnpicklingError):
            self._died(self._death())
        if status == "crash":  # the worker gave up on itself (its memory is exhausted)
            self._died(value, wait=True)
        if status != "ok":
            raise WorkerError(f"backend worker: {value}")
        return value

    def _start(self) -> None:
        if self._info is not None:
            self.restarts += 1
        parent, child = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": worker_path(self.python)}
        argv = [self.python or sys.executable, "-m", "oracle.worker", self.name, self.device,
                str(child.fileno()), self._progress_file.name, str(self.memory)]
        self._log.seek(0)
        self._log.truncate()
        try:
            self._process = subprocess.Popen(
                argv, pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=self._log, env=env, start_new_session=True,
            )
        except OSError as exc:  # --backend-python names no interpreter
            parent.close()
            child.close()
            raise WorkerError(f"cannot start the backend's worker with {argv[0]}: {exc}") from None
        child.close()
        self._connection = Connection(parent.detach())
        try:
            info = self._request(("info",), self.startup_timeout)
        except _Died as died:
            self._stop()
            raise WorkerError(f"the backend's worker did not start: {died.why}{died.output}") from None
        except WorkerError:
            self._stop()
            raise
        self._info = info

    def _death(self) -> str:
        """Why the worker stopped answering: its exit status or signal."""
        assert self._process is not None
        try:
            status = self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return "backend process stopped answering"
        if status < 0:
            return f"backend process died ({signal.Signals(-status).name})"
        return f"backend process died (exit status {status})"

    def _died(self, why: str, wait: bool = False) -> None:
        step = PROGRESS.unpack_from(self._progress, 0)[0]
        if wait and self._process is not None:
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._stop()
        raise _Died(why, step, _tail(Path(self._log.name)))

    def _stop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._process is not None:
            if self._process.poll() is None:
                try:
                    os.killpg(self._process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self._process.wait()
            self._process = None


def worker_path(python: str | None) -> str:
    """The worker's PYTHONPATH: this process's path, or, for the Python of another environment,
    only the directory this oracle is imported from (so that the engine's own packages, a ``torch``
    among them, are the ones it imports)."""
    if python is None:
        return os.pathsep.join(p for p in sys.path if p)
    return str(Path(__file__).resolve().parent.parent)


def _remove(progress: mmap.mmap, *files: Any) -> None:
    """Close the progress map and the worker's temporary files, and delete the files."""
    progress.close()
    for file in files:
        file.close()
        Path(file.name).unlink(missing_ok=True)


class WorkerCrash(RuntimeError):
    """The worker died while running a ``call``."""


class _Died(Exception):
    def __init__(self, why: str, step: int, output: str) -> None:
        super().__init__(why)
        self.why, self.step, self.output = why, step, output


def _tail(log: Path, lines: int = 6) -> str:
    """What the worker printed before it died, as a suffix of a reason: the fatal error and the
    innermost frames faulthandler showed, else its last lines."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    shown = text.splitlines()[-lines:]
    fatal = text.find("Fatal Python error")
    if fatal >= 0:
        printed = text[fatal:].splitlines()
        frames = [line.strip() for line in printed if line.strip().startswith("File ")]
        shown = [printed[0], *frames[:3]]
    return ("; it printed: " + " | ".join(line.strip() for line in shown)) if shown else ""
