"""Arithmetic: add, sub, rsub, mul, div (with rounding modes), floor_divide, neg, reciprocal and pow
(tensor**number, tensor**tensor, number**tensor), their operators and in-place forms, with torch's
type promotion, its alpha and rounding rules and derivatives.yaml's formulas."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import zeros_like
from impl._layout import c_ordered
from impl._ops.elementwise import (
    BINARY,
    UNARY,
    _add_scaled,
    _no_derivative,
    _plain_alpha,
    check_bool_subtraction,
    conj_of,
    mul_scalar,
    sub_scalar,
    zero_grad,
)
from impl._ops.inplace import _check_cast, apply_inplace, inplace_method, unary_inplace, unimplemented_out
from impl._ops.pointwise_ternary import WHERE
from impl._ops.table import (
    NOT_IMPLEMENTED,
    NOT_OPERANDS,
    OWN,
    D,
    OpDef,
    apply,
    auto_linear,
    bilinear,
    number_array,
)
from impl._signatures import (
    ELEMENTWISE,
    HIDDEN,
    OVERLOADS,
    SAME_DTYPE,
    Out,
    _invalid_combination,
    _Signature,
    invalid_call,
)
from impl._tensor import Tensor
from impl._xp import namespace_of

ADD = OpDef(
    "AddBackward0",
    lambda xp, a, b, alpha: a + b if _plain_alpha(alpha) else _add_scaled(xp, a, b, alpha),
    ("self", "other"),
    {"self": D("", lambda g, c: g), "other": D("alpha", lambda g, c: g if c.alpha == 1 else g * c.alpha)},
    promote="common",
    iterator_operands=BINARY,
    jvp=auto_linear,  # self_t + maybe_multiply(other_t, alpha)
)


SUB = OpDef(
    "SubBackward0",
    lambda xp, a, b, alpha: a - b if _plain_alpha(alpha) else _add_scaled(xp, a, b, alpha, -1),
    ("self", "other"),
    {"self": D("", lambda g, c: g), "other": D("alpha", lambda g, c: -g if c.alpha == 1 else -g * c.alpha)},
    promote="common",
    iterator_operands=BINARY,
    jvp=auto_linear,  # self_t - maybe_multiply(other_t, alpha)
)


def _rsub(xp: Any, a: Any, b: Any, alpha: Any) -> Any:
    return b - a if _plain_alpha(alpha) else _add_scaled(xp, b, a, alpha, -1)


def _rsub_number(xp: Any, a: Any, other: Any, alpha: Any) -> Any:
    """``other - alpha * a`` for a number ``other`` in torch's result type: an integer tensor with
    a float number gives the default dtype (numpy's would be float64), and the number is cast to
    the result's dtype as torch casts it (300 wraps in int8, 1e5 is inf in float16)."""
    if a.dtype.kind in "iub" and isinstance(other, (float, np.floating)):
        a = a.astype(dtypes.get_default_dtype().np)
    return _rsub(xp, a, number_array(xp, other, a.dtype), alpha)


# torch's rsub: sub with the operands swapped; for a number ``other`` (an attribute: RsubBackward1
# has no edge for it) the result type is computed in the forward
RSUB = OpDef(
    "RsubBackward0",
    _rsub,
    ("self", "other"),
    {"self": D("alpha", lambda g, c: -g if c.alpha == 1 else -g * c.alpha), "other": D("", lambda g, c: g)},
    promote="common",
    iterator_operands=("other", "self"),
    jvp=auto_linear,  # -maybe_multiply(self_t, alpha) + other_t
)


RSUB_NUMBER = OpDef(
    "RsubBackward1",
    _rsub_number,
    ("self",),
    {"self": RSUB.derivatives["self"]},
    iterator_operands=("other", "self"),
    jvp=lambda c: -c.self_t if c.alpha == 1 else c.self_t * -c.alpha,
)


MUL = OpDef(
    "MulBackward0",
    lambda xp, a, b: a * b,
    ("self", "other"),
    {"self": D("other", lambda g, c: g * c.other), "other": D("self", lambda g, c: g * c.self)},
    promote="common",
    iterator_operands=BINARY,
    jvp=bilinear,  # other_t * self_p + self_t * other_p
)


DIV = OpDef(
    "DivBackward0",
    lambda xp, a, b: a / b,
    ("self", "other"),
    {  # (complex: derivatives.yaml's conjugates, which decide the signs of zeros)
        "self": D("other", lambda g, c: g / conj_of(c.other)),
        "other": D("self other", lambda g, c: -g * conj_of((c.self / c.other) / c.other)),
    },
    promote="float",
    iterator_operands=BINARY,
    jvp=lambda c: _div_jvp(c),
    complex=OWN,
)


def _div_jvp(c: Any) -> Any:
    """derivatives.yaml's ``(self_t - other_t * result) / other_p``, a term of an undefined
    tangent (torch's zero tensor) left out."""
    self_t, other_t = c.tangent("self"), c.tangent("other")
    if other_t is None:
        return self_t / c.other
    moved = other_t * c.result
    return (-moved if self_t is None else self_t - moved) / c.other


def _div_mode_fwd(xp: Any, a: Any, b: Any, rounding_mode: str) -> Any:
    """torch's div with rounding: floats as C's trunc(a / b), or Python's floor division (torch's
    div_floor_floating: 1 // 0.1 is 9, where floor(1 / 0.1) is 10); integers exactly, refusing a
    zero divisor; no kernel for bool."""
    if a.dtype.kind == "b":
        raise dtypes.kernel_missing(f"div_{rounding_mode}_cpu", a.dtype)
    if a.dtype.kind in "iu":
        if (b == 0).any():
            raise RuntimeError("ZeroDivisionError")
        floor = xp.floor_divide(a, b)
        if rounding_mode == "floor":
            return floor
        return floor + ((a % b != 0) & ((a < 0) != (b < 0)))  # rounded up where the signs differ
    if rounding_mode == "trunc":
        return xp.trunc(a / b)
    return xp.floor_divide(a, b)


DIV_MODE = OpDef(
    "DivBackward2",
    _div_mode_fwd,
    ("self", "other"),
    # a step function: new zeros, no graph; torch's formula names self and other, so it saves them
    {"self": D("self other", zero_grad), "other": D("self other", zero_grad)},
    promote="common",
    iterator_operands=BINARY,
)


def _floor_of(xp: Any, a: Any, b: Any) -> Any:
    return _div_mode_fwd(xp, a, b, "floor")


_FLOOR_DIVIDE_GRAD = D("", _no_derivative("floor_divide"))


FLOOR_DIVIDE = OpDef(
    "NotImplemented",
    _floor_of,
    ("self", "other"),
    {"self": _FLOOR_DIVIDE_GRAD, "other": _FLOOR_DIVIDE_GRAD},
    promote="common",
    qualified_name=NOT_IMPLEMENTED,
    iterator_operands=BINARY,
)


FLOOR_DIVIDE_SCALAR = OpDef(  # tensor // number and number // tensor: one edge, the tensor's
    "NotImplemented",
    lambda xp, a, other, reverse: _floor_of(xp, *((other, a) if reverse else (a, other))),
    derivatives={"self": _FLOOR_DIVIDE_GRAD},
    qualified_name=NOT_IMPLEMENTED,
    iterator_operands=UNARY,
)


def _neg_fwd(xp: Any, a: Any) -> Any:
    """``-a``, which torch refuses for bool (numpy's message would be its own)."""
    if a.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
            "mask, use the `~` or `logical_not()` operator instead."
        )
    if a.dtype.kind == "c":
        return _complex_neg(xp, a)
    return -a


