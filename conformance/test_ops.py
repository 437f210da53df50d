"""Op values and gradients (oracle/rules/ops.py): every op of impl's op list, on random shapes
(0-d, size-1 dims, broadcasting), dtypes and edge values, agrees with torch on values, dtypes,
gradients, grad_fn graphs, what it saves (a second backward raises exactly when torch's does) and
the errors torch raises for what it rejects."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    CallModule,
    DType,
    Leaf,
    Module,
    Observe,
    ObserveGraph,
    ObserveLayout,
    ObservePlain,
    ObserveRepr,
    Op,
    Program,
    Ref,
    Step,
)
from oracle.strategies import (
    FLOAT_DTYPES,
    OP_SHAPES,
    backprop_twice,
    broadcast_partner,
    broadcast_shape,
    op_data,
)

# Known divergences of impl from torch, by rule: strict xfails on the impl backend only.
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

SMALL_INTS = ("uint8", "int8", "int16")
INT_DTYPES = (*SMALL_INTS, "int32", "int64")
ALL_DTYPES = (*FLOAT_DTYPES, *INT_DTYPES, "bool")
INTEGRAL_DTYPES = (*INT_DTYPES, "bool")
UNARY = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sgn", "neg", "square")
UNARY += ("__neg__", "clamp", "pow", "__pow__")
# unary math (impl/_ops/unary_math.py): each op with its in-place form, logit with an eps now and
# then, nan_to_num with replacements, round with decimals; the predicates' results require no grad
UNARY_MATH = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log1p", "expm1")
UNARY_MATH += ("log2", "log10", "exp2", "rsqrt", "frac", "sinc", "logit", "deg2rad", "rad2deg", "nan_to_num")
UNARY_MATH += ("floor", "ceil", "round", "trunc", "sign", "reciprocal")
UNARY_MATH += ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "fix")  # aliases
PREDICATES = ("isinf", "isposinf", "isneginf", "signbit")
UNARY += (*UNARY_MATH, *PREDICATES, "positive")
# the ops of UNARY whose in-place form a program runs too (on a float non-leaf and integer leaves)
IN_PLACE = {*UNARY_MATH, "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sgn", "neg"}
IN_PLACE |= {"square", "clamp", "pow"}
# one program in SWEEP_EVERY also runs the op (and its in-place form) on a leaf of each integer
# dtype and bool, so that every op meets each of them in the ci profile, not by luck
SWEEP_EVERY = 4
INTEGER_DTYPES = (*INT_DTYPES, "bool")
# one program in EDGE_EVERY (the first one drawn, whose choices are all the smallest) feeds the op
# every edge value where a gradient masks or branches (oracle.coverage's targets: COVERAGE below),
# on a floating leaf requiring grad: signed zeros, NaN, infinities, +-1, integers, half-integers
EDGE_EVERY = 4
NAN, INF = float("nan"), float("inf")
UNARY_EDGES = (0.0, -0.0, NAN, INF, -INF, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 2.0, 6.0)
# binary ops meet every pair of these (equal ones: ties)
PAIR_EDGES = (0.0, -0.0, NAN, INF, -INF, 1.0, -1.5, 2.0)
# keyword arguments of reductions over a dim: var's and std's correction or unbiased, a dtype
SPREAD_FORMS = (
    {"correction": 0}, {"correction": 1}, {"correction": 2}, {"unbiased": False}, {"unbiased": True}
)
INTO = ({"dtype": DType("float64")}, {"dtype": DType("float16")})
REDUCTION_FORMS: dict[str, tuple[dict, ...]] = {
    "var": SPREAD_FORMS, "std": SPREAD_FORMS, "sum": INTO, "mean": INTO, "prod": INTO,
}
# lanes (along dim 1, or columns along dim 0) with one zero and several, ties, NaN and infinities
REDUCTION_EDGES = (
    (0.0, 0.0, 1.0), (0.0, 2.0, 3.0), (NAN, 1.0, 1.0), (INF, -INF, 1.0), (-INF, -INF, -INF), (1.0, 1.0, 1.0),
)
ROUND_DECIMALS = (0, 1, 2, -1, 3)
POW_EXPONENTS = (2, 3, 0.5, -1, 0, 2.0)
NAN_TO_NUM_ARGS = ({}, {"nan": 2.0, "posinf": 1e10, "neginf": -3.0}, {"posinf": 5})
UNARY += ("erf", "erfc")
IN_PLACE |= {"erf", "erfc"}
# the gamma family and Bessel functions (impl/_ops/gamma.py), torch.special's own ones; polygamma's
# order n comes first (torch.polygamma(n, x), x.polygamma(n)), mvlgamma's p after x
GAMMA = ("lgamma", "digamma", "polygamma", "mvlgamma", "erfinv", "i0")
SPECIAL = ("special.i1", "special.ndtr")
UNARY += (*GAMMA, *SPECIAL)
IN_PLACE |= set(GAMMA)
# their edge programs' values also hold these: negative non-half-integers (the reflection formulas'
# cotangent and sine), erfinv's tail (|y| > 0.7), i0/i1 beyond 8, digamma's series beyond 10
GAMMA_EDGES = (-0.3, -2.7, 0.9, -0.99, 0.75, 9.5, 20.0, 1e-3)
POLYGAMMA_ORDERS = (0, 1, 2, 3)
MVLGAMMA_DIMS = (1, 2, 3)
ARITHMETIC = {"add": "__add__", "sub": "__sub__", "mul": "__mul__", "div": "__truediv__", "pow": "__pow__"}
REFLECTED = ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__")
# binary math: those of NUMBER_OTHER take a Python number as ``other`` too (xlogy as ``input`` too)
BINARY_MATH = ("atan2", "hypot", "fmax", "fmin", "logaddexp", "logaddexp2", "heaviside")
# the regularized incomplete gamma functions (impl/_ops/igamma.py): a gradient for x only
BINARY_MATH += ("igamma", "igammac", "special.gammainc", "special.gammaincc")
NUMBER_OTHER = ("fmod", "remainder", "__mod__", "copysign", "xlogy", "float_power")
# ternary pointwise ops (impl/_ops/pointwise_ternary.py), with their in-place forms; lerp's weight
# and addcmul/addcdiv's value drawn from TERNARY_NUMBERS
TERNARY = ("lerp", "addcmul", "addcdiv")
TERNARY_NUMBERS = (0.3, 0.7, -1.5, 2, True, 1e300)
BINARY = (*ARITHMETIC, "maximum", "minimum", "where", *REFLECTED, *BINARY_MATH, *NUMBER_OTHER, "__rmod__")
BINARY += ("isclose",)  # operands of one dtype only (torch refuses others)
REDUCTIONS = ("sum", "mean", "prod", "var", "std", "max", "min", "amax", "cumsum", "cumprod", "flip")
REDUCTIONS += ("logsumexp", "nansum", "nanmean", "all", "any", "count_nonzero")
REDUCTIONS += ("cummax", "cummin", "logcumsumexp")
TWO_OUTPUTS = ("aminmax", "var_mean", "std_mean")  # one node, two differentiable outputs
REDUCTIONS += TWO_OUTPUTS
NAN_REDUCTIONS = ("nansum", "nanmean")  # drawn with NaN more often
LOG_SUM_EXP = ("logsumexp", "logcumsumexp")  # drawn with large values half of the time
LARGE_VALUES = (-100.0, 0.5, 90.0, 100.0)
SELECTING_SCANS = ("cummax", "cummin")  # drawn with ties and NaN
LIST_DIMS = ("logsumexp", *NAN_REDUCTIONS, "all", "any", "count_nonzero")  # taking a list of dims
DIM_REQUIRED = ("amax", "logsumexp")  # reducing over everything only with a list of dims
MATRIX = (  # (einsum last: a test of its own)
    "matmul", "__matmul__", "mm", "bmm", "addmm", "trace", "addmv", "addr", "addbmm", "inner", "vdot", "ger",
    "adjoint", "chain_matmul", "einsum",
)
SCALES = ({}, {"beta": 0.5}, {"alpha": 2.0}, {"beta": 0, "alpha": -1})  # addmm's and the add-products'
# inner's, vdot's and ger's operand shapes, the last two of each ones torch refuses
VECTOR_PRODUCT_SHAPES = {
    "inner": (((3,), (3,)), ((2, 3), (4, 3)), ((2, 1, 3), (3,)), ((), (2, 3)), ((2, 3), (2, 4))),
    "vdot": (((3,), (3,)), ((1,), (1,)), ((3,), (2,)), ((3, 1), (3,))),
    "ger": (((3,), (2,)), ((1,), (4,)), ((3, 1), (2,)), ((), (2,))),
}
CHAIN_SHAPES = (((2, 3), (3, 4)), ((2, 3),), ((2, 3), (3, 4), (4, 2)), ((2, 3), (3,)), ((2, 3), (2, 4)))
SCALARS = (2, -1, 0, 0.5, -2.0, True)
CLAMP_BOUNDS = ({"min": -1.0}, {"max": 0.5}, {"min": -1.0, "max": 1.0}, {"min": 1, "max": 0})
# the ops of gather_and_friends (OPS-005), one test each
# one_hot and take first: their planted faults' sessions stop at the first test that fails
GATHER_KINDS = (
    "one_hot", "take", "cat", "stack", "gather", "index_select", "masked_fill", "softmax", "log_softmax"
)
GATHER_WEIGHT = 0.4
# index dtypes gather and index_select refuse (they take int64 and int32)
INVALID_INDICES = ("int16", "uint8", "float32")
# OPS-001..004 run each op of their table as a test of its own (in the derandomized ci profile,
# Hypothesis follows each fresh program with mutated copies keeping its choices, so an op drawn
# from a list was covered by luck), on the share of the profile's examples these weights give
UNARY_WEIGHT = 0.15
BINARY_WEIGHT = 0.2
TERNARY_WEIGHT = 0.4
REDUCTION_WEIGHT = 0.25
INTEGRAL_REDUCTION_WEIGHT = 0.03  # three programs per reduction and integer dtype
MATRIX_WEIGHT = 0.4
EINSUM_WEIGHT = 0.6


class OpProgram:
    """The steps of an op program under construction: leaves, ops, then the standard end."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.steps: list[Step] = []
        self.names: list[str] = []  # what the end observes
        self.made = 0

    def fresh(self, prefix: str) -> str:
        """A new name, numbered by how many were made (one dropped from ``names`` is not reused)."""
        self.made += 1
        return f"{prefix}{self.made - 1}"

    def leaf(self, shape: tuple[int, ...], dtype: str, grad: bool | None = None, edge: bool = False) -> str:
        """A leaf of ``shape``/``dtype``; floating leaves mostly require grad."""
        name = self.fresh("x")
        if grad is None:
            grad = dtype.startswith("float") and self.draw(st.integers(0, 4)) > 0
        self.steps.append(Leaf(name, op_data(self.draw, shape, dtype, edge), dtype, grad))
        self.names.append(name)
        return name

    def op(self, op: str, *args: Any, **kwargs: Any) -> str:
        name = self.fresh("t")
        self.steps.append(Op(name, op, list(args), kwargs))
        self.names.append(name)
        return name

    def index(self, shape: tuple[int, ...], size: int) -> str:
        """An int64 leaf of indices into a dim of ``size``."""
        return self.indices(index_data(self.draw, shape, size))

    def indices(self, data: Any, dtype: str = "int64") -> str:
        """A leaf of the indices ``data`` (int64 unless ``dtype`` says otherwise)."""
        return self.given(data, dtype, prefix="i")

    def given(self, data: Any, dtype: str, grad: bool = False, prefix: str = "x") -> str:
        """A leaf holding ``data``."""
        name = self.fresh(prefix)
        self.steps.append(Leaf(name, data, dtype, grad))
        self.names.append(name)
        return name

    def observed(self) -> Program:
        """The program, ending with an observation of every tensor."""
        self.steps += [Observe(n) for n in self.names]
        return Program(self.steps)

    def end(self, *results: str) -> Program:
        """For each result: its graph, two backwards from its sum (the second raises iff something
        on its way was saved); then every tensor observed."""
        for i, result in enumerate(results):
            backprop_twice(self.steps, result, (-1,), f"loss{i}" if i else "loss")
        return self.observed()


def edge_leaf(draw: Any, p: OpProgram, dtype: str | None = None, values: tuple = UNARY_EDGES) -> str:
    """A floating leaf (of ``dtype``, or one drawn) requiring grad that holds ``values``."""
    return p.given(list(values), dtype or dtype_of(draw), grad=True)


def dtype_of(draw: Any, dtypes: tuple[str, ...] = FLOAT_DTYPES) -> str:
    return draw(st.sampled_from(dtypes))


def float_or_int(draw: Any, floats: tuple[str, ...] = FLOAT_DTYPES) -> str:
    """One of ``floats`` or (as often as each of them) one of INT_DTYPES."""
    dtype = dtype_of(draw, (*floats, "int"))
    return dtype_of(draw, INT_DTYPES) if dtype == "int" else dtype


@st.composite
def unary_ops(draw: Any, op: str | None = None) -> Program:
    """``op`` (or one drawn) of UNARY (function, method or operator; clamp with bounds, pow by a
    number, the keyword arguments of unary_math's) on a leaf with edge values; then (not of the
    predicates) its in-place form on a non-leaf copy of a float leaf, the op and its in-place form
    on integer and bool leaves (where torch refuses a float result it cannot hold in place, or a
    kernel without their version), and the results backpropagated twice."""
    op = op or draw(st.sampled_from(UNARY))
    p = OpProgram(draw)
    edges = draw(st.integers(0, EDGE_EVERY - 1)) == 0
    values = UNARY_EDGES + GAMMA_EDGES if op in (*GAMMA, *SPECIAL) else UNARY_EDGES
    shape = (len(values),) if edges else draw(st.sampled_from(OP_SHAPES))
    x = edge_leaf(draw, p, values=values) if edges else p.leaf(shape, float_or_int(draw), edge=True)
    args, kwargs = unary_arguments(draw, op)
    if op == "clamp" and draw(st.integers(0, 2)) == 0:  # bounds as tensors (0-d, or of the input's shape)
        kwargs = {k: Ref(p.given(v if draw(st.booleans()) else op_data(draw, shape, "float32"), "float32"))
                  for k, v in kwargs.items()}
    ends = [call(p, op, x, args, kwargs)]
    if edges:  # and every other form of its arguments
        ends += [call(p, op, x, a, k) for a, k in unary_forms(op) if (list(a), k) != (args, kwargs)]
    if op == "clamp" and not edges:  # and a float at a bound, where the gradient passes
        bounds = [v for v in kwargs.values() if not isinstance(v, Ref)]
        if bounds:
            at = p.given(draw(st.sampled_from(bounds)), dtype_of(draw), grad=True)
            ends.append(p.op(op, Ref(at), **kwargs))
    sweep = draw(st.integers(0, SWEEP_EVERY - 1)) == 0
    integers = INTEGER_DTYPES if sweep else (dtype_of(draw, INTEGER_DTYPES),)
    if op in IN_PLACE:
        y = edge_leaf(draw, p, values=values) if edges else p.leaf(shape, dtype_of(draw), edge=True)
        p.op(op + "_", Ref(p.op("mul", Ref(y), 1)), *args, **kwargs)
    for dtype in integers:
        y = p.leaf(shape, dtype, edge=True)
        if sweep or op not in IN_PLACE:
            call(p, op, y, args, kwargs)
        if op in IN_PLACE:
            p.op(op + "_", Ref(y), *args, **kwargs)
    return p.observed() if op in PREDICATES else p.end(*ends)


def call(p: OpProgram, op: str, x: str, args: list, kwargs: dict[str, Any]) -> str:
    """``op`` of tensor ``x`` with its other arguments: polygamma's order before ``x``."""
    if op == "polygamma":
        return p.op(op, *args, Ref(x), **kwargs)
    return p.op(op, Ref(x), *args, **kwargs)


def unary_forms(op: str) -> list[tuple[list, dict[str, Any]]]:
    """The forms of a unary op's other arguments: clamp's bounds, pow's exponent, logit's eps,
    nan_to_num's replacements, round's decimals (each op's first form: none)."""
    if op == "clamp":
        return [([], dict(bounds)) for bounds in CLAMP_BOUNDS]
    if op in ("pow", "__pow__"):
        return [([exponent], {}) for exponent in POW_EXPONENTS]
    if op == "logit":
        return [([], {}), *(([], {"eps": eps}) for eps in (0.1, 0.0, -1.0))]
    if op == "nan_to_num":
        return [([], dict(args)) for args in NAN_TO_NUM_ARGS]
    if op == "round":
        return [([], {}), *(([], {"decimals": decimals}) for decimals in ROUND_DECIMALS)]
    if op in ("polygamma", "mvlgamma"):
        return [([n], {}) for n in (POLYGAMMA_ORDERS if op == "polygamma" else MVLGAMMA_DIMS)]
    return [([], {})]


def unary_arguments(draw: Any, op: str) -> tuple[list, dict[str, Any]]:
    """One of the forms of ``op``'s other arguments (``unary_forms``), drawn."""
    args, kwargs = draw(st.sampled_from(unary_forms(op)))
    return list(args), dict(kwargs)


@pytest.mark.rule("OPS-001")
@pytest.mark.parametrize("op", UNARY)
@examples(UNARY_WEIGHT)
@given(data=st.data())
def test_unary_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(unary_ops(op), label="program"), backend, reference)


@st.composite
def binary_ops(draw: Any, op: str | None = None) -> Program:
    """``op`` (or one drawn) of BINARY on two broadcastable tensors of any dtypes, or (of the
    arithmetic ones and NUMBER_OTHER, reflected forms always) a tensor and a Python scalar (and an
    integer tensor and a float; of xlogy also a number and a tensor), or ``where`` with a boolean
    condition; of pow, now and then integer powers; of subtractions, now and then first one with a
    bool operand, which torch refuses; add and sub with an alpha, div with a rounding mode, now and
    then. One program in EDGE_EVERY is the op of every pair of PAIR_EDGES instead. Then
    backpropagated twice."""
    op = op or draw(st.sampled_from(BINARY))
    p = OpProgram(draw)
    if op not in (*REFLECTED, "__rmod__") and draw(st.integers(0, EDGE_EVERY - 1)) == 0:
        return p.end(edge_pairs(draw, p, op))
    shape = draw(st.sampled_from(OP_SHAPES))
    other = broadcast_partner(draw, shape)
    if op in ("sub", "__rsub__") and draw(st.integers(0, 2)) == 0:
        operand = draw(st.sampled_from(("bool", "float32", True, 1.5)))
        if isinstance(operand, str):
            operand = Ref(p.leaf(other, operand, grad=False))
        p.op(draw(st.sampled_from(("sub", "__sub__", "__rsub__"))), Ref(p.leaf(shape, "bool")), operand)
    if draw(st.booleans()):
        shape, other = other, shape
    if op in ("pow", "__rpow__") and draw(st.integers(0, 2)) == 0:
        return p.end(integer_pow(draw, p, op, shape, other))
    mixed = draw(st.integers(0, 2)) == 0
    a_dtype = dtype_of(draw, ALL_DTYPES if mixed else FLOAT_DTYPES)
    a = p.leaf(shape, a_dtype, edge=draw(st.booleans()))
    if op in (*REFLECTED, "__rmod__") or (op in (*ARITHMETIC, *NUMBER_OTHER) and draw(st.booleans())):
        scalar = draw(st.sampled_from(SCALARS))
        # torch 2.13's PowBackward2 fails an INTERNAL ASSERT ("unknown ivalue tag 4") on a bool
        # base: a torch bug, not a behaviour to match
        assume(not (op == "__rpow__" and isinstance(scalar, bool)))
        if op in ("xlogy", "float_power") and draw(st.booleans()):  # op(number, tensor)
            return p.end(p.op(op, scalar, Ref(a)))
        spelled = spelling(draw, op)
        result = p.op(spelled, Ref(a), scalar, **binary_options(draw, spelled))
        # and an integer tensor with a float number: the default dtype (numpy's would be float64)
        n = p.leaf(shape, dtype_of(draw, INT_DTYPES))
        p.op(spelling(draw, op), Ref(n), draw(st.sampled_from((0.5, -2.0))))
        return p.end(result)
    b = p.leaf(other, dtype_of(draw, ALL_DTYPES) if mixed else a_dtype, edge=draw(st.integers(0, 2)) == 0)
    if op == "where":
        cond = p.leaf(broadcast_partner(draw, broadcast_shape(shape, other)), "bool", grad=False)
        operands: list[Any] = [Ref(a), Ref(b)]
        number = draw(st.integers(0, 3))  # now and then a Python number for either
        if number < 2:
            operands[number] = draw(st.sampled_from(SCALARS))
        return p.end(p.op("where", Ref(cond), *operands))
    spelled = spelling(draw, op)
    return p.end(p.op(spelled, Ref(a), Ref(b), **binary_options(draw, spelled)))


