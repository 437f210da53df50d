"""Custom autograd.Function (oracle/rules/functions.py): Function subclasses generated from op
combinations (forward and backward as op lists), applied, backpropagated once and twice."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_ops import OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    FUNCTION_STYLES,
    ApplyFunction,
    Backward,
    CallGradFn,
    Function,
    Grad,
    ObserveGraph,
    ObserveLayout,
    Op,
    Program,
    Ref,
    RegisterHook,
)

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# outputs of a Function that are not its tensors ("again": its first output a second time)
OTHER_OUTPUTS = (3, 2.5, None, "bar", "again")
UNARY = ("exp", "sin", "tanh", "sigmoid", "square", "neg")
BINARY = ("mul", "add", "sub")


def body_op(draw: Any, out: str, names: list[str]) -> dict:
    """An elementwise op over ``names`` (keeps the shape)."""
    op = draw(st.sampled_from(UNARY + BINARY))
    a = Ref(draw(st.sampled_from(names)))
    if op in UNARY:
        return {"out": out, "op": op, "args": [a], "kwargs": {}}
    other: Any = draw(st.sampled_from((2.0, -1.0)))
    if draw(st.booleans()):
        other = Ref(draw(st.sampled_from(names)))
    return {"out": out, "op": op, "args": [a, other], "kwargs": {}}


def outside_view(draw: Any, p: OpProgram, base: str, shape: tuple[int, ...]) -> str:
    """A view of ``base`` keeping its shape (view, t, [...], narrow), as a Function's input (FN-003)."""
    views = {"view": [list(shape)], "t": [], "__getitem__": [Ellipsis]}
    if shape:
        views["narrow"] = [0, 0, 2]
    op = draw(st.sampled_from(sorted(views)))
    return p.op(op, Ref(base), *views[op])


