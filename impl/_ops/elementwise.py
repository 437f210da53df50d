"""Elementwise ops with broadcasting: arithmetic, unary math, activations, comparisons.

Backward formulas follow derivatives.yaml (what they use is what gets saved). They return
gradients of the broadcast shape; the engine reduces them to each input's shape (sum_to), as
torch's engine does when validating a node's outputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import dtypes
from impl._creation import full_like, zeros_like
from impl._layout import c_ordered, copy_like
from impl._ops.cpu_kernels import fma, vector_bytes, vector_elements
from impl._ops.table import FLOAT_DTYPES, NOT_IMPLEMENTED, D, OpDef, apply, fill_array, number_array
from impl._tensor import Tensor

# the operands torch's TensorIterator runs over, in its order (OpDef.iterator_operands)
UNARY = ("self",)
BINARY = ("self", "other")


def masked(g: Any, mask: Any) -> Any:
    """``g`` where ``mask`` holds, else 0 (a select, not a product: inf * 0 would give nan)."""
    return apply(WHERE, g, 0, condition=mask)


def zero_grad(g: Any, c: Any) -> Any:
    """derivatives.yaml's ``zeros_like(grad)``: zeros that carry no graph (the next order sees a
    constant, as in torch)."""

    return zeros_like(g)


def efficient_zero(g: Any, c: Any) -> Any:
    """sgn_backward of a real input: torch's efficient zero tensor (Tensor._efficient_zero), which
    products and quotients pass on as zeros (never 0 * inf = nan) and tolist()/numpy() refuse."""
    z = zero_grad(g, c)
    z._efficient_zero = True
    return z


# -- arithmetic --------------------------------------------------------------------------------
def _plain_alpha(alpha: Any) -> bool:
    """Whether ``alpha`` is add's default 1 (True, equal to 1, is no default: it is checked)."""
    return alpha == 1 and not isinstance(alpha, (bool, np.bool_))


def check_alpha(dt: Any, alpha: Any) -> None:
    """torch's alpha_check against the result's dtype ``dt``."""
    if isinstance(alpha, (bool, np.bool_)) and dt.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt.kind not in "fc" and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _add_scaled(xp: Any, a: Any, b: Any, alpha: Any, sign: int = 1) -> Any:
    """``a + sign * alpha * b`` as torch's CPU add kernel computes it (checked bit for bit against
    torch on same-shape operands), after torch's check of ``alpha``: one fused multiply-add with
    ``alpha`` cast to the dtype; float16 goes through vectors of ``lanes`` elements, and the tail
    of a row that fills no whole vector runs the scalar loop in float16 arithmetic (the product
    rounded to float16 before the sum). A bool result is ``a or (b and alpha)``."""
    dt = np.result_type(a.dtype, b.dtype)
    check_alpha(dt, alpha)
    if dt.kind == "b":
        return a | b if alpha else a.copy()
    alpha = sign * alpha
    if xp is not np or dt.kind != "f":  # (numpy's fma takes host arrays)
        return a + b * alpha
    a, b = np.broadcast_arrays(a, b)
    if dt.itemsize >= 4:  # (ascontiguousarray makes a 0-d array 1-d: the shape is restored)
        return fma(np.ascontiguousarray(a), np.ascontiguousarray(b), dt.type(alpha)).reshape(a.shape)
    alpha16 = dt.type(alpha)
    a32 = a.astype(np.float32)
    out = (a32 + b.astype(np.float32) * np.float32(alpha16)).astype(dt)  # the product is exact
    lanes = vector_bytes() // dt.itemsize
    row = out.size if a.flags.c_contiguous and b.flags.c_contiguous else (out.shape[-1] if out.ndim else 1)
    tail = row % lanes
    if tail and out.size:
        scalar = (a32 + (b * alpha16).astype(np.float32)).astype(dt).reshape(-1, row)
        out.reshape(-1, row)[:, row - tail :] = scalar[:, row - tail :]
    return out