def spelling(draw: Any, op: str) -> str:
    """``op``, or of an arithmetic op now and then its operator method."""
    return draw(st.sampled_from((op, ARITHMETIC[op]))) if op in ARITHMETIC else op


# keyword arguments of the functions (not of the operators): add's and sub's alpha, div's rounding
BINARY_OPTIONS: dict[str, tuple[dict, ...]] = {
    "add": ({"alpha": 2}, {"alpha": -1.5}, {"alpha": 0.5}),
    "sub": ({"alpha": -1.5}, {"alpha": 2}, {"alpha": 0.5}),
    "div": ({"rounding_mode": "trunc"}, {"rounding_mode": "floor"}),
    "isclose": ({"rtol": 0.5, "atol": 0.0}, {"equal_nan": True}, {"atol": 1.5, "equal_nan": False}),
}


def binary_options(draw: Any, op: str) -> dict[str, Any]:
    """Now and then one of ``op``'s BINARY_OPTIONS."""
    if op in BINARY_OPTIONS and draw(st.integers(0, 2)) == 0:
        return dict(draw(st.sampled_from(BINARY_OPTIONS[op])))
    return {}


def edge_pairs(draw: Any, p: OpProgram, op: str) -> str:
    """``op`` of two float leaves requiring grad holding every pair of PAIR_EDGES (where: chosen
    by a condition alternating True and False), in every form: with each of its BINARY_OPTIONS,
    and of an arithmetic op also its operator, each with a tensor and a number; stacked."""
    dtype = dtype_of(draw)
    n = len(PAIR_EDGES)
    a = p.given([v for v in PAIR_EDGES for _ in range(n)], dtype, grad=True)
    b = p.given(list(PAIR_EDGES) * n, dtype, grad=True)
    if op == "where":
        return p.op(op, Ref(p.given([i % 2 == 0 for i in range(n * n)], "bool")), Ref(a), Ref(b))
    forms = [p.op(op, Ref(a), Ref(b), **options) for options in ({}, *BINARY_OPTIONS.get(op, ()))]
    if op in ARITHMETIC:
        forms += [p.op(spelled, Ref(a), other) for spelled in (op, ARITHMETIC[op]) for other in (Ref(b), 2.0)]
    return forms[0] if len(forms) == 1 else p.op("stack", [Ref(f) for f in forms])


def integer_pow(draw: Any, p: OpProgram, op: str, shape: tuple[int, ...], other: tuple[int, ...]) -> str:
    """pow (or __rpow__) of an integer tensor: negative exponents (which torch refuses of a number),
    a float one, or (of pow) a tensor exponent."""
    a = p.leaf(shape, dtype_of(draw, INT_DTYPES))
    if op == "pow" and draw(st.booleans()):
        return p.op("pow", Ref(a), Ref(p.leaf(other, dtype_of(draw, (*INT_DTYPES, "float32")))))
    exponent = draw(st.sampled_from((-1, -2, 2, 0.5)))
    return p.op(op if op == "__rpow__" else spelling(draw, op), Ref(a), exponent)


@pytest.mark.rule("OPS-002")
@pytest.mark.parametrize("op", BINARY)
@examples(BINARY_WEIGHT)
@given(data=st.data())
def test_binary_ops_broadcast_and_promote(
    op: str, data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(binary_ops(op), label="program"), backend, reference)


# comparisons (OPS-010), by torch's names and NumPy's (an alias torch declares apart), and operators
COMPARISONS = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}
COMPARISONS |= {"not_equal": "__ne__", "less": "__lt__", "less_equal": "__le__", "greater": "__gt__"}
COMPARISONS |= {"greater_equal": "__ge__"}
IN_PLACE_COMPARISONS = tuple(f"{op}_" for op in COMPARISONS)


@st.composite
def comparisons(draw: Any) -> Program:
    """Two broadcastable leaves of any dtypes, or a leaf and a Python number, or (one program in
    EDGE_EVERY) leaves holding every pair of PAIR_EDGES (zeros of both signs, NaN, infinities);
    every comparison of COMPARISONS applied to them, each as a function or as its operator (bool
    results that require no grad), and one of IN_PLACE_COMPARISONS on a copy: every tensor observed."""
    p = OpProgram(draw)
    if draw(st.integers(0, EDGE_EVERY - 1)) == 0:
        n = len(PAIR_EDGES)
        a = p.given([v for v in PAIR_EDGES for _ in range(n)], dtype_of(draw), grad=True)
        other: Any = Ref(p.given(list(PAIR_EDGES) * n, dtype_of(draw)))
    else:
        shape = draw(st.sampled_from(OP_SHAPES))
        a = p.leaf(shape, dtype_of(draw, ALL_DTYPES), edge=draw(st.booleans()))
        if draw(st.integers(0, 2)) == 0:
            other = draw(st.sampled_from(SCALARS))
        else:
            other = Ref(p.leaf(broadcast_partner(draw, shape), dtype_of(draw, ALL_DTYPES)))
    for op, operator in COMPARISONS.items():
        p.op(draw(st.sampled_from((op, operator))), Ref(a), other)
    # and one in place, on a copy (a non-leaf where a requires grad): written in a's dtype, torch's
    # node recorded, an other broadcasting to a larger shape refused
    p.op(draw(st.sampled_from(IN_PLACE_COMPARISONS)), Ref(p.op("clone", Ref(a))), other)
    return p.observed()


@pytest.mark.rule("OPS-010")
@examples(BINARY_WEIGHT * 2)
@given(program=comparisons())
def test_comparisons(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def ternary_ops(draw: Any, op: str) -> Program:
    """``op`` of TERNARY on three broadcastable tensors, mostly of one float dtype, now and then of
    any dtypes (torch's dtype checks, kernels without integer versions, addcdiv's integer error);
    lerp's weight a number or a tensor (now and then 0-d, which may be of another dtype: it
    promotes), addcmul's and addcdiv's value drawn (a number out of a float's range raises). Then
    the in-place form on a non-leaf copy of the first (or the integer leaf itself), whose shape
    may be smaller than the broadcast one (torch's error). Then backpropagated twice."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(OP_SHAPES))
    shapes = draw(st.permutations([shape, broadcast_partner(draw, shape), broadcast_partner(draw, shape)]))
    mixed = draw(st.integers(0, 2)) == 0
    dtype = dtype_of(draw, ALL_DTYPES if mixed else FLOAT_DTYPES)
    a = p.leaf(shapes[0], dtype, edge=draw(st.booleans()))
    b = p.leaf(shapes[1], dtype_of(draw, ALL_DTYPES) if mixed else dtype, edge=draw(st.booleans()))
    kwargs: dict[str, Any] = {}
    if op == "lerp":
        weight: Any = draw(st.sampled_from(TERNARY_NUMBERS))
        if draw(st.booleans()):
            zero_dim = draw(st.integers(0, 2)) == 0
            weight_dtype = dtype_of(draw, ALL_DTYPES) if mixed or zero_dim else dtype
            weight = Ref(p.leaf(() if zero_dim else shapes[2], weight_dtype, edge=draw(st.booleans())))
        args: list = [Ref(b), weight]
    else:
        args = [Ref(b), Ref(p.leaf(shapes[2], dtype_of(draw, ALL_DTYPES) if mixed else dtype))]
        if draw(st.booleans()):
            kwargs["value"] = draw(st.sampled_from(TERNARY_NUMBERS))
    result = p.op(op, Ref(a), *args, **kwargs)
    target = p.op("mul", Ref(a), 1) if dtype in FLOAT_DTYPES else a
    p.op(op + "_", Ref(target), *args, **kwargs)
    return p.end(result)


@pytest.mark.rule("OPS-002")
@pytest.mark.parametrize("op", TERNARY)
@examples(TERNARY_WEIGHT)
@given(data=st.data())
def test_ternary_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(ternary_ops(op), label="program"), backend, reference)


@st.composite
def reductions(draw: Any, op: str | None = None, dtype: str | None = None) -> Program:
    """``op`` (or one drawn) of REDUCTIONS on a leaf of ``dtype`` (or one drawn): a reduction over a
    dim out of range (which torch refuses), then over everything and over one dim (or a list of
    dims: see dims_of), with keepdim, of var/std a correction now and then, of nansum/nanmean a
    dtype (max/min over a dim return (values, indices), both read and observed); or a scan (cumsum,
    cumprod, now and then into another dtype; logcumsumexp; cummax, cummin with their indices) or a
    flip along dims. Each result backpropagated twice."""
    op = op or draw(st.sampled_from(REDUCTIONS))
    p = OpProgram(draw)
    edges = dtype is None and draw(st.integers(0, EDGE_EVERY - 1)) == 0
    shape = (len(REDUCTION_EDGES), 3) if edges else draw(st.sampled_from(OP_SHAPES))
    dtype = dtype or dtype_of(draw, ALL_DTYPES if draw(st.integers(0, 2)) == 0 else FLOAT_DTYPES)
    if edges:  # every edge of REDUCTION_EDGES, in a float leaf requiring grad
        dtype = dtype_of(draw)
        x = p.given([list(row) for row in REDUCTION_EDGES], dtype, grad=True)
    elif op in (*SELECTING_SCANS, "aminmax") or (
        op in LOG_SUM_EXP and dtype in FLOAT_DTYPES and draw(st.booleans())
    ):
        # ties and NaN (see selection_data), or values whose exp overflows (unless the max is taken out)
        data = selection_data(draw, shape, dtype) if op in SELECTING_SCANS else large_data(draw, shape)
        x = p.given(data, dtype, grad=dtype in FLOAT_DTYPES and draw(st.booleans()))
    else:
        edge = draw(st.integers(0, 3)) == 0 or op in (*NAN_REDUCTIONS, *TWO_OUTPUTS) and draw(st.booleans())
        x = p.leaf(shape, dtype, edge=edge)
    rank = max(len(shape), 1)
    if op in ("cumsum", "cumprod"):
        into = {"dtype": DType(draw(st.sampled_from(ALL_DTYPES)))} if draw(st.integers(0, 3)) == 0 else {}
        return p.end(p.op(op, Ref(x), draw(st.integers(-rank, rank)), **into))
    if op == "logcumsumexp":
        return p.end(p.op(op, Ref(x), draw(st.integers(-rank, rank))))
    if op in ("cummax", "cummin"):  # (values, indices), both read and observed
        return p.end(values_of(p, p.op(op, Ref(x), draw(st.integers(-rank, rank)))))
    if op == "flip":
        return p.end(p.op(op, Ref(x), draw(st.lists(st.integers(-rank, rank), max_size=3))))
    if op in TWO_OUTPUTS:
        return p.end(*two_outputs(draw, p, op, x, len(shape)))
    bad_dim = draw(st.sampled_from((rank, -rank - 1)))  # torch raises: nothing bound, nothing observed
    p.steps.append(Op(p.fresh("t"), op, [Ref(x), bad_dim], {}))
    dim = draw(st.integers(-rank, rank - 1))
    ends = [reduced(draw, p, op, x, None, len(shape)), reduced(draw, p, op, x, dim, len(shape))]
    if op in ("max", "min") and draw(st.integers(0, 2)) == 0:  # of two tensors: maximum's, minimum's
        ends.append(p.op(op, Ref(x), Ref(p.leaf(broadcast_partner(draw, shape), dtype, edge=True))))
    if edges:  # and every form of its keyword arguments, over dim 1
        ends += [p.op(op, Ref(x), 1, **form) for form in REDUCTION_FORMS.get(op, ())]
    return p.end(*ends)


def large_data(draw: Any, shape: tuple[int, ...]) -> Any:
    """Values of ``shape`` from LARGE_VALUES: exp overflows float32 and float16 on them."""
    values = [draw(st.sampled_from(LARGE_VALUES)) for _ in range(math.prod(shape))]
    return np.array(values).reshape(shape).tolist()


def reduced(draw: Any, p: OpProgram, op: str, x: str, dim: int | None, ndim: int) -> str:
    """``op`` of ``x`` over ``dim`` or (None) over everything; of max/min over a dim, the values."""
    if dim is None and (op in ("max", "min") or (op not in DIM_REQUIRED and draw(st.booleans()))):
        return p.op(op, Ref(x))
    kwargs: dict[str, Any] = {} if op == "count_nonzero" else {"keepdim": draw(st.booleans())}
    if op in REDUCTION_FORMS and draw(st.booleans()):
        kwargs.update(draw(st.sampled_from(REDUCTION_FORMS[op])))
    if op in NAN_REDUCTIONS and draw(st.integers(0, 2)) == 0:
        kwargs["dtype"] = DType(draw(st.sampled_from(("float32", "float64", "int64"))))
    result = p.op(op, Ref(x), dims_of(draw, op, dim, ndim), **kwargs)
    return values_of(p, result) if op in ("max", "min") else result


def two_outputs(draw: Any, p: OpProgram, op: str, x: str, ndim: int) -> list[str]:
    """aminmax's (min, max) or var_mean/std_mean's (spread, mean) of ``x``: a dim out of range
    (refused), then three calls with the same drawn arguments, each on its own copy of the leaf (so
    each .grad shows one path), the first backpropagated through the sum of both outputs, the others
    through one output alone (the node gets an undefined gradient for the other, which torch's
    formula skips)."""
    rank = max(ndim, 1)
    bad_dim = draw(st.sampled_from((rank, -rank - 1)))
    dim = draw(st.sampled_from((None, *range(-rank, rank))))
    if op == "aminmax":  # dim and keepdim are keyword-only
        p.steps.append(Op(p.fresh("t"), op, [Ref(x)], {"dim": bad_dim}))
        args: list[Any] = [Ref(x)]
        kwargs: dict[str, Any] = {} if dim is None else {"dim": dim, "keepdim": draw(st.booleans())}
    else:
        p.steps.append(Op(p.fresh("t"), op, [Ref(x), bad_dim], {}))
        args, kwargs = spread_arguments(draw, p, op, x, dim, ndim)
    first = p.op(op, *args, **kwargs)
    both = p.op("add", Ref(p.op("__getitem__", Ref(first), 0)), Ref(p.op("__getitem__", Ref(first), 1)))
    results = [both]
    leaf = next(step for step in p.steps if isinstance(step, Leaf) and step.name == x)
    for i in (0, 1):
        copy = p.given(leaf.data, leaf.dtype, grad=leaf.requires_grad)
        call = p.op(op, Ref(copy), *args[1:], **kwargs)
        results.append(p.op("__getitem__", Ref(call), i))
        p.names.remove(call)  # a pair, not a tensor
    p.names.remove(first)
    return results


def spread_arguments(draw: Any, p: OpProgram, op: str, x: str, dim: int | None, ndim: int) -> tuple:
    """var_mean/std_mean's arguments: over everything, a dim, every dim or a dim with another (maybe
    the same, which torch refuses); with keepdim, ``unbiased`` or a correction now and then. First,
    ``unbiased`` and ``correction`` together, which torch refuses. Never an empty dim list: torch
    2.13's var_backward takes it for no reduction (a torch bug, not a behaviour to match)."""
    rank = max(ndim, 1)
    if dim is not None:
        p.steps.append(Op(p.fresh("t"), op, [Ref(x), dim, True], {"correction": 1}))
        dim = draw(
            st.sampled_from((dim, list(range(ndim)) or None, [dim, draw(st.integers(-rank, rank - 1))]))
        )
    kwargs: dict[str, Any] = {"keepdim": draw(st.booleans())}
    how = draw(st.sampled_from(("default", "unbiased", "correction")))
    if how == "unbiased":  # without a dim, (input, unbiased) takes no keepdim
        kwargs = {"unbiased": draw(st.booleans()), **(kwargs if dim is not None else {})}
    elif how == "correction":
        kwargs["correction"] = draw(st.sampled_from((0, 1, 2, 0.5)))
    return [Ref(x)] if dim is None else [Ref(x), dim], kwargs


def values_of(p: OpProgram, result: str) -> str:
    """The values of a (values, indices) result, both read and observed."""
    p.op("__getitem__", Ref(result), 1)  # the indices
    values = p.op("__getitem__", Ref(result), 0)
    p.names.remove(result)  # a (values, indices) pair, not a tensor
    return values


def dims_of(draw: Any, op: str, dim: int | None, ndim: int) -> Any:
    """The dim argument of ``op`` reducing over ``dim``, or (None) over everything: of the ops
    taking a list of dims, now and then ``dim`` with another (maybe the same, which torch
    refuses), and for everything None, every dim or an empty list (over everything, or of all/any
    over nothing)."""
    if op not in LIST_DIMS:
        return [] if dim is None and op == "amax" else dim
    if dim is None:
        choices = ([], list(range(ndim))) if op in DIM_REQUIRED else (None, [], list(range(ndim)))
        return draw(st.sampled_from(choices))
    if draw(st.booleans()):
        return [dim, draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))]
    return dim


@pytest.mark.rule("OPS-003")
@pytest.mark.parametrize("op", REDUCTIONS)
@examples(REDUCTION_WEIGHT)
@given(data=st.data())
def test_reductions(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(reductions(op), label="program"), backend, reference)


