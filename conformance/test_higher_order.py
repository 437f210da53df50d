"""Higher-order gradients (oracle/rules/higher_order.py): create_graph chains, autograd.grad of
gradients, and the grad_fn graph of the double backward."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_ops import OpProgram, mixed_key
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Backward, Grad, Observe, ObserveGraph, Op, Program, Ref

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): the
# keyword arguments the rule names.
COVERAGE: dict[str, coverage.Targets] = {
    "HO-001": coverage.Targets(coverage.keywords("autograd.grad", only=("create_graph",))),
    "HO-003": coverage.Targets(coverage.keywords("Tensor.backward", only=("create_graph",))),
}

# ops with non-trivial second derivatives, and ones whose second derivative is zero or undefined
SMOOTH = ("exp", "sin", "cos", "tanh", "sigmoid", "log", "sqrt", "square", "softmax", "log_softmax", "prod")
# unary math ops (impl/_ops/unary_math.py), drawn together as one choice; those of a bounded
# domain see their argument mapped into it: exp(.) (and + 1 for acosh), or sigmoid(.) / 2 + 0.25
SMOOTH_MATH = ("tan", "atan", "sinh", "cosh", "asinh", "expm1", "exp2", "sinc", "deg2rad", "rad2deg")
SMOOTH_MATH += ("log1p", "log2", "log10", "rsqrt", "acosh", "asin", "acos", "atanh", "logit")
POSITIVE = ("log1p", "log2", "log10", "rsqrt", "acosh")
BINARY = ("mul", "div", "pow", "add", "sub", "matmul", "hypot", "logaddexp", "logaddexp2", "copysign")
BINARY += ("xlogy",)
TERNARY = ("lerp", "addcmul", "addcdiv")  # on three of the leaves (lerp's weight a tensor)


def smooth_chain(p: OpProgram, draw: Any, xs: list[str], shape: tuple[int, ...]) -> str:
    """A chain of one to three ops mixing the leaves (of ``shape``), now and then starting from
    an indexed write; returns the scalar it sums to."""
    current = indexed_write(p, draw, xs, shape) if draw(st.integers(0, 2)) == 0 else xs[0]
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from((*SMOOTH, *BINARY, *TERNARY, "relu", "abs", "unary math")))
        if op == "unary math":
            current = smooth_math(p, draw, current)
        elif op in TERNARY:
            current = p.op(op, Ref(current), *(Ref(draw(st.sampled_from(xs))) for _ in range(2)))
        elif op in BINARY:
            other: Any = Ref(draw(st.sampled_from(xs))) if op != "pow" else draw(st.sampled_from((2, 3, 0.5)))
            current = p.op(op, Ref(current), other)
        elif op in ("softmax", "log_softmax"):
            current = p.op(op, Ref(current), -1)
        else:
            current = p.op(op, Ref(current))
    return p.op("sum", Ref(current))


def smooth_math(p: OpProgram, draw: Any, current: str) -> str:
    """One op of SMOOTH_MATH on ``current`` (mapped into the op's domain first)."""
    op = draw(st.sampled_from(SMOOTH_MATH))
    if op in POSITIVE:
        current = p.op("exp", Ref(current))
        if op == "acosh":
            current = p.op("add", Ref(current), 1.0)
    elif op in ("asin", "acos", "atanh", "logit"):
        current = p.op("add", Ref(p.op("mul", Ref(p.op("sigmoid", Ref(current))), 0.5)), 0.25)
    return p.op(op, Ref(current))


def indexed_write(p: OpProgram, draw: Any, xs: list[str], shape: tuple[int, ...]) -> str:
    """The leaves stacked, then written through a key mixing basic and advanced items with a
    value computed from a leaf, so gradients of every order reach both through CopySlices and
    IndexPutBackward0; returns the written tensor."""
    base = p.op("stack", [Ref(xs[0]), Ref(xs[-1])])
    value = p.op("sum", Ref(p.op("mul", Ref(xs[-1]), Ref(xs[-1]))))
    key = mixed_key(draw, p, (2, *shape))
    p.steps.append(Op(f"w{len(p.names)}", "__setitem__", [Ref(base), key, Ref(value)]))
    return base


def leaves(p: OpProgram, draw: Any) -> tuple[list[str], tuple[int, ...]]:
    shape = draw(st.sampled_from(((), (2,), (3,))))
    dtype = draw(st.sampled_from(("float32", "float64")))
    xs = [p.leaf(shape, dtype, grad=True)]
    if draw(st.booleans()):
        xs.append(p.leaf(shape, dtype, grad=True))
    return xs, shape


@st.composite
def double_backward(draw: Any) -> Program:
    """grad(create_graph=True) of a chain, its graph observed, then the second derivatives by
    grad (without create_graph: they do not require grad) and by a backward through it."""
    p = OpProgram(draw)
    xs, shape = leaves(p, draw)
    loss = smooth_chain(p, draw, xs, shape)
    gs = [f"g{i}" for i in range(len(xs))]
    p.steps.append(Grad(gs, [loss], xs, create_graph=True))
    p.steps += [ObserveGraph(g) for g in gs]
    p.names += gs
    total = p.op("sum", Ref(gs[-1]))
    hs = [f"h{i}" for i in range(len(xs))]
    p.steps.append(Grad(hs, [total], xs, retain_graph=True, allow_unused=True))
    p.names += hs
    p.steps.append(Backward(total, inputs=draw(st.sampled_from((None, xs[:1])))))
    return p.observed()


@pytest.mark.rule("HO-001")
@settings(deadline=None)
@given(program=double_backward())
def test_double_backward(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def grad_chains(draw: Any) -> Program:
    """Gradients of gradients up to third order, the last with or without create_graph."""
    p = OpProgram(draw)
    xs, shape = leaves(p, draw)
    root = smooth_chain(p, draw, xs, shape)
    order = draw(st.integers(2, 3))
    for i in range(order):
        g = f"g{i}"
        p.steps.append(Grad([g], [root], [xs[0]], create_graph=i < order - 1 or draw(st.booleans()),
                            allow_unused=True, materialize_grads=True))
        p.names.append(g)
        root = p.op("sum", Ref(g))
    return p.observed()


@pytest.mark.rule("HO-002")
@settings(deadline=None)
@given(program=grad_chains())
def test_gradients_of_gradients(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def activation_chains(draw: Any, op: str) -> Program:
    """Third-order gradients through one activation whose double backward is an op of its own
    (TanhBackwardBackward0, SigmoidBackwardBackward0), of a leaf shifted off 0 (where those
    derivatives vanish), the incoming gradient weighted by the leaf."""
    p = OpProgram(draw)
    xs, _ = leaves(p, draw)
    y = p.op(op, Ref(p.op("add", Ref(xs[0]), 0.3)))
    root = p.op("sum", Ref(p.op("mul", Ref(y), Ref(xs[-1]))))
    for i in range(3):
        p.steps.append(Grad([f"g{i}"], [root], [xs[0]], create_graph=i < 2))
        p.names.append(f"g{i}")
        root = p.op("sum", Ref(p.op("mul", Ref(f"g{i}"), Ref(xs[-1]))))
    return p.observed()


@pytest.mark.rule("HO-002")
@pytest.mark.parametrize("op", ("tanh", "sigmoid"))
@examples(0.2)
@given(data=st.data())
def test_third_order_through_activations(
    op: str, data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(activation_chains(op), label="program"), backend, reference)


@st.composite
def backward_create_graph(draw: Any) -> Program:
    """backward(create_graph=True) (the .grad it leaves has a grad_fn), again (accumulating
    through the graph, as create_graph retains it), then autograd.grad of that gradient."""
    p = OpProgram(draw)
    xs, shape = leaves(p, draw)
    loss = smooth_chain(p, draw, xs, shape)
    for _ in range(draw(st.integers(1, 2))):
        p.steps.append(Backward(loss, create_graph=True))
        p.steps += [Observe(x) for x in xs]
    p.steps.append(Grad(["gx"], [loss], [xs[0]], create_graph=True))
    p.names.append("gx")
    p.steps.append(ObserveGraph("gx"))
    p.steps.append(Backward(p.op("sum", Ref("gx"))))
    return p.observed()


@pytest.mark.rule("HO-003")
@settings(deadline=None)
@given(program=backward_create_graph())
def test_backward_create_graph(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