COMPLEX_CHUNK_BYTES = 64  # what torch's vectorised complex loop takes at a time (two 32-byte vectors)


def _complex_neg(xp: Any, a: Any) -> Any:
    """torch's neg of a complex tensor: ``0 - a`` in its vectorised loop (a 0 part's negation is
    +0.0), ``-a`` in the scalar loop over the tail of each row that fills no whole chunk; rows in
    memory order (the whole tensor when its dims permuted are contiguous)."""
    if not a.ndim:
        return -a
    order = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))
    b = a.transpose(order)
    row = b.size if b.flags.c_contiguous else b.shape[-1]
    out = 0 - b
    tail = row % (COMPLEX_CHUNK_BYTES // a.dtype.itemsize)
    if tail and row:
        rows = out.reshape(-1, row)
        rows[:, row - tail:] = -b.reshape(-1, row)[:, row - tail:]
        out = rows.reshape(b.shape)
    return out.transpose(np.argsort(order))


NEG = OpDef(
    "NegBackward0",
    _neg_fwd,
    derivatives={"self": D("", lambda g, c: -g)},
    iterator_operands=UNARY,
    jvp=auto_linear,
)


RECIPROCAL = OpDef(
    "ReciprocalBackward0",
    lambda xp, a: 1 / a,
    derivatives={"self": D("result", lambda g, c: -g * conj_of(c.result * c.result))},
    promote="float",
    iterator_operands=UNARY,
    complex=OWN,
)


def _pow_scalar_grad(g: Any, c: Any) -> Any:
    """torch's pow_backward: zeros (no graph) for exponent 0, else grad * (e * self^(e-1)). A bool
    exponent never equals 0 (torch's Scalar::equal): False goes through the product (-0.0s)."""
    if c.exponent == 0 and not isinstance(c.exponent, bool):
        return zeros_like(c.self)
    return g * mul_scalar(c.self.pow(c.exponent - 1), c.exponent)


def _pow_exponent_grad(g: Any, c: Any) -> Any:
    """torch's pow_backward_exponent: 0 where the base is 0 and the exponent >= 0; the base's log
    is taken in the promoted dtype (a float16 base of a float32 exponent is cast first)."""
    base = c.self.to(dtypes.result_type(c.self, c.exponent))
    return g * apply(WHERE, 0, c.result * base.log(), condition=(base == 0) & (c.exponent >= 0))


def _pow_self_grad(g: Any, c: Any) -> Any:
    """torch's pow_backward_self: 0 where the exponent is 0 (not 0 * 0**-1 = nan)."""
    e = c.exponent
    return apply(WHERE, 0, g * (e * c.self.pow(sub_scalar(e, 1))), condition=e == 0)


def _pow_scalar_fwd(xp: Any, a: Any, exponent: Any) -> Any:
    """torch's CPU pow(Tensor, Scalar): exponents 0 and 1 fill and copy; float32/64 kernels compute
    2, 3, 0.5, -0.5, -1, -2 as products, sqrt, rsqrt and reciprocals and other exponents with a
    nearly correctly rounded pow (float64 evaluation rounded, for float32); half precision goes
    through float32. Integers wrap; a negative integer exponent of an integer tensor is refused."""
    if a.dtype.kind in "iub":
        if isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if a.dtype.kind == "b":  # bool ** bool stays bool (numpy's power of bools is int8)
            return a.copy() if exponent else xp.ones_like(a)
        return a ** xp.asarray(exponent, dtype=a.dtype)
    if exponent == 0:
        return xp.ones_like(a)
    if exponent == 1:
        return a.copy()
    if a.ndim == 0:  # numpy reads 0-d arrays as scalars (with the scalar special cases below)
        return _pow_scalar_fwd(xp, a.reshape(1), exponent).reshape(())
    # the exponent takes the tensor's dtype; an array, not a scalar, keeps numpy off its own
    # scalar special cases (its sqrt for 0.5 gives nan for -inf where pow gives inf)
    e = xp.full(a.shape, exponent, dtype=a.dtype)
    if a.dtype.itemsize < 4:
        return xp.power(a.astype(xp.float32), e.astype(xp.float32)).astype(a.dtype)
    special = _POW_SPECIAL.get(float(exponent))
    if special is not None:
        return special(xp, a)
    if a.dtype.itemsize == 4:
        return xp.power(a.astype(xp.float64), e.astype(xp.float64)).astype(a.dtype)
    return xp.power(a, e)


_POW_SPECIAL = {
    2.0: lambda xp, a: a * a,
    3.0: lambda xp, a: a * a * a,
    0.5: lambda xp, a: xp.sqrt(a),
    -0.5: lambda xp, a: 1 / xp.sqrt(a),
    -1.0: lambda xp, a: 1 / a,
    -2.0: lambda xp, a: 1 / (a * a),
}


def _pow_fwd(xp: Any, a: Any, b: Any) -> Any:
    """Elementwise pow of arrays of one dtype; integer powers as torch's powi: a negative exponent
    gives 1 for base 1, +-1 for base -1 (by parity) and 0 otherwise. float32 as glibc's powf (torch's
    std::pow, which its loop takes wherever the rows are too short for vectors, as for a base
    broadcast against a few exponents): the float64 pow rounded, where numpy's float32 power
    is an ulp off for ~20% of such inputs. (torch's vector code, Sleef's powf, is not emulated.)"""
    if a.dtype.kind not in "iu":
        if a.shape != b.shape:  # numpy computes a broadcast (stride-0) exponent of 0.5 as a sqrt:
            a, b = (x.copy() for x in xp.broadcast_arrays(a, b))  # nan for -inf, -0 for -0 (torch: inf, 0)
        if a.dtype == xp.float32:
            return xp.power(a.astype(xp.float64), b.astype(xp.float64)).astype(xp.float32)
        return xp.power(a, b)
    negative = b < 0
    if not negative.any():
        return a**b
    out = a ** xp.where(negative, 0, b)
    minus_one = xp.where(b % 2 == 0, 1, -1)
    special = xp.where(a == 1, 1, xp.where(a == -1, minus_one, 0))
    return xp.where(negative, special, out).astype(out.dtype)


POW_TS = OpDef(
    "PowBackward0",
    _pow_scalar_fwd,
    derivatives={"self": D("self exponent", _pow_scalar_grad)},
    promote="common",
    iterator_operands=UNARY,
    jvp=lambda c: _pow_scalar_grad(c.self_t, c),  # pow_backward(self_t, self_p, exponent)
)


POW_TT = OpDef(
    "PowBackward1",
    _pow_fwd,
    ("self", "exponent"),
    {
        "self": D("self exponent", _pow_self_grad),
        "exponent": D("self exponent result", _pow_exponent_grad),
    },
    promote="common",
    iterator_operands=("self", "exponent"),
)


POW_ST = OpDef(  # its result has C strides whatever the exponent's layout, as torch's has
    "PowBackward2",
    # torch casts the base to the exponent's dtype unchecked: (-1) ** a uint8 tensor is 255 ** it
    lambda xp, e, base: c_ordered(_pow_fwd(xp, number_array(xp, base, e.dtype), e)),
    ("exponent",),
    {"exponent": D("base exponent result", lambda g, c: _pow_base_scalar_grad(g, c))},
)


def _pow_base_scalar_grad(g: Any, c: Any) -> Any:
    """torch's pow_backward_exponent for a Scalar base: grad * (result * log(base)), 0 where the
    base is 0 and the exponent >= 0."""
    if c.base == 0:
        return g * apply(WHERE, 0, mul_scalar(c.result, _log_scalar(c.base)), condition=c.exponent >= 0)
    return g * mul_scalar(c.result, _log_scalar(c.base))


def _log_scalar(v: float) -> float:
    return math.log(v) if v > 0 else (float("-inf") if v == 0 else float("nan"))


# torch's signatures of the arithmetic functions (add's and sub's deprecated ``(input, alpha, other)``
# one taken but never listed)
_ALPHA = "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)"
_ALPHA_FIRST = f"{HIDDEN}(Tensor input, Number alpha, Tensor other, *, Tensor out = None)"
_TENSOR_OR_NUMBER = ("(Tensor input, Tensor other, *, Tensor out = None)", "(Tensor input, Number other)")
OVERLOADS.update({
    **dict.fromkeys(("add", "sub"), (_ALPHA, _ALPHA_FIRST)),
    "subtract": (_ALPHA, "(Tensor input, Number other, Number alpha = 1)"),  # (an out of another type named)
    "mul": _TENSOR_OR_NUMBER[:1],
    **dict.fromkeys(("multiply", "true_divide", "floor_divide"), _TENSOR_OR_NUMBER),
})  # fmt: skip


# The hottest function forms (every ``x + y``, ``x * y`` and unary math) call their op's generated
# call directly: ``apply(op, *tensors, **attrs)`` is that call behind one more frame.
@api.function("add", out=ELEMENTWISE)
@api.method("add", tensor="other", numbers=True)
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    return ADD._call((input, other), {"alpha": alpha})


@api.function("sub", "subtract", out=ELEMENTWISE)
@api.method("sub", tensor="other", numbers=True)
@api.method("subtract")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    check_bool_subtraction(input, other)
    return apply(SUB, input, other, alpha=alpha)


@api.function("rsub")
def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    if not isinstance(input, Tensor) or isinstance(other, NOT_OPERANDS):
        raise invalid_call(rsub, locals())
    check_bool_subtraction(other, input)
    if isinstance(other, Tensor):
        return apply(RSUB, input, other, alpha=alpha)
    return apply(RSUB_NUMBER, input, other=other, alpha=alpha)


@api.function("mul", "multiply", out=ELEMENTWISE)
@api.method("mul", tensor="other", numbers=True)
@api.method("multiply", tensor_or_number="other")
def mul(input: Any, other: Any) -> Tensor:
    if getattr(input, "_efficient_zero", False) or getattr(other, "_efficient_zero", False):
        return _efficient_zero_of(MUL, input, other)
    return MUL._call((input, other), {})


def _efficient_zero_of(op: OpDef, *args: Any) -> Tensor:
    """A product or quotient of torch's efficient zero tensor: recorded as usual, but its value is
    zeros whatever the other operand holds (inf and nan included), and it is one again."""
    with np.errstate(all="ignore"):
        out = apply(op, *args)
    out._data = namespace_of(out._data).zeros_like(out._data)
    out._efficient_zero = True
    return out


_DIV = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
)
OVERLOADS["div"] = (*_DIV, "(Tensor input, Number other, *, str rounding_mode)")  # (true_divide: one)
OVERLOADS["divide"] = (*_DIV, "(Tensor input, Number other)", OVERLOADS["div"][-1])


