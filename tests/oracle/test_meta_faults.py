"""The oracle tests itself: torch agrees with torch, and every planted fault is caught.

For each fault of ``oracle.faults.FAULTS`` there is a hand-written program that exposes it and a
hypothesis search showing that ``oracle.strategies.programs()`` finds such a program unaided; the
faults between them produce every class of divergence (``oracle.compare.CLASSES``). Two classes
are out of the generic search's reach, because ``programs()`` draws no steps that observe them
(layouts, modules' parameters): for those faults the conformance family that draws such steps is
run against the fault instead (``UNREACHABLE``). The fault that kills its process (``CRASHING``)
only ever runs in a worker process (``oracle.runner.Isolated``), never in this one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from oracle.backends import Backend, load_backend
from oracle.compare import CLASSES
from oracle.differential import DivergenceError, check, default_reference, recording
from oracle.faults import CRASHING, FAULT_CLASSES, FAULTS, REWORDED
from oracle.program import (
    Action,
    Backward,
    Leaf,
    Module,
    Observe,
    ObserveLayout,
    ObserveModule,
    Op,
    Program,
    Ref,
    RegisterHook,
)
from oracle.reference import reference
from oracle.runner import Isolated
from oracle.stats import programs_checked
from oracle.strategies import programs
from tests.helpers import ROOT

TORCH = reference()
# the search for a fault-exposing program: reproducible, stops at the first find, then shrinks
SEARCH = settings(
    max_examples=2000, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
# a crash costs a fresh worker (seconds): the search for one stops at the first find, unshrunk
CRASH_SEARCH = settings(SEARCH, phases=[Phase.generate])

# fault -> (a program exposing it, words the divergence reason must contain)
EXPOSING: dict[str, tuple[Program, str]] = {
    "hook_order_swapped": (
        Program(
            [
                Leaf("x", [1.0, 2.0], requires_grad=True),
                Op("y", "mul", [Ref("x"), Ref("x")]),
                RegisterHook("first", "y"),
                RegisterHook("second", "y", action=Action("scale", 2.0)),
                Op("s", "sum", [Ref("y")]),
                Backward("s"),
            ]
        ),
        "hook differs: expected 'first', got 'second'",
    ),
    "grad_off": (
        Program(
            [
                Leaf("x", [1.0, 2.0], requires_grad=True),
                Op("y", "exp", [Ref("x")]),
                Op("s", "sum", [Ref("y")]),
                Backward("s"),
                Observe("x"),
            ]
        ),
        "x.grad: value 0 differs",
    ),
    "retain_graph_error_suppressed": (
        Program(
            [
                Leaf("x", [1.0, 2.0], requires_grad=True),
                Op("y", "sin", [Ref("x")]),
                Op("s", "sum", [Ref("y")]),
                Backward("s"),
                Backward("s"),
                Observe("x"),
            ]
        ),
        "expected error RuntimeError: Trying to backward through the graph a second time",
    ),
    "is_leaf_inverted": (
        Program([Leaf("x", [1.0], requires_grad=True), Observe("x")]),
        "x: is_leaf differs: expected True, got False",
    ),
    "warning_dropped": (
        Program(
            [
                Leaf("x", [1.0], requires_grad=True),
                Op("y", "mul", [Ref("x"), 3.0]),
                Observe("y"),
                Observe("x"),
            ]
        ),
        "expected warning UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor",
    ),
    "mean_off": (
        Program([Leaf("x", [1.0, 2.0], requires_grad=True), Op("y", "mean", [Ref("x")]), Observe("y")]),
        "y: value 0 differs: expected 1.5, got 1.5015",
    ),
    "sum_float64": (
        Program([Leaf("x", [1.0, 2.0], requires_grad=True), Op("y", "sum", [Ref("x")]), Observe("y")]),
        "y: dtype differs: expected 'float32', got 'float64'",
    ),
    "neg_as_mul": (
        Program([Leaf("x", [1.0, 2.0], requires_grad=True), Op("y", "neg", [Ref("x")]), Observe("y")]),
        "y: grad_fn differs: expected 'NegBackward0', got 'MulBackward0'",
    ),
    "backward_error_reworded": (
        Program([Leaf("x", [1.0, 2.0]), Op("s", "sum", [Ref("x")]), Backward("s")]),
        f"message differs: expected 'element 0 of tensors does not require grad and does not have a "
        f"grad_fn', got '{REWORDED}element 0",
    ),
    "everything_contiguous": (
        Program([Leaf("x", [[1.0, 2.0], [3.0, 4.0]]), Op("y", "t", [Ref("x")]), ObserveLayout("y")]),
        "contiguous differs: expected False, got True",
    ),
    "parameters_sorted": (
        Program([Module("lin", "Linear", [2, 1], params={"weight": [[0.5, -1.0]], "bias": [0.25]}),
                 ObserveModule("lin")]),
        "parameters differs: expected [['weight', [1, 2], True], ['bias', [1], True]], got [['bias'",
    ),
    "sigmoid_missing": (
        Program([Leaf("x", [1.0, 2.0], requires_grad=True), Op("y", "sigmoid", [Ref("x")]), Observe("y")]),
        "the backend lacks torch.sigmoid (AttributeError: module 'torch' has no attribute 'sigmoid')",
    ),
    "pow_segfault": (
        Program([Leaf("x", [1.0, 2.0], requires_grad=True), Op("y", "pow", [Ref("x"), 2]), Observe("y")]),
        "backend process died (SIGSEGV) at step 1",
    ),
}
# faults whose class programs() cannot show (it draws no step observing it): the conformance test
# that draws such steps, its rule, and the step kind programs() never draws
UNREACHABLE = {
    "everything_contiguous": ("conformance/test_tensors.py", "TEN-003", "observe_layout"),
    "parameters_sorted": ("conformance/test_modules.py", "MOD-002", "observe_module"),
}
UNSUPPORTED = [fault for fault, kind in FAULT_CLASSES.items() if kind == "unsupported"]


@pytest.fixture(scope="module")
def isolated() -> Iterator[dict[str, Isolated]]:
    """The crashing faults, each in a worker process of its own (restarted after each crash)."""
    workers = {fault: Isolated(f"fault:{fault}") for fault in sorted(CRASHING)}
    yield workers
    for worker in workers.values():
        worker.close()


def backend_of(fault: str, isolated: dict[str, Isolated]) -> Backend:
    """The fault as a backend: in this process, or in its worker for a fault that crashes."""
    return isolated[fault] if fault in CRASHING else load_backend(f"fault:{fault}")


def shows(program: Program, backend: Backend, kind: str) -> bool:
    """Whether checking ``program`` on ``backend`` finds a divergence of class ``kind`` (whether
    the program then failed or was only unsupported)."""
    with recording() as log:
        try:
            check(program, backend, TORCH)
        except DivergenceError:
            pass
    return log.classes[kind] > 0


def test_every_planted_fault_has_an_exposing_program() -> None:
    assert set(EXPOSING) == set(FAULTS) == set(FAULT_CLASSES)


def test_every_class_of_divergence_has_a_planted_fault() -> None:
    assert sorted(FAULT_CLASSES.values()) == sorted(CLASSES)


def namespaces() -> dict[str, dict]:
    """What the faults patch: torch's namespaces and classes, attribute by attribute."""
    torch = TORCH.module
    owners = {"torch": torch, "torch.autograd": torch.autograd, "Tensor": torch.Tensor,
              "TensorBase": torch._C.TensorBase, "Module": torch.nn.Module}
    return {name: dict(vars(owner)) for name, owner in owners.items()}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_restores_torch_when_its_context_ends(fault: str) -> None:
    """Entered and left (nothing runs inside, so the crashing fault is safe here too), even by an
    exception, a fault leaves torch exactly as it found it."""
    before = namespaces()
    with FAULTS[fault]():
        assert namespaces() != before  # it does patch something
    assert namespaces() == before
    with pytest.raises(KeyError), FAULTS[fault]():
        raise KeyError(fault)
    assert namespaces() == before


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_torch_agrees_with_torch_on_generated_programs(program: Program) -> None:
    check(program, TORCH)


