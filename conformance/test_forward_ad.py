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
from oracle.program import ApplyFunction, DualLevel, ExitMode, Function, MakeDual, Program, Ref, UnpackDual
from oracle.strategies import op_data

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

UNARY = ("exp", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "sqrt", "log", "clone")
IN_PLACE = ("mul_", "add_", "sub_", "div_")


def _o(out: str, op: str, *args: Any) -> dict:
    """One op of a Function's body."""
    return {"out": out, "op": op, "args": list(args)}


# custom Functions of (i0, i1): name -> (forward ops, outputs, saves_for_forward, jvp ops (None: no
# jvp), tangents, dirty, the output the program goes on with); i1 is the other tensor (fits: it
# broadcasts to i0) or the number 3.0
I0, I1, T0, T1 = Ref("i0"), Ref("i1"), Ref("t0"), Ref("t1")
FUNCTIONS: dict[str, tuple] = {
    "square": (
        [_o("h", "mul", I0, I0)],
        ["h"],
        ["i0"],
        [_o("a", "mul", T0, I0), _o("b", "mul", Ref("a"), 2.0)],
        ["b"],
        [],
        0,
    ),
    "number": ([_o("h", "mul", I0, I1)], ["h"], [], [_o("b", "mul", T0, 3.0)], ["b"], [], 0),
    "product": (
        [_o("h", "mul", I0, I1)],
        ["h"],
        ["i0", "i1"],
        [_o("a", "mul", T0, I1), _o("c", "mul", I0, T1), _o("b", "add", Ref("a"), Ref("c"))],
        ["b"],
        [],
        0,
    ),
    "two_outputs": (
        [_o("h", "mul", I0, 2.0), _o("k", "exp", I0)],
        ["h", "k"],
        ["k"],
        [_o("a", "mul", T0, 2.0), _o("b", "mul", T0, Ref("k"))],
        ["a", "b"],
        [],
        1,
    ),
    "view": ([_o("h", "view", I0, -1)], ["h"], [], [_o("b", "view", T0, -1)], ["b"], [], 0),
    "as_is": ([], ["i0"], [], [_o("b", "view", T0, -1), _o("c", "view_as", Ref("b"), T0)], ["c"], [], 0),
    "in_place": ([_o("h", "mul_", I0, 2.0)], ["i0"], [], [_o("b", "mul_", T0, 2.0)], ["b"], ["i0"], 0),
    # refused: no jvp, a view whose tangent is not a view, an in-place one writing a new tangent
    "no_jvp": ([_o("h", "mul", I0, 2.0)], ["h"], [], None, [], [], 0),
    "view_not_view": ([_o("h", "view", I0, -1)], ["h"], [], [_o("b", "mul", T0, 1.0)], ["b"], [], 0),
    "in_place_new": ([_o("h", "mul_", I0, 2.0)], ["i0"], [], [_o("b", "mul", T0, 2.0)], ["b"], ["i0"], 0),
}


def _function_on(p: OpProgram, t: str, shape: tuple, other: str, fits: bool, name: str) -> tuple:
    """The custom Function ``name`` of ``FUNCTIONS`` applied to ``t`` (a clone of it for an in-place
    one) and ``other`` (or 3.0; "product" is given ``t`` twice where ``other`` does not fit): the
    output's name and shape."""
    forward, outputs, saved, jvp, tangents, dirty, taken = FUNCTIONS[name]
    fn = p.fresh("F")
    p.steps.append(
        Function(
            fn,
            2,
            forward,
            outputs,
            [],
            [None, None],
            dirty=dirty,
            jvp=jvp,
            tangents=tangents,
            saves_for_forward=saved,
        )
    )
    if dirty:
        t = p.op("clone", Ref(t))
    outs = [p.fresh("t") for _ in outputs]
    second = 3.0 if name == "number" else Ref(other) if fits else Ref(t) if name == "product" else 3.0
    p.steps.append(ApplyFunction(outs, fn, [Ref(t), second]))
    p.names += outs
    return outs[taken], (math.prod(shape),) if name in ("view", "view_not_view") else shape


# ops whose jvp formulas the rule checks beyond the first ones, by what they need: any tensor
# (elementwise), a second tensor of the same shape or a number, a non-0-d tensor and a dim
ELEMENTWISE = ("erf", "clamp", "remainder") + tuple(
    f"nn.functional.{f}"
    for f in ("gelu", "softplus", "elu", "silu", "mish", "hardtanh", "logsigmoid", "leaky_relu")
)
PAIRED = (
    "atan2",
    "hypot",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "logaddexp",
    "copysign",
    "lerp",
    "addcmul",
    "where",
    "nn.functional.mse_loss",
)
ALONG_DIM = (
    "layer_norm",
    "prod",
    "amax",
    "var",
    "std",
    "logsumexp",
    "nansum",
    "norm",
    "linalg.vector_norm",
    "max",
    "median",
    "sort",
    "var_mean",
    "cumsum",
    "cumprod",
    "logcumsumexp",
    "cummax",
    "flip",
    "roll",
    "cat",
    "stack",
    "gather",
    "index_select",
    "scatter_add",
    "masked_fill",
    "split",
)
MATRIX = ("tril", "triu", "diagonal", "nll_loss", "cross_entropy")
FORMULAS = ALONG_DIM + ELEMENTWISE + PAIRED + MATRIX