ADD = OpDef(
    "AddBackward0",
    lambda xp, a, b, alpha: a + b if _plain_alpha(alpha) else _add_scaled(xp, a, b, alpha),
    ("self", "other"),
    {"self": D("", lambda g, c: g), "other": D("alpha", lambda g, c: g if c.alpha == 1 else g * c.alpha)},
    promote="common",
    iterator_operands=BINARY,
)
SUB = OpDef(
    "SubBackward0",
    lambda xp, a, b, alpha: a - b if _plain_alpha(alpha) else _add_scaled(xp, a, b, alpha, -1),
    ("self", "other"),
    {"self": D("", lambda g, c: g), "other": D("alpha", lambda g, c: -g if c.alpha == 1 else -g * c.alpha)},
    promote="common",
    iterator_operands=BINARY,
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
)
RSUB_NUMBER = OpDef(
    "RsubBackward1",
    _rsub_number,
    ("self",),
    {"self": RSUB.derivatives["self"]},
    iterator_operands=("other", "self"),
)
MUL = OpDef(
    "MulBackward0",
    lambda xp, a, b: a * b,
    ("self", "other"),
    {"self": D("other", lambda g, c: g * c.other), "other": D("self", lambda g, c: g * c.self)},
    promote="common",
    iterator_operands=BINARY,
)
DIV = OpDef(
    "DivBackward0",
    lambda xp, a, b: a / b,
    ("self", "other"),
    {
        "self": D("other", lambda g, c: g / c.other),
        "other": D("self other", lambda g, c: -g * ((c.self / c.other) / c.other)),
    },
    promote="float",
    iterator_operands=BINARY,
)


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


def _no_derivative(name: str) -> Any:
    """The formula of an op torch has no derivative for: its backward raises torch's error."""

    def formula(g: Any, c: Any) -> Any:
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return formula


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
    return -a


NEG = OpDef("NegBackward0", _neg_fwd, derivatives={"self": D("", lambda g, c: -g)}, iterator_operands=UNARY)
RECIPROCAL = OpDef(
    "ReciprocalBackward0",
    lambda xp, a: 1 / a,
    derivatives={"self": D("result", lambda g, c: -g * (c.result * c.result))},
    promote="float",
    iterator_operands=UNARY,
)


# -- Scalar overloads: what torch's C++ backward formulas call for ``tensor * 2``, ``tensor + 1``
# (mul.Scalar ...), so double-backward graphs carry torch's names (MulBackward1, AddBackward1 ...).
# User code never reaches them: Python numbers are wrapped as tensors (MulBackward0).
def _mul_number(xp: Any, a: Any, other: Any) -> Any:
    """``a * other`` as torch's mul by a number: half types compute in float32 with the number
    kept in float32 (not rounded to the half type first), rounded once."""
    if a.dtype in FLOAT_DTYPES and a.dtype.itemsize < 4:
        return (a.astype(xp.float32) * xp.asarray(other, dtype=xp.float32)).astype(a.dtype)
    return a * xp.asarray(other, dtype=a.dtype)


MUL_SCALAR = OpDef(
    "MulBackward1",
    lambda xp, a, other: _mul_number(xp, a, other),
    derivatives={"self": D("other", lambda g, c: mul_scalar(g, c.other))},
    iterator_operands=BINARY,
)
DIV_SCALAR = OpDef(
    "DivBackward1",
    lambda xp, a, other: a / xp.asarray(other, dtype=a.dtype),
    derivatives={"self": D("other", lambda g, c: div_scalar(g, c.other))},
    iterator_operands=BINARY,
)
ADD_SCALAR = OpDef(
    "AddBackward1",
    lambda xp, a, other: a + xp.asarray(other, dtype=a.dtype),
    derivatives={"self": D("", lambda g, c: g)},
    iterator_operands=BINARY,
)
SUB_SCALAR = OpDef(
    "SubBackward1",
    lambda xp, a, other: a - xp.asarray(other, dtype=a.dtype),
    derivatives={"self": D("", lambda g, c: g)},
    iterator_operands=BINARY,
)


def mul_scalar(t: Any, other: float) -> Any:
    """``t * other`` as torch's mul.Scalar (MulBackward1)."""
    return apply(MUL_SCALAR, t, other=other)


def div_scalar(t: Any, other: float) -> Any:
    """``t / other`` as torch's div.Scalar (DivBackward1)."""
    return apply(DIV_SCALAR, t, other=other)


def add_scalar(t: Any, other: float) -> Any:
    """``t + other`` as torch's add.Scalar (AddBackward1)."""
    return apply(ADD_SCALAR, t, other=other)


def sub_scalar(t: Any, other: float) -> Any:
    """``t - other`` as torch's sub.Scalar (SubBackward1), which refuses a bool ``t`` (pow's
    backward computes ``exponent - 1``: a bool exponent fails there, in torch's words)."""
    if t._data.dtype.kind == "b":
        check_bool_subtraction(t, other)
    return apply(SUB_SCALAR, t, other=other)


