"""Self-tests of traces and of the interpreter that records them (on real torch, the spec)."""

from __future__ import annotations

import json
import math

import pytest

from oracle.interpreter import run
from oracle.program import (
    Action,
    Backward,
    Grad,
    Leaf,
    Observe,
    ObserveGraph,
    Op,
    Program,
    Ref,
    RegisterHook,
    RemoveHook,
    RetainGrad,
)
from oracle.reference import reference
from oracle.trace import Trace, describe, normalise

TORCH = reference()
NON_LEAF_GRAD_WARNING = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"


def seed_000_hooks() -> Program:
    """Seed 000: a two-layer sigmoid network with a hook on every intermediate tensor."""
    return Program(
        [
            Leaf("x", [[1.0]]),
            Leaf("y", [[1.0], [0.0]]),
            Leaf("w1", [[1.0], [2.0]], requires_grad=True),
            Leaf("w2", [[3.0, 4.0], [5.0, 6.0]], requires_grad=True),
            Op("z_1", "mm", [Ref("w1"), Ref("x")]),
            Op("y_1", "sigmoid", [Ref("z_1")]),
            Op("z_2", "mm", [Ref("w2"), Ref("y_1")]),
            Op("y_2", "sigmoid", [Ref("z_2")]),
            Op("d", "sub", [Ref("y_2"), Ref("y")]),
            Op("sq", "pow", [Ref("d"), 2]),
            Op("total", "sum", [Ref("sq")]),
            Op("loss", "mul", [Ref("total"), 0.5]),
            *[RegisterHook(f"h_{n}", n) for n in ("z_1", "y_1", "z_2", "y_2", "loss")],
            Backward("loss"),
        ]
    )


def test_hooks_are_logged_in_backward_order_with_the_gradient_they_saw() -> None:
    trace = run(seed_000_hooks(), TORCH)
    hooks = [e for e in trace.events if e["kind"] == "hook"]
    assert [e["hook"] for e in hooks] == ["h_loss", "h_y_2", "h_z_2", "h_y_1", "h_z_1"]
    assert hooks[0]["received"]["grad"][0]["data"] == [1.0]
    # the seed prints grads['z_1'] as tensor([[1.2243e-04], [7.8005e-05]])
    z_1 = hooks[-1]["received"]["grad"][0]
    assert z_1["shape"] == [2, 1] and z_1["dtype"] == "float32"
    assert [round(v, 8) for v in z_1["data"]] == pytest.approx([1.2243e-04, 7.8005e-05], rel=1e-4)


def test_observe_records_value_flags_and_grad_and_the_non_leaf_warning() -> None:
    program = Program(
        [
            Leaf("a", [1.0, 2.0], requires_grad=True),
            Op("b", "mul", [Ref("a"), Ref("a")]),
            Op("s", "sum", [Ref("b")]),
            Backward("s"),
            Observe("a"),
            Observe("b"),
        ]
    )
    events = run(program, TORCH).events
    assert [e["kind"] for e in events] == ["value", "grad", "value", "grad", "warning"]
    a, a_grad, b, b_grad, warning = events
    assert a["value"] == {
        "dtype": "float32",
        "shape": [2],
        "data": [1.0, 2.0],
        "is_leaf": True,
        "requires_grad": True,
        "grad_fn": None,
    }
    assert a_grad["value"]["data"] == [2.0, 4.0]  # d(a*a)/da = 2a
    assert b["value"]["grad_fn"] == "MulBackward0" and b["value"]["is_leaf"] is False
    assert b_grad["value"] is None
    assert warning["step"] == 5 and warning["category"] == "UserWarning"
    assert warning["message"].startswith(NON_LEAF_GRAD_WARNING)
    assert "Triggered internally" not in warning["message"]


def test_retain_grad_keeps_the_grad_and_silences_the_warning() -> None:
    program = Program(
        [
            Leaf("a", [3.0], requires_grad=True),
            Op("b", "exp", [Ref("a")]),
            RetainGrad("b"),
            Op("s", "sum", [Ref("b")]),
            Backward("s"),
            Observe("b"),
        ]
    )
    events = run(program, TORCH).events
    assert [e["kind"] for e in events] == ["value", "grad"]
    assert events[1]["value"]["data"] == [1.0]