@api.function("div", "divide", "true_divide", out=ELEMENTWISE)
@api.method("div", tensor="other", numbers=True)
@api.method("divide")
@api.method("true_divide", tensor_or_number="other")
def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if getattr(input, "_efficient_zero", False) and rounding_mode is None:
        return _efficient_zero_of(DIV, input, other)
    if rounding_mode is not None:
        check_rounding_mode(rounding_mode)
        return apply(DIV_MODE, input, other, rounding_mode=rounding_mode)
    return apply(DIV, input, other)


def check_rounding_mode(rounding_mode: Any) -> None:
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )


FLOOR_DIVIDE_OUT = Out(aten="aten::floor_divide", unimplemented=unimplemented_out("floor_divide"))


@api.variants("floor_divide", out=FLOOR_DIVIDE_OUT)
def floor_divide(input: Any, other: Any) -> Tensor:
    """Python's floor division (torch's div_floor), without a derivative (NotImplemented)."""
    if not isinstance(input, Tensor) or isinstance(other, NOT_OPERANDS):
        raise invalid_call(floor_divide, locals())
    if isinstance(other, Tensor) and other.requires_grad:
        if input.requires_grad:
            return apply(FLOOR_DIVIDE, input, other)
        return _floor_divide_one(other, input, reverse=True)
    return _floor_divide_one(input, other, reverse=False)