@pytest.mark.rule("OPS-003")
@pytest.mark.parametrize("dtype", INTEGRAL_DTYPES)
@pytest.mark.parametrize("op", REDUCTIONS)
@examples(INTEGRAL_REDUCTION_WEIGHT)
@given(data=st.data())
def test_reductions_of_integers(
    op: str, dtype: str, data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    """Each reduction on each integer dtype and bool (which test_reductions draws by luck)."""
    check(data.draw(reductions(op, dtype), label="program"), backend, reference)


# (left shape, right shape) of matmul; some do not fit, which torch rejects
NORMS = ("linalg.vector_norm", "linalg.matrix_norm", "linalg.norm", "norm")
VECTOR_ORDS = (2, 1, 0, INF, -INF, 3, 0.5, 1.5, -1, -2.5)
MATRIX_ORDS = ("fro", 1, -1, INF, -INF)
NORM_SHAPES = ((), (3,), (2, 3), (3, 1), (2, 1, 3), (2, 2, 3))
NORM_WEIGHT = 0.3


def norm_data(draw: Any, shape: tuple[int, ...], dtype: str) -> Any:
    """Values of ``shape`` for a norm: drawn (edge values now and then), a first row of zeros (a
    zero norm along the other dims: torch's subgradient), all zeros, or ties of |x| (the inf
    norm's shared gradient)."""
    kind = draw(st.sampled_from(("drawn", "edge", "zero row", "zeros", "ties")))
    data = np.array(op_data(draw, shape, dtype, edge=kind == "edge"), dtype=float)
    if kind == "ties":
        ties = [draw(st.sampled_from((-2.0, 2.0, 1.0, 0.0))) for _ in range(data.size)]
        data = np.array(ties).reshape(shape)
    elif kind == "zeros" or kind == "zero row" and not shape:
        data = data * 0
    elif kind == "zero row":
        data[0] = 0
    return data.tolist()


def two_dims(draw: Any, ndim: int) -> list[int]:
    first = draw(st.integers(-ndim, ndim - 1))
    second = draw(st.integers(-ndim, ndim - 1).filter(lambda d: d % ndim != first % ndim))
    return [first, second]


def norm_arguments(draw: Any, op: str, ndim: int) -> tuple[list, dict[str, Any]]:
    """Arguments of ``op`` that torch takes: an order, dims (None, one, a list; two different
    ones for a matrix norm), keepdim and, now and then, a wider dtype."""
    rank = max(ndim, 1)
    kwargs: dict[str, Any] = {"keepdim": draw(st.booleans())}
    if draw(st.integers(0, 3)) == 0:
        kwargs["dtype"] = DType("float64")
    matrix = op == "linalg.matrix_norm" or op != "linalg.vector_norm" and ndim >= 2 and draw(st.booleans())
    if matrix:
        ord = draw(st.sampled_from(MATRIX_ORDS))
        dim: Any = two_dims(draw, ndim)
        if op == "linalg.norm" and ndim == 2 and draw(st.booleans()):
            dim = None
        if op == "norm" and ord != "fro":  # torch.norm takes numbers for vector norms only
            ord, dim = "fro", dim if draw(st.booleans()) else None
    else:
        ord = draw(st.sampled_from((*VECTOR_ORDS, None)))
        dim = draw(st.sampled_from((None, draw(st.integers(-rank, rank - 1)), list(range(ndim)))))
        if op == "linalg.norm" and dim is None and ord is not None and ndim not in (1, 2):
            ord = None
        if op == "linalg.norm" and isinstance(dim, list) and len(dim) not in (1, 2):
            dim = None
        if op == "linalg.norm" and isinstance(dim, list) and len(dim) == 2 and ord is not None:
            ord = draw(st.sampled_from(MATRIX_ORDS[1:]))  # a matrix norm (2 and -2 need an SVD)
        if op == "linalg.norm" and dim is None and ndim == 2 and ord is not None:
            dim = draw(st.integers(-rank, rank - 1))
        if op == "linalg.vector_norm" and ord is None:
            ord = 2
    if op == "norm" and ord is None and draw(st.booleans()):
        ord = "fro"
    return [ord, dim], kwargs


NORM_ERRORS = (
    ("linalg.vector_norm", ["fro"], {}),
    ("linalg.vector_norm", [2, 5], {}),
    ("linalg.vector_norm", [2, [0, 0]], {}),
    ("linalg.vector_norm", [2], {"dtype": DType("int64")}),
    ("linalg.matrix_norm", [3], {}),
    ("linalg.matrix_norm", ["abc"], {}),
    ("linalg.matrix_norm", ["fro", [0]], {}),
    ("linalg.norm", [2, [0, 1, 2]], {}),
    ("norm", ["abc"], {}),
)


@st.composite
def norm_programs(draw: Any, op: str) -> Program:
    """``op`` of NORMS on a float leaf (zero rows, zeros and ties now and then): twice with drawn
    arguments (an order, dims, keepdim, a wider dtype), then a call torch refuses (an integer
    input, a bad order, dim or dtype); each result backpropagated twice."""
    p = OpProgram(draw)
    shapes = [s for s in NORM_SHAPES if op != "linalg.matrix_norm" or len(s) >= 2]
    shape = draw(st.sampled_from(shapes))
    dtype = dtype_of(draw)
    x = p.given(norm_data(draw, shape, dtype), dtype, grad=draw(st.integers(0, 4)) > 0)
    ends = []
    for _ in range(2):
        args, kwargs = norm_arguments(draw, op, len(shape))
        ends.append(p.op(op, Ref(x), *args, **kwargs))
    if draw(st.booleans()):  # an integer input
        p.steps.append(Op(p.fresh("t"), op, [Ref(p.leaf(shape or (3,), "int64"))], {}))
    else:
        bad, args, kwargs = draw(st.sampled_from(NORM_ERRORS))
        p.steps.append(Op(p.fresh("t"), bad, [Ref(x), *args], kwargs))
    return p.end(*ends)


@pytest.mark.rule("OPS-003")
@pytest.mark.parametrize("op", NORMS)
@examples(NORM_WEIGHT)
@given(data=st.data())
def test_norms(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(norm_programs(op), label="program"), backend, reference)


DISTANCES = ("cdist", "cosine_similarity", "pairwise_distance")
DISTANCE_PS = (2, 1, 0, INF, 3, 0.5, 1.5)
CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist")
CDIST_MODES += ("donot_use_mm_for_euclid_dist",)
DISTANCE_ERRORS = {
    "cdist": ([(3,), (2, 3)], [(2, 3), (2, 4)], [(2, 2, 3), (3, 2, 3)]),
    "cosine_similarity": ([(2, 3), (3, 3)],),
    "pairwise_distance": ([(2, 3), (3, 4)],),
}
# the module form of a distance, and its constructor's defaults (an option equal to its default is
# left out of the constructor call)
DISTANCE_MODULES = {
    "cosine_similarity": ("CosineSimilarity", {"dim": 1, "eps": 1e-8}),
    "pairwise_distance": ("PairwiseDistance", {"p": 2, "eps": 1e-6, "keepdim": False}),
}


@st.composite
def distance_programs(draw: Any, op: str) -> Program:
    """``op`` of DISTANCES on two float leaves (rows of zeros and ties now and then): cdist with a
    drawn p and compute mode, batched or not, with more than 25 rows now and then (torch's matrix
    product path); cosine_similarity along a drawn dim with broadcasting and eps; pairwise_distance
    with p, eps and keepdim; the latter two also as modules (nn.CosineSimilarity,
    nn.PairwiseDistance, printed) built with the same options and called on the same leaves; then a
    call torch refuses (shapes that do not fit, an integer input)."""
    p = OpProgram(draw)
    dtype = dtype_of(draw, ("float32", "float64"))
    m = draw(st.integers(1, 4))
    if op == "cdist":
        rows = draw(st.sampled_from((1, 2, 3, 27)))
        batch = draw(st.sampled_from(((), (2,))))
        shapes = [(*batch, rows, m), (draw(st.integers(1, 3)), m)]
        kwargs: dict[str, Any] = {"p": draw(st.sampled_from(DISTANCE_PS))}
        kwargs["compute_mode"] = draw(st.sampled_from(CDIST_MODES))
    elif op == "cosine_similarity":
        shapes = [(2, m), draw(st.sampled_from(((2, m), (m,), (1, m))))]
        kwargs = {"dim": draw(st.sampled_from((1, -1, 0))), "eps": draw(st.sampled_from((1e-8, 0.5)))}
    else:
        shapes = [(2, m), draw(st.sampled_from(((2, m), (m,))))]
        kwargs = {"p": draw(st.sampled_from(DISTANCE_PS)), "eps": draw(st.sampled_from((1e-6, 0.0)))}
        kwargs["keepdim"] = draw(st.booleans())
    x1, x2 = (p.given(norm_data(draw, s, dtype), dtype, grad=draw(st.integers(0, 4)) > 0) for s in shapes)
    ends = [p.op(op, Ref(x1), Ref(x2), **kwargs)]
    if op in DISTANCE_MODULES:  # no draw: the functional call's options, those not at their default
        cls, defaults = DISTANCE_MODULES[op]
        name, out = p.fresh("m"), p.fresh("t")
        options = {k: v for k, v in kwargs.items() if v != defaults[k]}
        p.steps += [Module(name, cls, kwargs=options), ObserveRepr(name), CallModule(out, name, [x1, x2])]
        p.names.append(out)
        ends.append(out)
    if draw(st.booleans()):
        bad = [Ref(p.leaf(s, "float32", grad=False)) for s in draw(st.sampled_from(DISTANCE_ERRORS[op]))]
    else:
        bad = [Ref(p.leaf((2, 3), "int64")), Ref(p.leaf((2, 3), "int64"))]
    p.steps.append(Op(p.fresh("t"), op, bad, {}))
    return p.end(*ends)


@pytest.mark.rule("OPS-003")
@pytest.mark.parametrize("op", DISTANCES)
@examples(NORM_WEIGHT)
@given(data=st.data())
def test_distances(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(distance_programs(op), label="program"), backend, reference)


MATMUL_SHAPES = (
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3, 2)),
    ((2, 2, 3), (3, 2)),
    ((2, 2, 3), (2, 3, 1)),
    ((1, 2, 3), (2, 3, 2)),
    ((2, 3), (2, 3)),
)


@st.composite
def matrix_ops(draw: Any, op: str | None = None) -> Program:
    """``op`` (or one drawn) of MATRIX: matmul/@ over 1-d, 2-d and batched shapes; mm, bmm, addmm (broadcast
    bias, alpha/beta) or trace. Then backpropagated twice."""
    op = op or draw(st.sampled_from(MATRIX))
    p = OpProgram(draw)
    dtype = float_or_int(draw, ("float32", "float64"))
    if op in ("matmul", "__matmul__"):
        sa, sb = draw(st.sampled_from(MATMUL_SHAPES))
        return p.end(p.op(op, Ref(p.leaf(sa, dtype)), Ref(p.leaf(sb, dtype))))
    if op in ("mm", "addmm"):
        n, k, m = (draw(st.integers(1, 3)) for _ in range(3))
        a = p.leaf((n, k), dtype)
        b = p.leaf((draw(st.sampled_from((k, k, k + 1))) if op == "mm" else k, m), dtype)
        if op == "mm":
            return p.end(p.op("mm", Ref(a), Ref(b)))
        c = p.leaf(draw(st.sampled_from(((n, m), (m,), (1, m), ()))), dtype)
        return p.end(p.op("addmm", Ref(c), Ref(a), Ref(b), **draw(st.sampled_from(SCALES))))
    if op in ("addmv", "addr", "addbmm"):
        return add_product(draw, p, op, dtype)
    if op == "adjoint":  # (of a vector refused; of a 0-d tensor: the tensor itself, with a warning)
        shape = draw(st.sampled_from(((2, 3), (2, 1, 3), (3,), ())))
        return p.end(p.op("adjoint", Ref(p.leaf(shape, dtype))))
    if op == "chain_matmul":  # (of a vector, or sizes that do not chain, refused)
        return p.end(p.op(op, *(Ref(p.leaf(s, dtype)) for s in draw(st.sampled_from(CHAIN_SHAPES)))))
    if op in VECTOR_PRODUCT_SHAPES:
        sa, sb = draw(st.sampled_from(VECTOR_PRODUCT_SHAPES[op]))
        return p.end(p.op(op, Ref(p.leaf(sa, dtype)), Ref(p.leaf(sb, dtype))))
    if op == "bmm":
        a = p.leaf((2, 2, 3), dtype)
        b = p.leaf(draw(st.sampled_from(((2, 3, 2), (2, 3, 1), (1, 3, 2)))), dtype)
        return p.end(p.op("bmm", Ref(a), Ref(b)))
    if op == "einsum":
        return einsum_program(draw, p, dtype)
    return p.end(p.op("trace", Ref(p.leaf(draw(st.sampled_from(((2, 3), (3, 3), (1, 2)))), dtype))))


def add_product(draw: Any, p: OpProgram, op: str, dtype: str) -> Program:
    """addmv, addr or addbmm of leaves of ``dtype`` (now and then an inner size torch refuses), the
    input broadcast or not, with beta and alpha."""
    n, k, m = (draw(st.integers(1, 3)) for _ in range(3))
    bad = draw(st.sampled_from((0, 0, 0, 1)))
    if op == "addmv":
        operands, inputs = ((n, k), (k + bad,)), ((n,), (1,), ())
    elif op == "addr":
        operands, inputs = ((n,), (m,) if not bad else (m, 1)), ((n, m), (m,), (1, m), ())
    else:
        b = draw(st.integers(1, 3))
        operands, inputs = ((b, n, k), (b, k + bad, m)), ((n, m), (m,), ())
    leaves = [Ref(p.leaf(shape, dtype)) for shape in (draw(st.sampled_from(inputs)), *operands)]
    return p.end(p.op(op, *leaves, **draw(st.sampled_from(SCALES))))


# einsum's equations, each with operand shapes that fit (size-1 dims broadcast): products, batch
# products, traces and diagonals, outer products, transposes, sums, implicit outputs (``...``, then the
# subscripts seen once, capitals first), ellipses, three operands, and equations torch refuses
EINSUM_FORMS = (  # an implicit output whose subscripts are not in sorted order first: drawn most
    ("cab", ((2, 3, 1),)), ("ij,jk->ik", ((2, 3), (3, 4))), ("ij,jk", ((2, 3), (3, 1))),
    ("bij,bjk->bik", ((2, 2, 3), (2, 3, 2))),
    ("ii->", ((3, 3),)), ("ii->i", ((3, 3),)), ("ii", ((2, 2),)), ("bii->bi", ((2, 3, 3),)),
    ("i,j->ij", ((3,), (2,))), ("i,i->", ((3,), (3,))), ("i,i", ((3,), (1,))), ("ij->ji", ((2, 3),)),
    ("ba", ((2, 3),)), ("ij->", ((2, 3),)), ("ij->j", ((2, 3),)), ("ij,ij->i", ((2, 3), (2, 3))),
    ("ij,ij->ij", ((2, 3), (1, 3))), ("...ij,...jk->...ik", ((2, 2, 3), (3, 2))),
    ("...ii->...", ((2, 3, 3),)),
    ("b...->...b", ((2, 3, 1),)), ("Ab,bA", ((2, 3), (3, 2))), ("ij,jk,kl->il", ((2, 3), (3, 2), (2, 2))),
    ("i,,j", ((2,), (), (3,))), ("ij,jk->ik", ((2, 3), (2, 3))), ("ij->ii", ((2, 3),)), ("ij", ((3,),)),
    ("i,j->k", ((2,), (3,))), ("iij->", ((2, 3, 3),)), ("ij;jk", ((2, 3), (3, 4))), ("i.j", ((2, 3),)),
)


def einsum_program(draw: Any, p: OpProgram, dtype: str) -> Program:
    """einsum of one of EINSUM_FORMS (its operands as arguments or one list), on leaves of ``dtype``."""
    equation, shapes = draw(st.sampled_from(EINSUM_FORMS))
    operands = [Ref(p.leaf(shape, dtype, edge=draw(st.booleans()))) for shape in shapes]
    spread = draw(st.booleans())
    return p.end(p.op("einsum", equation, *operands) if spread else p.op("einsum", equation, operands))


@pytest.mark.rule("OPS-004")
@pytest.mark.parametrize("op", MATRIX[:-1])
@examples(MATRIX_WEIGHT)
@given(data=st.data())
def test_matrix_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(matrix_ops(op), label="program"), backend, reference)


@pytest.mark.rule("OPS-004")
@examples(EINSUM_WEIGHT)
@given(data=st.data())
def test_einsum(data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(matrix_ops("einsum"), label="program"), backend, reference)


@st.composite
def gather_and_friends(draw: Any, kind: str | None = None) -> Program:
    """Of ``kind`` (or one drawn): cat/stack of two tensors, gather, index_select (indices in
    range, often repeated, after now and then a read torch rejects; now and then of a 0-d
    tensor), masked_fill, softmax or log_softmax over a dim."""
    kind = kind or draw(st.sampled_from(GATHER_KINDS))
    p = OpProgram(draw)
    dtype = float_or_int(draw)
    shape = draw(st.sampled_from(((3,), (2, 3), (1, 3), (2, 1, 3))))
    rank = len(shape)
    dim = draw(st.integers(-rank, rank - 1 + (draw(st.integers(0, 5)) == 0)))
    x = p.leaf(shape, dtype, edge=draw(st.integers(0, 4)) == 0)
    size = shape[dim % rank if -rank <= dim < rank else 0]  # of the dim gather and index_select read
    if kind in ("cat", "stack"):
        other_dtype = dtype_of(draw, ALL_DTYPES) if draw(st.integers(0, 2)) == 0 else dtype  # promoted
        other = p.leaf(draw(st.sampled_from((shape, shape[1:] or (2,)))), other_dtype)
        y = p.op(kind, [Ref(x), Ref(other)], dim)
    elif kind in ("gather", "index_select") and draw(st.integers(0, 2)) == 0:
        y = zero_dim_read(draw, p, kind, dtype)
    elif kind in ("gather", "index_select"):
        if kind == "gather":  # along the dim, gather's index may be longer than the input
            sizes = [3 if d == dim % rank else s for d, s in enumerate(shape)]
            index_shape = tuple(draw(st.integers(1, s)) for s in sizes)
            if draw(st.integers(0, 5)) == 0:  # an empty index of any number of dims is not checked
                index_shape = (0,)
        else:
            index_shape = (draw(st.integers(1, 4)),)
        if draw(st.booleans()):  # first a read torch rejects: an index negative or out of
            # range or not an integer one, or of gather, an index of a shape gather refuses
            read = index_shape if math.prod(index_shape) else (1,) * rank
            if kind == "gather" and draw(st.booleans()):
                bad = p.indices(read_indices(draw, misfit(draw, shape, read, dim % rank), size))
            elif draw(st.booleans()):
                bad = p.indices(read_indices(draw, read, size), draw(st.sampled_from(INVALID_INDICES)))
            else:
                bad = p.indices(read_indices(draw, read, size, bad=True))
            p.op(kind, Ref(x), dim, Ref(bad))
        index = p.indices(read_indices(draw, index_shape, size), draw(st.sampled_from(("int64", "int32"))))
        y = p.op(kind, Ref(x), dim, Ref(index))
    elif kind == "take":  # flat indices, negative too, often repeated; now and then int32 or out of range
        n = math.prod(shape)
        index_shape = draw(st.sampled_from(((3,), (2, 2), (), (0,))))
        flat = [draw(st.integers(1, n)) * sign for sign in
                (draw(st.sampled_from((-1, 1))) for _ in range(math.prod(index_shape)))]
        flat = [i if i < 0 else i - 1 for i in flat]  # negative ones count from the end
        if flat and draw(st.integers(0, 5)) == 0:
            flat[0] = draw(st.sampled_from((n, -n - 1)))
        data = np.array(flat, dtype=np.int64).reshape(index_shape).tolist()
        index_dtype = "int64" if draw(st.integers(0, 5)) else "int32"
        y = p.op("take", Ref(x), Ref(p.indices(data, index_dtype)))
    elif kind == "one_hot":  # int64 indices: now and then of another dtype, negative, too large or none
        classes = draw(st.sampled_from((-1, 4, 3, 0, -2)))
        bad = draw(st.integers(0, 4)) == 0
        data = [] if draw(st.integers(0, 5)) == 0 else read_indices(draw, shape, 4, bad=bad)
        index_dtype = "int64" if draw(st.integers(0, 4)) else draw(st.sampled_from(INVALID_INDICES))
        how = draw(st.sampled_from(("position", "keyword", "absent")))  # (absent: the default, -1)
        given = {"absent": ((), {}), "position": ((classes,), {}), "keyword": ((), {"num_classes": classes})}
        args, kwargs = given["absent" if classes == -1 and how == "absent" else how]
        y = p.op("nn.functional.one_hot", Ref(p.indices(data, index_dtype)), *args, **kwargs)
    elif kind == "masked_fill":
        mask = p.leaf(broadcast_partner(draw, shape), "bool", grad=False)
        value: Any = draw(st.sampled_from((0.0, -1.5, float("-inf"))))
        if draw(st.integers(0, 2)) == 0:  # a 0-d tensor (of another dtype, which torch casts)
            value = Ref(p.given(value, dtype_of(draw, ("float32", "float64"))))
        y = p.op("masked_fill", Ref(x), Ref(mask), value)
    else:  # float16 gradients of a softmax's sum cancel to rounding noise: float32/64 only
        dtype = dtype_of(draw, ("float32", "float64"))
        x = p.leaf(shape, dtype, grad=True, edge=draw(st.integers(0, 2)) == 0)
        if draw(st.integers(0, EDGE_EVERY - 1)) == 0:  # a -inf: a zero of the softmax, whose gradient is 0
            data = np.array(next(s for s in p.steps if getattr(s, "name", None) == x).data, dtype=float)
            data.reshape(-1)[0] = -INF
            x = p.given(data.tolist(), dtype_of(draw, ("float32", "float64")), grad=True)
        into = {"dtype": DType(draw(st.sampled_from(("float64", "float32"))))} if draw(st.booleans()) else {}
        y = p.op(kind, Ref(x), dim, **into)
    return p.end(y)


