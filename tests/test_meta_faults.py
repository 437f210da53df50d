"""The oracle tests itself: torch agrees with torch, and every planted fault is caught.

For each fault of ``oracle.faults.FAULTS`` there is a hand-written program that exposes it and a
hypothesis search showing that ``oracle.strategies.programs()`` finds such a program unaided.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, find, given, settings

from oracle.backends import load_backend
from oracle.differential import DivergenceError, check, default_reference
from oracle.faults import FAULTS
from oracle.program import Action, Backward, Leaf, Observe, Op, Program, Ref, RegisterHook
from oracle.reference import reference
from oracle.stats import programs_checked
from oracle.strategies import programs

TORCH = reference()
# the search for a fault-exposing program: reproducible, stops at the first find, then shrinks
SEARCH = settings(
    max_examples=2000, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)

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
}


def diverges(program: Program, backend_spec: str) -> bool:
    try:
        check(program, load_backend(backend_spec), TORCH)
    except DivergenceError:
        return True
    return False


def test_every_planted_fault_has_an_exposing_program() -> None:
    assert set(EXPOSING) == set(FAULTS)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_torch_agrees_with_torch_on_generated_programs(program: Program) -> None:
    check(program, TORCH)


@pytest.mark.parametrize("fault", sorted(EXPOSING))
def test_exposing_program_passes_on_torch(fault: str) -> None:
    check(EXPOSING[fault][0], TORCH)


@pytest.mark.parametrize("fault", sorted(EXPOSING))
def test_planted_fault_is_caught_with_a_repro(fault: str) -> None:
    program, reason = EXPOSING[fault]
    before = programs_checked()
    with pytest.raises(DivergenceError) as caught:
        check(program, load_backend(f"fault:{fault}"))
    assert programs_checked() == before + 1
    error = caught.value
    assert reason in error.divergence.reason
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


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_generated_programs_find_the_planted_fault(fault: str) -> None:
    """Hypothesis finds (and shrinks) a program exposing the fault; the shrunk program is small."""
    found = find(
        programs(),
        lambda p: diverges(p, f"fault:{fault}"),
        settings=SEARCH,
    )
    check(found, TORCH)  # the reference agrees with itself on it: the divergence is the fault's
    assert diverges(found, f"fault:{fault}")
    assert len(found.steps) <= 20


def test_default_reference_is_torch_on_a_device_torch_can_use() -> None:
    assert default_reference("cpu").name == "torch" and default_reference("cpu").device == "cpu"
    expected = "cuda" if TORCH.module.cuda.is_available() else "cpu"
    assert default_reference("cuda").device == expected