def _floor_divide_one(t: Tensor, value: Any, reverse: bool) -> Tensor:
    """``t // value`` (or ``value // t``) with one edge, ``t``'s: torch's node for an op without a
    derivative links only the inputs that require grad. ``value``, a number or a tensor, is an
    attribute in the result's dtype."""
    dt = dtypes.result_type(t, value)
    x = t if dt is t.dtype else t.to(dt)
    if isinstance(value, Tensor):
        array = value._data.astype(dt.np)
    else:
        array = namespace_of(t._data).asarray(value, dtype=dt.np)
    return apply(FLOOR_DIVIDE_SCALAR, x, other=array, reverse=reverse)


def rfloor_divide(input: Tensor, other: Any) -> Tensor:
    """``other // input`` for a number ``other`` (Tensor.__rfloordiv__)."""
    return _floor_divide_one(input, other, reverse=True)


@api.function("neg", "negative", out=SAME_DTYPE)
@api.method("neg", "negative", "__neg__")
def neg(input: Tensor) -> Tensor:
    return apply(NEG, input)


@api.variants("reciprocal", out=ELEMENTWISE)
def reciprocal(input: Tensor) -> Tensor:
    return apply(RECIPROCAL, input)


@api.function("pow", out=ELEMENTWISE)
@api.method("pow", tensor_or_number="exponent")
def pow(input: Any, exponent: Any) -> Tensor:
    if not isinstance(input, Tensor):
        if not isinstance(exponent, Tensor) or isinstance(input, NOT_OPERANDS):
            raise invalid_call(pow, locals())
        dt = dtypes.result_type(input, exponent)
        if dt is not exponent.dtype:  # (-1) ** int tensor stays int; 0.5 ** int tensor is float
            exponent = exponent.to(dt)
        return apply(POW_ST, exponent, base=input)
    if isinstance(exponent, NOT_OPERANDS):
        raise invalid_call(pow, locals())
    if isinstance(exponent, Tensor):
        if dtypes.result_type(input, exponent) is dtypes.bool_:  # torch's CPU pow has no bool kernel
            raise dtypes.kernel_missing("pow", dtypes.bool_)
        return apply(POW_TT, input, exponent)
    dt = dtypes.result_type(input, exponent)
    if dt is not input.dtype:  # an integer tensor to a float power is float, as in torch
        input = input.to(dt)
    return apply(POW_TS, input, exponent=exponent)