@st.composite
def functions(
    draw: Any, dirty: bool = False, extras: bool = False, double: bool | None = None, defs: bool = False
) -> Program:
    """A Function of one or two inputs: forward ops (an in-place one marked dirty with ``dirty``),
    saved tensors, maybe a second non-differentiable or unused output, a backward from op
    combinations of the gradient and saved tensors; applied, graph observed, then backward twice
    or a double backward (``double``: always/never/either). With ``extras``, something is saved
    and there is a second output. With ``double=True``, the input ``i0`` (which requires grad) is
    saved and the backward's last op combines it with what came before, the first input's gradient
    mostly being that op's result, so that it is differentiable; the loss is ``o``'s or ``o * o``'s
    sum, the latter giving backward a gradient that requires grad, which is what makes torch's
    @once_differentiable error (and not "does not require grad") end the double backward."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((), (2,), (2, 2))))
    dtype = draw(st.sampled_from(("float32", "float64")))
    n = draw(st.integers(1, 2))
    inputs = [p.leaf(shape, dtype, grad=i == 0 or draw(st.booleans())) for i in range(n)]
    viewed = False
    if dirty:  # an in-place edit of a leaf that requires grad is refused: apply to a copy
        inputs[0] = p.op("mul", Ref(inputs[0]), 1.0)
        base = inputs[0]
        viewed = draw(st.booleans())  # or to a view of the copy, made outside the Function
        if viewed:
            inputs[0] = outside_view(draw, p, base, shape)
    names = [f"i{k}" for k in range(n)]
    forward = []
    if dirty:
        forward.append({"out": "f0", "op": draw(st.sampled_from(("mul_", "add_"))), "args": [Ref("i0"), 2.0]})
        names.append("f0")
    for _ in range(draw(st.integers(0 if dirty else 1, 3))):
        forward.append(body_op(draw, f"f{len(forward)}", names))
        names.append(forward[-1]["out"])
    outputs: list = ["f0" if dirty else names[-1]]
    kinds = ("non_differentiable", "unused") if extras else (None, "non_differentiable", "unused")
    extra = None if dirty and not viewed else draw(st.sampled_from(kinds))  # a view: torch's error
    if extra:
        forward.append(body_op(draw, "extra", names))
        outputs.append("extra")
    saves = draw(st.lists(st.sampled_from(names), min_size=int(extras), max_size=2, unique=True))
    chained = double is True
    if chained and "i0" not in saves:
        saves.append("i0")
    backward = []
    grad_names = ["g0", *saves]
    ops = draw(st.integers(1, 3))
    for k in range(ops):
        if chained and k == ops - 1:  # what came before, combined with the saved input i0
            args = [Ref(grad_names[-1]), Ref("i0")]
            backward.append({"out": f"b{k}", "op": draw(st.sampled_from(BINARY)), "args": args, "kwargs": {}})
        else:
            backward.append(body_op(draw, f"b{k}", grad_names))
        grad_names.append(f"b{k}")
    choices = (grad_names[-1],) * (3 if chained else 1) + ("g0", None)
    grads = [draw(st.sampled_from(choices)) for _ in range(n)]
    fn = Function(
        "Fn",
        n,
        forward,
        outputs,
        backward,
        grads,
        saves=saves,
        non_differentiable=["extra"] if extra == "non_differentiable" else [],
        dirty=["f0"] if dirty else [],
        materialize_grads=draw(st.sampled_from((None, True, False))),
        once_differentiable=draw(st.booleans()),
    )
    outs = ["o", *(["o2"] if extra else [])]
    applied = ApplyFunction(outs, "Fn", [Ref(i) for i in inputs])
    p.steps += [fn, applied]
    p.names += outs
    p.steps.append(ObserveGraph("o"))
    if dirty:
        p.steps.append(ObserveLayout(inputs[0]))
    if viewed:
        p.steps.append(ObserveGraph(base))
    squared = chained and draw(st.sampled_from((True, True, False)))
    loss = p.op("sum", Ref(p.op("mul", Ref("o"), Ref("o")) if squared else "o"))
    if draw(st.booleans()) if double is None else double:
        p.steps.append(Grad(["gx"], [loss], [p.names[0]], create_graph=True))
        p.names.append("gx")
        p.steps.append(Backward(p.op("sum", Ref("gx"))))
    else:
        p.steps += [Backward(loss), Backward(loss)]
    if not (dirty or extras or double):  # drawn last, so that the other rules' programs stay as they were
        other_outputs(draw, fn, applied, p)
    if extras:  # FN-002: None for the non-differentiable outputs' gradients, or zeros
        fn.materialize_non_diff_grads = draw(st.sampled_from((None, False, True)))
    if defs:  # FN-005: how the methods are defined, and the legacy call of an instance
        fn.style = draw(st.sampled_from(FUNCTION_STYLES))
        applied.instance = draw(st.integers(0, 3)) == 0
    if chained and extra == "unused" and draw(st.booleans()):
        save_second_output(draw, fn)
    return p.observed()


def save_second_output(draw: Any, fn: Function) -> None:
    """FN-004: the second output saved too; the backward's result plus (or minus) the first output's
    gradient times it, so that the double backward reaches the Function's node through that saved
    output, as its second output (a gradient taken for the first would change the result)."""
    fn.saves.append("extra")
    last, k = fn.backward[-1]["out"], len(fn.backward)
    fn.backward += [
        {"out": f"b{k}", "op": "mul", "args": [Ref("g0"), Ref("extra")], "kwargs": {}},
        {"out": f"b{k + 1}", "op": draw(st.sampled_from(("add", "sub"))), "args": [Ref(last), Ref(f"b{k}")],
         "kwargs": {}},
    ]
    fn.grads = [f"b{k + 1}" if g == last else g for g in fn.grads]


def other_outputs(draw: Any, fn: Function, applied: ApplyFunction, p: OpProgram) -> None:
    """FN-001's numbers, strings and None among a Function's outputs, or its first output again,
    after the first (not observed: no tensors); maybe a pre-hook on the node, which gets one
    gradient per output."""
    others = draw(st.lists(st.sampled_from(OTHER_OUTPUTS), max_size=3))
    fn.outputs[1:1] = [fn.outputs[0] if o == "again" else {"const": o} for o in others]
    applied.outs[1:1] = [f"c{k}" for k in range(len(others))]
    if others and draw(st.booleans()):
        p.steps.insert(p.steps.index(applied) + 1, RegisterHook("fn_pre", "o", on="grad_fn_pre"))


@pytest.mark.rule("FN-001")
@settings(deadline=None)
@given(program=functions())
def test_function_node_and_gradients(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("FN-002")
@settings(deadline=None)
@given(program=functions(extras=True))
def test_saved_and_non_differentiable(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("FN-003")
@settings(deadline=None)
@given(program=functions(dirty=True))
def test_mark_dirty(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("FN-004")
@settings(deadline=None)
@given(program=functions(double=True))
def test_double_backward_through_a_function(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("FN-005")
@settings(deadline=None)
@given(program=functions(defs=True))
def test_function_styles_and_legacy_calls(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def grad_fn_calls(draw: Any) -> Program:
    """A grad_fn called as a function: of a unary or binary op, of var_mean (a node of two
    outputs) or of a custom Function, maybe after a backward freed it, with zero to three
    arguments, each a gradient (of the output's shape: what a wrong shape does is each formula's
    own), None or a number."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((), (2,), (2, 2))))
    x = p.leaf(shape, "float32", grad=True)
    w = p.leaf(shape, "float32", grad=draw(st.booleans()))
    kind = draw(st.sampled_from(("unary", "binary", "var_mean", "function")))
    if kind == "var_mean" and shape:  # one node for both results
        p.steps.append(Op("parts", "var_mean", [Ref(x)]))  # a tuple: not observed
        t, piece = p.op("__getitem__", Ref("parts"), draw(st.sampled_from((0, 1)))), ()
    elif kind == "function":
        p.steps += [Function("Fn", 1, [body_op(draw, "f0", ["i0"])], ["f0"], [], ["g0"]),
                    ApplyFunction(["o"], "Fn", [Ref(x)])]
        t, piece = "o", shape
        p.names.append(t)
    else:
        spec = body_op(draw, "", [x, w])
        t, piece = p.op(spec["op"], *spec["args"]), shape
    before = draw(st.booleans())
    grads: list = []
    expected = 2 if kind == "var_mean" and shape else 1  # var_mean's node has two outputs
    for _ in range(draw(st.sampled_from((expected, expected, 0, expected + 1)))):
        arg = draw(st.sampled_from(("tensor", "tensor", "none", "number")))
        if arg == "tensor":
            grads.append(Ref(p.leaf(piece, "float32", grad=False)))
        else:
            grads.append(None if arg == "none" else 1.0)
    if before:
        p.steps.append(Backward(p.op("sum", Ref(t))))
    p.steps.append(CallGradFn("called", t, grads))
    return p.observed()


