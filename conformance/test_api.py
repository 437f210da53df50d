"""Argument spellings (oracle/rules/api.py): reductions, scans and joins called with NumPy's
keyword spellings (now and then one torch refuses), and functions called with out= of a drawn
shape and dtype (empty, of the result's shape, of another shape; an argument requiring grad now
and then), every tensor observed; factory functions under a drawn default dtype and device."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.test_ops import OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import DeviceMode, DType, ExitDevice, ObserveDefaults, Program, Ref

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
    if op == "stack" and dtype != "int64" and out_dtype == "int64":
        out_shape = (2, 2, 2)  # stack resizes out before refusing the cast: new elements uninitialized
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


FLOAT_DEFAULTS = ("float32", "float64", "float16", "bfloat16")
# factory calls whose dtype the default dtype decides (or, for the int ones, does not)
FACTORIES: list[tuple[str, tuple]] = [
    ("tensor", (1.5,)), ("tensor", ([1, 2.5],)), ("tensor", ([[1, 2], [3, 4.0]],)), ("tensor", ([],)),
    ("tensor", ([True, 2],)), ("arange", (0.0, 2.0, 0.5)), ("arange", (3,)), ("arange", (0, 1, 0.25)),
    ("linspace", (0, 1, 5)), ("logspace", (0, 2, 3)), ("logspace", (0, 1, 4, 2)), ("full", ([2], 1.5)),
    ("full", ([2], 2)), ("zeros", (2, 3)), ("ones", ([2],)), ("eye", (2,)),
]  # fmt: skip
# calls on an int64 and a float32 tensor: promotion to the default dtype, or the input's dtype kept
ON_TENSORS = ("div", "mul", "sqrt", "zeros_like", "ones_like", "full_like")


@st.composite
def default_calls(draw: Any) -> Program:
    """The defaults observed; set_default_dtype of a drawn floating dtype (now and then an integer
    one, refused), set_default_device('cpu') or a 'with torch.device' block (nested now and then),
    the defaults observed again; factory calls and calls on an int64 and a float32 leaf; the block
    left or not; every tensor observed."""
    p = OpProgram(draw)
    p.steps.append(ObserveDefaults())
    dtype = draw(st.sampled_from(FLOAT_DEFAULTS + FLOAT_DEFAULTS + ("int64", "bool")))
    p.op("set_default_dtype", DType(dtype))
    if draw(st.booleans()):
        p.op("set_default_device", draw(st.sampled_from(("cpu", "cpu:0"))))
    blocks = draw(st.integers(0, 2))
    for i in range(blocks):
        p.steps.append(DeviceMode(f"d{i}", draw(st.sampled_from(("cpu", "cpu:0")))))
    p.steps.append(ObserveDefaults())
    for op, args in draw(st.lists(st.sampled_from(FACTORIES), min_size=2, max_size=4)):
        p.op(op, *args)
    whole, real = p.given([1, 2, 4], "int64"), p.given([0.5, 2.0], "float32")
    for op in draw(st.lists(st.sampled_from(ON_TENSORS), min_size=1, max_size=2, unique=True)):
        source = draw(st.sampled_from((whole, real)))
        args = {"div": (2,), "mul": (0.5,), "full_like": (2.5,)}.get(op, ())
        p.op(op, Ref(source), *args)
    if blocks and draw(st.booleans()):
        p.steps.append(ExitDevice(f"d{blocks - 1}"))
    return p.observed()


@pytest.mark.rule("API-003")
@settings(deadline=None)
@given(program=default_calls())
def test_defaults(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
