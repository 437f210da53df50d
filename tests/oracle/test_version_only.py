"""The version-only rule (``oracle.differential.version_only``), simulated on CPU: a run that accepted
another reference torch than the pin (``ORACLE_REFERENCE_VERSION``, what ``--reference-version``
sets) compares impl on 'cuda' (the cupy stand-in) with "another torch release", here torch with a
planted fault that rewords a backward error or drops a warning on every device, as a release that
words them differently would. Such a divergence also shows between impl on cpu and that torch on
cpu: it is set aside as version-only, counted apart, and the program passes. A divergence only
'cuda' shows, one at the pinned version, or one of another class still fails the program.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

import impl
import impl._xp
from oracle.backends import InProcess, load_backend
from oracle.differential import DivergenceError, check, recording, version_only
from oracle.faults import patched
from oracle.program import Backward, Leaf, Observe, Op, Program, Ref
from oracle.reference import VERSION_VARIABLE, pinned_version
from oracle.results import ConformanceResult, build_results
from oracle.runner import Isolated
from tests.helpers import HELPERS, cupy_standin

SHIM = HELPERS / "cupy_shim"  # ``import cupy`` -> the stand-in, in any process
# a backward that raises (torch's message: "element 0 of tensors does not require grad ...")
BACKWARD_ERROR = Program([Leaf("x", [1.0, 2.0]), Op("s", "sum", [Ref("x")]), Backward("s")])
# reading .grad of a non-leaf warns (UserWarning "The .grad attribute of a Tensor that is not a leaf")
NON_LEAF_GRAD = Program([Leaf("x", [1.0], requires_grad=True), Op("y", "mul", [Ref("x"), 3.0]), Observe("y")])
# a value divergence: never a version difference, whatever cpu shows
MEAN = Program([Leaf("x", [1.0, 2.0], requires_grad=True), Op("y", "mean", [Ref("x")]), Observe("y")])
CUDA = InProcess("impl", impl, "cuda")


@pytest.fixture
def cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(impl._xp, "_cupy", cupy_standin)


@pytest.fixture
def other_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that accepted torch 2.11.0 (the GPU machine's) while the pin is another release."""
    assert pinned_version() != "2.11.0"
    monkeypatch.setenv(VERSION_VARIABLE, "2.11.0")


def another_torch(fault: str) -> InProcess:
    """torch as another release would behave: the planted fault on every device it runs on."""
    return load_backend(f"fault:{fault}")


@pytest.mark.parametrize(("fault", "program", "kind"), [
    ("backward_error_reworded", BACKWARD_ERROR, "message"),
    ("warning_dropped", NON_LEAF_GRAD, "warning"),
])
def test_a_difference_cpu_shows_too_is_set_aside_in_another_version_run(
    fault: str, program: Program, kind: str, cuda: None, other_version: None
) -> None:
    with recording() as log:
        check(program, CUDA, another_torch(fault))  # passes
    assert log.outcomes == {"passed": 1} and log.version_only == {kind: 1}
    assert log.classes == {} and log.ignored == {}
    assert log.record()["version_only"] == {kind: 1}


def test_set_aside_divergences_are_marked(cuda: None, other_version: None) -> None:
    from oracle.compare import divergences

    reference = another_torch("backward_error_reworded")
    found = divergences(reference.trace(BACKWARD_ERROR), CUDA.trace(BACKWARD_ERROR))
    assert [d.kind for d in found] == ["message"] and not found[0].version
    assert version_only(BACKWARD_ERROR, CUDA, reference, found) == found
    assert version_only(BACKWARD_ERROR, CUDA.on("cpu"), reference, found) == []  # cpu: nothing to tell


def test_at_the_pinned_version_it_counts(cuda: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without another reference version, a divergence cpu shows too is the backend's own."""
    for accepted in (None, pinned_version()):
        if accepted is None:
            monkeypatch.delenv(VERSION_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(VERSION_VARIABLE, accepted)
        with recording() as log, pytest.raises(DivergenceError) as caught:
            check(BACKWARD_ERROR, CUDA, another_torch("backward_error_reworded"))
        assert caught.value.divergence.kind == "message" and log.version_only == {}


@contextmanager
def impl_backward_reworded() -> Iterator[None]:
    """impl's backward errors in its own words (as backward_error_reworded does to torch)."""

    def wrap(original: Any) -> Any:
        def backward(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except RuntimeError as exc:
                raise RuntimeError(f"on the device: {exc}") from None

        return backward

    with patched(impl.Tensor, "backward", wrap):
        yield


@dataclass(frozen=True)
class DeviceOnlyFault(InProcess):
    """impl with a fault on its device only: on cpu it is plain impl."""

    def on(self, device: str) -> InProcess:
        return self if device == self.device else InProcess(self.name, self.module, device)


@pytest.mark.parametrize("reference", ["torch", "fault:backward_error_reworded"])
def test_a_difference_of_the_device_alone_counts(reference: str, cuda: None, other_version: None) -> None:
    """impl rewords its message on 'cuda' only: against torch, cpu shows no divergence; against the
    other torch, cpu shows one of the same class at the same step, but not the same one."""
    backend = DeviceOnlyFault("impl", impl, "cuda", impl_backward_reworded)
    with recording() as log, pytest.raises(DivergenceError) as caught:
        check(BACKWARD_ERROR, backend, load_backend(reference))
    assert caught.value.divergence.kind == "message" and "on the device: " in caught.value.divergence.reason
    assert log.outcomes == {"failed": 1} and log.version_only == {}


def test_another_class_counts(cuda: None, other_version: None) -> None:
    with recording() as log, pytest.raises(DivergenceError) as caught:
        check(MEAN, CUDA, another_torch("mean_off"))
    assert caught.value.divergence.kind == "value" and log.version_only == {}


def test_through_isolated_workers(other_version: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """An isolated backend's cpu twin (``Isolated.on``) is a worker of its own, closed with it."""
    monkeypatch.syspath_prepend(str(SHIM))  # the workers' PYTHONPATH is this sys.path
    backend = Isolated("impl", "cuda", timeout=60)
    try:
        twin = backend.on("cpu")
        assert twin.device == "cpu" and backend.on("cpu") is twin and backend.on("cuda") is backend
        with recording() as log:
            check(BACKWARD_ERROR, backend, another_torch("backward_error_reworded"))
        assert log.outcomes == {"passed": 1} and log.version_only == {"message": 1}
        assert twin._process is not None
    finally:
        backend.close()
    assert twin._process is None


def test_results_count_them_apart() -> None:
    report = SimpleNamespace(duration=0.1, failed=False, skipped=False, when="call", passed=True)
    test = ConformanceResult("conformance/test_errors.py::test_x")
    test.merge(report, {"rule": "ERR-002", "program_outcomes": {"passed": 3},
                        "version_only": {"message": 2, "warning": 1}})
    test.merge(report, {"rule": "ERR-002", "version_only": {"message": 1}})
    assert test.version_only == {"message": 3, "warning": 1}
    results = build_results([test], {"device": "cuda"})
    assert results["totals"]["version_only"] == {"message": 3, "warning": 1}
    assert results["tests"][0]["version_only"] == {"message": 3, "warning": 1}

