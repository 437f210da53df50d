"""The worker process of an isolated backend (``oracle.runner.Isolated``): it loads the backend
and answers requests (run a program, call an oracle function, tell what was imported) until its
socket closes.

Run by the client as ``python -m oracle.worker SPEC DEVICE SOCKET_FD PROGRESS_FILE MEMORY_BYTES``.
Before each step of a program it writes the step's index into the shared progress file, so the
client can tell where a worker that died or hung was. A step that runs out of memory (the data
limit ``MEMORY_BYTES``, 0 for none) ends the worker: its answer is a crash, and the client starts
a fresh one for the next program.
"""

from __future__ import annotations

import ctypes
import faulthandler
import mmap
import os
import resource
import signal
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection

from oracle.backends import REFERENCE, InProcess, load_backend
from oracle.faults import plant_impl_fault_from_environment
from oracle.interpreter import run
from oracle.runner import PROGRESS
from oracle.trace import Trace

PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent ends


def serve(spec: str, device: str, descriptor: int, progress_path: str, memory: int) -> None:
    """Load the backend, then answer requests until the socket closes."""
    faulthandler.enable()  # a crash prints where it happened, which the client reports
    _die_with_client()
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    connection = Connection(descriptor)
    with open(progress_path, "r+b") as file:
        progress = mmap.mmap(file.fileno(), PROGRESS.size)
    try:
        backend = load_backend(spec, device)
        if spec != REFERENCE and not spec.startswith("fault:"):
            plant_impl_fault_from_environment(backend.module)
    except BaseException as exc:  # noqa: BLE001 - reported to the client, which stops the run
        _answer_each(connection, ("error", f"{type(exc).__name__}: {exc}"))
        return
    def mark(step: int) -> None:
        PROGRESS.pack_into(progress, 0, step)

    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        try:
            answer = _answer(request, backend, mark, memory)
        except MemoryError:
            answer = ("crash", _memory_message(memory))
        except BaseException as exc:  # noqa: BLE001 - the harness's own failure, sent back whole
            answer = ("error", f"{type(exc).__name__}: {exc}")
        connection.send(answer)
        if answer[0] == "crash":
            return


def _die_with_client() -> None:
    """On Linux, be killed when the client's process ends, however it ends: a worker stuck in the
    backend's code (which --backend-timeout would have stopped) never reads the socket's end and
    would outlive a suite that was killed. (The signal comes when the client's thread that started
    the worker ends: the suite starts workers from its main thread.)"""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the client ended before prctl: nobody is left to answer
        os._exit(1)


def _answer(request: tuple, backend: InProcess, mark: Callable[[int], None], memory: int) -> tuple:
    kind = request[0]
    if kind == "info":
        return "ok", backend.info()
    if kind == "trace":
        trace = run(request[1], backend, progress=mark, **request[2])
        step = _exhausted(trace)
        if step is not None:  # reported at the step that ran out, not the program's last
            mark(step)
            return "crash", _memory_message(memory)
        return "ok", trace
    if kind == "call":
        return "ok", backend.call(request[1], *request[2])
    return "error", f"unknown request {kind!r}"


def _exhausted(trace: Trace) -> int | None:
    """The first step of ``trace`` that ran out of memory, if one did: the process's state is
    suspect. (numpy's own MemoryError subclass is named MemoryError too.)"""
    return next((event["step"] for event in trace.events
                 if event["kind"] == "error" and event["type"] == "MemoryError"), None)


def _memory_message(memory: int) -> str:
    limit = f"its memory limit of {memory / 2**30:.3g} GiB" if memory > 0 else "the machine's memory"
    return f"backend process exhausted {limit}"


def _answer_each(connection: Connection, answer: tuple) -> None:
    """Answer every request with ``answer`` until the socket closes."""
    while True:
        try:
            connection.recv()
        except EOFError:
            return
        connection.send(answer)


if __name__ == "__main__":
    spec_, device_, descriptor_, progress_, memory_ = sys.argv[1:6]
    serve(spec_, device_, int(descriptor_), progress_, int(memory_))