@pytest.mark.rule("FN-006")
@settings(deadline=None)
@given(program=grad_fn_calls())
def test_grad_fn_called_as_a_function(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def undefined_gradients(draw: Any) -> Program:
    """A leaf through a custom Function returning a clone of its input (set_materialize_grads
    drawn, backward returning its gradient), then torch._C._functions.UndefinedGrad()'s clone of
    the output, whose backward gives the Function an undefined gradient: None under
    set_materialize_grads(False), zeros otherwise."""
    p = OpProgram(draw)
    x = p.leaf((2,), "float64", grad=True)
    body = [{"out": "f0", "op": "clone", "args": [Ref("i0")], "kwargs": {}}]
    materialize = draw(st.sampled_from((False, None, True)))
    p.steps += [Function("Fn", 1, body, ["f0"], [], ["g0"], materialize_grads=materialize),
                ApplyFunction(["o"], "Fn", [Ref(x)]), Op("u", "_C._functions.UndefinedGrad")]
    undefined = p.op("_C._functions.UndefinedGrad.__call__", Ref("u"), Ref("o"))
    p.steps.append(Backward(p.op("sum", Ref(undefined))))
    return p.observed()


@pytest.mark.rule("FN-002")
@examples(0.05)
@given(program=undefined_gradients())
def test_undefined_gradients(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
