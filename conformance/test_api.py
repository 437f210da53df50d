"""Argument spellings (oracle/rules/api.py): reductions, scans and joins called with NumPy's
keyword spellings (now and then one torch refuses), and functions called with out= of a drawn
shape and dtype (empty, of the result's shape, of another shape; an argument requiring grad now
and then), every tensor observed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.test_ops import OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Program, Ref

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# ops that take dim (and keepdim) by NumPy's names, with the positional arguments before dim
DIM_OPS = {"sum": True, "mean": True, "amax": True, "logsumexp": True, "std": True, "max": True}
SCANS = ("cumsum", "cumprod", "softmax", "log_softmax")
JOINS = ("cat", "stack")


@st.composite
def spelled_calls(draw: Any) -> Program:
    """A float leaf of shape (2, 3); a reduction with axis= (keepdims= or keepdim=), a scan or
    softmax with axis=, a join with axis=, a binary op with x1=/x2= or the input as a=; then one
    call giving dim twice (by position or name and as axis), which torch refuses."""
    p = OpProgram(draw)
    x = p.leaf((2, 3), "float64", grad=draw(st.booleans()))
    axis = draw(st.sampled_from((0, 1, -1)))
    op = draw(st.sampled_from(sorted(DIM_OPS)))
    keep = {draw(st.sampled_from(("keepdims", "keepdim"))): draw(st.booleans())}
    reduced = p.op(op, Ref(x), axis=axis, **keep)
    if op == "max":
        p.op("__getitem__", Ref(reduced), 0)
    p.op(draw(st.sampled_from(SCANS)), Ref(x), axis=axis)
    p.op(draw(st.sampled_from(JOINS)), [Ref(x), Ref(x)], axis=axis)
    first = draw(st.sampled_from(("x1", "x", "a")))
    p.op(draw(st.sampled_from(("add", "mul", "sub"))), **{first: Ref(x)}, x2=Ref(x))
    twice = draw(st.sampled_from(("position", "name")))
    p.op(
        "sum",
        Ref(x),
        *((0,) if twice == "position" else ()),
        **({"dim": 0} if twice == "name" else {}),
        axis=1,
    )
    return p.observed()


OUT_OPS = {
    "add": 2, "mul": 2, "sub": 2, "div": 2, "exp": 1, "matmul": 2, "mm": 2, "sum": 1, "mean": 1,
    "cumsum": 1, "softmax": 1, "cat": 0, "stack": 0,
}  # fmt: skip


@st.composite
def out_calls(draw: Any) -> Program:
    """Two (2, 2) leaves (float32, float64 or int64; one requiring grad now and then) and an op of
    OUT_OPS called with out= a leaf that is empty, of the result's shape or of another shape, of a
    drawn dtype; out, the result and the leaves observed."""
    p = OpProgram(draw)
    dtype = draw(st.sampled_from(("float32", "float64", "int64")))
    a = p.leaf((2, 2), dtype, grad=dtype != "int64" and draw(st.integers(0, 5)) == 0)
    b = p.leaf((2, 2), dtype, grad=False)
    op = draw(st.sampled_from(sorted(OUT_OPS)))
    if op in ("mm", "matmul", "softmax", "cumsum", "mean", "exp") and dtype == "int64":
        op = "add"
    out_dtype = draw(st.sampled_from(("float32", "float64", "int64", dtype)))
    out_shape = draw(st.sampled_from(((0,), (2, 2), (3,), (1, 2))))
    r = p.leaf(out_shape, out_dtype, grad=False)
    args: list = [[Ref(a), Ref(b)]] if OUT_OPS[op] == 0 else [Ref(a), Ref(b)][: OUT_OPS[op]]
    if op in ("sum", "mean", "cumsum", "softmax"):
        args.append(draw(st.sampled_from((0, 1))))
    p.op(op, *args, out=Ref(r))
    return p.observed()


@pytest.mark.rule("API-001")
@settings(deadline=None)
@given(program=spelled_calls())
def test_numpy_spellings(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("API-002")
@settings(deadline=None)
@given(program=out_calls())
def test_out(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