@pytest.mark.parametrize("fault", sorted(EXPOSING))
def test_exposing_program_passes_on_torch(fault: str) -> None:
    check(EXPOSING[fault][0], TORCH)


@pytest.mark.parametrize("fault", sorted(set(EXPOSING) - set(UNSUPPORTED)))
def test_planted_fault_is_caught_with_a_repro(fault: str, isolated: dict[str, Isolated]) -> None:
    program, reason = EXPOSING[fault]
    before = programs_checked()
    with pytest.raises(DivergenceError) as caught:
        check(program, backend_of(fault, isolated))
    assert programs_checked() == before + 1
    error = caught.value
    assert reason in error.divergence.reason
    assert error.divergence.kind == FAULT_CLASSES[fault]
    assert error.program is program
    assert error.ref_trace.backend == "torch" and error.test_trace.backend == f"fault:{fault}"
    text = str(error)
    assert text.startswith(error.divergence.describe())
    assert "\n\nRepro (torch script):\nimport warnings" in text
    others = [d for d in error.divergences if d is not error.divergence]
    assert all(f"step {d.step}, {d.kind}: {d.reason}" in text for d in others)  # every divergence listed
    report = json.loads(json.dumps(error.to_dict()))
    assert report["divergence"]["reason"] == error.divergence.reason
    assert [d["reason"] for d in report["divergences"]] == [d.reason for d in error.divergences]
    assert report["classes"] == error.classes() and report["program"] == program.to_dict()


