"""How to run everything: `nox -s conformance` (the main job), `nox -s tests`, and the rest.

Virtualenvs are reused between runs (nothing is reinstalled when it is already satisfied, torch
above all: it is pinned once, in pyproject.toml's `reference` extra). Extra arguments after `--`
go to pytest, e.g. `nox -s conformance -- --backend mypkg --hypothesis-profile=thorough`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the engine sessions use oracle.engines
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
    """Self-tests of the oracle, unit tests of impl, and the conformance suite in the CI profile,
    after the import contracts (``lint-imports``, as ``nox -s lint``).

    The report is checked in Debian's headless Chromium (tests/oracle/test_report_browser.py): installed
    here with apt-get when missing and this runs as root; otherwise a clear error says what to do
    (install it, or set ORACLE_NO_BROWSER=1 to skip those tests explicitly).
    """
    import os
    import shutil
    from pathlib import Path

    # bench: the benchmark harness self-tests; fuzz: the campaign test's Redis client
    install(session, "reference", "test", "report", "bench", "fuzz")
    install_redis_server(session)
    if not Path("/usr/bin/chromium").exists() and os.environ.get("ORACLE_NO_BROWSER") != "1":
        if shutil.which("apt-get") and os.geteuid() == 0:
            apt = {"DEBIAN_FRONTEND": "noninteractive"}
            session.log("installing Debian's chromium for the browser test of the report")
            session.run("apt-get", "update", "-qq", external=True, silent=True, env=apt)
            session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium",
                        "chromium-driver", "fonts-wqy-microhei", external=True, silent=True, env=apt)
        else:
            session.error("the report's browser test needs Debian's chromium: run `sudo apt-get install "
                          "chromium chromium-driver`, or set ORACLE_NO_BROWSER=1 to skip that test")
    session.run("lint-imports")  # the import contracts (pyproject.toml), so CI keeps them
    session.run("pytest", "-n", "2", *with_profile(session.posargs))


def install_redis_server(session: nox.Session) -> None:
    """Debian's redis-server for tests/oracle/test_campaign.py (a campaign sharing its example database in
    Redis), installed with apt-get when missing and this runs as root; otherwise that test skips
    and says why."""
    import os
    import shutil

    if shutil.which("redis-server") or not (shutil.which("apt-get") and os.geteuid() == 0):
        return
    apt = {"DEBIAN_FRONTEND": "noninteractive"}
    session.log("installing Debian's redis-server for the fuzz campaign's test")
    session.run("apt-get", "update", "-qq", external=True, silent=True, env=apt)
    session.run("apt-get", "install", "-y", "-qq", "--no-install-recommends", "redis-server",
                external=True, silent=True, env=apt)


@nox.session
def fuzz(session: nox.Session) -> None:
    """A fuzz campaign (oracle/campaign.py): rounds of the conformance suite with random seeds and
    growing example counts until ``--minutes N`` are spent, failures kept, shrunk and replayed from
    hypothesis's example database (``--redis URL``: shared by many machines); writes
    reports/campaign.json and reports/campaign.md. ``-- --help`` lists the options."""
    install(session, "reference", "test", "report", "fuzz")
    session.run("python", "-m", "oracle.campaign", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """The main job: the conformance suite against a backend (default impl) -> reports/index.html."""
    install(session, "reference", "test", "report")
    session.run("pytest", "conformance", "-n", "2", "--report", *with_profile(session.posargs))


ENGINE_ENVS = "ORACLE_ENGINE_ENVS"  # where engines' virtualenvs go (default .nox/engines)


def engine_env(name: str):
    """The directory of the virtualenv for engine ``name``."""
    import os
    from pathlib import Path

    return Path(os.environ.get(ENGINE_ENVS, ".nox/engines")) / name


def run_or_explain(session: nox.Session, steps) -> None:
    """Run ``steps()``; an environment that cannot be made ends the session with pip's account."""
    from oracle.engines import InstallError

    try:
        steps()
    except InstallError as exc:
        session.error(f"install failed: {exc}")


