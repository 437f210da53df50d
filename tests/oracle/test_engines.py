"""Engines in environments of their own (oracle/engines.py, --backend-python, oracle/engines_page.py).

The real engines (oracle/adapters) are too slow and too large for CI; these tests use a small fake
one instead: a virtualenv (no pip, made in a second) whose only packages are numpy, ml_dtypes and a
top-level ``torch`` that is impl with a wrong ``exp`` (as jtorch's wheel installs a ``torch`` of its
own). The worker must import that ``torch`` while the reference here stays the pinned one; a
corpus replayed on it gives the Engines page and the README's table; a failing install says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import ml_dtypes
import numpy
import pytest
import torch

from oracle.adapters import ENGINES
from oracle.backends import InProcess
from oracle.corpus import CorpusRecorder, write_corpus
from oracle.engines import InstallError, base_python, make_env, replay_command, suite_command
from oracle.engines_page import (
    README_END,
    README_START,
    collect,
    readme_table,
    summarize,
    update_readme,
    write_page,
)
from oracle.numeric import gradient_check
from oracle.program import Backward, Leaf, Observe, Op, Program, Ref
from oracle.reference import reference
from oracle.runner import Isolated
from tests.helpers import ROOT

FAKE_TORCH = '''"""impl as a top-level torch, exp off by 1%."""
import impl
__version__ = "0.0.1+fake"
def __getattr__(name):
    return getattr(impl, name)
def exp(input, *args, **kwargs):
    return impl.exp(input, *args, **kwargs) * 1.01
'''


@pytest.fixture(scope="module")
def fake_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with numpy, ml_dtypes and the fake ``torch`` only; its Python."""
    env = tmp_path_factory.mktemp("fake-engine")
    subprocess.run([base_python(), "-m", "venv", "--without-pip", str(env / "venv")], check=True)
    packages = env / "packages"
    (packages / "torch").mkdir(parents=True)
    (packages / "torch" / "__init__.py").write_text(FAKE_TORCH)
    for module in (numpy, ml_dtypes):  # the real ones, linked (with their bundled libraries)
        source = Path(module.__file__).parent
        for path in source.parent.glob(f"{source.name}*"):
            if not path.name.endswith("-info"):
                (packages / path.name).symlink_to(path)
    site = next((env / "venv" / "lib").glob("python3*/site-packages"))
    (site / "fake-engine.pth").write_text(f"{packages}\n")
    return env / "venv" / "bin" / "python"


def program(op: str) -> Program:
    return Program([Leaf("a", [0.5, 1.0]), Op("y", op, [Ref("a")]), Op("s", "sum", [Ref("y")]),
                    Backward("s"), Observe("y"), Observe("a")])


def test_the_worker_imports_the_engines_own_torch_and_the_reference_stays_pinned(fake_env: Path) -> None:
    backend = Isolated("torch", python=str(fake_env), timeout=60)
    try:
        info = backend.info()
        assert info["version"] == "0.0.1+fake" and "packages/torch" in info["file"]
        exp, sin = backend.trace(program("exp")), backend.trace(program("sin"))
    finally:
        backend.close()
    ref = reference()
    assert torch.__version__.startswith("2.13") and ref.module is torch
    assert exp.events != ref.trace(program("exp")).events  # the fake's exp is off
    assert sin.events == ref.trace(program("sin")).events


def test_a_missing_interpreter_is_a_clear_error(tmp_path: Path) -> None:
    backend = Isolated("torch", python=str(tmp_path / "no-python"))
    try:
        with pytest.raises(Exception, match="cannot start the backend's worker with .*no-python"):
            backend.info()
    finally:
        backend.close()