def zero_dim_read(draw: Any, p: OpProgram, kind: str, dtype: str) -> str:
    """gather or index_select where torch reads a 0-d tensor as 1-d of size 1: a 0-d input (gather
    then takes any number of zeros, index_select exactly one index, else an error) or a 1-d input
    with a 0-d index."""
    if draw(st.booleans()):
        x = p.leaf((), dtype)
        index = draw(st.sampled_from((0, [0], [0, 0]) if kind == "index_select" else (0, [0, 0, 0])))
    else:
        x = p.leaf((3,), dtype)
        index = draw(st.integers(0, 2))
    return p.op(kind, Ref(x), draw(st.sampled_from((0, -1))), Ref(p.indices(index)))


def index_data(draw: Any, shape: tuple[int, ...], size: int) -> Any:
    """Integer indices into a dim of ``size`` (now and then one out of range)."""
    high = size if draw(st.integers(0, 5)) == 0 else size - 1
    if not shape:
        return draw(st.integers(-size if high < size else 0, high))
    return [index_data(draw, shape[1:], size) for _ in range(shape[0])]


def misfit(draw: Any, shape: tuple[int, ...], index_shape: tuple[int, ...], dim: int) -> tuple[int, ...]:
    """An index shape gather refuses for an input of ``shape``: longer than the input along a dim
    other than ``dim``, or with one dim more."""
    others = [d for d in range(len(shape)) if d != dim]
    if others and draw(st.booleans()):
        d = draw(st.sampled_from(others))
        return index_shape[:d] + (shape[d] + 1,) + index_shape[d + 1 :]
    return (1, *index_shape)


def read_indices(draw: Any, shape: tuple[int, ...], size: int, bad: bool = False) -> Any:
    """Indices of ``shape`` for gather and index_select into a dim of ``size``: in range and
    non-negative (they refuse negative ones), often repeated (a repeated index gets the sum of its
    gradients); with ``bad``, one of them negative or out of range."""
    flat = np.array([draw(st.integers(0, size - 1)) for _ in range(math.prod(shape))])
    if bad:
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from((-1, -size, size)))
    return flat.reshape(shape).tolist()


@pytest.mark.rule("OPS-005")
@pytest.mark.parametrize("kind", GATHER_KINDS)
@examples(GATHER_WEIGHT)
@given(data=st.data())
def test_gather_cat_softmax(kind: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(gather_and_friends(kind), label="program"), backend, reference)


def mixed_key(draw: Any, p: OpProgram, shape: tuple[int, ...]) -> tuple:
    """A key mixing basic items (integers, slices, None, Ellipsis) with advanced ones (lists,
    tuples and ranges, which torch reads as sequences, integer or bool tensors): torch slices first
    (a view; a write then gets CopySlices), then indexes what is left (adjacent advanced items or
    not, which moves the result's dims)."""
    first = draw(st.integers(0, len(shape) - 1))  # the dim of the first advanced item
    items: list[Any] = []
    for d, size in enumerate(shape):
        if d == first or (d > first and draw(st.integers(0, 2)) == 0):
            kind = draw(st.sampled_from(("list", "tensor", "mask", "sequence")))
            if kind == "list":
                items.append(index_data(draw, (draw(st.integers(1, 3)),), size))
            elif kind == "sequence":
                items.append(sequence_key(draw, size))
            elif kind == "tensor":
                items.append(Ref(p.index((draw(st.integers(1, 2)),), size)))
            else:
                items.append(Ref(p.leaf((size,), "bool", grad=False)))
        elif draw(st.booleans()):
            items.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.none() | st.integers(-size, size)
            items.append(slice(draw(bound), draw(bound), draw(st.sampled_from((None, 1, 2)))))
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if items and items[0] == slice(None) and draw(st.booleans()):
        items[0] = Ellipsis
    elif draw(st.booleans()):
        items.append(Ellipsis)
    return tuple(items)


def sequence_key(draw: Any, size: int) -> Any:
    """An index item torch reads as a sequence and turns into a tensor: a range (now and then
    empty, or past the end) or a tuple of integers."""
    if draw(st.integers(0, 2)) == 2:
        return tuple(index_data(draw, (draw(st.integers(1, 3)),), size))
    start = draw(st.integers(0, size - 1))
    stop = draw(st.sampled_from((size, size, size, start, size + 1)))
    return range(start, stop, draw(st.sampled_from((2, 1))))


@st.composite
def indexing(draw: Any) -> Program:
    """An indexing read (integer, list, integer or bool tensor, a key mixing basic and advanced
    items, narrow, select; narrow_copy's copy) of a tensor, or a write (__setitem__) into a non-leaf
    copy of it, then backward."""
    p = OpProgram(draw)
    dtype = dtype_of(draw)
    shape = draw(st.sampled_from(((3,), (2, 3), (3, 1), (2, 1, 3))))
    x = p.leaf(shape, dtype, grad=True)
    kinds = ("int", "list", "tensor", "mask", "mixed", "mixed", "narrow", "select", "range")
    kind = draw(st.sampled_from(kinds))
    index: Any
    if kind == "mixed":
        index = mixed_key(draw, p, shape)
    elif kind == "range":  # a range key: a sequence of integers, an integer tensor index
        index = sequence_key(draw, shape[0])
        index = index if isinstance(index, range) else list(index)
    elif kind == "int":
        index = draw(st.integers(-shape[0], shape[0] - (draw(st.integers(0, 5)) > 0)))
    elif kind == "list":
        index = index_data(draw, (draw(st.integers(1, 4)),), shape[0])
    elif kind == "tensor":
        index = Ref(p.index(draw(st.sampled_from(((), (2,), (2, 2)))), shape[0]))
    elif kind == "mask":
        index = Ref(p.leaf(shape[: draw(st.integers(1, len(shape)))], "bool", grad=False))
    if kind in ("narrow", "select"):
        dim = draw(st.integers(0, len(shape) - 1))
        start = draw(st.integers(0, shape[dim] - 1))
        length = draw(st.integers(1, shape[dim] - start))
        at: Any = Ref(p.indices(start)) if kind == "narrow" and draw(st.booleans()) else start  # a 0-d tensor
        args = (dim, at, length) if kind == "narrow" else (dim, start)
        y = p.op(kind, Ref(x), *args)
        if kind == "narrow":  # and narrow_copy's copy of it (no draw: the other programs stay as drawn)
            return p.end(y, p.op("narrow_copy", Ref(x), *args))
        return p.end(y)
    if draw(st.booleans()):
        y = p.op("__getitem__", Ref(x), index)
        return p.end(y)
    copy = p.op("clone", Ref(x)) if draw(st.booleans()) else p.op("mul", Ref(x), 2.0)
    value: Any = draw(st.sampled_from((0.0, -1.0, 5)))
    if draw(st.booleans()):  # a tensor value: 0-d, leading ones (dropped), or one that may not fit
        value = Ref(p.leaf(draw(st.sampled_from(((), (), (1,), (1, 1), (2,)))), dtype))
    p.steps.append(Op(f"w{len(p.names)}", "__setitem__", [Ref(copy), index, value]))
    p.steps.append(ObserveLayout(copy))
    return p.end(copy)


@pytest.mark.rule("OPS-006")
@settings(deadline=None)
@given(program=indexing())
def test_indexing_reads_and_writes(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def unfold_windows(draw: Any) -> Program:
    """Tensor.unfold (a dim, a window size, 0 too, and a step: windows overlapping or apart) of a
    leaf, then backward (UnfoldBackward0, windows' gradients added back)."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((3,), (2, 3), (4, 1), (2, 1, 3))))
    x = p.leaf(shape, dtype_of(draw), grad=True)
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    size, step = draw(st.integers(0, shape[dim])), draw(st.integers(1, 3))
    return p.end(p.op("unfold", Ref(x), dim, size, step))


@pytest.mark.rule("OPS-006")
@examples(0.1)  # 10 programs in ci (one view op; its kernel is a strided view)
@given(program=unfold_windows())
def test_unfold_windows(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


INPLACE = ("add_", "sub_", "mul_", "div_", "zero_", "fill_", "copy_", "clamp_", "relu_", "masked_fill_")
BEFORE = ("clone", "mul", "sigmoid", "exp", "tanh", "relu", "t", "select")


def inplace_write(draw: Any, p: OpProgram, target: str, shape: tuple[int, ...], dtype: str) -> None:
    """An in-place op (of INPLACE, with its arguments) on ``target``, of ``shape``."""
    op = draw(st.sampled_from(INPLACE))
    args, kwargs = draw(st.sampled_from(inplace_forms(draw, p, op, shape, dtype)))()
    p.op(op, Ref(target), *args, **kwargs)


def inplace_forms(draw: Any, p: OpProgram, op: str, shape: tuple[int, ...], dtype: str) -> list:
    """The forms of in-place ``op``'s other arguments, each a function making them (and the leaves
    they need): numbers and 0-d tensors; add_'s and sub_'s alpha, div_'s rounding modes; of
    clamp_ both bounds or one (at values of the leaves: -0.5, 0.5, 1.0); masked_fill_'s mask."""
    def zero_d(value: float) -> Ref:
        return Ref(p.given(value, dtype))

    def mask() -> Ref:
        return Ref(p.leaf(broadcast_partner(draw, shape), "bool", grad=False))

    if op in ("zero_", "relu_"):
        return [lambda: ([], {})]
    if op in ("fill_", "masked_fill_"):
        masks = (lambda: [mask()]) if op == "masked_fill_" else (lambda: [])
        return [lambda: ([*masks(), 2.5], {}), lambda: ([*masks(), -1.0], {}),
                lambda: ([*masks(), zero_d(0.0)], {})]
    if op == "clamp_":
        bounds = ({"min": -0.5, "max": 1.0}, {"min": 0.5}, {"max": -0.5})
        return [*((lambda b=b: ([], dict(b))) for b in bounds),
                *((lambda b=b: ([], {k: zero_d(v) for k, v in b.items()})) for b in bounds)]
    if op == "copy_":
        return [lambda: ([Ref(p.leaf(broadcast_partner(draw, shape), dtype, grad=True))], {})]
    options = BINARY_OPTIONS.get(op.removesuffix("_"), ())
    return [lambda: ([2.0], {}), lambda: ([-1], {}), lambda: ([Ref(p.leaf((), dtype))], {}),
            *((lambda o=o: ([Ref(p.leaf((), dtype))], dict(o))) for o in options)]


@st.composite
def inplace_ops(draw: Any) -> Program:
    """An op, then an in-place op on its result, its input or a view of it, version counters
    observed, then backward (which raises where torch's does); in one program in three, first an
    in-place op on the leaf itself, which torch refuses (the leaf requires grad)."""
    p = OpProgram(draw)
    dtype = dtype_of(draw, ("float32", "float64"))
    if draw(st.integers(0, EDGE_EVERY - 1)) == 0:
        return p.end(inplace_forms_on_edges(draw, p, dtype))
    shape = draw(st.sampled_from(((3,), (2, 2), (2, 3))))
    x = p.leaf(shape, dtype, grad=True, edge=draw(st.integers(0, 3)) == 0)
    if draw(st.integers(0, 2)) == 0:
        inplace_write(draw, p, x, shape, dtype)
    before = draw(st.sampled_from(BEFORE))
    if before in ("t", "select"):
        base = p.op("mul", Ref(x), 1.5)
        y = p.op(before, Ref(base)) if before == "t" else p.op("select", Ref(base), 0, 0)
        target = draw(st.sampled_from((y, base)))
    else:
        y = p.op(before, Ref(x), *([2.0] if before == "mul" else []))
        target = y
    inplace_write(draw, p, target, shape[1:] if target == y and before == "select" else shape, dtype)
    p.steps.append(ObserveLayout(target))
    p.steps.append(ObserveGraph(y))
    return p.end(y)


def inplace_forms_on_edges(draw: Any, p: OpProgram, dtype: str) -> str:
    """Every in-place op of INPLACE in each of its forms (``inplace_forms``), each on its own
    copy of a leaf holding UNARY_EDGES; the copies stacked."""
    x = edge_leaf(draw, p, dtype)
    copies = []
    for op in INPLACE:
        for form in inplace_forms(draw, p, op, (len(UNARY_EDGES),), dtype):
            copies.append(p.op("mul", Ref(x), 1))
            args, kwargs = form()
            p.op(op, Ref(copies[-1]), *args, **kwargs)
    return p.op("stack", [Ref(c) for c in copies])


