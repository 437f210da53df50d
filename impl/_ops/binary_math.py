"""Binary math ops: maximum, minimum, atan2, hypot, fmod, remainder, fmax, fmin, copysign, xlogy,
logaddexp, logaddexp2, float_power, heaviside (functions, methods, in-place forms, ``%``).

Kernels follow torch's CPU ones (TensorIterator over the promoted operands): half precision runs in
float32 and is rounded once (``opmath``); transcendentals of float32 are evaluated in float64 and
rounded, as torch's nearly correctly rounded kernels give them. Ops that take a Python number
(fmod, remainder, copysign, xlogy) have torch's separate Scalar overloads, whose nodes keep the
number as an attribute (FmodBackward0, RemainderBackward0, CopysignBackward1, XlogyBackward1/2).
Backward formulas are derivatives.yaml's, written with impl ops so the graphs of higher orders
carry torch's node names.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import zeros_like
from impl._ops import inplace as ip
from impl._ops.arithmetic import POW_TS, POW_TT, pow
from impl._ops.cpu_kernels import fma, vector_elements
from impl._ops.elementwise import (
    BINARY,
    UNARY,
    _keep_first_on_tie,
    _no_derivative,
    add_scalar,
    floating_only,
    mul_scalar,
    opmath,
)
from impl._ops.indexing import masked_fill
from impl._ops.inplace import _check_cast as check_cast
from impl._ops.pointwise_ternary import WHERE
from impl._ops.table import (
    FLOAT_DTYPES,
    NOT_IMPLEMENTED,
    D,
    Derivative,
    OpDef,
    apply,
    defined_sum,
    number_array,
)
from impl._signatures import ELEMENTWISE, OVERLOADS, Out, invalid_call
from impl._tensor import Tensor


def broadcast_size(xp: Any, a: Any, b: Any) -> int:
    """The number of elements of the operands' broadcast, numpy's ValueError if they do not
    broadcast (torch checks shapes before dtypes and divisors: the op's call raises torch's)."""
    return math.prod(np.broadcast_shapes(a.shape, b.shape))  # (shapes: host tuples on any device)


def _in_float64(fn: Any) -> Any:
    """``fn`` of float operands evaluated in float64 and rounded once to their dtype."""

    def run(xp: Any, a: Any, b: Any) -> Any:
        if a.dtype.itemsize < 8:
            return fn(xp, a.astype(xp.float64), b.astype(xp.float64)).astype(a.dtype)
        return fn(xp, a, b)

    return run


def _divides(name: str, integer: Any, floating: Any) -> Any:
    """fmod/remainder: integers exactly (a zero divisor raises torch's ZeroDivisionError), floats
    in float32 for half precision; no kernel for bool."""

    def run(xp: Any, a: Any, b: Any) -> Any:
        size = broadcast_size(xp, a, b)
        if a.dtype.kind == "b":
            raise dtypes.kernel_missing(f"{name}_cpu", a.dtype)
        if a.dtype.kind in "iu":
            if size and (b == 0).any():
                raise RuntimeError("ZeroDivisionError")
            return integer(xp, a, b)
        return opmath(floating)(xp, a, b)

    return run


def _remainder_float(xp: Any, a: Any, b: Any) -> Any:
    """torch's float remainder: C's fmod, plus ``b`` where it is nonzero and its sign is not
    ``b``'s (so -0.0 % 2 stays -0.0, 3 % -inf is -inf)."""
    mod = xp.fmod(a, b)
    fix = (mod != 0) & ((b < 0) != (mod < 0))
    return xp.where(fix, mod + b, mod)


# integers: C's ``%`` (the dividend's sign) for fmod, Python's (the divisor's) for remainder
FMOD_KERNEL = _divides("fmod", lambda xp, a, b: xp.fmod(a, b), lambda xp, a, b: xp.fmod(a, b))
REMAINDER_KERNEL = _divides("remainder", lambda xp, a, b: a % b, _remainder_float)


def _ignoring_nan(pick: str) -> Any:
    """fmax/fmin: the non-nan one of two (nan only if both are); on a tie of zeros of two signs
    torch's CPU kernel keeps ``a``, and ``b`` for bfloat16."""

    def run(xp: Any, a: Any, b: Any) -> Any:
        out = xp.asarray(getattr(xp, pick)(a, b))
        if a.dtype in FLOAT_DTYPES:
            xp.copyto(out, b if a.dtype == dtypes.bfloat16.np else a, where=a == b)
        return out

    return run


def _xlogy(xp: Any, x: Any, y: Any) -> Any:
    """torch's xlogy: nan where y is nan, else 0 where x is 0, else x * log(y), the log rounded
    to the operands' dtype (half precision included) before the product."""
    log = xp.log(y.astype(xp.float64)).astype(y.dtype) if y.dtype.itemsize < 8 else xp.log(y)
    out = xp.where(x == 0, xp.zeros((), x.dtype), x * log)
    return xp.where(xp.isnan(y), y, out)


def _rounded(xp: Any, name: str, x: Any) -> Any:
    """``xp.<name>(x)`` evaluated in float64 and rounded to ``x``'s dtype (torch's float32 exp,
    exp2 and log1p are within an ulp of that, numpy's own float32 ones less often)."""
    return getattr(xp, name)(x.astype(xp.float64)).astype(x.dtype)


def _logaddexp(xp: Any, a: Any, b: Any) -> Any:
    """torch's logaddexp, step by step in the operands' precision: the larger plus
    log1p(exp(-|a - b|)); equal infinities give themselves."""
    out = xp.maximum(a, b) + _rounded(xp, "log1p", _rounded(xp, "exp", -xp.abs(a - b)))
    return xp.where(xp.isinf(a) & (a == b), a, out)


INV_LOG_2 = 1 / math.log(2)


def _logaddexp2(xp: Any, a: Any, b: Any) -> Any:
    """torch's logaddexp2: the larger plus log1p(exp2(-|a - b|)) * (1 / ln 2), the last two steps
    one fused multiply-add (logaddexp2(-1, -1) is -1.06e-08 in float32, not 0)."""
    log = _rounded(xp, "log1p", _rounded(xp, "exp2", -xp.abs(a - b)))
    larger, inv = xp.maximum(a, b), a.dtype.type(INV_LOG_2)
    out = fma(larger, log, inv) if xp is np else larger + log * inv
    return xp.where(xp.isinf(a) & (a == b), a, out)


# -- derivatives ---------------------------------------------------------------------------------
def _atan2_recip(c: Any) -> Any:
    """atan2_backward's ``1 / (self^2 + other^2)``, 0 where that sum is 0."""
    denominator = c.self * c.self + c.other * c.other
    return masked_fill(denominator.reciprocal(), denominator == 0, 0)


def _quotient_grad(rounding_mode: str) -> Any:
    """fmod's (trunc) and remainder's (floor) gradient of ``other``: -grad * self.div(other, mode)."""
    return lambda g, c: -g * c.self.div(c.other, rounding_mode=rounding_mode)


def _fpick_grads(ge: str) -> dict:
    """fmax's (``ge`` "__ge__") and fmin's ("__le__") gradients: to self where it was picked (it
    wins, ties included, or other is nan), to other elsewhere."""

    def picked(c: Any) -> Any:
        return getattr(c.self, ge)(c.other) | c.other.isnan()

    return {
        "self": D("self other", lambda g, c: masked_fill(g, picked(c).logical_not(), 0)),
        "other": D("self other", lambda g, c: masked_fill(g, picked(c), 0)),
    }


def _copysign_grad(g: Any, c: Any) -> Any:
    """copysign_tensor_self_backward: grad * (result / self), 0 where self is 0."""
    return g * masked_fill(c.result / c.self, c.self == 0, 0)


def _xlogy_self_grad(g: Any, c: Any) -> Any:
    """xlogy(grad, other), 0 where self is 0 and other <= 0 (torch's choice of the directional
    derivative along x = 0 there)."""
    return masked_fill(xlogy(g, c.other), (c.self == 0) & (c.other <= 0), 0)


def _xlogy_number_grad(g: Any, c: Any) -> Any:
    """XlogyBackward2's: xlogy(grad, other), masked where self is 0 unless the number other > 0."""
    out = xlogy(g, c.other)
    return out if c.other > 0 else masked_fill(out, c.self == 0, 0)


def _logaddexp_grad(first: str, second: str, base2: bool) -> Any:
    """grad / (1 + exp(first - second)) (``pow(2, ...)`` for logaddexp2)."""

    def formula(g: Any, c: Any) -> Any:
        d = getattr(c, first) - getattr(c, second)
        return g / add_scalar(pow(2, d) if base2 else d.exp(), 1)

    return formula


def _binary(name: str, fwd: Any, derivatives: dict, promote: str = "common", jvp: Any = None) -> OpDef:
    return OpDef(name, fwd, BINARY, derivatives, promote=promote, iterator_operands=BINARY, jvp=jvp)


def _picked_jvp(picked: Any) -> Any:
    """torch's jvp of a binary pick (maximum, fmax, ...): ``other_t + picked * (self_t - other_t)``,
    ``picked(c)`` the share of ``self`` (an infinite tangent of the other operand gives NaN); an
    undefined tangent drops out of the sums (torch's zero tensor)."""

    def jvp(c: Any) -> Any:
        self_t, other_t = c.tangent("self"), c.tangent("other")
        diff = self_t if other_t is None else -other_t if self_t is None else self_t - other_t
        return c.like_result(defined_sum(other_t, picked(c) * diff))

    return jvp


def _atan2_jvp(c: Any) -> Any:
    """``(-self_p * other_t + other_p * self_t) / (self_p.pow(2) + other_p.pow(2))``."""
    self_t, other_t = c.tangent("self"), c.tangent("other")
    top = defined_sum(
        None if other_t is None else -c.self * other_t, None if self_t is None else c.other * self_t
    )
    return c.like_result(top / (c.self.pow(2) + c.other.pow(2)))


def _share(compare: str) -> Any:
    """maximum's and minimum's share of ``self``: 1 where ``compare`` picks it, 0.5 on a tie."""
    return lambda c: getattr(c.self, compare)(c.other).to(c.result.dtype).masked_fill(c.self == c.other, 0.5)


def _fshare(compare: str) -> Any:
    """fmax's and fmin's share of ``self``: where ``compare`` picks it or ``other`` is NaN."""
    return lambda c: getattr(c.self, compare)(c.other).logical_or(c.other.isnan())


def _with_number(name: str, fwd: Any, self_grad: Derivative) -> OpDef:
    """The Scalar overload of a binary op: the number ``other`` cast to the tensor's dtype."""
    return OpDef(
        name,
        lambda xp, a, other: fwd(xp, a, number_array(xp, other, a.dtype)),
        derivatives={"self": self_grad},
        iterator_operands=UNARY,
    )


PASS = D("", lambda g, c: g)
ATAN2 = _binary(
    "Atan2Backward0",
    _in_float64(lambda xp, a, b: xp.arctan2(a, b)),
    {
        "self": D("self other", lambda g, c: g * c.other * _atan2_recip(c)),
        "other": D("self other", lambda g, c: g * -c.self * _atan2_recip(c)),
    },
    promote="float",
    jvp=lambda c: _atan2_jvp(c),
)
HYPOT = _binary(
    "HypotBackward0",
    floating_only("hypot_cpu", _in_float64(lambda xp, a, b: xp.hypot(a, b))),
    {
        "self": D("self result", lambda g, c: g * c.self / c.result),
        "other": D("other result", lambda g, c: g * c.other / c.result),
    },
)
FMOD = _binary(
    "FmodBackward1", FMOD_KERNEL, {"self": PASS, "other": D("self other", _quotient_grad("trunc"))}
)
FMOD_NUMBER = _with_number("FmodBackward0", FMOD_KERNEL, PASS)
REMAINDER = _binary(
    "RemainderBackward1", REMAINDER_KERNEL, {"self": PASS, "other": D("self other", _quotient_grad("floor"))}
)
REMAINDER_NUMBER = _with_number("RemainderBackward0", REMAINDER_KERNEL, PASS)
# remainder(Scalar, Tensor) has no derivative in torch: a NotImplemented node on the tensor's edge
REMAINDER_OF_NUMBER = OpDef(
    "NotImplemented",
    lambda xp, other, number: REMAINDER_KERNEL(xp, number_array(xp, number, other.dtype), other),
    ("other",),
    {"other": D("", _no_derivative("remainder"))},
    qualified_name=NOT_IMPLEMENTED,
    iterator_operands=("other",),
)
# torch's jvps pick self on a tie in fmin, other in fmax
FMAX = _binary(
    "FmaxBackward0", _ignoring_nan("fmax"), _fpick_grads("__ge__"), jvp=_picked_jvp(_fshare("__gt__"))
)
FMIN = _binary(
    "FminBackward0", _ignoring_nan("fmin"), _fpick_grads("__le__"), jvp=_picked_jvp(_fshare("__le__"))
)
COPYSIGN_KERNEL = opmath(lambda xp, a, b: xp.copysign(a, b))
COPYSIGN = _binary(
    "CopysignBackward0",
    COPYSIGN_KERNEL,
    {"self": D("self result", _copysign_grad), "other": D("other", lambda g, c: zeros_like(c.other))},
    promote="float",
)
COPYSIGN_NUMBER = _with_number("CopysignBackward1", COPYSIGN_KERNEL, D("self result", _copysign_grad))
XLOGY_KERNEL = _xlogy  # (half precision too: torch rounds the log to it before the product)
XLOGY = _binary(
    "XlogyBackward0",
    XLOGY_KERNEL,
    {"self": D("self other", _xlogy_self_grad), "other": D("self other", lambda g, c: g * c.self / c.other)},
    promote="float",
)
XLOGY_OF_NUMBER = OpDef(  # xlogy(Scalar self, Tensor other)
    "XlogyBackward1",
    lambda xp, other, number: XLOGY_KERNEL(xp, number_array(xp, number, other.dtype), other),
    ("other",),
    {"other": D("number other", lambda g, c: mul_scalar(g, c.number) / c.other)},
    iterator_operands=("other",),
)
XLOGY_NUMBER = _with_number("XlogyBackward2", XLOGY_KERNEL, D("self other", _xlogy_number_grad))
LOGADDEXP = _binary(
    "LogaddexpBackward0",
    floating_only("logaddexp_cpu", opmath(_logaddexp)),
    {
        "self": D("self other", _logaddexp_grad("other", "self", False)),
        "other": D("self other", _logaddexp_grad("self", "other", False)),
    },
)
LOGADDEXP2 = _binary(
    "Logaddexp2Backward0",
    floating_only("logaddexp2_cpu", opmath(_logaddexp2)),
    {
        "self": D("self other", _logaddexp_grad("other", "self", True)),
        "other": D("self other", _logaddexp_grad("self", "other", True)),
    },
)


# -- functions -----------------------------------------------------------------------------------
def _number_operand(input: Tensor, other: Any, to_float: bool) -> Tensor:
    """``input`` cast to torch's result type of it and the number ``other`` (the default float
    dtype for a floating op of integers)."""
    dt = dtypes.result_type(input, other)
    if to_float and not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    return input if dt is input.dtype else input.to(dt)


def _tensors_only(op: OpDef, name: str, second: str = "other") -> Any:
    """``torch.<name>(input, other)`` of two tensors (a number is refused, as torch's parser does)."""

    def fn(input: Tensor, other: Tensor) -> Tensor:
        if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
            raise invalid_call(fn, {"input": input, "other": other}, name)
        return apply(op, input, other)

    fn.__name__ = name
    return fn


def _tensor_or_number(op: OpDef, number_op: OpDef, name: str, to_float: bool = False) -> Any:
    """``torch.<name>(input, other)``: other a tensor or a number (the Scalar overload)."""

    def fn(input: Tensor, other: Any) -> Tensor:
        if not isinstance(input, Tensor) or not isinstance(other, (Tensor, *_NUMBERS)):
            raise invalid_call(fn, {"input": input, "other": other}, name)
        if isinstance(other, Tensor):
            return apply(op, input, other)
        return apply(number_op, _number_operand(input, other, to_float), other=other)

    fn.__name__ = name
    return fn


_NUMBERS = (bool, int, float)
_OTHER = {"tensor": "other"}  # the methods' argument torch's parser types as Tensor
_OTHER_OVERLOADED = {"tensor_or_number": "other"}  # ... of the methods with a Number overload too


def _declare(
    fn: Any,
    op: OpDef,
    number_op: OpDef | None = None,
    to_float: bool = False,
    out: Out = ELEMENTWISE,
    **method: Any,
) -> Any:
    """``fn`` as ``torch.<name>`` (taking ``out``) and ``x.<name>()``, and ``x.<name>_()`` in place
    (``method``: the methods' argument typing, as ``api.method``'s)."""
    api.variants(fn.__name__, out=out, **method)(fn)
    api.method(fn.__name__ + "_", **method)(ip.inplace_method(_inplace_spec(op, number_op, to_float)))
    return fn


def _inplace_spec(op: OpDef, number_op: OpDef | None = None, to_float: bool = False) -> Any:
    """What ``x.<op>_(other)`` runs in place: the Tensor overload, or the Scalar one, whose result
    type is checked against ``x``'s dtype as torch checks it."""

    def spec(self: Tensor, other: Any) -> tuple:
        if isinstance(other, Tensor) or number_op is None:
            return op, (other,), {}
        check_cast(_number_operand(self, other, to_float).dtype, self.dtype)
        return number_op, (), {"other": other}

    return spec


atan2 = _declare(_tensors_only(ATAN2, "atan2"), ATAN2, **_OTHER)
arctan2 = _declare(_tensors_only(ATAN2, "arctan2"), ATAN2, out=ELEMENTWISE.named("atan2"), **_OTHER)
hypot = _declare(_tensors_only(HYPOT, "hypot"), HYPOT, **_OTHER)
fmax = api.variants("fmax", out=ELEMENTWISE, **_OTHER)(_tensors_only(FMAX, "fmax"))
fmin = api.variants("fmin", out=ELEMENTWISE, **_OTHER)(_tensors_only(FMIN, "fmin"))
logaddexp = api.variants("logaddexp", out=ELEMENTWISE, **_OTHER)(_tensors_only(LOGADDEXP, "logaddexp"))
logaddexp2 = api.variants("logaddexp2", out=ELEMENTWISE, **_OTHER)(_tensors_only(LOGADDEXP2, "logaddexp2"))
fmod = _declare(_tensor_or_number(FMOD, FMOD_NUMBER, "fmod"), FMOD, FMOD_NUMBER, **_OTHER_OVERLOADED)
copysign = _tensor_or_number(COPYSIGN, COPYSIGN_NUMBER, "copysign", to_float=True)
_declare(copysign, COPYSIGN, COPYSIGN_NUMBER, to_float=True, **_OTHER_OVERLOADED)
_remainder = _tensor_or_number(REMAINDER, REMAINDER_NUMBER, "remainder")
_xlogy_fn = _tensor_or_number(XLOGY, XLOGY_NUMBER, "xlogy", to_float=True)


def remainder(input: Any, other: Any) -> Tensor:
    """Python's modulo (the sign of ``other``); a number ``input`` takes the Scalar_Tensor
    overload, which has no derivative."""
    if isinstance(other, Tensor) and isinstance(input, _NUMBERS):
        dt = dtypes.result_type(input, other)
        return apply(REMAINDER_OF_NUMBER, other if dt is other.dtype else other.to(dt), number=input)
    return _remainder(input, other)


_declare(remainder, REMAINDER, REMAINDER_NUMBER, **_OTHER_OVERLOADED)
api.operator("__mod__")(remainder)
api.method("__imod__")(ip.inplace_method(_inplace_spec(REMAINDER, REMAINDER_NUMBER)))


@api.operator("__rmod__")
def _rmod(self: Tensor, other: Any) -> Tensor:
    return remainder(other, self)


def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, 0 where input is 0 (nan where other is nan); either may be a number."""
    if isinstance(other, Tensor) and isinstance(input, _NUMBERS):
        return apply(XLOGY_OF_NUMBER, _number_operand(other, input, True), number=input)
    return _xlogy_fn(input, other)


_declare(xlogy, XLOGY, XLOGY_NUMBER, to_float=True, **_OTHER_OVERLOADED)


# torch's signatures of the functions with a Scalar overload, for its "invalid combination" error
_TWO = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)
OVERLOADS.update(
    {
        "fmod": _TWO,
        "copysign": _TWO,
        "remainder": (_TWO[0], "(Number self, Tensor other)", _TWO[1]),
        "xlogy": (_TWO[0], "(Number self, Tensor other, *, Tensor out = None)", _TWO[1]),
    }
)


def _heaviside_op(name: str) -> OpDef:
    """heaviside (``name`` "heaviside_" in place): torch has no derivative, a NotImplemented node
    whose backward raises naming the op; 0 for nan, as ``nan > 0`` is false."""
    return OpDef(
        "NotImplemented",
        lambda xp, a, values: xp.where(a == 0, values, (a > 0).astype(a.dtype)),
        BINARY,
        {operand: D("", _no_derivative(name)) for operand in BINARY},
        qualified_name=NOT_IMPLEMENTED,
        iterator_operands=BINARY,
    )


HEAVISIDE, HEAVISIDE_ = _heaviside_op("heaviside"), _heaviside_op("heaviside_")


HEAVISIDE_OUT = Out(
    "same",
    "heaviside is not yet implemented for tensors with different dtypes.",
    aten="aten::heaviside",
    unimplemented=ip.unimplemented_out("heaviside"),
)
FLOAT_POWER_OUT = Out(
    "same",
    "the output given to float_power has dtype {out} but the operation's result requires dtype {result}",
    aten="pow",
)



def _float_power_out(args: tuple, kwargs: dict) -> Out:
    """float_power's out= (composite: its dtype checked before autograd's refusal)."""
    out = kwargs.get("out")
    if isinstance(out, Tensor) and out.dtype is not dtypes.float64:
        raise RuntimeError(FLOAT_POWER_OUT.message.format(out=dtypes.scalar_type(out.dtype), result="Double"))
    return FLOAT_POWER_OUT


def _check_heaviside(input: Tensor, values: Tensor) -> None:
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


@api.variants("heaviside", tensor="values", out=HEAVISIDE_OUT)
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where ``input`` < 0 (and nan), 1 where > 0, ``values`` where 0; both of one dtype."""
    if not (isinstance(input, Tensor) and isinstance(values, Tensor)):
        raise invalid_call(heaviside, {"input": input, "values": values})
    _check_heaviside(input, values)
    return apply(HEAVISIDE, input, values)