def _is_bool(x: Any) -> bool:
    return x.dtype is dtypes.bool_ if isinstance(x, Tensor) else isinstance(x, (bool, np.bool_))


def check_bool_subtraction(input: Any, other: Any) -> None:
    """torch refuses ``-`` when either operand is bool (a bool tensor or a Python bool)."""
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )


def scalar_minus(value: float, t: Any) -> Any:
    """C++'s ``Scalar - Tensor`` as ATen writes it in backward formulas,
    ``empty_like(t).fill_(value).sub_(t)``: a SubBackward0 with no edge for the scalar."""

    return full_like(t, value).sub_(t)


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
    gives 1 for base 1, +-1 for base -1 (by parity) and 0 otherwise."""
    if a.dtype.kind not in "iu":
        if a.shape != b.shape:  # numpy computes a broadcast (stride-0) exponent of 0.5 as a sqrt:
            a, b = (x.copy() for x in xp.broadcast_arrays(a, b))  # nan for -inf, -0 for -0 (torch: inf, 0)
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
    import math

    return math.log(v) if v > 0 else (float("-inf") if v == 0 else float("nan"))


def rounded(name: str) -> Any:
    """numpy's transcendental ``name`` evaluated in float64 and rounded to the input's dtype, the
    half types through float32 (which torch computes them in): torch's float32 kernels are nearly
    correctly rounded, numpy's float32 ones are not (seen through exp chains)."""

    def fwd(xp: Any, a: Any) -> Any:
        fn = getattr(xp, name)
        if a.dtype == xp.float64 or a.dtype not in FLOAT_DTYPES:
            return fn(a)
        return fn(a.astype(xp.float64)).astype(xp.float32).astype(a.dtype, copy=False)

    return fwd


def opmath(fwd: Any) -> Any:
    """A compound kernel evaluated as torch's CPU kernels evaluate half precision: in float32,
    rounded once at the end."""

    def run(xp: Any, *arrays: Any, **attrs: Any) -> Any:
        dt = arrays[0].dtype
        if dt in FLOAT_DTYPES and dt.itemsize < 4:  # float16 and bfloat16 (numpy kind "V")
            return fwd(xp, *(a.astype(xp.float32) for a in arrays), **attrs).astype(dt)
        return fwd(xp, *arrays, **attrs)

    return run


# -- unary math ------------------------------------------------------------------------------
def unary_op(name: str, fwd: Any, uses: str, formula: Any, promote: str | None = "float") -> OpDef:
    """A unary op of the table: its node name, forward, and the derivative of its input."""
    return OpDef(name, fwd, derivatives={"self": D(uses, formula)}, promote=promote, iterator_operands=UNARY)


EXP = unary_op("ExpBackward0", rounded("exp"), "result", lambda g, c: g * c.result)
LOG = unary_op("LogBackward0", rounded("log"), "self", lambda g, c: g / c.self)
SQRT = unary_op("SqrtBackward0", lambda xp, a: xp.sqrt(a), "result", lambda g, c: g / mul_scalar(c.result, 2))
SIN = unary_op("SinBackward0", rounded("sin"), "self", lambda g, c: g * c.self.cos())
COS = unary_op("CosBackward0", rounded("cos"), "self", lambda g, c: g * -c.self.sin())
TANH = unary_op("TanhBackward0", rounded("tanh"), "result", lambda g, c: tanh_backward(g, c.result))


def _sigmoid_fwd(xp: Any, a: Any) -> Any:
    """torch's CPU sigmoid, ``1 / (1 + exp(-x))`` in float32 arithmetic for float32 and the half
    types (rounded at the end), with exp correctly rounded to float32 as the scalar loop's
    std::exp gives it (numpy's float32 exp is an ulp off at times: exp(2) = 7.3890557); its
    vector code's Sleef exp may still differ by an ulp on longer rows."""
    if a.dtype == xp.float64:
        return 1 / (1 + xp.exp(-a))
    e = xp.exp(-a.astype(xp.float64)).astype(xp.float32)
    return (1 / (1 + e)).astype(a.dtype)


SIGMOID = unary_op(
    "SigmoidBackward0",
    _sigmoid_fwd,
    "result",
    lambda g, c: sigmoid_backward(g, c.result),
)