@pytest.mark.rule("OPS-007")
@settings(deadline=None)
@given(program=inplace_ops())
def test_inplace_ops(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# -- sorting and selection (OPS-008) -----------------------------------------------------------
SORTING = ("sort", "argsort", "msort", "topk", "kthvalue", "median")
# OPS-011: the reductions whose picks and sums are torch's CPU kernels' (a rule of their own: their
# planted faults' sessions run these tests only)
SELECTING = ("mode", "histogram", "quantile", "nanquantile", "nanmedian", "isin")  # (faulted ones first)
SELECTING_WEIGHT = 0.1
MEDIANS = ("median", "nanmedian")  # of all elements or along a dim
QUANTILES = ("quantile", "nanquantile")
# mode's lanes: long enough for std::sort's introsort (past 16) and few distinct values: its ties
MODE_SHAPES = ((2, 20), (3, 17), (40,), (2, 3))
QUANTILE_QS = (0.0, 0.3, 0.5, 1.0, 1, (0.25, 1.0, 0.5), (0.7,), 0.7)  # a tuple: a 1-d q tensor
SORTING_WEIGHT = 0.4
# lanes of up to three elements: where torch's nth_element is an insertion sort, so its order of
# ties is a rule (the stable one), and kthvalue's quickselect is compared on ties, NaN included
SORT_SHAPES = ((), (1,), (3,), (2, 3), (3, 1), (2, 1, 3), (2, 0))
TIED_VALUES = (0.0, 1.0, 1.0, float("nan"))


def selection_data(draw: Any, shape: tuple[int, ...], dtype: str) -> Any:
    """Values for a sorting op: with ties (NaN among them) half of the time for floating dtypes."""
    if dtype.startswith(("float", "bfloat")) and draw(st.booleans()):
        return (
            np.array([draw(st.sampled_from(TIED_VALUES)) for _ in range(math.prod(shape))])
            .reshape(shape)
            .tolist()
        )
    return op_data(draw, shape, dtype, edge=draw(st.booleans()))


def selected(p: OpProgram, result: str) -> str:
    """The values of a (values, indices) result, both read and observed, then their cumsum along
    the last dim: a gradient that differs per element, so where each one goes back shows."""
    p.op("__getitem__", Ref(result), 1)
    values = p.op("__getitem__", Ref(result), 0)
    p.names.remove(result)  # a (values, indices) pair, not a tensor
    return p.op("cumsum", Ref(values), -1)


@st.composite
def sorting_ops(draw: Any, op: str | None = None) -> Program:
    """``op`` (or one drawn) of SORTING or SELECTING on any dtype with ties and NaN: sort (descending,
    stable), argsort, msort, topk (k from 0, largest or smallest), kthvalue, median and nanmedian (of
    all elements or along a dim, keepdim); mode and the quantiles (their own programs, below); first
    a call torch rejects (a dim out of range, a k out of range, a bool input where there is no
    kernel); the values backpropagated twice."""
    op = op or draw(st.sampled_from(SORTING))
    if op == "mode":
        return mode_program(draw)
    if op in QUANTILES:
        return quantile_program(draw, op)
    p = OpProgram(draw)
    edges = draw(st.integers(0, EDGE_EVERY - 1)) == 0  # lanes with ties, signed zeros and NaN
    shape = (2, 3) if edges else draw(st.sampled_from(SORT_SHAPES))
    rank = max(len(shape), 1)
    selects = op in ("topk", "kthvalue", *MEDIANS)
    dtype = dtype_of(draw, tuple(d for d in ALL_DTYPES if not (selects and d == "bool")))
    if edges:  # (out of order along either dim: where each gradient goes back shows)
        dtype = dtype_of(draw)
        x = p.given([[1.0, NAN, 1.0], [0.0, -0.0, 2.0]], dtype, grad=True)
    else:
        x = p.given(
            selection_data(draw, shape, dtype), dtype, grad=dtype.startswith("float") and draw(st.booleans())
        )
    dim = draw(st.integers(-rank, rank - 1))
    size = shape[dim] if shape else 1
    rejected = draw(st.sampled_from(("dim", "k", "bool") if selects else ("dim",)))
    if rejected == "bool":
        b = p.given(op_data(draw, shape, "bool"), "bool")
        p.steps.append(Op(p.fresh("t"), op, [Ref(b), *((1,) if op not in MEDIANS else ())], {"dim": dim}))
    elif rejected == "k" and op not in MEDIANS:
        p.steps.append(Op(p.fresh("t"), op, [Ref(x), draw(st.sampled_from((-1, size + 1)))], {"dim": dim}))
    else:
        k = (1,) if op in ("topk", "kthvalue") else ()
        p.steps.append(Op(p.fresh("t"), op, [Ref(x), *k], {"dim": draw(st.sampled_from((rank, -rank - 1)))}))
    if op == "msort":
        return p.end(p.op("cumsum", Ref(p.op(op, Ref(x))), -1))
    if op in MEDIANS and draw(st.booleans()):
        return p.end(p.op(op, Ref(x)))
    if op in MEDIANS and edges:  # and of all of an even count without NaN: the lower middle, tied
        even = p.given([[2.0, 0.0], [2.0, 3.0]], dtype, grad=True)
        return p.end(selected(p, p.op(op, Ref(x), dim)), p.op(op, Ref(even)))
    if op in ("sort", "argsort"):
        kwargs: dict[str, Any] = {"descending": draw(st.booleans())}
        stables = (True, False, None) if op == "sort" else (True, False)
        if draw(st.booleans()):
            kwargs["stable"] = draw(st.sampled_from(stables))
        forms = [kwargs]
        if edges:  # and every stable, descending the other way
            forms += [{"stable": stable, "descending": not kwargs["descending"]} for stable in stables]
        # (with stable, torch takes dim by keyword only)
        results = [p.op(op, Ref(x), dim=dim, **form) for form in forms]
        return p.end(*(results if op == "argsort" else [selected(p, r) for r in results]))
    if op == "topk":
        kwargs = {"largest": draw(st.booleans()), "sorted": draw(st.booleans())}
        return p.end(selected(p, p.op(op, Ref(x), draw(st.integers(0, size)), dim, **kwargs)))
    # k in 1..size; an empty dim takes k=1, which torch rejects (the empty dim first)
    args = [draw(st.integers(1, size)) if size else 1] if op == "kthvalue" else []
    return p.end(selected(p, p.op(op, Ref(x), *args, dim, keepdim=draw(st.booleans()))))


def mode_program(draw: Any) -> Program:
    """mode along a dim (keepdim drawn) of lanes of few distinct values (NaN among them for floating
    dtypes, bool included), long ones half of the time; first a dim out of range; the values
    backpropagated twice."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(MODE_SHAPES))
    dtype = dtype_of(draw, ALL_DTYPES)
    pool = (0.0, 1.0, 2.0, NAN) if dtype.startswith("float") else (0, 1, 2)
    values = [draw(st.sampled_from(pool)) for _ in range(math.prod(shape))]
    grad = dtype.startswith("float") and draw(st.booleans())
    x = p.given(np.reshape(values, shape).tolist(), dtype, grad=grad)
    rank = len(shape)
    p.steps.append(Op(p.fresh("t"), "mode", [Ref(x)], {"dim": draw(st.sampled_from((rank, -rank - 1)))}))
    dim = draw(st.integers(-rank - 1, rank - 1))  # -rank - 1: none given, the default (the last)
    dims = (dim,) if dim >= -rank else ()
    return p.end(selected(p, p.op("mode", Ref(x), *dims, keepdim=draw(st.booleans()))))


def quantile_program(draw: Any, op: str) -> Program:
    """quantile or nanquantile of a float32/float64 leaf with ties and NaN, of all elements or along
    a dim (keepdim), q a number or a 0-d or 1-d tensor (requiring grad now and then: the lerp weights
    carry it), every interpolation; first a call torch refuses (q out of [0, 1], an integer input,
    a q of another dtype, an unknown interpolation); the result backpropagated twice."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((5,), (2, 3), (3, 1, 4), (), (2, 4))))
    dtype = dtype_of(draw, ("float32", "float64"))
    x = p.given(selection_data(draw, shape, dtype), dtype, grad=True)
    refused = draw(st.sampled_from(("q", "dtype", "q dtype", "interpolation")))
    other = "float64" if dtype == "float32" else "float32"
    args = {
        "q": [Ref(x), draw(st.sampled_from((1.5, -0.25)))],
        "dtype": [Ref(p.given(op_data(draw, shape, "int64"), "int64")), 0.5],
        "q dtype": [Ref(x), Ref(p.given([0.5], other))],
        "interpolation": [Ref(x), 0.5],
    }[refused]
    kwargs = {"interpolation": "nearer"} if refused == "interpolation" else {}
    p.steps.append(Op(p.fresh("t"), op, args, kwargs))
    q: Any = draw(st.sampled_from(QUANTILE_QS))
    if isinstance(q, tuple) or draw(st.integers(0, 3)) == 0:
        held = list(q) if isinstance(q, tuple) else q
        q = Ref(p.given(held, dtype, grad=draw(st.booleans())))
    kwargs = {"interpolation": draw(st.sampled_from(("linear", "lower", "higher", "midpoint", "nearest")))}
    rank = max(len(shape), 1)
    dims = [draw(st.integers(-rank, rank - 1))] if draw(st.booleans()) else []
    if draw(st.booleans()):
        kwargs["keepdim"] = True
    return p.end(weighted(p, p.op(op, Ref(x), q, *dims, **kwargs)))


SEARCHES = ("searchsorted", "bucketize")
SEARCH_DTYPES = ("float32", "float64", "float16", "int64", "int32", "uint8")


@st.composite
def searches(draw: Any, op: str) -> Program:
    """``op`` (searchsorted or bucketize) of values (of the boundaries' dtype or another), ties,
    NaN and infinities among them, in sorted boundaries (NaN last; or unsorted with a sorter; for
    searchsorted one lane per row of a 2-d sequence), or of a number, with right, side and
    out_int32 drawn; first a call torch rejects (side and right opposite, leading dims that
    differ, bool boundaries and values)."""
    p = OpProgram(draw)
    dtype = draw(st.sampled_from(SEARCH_DTYPES))
    rows = (2,) if op == "searchsorted" and draw(st.booleans()) else ()
    boundaries = np.array(selection_data(draw, (*rows, draw(st.integers(0, 4))), dtype), dtype=float)
    kwargs: dict[str, Any] = {"right": draw(st.booleans()), "out_int32": draw(st.booleans())}
    sorter = None
    if op == "searchsorted":
        side = draw(st.sampled_from((None, "left", "right")))
        if side is not None:
            kwargs["side"] = side
            kwargs["right"] = kwargs["right"] and side == "right"
        if draw(st.booleans()):  # unsorted boundaries and the order that sorts them
            sorter = p.given(np.argsort(boundaries, axis=-1, kind="stable").tolist(), "int64")
    if sorter is None:
        boundaries = np.sort(boundaries, axis=-1)
    seq = p.given(boundaries.tolist(), dtype, grad=dtype.startswith("float") and draw(st.booleans()))
    if sorter is not None:
        kwargs["sorter"] = Ref(sorter)
    rejected = draw(st.sampled_from(("side", "rows", "bool")))
    flags = {"bool": {}, "rows": {}, "side": {"side": "left", "right": True}}[rejected]
    wrong_dtype = "bool" if rejected == "bool" else dtype
    wrong = p.given(op_data(draw, (3, 1), wrong_dtype), wrong_dtype)
    if op == "bucketize":
        flags.pop("side", None)
        p.steps.append(Op(p.fresh("t"), op, [Ref(wrong), Ref(wrong if rejected == "bool" else seq)], flags))
    else:
        p.steps.append(Op(p.fresh("t"), op, [Ref(wrong if rejected == "bool" else seq), Ref(wrong)], flags))
    if not rows and draw(st.integers(0, 3)) == 0:  # a number
        value: Any = draw(st.sampled_from((*boundaries.ravel().tolist(), 0.5, -1, True)) if boundaries.size
                          else st.sampled_from((0.5, -1, True)))
        if isinstance(value, float) and dtype.startswith(("int", "uint")) and value.is_integer():
            value = int(value)
    else:
        shape = (*rows, draw(st.integers(0, 3)))
        if boundaries.size and draw(st.booleans()):  # values among the boundaries: ties
            kind = dtype
            found = [draw(st.sampled_from(boundaries.ravel().tolist())) for _ in range(math.prod(shape))]
        else:  # of the boundaries' dtype or another (compared in the two's result type)
            kind = draw(st.sampled_from((dtype, *SEARCH_DTYPES)))
            found = np.ravel(selection_data(draw, shape, kind)).tolist()
        value = Ref(p.given(np.reshape(found, shape).tolist(), kind))
    args = [value, Ref(seq)] if op == "bucketize" else [Ref(seq), value]
    return p.end(p.op(op, *args, **kwargs))


@pytest.mark.rule("OPS-008")
@pytest.mark.parametrize("op", SEARCHES)
@examples(SORTING_WEIGHT)
@given(data=st.data())
def test_searches(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(searches(op), label="program"), backend, reference)


@pytest.mark.rule("OPS-008")
@pytest.mark.parametrize("op", SORTING)
@examples(SORTING_WEIGHT)
@given(data=st.data())
def test_sorting_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(sorting_ops(op), label="program"), backend, reference)


@pytest.mark.rule("OPS-011")
@pytest.mark.parametrize("op", SELECTING)
@examples(SELECTING_WEIGHT)
@given(data=st.data())
def test_selecting_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    program = counting_ops(op) if op in ("isin", "histogram") else sorting_ops(op)
    check(data.draw(program, label="program"), backend, reference)


# the shape ops of OPS-009, one test each
SHAPE_OPS = ("tril", "triu", "tril_", "triu_", "roll", "diagonal", "movedim", "moveaxis", "swapaxes")
SHAPE_OPS += ("swapdims", "broadcast_to", "flipud", "fliplr", "ravel", "unflatten", "repeat", "tile")
SHAPE_OPS += ("diag", "diag_embed", "rot90", "broadcast_tensors", "hstack", "vstack", "row_stack", "dstack")
SHAPE_OPS += ("column_stack", "tensor_split", "hsplit", "vsplit", "dsplit", "split", "chunk", "unbind")
AT_LEAST = ("atleast_1d", "atleast_2d", "atleast_3d")  # of one tensor, or of several: a tuple
SHAPE_OPS += ("diff", *AT_LEAST)
# the ops of SHAPE_OPS taking a list of tensors, and those returning a tuple of them
STACKING = ("hstack", "vstack", "row_stack", "dstack", "column_stack")
SPLITTING = ("broadcast_tensors", "tensor_split", "hsplit", "vsplit", "dsplit", "split", "chunk", "unbind")
SHAPE_WEIGHT = 0.3
# split's sizes and chunk's counts: one that leaves a remainder first (the derandomized profile draws
# the first most often), 0 and negative ones refused
SPLIT_SIZES = (2, 3, 1, 4, 0, -1)
# roll's shifts, a nonzero one first (the derandomized profile draws the first most often)
ROLL_SHIFTS = (1, -2, 3, -1, 2, 0, 4, -4)
# shapes of the shape ops' inputs: 0-d, empty, size-1 dims, up to 3 dims
SHAPE_OP_SHAPES = ((), (0,), (3,), (2, 3), (3, 2), (1, 3), (2, 0, 3), (2, 1, 3), (2, 3, 2))


def shape_op_args(draw: Any, op: str, shape: tuple[int, ...]) -> tuple[list, dict]:
    """Arguments of shape op ``op`` for an input of ``shape``: often valid, now and then what torch
    refuses (a dim out of range, sizes that do not fit, too few repeats, identical dims)."""
    rank = len(shape)
    dim = st.integers(-max(rank, 1) - 1, max(rank, 1))  # now and then out of range
    if op in ("tril", "triu", "tril_", "triu_"):
        return [draw(st.integers(-3, 3))], {}
    if op == "roll":
        shift = st.sampled_from(ROLL_SHIFTS)
        if draw(st.booleans()):
            return [draw(shift)], {}
        n = draw(st.integers(1, 2))
        dims = draw(st.lists(dim, min_size=n, max_size=n))
        count = len(dims) + (draw(st.integers(0, 5)) == 0)  # now and then one shift too many
        return [draw(st.lists(shift, min_size=count, max_size=count))], {"dims": dims}
    if op == "diagonal":
        return [draw(st.integers(-3, 3)), draw(dim), draw(dim)], {}
    if op in ("movedim", "moveaxis"):
        n = draw(st.integers(1, max(rank, 1)))
        source = draw(st.lists(dim, min_size=n, max_size=n))
        destination = draw(st.lists(dim, min_size=n, max_size=n + (draw(st.integers(0, 5)) == 0)))
        return ([source[0], destination[0]] if n == 1 and draw(st.booleans()) else [source, destination]), {}
    if op in ("swapaxes", "swapdims"):
        first, second = draw(dim), draw(dim)
        if draw(st.booleans()):  # by keyword: NumPy's names for swapaxes, torch's for swapdims
            names = ("axis0", "axis1") if op == "swapaxes" else ("dim0", "dim1")
            return [], dict(zip(names, (first, second), strict=True))
        return [first, second], {}
    if op == "broadcast_to":
        lead = draw(st.lists(st.sampled_from((1, 2, -1)), max_size=2))
        own = [draw(st.sampled_from((n, n, -1, 4 if n == 1 else n + 1))) for n in shape]
        return [lead + own], {}
    if op == "unflatten":
        size = shape[draw(dim) % rank] if rank else 1
        sizes = draw(st.sampled_from(((size, 1), (1, -1), (-1,), (size,), (2, -1), (1, size, 1), ())))
        return [draw(st.integers(-rank, rank - 1)), list(sizes)], {}
    if op in ("repeat", "tile"):
        n = rank + draw(st.integers(-1 if op == "tile" or draw(st.integers(0, 5)) == 0 else 0, 2))
        return [list(draw(st.lists(st.integers(0, 3), min_size=max(n, 0), max_size=max(n, 0))))], {}
    if op == "diag":
        return [draw(st.integers(-3, 3))], {}
    if op == "diag_embed":
        new_dim = st.integers(-rank - 2, rank + 1)  # of the result's rank + 1 dims, now and then out of range
        dims = [draw(new_dim) for _ in range(draw(st.sampled_from((0, 2, 2))))]
        return [draw(st.integers(-2, 2)), *dims], {}
    if op == "rot90":
        n = draw(st.sampled_from((2, 2, 2, 1, 3, 0)))  # now and then not two dims, or none: the default
        dims = [draw(st.lists(dim, min_size=n, max_size=n))] if n else []
        return [draw(st.integers(-5, 5)), *dims], {}
    if op == "diff":  # n (now and then negative, refused), dim; prepend/append: shape_ops
        return [draw(st.integers(-1, 3)), draw(dim)], {}
    if op in ("tensor_split", "hsplit", "vsplit", "dsplit"):
        if draw(st.booleans()):
            split: Any = draw(st.integers(0 if op == "tensor_split" else 1, 4))  # sections (0 refused)
        else:
            split = draw(st.lists(st.integers(-1, 5), max_size=3))  # indices, unsorted, out of range
        return [split], ({"dim": draw(dim)} if op == "tensor_split" and draw(st.booleans()) else {})
    if op == "split":  # a size (0 or negative now and then) or sizes (negative, not summing up)
        d = draw(dim)
        if draw(st.booleans()):
            return [draw(st.sampled_from(SPLIT_SIZES))], {"dim": d}
        size = shape[d] if -rank <= d < rank else 0
        cuts = sorted(draw(st.lists(st.integers(0, size), max_size=2)))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
        odd = st.lists(st.integers(-1, 3), max_size=3)  # now and then negative, not summing up
        return [sizes if draw(st.integers(0, 3)) else draw(odd)], {"dim": d}
    if op == "chunk":
        return [draw(st.sampled_from(SPLIT_SIZES))], {"dim": draw(dim)}
    if op == "unbind":
        return [draw(dim)], {}
    return [], {}


def stacked_partner(draw: Any, p: OpProgram, op: str, shape: tuple[int, ...], dtype: str) -> str:
    """A second operand of a stacking op or broadcast_tensors: of the same shape, a broadcast
    partner or any shape (which the op may refuse); of the same dtype or (promoted by the stacks)
    another."""
    kinds = (shape, broadcast_partner(draw, shape), draw(st.sampled_from(SHAPE_OP_SHAPES)))
    other_dtype = dtype_of(draw, ALL_DTYPES) if draw(st.integers(0, 2)) == 0 else dtype
    return p.leaf(draw(st.sampled_from(kinds)), other_dtype, edge=draw(st.booleans()))


def split_indices(draw: Any, p: OpProgram, args: list) -> list:
    """tensor_split's indices or sections as an int64 tensor (1-d or 0-d) now and then, or as a
    float one, which torch refuses."""
    if not draw(st.integers(0, 2)) == 0:
        return args
    dtype = draw(st.sampled_from(("int64", "int64", "float32")))
    return [Ref(p.given(args[0], dtype, prefix="i"))]


def weighted(p: OpProgram, result: str) -> str:
    """``result`` flattened and summed up cumulatively: weights n, n-1, ..., 1 on its elements, so
    a backward putting a gradient in the wrong place shows (a sum's gradient is uniform)."""
    return p.op("cumsum", Ref(p.op("reshape", Ref(result), -1)), 0)


@st.composite
def shape_ops(draw: Any, op: str) -> Program:
    """Shape op ``op`` (function or method; in place on a non-leaf copy) on a tensor of any dtype with
    edge values and arguments torch may refuse. A view op's input is a non-leaf written in place
    afterwards: the view sees the write and shares the version counter exactly where torch's does.
    Then backpropagated twice."""
    p = OpProgram(draw)
    if op in SHAPE_FORMS and draw(st.integers(0, EDGE_EVERY - 1)) == 0:
        return p.end(*shape_forms(draw, p, op))
    # torch's error for unflatten of a 0-d tensor carries its C++ stack trace: not compared
    shape = draw(st.sampled_from(SHAPE_OP_SHAPES[op == "unflatten" :]))
    dtype = dtype_of(draw, ALL_DTYPES if draw(st.integers(0, 2)) == 0 else FLOAT_DTYPES)
    x = p.leaf(shape, dtype, edge=draw(st.booleans()))
    args, kwargs = shape_op_args(draw, op, shape)
    base = p.op("mul", Ref(x), 2) if dtype != "bool" else x
    if op in ("tril_", "triu_"):
        if draw(st.integers(0, 3)) == 0:  # torch refuses the leaf itself when it requires grad
            p.steps.append(Op(p.fresh("t"), op, [Ref(x), *args], kwargs))
        p.op(op, Ref(base), *args, **kwargs)
        if math.prod(shape):  # (the layout of an empty tensor: tests/impl/test_impl_shapes.py)
            p.steps.append(ObserveLayout(base))
        return p.end(base)
    if op == "repeat" and draw(st.booleans()):
        args = list(args[0])  # the method's sizes spread: x.repeat(2, 3)
    if op == "tensor_split":
        args = split_indices(draw, p, args)
    if op == "diff":
        kwargs = joined_ends(draw, p, shape, dtype)
    if op in AT_LEAST and draw(st.booleans()):  # several tensors: a tuple of them
        parts = [Ref(base), Ref(p.leaf(draw(st.sampled_from(SHAPE_OP_SHAPES)), dtype_of(draw)))]
        y = p.op(op, *parts) if draw(st.booleans()) else p.op(op, parts)
        first, last = (p.op("__getitem__", Ref(y), i) for i in (0, -1))
        p.names.remove(y)
        return p.end(weighted(p, first), weighted(p, last))
    if op in STACKING:
        y = p.op(op, [Ref(base), Ref(stacked_partner(draw, p, op, shape, dtype))])
    elif op == "broadcast_tensors":
        y = p.op(op, Ref(base), Ref(stacked_partner(draw, p, op, shape, dtype)))
    else:
        y = p.op(op, Ref(base), *args, **kwargs)
    if op in SPLITTING:
        first = p.op("__getitem__", Ref(y), 0)
        p.names.remove(y)
        layout = [ObserveLayout(first)] if math.prod(shape) else []
    else:
        layout = [ObserveLayout(y)] if math.prod(shape) else []
    p.steps += layout
    if base != x and draw(st.booleans()):  # a write into the input: a view sees it, a copy does not
        p.op("add_", Ref(base), 1)
        p.steps += layout
    if op in SPLITTING:
        return p.end(weighted(p, first), weighted(p, p.op("__getitem__", Ref(y), -1)))
    return p.end(weighted(p, y))


def joined_ends(draw: Any, p: OpProgram, shape: tuple[int, ...], dtype: str) -> dict[str, Any]:
    """diff's prepend and append, each now and then: of the input's shape (its dims joined along
    ``dim``) or of any shape (another rank, or sizes off ``dim`` that do not fit: refused)."""
    ends: dict[str, Any] = {}
    for name in ("prepend", "append"):
        kind = draw(st.sampled_from((None, None, "same", "other")))
        if kind == "same":
            ends[name] = Ref(p.leaf(shape, dtype, edge=draw(st.booleans())))
        elif kind == "other":
            ends[name] = Ref(p.leaf(draw(st.sampled_from(SHAPE_OP_SHAPES)), dtype))
    return ends


INDICES = object()  # in SHAPE_FORMS: an int64 tensor of the indices [1, 3]
SLAB = object()  # in SHAPE_FORMS: a leaf of the input's dtype, its shape but size 1 along the last dim
_TRIANGLE = ((3, 4), [((), {}), ((1,), {}), ((-1,), {})])
_SPLITS = [((2,), {}), (([1, 3],), {})]
# each shape op with keyword targets (COVERAGE), a shape and every form of its arguments valid there
SHAPE_FORMS: dict[str, tuple[tuple[int, ...], list[tuple[tuple, dict]]]] = {
    **dict.fromkeys(("tril", "triu", "tril_", "triu_", "diag"), _TRIANGLE),
    "roll": ((2, 4, 6), [((1,), {}), ((2,), {"dims": 1}), (([1, -1],), {"dims": [0, 2]})]),
    "diagonal": ((2, 4, 6), [((), {}), ((1,), {}), ((-1, 2, 0), {})]),
    "diag_embed": ((2, 3), [((), {}), ((1, 0, 2), {})]),
    "rot90": ((2, 4, 6), [((), {}), ((2,), {}), ((1, [1, 2]), {})]),
    "tensor_split": ((2, 4, 6), [((3,), {}), (([1, 3],), {"dim": 2}), ((INDICES,), {"dim": 1})]),
    **dict.fromkeys(("hsplit", "vsplit", "dsplit"), ((2, 4, 6), _SPLITS)),
    "split": ((3, 5), [((2,), {}), ((2,), {"dim": 1}), (([1, 4],), {"dim": -1})]),
    "chunk": ((3, 5), [((2,), {}), ((3,), {"dim": 1})]),
    "unbind": ((2, 3), [((), {}), ((1,), {}), ((-1,), {})]),
    "diff": ((2, 4, 6), [((), {}), ((2,), {}), ((1, 1), {}), ((0,), {}), ((3, 0), {}),
                         ((), {"prepend": SLAB}), ((2,), {"append": SLAB, "prepend": SLAB})]),
}


