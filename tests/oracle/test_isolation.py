"""The backend under test in a worker process of its own (oracle/runner.py, oracle/worker.py).

A worker that segfaults, hangs or exhausts its memory limit gives the program one ``crash`` event
at the step it was running, and the next program runs on a fresh worker; a backend that changes
torch on import cannot reach the reference in the suite's process (with ``--isolation none`` it
does, which is what shows these tests can fail); a backend that cannot be imported fails the tests
with its error; the worker's files go when the runner does, and a worker stuck in the backend ends
when its client is killed. The fake engines are in tests/helpers/engines.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from oracle.backends import load_backend
from oracle.differential import DivergenceError, check
from oracle.program import Backward, Leaf, Observe, Op, Program, Ref
from oracle.reference import reference
from oracle.runner import Isolated
from tests.helpers import ROOT, forked_pytest
from tests.helpers.engines import MEDDLER_MESSAGE

pytest_plugins = "pytester"

FRAGILE = "tests.helpers.engines.fragile"
GIB = 2**30
PATIENCE = 60.0  # the timeout of a program that should not hang (CI machines can be slow)


def unary(op: str) -> Program:
    """A leaf (step 0), ``op`` of it (step 1), the result observed (step 2)."""
    return Program([Leaf("a", [0.5, 1.0]), Op("y", op, [Ref("a")]), Observe("y")])


@pytest.fixture
def fragile() -> Iterator[Isolated]:
    runner = Isolated(FRAGILE, timeout=PATIENCE, memory=GIB)
    yield runner
    runner.close()


@pytest.mark.parametrize(("op", "reason"), [
    ("exp", "backend process died (SIGSEGV) at step 1; it printed: Fatal Python error: Segmentation fault"),
    ("sin", "backend process timed out after 1 s at step 1"),
    ("cos", "backend process exhausted its memory limit of 1 GiB at step 1"),
], ids=["segfault", "hang", "memory"])
def test_a_dying_worker_is_a_crash_at_its_step_and_the_next_program_runs_on_a_fresh_one(
    fragile: Isolated, op: str, reason: str
) -> None:
    fragile.info()
    first_worker = fragile._process.pid
    fragile.timeout = 1.0 if op == "sin" else PATIENCE
    started = time.monotonic()
    with pytest.raises(DivergenceError) as diverged:
        check(unary(op), fragile, reference())
    assert time.monotonic() - started < 30
    fragile.timeout = PATIENCE
    [crash] = diverged.value.test_trace.events
    assert (crash["kind"], crash["step"]) == ("crash", 1) and crash["reason"].startswith(reason), crash
    assert (diverged.value.divergence.kind, diverged.value.divergence.step) == ("crash", 1)
    with pytest.raises(ProcessLookupError):  # the worker that failed is gone (killed if it hung)
        os.kill(first_worker, 0)
    after = fragile.trace(unary("neg"))
    assert fragile.restarts == 1 and fragile._process.pid != first_worker
    assert after.events == load_backend("impl").trace(unary("neg")).events
    check(unary("neg"), fragile, reference())
    assert fragile.restarts == 1  # a passing program does not restart it


def test_the_crash_names_where_the_backend_died(fragile: Isolated) -> None:
    [crash] = fragile.trace(unary("exp")).events
    assert "fragile.py" in crash["reason"] and "in exp" in crash["reason"]


STUCK_CLIENT = """
import time

from oracle.program import Leaf, Observe, Op, Program, Ref
from oracle.runner import PROGRESS, Isolated

runner = Isolated("tests.helpers.engines.fragile")
runner.start(Program([Leaf("a", [0.5]), Op("y", "sin", [Ref("a")]), Observe("y")]))
while PROGRESS.unpack_from(runner._progress, 0)[0] != 1:  # until the worker is in sin
    time.sleep(0.01)
print(runner._process.pid, flush=True)
time.sleep(600)
"""


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaped yet counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker asks Linux's prctl for it")
def test_a_worker_stuck_in_the_backend_ends_with_a_killed_client() -> None:
    client = subprocess.Popen([sys.executable, "-c", STUCK_CLIENT], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    worker = int(client.stdout.readline())
    try:
        client.kill()
        client.wait()
        deadline = time.monotonic() + 10
        while not gone(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(worker)
    finally:
        client.stdout.close()
        if not gone(worker):
            os.kill(worker, signal.SIGKILL)


def test_the_workers_files_are_removed_on_close() -> None:
    runner = Isolated("impl")
    runner.info()
    files, worker = [Path(runner._log.name), Path(runner._progress_file.name)], runner._process
    assert all(path.exists() for path in files)
    runner.close()
    assert not any(path.exists() for path in files)
    assert runner._log.closed and runner._progress_file.closed
    assert worker.poll() is not None


def test_the_workers_files_are_removed_when_a_runner_is_dropped_unclosed() -> None:
    """As when the backend fixture fails after creating it: nothing closes it."""
    runner = Isolated("tests.helpers.engines.no_such_engine")
    files = [Path(runner._log.name), Path(runner._progress_file.name)]
    with pytest.raises(Exception, match="cannot import backend module"):
        runner.info()
    assert all(path.exists() for path in files)
    del runner
    gc.collect()
    assert not any(path.exists() for path in files)


TWO_TESTS = """
import pytest


