"""Error and warning parity (oracle/rules/errors.py): generated programs that do what torch
refuses (or warns about) raise and warn with torch's types and messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_ops import ALL_DTYPES, OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Backward, Leaf, Observe, Program, Ref, RequiresGrad, RetainGrad
from oracle.strategies import Builder, op_data

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}


@st.composite
def bad_backwards(draw: Any) -> Program:
    """backward from a tensor that does not require grad, from a non-scalar without gradient, or
    with a gradient of another shape (an error) or dtype (torch casts it)."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((), (2,), (2, 2))))
    x = p.leaf(shape, "float32", grad=draw(st.integers(0, 3)) > 0)
    y = p.op(draw(st.sampled_from(("mul", "add"))), Ref(x), 2.0)
    gradient = None
    if draw(st.booleans()):
        gshape = draw(st.sampled_from((shape, (3,), (2, 1))))
        gradient = p.leaf(gshape, draw(st.sampled_from(("float32", "float64", "int64", "bool"))), grad=False)
    p.steps.append(Backward(y, gradient))
    return p.observed()


@pytest.mark.rule("ERR-001")
@examples(4)
@given(program=bad_backwards())
def test_backward_errors(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def refused_flags(draw: Any) -> Program:
    """A leaf of any dtype made with requires_grad, requires_grad_ on leaves and non-leaves, and
    in-place ops on leaves that (may) require grad."""
    p = OpProgram(draw)
    dtype = draw(st.sampled_from(ALL_DTYPES))
    x = "x0"
    p.steps.append(Leaf(x, op_data(draw, (2,), dtype), dtype, draw(st.booleans())))
    p.names.append(x)
    kind = draw(st.sampled_from(("requires_grad_", "inplace")))
    if kind == "requires_grad_":
        target = draw(st.sampled_from((x, p.op("mul", Ref(x), 2))))
        p.steps.append(RequiresGrad(target, draw(st.booleans())))
    else:
        op = draw(st.sampled_from(("add_", "mul_", "zero_", "fill_", "__setitem__")))
        p.op(op, Ref(x), *{"zero_": [], "__setitem__": [0, 1]}.get(op, [1]))
    return p.observed()


@pytest.mark.rule("ERR-002")
@examples(4)
@given(program=refused_flags())
def test_refused_flags_and_leaf_inplace(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def shape_errors(draw: Any) -> Program:
    """Ops on shapes (and dtypes) that may not fit: broadcasting, matmul of mixed dtypes, view of a
    transposed tensor, cat."""
    p = OpProgram(draw)
    a = p.leaf(draw(st.sampled_from(((2, 3), (3,), (2, 1)))), "float32")
    b_dtype = draw(st.sampled_from(("float32", "float64", "int64")))
    b = p.leaf(draw(st.sampled_from(((3, 2), (2,), (4,), (1, 3)))), b_dtype)
    kind = draw(st.sampled_from(("add", "mul", "matmul", "mm", "view", "cat")))
    if kind == "view":
        p.op("view", Ref(p.op("t", Ref(a)) if draw(st.booleans()) else a), -1)
    elif kind == "cat":
        p.op("cat", [Ref(a), Ref(b)], draw(st.integers(-1, 1)))
    else:
        p.op(kind, Ref(a), Ref(b))
    return p.observed()


@pytest.mark.rule("ERR-003")
@examples(4)
@given(program=shape_errors())
def test_shape_errors(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def non_leaf_grad_reads(draw: Any) -> Program:
    """.grad read on non-leaves, retained or not, before and after backward."""
    p = OpProgram(draw)
    x = p.leaf((2,), "float32", grad=True)
    y = p.op(draw(st.sampled_from(("mul", "add"))), Ref(x), 3.0)
    if draw(st.booleans()):
        p.steps.append(RetainGrad(y))
    p.steps.append(Observe(y))
    p.end(y)
    return Program(p.steps)


@pytest.mark.rule("ERR-004")
@examples(4)
@given(program=non_leaf_grad_reads())
def test_non_leaf_grad_warning(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def inplace_in_graphs(draw: Any) -> Program:
    """A branching graph with hooks, an in-place op on one of its tensors (a leaf, a tensor some
    node saved for backward, or one nobody saved), maybe more ops, then backward; or a generated
    program with in-place ops among its actions."""
    builder = Builder(draw)
    builder.start()
    if builder.coin():
        builder.actions(("op", "inplace", "retain_grad", "hook", "backward"), max_actions=8)
    else:
        made = builder.branching(draw(st.integers(1, 4)))
        for _ in range(draw(st.integers(0, 2))):
            builder.hook()
        consumed = made[:-1] or made  # tensors later ops took, which some of them saved
        builder.inplace(builder.pick(consumed if draw(st.integers(0, 3)) else builder.leaves))
        builder.chain(draw(st.integers(0, 2)))
    builder.finish()
    return builder.program()


@pytest.mark.rule("ERR-005")
@examples(2)
@given(program=inplace_in_graphs())
def test_inplace_ops_in_graphs(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
