"""Saved tensors (oracle/rules/saved_tensors.py): op chains run inside saved_tensors_hooks (nested,
left midway, with hooks that log, double what they pack, unpack a number or write in place),
save_on_cpu and disable_saved_tensors_hooks, then backward (twice, maybe); grad_fn._saved_*
observed before and after backward for ops of many kinds; graphs whose nodes saved their outputs
freed by reference counting, and saved inputs detach_()ed before or after they were saved."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_functions import body_op
from conformance.test_ops import OpProgram
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    PACKINGS,
    ApplyFunction,
    Backward,
    ExitMode,
    Function,
    Observe,
    ObserveFreed,
    ObserveSaved,
    Op,
    Program,
    Ref,
    RequiresGrad,
    SavedHooks,
)

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): what
# the pack/unpack pair of saved_tensors_hooks does (a step's packing, as if an argument).
COVERAGE: dict[str, coverage.Targets] = {
    "SAVED-001": coverage.Targets(coverage.clause(
        "autograd.graph.saved_tensors_hooks", "packing",
        {packing: (lambda c, p=packing: c.arguments["packing"] == p) for packing in PACKINGS})),
}


@st.composite
def hooked_chains(draw: Any) -> Program:
    """Two float64 leaves, then one to four elementwise ops, some inside saved-tensor contexts
    (saved_tensors_hooks with a drawn packing, maybe nested, save_on_cpu, or a disabled block
    refusing hooks), a sum, its saved tensors observed, backward (retaining or not) and a second
    backward, the leaves' gradients observed after each."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((), (2,), (2, 2))))
    names = [p.leaf(shape, "float64", grad=draw(st.integers(0, 3)) > 0) for _ in range(2)]
    leaves = list(names)
    open_contexts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        move = draw(st.sampled_from(("op", "op", "enter", "exit")))
        if move == "enter" and len(open_contexts) < 2:
            context = draw(st.sampled_from(("saved_tensors_hooks",) * 4 + ("save_on_cpu", "disable")))
            name = p.fresh("h")
            if context == "disable":
                p.steps.append(SavedHooks(name, "disable_saved_tensors_hooks"))
                p.steps.append(SavedHooks(p.fresh("h"), packing="detach"))  # refused inside
            else:
                packing = draw(st.sampled_from(PACKINGS))
                p.steps.append(SavedHooks(name, context, packing))
            open_contexts.append(name)
        elif move == "exit" and open_contexts:
            p.steps.append(ExitMode(open_contexts.pop()))
        spec = body_op(draw, p.fresh("f"), names)
        p.steps.append(Op(**spec))
        names.append(spec["out"])
    loss = p.fresh("s")
    p.steps += [Op(loss, "sum", [Ref(names[-1])]), ObserveSaved(names[-1])]
    for name in reversed(open_contexts if draw(st.booleans()) else []):
        p.steps.append(ExitMode(name))
    p.steps += [Backward(loss, retain_graph=draw(st.booleans()) or None), *map(Observe, leaves)]
    p.steps += [ObserveSaved(names[-1]), Backward(loss), *map(Observe, leaves)]
    return Program(p.steps)


# ops whose nodes save tensors, numbers and sizes: (op, args from two (2, 2) leaves a and b)
SAVING_OPS: dict[str, Any] = {
    "unary": lambda a, b: (st.sampled_from(("exp", "log", "sqrt", "sin", "tanh", "sigmoid", "relu", "abs",
                                            "sgn", "neg", "square")), [a]),
    "binary": lambda a, b: (st.sampled_from(("mul", "div", "add", "sub", "pow", "maximum", "atan2", "hypot")),
                            [a, b]),
    "number": lambda a, b: (st.sampled_from(("mul", "div", "add", "pow", "__rpow__", "__rsub__")), [a, 2.0]),
    "ternary": lambda a, b: (st.sampled_from(("lerp", "addcmul")), [a, b, 0.5]),
    "reduction": lambda a, b: (st.sampled_from(("sum", "mean", "prod", "amax", "max")), [a]),
    "matrix": lambda a, b: (st.sampled_from(("mm", "matmul")), [a, b]),
    "dim": lambda a, b: (st.sampled_from(("cumsum", "softmax")), [a, 0]),
    "shape": lambda a, b: (st.sampled_from(("flip", "select")), [a, [0]]),
}