def _keep_first_on_tie(xp: Any, pick: str, a: Any, b: Any) -> Any:
    """numpy's ``pick`` ("maximum" or "minimum") of ``a`` and ``b``, nan propagating, keeping
    ``a`` on a tie (of zeros of two signs, where numpy may give either): torch's clamp_min
    (``a < low ? low : a``; relu is clamp_min(0), so relu(-0.0) is -0.0), clamp_max and the
    scalar loop of maximum/minimum (``std::max``)."""
    out = xp.asarray(getattr(xp, pick)(a, b))
    xp.copyto(out, a, where=a == b)
    return out


def _relu_fwd(xp: Any, a: Any) -> Any:
    """clamp_min(a, 0), which torch's relu refuses for bool (clamp_min itself takes it)."""
    if a.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return _keep_first_on_tie(xp, "maximum", a, xp.zeros((), a.dtype))


RELU = unary_op(
    "ReluBackward0",
    _relu_fwd,
    "result",
    lambda g, c: threshold_backward(g, c.result, 0),
    promote=None,
)


def refuses_bool(kernel: str, fwd: Any) -> Any:
    """``fwd``, whose torch kernel ``kernel`` has no bool version: a bool tensor raises its error."""

    def run(xp: Any, a: Any) -> Any:
        if a.dtype.kind == "b":
            raise dtypes.kernel_missing(kernel, a.dtype)
        return fwd(xp, a)

    return run


def floating_only(kernel: str, fwd: Any) -> Any:
    """``fwd``, whose torch kernel ``kernel`` exists for floating dtypes only: the operands are
    checked to broadcast first (as torch builds its iterator before dispatching; numpy's
    ValueError, which the op's call turns into torch's error), then another dtype of the first
    raises the kernel's NotImplementedError (``"frac_cpu" not implemented for 'Long'``)."""

    def run(xp: Any, *arrays: Any, **attrs: Any) -> Any:
        np.broadcast_shapes(*(a.shape for a in arrays))  # (shapes: host tuples on any device)
        if arrays[0].dtype not in FLOAT_DTYPES:
            raise dtypes.kernel_missing(kernel, arrays[0].dtype)
        return fwd(xp, *arrays, **attrs)

    return run


def _sign_fwd(xp: Any, a: Any) -> Any:
    """sign/sgn: nan stays 0 as torch's; a bool is its own sign."""
    if a.dtype.kind == "b":
        return a.copy()
    return xp.where(xp.isnan(a), xp.zeros((), a.dtype), xp.sign(a)) if a.dtype in FLOAT_DTYPES else xp.sign(a)


SIGN = unary_op("SignBackward0", _sign_fwd, "", zero_grad, promote=None)
SGN = unary_op("SgnBackward0", _sign_fwd, "self result", efficient_zero, promote=None)  # abs calls it
ABS = unary_op(
    "AbsBackward0",
    refuses_bool("abs_cpu", lambda xp, a: xp.abs(a)),
    "self",
    lambda g, c: g * apply(SGN, c.self),
    promote=None,
)
CLONE = OpDef("CloneBackward0", copy_like, derivatives={"self": D("", lambda g, c: g)})  # preserve_format
CLONE_CONTIGUOUS = OpDef("CloneBackward0", lambda xp, a: a.copy(), derivatives=CLONE.derivatives)


def _clamp_fwd(xp: Any, a: Any, min: Any, max: Any) -> Any:
    numbers = all(isinstance(b, (bool, int, float, np.generic)) for b in (min, max) if b is not None)
    if a.dtype.kind == "b" and numbers:  # torch's clamp kernels of number bounds have no bool version
        kernel = "clamp_min" if max is None else "clamp_max" if min is None else "clamp"
        raise dtypes.kernel_missing(f"{kernel}_scalar_cpu", a.dtype)
    out = a
    if min is not None:
        out = _keep_first_on_tie(xp, "maximum", out, fill_array(xp, min, a.dtype))
    if max is not None:
        out = _keep_first_on_tie(xp, "minimum", out, fill_array(xp, max, a.dtype))
    return out if out is not a else a.copy()


def _clamp_grad(g: Any, c: Any) -> Any:
    mask = None
    if c.min is not None:
        mask = c.self >= c.min
    if c.max is not None:
        upper = c.self <= c.max
        mask = upper if mask is None else mask & upper
    return masked(g, mask)


CLAMP = OpDef(
    "ClampBackward1",
    _clamp_fwd,
    derivatives={"self": D("self min max", _clamp_grad)},
    iterator_operands=UNARY,
)