def test_a_replayed_corpus_gives_the_engines_page_and_the_readme_table(
    fake_env: Path, tmp_path: Path
) -> None:
    ref = reference()
    recorder = CorpusRecorder()
    for op in ("exp", "sin", "tanh"):
        recorder.add(program(op), f"OPS-{op}", ref.trace(program(op)), ref)
    corpus = tmp_path / "corpus.json.gz"
    write_corpus(recorder.document(), corpus)
    out = tmp_path / "engines" / "fake"
    done = subprocess.run(replay_command(corpus, fake_env, out), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr  # exp diverges
    assert "[3/3] corpus.json.gz::OPS-tanh: passed" in done.stderr  # progress, one line per rule
    assert (out / "index.html").exists()

    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([{"engine": "fake", "test": "corpus.json.gz::OPS-exp",
                                     "line": "exp is 1% high", "repro": "torch.exp(x)"}]))
    runs = collect(tmp_path / "engines", findings)
    assert [run["name"] for run in runs] == ["fake"]
    run = runs[0]
    assert run["backend"]["version"] == "0.0.1+fake" and run["totals"]["failed"] == 1
    assert run["totals"]["passed"] == 2 and run["divergences"][0]["finding"]["line"] == "exp is 1% high"
    assert "torch.exp" in run["divergences"][0]["repro"]
    page = write_page(runs, tmp_path / "engines").read_text()
    assert "exp is 1% high" in page and "fake/index.html" in page

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{README_START}\nold\n{README_END}\nrest\n")
    update_readme(readme, readme_table(runs))
    text = readme.read_text()
    assert "| fake 0.0.1+fake | 2.13.0+cpu |" in text and "2 / 1 / 0" in text and "old" not in text
    assert "exp is 1% high" in text and text.endswith(f"{README_END}\nrest\n")


def test_an_environment_is_reused_and_a_failed_install_says_what_failed(tmp_path: Path) -> None:
    env = tmp_path / "env"
    logged: list[str] = []
    python = make_env(env, [], logged.append)
    assert python.exists() and make_env(env, [], logged.append) == python
    assert logged[-1].startswith("reusing")
    offline = ["--no-index", "--find-links", str(tmp_path), "--quiet"]
    failed = r"installing no-such-engine numpy into .* failed \(exit status 1\)"
    with pytest.raises(InstallError, match=failed):
        make_env(env, ["no-such-engine"], logged.append, pip_args=offline)


def test_the_session_commands_run_the_suite_where_the_reference_is() -> None:
    engine = ENGINES["torchax"]
    command = suite_command(engine.backend, engine.device, Path("/env/bin/python"), Path("reports/engines/x"))
    assert command[:3] == [sys.executable, "-m", "pytest"] and "--hypothesis-profile=triage" in command
    assert command[command.index("--backend-python") + 1] == "/env/bin/python"
    assert command[command.index("--device") + 1] == "jax"
    chosen = suite_command("m", "cpu", Path("p"), Path("o"), extra=["--hypothesis-profile=dev"])
    assert "--hypothesis-profile=triage" not in chosen
    for engine in ENGINES.values():  # each adapter is a module of the oracle's adapters folder
        assert (ROOT / (engine.backend.replace(".", "/") + ".py")).is_file()


def test_an_engines_error_in_the_gradient_check_is_reported_not_raised() -> None:
    module = types.ModuleType("boom")
    module.__getattr__ = lambda name: getattr(torch, name)  # type: ignore[attr-defined]

    def exp(x: torch.Tensor) -> torch.Tensor:
        raise ValueError("no exp here")

    module.exp = exp  # type: ignore[attr-defined]
    found = gradient_check(InProcess("boom", module), [{"out": "f0", "op": "exp", "args": [Ref("i0")]}],
                           [[0.5]], [(1,)])
    assert found == {"raised": "ValueError: no exp here"}


def test_a_finding_of_a_class_a_run_ignores_is_not_shown_with_it() -> None:
    wording = {"engine": "torch-9", "test": "c::R", "line": "a word", "class": "warning"}
    behaviour = {"engine": "torch-9", "test": "c::S", "line": "a value"}
    results = {"backend": {"version": "9"}, "reference": {"version": "2.13.0"},
               "ignore": ["message", "warning"]}
    shown = summarize("torch-9-behaviour", results, [wording, behaviour])["checked"]
    assert [f["line"] for f in shown] == ["a value"]
    assert len(summarize("torch-9", {**results, "ignore": []}, [wording, behaviour])["checked"]) == 2
    assert summarize("torch-10", results, [behaviour])["checked"] == []