@pytest.mark.parametrize("fault", UNSUPPORTED)
def test_a_name_the_backend_lacks_is_unsupported_not_failed(fault: str) -> None:
    """A program calling a name the backend lacks does not fail: it is unsupported, the name and
    the reason recorded."""
    program, reason = EXPOSING[fault]
    with recording() as log:
        check(program, load_backend(f"fault:{fault}"))  # no DivergenceError
    assert dict(log.outcomes) == {"unsupported": 1} and dict(log.classes) == {"unsupported": 1}
    [(name, programs_needing)] = log.lacks.items()
    assert programs_needing == 1 and name in reason
    test_trace = load_backend(f"fault:{fault}").trace(program)
    [error] = [event for event in test_trace.events if event["kind"] == "error"]
    assert error["unsupported"] == name and error["message"] in reason


SEARCHED = sorted(set(FAULTS) - set(UNREACHABLE) - CRASHING)


@pytest.mark.parametrize("fault", SEARCHED)
def test_generated_programs_find_the_planted_fault(fault: str) -> None:
    """Hypothesis finds (and shrinks) a program showing the fault's class of divergence; the
    shrunk program is small."""
    backend, kind = load_backend(f"fault:{fault}"), FAULT_CLASSES[fault]
    found = find(programs(), lambda p: shows(p, backend, kind), settings=SEARCH)
    check(found, TORCH)  # the reference agrees with itself on it: the divergence is the fault's
    assert shows(found, backend, kind)
    assert len(found.steps) <= 20


@pytest.mark.parametrize("fault", sorted(CRASHING))
def test_generated_programs_find_the_crash_in_a_worker_process(
    fault: str, isolated: dict[str, Isolated]
) -> None:
    """Hypothesis finds a program that kills the backend's process (which restarts); cut after
    the step that crashed, the program still does, and the crash is its one divergence."""
    worker = isolated[fault]
    found = find(programs(), lambda p: shows(p, worker, "crash"), settings=CRASH_SEARCH)
    check(found, TORCH)
    [crash] = worker.trace(found).events
    assert crash["kind"] == "crash" and "SIGSEGV" in crash["reason"]
    cut = Program(found.steps[: crash["step"] + 1])
    with pytest.raises(DivergenceError) as caught:
        check(cut, worker, TORCH)
    assert caught.value.classes() == {"crash": 1} and caught.value.divergence.step == len(cut.steps) - 1
    assert worker.restarts >= 2


@pytest.mark.parametrize("fault", sorted(UNREACHABLE))
def test_programs_never_draw_the_steps_that_show_the_fault(fault: str) -> None:
    """Why the generic search is not run for this fault: programs() draws no step observing its
    class. Should it ever, move the fault to the search above."""
    kind = UNREACHABLE[fault][2]

    @settings(max_examples=300, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def never_drawn(program: Program) -> None:
        assert kind not in {step.kind for step in program.steps}

    never_drawn()


@pytest.mark.parametrize("fault", sorted(UNREACHABLE))
def test_the_conformance_family_finds_the_fault(fault: str, tmp_path: Path) -> None:
    """The conformance test that draws the steps the generic search lacks catches the fault: its
    rule fails with divergences of the fault's class."""
    path, rule, _ = UNREACHABLE[fault]
    results = tmp_path / "results.json"
    command = [sys.executable, "-m", "pytest", path, "--rule", rule, "--backend", f"fault:{fault}",
               "--hypothesis-profile", "planted", "--results", str(results), "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    document = json.loads(results.read_text(encoding="utf-8"))
    [entry] = [r for r in document["rules"] if r["id"] == rule]
    assert entry["status"] == "failed"
    assert entry["classes"].get(FAULT_CLASSES[fault], 0) >= 1, entry["classes"]


def test_default_reference_is_torch_on_a_device_torch_can_use() -> None:
    assert default_reference("cpu").name == "torch" and default_reference("cpu").device == "cpu"
    expected = "cuda" if TORCH.module.cuda.is_available() else "cpu"
    assert default_reference("cuda").device == expected