def test_a_failing_step_is_recorded_and_the_program_goes_on() -> None:
    program = Program(
        [
            Leaf("a", [1.0, 2.0], requires_grad=True),
            Op("b", "mul", [Ref("a"), Ref("a")]),
            Op("s", "sum", [Ref("b")]),
            Backward("s"),
            Backward("s"),  # the graph was freed: torch raises
            Op("c", "matmul", [Ref("a"), Ref("missing_shape")]),  # unbound name: skipped
            Observe("a"),
        ]
    )
    events = run(program, TORCH).events
    assert [e["kind"] for e in events] == ["error", "skipped", "value", "grad"]
    error, skipped = events[0], events[1]
    assert error["step"] == 4 and error["type"] == "RuntimeError"
    assert error["message"].startswith("Trying to backward through the graph a second time")
    assert skipped == {"kind": "skipped", "step": 5, "name": "missing_shape"}
    assert events[3]["value"]["data"] == [2.0, 4.0]


def test_hook_actions_change_the_gradient_and_removed_hooks_stop_firing() -> None:
    program = Program(
        [
            Leaf("a", [1.0, -1.0], requires_grad=True),
            Op("b", "mul", [Ref("a"), 3.0]),
            RegisterHook("double", "b", action=Action("scale", 2.0)),
            RegisterHook("gone", "b"),
            RemoveHook("gone"),
            Op("s", "sum", [Ref("b")]),
            Backward("s"),
            Observe("a"),
        ]
    )
    events = run(program, TORCH).events
    assert [e.get("hook") for e in events if e["kind"] == "hook"] == ["double"]
    assert events[-1]["value"]["data"] == [6.0, 6.0]  # 3 * 2 from the hook


def test_hook_returning_a_wrong_shape_raises_torch_error_naming_the_hook() -> None:
    program = Program(
        [
            Leaf("a", [1.0, 2.0], requires_grad=True),
            Op("b", "sin", [Ref("a")]),
            RegisterHook("bad", "b", action=Action("wrong_shape")),
            Op("s", "sum", [Ref("b")]),
            Backward("s"),
        ]
    )
    error = run(program, TORCH).events[-1]
    assert error["kind"] == "error"
    assert error["message"] == "hook 'hook_bad' has changed the size of value"


def test_autograd_grad_results_are_recorded_as_values() -> None:
    program = Program(
        [
            Leaf("a", [2.0], requires_grad=True),
            Leaf("u", [5.0], requires_grad=True),
            Op("b", "pow", [Ref("a"), 3]),
            Grad(["ga", "gu"], ["b"], ["a", "u"], allow_unused=True, materialize_grads=True),
        ]
    )
    events = run(program, TORCH).events
    assert [(e["name"], e["value"]["data"]) for e in events] == [("ga", [12.0]), ("gu", [0.0])]


def test_describe_encodes_non_finite_values_as_strings() -> None:
    import torch

    desc = describe(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5]))
    assert desc["data"] == ["nan", "inf", "-inf", 1.5]
    assert describe(None) is None


def test_trace_json_round_trips_exactly_and_is_strict_json() -> None:
    program = Program([Leaf("a", [0.0, -1.0], requires_grad=True), Op("b", "log", [Ref("a")]), Observe("b")])
    trace = run(program, TORCH)
    assert trace.events[0]["value"]["data"] == ["-inf", "nan"]
    text = trace.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert Trace.from_json(text) == trace
    assert Trace.from_json(text).to_json() == text
    with pytest.raises(ValueError):
        Trace([{"kind": "value", "data": [math.nan]}]).to_json()


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("bad thing (Triggered internally at /pytorch/aten/src/x.cpp:12.)", "bad thing"),
        ("object at 0x7f3a2b1c0d90 is gone", "object at 0x? is gone"),
        ('File "/home/u/proj/mod.py:31" failed', 'File "<path>" failed'),
        ("See github.com/pytorch/pytorch/pull/30531 for more", None),
        ("shape '[2, 3]' is invalid for input of size 5", None),
    ],
)
def test_normalise_only_removes_machine_specific_parts(raw: str, expected: str | None) -> None:
    assert normalise(raw) == (raw if expected is None else expected)


def test_create_graph_warning_is_marked_as_once_per_process() -> None:
    program = Program(
        [
            Leaf("a", [1.0], requires_grad=True),
            Op("b", "mul", [Ref("a"), Ref("a")]),
            Backward("b", create_graph=True),
        ]
    )
    for _ in range(2):  # torch warns at most once per process: the first run may or may not show it
        events = run(program, TORCH).events
        assert all(e["kind"] == "warning" and e["once"] is True for e in events)
    assert events == []  # the second run never shows it