@nox.session
def engine(session: nox.Session) -> None:
    """``nox -s engine -- NAME [pytest args]``: the suite on a real engine (``oracle/adapters``:
    torchax, jtorch), installed in a virtualenv of its own, in the triage profile ->
    reports/engines/NAME/index.html and results.json, then the Engines page reports/engines/index.html.
    The reference runs here (the pinned torch); ORACLE_ENGINE_ENVS=DIR puts the engines' envs in DIR."""
    from oracle.adapters import ENGINES
    from oracle.engines import REPORTS, make_env, suite_command

    if not session.posargs or session.posargs[0] not in ENGINES:
        session.error(f"name an engine: nox -s engine -- NAME, one of {', '.join(ENGINES)}")
    chosen, extra = ENGINES[session.posargs[0]], session.posargs[1:]
    install(session, "reference", "test", "report")

    def steps() -> None:
        python = make_env(engine_env(chosen.name), chosen.requirements, session.log)
        out = REPORTS / chosen.name
        out.mkdir(parents=True, exist_ok=True)
        command = suite_command(chosen.backend, chosen.device, python, out, extra=extra,
                                suite_python="python")
        session.run(*command, success_codes=[0, 1])  # 1: the engine diverges, which the report shows
        session.run("python", "-m", "oracle", "engines")  # the Engines page, with this run

    run_or_explain(session, steps)


@nox.session
def torch_version(session: nox.Session) -> None:
    """``nox -s torch_version -- VERSION [pytest args]``: another torch against the pinned one. The
    suite's programs are recorded on the pinned torch (triage profile; the pytest args go to this
    recording) and replayed on torch VERSION in a virtualenv of its own ->
    reports/engines/torch-VERSION/index.html and results.json; replayed once more without messages
    and warnings -> reports/engines/torch-VERSION-behaviour/."""
    from oracle.engines import REPORTS, make_env, record_command, replay_command

    if not session.posargs:
        session.error("name a torch version: nox -s torch_version -- 2.5.1 [pytest args]")
    version, extra = session.posargs[0], session.posargs[1:]
    install(session, "reference", "test", "report")

    def steps() -> None:
        python = make_env(engine_env(f"torch-{version}"), [f"torch=={version}"], session.log)
        out = REPORTS / f"torch-{version}"
        out.mkdir(parents=True, exist_ok=True)
        corpus = out / "corpus.json.gz"
        session.log(f"recording the suite's programs on the pinned torch -> {corpus}")
        session.run(*record_command(corpus, extra=extra, suite_python="python"))
        session.log(f"replaying them on torch {version}")
        session.run(*replay_command(corpus, python, out, suite_python="python"), success_codes=[0, 1])
        session.log("and again without messages and warnings: what behaves differently, not wording")
        behaviour = REPORTS / f"torch-{version}-behaviour"
        command = replay_command(corpus, python, behaviour, suite_python="python", ignore="messages,warnings")
        session.run(*command, success_codes=[0, 1])
        session.run("python", "-m", "oracle", "engines")

    run_or_explain(session, steps)


@nox.session
def report(session: nox.Session) -> None:
    """Re-render reports/index.html from reports/results.json (and benchmark results, if any)."""
    install(session, "report")
    session.run("python", "-m", "oracle", "report", *session.posargs)


BENCH_ARGS = ("-p", "no:xdist", "--benchmark-columns=median,iqr,rounds")


@nox.session
def bench(session: nox.Session) -> None:
    """CPU benchmarks: impl, torch and HIPS autograd side by side, with one and with two compute
    threads each (``-- --bench-threads N[,M...]`` chooses); the ratio table of each setting is printed
    and saved as reports/benchmarks.json."""
    install(session, "reference", "test", "bench")
    session.run("pytest", "benchmarks", "-m", "not gpu", *BENCH_ARGS, *session.posargs)


@nox.session
def bench_gpu(session: nox.Session) -> None:
    """GPU benchmarks: impl on cupy against torch on CUDA, rows merged into reports/benchmarks.json.
    Skips cleanly without cupy and a device; the torch side also needs a CUDA build of torch."""
    install(session, "reference", "test", "bench", "gpu")
    session.run("pytest", "benchmarks", "-m", "gpu", *BENCH_ARGS, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the whole tree, and the import contracts (``[tool.importlinter]`` in pyproject.toml:
    oracle and impl independent, no test code imported by the product, impl's layers)."""
    install(session, "lint")
    session.run("ruff", "check", ".")
    session.run("lint-imports")


@nox.session
def gpu(session: nox.Session) -> None:
    """The first-GPU check, benchmarks/gpu_check.sh: impl's device tests on the real cupy, the
    conformance suite with ``--device cuda`` and the GPU benchmarks, each under a time limit; the
    summary and results go to reports/gpu_check/. ``-- standin``: the same parts on CPU with the
    cupy stand-in (tests/helpers/cupy_standin.py), as tests/oracle/test_gpu_check.py runs them."""
    import os

    standin = session.posargs == ["standin"]
    install(session, "reference", "test", "bench", *([] if standin else ["gpu"]))
    env = {"PYTHON": os.path.join(session.bin, "python"), "GPU_CHECK_STANDIN": "1" if standin else "0"}
    session.run("bash", "benchmarks/gpu_check.sh", external=True, env=env)
