"""Runs on real engines and other torch versions, each in a virtualenv of its own.

``nox -s engine -- NAME`` and ``nox -s torch_version -- VERSION`` call these. The suite (and the
reference, the pinned torch) runs in the caller's environment; the backend's worker runs in the
engine's environment (``--backend-python``), so an engine that installs a ``torch`` of its own, or
another torch, never meets the reference. Results go to ``reports/engines/NAME/`` (results.json,
index.html); ``oracle.engines_page`` gathers them into the Engines page and the README's table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from oracle.profiles import TRIAGE

REPORTS = Path("reports") / "engines"
STAMP = "oracle-requirements.json"  # in an environment: what was installed there
TAIL_LINES = 15


class InstallError(RuntimeError):
    """An environment that could not be made: says what was asked for and what pip answered."""


def base_python() -> str:
    """The interpreter new environments are made from: the one this virtualenv was made from (so
    that nothing installed here, torch above all, is visible there)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def env_python(env: Path) -> Path:
    return env / "bin" / "python"


def make_env(env: Path, requirements: Sequence[str], log: Callable[[str], None] = print,
             pip_args: Sequence[str] = ()) -> Path:
    """A virtualenv at ``env`` with ``requirements`` (and numpy, the oracle worker's one
    dependency) installed by pip, reused when it already holds them; its Python. pip's output
    streams through (progress); a failure raises ``InstallError`` with pip's last lines."""
    wanted = [*requirements, "numpy"] if requirements else []
    python = env_python(env)
    stamp = env / STAMP
    if python.exists() and stamp.exists() and json.loads(stamp.read_text()) == wanted:
        log(f"reusing {env} ({', '.join(wanted) or 'no requirements'})")
        return python
    log(f"creating {env} from {base_python()}")
    _run([base_python(), "-m", "venv", "--clear", "--without-pip", str(env)],
         f"creating the virtualenv {env}")
    if wanted:  # this Python's pip installs there (pip --python): no pip to bootstrap in each env
        log(f"installing {' '.join(wanted)} into {env} (pip's output follows)")
        pip_env = {k: v for k, v in os.environ.items() if k != "PIP_CONSTRAINT"}
        _run([sys.executable, "-m", "pip", "--python", str(python), "install", *pip_args, *wanted],
             f"installing {' '.join(wanted)} into {env}", pip_env)
    stamp.write_text(json.dumps(wanted))
    return python


def _run(argv: list[str], what: str, env: dict | None = None) -> None:
    """Run ``argv``, echoing its output; ``InstallError`` naming ``what`` if it fails."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line.rstrip())
    if process.wait() != 0:
        tail = "\n  ".join(lines[-TAIL_LINES:])
        raise InstallError(f"{what} failed (exit status {process.returncode}); the last lines:\n  {tail}")


def suite_command(backend: str, device: str, python: Path, out: Path, workers: int = 2,
                  extra: Sequence[str] = (), suite_python: str = sys.executable) -> list[str]:
    """The pytest command (run by ``suite_python``, where the reference is) that runs the
    conformance suite on ``backend`` (on ``device``, in the environment of ``python``) in the
    triage profile, writing results.json and index.html to ``out``."""
    chosen = any(arg.startswith("--hypothesis-profile") for arg in extra)
    return [
        suite_python, "-m", "pytest", "conformance", "-p", "no:cacheprovider",
        *(["-n", str(workers)] if workers > 1 else []),
        "--backend", backend, "--device", device, "--backend-python", str(python),
        "--results", str(out / "results.json"), "--report",
        *([] if chosen else [f"--hypothesis-profile={TRIAGE}"]), *extra,
    ]


def record_command(corpus: Path, workers: int = 2, extra: Sequence[str] = (),
                   suite_python: str = sys.executable) -> list[str]:
    """The pytest command that records the suite's programs and their traces on the pinned torch
    (torch against itself in this process: nothing fails), in the triage profile."""
    chosen = any(arg.startswith("--hypothesis-profile") for arg in extra)
    return [
        suite_python, "-m", "pytest", "conformance", "-p", "no:cacheprovider", "-q",
        *(["-n", str(workers)] if workers > 1 else []),
        "--backend", "torch", "--isolation", "none", "--record-corpus", str(corpus),
        "--results", str(corpus.parent / "record-results.json"),
        *([] if chosen else [f"--hypothesis-profile={TRIAGE}"]), *extra,
    ]


def replay_command(corpus: Path, python: Path, out: Path, backend: str = "torch",
                   suite_python: str = sys.executable, ignore: str = "") -> list[str]:
    """The replay of ``corpus`` on ``backend`` in the environment of ``python``: results.json and
    index.html in ``out``; ``ignore``: divergence classes not counted (e.g. ``messages,warnings``)."""
    return [
        suite_python, "-m", "oracle", "replay", str(corpus), "--backend", backend,
        "--backend-python", str(python), "--results", str(out / "results.json"), "--report",
        *(["--ignore", ignore] if ignore else []),
    ]