def shape_forms(draw: Any, p: OpProgram, op: str) -> list[str]:
    """``op`` in each of its SHAPE_FORMS on a float leaf requiring grad (in place on copies of
    it), each result (of a split, its first part) weighted."""
    shape, forms = SHAPE_FORMS[op]
    dtype = dtype_of(draw, ("float32", "float64"))
    x = p.leaf(shape, dtype, grad=True)
    results = []
    for args, kwargs in forms:
        args = tuple(Ref(p.indices([1, 3])) if a is INDICES else a for a in args)
        kwargs = {k: Ref(p.leaf((*shape[:-1], 1), dtype)) if v is SLAB else v for k, v in kwargs.items()}
        if op.endswith("_"):
            results.append(p.op("mul", Ref(x), 2))
            p.op(op, Ref(results[-1]), *args, **kwargs)
        elif op in SPLITTING:
            parts = p.op(op, Ref(x), *args, **kwargs)
            results.append(p.op("__getitem__", Ref(parts), 0))
            p.names.remove(parts)
        else:
            results.append(p.op(op, Ref(x), *args, **kwargs))
    return [weighted(p, r) for r in results]


@pytest.mark.rule("OPS-009")
@pytest.mark.parametrize("op", SHAPE_OPS)
@examples(SHAPE_WEIGHT)
@given(data=st.data())
def test_shape_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(shape_ops(op), label="program"), backend, reference)


TRIANGLE_INDICES = ("tril_indices", "triu_indices")
TRIANGLE_DTYPES = (None, None, DType("int32"), DType("int16"), DType("float32"), DType("bool"))


@st.composite
def triangle_indices(draw: Any, op: str) -> Program:
    """tril_indices/triu_indices of a few matrices (empty, wide, tall) at offsets inside and past
    the matrix, of an index dtype (or a float or bool one, or a negative size: torch's errors)."""
    p = OpProgram(draw)
    for _ in range(draw(st.integers(1, 3))):
        row, col = draw(st.integers(-1, 4)), draw(st.integers(0, 5))
        args = [row, col] + ([draw(st.integers(-5, 5))] if draw(st.booleans()) else [])
        dtype = draw(st.sampled_from(TRIANGLE_DTYPES))
        p.op(op, *args, **({} if dtype is None else {"dtype": dtype}))
    return p.observed()


@pytest.mark.rule("OPS-009")
@pytest.mark.parametrize("op", TRIANGLE_INDICES)
@examples(0.1)
@given(data=st.data())
def test_triangle_indices(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(triangle_indices(op), label="program"), backend, reference)


# the selecting and counting ops of OPS-008 (their results hold indices or counts), and the
# repeating ones of OPS-009, one test each
COUNTING = ("unique", "unique_consecutive", "nonzero", "argwhere", "bincount", "histc")
REPEATING = ("repeat_interleave", "meshgrid")
COUNT_VALUES = (0.0, 1.0, 1.0, 2.0, -0.0, NAN)  # ties, zeros of both signs, NaN
# histc's (min, max): its default (the data's range), a range the data straddles or not, an empty
# one (the data's range again), a reversed one (refused)
HISTC_RANGES = ((-1.0, 1.0), (0.5, 2.0), (0, 0), (1, 1), (2.0, 0.0), (-0.0, 4.0))


@st.composite
def counting_ops(draw: Any, op: str) -> Program:
    """``op`` on a leaf of any dtype holding ties, zeros and NaN (bincount: non-negative integers, a
    weight now and then, or what torch refuses), with its options drawn; tuples read part by part.
    unique's values keep the input's grad_fn requirement: its backward raises, as torch's."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(SORT_SHAPES))
    dtype = dtype_of(draw, ALL_DTYPES)
    size = math.prod(shape)
    values = draw(st.lists(st.sampled_from(COUNT_VALUES), min_size=size, max_size=size))
    data = np.array(values, dtype=np.float64).reshape(shape)
    if dtype != "bool" and not dtype.startswith("float"):
        data = np.nan_to_num(data).astype(np.int64)
    if op == "bincount":
        counts = draw(st.lists(st.integers(-1 if draw(st.integers(0, 5)) == 0 else 0, 4), max_size=5))
        x = p.given(counts, dtype_of(draw, ("int64", "int64", "uint8", "int32", "float32")))
        kwargs: dict[str, Any] = {"minlength": draw(st.sampled_from((0, 0, 3, 7)))}
        if draw(st.booleans()):
            n = len(counts) + (draw(st.integers(0, 5)) == 0)
            kwargs["weights"] = Ref(p.leaf((n,), dtype_of(draw, ALL_DTYPES), grad=False))
        return p.end(p.op("bincount", Ref(x), **kwargs))
    if op == "histc":  # a float leaf, NaN in it now and then (refused with the data's range); now
        # and then an integer or bool one or 0 bins (refused)
        refused = draw(st.integers(0, 4)) == 0
        dtype = dtype if refused else dtype_of(draw, ("float32", "float64", "float16"))
        data = np.where(np.isnan(data), 3.0, data) if dtype.startswith("float") and not refused else data
        x = p.given(data.tolist(), dtype, grad=dtype.startswith("float") and draw(st.booleans()))
        bins = draw(st.sampled_from((0,) if refused else (3, 1, 4, None)))  # None: the default, 100
        low, high = draw(st.sampled_from(HISTC_RANGES))
        given = {} if (low, high) == (0, 0) else {"min": low, "max": high}
        return p.end(p.op("histc", Ref(x), *([] if bins is None else [bins]), **given))
    if op == "isin":  # of the values (a tensor or one of them), in tensors of any dtype or a number
        return isin_program(draw, p, data, dtype)
    if op == "histogram":
        return histogram_program(draw, p, data)
    x = p.given(data.tolist(), dtype, grad=dtype.startswith("float") and draw(st.booleans()))
    if op in ("nonzero", "argwhere"):
        as_tuple = op == "nonzero" and draw(st.booleans())
        y = p.op(op, Ref(x), **({"as_tuple": True} if as_tuple else {}))
        if as_tuple:
            p.op("__getitem__", Ref(y), 0)
            p.names.remove(y)
        return p.observed()
    kwargs = {k: True for k in ("return_inverse", "return_counts") if draw(st.booleans())}
    if draw(st.booleans()):
        kwargs["dim"] = draw(st.integers(-len(shape) - 1, max(len(shape), 1)))
    if op == "unique" and draw(st.booleans()):
        kwargs["sorted"] = draw(st.booleans())
    y = p.op(op, Ref(x), **kwargs)
    extra = len(kwargs.keys() & {"return_inverse", "return_counts"})
    if extra:
        parts = [p.op("__getitem__", Ref(y), i) for i in range(1 + extra)]
        p.names.remove(y)
        y = parts[0]
    return p.end(y) if dtype.startswith("float") else p.observed()


HISTOGRAM_RANGES = ((-1.0, 1.0), (0.5, 2.0), (1, 1), (2.0, 0.0), (-0.0, 4.0))  # an empty one, a reversed one


def isin_program(draw: Any, p: OpProgram, data: Any, dtype: str) -> Program:
    """isin of a tensor of COUNT_VALUES (or a number) in one of another dtype (or a number), with
    invert and assume_unique drawn; bool operands (and complex numbers) refused."""
    kwargs = {k: True for k in ("invert", "assume_unique") if draw(st.integers(0, 2)) == 0}
    other_dtype = dtype_of(draw, ALL_DTYPES)
    pool = np.array(COUNT_VALUES) if other_dtype.startswith("float") else np.array([0, 1, 2, 5])
    test = [draw(st.sampled_from(pool.tolist())) for _ in range(draw(st.integers(0, 4)))]
    elements: Any = Ref(p.given(data.tolist(), dtype))
    others: Any = Ref(p.given(test, other_dtype))
    form = draw(st.integers(0, 5))
    if form == 0:
        elements = draw(st.sampled_from((1, 2.0, 0.5, True)))
    elif form == 1:
        others = draw(st.sampled_from((1, 2.0, 0.5, True, -0.0)))
    p.op("isin", elements, others, **kwargs)
    return p.observed()


def histogram_program(draw: Any, p: OpProgram, data: Any) -> Program:
    """histogram of a float leaf (NaN replaced: refused in the data's range), bins an int (a range
    drawn, empty or reversed now and then) or sorted edges, a weight and density drawn; now and
    then an integer input or mismatched edges or weight (refused). The results observed."""
    dtype = dtype_of(draw, ("float32", "float64"))
    clean = np.where(np.isnan(data), 3.0, data).astype(float)
    if draw(st.integers(0, EDGE_EVERY - 1)) == 0:  # every form torch takes: bins a tensor, the default
        edge = [0.0, 1.0, 2.0, 1.0, -0.0]  # (ties, signed zeros, the maximum on the last edge)
        x = p.given(edge, dtype, grad=draw(st.booleans()))
        edges, weight = Ref(p.given([-1.0, 0.5, 2.5], dtype)), Ref(p.leaf((len(edge),), dtype))
        forms = (([], {"bins": edges}), ([], {}), ([3], {"range": (-1.0, 1.0)}),
                 ([2], {"weight": weight, "density": False}))
        for args, kwargs in forms:
            result = p.op("histogram", Ref(x), *args, **kwargs)
            for i in range(2):
                p.op("__getitem__", Ref(result), i)
            p.names.remove(result)
        return p.observed()
    refused = draw(st.integers(0, 4)) == 0
    held = dtype if not refused else draw(st.sampled_from(("int64", dtype)))
    x = p.given(clean.tolist(), held, grad=held.startswith("float") and draw(st.booleans()))
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        edges = sorted(draw(st.lists(st.sampled_from((-1.0, 0.0, 0.5, 1.0, 2.5)), min_size=1, max_size=4)))
        edge_dtype = dtype if not refused else draw(st.sampled_from(("float64", "float32")))
        bins: Any = Ref(p.given(edges, edge_dtype))
    else:
        bins = draw(st.sampled_from((3, 4, 2, 1, 0, None)))  # None: the default, 100
        if draw(st.booleans()):  # (else the data's range: its maximum on the last edge)
            kwargs["range"] = draw(st.sampled_from(HISTOGRAM_RANGES))
    if draw(st.booleans()):
        n = clean.size + (refused and draw(st.booleans()))
        kwargs["weight"] = Ref(p.leaf((n,), dtype, grad=draw(st.booleans())))
    if draw(st.booleans()):
        kwargs["density"] = True
    if bins is not None and draw(st.booleans()):
        kwargs["bins"] = bins
    y = p.op("histogram", Ref(x), *(() if bins is None or "bins" in kwargs else (bins,)), **kwargs)
    for i in range(2):
        p.op("__getitem__", Ref(y), i)
    p.names.remove(y)
    return p.observed()


@st.composite
def repeating_ops(draw: Any, op: str) -> Program:
    """repeat_interleave by an int, a tensor of counts (0-d, of one, of the dim's size or not, negative
    or float ones now and then: refused), over a dim or the flattened input, with output_size; or
    meshgrid of 0-d and 1-d tensors (a 2-d one, or dtypes that differ: refused) with indexing 'ij',
    'xy' or omitted (torch's warning). The results weighted and backpropagated twice."""
    p = OpProgram(draw)
    dtype = dtype_of(draw, ("float32", "float64"))
    if op == "meshgrid":
        shapes = draw(st.lists(st.sampled_from(((), (2,), (3,), (1,), (0,))), min_size=1, max_size=3))
        grids = [Ref(p.leaf(s, dtype if draw(st.integers(0, 7)) else "float16")) for s in shapes]
        kwargs = draw(st.sampled_from(({}, {"indexing": "ij"}, {"indexing": "xy"})))
        y = p.op(op, *grids, **kwargs) if draw(st.booleans()) else p.op(op, grids, **kwargs)
        first, last = (p.op("__getitem__", Ref(y), i) for i in (0, -1))
        p.names.remove(y)
        return p.end(weighted(p, first), weighted(p, last))
    shape = draw(st.sampled_from(((), (3,), (2, 3), (2, 0), (1, 3))))
    x = p.leaf(shape, dtype)
    dim = draw(st.sampled_from((None, 0, -1, 1)))
    size = (math.prod(shape) if dim is None else shape[dim % len(shape)]) if shape else 1
    kind = draw(st.sampled_from(("int", "tensor", "tensor", "one")))
    if kind == "int":
        repeats: Any = draw(st.sampled_from((2, 0, 3, -1)))
    else:
        n = 1 if kind == "one" else size + (draw(st.integers(0, 5)) == 0)
        least = -1 if draw(st.integers(0, 7)) == 0 else 0
        counts = draw(st.lists(st.integers(least, 3), min_size=n, max_size=n))
        rdtype = draw(st.sampled_from(("int64", "int64", "int32", "float32")))
        held = counts[0] if kind == "one" and draw(st.booleans()) else counts
        repeats = Ref(p.given(held, rdtype, prefix="i"))
    kwargs = {} if dim is None else {"dim": dim}
    if draw(st.integers(0, 3)) == 0:
        kwargs["output_size"] = draw(st.integers(0, 9))
    return p.end(weighted(p, p.op(op, Ref(x), repeats, **kwargs)))


@pytest.mark.rule("OPS-008")
@pytest.mark.parametrize("op", COUNTING)
@examples(0.15)
@given(data=st.data())
def test_counting_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(counting_ops(op), label="program"), backend, reference)


@pytest.mark.rule("OPS-009")
@pytest.mark.parametrize("op", REPEATING)
@examples(0.2)
@given(data=st.data())
def test_repeating_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(repeating_ops(op), label="program"), backend, reference)


# the scatter ops of OPS-009 (impl/_ops/scatter.py)
SCATTER_OPS = ("scatter", "scatter_value", "scatter_reduce_value", "scatter_", "scatter_add", "scatter_add_")
SCATTER_WEIGHT = 0.3
# (input shape, dim, index shape, src shape): fitting, index smaller than src, 0-d, empty, longer
# than the input along dim, and shapes torch refuses (too large off dim or for src, dims that differ)
SCATTER_SHAPES = (
    ((3, 4), 0, (2, 4), (2, 4)),
    ((3, 4), 1, (2, 3), (3, 4)),
    ((4,), 0, (3,), (5,)),
    ((), 0, (), ()),
    ((2, 3), 0, (0, 3), (2, 3)),
    ((2, 3), 1, (3, 2), (3, 2)),
    ((2, 3), 0, (2, 3), (1, 3)),
    ((2, 3), 0, (2,), (2,)),
    ((3, 4), -1, (1, 4), (4,)),
    ((4,), 0, (0,), (2,)),
)
LONG_LANE = ((3,), 0, (6,), (7,))  # lanes longer than the input: scatter's distinct ones reach out of range
SCATTER_REDUCTIONS = ({"reduce": "add"}, {"reduce": "multiply"})


def scatter_index(draw: Any, shape: tuple, dim: int, size: int, distinct: bool, in_range: bool) -> np.ndarray:
    """Index values of ``shape`` in ``[0, size)`` along ``dim``: each lane along ``dim`` the
    leading part of a permutation (distinct, as long as the lane fits) or any values (repeating);
    unless ``in_range``, now and then one of them out of range (``size`` or -1: torch does not wrap)."""
    lanes = np.moveaxis(np.empty(shape or (1,)), dim, -1).shape  # (..., lane length)
    k = lanes[-1]
    if distinct:
        rows = [draw(st.permutations(range(max(size, k))))[:k] for _ in range(math.prod(lanes[:-1]))]
    else:
        high = draw(st.integers(0, max(size - 1, 0)))  # a low bound repeats more
        lane = st.lists(st.integers(0, high), min_size=k, max_size=k)
        rows = [draw(lane) for _ in range(math.prod(lanes[:-1]))]
    values = np.moveaxis(np.array(rows, dtype=np.int64).reshape(lanes), -1, dim).reshape(shape)
    if not in_range and values.size and draw(st.integers(0, 7)) == 0:
        values.reshape(-1)[draw(st.integers(0, values.size - 1))] = draw(st.sampled_from((size, -1)))
    return values


@st.composite
def scatter_ops(draw: Any, op: str) -> Program:
    """scatter (a tensor src, a number, with reduce 'add'/'multiply') / scatter_add, out of place
    or in place on a non-leaf copy (now and then on the leaf itself, which torch refuses), of any
    dtype with edge values; the index mostly int64 (now and then int32, or float, which torch
    refuses). scatter's src writes use distinct indices (which duplicate wins is undefined in
    torch); scatter_add's and the reductions' repeat them. The result is backpropagated from a
    weighted sum, so each gradient's place shows. The in-place forms keep their indices in range:
    torch's CPU kernel has written the elements before an out-of-range index into the target when
    it raises, in its own iteration order, which impl does not model (it checks first)."""
    p = OpProgram(draw)
    in_place = op.endswith("_")
    cases = SCATTER_SHAPES if in_place else (*SCATTER_SHAPES, LONG_LANE)
    shape, dim, ishape, sshape = draw(st.sampled_from(cases))
    dtype = dtype_of(draw, ALL_DTYPES if draw(st.integers(0, 2)) == 0 else FLOAT_DTYPES)
    x = p.leaf(shape, dtype, edge=draw(st.booleans()))
    size = shape[dim] if shape else 1
    values = scatter_index(draw, ishape, dim, size, op in ("scatter", "scatter_"), in_range=in_place)
    idtype = draw(st.sampled_from(("int64", "int64", "int64", "int32", "float32")))
    index = p.given(values, idtype, prefix="i")
    base = p.op("mul", Ref(x), 2) if dtype != "bool" else x
    if op in ("scatter_value", "scatter_reduce_value"):
        value = draw(st.sampled_from((2.5, -1, 0, True, 1e30, math.inf, math.nan)))
        reduce = draw(st.sampled_from(("add", "multiply")))
        kwargs = {"reduce": reduce} if op == "scatter_reduce_value" else {}
        y = p.op("scatter", Ref(base), dim, Ref(index), value, **kwargs)
        return p.end(weighted(p, y))
    src_dtype = dtype if draw(st.integers(0, 7)) else dtype_of(draw, ALL_DTYPES)
    src = p.leaf(sshape, src_dtype, edge=draw(st.booleans()))
    if in_place:
        target = base if base != x or draw(st.integers(0, 3)) else x  # now and then the leaf itself
        filled: Any = Ref(src)
        kwargs: dict[str, Any] = {}
        if op == "scatter_" and draw(st.integers(0, 2)) == 0:  # a number, maybe reduced into the target
            filled = draw(st.sampled_from((2.5, -1, 0)))
            kwargs = draw(st.sampled_from(({}, *SCATTER_REDUCTIONS)))
            if base != x and draw(st.integers(0, EDGE_EVERY - 1)) == 0:  # and each reduction, on copies
                for reduce in SCATTER_REDUCTIONS:
                    p.op(op, Ref(p.op("mul", Ref(x), 2)), dim, Ref(index), filled, **reduce)
        p.op(op, Ref(target), dim, Ref(index), filled, **kwargs)
        return p.end(weighted(p, target))
    return p.end(weighted(p, p.op(op, Ref(base), dim, Ref(index), Ref(src))))