api.method("neg_", "negative_")(unary_inplace(NEG))


api.method("reciprocal_")(unary_inplace(RECIPROCAL))


def _checks_operands(fn: Any) -> Any:
    """``fn`` as a binary operator that gives NotImplemented itself for an operand that is neither
    a tensor nor a number (``impl._methods`` wraps other operators in that check: a frame more on
    the hottest calls)."""
    fn._checks_operands = True
    return fn


@api.operator("__add__", "__radd__")
@_checks_operands
def _add_operator(self: Tensor, other: Any) -> Any:
    """``x + y``: ``add(x, y)``."""
    if isinstance(other, NOT_OPERANDS):
        return NotImplemented
    return ADD._call((self, other), {"alpha": 1})


api.operator("__sub__")(sub)


@api.operator("__mul__", "__rmul__")
@_checks_operands
def _mul_operator(self: Tensor, other: Any) -> Any:
    """``x * y``: ``mul(x, y)``."""
    if isinstance(other, NOT_OPERANDS):
        return NotImplemented
    if self._efficient_zero or getattr(other, "_efficient_zero", False):
        return _efficient_zero_of(MUL, self, other)
    return MUL._call((self, other), {})


api.operator("__truediv__")(div)


api.operator("__pow__")(pow)


api.operator("__floordiv__")(floor_divide)


