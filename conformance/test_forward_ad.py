"""Forward AD (oracle/rules/forward_ad.py): dual tensors made inside dual_level, a few ops on them
(with plain or dual tensors, numbers, broadcasting, views and in-place writes), their tangents
unpacked inside and after the level; and the calls forward_ad refuses."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.test_ops import OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.profiles import examples
from oracle.program import DualLevel, ExitMode, MakeDual, Program, Ref, UnpackDual

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

UNARY = ("exp", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "sqrt", "log", "clone")
IN_PLACE = ("mul_", "add_", "sub_", "div_")


def _op_on(draw: Any, p: OpProgram, t: str, shape: tuple, other: str, other_shape: tuple) -> tuple:
    """One op on ``t`` (of ``shape``), maybe with ``other`` (a dual or plain tensor, used where it
    broadcasts): the result's name and shape."""
    fits = other_shape == shape[len(shape) - len(other_shape) :] if len(other_shape) <= len(shape) else False
    kinds = ["unary", "number", "reduce", "view", "in_place"] + ["binary"] * fits
    kind = draw(st.sampled_from(kinds + ["matrix"] * (len(shape) == 2 and shape == other_shape)))
    if kind == "unary":
        return p.op(draw(st.sampled_from(UNARY)), Ref(t)), shape
    if kind == "binary":
        args = [Ref(t), Ref(other)] if draw(st.booleans()) else [Ref(other), Ref(t)]
        return p.op(draw(st.sampled_from(("add", "sub", "mul", "div"))), *args), shape
    if kind == "number":
        op = draw(st.sampled_from(("mul", "add", "div", "pow")))
        return p.op(op, Ref(t), draw(st.sampled_from((2.0, -0.5)))), shape
    if kind == "reduce":
        op = draw(st.sampled_from(("sum", "mean")))
        if shape and draw(st.booleans()):
            dim = draw(st.integers(0, len(shape) - 1))
            keep = draw(st.booleans())
            return p.op(op, Ref(t), dim, keepdim=keep), shape[:dim] + (1,) * keep + shape[dim + 1 :]
        return p.op(op, Ref(t)), ()
    if kind == "matrix":
        op = draw(st.sampled_from(("mm", "matmul")))
        return p.op(op, Ref(t), Ref(p.op("t", Ref(other)))), shape[:1] * 2
    if kind == "in_place":  # on a clone, or on a view of it (the tangent reaching the clone)
        target = p.op("clone", Ref(t))
        value = Ref(other) if fits else 3.0
        if shape and draw(st.booleans()):
            p.op(draw(st.sampled_from(IN_PLACE)), Ref(p.op("__getitem__", Ref(target), 0)), 3.0)
        else:
            p.op(draw(st.sampled_from(IN_PLACE)), Ref(target), value)
        return target, shape
    view = draw(st.sampled_from(("unsqueeze", "reshape", "transpose", "getitem", "expand")))
    if view == "unsqueeze":
        return p.op("unsqueeze", Ref(t), 0), (1, *shape)
    if view == "reshape":
        return p.op("reshape", Ref(t), [-1]), (math.prod(shape),)
    if view == "transpose" and len(shape) == 2:
        return p.op("transpose", Ref(t), 0, 1), shape[::-1]
    if view == "getitem" and shape:
        return p.op("__getitem__", Ref(t), 0), shape[1:]
    return p.op("expand", Ref(t), [2, *shape]), (2, *shape)


@st.composite
def dual_programs(draw: Any) -> Program:
    """A primal and its tangent (float32 or float64, the primal maybe requiring grad), a second
    tensor (dual or plain, of the same or a broadcasting shape), made dual inside a dual_level; one
    to three ops; every result's tangent unpacked inside the level, the last one's again after it."""
    p = OpProgram(draw)
    dtype = draw(st.sampled_from(("float32", "float64")))
    shape = draw(st.sampled_from(((), (3,), (2, 3), (3, 3))))
    other_shape = draw(st.sampled_from((shape, shape[1:])))
    x, tx = p.leaf(shape, dtype), p.leaf(shape, dtype, grad=False)
    y = p.leaf(other_shape, dtype)
    level = "L"
    p.steps.append(DualLevel(level))
    d = p.fresh("d")
    p.steps.append(MakeDual(d, x, tx))
    other = y
    if draw(st.booleans()):
        other = p.fresh("d")
        p.steps.append(MakeDual(other, y, p.leaf(other_shape, dtype, grad=False)))
    t, t_shape = d, shape
    results = [d]
    for _ in range(draw(st.integers(1, 3))):
        t, t_shape = _op_on(draw, p, t, t_shape, other, other_shape)
        results.append(t)
    p.steps += [UnpackDual(p.fresh("u"), r) for r in results]
    p.steps += [ExitMode(level), UnpackDual(p.fresh("u"), results[-1])]
    return Program(p.steps)


@pytest.mark.rule("FWAD-001")
@examples(0.5)
@given(program=dual_programs())
def test_tangents(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


REFUSED = ("outside", "nested", "size", "int_primal", "int_tangent", "twice")


@st.composite
def refused_calls(draw: Any) -> Program:
    """One call forward_ad refuses (``REFUSED``), among calls it accepts."""
    p = OpProgram(draw)
    case = draw(st.sampled_from(REFUSED))
    shape = draw(st.sampled_from(((3,), (2, 2))))
    x = p.leaf(shape, "int64" if case == "int_primal" else "float32")
    tangent_shape = (4,) if case == "size" else shape
    t = p.leaf(tangent_shape, "int64" if case == "int_tangent" else "float32", grad=False)
    if case == "outside":
        p.steps.append(MakeDual(p.fresh("d"), x, t))
        return Program(p.steps)
    p.steps.append(DualLevel("L"))
    if case == "nested":
        p.steps.append(DualLevel("M"))
    d = p.fresh("d")
    p.steps.append(MakeDual(d, x, t))
    if case == "twice":
        p.steps.append(MakeDual(p.fresh("d"), d, t))
    p.steps.append(UnpackDual(p.fresh("u"), d))
    return Program(p.steps)


@pytest.mark.rule("FWAD-002")
@examples(0.2)
@given(program=refused_calls())
def test_refused(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