@api.variants("float_power", tensor_or_number="exponent", out=Out(pick=_float_power_out))
def float_power(input: Any, exponent: Any) -> Tensor:
    """``pow`` in float64, as torch's composite writes it: ``input.to(double).pow(exponent)``
    (ToCopyBackward0 then PowBackward0/1/2), a number exponent as a float."""
    if isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return pow(input.to(dtypes.float64), exponent.to(dtypes.float64))
    if isinstance(input, Tensor) and isinstance(exponent, _NUMBERS):
        return pow(input.to(dtypes.float64), float(exponent))
    if isinstance(input, _NUMBERS) and isinstance(exponent, Tensor):
        return pow(input, exponent.to(dtypes.float64))
    raise invalid_call(float_power, {"input": input, "exponent": exponent})


OVERLOADS["float_power"] = (
    "(Tensor input, Tensor exponent, *, Tensor out = None)",
    "(Number self, Tensor exponent, *, Tensor out = None)",
    "(Tensor input, Number exponent, *, Tensor out = None)",
)


# -- methods ---------------------------------------------------------------------------------------
@api.method("heaviside_", tensor="values")
def _heaviside_(self: Tensor, values: Tensor) -> Tensor:
    _check_heaviside(self, values)
    return ip.apply_inplace(HEAVISIDE_, self, values)


@api.method("float_power_", tensor_or_number="exponent")
def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """``x.float_power_(exponent)``: ``x.pow_(exponent in float64)``, for a float64 ``x`` only."""
    if self.dtype is not dtypes.float64:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {dtypes.scalar_type(self.dtype)} but the operation's "
            "result requires dtype Double"
        )
    if isinstance(exponent, Tensor):
        return ip.apply_inplace(POW_TT, self, exponent.to(dtypes.float64))
    return ip.apply_inplace(POW_TS, self, exponent=float(exponent))


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
    jvp=_picked_jvp(_share("__gt__")),
)


MINIMUM = OpDef(
    "MinimumBackward0",
    _pick("minimum"),
    ("self", "other"),
    _minmax_grad(-1),
    promote="common",
    iterator_operands=BINARY,
    jvp=_picked_jvp(_share("__lt__")),
)


@api.variants("maximum", tensor="other", out=ELEMENTWISE)
def maximum(input: Tensor, other: Tensor) -> Tensor:
    return apply(MAXIMUM, input, other)


@api.variants("minimum", tensor="other", out=ELEMENTWISE)
def minimum(input: Tensor, other: Tensor) -> Tensor:
    return apply(MINIMUM, input, other)