def test_interpreter_runs_without_torch_installed() -> None:
    """``replay`` runs programs where torch is missing: the interpreter, trace, compare and render
    modules must not import it (torch is blocked in a subprocess; the backend is impl)."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from oracle.backends import load_backend\n"
        "from oracle.compare import compare\n"
        "from oracle.interpreter import run\n"
        "from oracle.program import Leaf, Observe, Program\n"
        "from oracle.render import render\n"
        "program = Program([Leaf('x', [1.0, 2.0], requires_grad=True), Observe('x')])\n"
        "trace = run(program, load_backend('impl'))\n"
        "assert compare(trace, trace) is None and render(program)\n"
        "print(trace.events[0]['value']['data'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[1.0, 2.0]"


def test_graph_observation_follows_next_functions_and_shows_shared_nodes() -> None:
    program = Program(
        [
            Leaf("x", [1.0, 2.0], requires_grad=True),
            Leaf("c", [3.0, 4.0]),
            Op("m", "mul", [Ref("x"), Ref("c")]),
            Op("a", "add", [Ref("m"), Ref("x")]),
            Op("s", "sum", [Ref("a")]),
            ObserveGraph("s"),
            ObserveGraph("c"),
        ]
    )
    graph, leaf = run(program, TORCH).events
    # s = sum(x * c + x): the AccumulateGrad node of x is reached twice and listed once
    assert graph["graph"] == [
        {"node": "SumBackward0", "next": [[1, 0]]},
        {"node": "AddBackward0", "next": [[2, 0], [3, 0]]},
        {"node": "MulBackward0", "next": [[3, 0], [None, 0]]},
        {"node": "AccumulateGrad", "next": []},
    ]
    assert leaf == {"kind": "graph", "step": 6, "name": "c", "graph": None}


def test_values_of_storage_less_zero_tensors_are_observed_as_printed() -> None:
    """abs' double backward returns a zero tensor without storage: printing shows zeros."""
    program = Program(
        [
            Leaf("x", [-2.0, 1.0], requires_grad=True),
            Op("a", "abs", [Ref("x")]),
            Op("s", "sum", [Ref("a")]),
            Grad(["g"], ["s"], ["x"], create_graph=True),
            Op("gs", "sum", [Ref("g")]),
            Grad(["gg"], ["gs"], ["x"], allow_unused=True),
        ]
    )
    events = run(program, TORCH).events
    assert [e["kind"] for e in events] == ["value", "value"]
    assert events[1]["value"]["data"] == [0.0, 0.0]


def engine(**changes: object) -> object:
    """impl under the module name "engine", with names deleted (None) or replaced."""
    import types

    import impl

    module = types.ModuleType("engine")
    kept = {k: v for k, v in vars(impl).items() if k not in changes and not k.startswith("__")}
    module.__dict__.update(kept)
    module.__dict__.update({k: v for k, v in changes.items() if v is not None})
    return module


def test_a_name_the_backend_lacks_is_unsupported_named_as_torch_names_it() -> None:
    from oracle.backends import InProcess

    def total(input, dim=None):  # a sum without torch's keepdim keyword
        return input.sum() if dim is None else input.sum(dim)

    total.__name__ = total.__qualname__ = "sum"  # the keyword's error names the function so

    backend = InProcess("engine", engine(logaddexp=None, sum=total))
    program = Program(
        [
            Leaf("x", [1.0, 2.0], requires_grad=True),
            Op("y", "logaddexp", [Ref("x"), Ref("x")]),
            Op("s", "sum", [Ref("x")], {"keepdim": True}),
            ObserveGraph("x"),
        ]
    )
    events = run(program, backend).events
    assert [e.get("unsupported") for e in events if e["kind"] == "error"] == [
        "torch.logaddexp", "torch.sum(keepdim=)"]
    assert run(program, TORCH).events[-1]["kind"] == "graph"  # torch has all of it


def test_each_part_of_an_observation_is_read_on_its_own() -> None:
    """A tensor type without grad_fn and is_leaf still has its values, dtype and flags observed."""

    class Bare:
        dtype, shape, requires_grad = "float32", [2], False

        def tolist(self):
            return [1.0, 2.0]

    namespace = type("engine", (), {"Tensor": Bare, "__name__": "engine"})
    described = describe(Bare(), namespace)
    assert described == {
        "dtype": "float32", "shape": [2], "data": [1.0, 2.0], "requires_grad": False,
        "is_leaf": {"unsupported": "Tensor.is_leaf"}, "grad_fn": {"unsupported": "Tensor.grad_fn"},
    }


def test_the_backends_own_failures_are_errors_not_missing_names() -> None:
    """An AttributeError raised inside the backend's code is its behaviour; so is one about None."""
    from oracle.backends import InProcess
    from oracle.trace import lacked

    def broken_exp(input):
        return input.no_such_attribute  # the backend's own bug, raised in its code

    program = Program([Leaf("x", [1.0], requires_grad=True), Op("y", "exp", [Ref("x")])])
    [error] = run(program, InProcess("engine", engine(exp=broken_exp))).events
    assert error["type"] == "AttributeError" and "unsupported" not in error
    with pytest.raises(AttributeError) as raised:
        broken_exp(None)
    assert lacked(raised.value) is None
