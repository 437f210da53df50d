"""Comparisons and logic: eq, ne, lt, le, gt, ge, the logical and bitwise ops, isfinite and isnan,
equal and allclose, and their operators; none has a derivative (their results are bool, or of an
integer dtype for the bitwise ops), so they record no node."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import zeros
from impl._ops.elementwise import BINARY, UNARY, zero_grad
from impl._ops.inplace import apply_inplace
from impl._ops.table import FLOAT_DTYPES, NOT_OPERANDS, D, OpDef, apply
from impl._signatures import EXPECTED, OVERLOADS, SAME_DTYPE, Out, invalid_call
from impl._tensor import Tensor
from impl._xp import namespace_of


def _nondiff(fwd: Any, promote: str | None = "common") -> OpDef:
    return OpDef("NotDifferentiable", fwd, BINARY, promote=promote, iterator_operands=BINARY)


EQ = _nondiff(lambda xp, a, b: a == b)


NE = _nondiff(lambda xp, a, b: a != b)


def _ordered(name: str, fwd: Any) -> Any:
    """A comparison of order, whose torch kernel ``name`` has no version for complex dtypes."""

    def run(xp: Any, a: Any, b: Any) -> Any:
        if a.dtype.kind == "c":
            raise dtypes.kernel_missing(f"{name}_cpu", a.dtype)
        return fwd(xp, a, b)

    return run


LT = _nondiff(_ordered("lt", lambda xp, a, b: a < b))


LE = _nondiff(_ordered("le", lambda xp, a, b: a <= b))


GT = _nondiff(_ordered("gt", lambda xp, a, b: a > b))


GE = _nondiff(_ordered("ge", lambda xp, a, b: a >= b))


def _bitwise(name: str, fwd: Any) -> Any:
    """A bitwise kernel, which torch has for integers and bool only (the common dtype's)."""

    def run(xp: Any, *arrays: Any) -> Any:
        if arrays[0].dtype.kind not in "iub":
            raise dtypes.kernel_missing(f"{name}_cpu", arrays[0].dtype)
        return fwd(xp, *arrays)

    return run


AND = _nondiff(_bitwise("bitwise_and", lambda xp, a, b: a & b))


OR = _nondiff(_bitwise("bitwise_or", lambda xp, a, b: a | b))


XOR = _nondiff(_bitwise("bitwise_xor", lambda xp, a, b: a ^ b))


NOT = OpDef("NotDifferentiable", _bitwise("bitwise_not", lambda xp, a: ~a), iterator_operands=UNARY)


LOGICAL_AND = _nondiff(lambda xp, a, b: xp.logical_and(a, b))  # nonzero tests: a bool result


LOGICAL_OR = _nondiff(lambda xp, a, b: xp.logical_or(a, b))


LOGICAL_XOR = _nondiff(lambda xp, a, b: xp.logical_xor(a, b))


LOGICAL_NOT = OpDef("NotDifferentiable", lambda xp, a: xp.logical_not(a), iterator_operands=UNARY)


ISFINITE = OpDef("NotDifferentiable", lambda xp, a: xp.isfinite(a), iterator_operands=UNARY)


ISNAN = OpDef("NotDifferentiable", lambda xp, a: xp.isnan(a), iterator_operands=UNARY)


def _named_unary(op: OpDef, name: str) -> Any:
    """A unary op whose node says nothing of its name (a not differentiable one), for the
    errors torch words with it (``isnan(): argument 'input' ...``)."""

    def fn(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise invalid_call(fn, locals(), name)
        return apply(op, input)

    return fn


isfinite = api.variants("isfinite")(_named_unary(ISFINITE, "isfinite"))


isnan = api.variants("isnan")(_named_unary(ISNAN, "isnan"))


logical_not = api.variants("logical_not", out=Out(differentiable=False))(
    _named_unary(LOGICAL_NOT, "logical_not")
)


bitwise_not = api.variants("bitwise_not", out=dataclasses.replace(SAME_DTYPE, differentiable=False))(
    _named_unary(NOT, "bitwise_not")
)


def _cmp(op: OpDef, name: str, numbers: bool = True) -> Any:
    """The function ``name`` (a comparison, logical or bitwise op, which torch names in its
    errors); ``numbers``: whether ``other`` may be a Python number (not for the logical ones)."""

    def fn(input: Any, other: Any) -> Tensor:
        refused = isinstance(other, NOT_OPERANDS) or not (numbers or isinstance(other, Tensor))
        if refused or not isinstance(input, Tensor):
            raise invalid_call(fn, locals(), name)
        return apply(op, input, other)

    return fn


def _declare(op: OpDef, name: str, numbers: bool = True) -> Any:
    """``torch.<name>`` (taking out=; a comparison casts as TensorIterator does, a logical op
    once) and ``x.<name>()``: the method's argument a tensor, or also a number."""
    options = {"tensor_or_number": "other"} if numbers else {"tensor": "other"}
    out = Out(twice=numbers, differentiable=False, compares=True)
    return api.variants(name, out=out, **options)(_cmp(op, name, numbers))


eq, ne, lt, le = _declare(EQ, "eq"), _declare(NE, "ne"), _declare(LT, "lt"), _declare(LE, "le")
gt, ge = _declare(GT, "gt"), _declare(GE, "ge")
# NumPy's names, each its own function (torch's errors name the one called)
greater, greater_equal = _declare(GT, "greater"), _declare(GE, "greater_equal")
less, less_equal, not_equal = _declare(LT, "less"), _declare(LE, "less_equal"), _declare(NE, "not_equal")
logical_and = _declare(LOGICAL_AND, "logical_and", numbers=False)
logical_or = _declare(LOGICAL_OR, "logical_or", numbers=False)
logical_xor = _declare(LOGICAL_XOR, "logical_xor", numbers=False)
BITWISE = Out(twice=True, differentiable=False)  # integer ops: no derivative
bitwise_and = api.variants("bitwise_and", out=BITWISE)(_cmp(AND, "bitwise_and"))
bitwise_or = api.variants("bitwise_or", out=BITWISE)(_cmp(OR, "bitwise_or"))
bitwise_xor = api.variants("bitwise_xor", out=BITWISE)(_cmp(XOR, "bitwise_xor"))


# -- in place: eq_ ... ge_ and NumPy's names. The comparison runs in the operands' promoted dtype
# and its result is written in self's dtype (no cast check: a bool fits every dtype). torch
# records a node (its derivatives zeros) named for the op and overload: <Op>Backward0 for a number,
# <Op>Backward1 for a tensor.
def _compared(xp: Any, a: Any, b: Any = None, *, other: Any = None, compare: Any, common: Any) -> Any:
    b = xp.asarray(dtypes.cast_number(other, common)) if b is None else b.astype(common, copy=False)
    # (an integer or bool self too gets the node when other requires grad, as in torch: a floating
    # result records it, written back in self's dtype)
    written = a.dtype if a.dtype in FLOAT_DTYPES else np.float32
    return compare(xp, a.astype(common, copy=False), b).astype(written)


def _inplace_ops(base: str, compare: Any) -> tuple[OpDef, OpDef]:
    """The (number, tensor) OpDefs of ``base``_ (``EqBackward0``, ``EqBackward1``)."""
    node = base.capitalize() + "Backward"
    number = OpDef(f"{node}0", _compared, derivatives={"self": D("", zero_grad)})
    zeros_of_other = D("", lambda g, c: zeros(c.shape("other"), dtype=c.dtype("other")))
    others = {"self": D("", zero_grad), "other": zeros_of_other}
    return number, OpDef(f"{node}1", _compared, BINARY, others)


def _inplace_compare(name: str, base: str, op: OpDef) -> Any:
    """``x.<name>(other)``: ``op``'s comparison written into x."""
    number, tensor = _inplace_ops(base, op.forward)

    def method(self: Tensor, other: Any) -> Tensor:
        common = dtypes.result_type(self, other).np
        if isinstance(other, Tensor):
            return apply_inplace(tensor, self, other, compare=op.forward, common=common)
        return apply_inplace(number, self, other=other, compare=op.forward, common=common)

    return api.method(name, tensor_or_number="other")(method)


for _names, _base, _op in (
    (("eq_",), "eq", EQ), (("ne_", "not_equal_"), "ne", NE), (("lt_", "less_"), "lt", LT),
    (("le_", "less_equal_"), "le", LE), (("gt_", "greater_"), "gt", GT),
    (("ge_", "greater_equal_"), "ge", GE),
):
    for _name in _names:
        _inplace_compare(_name, _base, _op)


OVERLOADS["isin"] = tuple(
    f"({first}, {second}, *, bool assume_unique = False, bool invert = False, Tensor out = None)"
    for first, second in (
        ("Tensor elements", "Tensor test_elements"),
        ("Number element", "Tensor test_elements"),
        ("Tensor elements", "Number test_element"),
    )
)


@api.function("isin", out=Out("same", EXPECTED, differentiable=False))
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` (a tensor or a number) equals one of ``test_elements``, compared in
    the two's promoted dtype (NaN in nothing, -0.0 in [0.0]); negated with ``invert``. torch's sort
    and brute-force algorithms agree on every value, so neither is modelled."""
    operands = (elements, test_elements)
    if (
        not any(isinstance(x, Tensor) for x in operands)
        or not all(isinstance(x, (Tensor, bool, int, float, complex)) for x in operands)
        or not (isinstance(assume_unique, bool) and isinstance(invert, bool))
    ):
        raise invalid_call(isin, locals())
    for x in operands:
        d = x.dtype if isinstance(x, Tensor) else dtypes.scalar_dtype(x)
        if d is dtypes.bool_ or d.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {dtypes.scalar_type(d)}")
    common = dtypes.result_type(*operands).np
    arrays = [x._data if isinstance(x, Tensor) else dtypes.cast_number(x, common) for x in operands]
    xp = namespace_of(next(x._data for x in operands if isinstance(x, Tensor)))
    a, b = (xp.asarray(x).astype(common, copy=False) for x in arrays)
    return Tensor._from_array(xp.asarray(xp.isin(a, b.reshape(-1), invert=invert)).reshape(a.shape))


@api.variants("equal", tensor="other")
def equal(input: Tensor, other: Tensor) -> bool:
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(equal, locals())
    return tuple(input.shape) == tuple(other.shape) and bool((input._data == other._data).all())


@api.variants("allclose", tensor="other")
def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(allclose, locals())
    xp = namespace_of(input._data)
    return bool(xp.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@api.variants("isclose", tensor="other")
def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal values, infinities included,
    always close; NaNs close with ``equal_nan``), broadcast; operands of one dtype, as torch wants."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(isclose, locals())
    if input.dtype is not other.dtype:
        names = dtypes.scalar_type(input.dtype), dtypes.scalar_type(other.dtype)
        raise RuntimeError("{} did not match {}".format(*names))
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value}")
    xp = namespace_of(input._data)
    close = xp.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return Tensor._from_array(xp.asarray(close))


api.operator("__and__", "__rand__")(bitwise_and)


api.operator("__or__", "__ror__")(bitwise_or)


api.operator("__xor__", "__rxor__")(bitwise_xor)


for _name, _compare in {"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge}.items():
    api.operator(f"__{_name}__")(_compare)


@api.method("__invert__")
def _invert(self: Tensor) -> Tensor:
    """``~t``: bitwise_not, which torch's operator refuses for floating tensors first."""
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)