def _clamp_tensor_fwd(xp: Any, a: Any, lo: Any, hi: Any, has_min: bool, has_max: bool) -> Any:
    """clamp.Tensor's kernel: ``min(max(a, lo), hi)`` of the bounds given, nan propagating and
    ``a`` kept on a tie; an absent bound is a placeholder operand (``False``)."""
    out = a
    if has_min:
        out = _keep_first_on_tie(xp, "maximum", out, lo)
    if has_max:
        out = _keep_first_on_tie(xp, "minimum", out, hi)
    return out if out is not a else a.copy()


def _clamp_tensor_grads(c: Any) -> tuple[Any, Any, Any]:
    """clamp_backward's and clamp_backward_min_max's masks: where ``self``, ``min`` and ``max``
    get the gradient (with both bounds, min where it wins and is below max; max where it wins or
    is below min)."""
    below = c.self < c.min if c.has_min else None
    above = c.self > c.max if c.has_max else None
    inside = [m for m in (c.self >= c.min if c.has_min else None, c.self <= c.max if c.has_max else None)
              if m is not None]
    if below is not None and above is not None:
        below, above = below & (c.min < c.max), above | (c.max < c.min)
    return (inside[0] & inside[1] if len(inside) == 2 else inside[0]), below, above


def clamp_tensor_operands(input: Any, min: Any, max: Any) -> tuple[tuple, dict]:
    """clamp.Tensor's operands and attributes: an absent bound is ``False``, a wrapped bool that
    changes no result type and gets no edge; the attributes say which bounds there are."""
    operands = (input, False if min is None else min, False if max is None else max)
    return operands, {"has_min": min is not None, "has_max": max is not None}


CLAMP_TENSOR = OpDef(
    "ClampBackward0",
    _clamp_tensor_fwd,
    ("self", "min", "max"),
    {
        "self": D("self min max", lambda g, c: masked(g, _clamp_tensor_grads(c)[0])),
        "min": D("self min max", lambda g, c: masked(g, _clamp_tensor_grads(c)[1])),
        "max": D("self min max", lambda g, c: masked(g, _clamp_tensor_grads(c)[2])),
    },
    promote="common",
    iterator_operands=("self", "min", "max"),
)


def _minmax_grad(sign: int) -> Any:
    """derivatives.yaml's maximum/minimum: ties share the gradient, the losing side gets 0, and a
    nan comparison (neither wins) passes the full gradient to both."""

    def shared(g: Any, a: Any, b: Any) -> Any:
        return apply(WHERE, g / 2, g, condition=a == b)

    def self_grad(g: Any, c: Any) -> Any:
        a, b = c.self, c.other
        return apply(WHERE, 0, shared(g, a, b), condition=(a < b) if sign > 0 else (a > b))

    def other_grad(g: Any, c: Any) -> Any:
        a, b = c.self, c.other
        return apply(WHERE, 0, shared(g, a, b), condition=(a > b) if sign > 0 else (a < b))

    return {"self": D("self other", self_grad), "other": D("self other", other_grad)}


# torch registers maximum's and minimum's CPU kernels without an AVX512 build: AVX512 machines
# run the AVX2 code, and the baseline build emulates 32-byte vectors too
MINMAX_VECTOR_BYTES = 32


def _pick(numpy_pick: str) -> Any:
    """maximum/minimum as torch's CPU kernel computes them: nan propagating, and on a tie (of
    zeros of two signs, the only tie one can see) the scalar loop keeps ``a`` (``std::max``) where
    the vector code keeps ``b`` (``_mm256_max_ps``; see cpu_kernels.vector_elements)."""

    def fwd(xp: Any, a: Any, b: Any) -> Any:
        if xp.result_type(a, b) not in FLOAT_DTYPES:  # integers tie only on equal values
            return xp.asarray(getattr(xp, numpy_pick)(a, b))
        out = _keep_first_on_tie(xp, numpy_pick, a, b)
        if xp is np and out.size >= 8:  # fewer elements fill no two vectors (of 4 doubles)
            vector = vector_elements(out.shape, [a, b], MINMAX_VECTOR_BYTES)
            if vector is not None:
                xp.copyto(out, b, where=(a == b) & vector)
        return out

    return fwd


MAXIMUM = OpDef(
    "MaximumBackward0",
    _pick("maximum"),
    ("self", "other"),
    _minmax_grad(1),
    promote="common",
    iterator_operands=BINARY,
)
MINIMUM = OpDef(
    "MinimumBackward0",
    _pick("minimum"),
    ("self", "other"),
    _minmax_grad(-1),
    promote="common",
    iterator_operands=BINARY,
)