@pytest.mark.rule("OPS-009")
@pytest.mark.parametrize("op", SCATTER_OPS)
@examples(SCATTER_WEIGHT)
@given(data=st.data())
def test_scatter_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(scatter_ops(op), label="program"), backend, reference)


# index_add / index_copy of OPS-009 (impl/_ops/scatter.py)
INDEX_OPS = ("index_add", "index_add_", "index_copy", "index_copy_")
INDEX_WEIGHT = 0.3
# (input shape, dim, number of indices, source shape): fitting along each dim, a 0-d index or
# source, an empty index, and shapes torch refuses (off ``dim``, the number of indices, the dims)
INDEX_SHAPES = (
    ((3, 4), 0, 3, (3, 4)),
    ((3, 4), 1, 2, (3, 2)),
    ((2, 3, 4), 1, 2, (2, 2, 4)),
    ((4,), 0, 3, (3,)),
    ((), 0, 1, ()),
    ((3,), 0, (), (1,)),
    ((3, 4), -1, 0, (3, 0)),
    ((3, 4), 0, 2, (2, 3)),
    ((3, 4), 0, 3, (2, 4)),
    ((3, 4), 1, 2, (2,)),
)
INDEX_ALPHAS = (1, 1, 2, -1.5, 0.5, True, 1e30)


@st.composite
def index_ops(draw: Any, op: str) -> Program:
    """index_add (``alpha`` a number torch converts to the dtype: a fused multiply-add, or an
    overflow torch refuses) / index_copy, out of place or in place on a non-leaf copy (now and
    then on the leaf itself, which torch refuses), of any dtype with edge values; the index int64
    (now and then int32, which index_copy refuses, or float). index_add's indices repeat (each
    adds); index_copy's are distinct (which of duplicates wins is undefined in torch). The
    in-place forms keep their indices in range: torch's kernel has added the slices before an
    index out of range when it raises, which impl does not model (it checks first)."""
    p = OpProgram(draw)
    in_place = op.endswith("_")
    copy = op.startswith("index_copy")
    forms = not copy and draw(st.integers(0, EDGE_EVERY - 1)) == 0  # alpha absent, 1, drawn: fitting shapes
    shape, dim, count, sshape = INDEX_SHAPES[0] if forms else draw(st.sampled_from(INDEX_SHAPES))
    dtype = dtype_of(draw, FLOAT_DTYPES if forms or draw(st.integers(0, 2)) else ALL_DTYPES)
    x = p.leaf(shape, dtype, edge=draw(st.booleans()))
    size = shape[dim] if shape else 1
    lane = (1,) if count == () else (count,)
    values = scatter_index(draw, lane, 0, size, copy, in_range=in_place).reshape(count)
    idtype = draw(st.sampled_from(("int64", "int64", "int64", "int32", "float32")))
    index = p.given(values, idtype, prefix="i")
    base = p.op("mul", Ref(x), 2) if dtype != "bool" else x
    src_dtype = dtype if draw(st.integers(0, 7)) else dtype_of(draw, ALL_DTYPES)
    src = p.leaf(sshape, src_dtype, edge=draw(st.booleans()))
    kwargs = {} if copy else {"alpha": draw(st.sampled_from(INDEX_ALPHAS))}
    if forms:  # without alpha and with alpha 1, on copies
        for form in ({}, {"alpha": 1}):
            target = Ref(p.op("mul", Ref(x), 2)) if in_place else Ref(base)
            p.op(op, target, dim, Ref(index), Ref(src), **form)
    if in_place:
        target = base if base != x or draw(st.integers(0, 3)) else x  # now and then the leaf itself
        p.op(op, Ref(target), dim, Ref(index), Ref(src), **kwargs)
        return p.end(weighted(p, target))
    return p.end(weighted(p, p.op(op, Ref(base), dim, Ref(index), Ref(src), **kwargs)))


@pytest.mark.rule("OPS-009")
@pytest.mark.parametrize("op", INDEX_OPS)
@examples(INDEX_WEIGHT)
@given(data=st.data())
def test_index_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(index_ops(op), label="program"), backend, reference)


# -- structure and product ops (OPS-012) --------------------------------------------------------
# -- OPS-014: index_put and put ---------------------------------------------------------------------
# index_fill / masked_scatter / fill_diagonal_ of OPS-014 (impl/_ops/indexing.py); first in the rule,
# being its fastest test: a planted-fault session runs the rule's tests until one fails
FILL_OPS = ("index_fill", "index_fill_", "masked_scatter", "masked_scatter_", "fill_diagonal_",
            "select_scatter", "slice_scatter", "diagonal_scatter")
# the view scatters' views of a (3, 4) input: (arguments, the view's shape), the last of each refused
VIEW_SCATTERS = {
    "select_scatter": (((1, 0), (3,)), ((0, -1), (4,)), ((1, 4), (3,))),
    "slice_scatter": (((1, 0, 4, 2), (3, 2)), ((0, -2), (2, 4)), ((), (3, 4)),
                      ((1, 1, None, 0), (3, 3))),
    "diagonal_scatter": (((), (3,)), ((2,), (2,)), ((-1, 1, 0), (2,)), ((5,), (0,)), ((0, 0, 0), (3,))),
}
# (input shape, dim, index shape): along each dim, a 0-d input or index, an empty index, a 2-d one
FILL_SHAPES = (((3, 4), 1, (3,)), ((3, 4), -2, (2,)), ((2, 3, 2), 1, ()), ((), 0, (1,)), ((3, 4), 0, (0,)),
               ((3, 4), 0, (1, 2)))
# fill_diagonal_'s: square, wide, tall (wrapping), a cube, a 1-d and a non-cube (which torch refuses)
DIAGONAL_SHAPES = ((3, 3), (2, 4), (7, 2), (8, 3), (2, 2, 2), (3,), (2, 3, 3))
INDEX_DTYPES = ("int64", "int64", "int64", "int32", "float32")
# masked_scatter's masks: broadcast to the input, or (in place) a shape that does not expand to it
MASK_SHAPES = ((3, 4), (4,), (3, 1), (2, 3, 4), (2,))


@st.composite
def fill_ops(draw: Any, op: str) -> Program:
    """select_scatter, slice_scatter, diagonal_scatter (src written into a view: select, slice
    (step), diagonal (offset, dims)), index_fill (a number or a 0-d tensor value; an int64 index,
    now and then an int32, float, 2-d or out-of-range one), masked_scatter (a bool mask, now and
    then an int one, broadcast with the input; a source of the input's dtype or not, maybe too
    short) and fill_diagonal_ (wrap), out of place or in place on a non-leaf copy (now and then on
    the leaf, which torch refuses)."""
    p = OpProgram(draw)
    in_place = op.endswith("_")
    dtype = dtype_of(draw, FLOAT_DTYPES if draw(st.integers(0, 2)) else ALL_DTYPES)
    if op == "fill_diagonal_":
        shape = draw(st.sampled_from(DIAGONAL_SHAPES))
    elif op.startswith("masked") or op in VIEW_SCATTERS:
        shape = (3, 4)
    else:
        shape, dim, ishape = draw(st.sampled_from(FILL_SHAPES))
    x = p.leaf(shape, dtype, edge=draw(st.booleans()))
    base = p.op("mul", Ref(x), 2) if dtype != "bool" else x
    if in_place and draw(st.integers(0, 4)) == 0:
        base = x  # torch refuses a leaf requiring grad
    if op == "fill_diagonal_":
        args: list = [draw(st.sampled_from((-1.5, 2, True)))]
        kwargs = {"wrap": True} if draw(st.booleans()) else {}
    elif op in VIEW_SCATTERS:  # a src of the view's shape (now and then not), maybe of another dtype
        args, sshape = draw(st.sampled_from(VIEW_SCATTERS[op]))
        sshape = sshape if draw(st.integers(0, 5)) else (2, 2)
        src = p.leaf(sshape, dtype if draw(st.integers(0, 5)) else dtype_of(draw, FLOAT_DTYPES))
        args, kwargs = [Ref(src), *args], {}
    elif op.startswith("masked"):
        mshape = draw(st.sampled_from(MASK_SHAPES))
        mdtype = draw(st.sampled_from(("bool", "bool", "bool", "int64")))
        mask = p.given(op_data(draw, mshape, "bool"), mdtype)
        sdtype = dtype if draw(st.integers(0, 5)) else dtype_of(draw, ALL_DTYPES)
        # a short source only out of place: torch's kernel has written the first ones when it raises
        src = p.leaf((24 if in_place else draw(st.sampled_from((24, 24, 2))),), sdtype)
        args, kwargs = [Ref(mask), Ref(src)], {}
    else:
        size = shape[dim] if shape else 1
        top = size - 1 + (draw(st.integers(0, 5)) == 0)  # now and then one out of range
        count = math.prod(ishape)
        data = draw(st.lists(st.integers(-size, top), min_size=count, max_size=count))
        index = p.given(np.array(data).reshape(ishape), draw(st.sampled_from(INDEX_DTYPES)), prefix="i")
        value = Ref(p.leaf((), dtype)) if draw(st.booleans()) else draw(st.sampled_from((-2.5, 3, True)))
        args, kwargs = [dim, Ref(index), value], {}
    result = p.op(op, Ref(base), *args, **kwargs)
    return p.end(weighted(p, base if in_place else result))


@pytest.mark.rule("OPS-014")
@pytest.mark.parametrize("op", FILL_OPS)
@examples(0.1)
@given(data=st.data())
def test_fill_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(fill_ops(op), label="program"), backend, reference)


PUT_OPS = ("index_put", "index_put_", "put", "put_")
PUT_WEIGHT = 0.15
PUT_SHAPE = (3, 4)
# index_put's indices, as (what they index, how many): rows and columns, rows alone, a mask of rows,
# a mask of every element
PUT_KEYS = (("pairs", 3), ("rows", 2), ("row mask", 0), ("mask", 0), ("pairs", 1), ("rows", 0))


def _distinct(draw: Any, pool: list, n: int, repeat: bool) -> list:
    """``n`` of ``pool``: distinct, or (``repeat``) repeating now and then."""
    if repeat:
        return draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    return draw(st.permutations(pool))[:n]


def _put_key(draw: Any, p: OpProgram, kind: str, n: int, repeat: bool) -> tuple[list, tuple]:
    """index_put's index tensors of ``kind`` (negative ones too), and the shape they select."""
    rows, cols = PUT_SHAPE
    if kind == "pairs":
        cells = _distinct(draw, [(r, c) for r in range(rows) for c in range(cols)], n, repeat)
        row_index = [r - rows if draw(st.booleans()) else r for r, _ in cells]  # the same rows
        return [Ref(p.indices(row_index)), Ref(p.indices([c for _, c in cells]))], (n,)
    if kind == "rows":
        pool = list(range(-rows, 0)) if draw(st.booleans()) else list(range(rows))
        picked = _distinct(draw, pool, n, repeat)
        return [Ref(p.indices(picked))], (n, cols)
    shape = (rows,) if kind == "row mask" else PUT_SHAPE
    mask = draw(st.lists(st.booleans(), min_size=math.prod(shape), max_size=math.prod(shape)))
    selected = (sum(mask), cols) if kind == "row mask" else (sum(mask),)
    return [Ref(p.indices(np.array(mask).reshape(shape).tolist(), "bool"))], selected


@st.composite
def put_ops(draw: Any, op: str) -> Program:
    """index_put / put (``accumulate`` or not), out of place or in place on a non-leaf copy, of a
    floating leaf: index tensors (rows and columns, rows, masks; negative ones too) or flat indices,
    values of the selected shape (or broadcast to it), then weighted and backpropagated twice. With
    ``accumulate`` the indices repeat (each adds); without, they are distinct (which of duplicates
    wins is undefined in torch). One program in four is one torch refuses: values of another dtype
    or shape, an index out of range, a float index."""
    p = OpProgram(draw)
    dtype = dtype_of(draw, ("float32", "float64"))
    x = p.leaf(PUT_SHAPE, dtype, edge=draw(st.integers(0, 3)) == 0)
    target = p.op("mul", Ref(x), 2)
    accumulate = draw(st.booleans())
    refused = draw(st.sampled_from((None, None, None, "dtype", "shape", "range", "float")))
    if op.startswith("put"):
        n = draw(st.integers(1, 5))
        flat = _distinct(draw, list(range(-12, 12)), n, accumulate)
        if refused == "range":
            flat[-1] = 12
        shape = draw(st.sampled_from(((n,), (1, n))))
        idtype = "float32" if refused == "float" else "int64"
        index = Ref(p.given(np.array(flat).reshape(shape).tolist(), idtype, prefix="i"))
        selected = (n + (refused == "shape"),)
    else:
        kind, n = draw(st.sampled_from(PUT_KEYS))
        indices, selected = _put_key(draw, p, kind, n or draw(st.integers(1, 3)), accumulate)
        if refused == "range":
            indices = [Ref(p.indices([PUT_SHAPE[0]]))]
        elif refused == "float":
            indices = [Ref(p.given([0, 1], "float32", prefix="i"))]
        index = tuple(indices)
        if refused == "shape":
            selected = (*selected[:-1], selected[-1] + 1) if selected else (2,)
        elif selected and draw(st.integers(0, 3)) == 0:  # broadcast to what they select
            selected = (1,) * draw(st.integers(0, 1)) + selected[-1:]
    values = p.leaf(selected, "float16" if refused == "dtype" else dtype, edge=draw(st.booleans()))
    result = p.op(op, Ref(target), index, Ref(values), accumulate=accumulate)
    return p.end(weighted(p, target if op.endswith("_") else result))


@pytest.mark.rule("OPS-014")
@pytest.mark.parametrize("op", PUT_OPS)
@examples(PUT_WEIGHT)
@given(data=st.data())
def test_put_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(put_ops(op), label="program"), backend, reference)


IDX = "index"  # in STRUCTURE_FORMS: an int64 leaf of the indices that follow it
LEAF = "leaf"  # in STRUCTURE_FORMS' keywords: a floating leaf of the shape that follows it
LIST = "list"  # in STRUCTURE_FORMS: the operands that follow it passed as one list
# each op's forms: its tensor operands (shapes of floating leaves, or (IDX, data) for an index
# leaf), then its other arguments and keywords; the first form (drawn most often) is a valid one
# whose gradient shows a misplaced element, the last ones what torch refuses
STRUCTURE_FORMS: dict[str, tuple[tuple[tuple, tuple, dict], ...]] = {
    "kron": (
        (((2, 3), (3, 2)), (), {}), (((3,), (2, 1, 2)), (), {}), (((), (2,)), (), {}),
        (((2, 0), (2,)), (), {}),
    ),
    "tensordot": (
        (((2, 3, 2), (3, 2, 4)), (2,), {}), (((2, 3), (3, 4)), (), {"dims": 1}), (((2, 3), (2,)), (0,), {}),
        (((3, 2, 2), (2, 3)), (([1, 0], [0, 1]),), {}), (((3, 1), (3, 4)), (([1], [0]),), {}),
        (((2, 3), (1, 3)), (([-2], [0]),), {}), (((2, 3), (2, 3)), (([0], [1]),), {}),
        (((2, 3), (3,)), (([1, 0], [0]),), {}), (((2, 3), (3, 2)), (3,), {}), (((2, 3), (3, 2)), (-1,), {}),
        (((2, 3), (3, 2)), (([0, 0], [1, 1]),), {}),
    ),
    "take_along_dim": (
        (((3, 4), (IDX, [[1, 0, 3], [2, 2, 0], [3, 1, 1]])), (1,), {}),
        (((3, 4), (IDX, [[2, 0, 1, 1]])), (), {"dim": 0}), (((2, 3), (IDX, [5, 0, 0, 2])), (), {}),
        (((2, 1, 3), (IDX, [[[0], [1]]])), (-1,), {}), (((3, 4), (IDX, [1, 0])), (1,), {}),
        (((3, 4), (IDX, [[1], [0]])), (1,), {}), (((3, 4), (IDX, [[1]])), (2,), {}),
    ),
    "renorm": (
        (((3, 4),), (2, 0, 1.0), {}), (((2, 3, 2),), (1, -1, 0.5), {}), (((3, 2),), (3.5, 1, 0.8), {}),
        (((2, 3),), (INF, 0, 0.4), {}), (((2, 3),), (0.5, 1, 2.0), {}), (((3,),), (2, 0, 1.0), {}),
        (((2, 3),), (2, 2, 1.0), {}), (((2, 3),), (0, 0, 1.0), {}), (((2, 3),), (2, 0, -1.0), {}),
    ),
    "diagflat": ((((2, 3),), (), {}), (((3,),), (1,), {}), (((),), (-2,), {}), (((0,),), (), {})),
    "cartesian_prod": (
        (((3,), (2,)), (), {}), (((2,), (1,), (3,)), (), {}), (((3,),), (), {}), (((0,), (2,)), (), {}),
        (((2, 2), (2,)), (), {}),
    ),
    "trapezoid": (
        (((2, 4), (4,)), (), {}), (((2, 3),), (), {"dx": 0.5, "dim": 0}),
        (((3, 2, 3), (2, 3)), (), {"dim": 1}),
        (((3,),), (), {}), (((2, 0),), (), {}), (((2, 3), (2,)), (), {}), (((2, 3),), (), {"dim": 2}),
    ),
    "linalg.vecdot": (
        (((2, 3), (3,)), (), {}), (((2, 3), (2, 3)), (), {"dim": 0}), (((2, 1, 3), (2, 3)), (), {}),
        (((2, 3), (2,)), (), {}),
    ),
    "linalg.diagonal": (
        (((2, 3, 4),), (), {}), (((3, 4),), (), {"offset": 1}), (((2, 3, 4),), (), {"offset": -1, "dim1": 0}),
        (((3,),), (), {}),
    ),
}
STRUCTURE_FORMS.update({
    "cross": (
        (((2, 3), (2, 3)), (), {"dim": 1}), (((3, 2), (3, 1)), (), {}), (((2, 3), (1, 3)), (-1,), {}),
        (((2, 3), (3,)), (), {"dim": 1}), (((2, 2), (2, 2)), (), {}), (((2, 3), (2, 3)), (0,), {}),
    ),
    "linalg.cross": (
        (((2, 3), (2, 3)), (), {}), (((3, 2), (3, 1)), (), {"dim": 0}), (((2, 3), (3, 3)), (), {}),
    ),
    "dist": (
        (((2, 3), (2, 3)), (), {}), (((2, 3), (3,)), (1,), {}), (((2, 3), (1, 3)), (INF,), {}),
        (((3,), ()), (0,), {}), (((2, 3), (2, 3)), (), {"p": 3}), (((2, 3), (2, 3)), (0.5,), {}),
        (((2, 3), (3, 3)), (), {}),
    ),
})
STRUCTURE_FORMS.update({
    "cov": (
        (((3, 4),), (), {}), (((4,),), (), {"correction": 0}),
        (((2, 4),), (), {"fweights": (IDX, [1, 0, 2, 3])}),
        (((2, 4),), (), {"aweights": (LEAF, (4,)), "correction": 2}),
        (((2, 3),), (), {"fweights": (IDX, [1, 2, 1]), "aweights": (LEAF, (3,))}), (((2, 1),), (), {}),
        (((),), (), {}), (((2, 3),), (), {"correction": 3}), (((2, 3),), (), {"fweights": (IDX, [1, -1, 1])}),
        (((2, 3),), (), {"fweights": (IDX, [1, 1])}), (((2, 2, 2),), (), {}),
    ),
    "corrcoef": ((((3, 4),), (), {}), (((4,),), (), {}), (((2, 1),), (), {}), (((2, 2, 2),), (), {})),
    "vander": ((((3,),), (), {}), (((4,),), (2,), {"increasing": True}), (((3,),), (), {"N": 0}),
               (((2, 2),), (), {}), (((3,),), (), {"N": -1})),
    "linalg.vander": (
        (((2, 3),), (), {}), (((3,),), (), {"N": 4}), (((),), (), {"N": 3}), (((3,),), (), {"N": 1}),
    ),
    # multi_dot's tensors are one list: its first operand, the LIST of the following shapes
    "linalg.multi_dot": (
        ((LIST, (2, 3), (3, 4), (4, 1)), (), {}), ((LIST, (3,), (3, 2), (2, 2), (2, 5)), (), {}),
        ((LIST, (2, 2), (2, 2), (2, 2)), (), {}), ((LIST, (3,), (3,)), (), {}),
        ((LIST, (2, 3), (2, 3)), (), {}),
        ((LIST, (2, 3), (3,), (3, 2)), (), {}), ((LIST, (3,)), (), {}),
    ),
    "combinations": (
        (((4,),), (), {}), (((4,),), (3,), {}), (((3,),), (2, True), {}), (((3,),), (), {"r": 0}),
        (((0,),), (), {}), (((2, 2),), (), {}), (((3,),), (-1,), {}),
    ),
    "block_diag": (
        (((2, 3), (3,), ()), (), {}), (((0,), (2, 2)), (), {}), (((2, 0), (1, 2)), (), {}),
        (((2, 2),), (), {}), (((2, 2), (2, 1, 2)), (), {}),
    ),
})
STRUCTURE_FORMS["trapz"] = STRUCTURE_FORMS["cumulative_trapezoid"] = STRUCTURE_FORMS["trapezoid"]
STRUCTURE_OPS = tuple(STRUCTURE_FORMS)
STRUCTURE_WEIGHT = 0.1


