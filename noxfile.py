"""How to run everything: `nox -s conformance` (the main job), `nox -s tests`, and the rest.

Virtualenvs are reused between runs (nothing is reinstalled when it is already satisfied, torch
above all: it is pinned once, in pyproject.toml's `reference` extra). Extra arguments after `--`
go to pytest, e.g. `nox -s conformance -- --backend mypkg --hypothesis-profile=thorough`.
"""

from __future__ import annotations

import nox

nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests"]

CI_PROFILE = "--hypothesis-profile=ci"


def install(session: nox.Session, *extras: str) -> None:
    """Install the project (editable) with the given extras; a satisfied pin is not reinstalled."""
    session.install("-e", f".[{','.join(extras)}]" if extras else ".")


def with_profile(args: list[str], default: str = CI_PROFILE) -> list[str]:
    """pytest args, adding the default hypothesis profile unless one was given."""
    chosen = any(a.startswith("--hypothesis-profile") for a in args)
    return args if chosen else [*args, default]


@nox.session
def tests(session: nox.Session) -> None:
    """Self-tests of the oracle, unit tests of impl, and the conformance suite in the CI profile."""
    install(session, "reference", "test", "report")
    session.run("pytest", "-n", "2", *with_profile(session.posargs))


@nox.session
def conformance(session: nox.Session) -> None:
    """The main job: the conformance suite against a backend (default impl) -> reports/index.html."""
    install(session, "reference", "test", "report")
    session.run("pytest", "conformance", "-n", "2", "--report", *with_profile(session.posargs))


@nox.session
def report(session: nox.Session) -> None:
    """Re-render reports/index.html from reports/results.json (and benchmark results, if any)."""
    install(session, "report")
    session.run("python", "-m", "oracle", "report", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """CPU benchmarks: impl and torch side by side, ratios printed and saved for the report."""
    install(session, "reference", "test", "bench")
    session.run("pytest", "benchmarks", "-m", "not gpu", "-p", "no:xdist", *session.posargs)


@nox.session
def bench_gpu(session: nox.Session) -> None:
    """GPU benchmarks: impl on cupy against torch on CUDA (skips cleanly without a GPU)."""
    install(session, "reference", "test", "bench", "gpu")
    session.run("pytest", "benchmarks", "-m", "gpu", "-p", "no:xdist", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the whole tree."""
    session.install("ruff")
    session.run("ruff", "check", ".")