@pytest.mark.rule("LEAF-001")
def test_t(backend):
    pass


@pytest.mark.rule("LEAF-002")
def test_u(backend):
    pass
"""


@pytest.mark.parametrize(("source", "error"), [
    (None, "No module named 'no_such_engine'"),
    ("raise RuntimeError('half-built engine')", "RuntimeError: half-built engine"),
    ("import os\nos._exit(3)", "the backend's worker did not start: backend process died (exit status 3)"),
], ids=["missing", "raises", "exits"])
def test_a_backend_that_cannot_be_imported_fails_the_tests_clearly(
    pytester: pytest.Pytester, source: str | None, error: str
) -> None:
    pytester.syspathinsert()
    if source is not None:
        pytester.makepyfile(no_such_engine=source)
    pytester.makepyfile(test_it=TWO_TESTS)
    started = time.monotonic()
    result = pytester.runpytest("-p", "oracle.plugin", "--backend", "no_such_engine")
    assert time.monotonic() - started < 60
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([f"--backend: *{error}*"] * 2)


# -- a backend that changes torch on import ------------------------------------------------------

# a tensor made with the default dtype, a product, backward: what the meddler's changes show in
MEDDLED = Program([Leaf("a", [1.0, 2.0], requires_grad=True), Op("c", "tensor", [[0.5, 0.25]]),
                   Op("y", "mul", [Ref("a"), Ref("c")]), Op("s", "sum", [Ref("y")]), Backward("s"),
                   Observe("c"), Observe("a")])


def test_an_isolated_meddler_leaves_the_reference_untouched() -> None:
    own = reference().trace(MEDDLED).events
    backward = torch.Tensor.backward
    runner = Isolated("tests.helpers.engines.meddler")
    try:
        meddled = runner.trace(MEDDLED).events
        assert runner.info()["name"] == "torch"  # the meddler stood in for itself as torch
    finally:
        runner.close()
    assert {"type": "RuntimeError", "message": MEDDLER_MESSAGE}.items() <= meddled[0].items()
    assert [e["value"]["dtype"] for e in meddled if e["kind"] == "value" and e["name"] == "c"] == ["float64"]
    assert reference().trace(MEDDLED).events == own
    assert torch.get_default_dtype() == torch.float32 and torch.Tensor.backward is backward


REFERENCE_IS_TORCHS_OWN = """
import json

import torch

from oracle.program import Program

PROGRAM = Program.from_json({program!r})
OWN = json.loads({own!r})


def test_reference_is_torchs_own(backend, reference):
    assert backend.info()["name"] == "torch"
    assert reference.trace(PROGRAM).to_dict()["events"] == OWN
    assert torch.get_default_dtype() == torch.float32
"""


@pytest.mark.parametrize(("isolation", "outcome"), [("process", "1 passed"), ("none", "1 failed")])
def test_the_meddler_reaches_the_suites_reference_only_without_isolation(
    tmp_path: Path, isolation: str, outcome: str
) -> None:
    """A pytest session with the meddler as backend: isolated, the reference's traces in the
    suite's process are torch's own; in process (``--isolation none``), they are the meddler's."""
    own = json.dumps(reference().trace(MEDDLED).to_dict()["events"])
    test = REFERENCE_IS_TORCHS_OWN.format(program=MEDDLED.to_json(), own=own)
    (tmp_path / "test_meddled.py").write_text(test)
    args = ["-p", "oracle.plugin", "-p", "no:cacheprovider", "--isolation", isolation,
            "--backend", "tests.helpers.engines.meddler", "test_meddled.py"]
    output = forked_pytest.run(args, tmp_path, 120)
    assert outcome in output, output[-3000:]
    if isolation == "none":
        assert "float64" in output or MEDDLER_MESSAGE in output


def test_a_segfault_through_pytest_fails_its_test_and_the_next_test_passes(tmp_path: Path) -> None:
    """End to end: the conformance tests of exp (which segfaults) and neg, in the planted profile:
    exp's test fails with a crash divergence at the step torch.exp ran, neg's passes."""
    results = tmp_path / "results.json"
    tests = [f"conformance/test_ops.py::test_unary_ops[{op}]" for op in ("exp", "neg")]
    output = forked_pytest.run([*tests, "--backend", FRAGILE, "--hypothesis-profile=planted", "--results",
                                str(results), "-p", "no:randomly", "-p", "no:cacheprovider"], ROOT, 300)
    assert results.exists(), output[-3000:]
    found = {test["nodeid"].split("[")[1][:-1]: test for test in json.loads(results.read_text())["tests"]}
    assert (found["exp"]["outcome"], set(found["exp"]["classes"])) == ("failed", {"crash"}), found["exp"]
    [divergence] = json.loads(results.read_text())["divergences"]
    highlighted = divergence["details"]["divergence"]
    step = highlighted["test_event"]["step"]
    assert highlighted["kind"] == "crash" and divergence["details"]["program"]["steps"][step]["op"] == "exp"
    assert f"(step {step}, crash): backend process died (SIGSEGV) at step {step}" in divergence["details"][
        "description"]
    assert found["neg"]["outcome"] == "passed" and found["neg"]["programs"] > 0