@st.composite
def structure_ops(draw: Any, op: str, forms: dict = STRUCTURE_FORMS) -> Program:
    """Structure op ``op`` in one of its ``forms``, on leaves of a floating dtype (now and then the
    second of another, or of an integer or bool dtype: promoted or refused), its result weighted
    and backpropagated twice."""
    p = OpProgram(draw)
    operands, args, kwargs = draw(st.sampled_from(forms[op]))
    dtype = dtype_of(draw, ("float32", "float64"))
    tensors: list = []
    listed = operands[:1] == (LIST,)
    for i, operand in enumerate(operands[listed:]):
        if operand and operand[0] == IDX:
            tensors.append(Ref(p.indices(operand[1])))
            continue
        own = dtype
        if i and draw(st.integers(0, 4)) == 0:
            own = dtype_of(draw, ALL_DTYPES)
        tensors.append(Ref(p.leaf(operand, own, edge=draw(st.integers(0, 3)) == 0)))
    kwargs = {k: _structure_keyword(p, v, dtype) for k, v in kwargs.items()}
    tensors = [tensors] if listed else tensors
    result = p.op(op, *tensors, *args, **kwargs)
    return p.end(weighted(p, values_of(p, result) if op in PAIRS else result))


# OPS-013: the float ops: an integer exponent (ldexp's exact path, past the exponent range too,
# widening the input with torch's resize warning), a floating one, broadcasting, an integer input
# refused; edge values (zeros of both signs, infinities, NaN) one program in four
FLOAT_BITS_FORMS: dict[str, tuple[tuple[tuple, tuple, dict], ...]] = {
    "frexp": ((((2, 3),), (), {}), (((),), (), {}), (((0,),), (), {}), (((IDX, [1, 2]),), (), {})),
    "ldexp": (
        (((2, 3), (IDX, [[1, -2, 0]])), (), {}), (((2, 3), (3,)), (), {}),
        (((3,), (IDX, [130, -150, 3])), (), {}), (((2, 1), (IDX, [1, 2, 3])), (), {}), (((3,), ()), (), {}),
        (((2,), (3,)), (), {}),
    ),
    "nextafter": (
        (((2, 3), (2, 3)), (), {}), (((2, 3), (3,)), (), {}), (((3,), ()), (), {}), (((2,), (3,)), (), {}),
    ),
}
FLOAT_BITS = tuple(FLOAT_BITS_FORMS)
PAIRS = ("frexp",)  # ops returning a named pair: its first (differentiable) part is weighted


@pytest.mark.rule("OPS-013")
@pytest.mark.parametrize("op", FLOAT_BITS)
@examples(STRUCTURE_WEIGHT)
@given(data=st.data())
def test_float_bits_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(structure_ops(op, FLOAT_BITS_FORMS), label="program"), backend, reference)


def _structure_keyword(p: OpProgram, value: Any, dtype: str) -> Any:
    """A keyword of STRUCTURE_FORMS: an index leaf, a floating leaf (positive: weights) or itself."""
    if isinstance(value, tuple) and value[0] == IDX:
        return Ref(p.indices(value[1]))
    if isinstance(value, tuple) and value[0] == LEAF:
        weights = np.linspace(0.5, 2.0, math.prod(value[1])).reshape(value[1])
        return Ref(p.given(weights.tolist(), dtype, True))
    return value


# the shape and index queries of OPS-012, observed: broadcast_shapes of ints, sequences and None
# (mismatched and negative sizes refused), is_nonzero of one element (NaN, zeros; none or several
# refused), unravel_index of int indices (negative too) into an int or a sequence shape (a float
# index, a negative size refused)
QUERY_SHAPES = ((2, 1), (3,), (1, 3), (2, 3), (4,), (0,), (1,), (), (-1,), None, 3, 1)
NONZERO_SHAPES = ((), (1,), (1, 1), (), (1,), (2,), (0,))
UNRAVEL_SHAPES = ((2, 3), (4,), 4, (10, 10, 10), (2, 0), (3, -2), (), (1, 2, 1))
SHAPE_QUERIES = ("broadcast_shapes", "is_nonzero", "unravel_index")


@st.composite
def shape_queries(draw: Any, op: str) -> Program:
    """``op`` of SHAPE_QUERIES on drawn shapes or a drawn leaf; its result (or error) observed as
    it prints."""
    p = OpProgram(draw)
    if op == "broadcast_shapes":
        shapes = draw(st.lists(st.sampled_from(QUERY_SHAPES), max_size=3))
        result = p.op(op, *[list(s) if isinstance(s, tuple) else s for s in shapes])
    elif op == "is_nonzero":
        shape = draw(st.sampled_from(NONZERO_SHAPES))
        dtype = dtype_of(draw, FLOAT_DTYPES if draw(st.integers(0, 3)) else ALL_DTYPES)
        values = draw(st.lists(st.sampled_from((NAN, 0.0, -0.0, NAN, 1.5, -2.0)), min_size=math.prod(shape),
                               max_size=math.prod(shape)))
        if not dtype.startswith("float"):
            values = [_fit(v if v == v else 1.0, dtype) for v in values]
        result = p.op(op, Ref(p.given(np.array(values).reshape(shape).tolist(), dtype)))
    else:
        shape = draw(st.sampled_from(UNRAVEL_SHAPES))
        size = max(math.prod(shape if isinstance(shape, tuple) else (shape,)), 1)
        index_shape = draw(st.sampled_from(((), (3,), (2, 1))))
        flat = draw(st.lists(st.integers(-size, 2 * size), min_size=math.prod(index_shape),
                             max_size=math.prod(index_shape)))
        dtype = draw(st.sampled_from(("int64", "int32", "int16", "float32")))
        indices = p.indices(np.array(flat).reshape(index_shape).tolist(), dtype)
        result = p.op(op, Ref(indices), list(shape) if isinstance(shape, tuple) else shape)
    p.names.remove(result)  # a Size, a bool, a tuple of tensors: observed as printed
    p.steps.append(ObservePlain(result))
    return p.observed()


@pytest.mark.rule("OPS-012")
@pytest.mark.parametrize("op", SHAPE_QUERIES)
@examples(STRUCTURE_WEIGHT)
@given(data=st.data())
def test_shape_queries(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(shape_queries(op), label="program"), backend, reference)


# the integer ops of OPS-012, one test each, every program one of their spellings (function, operator,
# reflected operator, in place): on integer leaves (now and then a bool or floating one: refused), the
# second operand a tensor (broadcast) or, for the shifts, a number; in place on a copy
INTEGER_SPELLINGS = {
    "bitwise_right_shift": ("bitwise_right_shift", "__rshift__", "__rrshift__", "bitwise_right_shift_",
                            "__irshift__"),
    "gcd": ("gcd", "gcd_"),
    "lcm": ("lcm", "lcm_"),
    "bitwise_left_shift": ("bitwise_left_shift", "__lshift__", "__rlshift__", "bitwise_left_shift_",
                           "__ilshift__"),
}
INTEGER_OPS = tuple(INTEGER_SPELLINGS)
# values: zeros, signs, the narrow dtypes' extremes, shift amounts past every bit width
INTEGER_VALUES = (0, 1, -1, 6, -4, 12, 7, 100, -128, 127, 255, 8, 16, 33, 63, 64, -300)


@st.composite
def integer_ops(draw: Any, name: str) -> Program:
    """Integer op ``name`` in one of its spellings, of two broadcast operands of integer dtypes (now
    and then bool or floating ones) holding INTEGER_VALUES wrapped into their range; the shifts'
    second operand now and then a number; an in-place op on a copy of the first."""
    p = OpProgram(draw)
    op = draw(st.sampled_from(INTEGER_SPELLINGS[name]))
    dtypes_ = [dtype_of(draw, INT_DTYPES if draw(st.integers(0, 5)) else ALL_DTYPES) for _ in range(2)]
    shapes = draw(st.sampled_from((((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (3,)), ((3,), (2,)))))
    leaves = []
    for dtype, shape in zip(dtypes_, shapes, strict=True):
        n = math.prod(shape)
        drawn = draw(st.lists(st.sampled_from(INTEGER_VALUES), min_size=n, max_size=n))
        values = [_fit(v, dtype) for v in drawn]
        leaves.append(p.given(np.array(values).reshape(shape).tolist(), dtype))
    numeric = "shift" in op and draw(st.integers(0, 3)) == 0 or op in ("__rlshift__", "__rrshift__")
    other: Any = draw(st.sampled_from((2, 9, 65, -1))) if numeric else Ref(leaves[1])
    first = Ref(leaves[0])
    if op.endswith("_") and not op.startswith("__") or op in ("__ilshift__", "__irshift__"):
        first = Ref(p.op("clone", first))
    p.op(op, first, other)
    return p.observed()


def _fit(value: int, dtype: str) -> Any:
    """``value`` as a ``dtype`` holds it (wrapped into the integer dtype's range)."""
    if dtype == "bool":
        return bool(value)
    if dtype.startswith("float"):
        return float(value)
    return int(np.array(value).astype(np.int64).astype(dtype))


@pytest.mark.rule("OPS-012")
@pytest.mark.parametrize("op", INTEGER_OPS)
@examples(STRUCTURE_WEIGHT)
@given(data=st.data())
def test_integer_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(integer_ops(op), label="program"), backend, reference)


# (after the integer ops' test: a planted fault's session stops at the first test failing)
@pytest.mark.rule("OPS-012")
@pytest.mark.parametrize("op", STRUCTURE_OPS)
@examples(STRUCTURE_WEIGHT)
@given(data=st.data())
def test_structure_ops(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(structure_ops(op), label="program"), backend, reference)


# -- argument coverage (oracle.coverage) ---------------------------------------------------------
def _in_place(ops: tuple[str, ...], forms: set[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``ops`` and the in-place forms of those of ``forms`` that the programs run."""
    return (*ops, *(op + "_" for op in ops if op in forms))


def _at(bound: str) -> coverage.Callable[[coverage.Call], bool]:
    """A test: the input equals the op's argument ``bound`` (a number or a tensor) somewhere, where
    a gradient flows."""
    return coverage.somewhere(lambda x, call: x == coverage.values_of(call, bound))


def _beyond(bound: str, sign: int) -> coverage.Callable[[coverage.Call], bool]:
    """A test: the input is beyond ``bound`` (below with ``sign`` -1, above with 1) somewhere."""
    return coverage.somewhere(lambda x, call: sign * (x - coverage.values_of(call, bound)) > 0)


def _any(name: str, predicate: coverage.Callable[[np.ndarray], np.ndarray]) -> coverage.Callable:
    """A test: ``predicate`` holds somewhere in the values of argument ``name``."""
    return lambda call: bool(np.any(predicate(coverage.values_of(call, name))))


def _zeros(several: bool) -> coverage.Callable[[coverage.Call], bool]:
    """A test: a lane of the input holds exactly one zero (``several``: two or more)."""
    return coverage.in_a_lane(lambda lane: np.count_nonzero(lane == 0) in ((2, 3, 4, 5) if several else (1,)))


def _repeated(call: coverage.Call) -> bool:
    index = call.tensor("index")
    return len(np.unique(index)) < index.size


TIES = {  # values, not only gradients: which index a tie or NaN selects is a rule too
    "ties": coverage.in_a_lane(coverage.tied, gradient=False),
    "NaN": coverage.in_a_lane(lambda lane: np.isnan(lane).any(), gradient=False),
}
PICKING = ("maximum", "minimum", "fmax", "fmin")  # binary ops whose gradient picks a side
# Which (API, argument, value class) items each rule's programs must exercise: every keyword
# argument of every op (from torch's ATen schemas), and the edge values of the ops whose gradient
# masks or branches there (zeros, signed zeros, NaN, infinities, ties, exact bounds).
COVERAGE: dict[str, coverage.Targets] = {
    "OPS-001": coverage.Targets(  # pow's exponent (a number or a tensor) is a binary op's: OPS-002
        coverage.keywords(*(op for op in _in_place(UNARY, IN_PLACE) if op not in ("pow", "__pow__", "pow_"))),
        coverage.edges(_in_place(("relu", "abs", "sgn", "sign"), IN_PLACE), "input", "0", "-0.0", "NaN"),
        coverage.edges(_in_place(("sqrt", "rsqrt", "reciprocal"), IN_PLACE), "input", "0", "-0.0"),
        coverage.edges((*_in_place(("sqrt", "rsqrt", "log"), IN_PLACE), "log2", "log10"), "input",
                       "negative"),
        coverage.edges(("log", "log_", "log2", "log2_", "log10", "log10_"), "input", "0"),
        coverage.edges(("log1p", "log1p_"), "input", "-1"),
        coverage.edges(("asin", "asin_", "acos", "acos_", "atanh", "atanh_"), "input", "1", "-1"),
        coverage.edges(("acosh", "acosh_"), "input", "1"),
        coverage.edges(("sinc", "sinc_"), "input", "0"),
        coverage.edges(("round", "round_"), "input", "a half-integer"),
        coverage.edges(("floor", "floor_", "ceil", "ceil_", "trunc", "trunc_", "frac", "frac_"), "input",
                       "an integer", "-0.0"),
        coverage.edges(("nan_to_num", "nan_to_num_"), "input", "NaN", "inf", "-inf"),
        coverage.edges(("logit", "logit_"), "input", "0", "1"),
        coverage.clause(("logit", "logit_"), "eps", {
            "with an input outside [eps, 1 - eps]": lambda call: call.arguments.get("eps") is not None
            and (_beyond("eps", -1)(call) or _beyond("eps", 1)(call)),
        }),
        coverage.clause(("clamp", "clamp_"), "input", {
            "at min": _at("min"), "at max": _at("max"), "below min": _beyond("min", -1),
            "above max": _beyond("max", 1),
        }),
        coverage.clause(("clamp", "clamp_"), "min", {
            "above max": lambda c: np.any(coverage.values_of(c, "min") > coverage.values_of(c, "max")),
        }),
        coverage.edges(("pow", "pow_", "__pow__"), "input", "0", "negative"),
    ),
    "OPS-002": coverage.Targets(
        coverage.keywords(*BINARY, *ARITHMETIC.values(), *_in_place(TERNARY, TERNARY)),
        coverage.clause(PICKING, "other", {"tied": coverage.ties("input", "other")}),
        coverage.edges(PICKING, "other", "NaN"),
        coverage.clause(("hypot", "atan2"), "other", {
            "0 with an input 0": lambda call: bool(((coverage.values_of(call, "input") == 0)
                                                     & (coverage.values_of(call, "other") == 0)).any()),
        }),
        coverage.clause("where", "condition", {
            "True": _any("condition", lambda c: c), "False": _any("condition", lambda c: ~c),
        }),
        coverage.edges("heaviside", "input", "0", "-0.0", gradient=False),
        coverage.edges(("div", "fmod", "remainder", "__mod__"), "other", "0"),
        coverage.edges(("copysign", "xlogy"), "other", "0", "-0.0"),
        coverage.edges("xlogy", "input", "0"),
        coverage.edges(("pow", "float_power"), "input", "0"),
        coverage.edges(("logaddexp", "logaddexp2"), "input", "-inf", "inf"),
    ),
    "OPS-003": coverage.Targets(
        coverage.keywords(*REDUCTIONS),
        coverage.clause(("max", "min", "amax", "aminmax", "cummax", "cummin"), "input", TIES),
        coverage.clause("prod", "input", {"one 0": _zeros(False), "several 0s": _zeros(True)}),
        coverage.clause("cumprod", "input", {"a 0": _zeros(False), "several 0s": _zeros(True)}),
        coverage.edges(("logsumexp", "logcumsumexp"), "input", "-inf", "inf"),
        coverage.edges(("nansum", "nanmean"), "input", "NaN"),
        coverage.clause(("var", "std", "var_mean", "std_mean"), "input", {
            "a lane of one element": coverage.in_a_lane(lambda lane: lane.size == 1),
        }),
    ),
    "OPS-004": coverage.Targets(coverage.keywords(*MATRIX)),
    "OPS-005": coverage.Targets(
        coverage.keywords(*GATHER_KINDS),
        coverage.clause("masked_fill", "mask", {
            "True": _any("mask", lambda m: m), "False": _any("mask", lambda m: ~m),
        }),
        coverage.clause(("gather", "index_select"), "index", {"repeated": _repeated}),
        coverage.edges(("softmax", "log_softmax"), "input", "-inf"),
    ),
    "OPS-006": coverage.Targets(coverage.keywords("narrow", "select", "narrow_copy")),
    "OPS-007": coverage.Targets(
        coverage.keywords(*INPLACE),
        coverage.edges("relu_", "input", "0", "-0.0"),
        coverage.clause("clamp_", "input", {"at min": _at("min"), "at max": _at("max")}),
    ),
    "OPS-008": coverage.Targets(coverage.keywords(*SORTING, *SEARCHES, *COUNTING),
                                coverage.clause(SORTING, "input", TIES)),
    "OPS-011": coverage.Targets(coverage.keywords(*SELECTING),
                                coverage.clause(("nanmedian", "mode"), "input", TIES)),
    "OPS-009": coverage.Targets(
        coverage.keywords(*SHAPE_OPS, *TRIANGLE_INDICES, *REPEATING, "scatter", "scatter_", "scatter_add",
                          "scatter_add_",
                          *INDEX_OPS),
        coverage.clause(("scatter_add", "scatter_add_", "index_add", "index_add_"), "index", {
            "repeated": _repeated,
        }),
    ),
    "OPS-013": coverage.Targets(coverage.keywords(*FLOAT_BITS, "ldexp_", "nextafter_")),
    "OPS-014": coverage.Targets(coverage.keywords(*FILL_OPS, *PUT_OPS)),
    "OPS-010": coverage.Targets(coverage.keywords(*COMPARISONS, *set(COMPARISONS.values())),
                                coverage.edges(tuple(COMPARISONS), "other", "NaN", gradient=False)),
}