@st.composite
def saving_ops(draw: Any) -> Program:
    """Two (2, 2) float64 leaves (each requiring grad or not) and an op of a drawn kind on them, its
    grad_fn's saved values observed, then a backward (retaining or not) and the observation again."""
    p = OpProgram(draw)
    a = Ref(p.leaf((2, 2), "float64", grad=True))
    b = Ref(p.leaf((2, 2), "float64", grad=draw(st.booleans())))
    kind = draw(st.sampled_from(sorted(SAVING_OPS)))
    op_strategy, args = SAVING_OPS[kind](a, b)
    op = draw(op_strategy)
    if kind == "ternary" and op == "addcmul":
        args = [a, a, b]
    if kind == "reduction" and op in ("sum", "mean", "amax") and draw(st.booleans()):
        args = [a, draw(st.sampled_from((0, 1)))]
    if op == "select":
        args = [a, 0, 1]
    if op == "lerp":
        args = [a, b, draw(st.sampled_from((0.5, Ref(b.name))))]
    out = p.op(op, *args)
    loss = p.op("sum", Ref(out))
    retain = draw(st.booleans()) or None
    p.steps += [ObserveSaved(out), Backward(loss, retain_graph=retain), ObserveSaved(out)]
    return Program(p.steps)


@pytest.mark.rule("SAVED-001")
@settings(deadline=None)
@given(program=hooked_chains())
def test_saved_tensors_hooks(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("SAVED-002")
@settings(deadline=None)
@given(program=saving_ops())
def test_saved_attributes(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# var/std calls by the overload torch's parser picks: its node saves correction None unless a dim
# or unbiased is given (the dim overload's 1 or 0) or a correction is (as given)
SPREAD_CALLS: tuple[tuple[tuple, dict], ...] = (
    ((), {}), ((0,), {}), ((None,), {}), ((), {"unbiased": False}), ((), {"correction": None}),
    ((1,), {"correction": 0}), ((), {"dim": 0, "keepdim": True}),
)


@st.composite
def spread_calls(draw: Any) -> Program:
    """A (2, 3) float64 leaf, var or std of it called one of SPREAD_CALLS' ways, its saved values
    observed."""
    p = OpProgram(draw)
    a = Ref(p.leaf((2, 3), "float64", grad=True))
    rest, kwargs = draw(st.sampled_from(SPREAD_CALLS))
    out = p.op(draw(st.sampled_from(("var", "std"))), a, *rest, **kwargs)
    p.steps.append(ObserveSaved(out))
    return Program(p.steps)


@pytest.mark.rule("SAVED-002")
@examples(0.1)
@given(program=spread_calls())
def test_spread_saved_correction(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# calls whose nodes save a dim list or a norm's order: amax/amin keep the dims as given (() for
# none), a vector norm the order as given (an int stays an int) or its function's default
REDUCTION_CALLS: tuple[tuple[str, tuple, dict], ...] = (
    ("amax", (), {}), ("amin", (), {}), ("amax", ((1, 0),), {"keepdim": True}), ("amin", (1,), {}),
    ("norm", (), {}), ("norm", (3,), {}), ("norm", (None,), {}), ("norm", ("fro", 1), {}),
    ("norm", (1.0,), {"dim": 0, "keepdim": True}), ("linalg.vector_norm", (), {}),
    ("linalg.vector_norm", (1, 0), {}), ("linalg.vector_norm", (0.5,), {}), ("linalg.norm", (), {}),
    ("linalg.norm", (None, 1), {}), ("linalg.norm", (2, 0), {}),
)


@st.composite
def reduction_saves(draw: Any) -> Program:
    """A (2, 3) float64 leaf requiring grad, each of REDUCTION_CALLS on it and what its node saved
    observed."""
    p = OpProgram(draw)
    a = Ref(p.leaf((2, 3), "float64", grad=True))
    for op, args, kwargs in REDUCTION_CALLS:
        p.steps.append(ObserveSaved(p.op(op, a, *args, **kwargs)))
    return Program(p.steps)


@pytest.mark.rule("SAVED-002")
@examples(0.03)
@given(program=reduction_saves())
def test_reduction_saved_values(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# ops whose node saves its output: out of place, in place (on a view too) and a custom Function's
OUTPUT_SAVING = ("exp", "tanh", "sigmoid", "relu", "sqrt")
VIEWS = (("view", [4]), ("select", [0, 1]), ("__getitem__", [(slice(None), 0)]))
# ops whose node saves its input (sin, mul) or only its output (exp)
INPUT_SAVING = ("sin", "mul", "exp")


@st.composite
def saved_lifetimes(draw: Any) -> Program:
    """A (2, 2) float64 leaf requiring grad and a clone of it. Either an op saving its output
    (applied to the clone, in place on the clone or on a view of it, or a custom Function's that
    saves the output it returns), after which the names but the leaf are dropped with the cycle
    collector off and whether the op's node (the clone's, in place) was freed is observed; or an op
    saving its input (the clone or the leaf), which is detach_()ed after it (or before it, and made
    to require grad again), then what the node saved observed and a backward; or an op saving its
    output in place on a view of the clone, then the view or the clone written again and a
    backward (the error names the view's grad_fn while the view holds it, else the op's node)."""
    p = OpProgram(draw)
    a = p.leaf((2, 2), "float64", grad=True)
    b = p.op("clone", Ref(a))
    kinds = ("detach_", "out of place", "in place", "view", "function", "detach_", "view written")
    kind = draw(st.sampled_from(kinds))
    if kind == "detach_":
        source = draw(st.sampled_from((b, a, b)))
        before = draw(st.integers(0, 2)) == 2
        if before:
            p.op("detach_", Ref(source))
            p.steps.append(RequiresGrad(source))
        op = draw(st.sampled_from(INPUT_SAVING))
        out = p.op(op, *([Ref(source), Ref(source)] if op == "mul" else [Ref(source)]))
        if not before:
            p.op("detach_", Ref(source))
        p.steps += [ObserveSaved(out), Backward(p.op("sum", Ref(out))), Observe(a)]
        return Program(p.steps)
    op = draw(st.sampled_from(OUTPUT_SAVING))
    watch = b
    if kind == "view written":  # the error names the view's grad_fn while the view keeps it
        view, args = draw(st.sampled_from(VIEWS))
        v = p.op(view, Ref(b), *args)
        p.op(op + "_", Ref(v))
        p.op("mul_", Ref(draw(st.sampled_from((b, v)))), 2.0)
        p.steps += [Backward(p.op("sum", Ref(b))), Observe(a)]
        return Program(p.steps)
    if kind == "out of place":
        watch = p.op(op, Ref(b))
    elif kind == "in place":
        p.op(op + "_", Ref(b))
    elif kind == "view":
        view, args = draw(st.sampled_from(VIEWS))
        p.op(op + "_", Ref(p.op(view, Ref(b), *args)))
    else:
        body = [{"out": "f0", "op": op, "args": [Ref("i0")], "kwargs": {}}]
        backward = [{"out": "g", "op": "mul", "args": [Ref("g0"), Ref("f0")], "kwargs": {}}]
        p.steps += [Function("Fn", 1, body, ["f0"], backward, ["g"], saves=["f0"]),
                    ApplyFunction([watch := p.fresh("o")], "Fn", [Ref(b)])]
        p.names.append(watch)
    p.steps += [ObserveFreed(watch, [n for n in p.names if n != a]), Observe(a)]
    return Program(p.steps)


@pytest.mark.rule("SAVED-002")
@examples(0.3)
@given(program=saved_lifetimes())
def test_saved_lifetimes(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def hooks_enabled(draw: Any) -> Program:
    """torch._C._autograd._saved_tensors_hooks_is_enabled() read (as a tensor of the flag) before,
    inside one or two nested disable_saved_tensors_hooks blocks, and after leaving some."""
    p = OpProgram(draw)

    def read() -> None:
        flag = p.fresh("e")
        p.steps.append(Op(flag, "_C._autograd._saved_tensors_hooks_is_enabled"))
        p.op("tensor", Ref(flag))

    read()
    opened = [p.fresh("h") for _ in range(draw(st.integers(1, 2)))]
    for name in opened:
        p.steps.append(SavedHooks(name, "disable_saved_tensors_hooks"))
        read()
    for name in reversed(opened[len(opened) - draw(st.integers(0, len(opened))):]):
        p.steps.append(ExitMode(name))
        read()
    return p.observed()


@pytest.mark.rule("SAVED-001")
@examples(0.05)
@given(program=hooks_enabled())
def test_saved_tensors_hooks_enabled(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
