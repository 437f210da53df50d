"""Self-tests of the step kinds of the op/tensor/grad-mode families: exact JSON round trips,
validation, the interpreter's events on torch, and rendered scripts that print the reference
trace (one torch start-up for all)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conformance.test_errors import bad_backwards, refused_flags
from conformance.test_functions import functions
from conformance.test_grad_modes import decorated, modes
from conformance.test_ops import indexing, inplace_ops, reductions
from conformance.test_tensors import numpy_sharing, views
from oracle.interpreter import run
from oracle.program import (
    DecoratedOp,
    DType,
    ExitMode,
    GradMode,
    Leaf,
    NumpyAdd,
    NumpyArray,
    Observe,
    ObserveArray,
    ObserveLayout,
    Op,
    Program,
    Ref,
)
from oracle.reference import reference
from oracle.render import render
from oracle.trace import normalise
from tests.oracle.test_render import expected_output, run_script

TORCH = reference()

EVERY_KIND = Program(
    [
        Leaf("x", [[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
        Op("y", "t", [Ref("x")]),
        ObserveLayout("y"),
        Op("c", "tensor", [[1, 2]], {"dtype": DType("float64")}),
        Op("m", "max", [Ref("x"), 1]),
        Op("mi", "__getitem__", [Ref("m"), 1]),
        NumpyArray("a", [1.0, float("nan")], "float32"),
        Op("f", "from_numpy", [Ref("a")]),
        NumpyAdd("a", 2.0),
        ObserveArray("a"),
        GradMode("g", "inference_mode"),
        Op("z", "mul", [Ref("x"), 2.0]),
        ExitMode("g"),
        GradMode("n", "set_grad_enabled", False),
        Observe("z"),
        Observe("f"),
        Observe("mi"),
        Observe("c"),
    ]
)


def test_new_kinds_round_trip_exactly() -> None:
    text = EVERY_KIND.to_json()
    assert Program.from_json(text).to_json() == text  # (NaN data: compared as JSON)
    assert Program.from_json(text).steps[3] == EVERY_KIND.steps[3]
    assert '{"torch_dtype": "float64"}' in EVERY_KIND.to_json()


def test_new_kinds_validate_their_data() -> None:
    with pytest.raises(ValueError):
        DType("complex64")
    with pytest.raises(ValueError):
        NumpyArray("a", [1], "complex64")
    with pytest.raises(ValueError):
        GradMode("g", "no_grad", True)  # no_grad takes no flag
    with pytest.raises(ValueError):
        GradMode("g", "set_grad_enabled")  # set_grad_enabled needs one
    with pytest.raises(ValueError):
        GradMode("g", "fast_mode")
    with pytest.raises(ValueError):
        DecoratedOp("d", "set_grad_enabled", "exp", [Ref("x")], bare=True)  # needs its flag


def test_events_of_new_kinds_on_torch() -> None:
    events = run(EVERY_KIND, TORCH).events
    layout = next(e for e in events if e["kind"] == "layout")
    assert (layout["stride"], layout["contiguous"], layout["version"]) == ([1, 2], False, 0)
    array = next(e for e in events if e["kind"] == "array")
    assert array["data"] == [3.0, "nan"] and array["dtype"] == "float32"
    f = next(e for e in events if e["kind"] == "value" and e["name"] == "f")
    assert f["value"]["data"] == [3.0, "nan"]  # from_numpy shares the array's memory
    modes_seen = [e for e in events if e["kind"] == "grad_mode"]
    assert [m["enabled"] for m in modes_seen] == [False, True, False]
    assert [m.get("inference") for m in modes_seen] == [True, False, None]
    assert not any(e["kind"] == "error" for e in events)


def test_open_grad_modes_are_left_at_the_end_of_a_run() -> None:
    torch = TORCH.module
    run(Program([GradMode("g", "no_grad"), GradMode("i", "inference_mode")]), TORCH)
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_rendered_script_prints_the_reference_trace() -> None:
    done = run_script(render(EVERY_KIND))
    assert done.returncode == 0, done.stderr
    assert normalise(done.stdout) == expected_output(EVERY_KIND)[0]


GENERATED = st.one_of(
    reductions(), indexing(), inplace_ops(), views(), numpy_sharing(), modes(("no_grad", "inference_mode")),
    bad_backwards(), refused_flags(), functions(), functions(dirty=True), decorated(),
)


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate])
@given(st.lists(GENERATED, min_size=8, max_size=8))
def test_rendered_generated_programs_reproduce_the_reference(batch: list[Program]) -> None:
    """Generated programs of these families in one script print what the interpreter records."""
    kept = [p for p in batch if all(e["kind"] != "skipped" for e in run(p, TORCH).events)]
    if not kept:
        return
    expected = [expected_output(p)[0] for p in kept]
    done = run_script("\nprint('=====')\n".join(render(p) for p in kept))
    assert done.returncode == 0, done.stderr
    assert normalise(done.stdout).split("=====\n") == expected


def test_rendered_script_leaves_open_grad_modes() -> None:
    """A script whose program leaves no_grad open does not disable grad for the next script."""
    left_open = Program([GradMode("g", "no_grad"), GradMode("s", "set_grad_enabled", False)])
    after = Program([Leaf("x", [1.0], requires_grad=True), Op("y", "mul", [Ref("x"), 2.0]), Observe("y")])
    done = run_script(render(left_open) + "\n" + render(after))
    assert done.returncode == 0, done.stderr
    assert "requires_grad=True, grad_fn=MulBackward0" in done.stdout


DECORATED_GENERATORS = Program(
    [
        Leaf("x", [1.0, 2.0], requires_grad=True),
        GradMode("outer", "no_grad"),
        DecoratedOp("d", "enable_grad", "mul", [Ref("x"), 2.0], generator=True),
        ExitMode("outer"),
        DecoratedOp("i", "inference_mode", "exp", [Ref("x")], bare=True, generator=True),
        Observe("d"),
        Observe("i"),
    ]
)


def test_decorated_generators_record_the_mode_inside_and_between() -> None:
    """A decorated generator's op runs in the decorator's mode; the mode is recorded inside it,
    between its resumptions and after it was closed; its script prints the same."""
    events = run(DECORATED_GENERATORS, TORCH).events
    modes = [(e["enabled"], e.get("inference")) for e in events if e["kind"] == "grad_mode"]
    inside_no_grad = [(False, None), (True, None), (False, None), (False, None)]  # in, inside, between, shut
    assert modes == inside_no_grad + [(True, None), (False, True), (True, False), (True, False)]
    d = next(e for e in events if e["kind"] == "value" and e["name"] == "d")
    assert d["value"]["grad_fn"] == "MulBackward0"
    assert Program.from_json(DECORATED_GENERATORS.to_json()) == DECORATED_GENERATORS
    done = run_script(render(DECORATED_GENERATORS))
    assert done.returncode == 0, done.stderr
    assert normalise(done.stdout) == expected_output(DECORATED_GENERATORS)[0]