api.operator("__rfloordiv__")(rfloor_divide)


@api.operator("__rsub__")
def _reflected_sub(self: Tensor, other: Any) -> Tensor:
    return rsub(self, other)


@api.operator("__rtruediv__")
def _rtruediv(self: Tensor, other: Any) -> Tensor:
    return mul(reciprocal(self), other)


@api.operator("__rpow__")
def _rpow(self: Tensor, other: Any) -> Tensor:
    return pow(other, self)


def _alpha_inplace(op: OpDef) -> Any:
    """``x.add_(other, alpha=)`` and ``x += other``: ``op`` in place."""
    return inplace_method(lambda self, other, *, alpha=1: (op, (other,), {"alpha": alpha}))


def _other_inplace(op: OpDef) -> Any:
    """``x.mul_(other)``, ``x *= other``, ``x /= other``: ``op`` in place."""
    return inplace_method(lambda self, other: (op, (other,), {}))


_add_, _mul_ = _alpha_inplace(ADD), _other_inplace(MUL)


api.method("add_", tensor="other", numbers=True)(_add_)


api.method("mul_", tensor="other", numbers=True)(_mul_)


api.method("multiply_", tensor_or_number="other")(_mul_)


api.method("__iadd__")(_add_)


api.method("__imul__")(_mul_)


api.method("__itruediv__")(_other_inplace(DIV))


@api.method("__isub__")
@api.method("sub_", tensor="other", numbers=True)
@api.method("subtract_", tensor_or_number="other")
def _sub_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    check_bool_subtraction(self, other)
    return apply_inplace(SUB, self, other, alpha=alpha)


@api.method("div_", tensor="other", numbers=True)
@api.method("divide_", tensor_or_number="other")
def _div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """``x.div_(other, rounding_mode=)``: div_'s own op when rounding (DivBackward2)."""
    if rounding_mode is None:
        return apply_inplace(DIV, self, other)
    check_rounding_mode(rounding_mode)
    return apply_inplace(DIV_MODE, self, other, rounding_mode=rounding_mode)


@api.method("true_divide_", tensor_or_number="other")
def _true_divide_(self: Tensor, other: Any, **kwargs: Any) -> Tensor:
    """``x.true_divide_(other)``: div_ without a rounding mode (torch's signatures take none)."""
    if kwargs:
        signatures = [_Signature(text) for text in OVERLOADS["true_divide_"]]
        raise _invalid_combination("true_divide_", signatures, (other,), kwargs)
    return apply_inplace(DIV, self, other)


OVERLOADS.update({
    "subtract_": ("(Tensor other, *, Number alpha = 1)", "(Number other, Number alpha = 1)"),
    "divide_": ("(Tensor other)", "(Tensor other, *, str rounding_mode)", "(Number other)",
                "(Number other, *, str rounding_mode)"),
    "true_divide_": ("(Tensor other)", "(Number other)"),
})  # fmt: skip


@api.method("pow_", tensor_or_number="exponent")
def _pow_(self: Tensor, exponent: Any) -> Tensor:
    if isinstance(exponent, Tensor):
        return apply_inplace(POW_TT, self, exponent)
    negative = isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0
    if not negative:  # the kernel refuses a negative integer power of integers, before this cast
        _check_cast(dtypes.result_type(self, exponent), self.dtype)  # x.pow_(0.5) of an integer x
    return apply_inplace(POW_TS, self, exponent=exponent)
