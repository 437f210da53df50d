"""Run a pytest session in a fresh process without paying for its imports each time.

tests/oracle/test_impl_planted_faults.py runs the conformance suite once per planted fault, a few hundred
sessions. A new interpreter spends about two seconds importing torch, numpy, hypothesis, pytest
and impl before the first test; that was half of each run. Here the sessions are forked from a
multiprocessing "forkserver": a process started once, which imports those modules and never runs
an op (so no thread pool exists when it forks), then forks one child per session. Each child runs
``pytest.main`` on its own copy of the modules, so whatever a session changes (a fault patched into
impl, hypothesis settings, the plugins' state) dies with it, as with a subprocess.

Where the platform has no forkserver (Windows), a plain ``python -m pytest`` subprocess is run.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PRELOAD = ["numpy", "torch", "hypothesis", "pytest", "impl", "tests.helpers.conformance_preload"]


def _forkserver() -> multiprocessing.context.BaseContext | None:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _session(args: list[str], cwd: str, log: str) -> None:
    """In the forked child: pytest ``args`` in ``cwd``, printing into the file ``log``."""
    os.chdir(cwd)
    sys.path.insert(0, cwd)
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    import pytest

    code = pytest.main(args)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def run(args: list[str], cwd: Path, timeout: float) -> str:
    """``pytest args`` in ``cwd`` in a fresh process; what it printed. A session still running
    after ``timeout`` seconds is killed and raises TimeoutError."""
    context = _forkserver()
    if context is None:
        done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout)
        return done.stdout + done.stderr
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder, "pytest.log")
        child = context.Process(target=_session, args=(args, str(cwd), str(log)))
        child.start()
        child.join(timeout)
        if child.is_alive():
            child.kill()
            child.join()
            raise TimeoutError(f"pytest {' '.join(args)} ran past {timeout} s")
        return log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