def _where_grad(pick_self: bool) -> Any:
    """derivatives.yaml's where(condition, grad, 0) for self, where(condition, 0, grad) for other."""

    def grad(g: Any, c: Any) -> Any:
        if pick_self:
            return apply(WHERE, g, 0, condition=c.condition)
        return apply(WHERE, 0, g, condition=c.condition)

    return grad


WHERE = OpDef(
    "WhereBackward0",
    lambda xp, a, b, condition: xp.where(condition._data, a, b),
    ("self", "other"),
    {"self": D("condition", _where_grad(True)), "other": D("condition", _where_grad(False))},
    promote="common",
    iterator_operands=("condition", "self", "other"),
)


# -- non-differentiable elementwise (comparisons, logic) -------------------------------------
def _nondiff(fwd: Any, promote: str | None = "common") -> OpDef:
    return OpDef("NotDifferentiable", fwd, BINARY, promote=promote, iterator_operands=BINARY)


EQ = _nondiff(lambda xp, a, b: a == b)
NE = _nondiff(lambda xp, a, b: a != b)
LT = _nondiff(lambda xp, a, b: a < b)
LE = _nondiff(lambda xp, a, b: a <= b)
GT = _nondiff(lambda xp, a, b: a > b)
GE = _nondiff(lambda xp, a, b: a >= b)


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
STEP = {"self": D("", zero_grad)}  # the derivatives of a step function (floor, ceil, round, trunc)


def _step(name: str, kernel: str, fwd: Any) -> OpDef:
    """A rounding op (no bool kernel in torch: ``kernel``'s error), its derivative zeros."""
    return OpDef(name, refuses_bool(kernel, fwd), derivatives=STEP, iterator_operands=UNARY)


FLOOR = _step("FloorBackward0", "floor_vml_cpu", lambda xp, a: xp.floor(a))
CEIL = _step("CeilBackward0", "ceil_vml_cpu", lambda xp, a: xp.ceil(a))
ROUND = _step("RoundBackward0", "round_vml_cpu", lambda xp, a: xp.round(a))
TRUNC = _step("TruncBackward0", "trunc_vml_cpu", lambda xp, a: xp.trunc(a))


# -- the backward ops torch's formulas above call by name (tanh_backward ...): declared as ops, so a
# gradient made with create_graph=True has torch's grad_fn (TanhBackwardBackward0 ...) and its own
# derivatives for the next order
TANH_BACKWARD = OpDef(
    "TanhBackwardBackward0",
    opmath(lambda xp, g, out: g * (1 - out * out)),
    ("grad_output", "output"),
    {
        "grad_output": D("output", lambda gg, c: tanh_backward(gg, c.output)),
        "output": D("grad_output output", lambda gg, c: gg * (mul_scalar(c.output, -2) * c.grad_output)),
    },
    promote="common",
    iterator_operands=("grad_output", "output"),
)
SIGMOID_BACKWARD = OpDef(
    "SigmoidBackwardBackward0",
    opmath(lambda xp, g, out: g * out * (1 - out)),
    ("grad_output", "output"),
    {
        "grad_output": D("output", lambda gg, c: sigmoid_backward(gg, c.output)),
        "output": D(
            "grad_output output",
            lambda gg, c: gg * c.grad_output * add_scalar(mul_scalar(c.output, -2), 1),
        ),
    },
    promote="common",
    iterator_operands=("grad_output", "output"),
)
THRESHOLD_BACKWARD = OpDef(
    "ThresholdBackwardBackward0",
    lambda xp, g, x, threshold: xp.where(x <= threshold, xp.zeros((), g.dtype), g),
    ("grad_output", "self"),
    {
        "grad_output": D("self threshold", lambda gg, c: threshold_backward(gg, c.self, c.threshold)),
        "self": D("", zero_grad),
    },
    iterator_operands=("self", "grad_output"),  # torch's order: self first
)


def tanh_backward(grad: Any, output: Any) -> Any:
    return apply(TANH_BACKWARD, grad, output)


def sigmoid_backward(grad: Any, output: Any) -> Any:
    return apply(SIGMOID_BACKWARD, grad, output)


def threshold_backward(grad: Any, x: Any, threshold: float) -> Any:
    return apply(THRESHOLD_BACKWARD, grad, x, threshold=threshold)