def _formula_on(draw: Any, p: OpProgram, t: str, shape: tuple, other: str, same: bool, op: str) -> tuple:
    """The op ``op`` of ``FORMULAS`` on ``t`` of ``shape`` (and on ``other`` where it has that
    shape, ``same``, else on a plain tensor): the result's name and shape."""
    x = Ref(t)
    if op in ELEMENTWISE:
        extra = {"clamp": [-0.5, 1.0], "remainder": [1.5], "nn.functional.leaky_relu": [0.1]}.get(op, [])
        return p.op(op, x, *extra), shape
    if op in PAIRED:
        y = Ref(other) if same and draw(st.booleans()) else Ref(p.op("mul", Ref(p.op("clone", x)), 0.5))
        if op == "where":
            mask = p.given(op_data(draw, shape, "bool"), "bool")
            return p.op("where", Ref(mask), x, y), shape
        extra = {"lerp": [0.3], "addcmul": [x]}.get(op, [])
        return p.op(op, x, y, *extra), shape
    dim = draw(st.integers(0, len(shape) - 1))
    index = [draw(st.integers(0, shape[dim] - 1)) for _ in range(2)]
    if op in ("prod", "amax", "var", "std", "logsumexp", "nansum", "norm"):
        keep = draw(st.booleans())
        return p.op(op, x, dim=dim, keepdim=keep), shape[:dim] + (1,) * keep + shape[dim + 1 :]
    if op in ("linalg.vector_norm", "max", "median"):
        return p.op(op, x), ()
    if op in ("sort", "cummax", "var_mean"):
        pair = p.op(op, x, dim)
        return p.op("__getitem__", Ref(pair), 0), shape[:dim] + shape[
            dim + 1 :
        ] if op == "var_mean" else shape
    if op in ("cumsum", "cumprod", "logcumsumexp"):
        return p.op(op, x, dim), shape
    if op in ("flip", "roll"):
        return p.op(op, x, *([[dim]] if op == "flip" else [1, dim])), shape
    if op in ("cat", "stack"):
        parts = [x, Ref(other) if same else x]
        grown = (
            shape[:dim] + (2 * shape[dim],) + shape[dim + 1 :] if op == "cat" else shape[:dim] + (2,) + shape
        )
        return p.op(op, parts, dim), grown
    if op in ("gather", "index_select", "scatter_add"):
        idx_shape = shape[:dim] + (2,) + shape[dim + 1 :] if op == "gather" else (2,)
        idx = p.given(_indices(draw, idx_shape, shape[dim]), "int64")
        if op == "scatter_add":
            idx = p.given(_indices(draw, shape, shape[dim]), "int64")
            return p.op(op, x, dim, Ref(idx), x), shape
        return p.op(op, x, dim, Ref(idx)), shape[:dim] + (2,) + shape[dim + 1 :]
    if op == "masked_fill":
        return p.op(op, x, Ref(p.given(op_data(draw, shape, "bool"), "bool")), 2.0), shape
    if op == "split":
        return p.op("__getitem__", Ref(p.op("split", x, 1, dim)), index[0]), shape[:dim] + (1,) + shape[
            dim + 1 :
        ]
    if op == "layer_norm":
        return p.op("nn.functional.layer_norm", x, list(shape[-1:])), shape
    if op in ("tril", "triu"):
        return p.op(op, x, draw(st.integers(-1, 1))), shape
    if op == "diagonal":
        return p.op(op, x), (min(shape),)
    target = p.given(_indices(draw, shape[:1], shape[1]), "int64")
    return p.op(f"nn.functional.{op}", x, Ref(target)), ()


def _indices(draw: Any, shape: tuple, size: int) -> Any:
    """In-range int64 indices of ``shape`` into a dim of ``size``."""
    if not shape:
        return draw(st.integers(0, size - 1))
    return [_indices(draw, shape[1:], size) for _ in range(shape[0])]


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
def dual_programs(draw: Any, formula: str | None = None, function: str | None = None) -> Program:
    """A primal and its tangent (float32 or float64, the primal maybe requiring grad), a second
    tensor (dual or plain, of the same or a broadcasting shape), made dual inside a dual_level; one
    to three ops (the first the op ``formula`` of ``FORMULAS``, on a shape it takes, or the custom
    Function ``function`` of ``FUNCTIONS``, if given); every result's tangent unpacked inside the
    level, the last one's again after it."""
    p = OpProgram(draw)
    dtype = draw(st.sampled_from(("float32", "float64")))
    shapes = ((), (3,), (2, 3), (3, 3))
    if formula is not None:
        shapes = shapes[2:] if formula in MATRIX else shapes[1:] if formula in ALONG_DIM else shapes
    shape = draw(st.sampled_from(shapes))
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
    first = formula or function
    if formula is not None:
        t, t_shape = _formula_on(draw, p, t, t_shape, other, other_shape == shape, formula)
    if function is not None:
        fits = other_shape == shape[len(shape) - len(other_shape) :]
        t, t_shape = _function_on(p, t, t_shape, other, fits, function)
    if first is not None:
        results.append(t)
    for _ in range(draw(st.integers(0 if first else 1, 2 if first else 3))):
        t, t_shape = _op_on(draw, p, t, t_shape, other, other_shape)
        results.append(t)
    p.steps += [UnpackDual(p.fresh("u"), r) for r in results]
    p.steps += [ExitMode(level), UnpackDual(p.fresh("u"), results[-1])]
    return Program(p.steps)


# the parametrized tests first: a planted fault of one Function or formula is caught there at once
@pytest.mark.rule("FWAD-001")
@pytest.mark.parametrize("function", FUNCTIONS)
@examples(0.02)
@given(data=st.data())
def test_function_tangents(function: str, data: Any, backend: Backend, reference: Backend) -> None:
    check(data.draw(dual_programs(function=function)), backend, reference)


@pytest.mark.rule("FWAD-001")
@pytest.mark.parametrize("formula", FORMULAS)
@examples(0.02)
@given(data=st.data())
def test_formula_tangents(formula: str, data: Any, backend: Backend, reference: Backend) -> None:
    check(data.draw(dual_programs(formula)), backend, reference)


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
