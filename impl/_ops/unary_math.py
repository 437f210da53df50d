"""Unary math ops: exp, log, sqrt, sin, cos, tanh, sigmoid, relu, sign, sgn, abs, floor, ceil,
round and trunc; trigonometric and hyperbolic functions and their inverses, logarithms and
exponentials of other bases, rsqrt, frac, sinc, logit, deg2rad/rad2deg, nan_to_num, and the
predicates isinf/isposinf/isneginf/signbit; their aliases (arcsin, fix, positive ...), methods
and in-place forms; and the backward ops their formulas call by name (tanh_backward ...).

Backward formulas are derivatives.yaml's (FunctionsManual.cpp's for sinc and logit), written
with the same ops, so a create_graph=True graph carries torch's node names. Integer and bool
inputs of the floating functions compute in the default dtype (``promote="float"``); float32 is
evaluated in float64 and rounded, half types through float32, as torch's kernels round.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import dtypes
from impl._cpu import cpu_capability, fma
from impl._creation import full, zeros
from impl._names import type_name
from impl._ops import elementwise as ew
from impl._ops import inplace as ip
from impl._ops.arithmetic import POW_TS
from impl._ops.comparison import ISFINITE
from impl._ops.elementwise import (
    UNARY,
    _keep_first_on_tie,
    add_scalar,
    efficient_zero,
    mul_scalar,
    opmath,
    refuses_bool,
    rounded,
    scalar_minus,
    sub_scalar,
    unary_op,
    zero_grad,
)
from impl._ops.inplace import apply_inplace
from impl._ops.pointwise_ternary import WHERE
from impl._ops.table import FLOAT_DTYPES, D, OpDef, apply, auto_element_wise
from impl._signatures import (
    BOOLEAN,
    ELEMENTWISE,
    SAME_DTYPE,
    Out,
    _invalid_combination,
    _Signature,
    invalid_call,
)
from impl._tensor import Tensor
from impl._type_info import finfo

# -- the elementwise basics: exp, log, sqrt, sin, cos, tanh, sigmoid, relu, sign, abs, rounding --
EXP = unary_op("ExpBackward0", rounded("exp"), "result", lambda g, c: g * c.result)


LOG = unary_op("LogBackward0", rounded("log"), "self", lambda g, c: g / c.self)


SQRT = unary_op(
    "SqrtBackward0",
    lambda xp, a: xp.sqrt(a),
    "result",
    lambda g, c: g / mul_scalar(c.result, 2),
)


SIN = unary_op("SinBackward0", rounded("sin"), "self", lambda g, c: g * c.self.cos())


COS = unary_op("CosBackward0", rounded("cos"), "self", lambda g, c: g * -c.self.sin())


TANH = unary_op(
    "TanhBackward0", rounded("tanh"), "result", lambda g, c: tanh_backward(g, c.result), jvp=auto_element_wise
)


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


_UNSIGNED_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _zeroed_where(zero: Any, a: Any) -> Any:
    """A numpy array ``a`` (ints or floats) with +0 where the bool array ``zero`` (of its shape) is
    set: ``a``'s bits and-ed with a mask. The same bits as ``where``, which branches on every element
    and took 10x as long (ReLU's forward and backward were the largest costs of a CNN step)."""
    unsigned = _UNSIGNED_OF_SIZE[a.dtype.itemsize]
    mask = np.array(zero, dtype=unsigned)  # (a 0-d array stays one: the comparison gave a scalar)
    mask -= 1  # 0 where zeroed, all bits set where kept
    return np.bitwise_and(mask, a.view(unsigned), out=mask).view(a.dtype)


def _relu_fwd(xp: Any, a: Any) -> Any:
    """clamp_min(a, 0) (``a < 0 ? 0 : a``: -0.0 and nan stay), which torch's relu refuses for bool
    (clamp_min itself takes it)."""
    if a.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if xp is np and a.dtype.kind in "fiu":
        return _zeroed_where(a < 0, a)
    return _keep_first_on_tie(xp, "maximum", a, xp.zeros((), a.dtype))


RELU = unary_op(
    "ReluBackward0",
    _relu_fwd,
    "result",
    lambda g, c: threshold_backward(g, c.result, 0),
    promote=None,
)


def _sign_fwd(xp: Any, a: Any) -> Any:
    """sign/sgn: nan stays 0 as torch's; a bool is its own sign."""
    if a.dtype.kind == "b":
        return a.copy()
    return xp.where(xp.isnan(a), xp.zeros((), a.dtype), xp.sign(a)) if a.dtype in FLOAT_DTYPES else xp.sign(a)


SIGN = unary_op("SignBackward0", _sign_fwd, "", zero_grad, promote=None)


def _sgn_grad(g: Any, c: Any) -> Any:
    """sgn's gradient: torch's efficient zero for a real input; for a complex one
    ``(grad - conj(grad) * sgn**2) / (2 |z|)``, 0 at 0."""
    z = c.self
    if z._data.dtype.kind != "c":
        return efficient_zero(g, c)
    s = c.result
    return ((g - g.conj() * s * s) / (z.abs() * 2)).masked_fill(z == 0, 0)


SGN = unary_op("SgnBackward0", _sign_fwd, "self result", _sgn_grad, promote=None)  # abs calls it


ABS = unary_op(
    "AbsBackward0",
    refuses_bool("abs_cpu", lambda xp, a: xp.abs(a)),
    "self",
    lambda g, c: g * apply(SGN, c.self),
    promote=None,
)


STEP = {"self": D("", zero_grad)}  # the derivatives of a step function (floor, ceil, round, trunc)


def _step(name: str, kernel: str, fwd: Any) -> OpDef:
    """A rounding op (no bool kernel in torch: ``kernel``'s error), its derivative zeros."""
    fwd = refuses_bool(kernel, fwd)
    return OpDef(name, fwd, derivatives=STEP, iterator_operands=UNARY, jvp=auto_element_wise)


FLOOR = _step("FloorBackward0", "floor_vml_cpu", lambda xp, a: xp.floor(a))


CEIL = _step("CeilBackward0", "ceil_vml_cpu", lambda xp, a: xp.ceil(a))


ROUND = _step("RoundBackward0", "round_vml_cpu", lambda xp, a: xp.round(a))


TRUNC = _step("TruncBackward0", "trunc_vml_cpu", lambda xp, a: xp.trunc(a))


_TANH_BACKWARD_PLAIN = opmath(lambda xp, g, out: g * (1 - out * out))


def _tanh_backward_fwd(xp: Any, g: Any, out: Any) -> Any:
    """torch's tanh_backward ``g * (1 - out * out)``, its ``1 - out * out`` one fused multiply-add
    in float32 and float64 where torch's kernels are built with FMA (AVX2, AVX512: the compiler
    contracts it in the vector and the scalar loop alike); plain on the baseline build."""
    fused = out.dtype in (np.float32, np.float64) and g.dtype == out.dtype and cpu_capability() != "default"
    if xp is np and fused:
        return g * fma(out.dtype.type(1), -out, out)
    return _TANH_BACKWARD_PLAIN(xp, g, out)


# with create_graph=True has torch's grad_fn (TanhBackwardBackward0 ...) and its own derivatives
TANH_BACKWARD = OpDef(
    "TanhBackwardBackward0",
    _tanh_backward_fwd,
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


def _threshold_backward_fwd(xp: Any, g: Any, x: Any, threshold: Any) -> Any:
    """``g``, and +0 where ``x <= threshold`` (``_zeroed_where`` on numpy, for operands of one shape)."""
    if xp is not np or g.dtype.itemsize not in _UNSIGNED_OF_SIZE or g.shape != x.shape:
        return xp.where(x <= threshold, xp.zeros((), g.dtype), g)
    return _zeroed_where(x <= threshold, g)


THRESHOLD_BACKWARD = OpDef(
    "ThresholdBackwardBackward0",
    _threshold_backward_fwd,
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


def _rsqrt(t: Tensor) -> Tensor:
    return apply(RSQRT, t)


# -- trigonometric and hyperbolic ------------------------------------------------------------
TAN = unary_op("TanBackward0", rounded("tan"), "result", lambda g, c: g * add_scalar(c.result.pow(2), 1))
ASIN = unary_op(
    "AsinBackward0", rounded("arcsin"), "self", lambda g, c: g * _rsqrt(add_scalar(-c.self * c.self, 1))
)
ACOS = unary_op(
    "AcosBackward0", rounded("arccos"), "self", lambda g, c: g * -_rsqrt(add_scalar(-c.self * c.self, 1))
)
ATAN = unary_op("AtanBackward0", rounded("arctan"), "self", lambda g, c: g / add_scalar(c.self * c.self, 1))
SINH = unary_op("SinhBackward0", rounded("sinh"), "self", lambda g, c: g * apply(COSH, c.self))
COSH = unary_op("CoshBackward0", rounded("cosh"), "self", lambda g, c: g * apply(SINH, c.self))
ASINH = unary_op(
    "AsinhBackward0", rounded("arcsinh"), "self", lambda g, c: g * _rsqrt(add_scalar(c.self.pow(2), 1))
)
ACOSH = unary_op(
    "AcoshBackward0", rounded("arccosh"), "self", lambda g, c: g * _rsqrt(sub_scalar(c.self * c.self, 1))
)
ATANH = unary_op(
    "AtanhBackward0",
    rounded("arctanh"),
    "self",
    lambda g, c: mul_scalar(g, 1) / scalar_minus(1, c.self.pow(2)),
)

# -- logarithms and exponentials ---------------------------------------------------------------
LOG1P = unary_op("Log1PBackward0", rounded("log1p"), "self", lambda g, c: g / add_scalar(c.self, 1))
EXPM1 = unary_op("Expm1Backward0", rounded("expm1"), "result", lambda g, c: g * add_scalar(c.result, 1))
LOG2 = unary_op("Log2Backward0", rounded("log2"), "self", lambda g, c: g / mul_scalar(c.self, math.log(2)))
LOG10 = unary_op(
    "Log10Backward0", rounded("log10"), "self", lambda g, c: g / mul_scalar(c.self, math.log(10))
)
EXP2 = unary_op(
    "Exp2Backward0", rounded("exp2"), "result", lambda g, c: mul_scalar(g * c.result, math.log(2))
)
# torch's rsqrt is 1 / sqrt(x), both rounded (rsqrt(-0.0) is -inf)
RSQRT = unary_op(
    "RsqrtBackward0",
    opmath(lambda xp, a: 1 / xp.sqrt(a)),
    "result",
    lambda g, c: mul_scalar(g, -0.5) * c.result.pow(3),
)


# -- frac, sinc, logit, angle conversions ------------------------------------------------------
FRAC = unary_op(
    "FracBackward0",
    ew.floating_only("frac_cpu", opmath(lambda xp, a: a - xp.trunc(a))),  # frac(inf) is inf - inf: nan
    "",
    lambda g, c: g,
    promote=None,
)


def _sinc_fwd(xp: Any, a: Any) -> Any:
    """torch's sinc: 1 at 0, else sin(pi x) / (pi x), the product and quotient in the (opmath)
    dtype and sin rounded from float64."""
    product = a * a.dtype.type(math.pi)
    quotient = rounded("sin")(xp, product) / product
    return xp.where(a == 0, a.dtype.type(1), quotient)


def _sinc_grad(g: Any, c: Any) -> Any:
    """FunctionsManual's sinc_backward: grad * ((pi x cos(pi x) - sin(pi x)) / (x x pi)), 0 where
    x * x * pi is 0 (x underflowing included)."""

    self_pi = mul_scalar(c.self, math.pi)
    self_squared_pi = mul_scalar(c.self * c.self, math.pi)
    out = g * ((self_pi * self_pi.cos() - self_pi.sin()) / self_squared_pi)
    return apply(WHERE, zeros((), dtype=g.dtype, device=g.device), out, condition=self_squared_pi == 0.0)


SINC = unary_op("SincBackward0", opmath(_sinc_fwd), "self", _sinc_grad)


def _bounds(dt: Any, eps: float | None) -> tuple[Any, Any] | None:
    """logit's clamp bounds (eps, 1 - eps) in the input's dtype ``dt`` (a half type's too), as
    torch's kernel takes them; None for no (or a negative) eps."""
    if eps is None or eps < 0:
        return None
    lo = dt.type(eps)
    return lo, dt.type(1 - float(lo))


def _logit_fwd(xp: Any, a: Any, eps: float | None) -> Any:
    """torch's logit kernel: ``a`` clamped to [eps, 1 - eps] if eps >= 0 (nan stays), then
    log(a / (1 - a)), each step rounded to the dtype (a half type's too: its kernel has no opmath)."""
    bounds = _bounds(a.dtype, eps)
    if bounds is not None:
        a = xp.where(a < bounds[0], bounds[0], xp.where(a > bounds[1], bounds[1], a))
    return rounded("log")(xp, a / (1 - a))


def _logit_backward_fwd(xp: Any, g: Any, x: Any, eps: float | None) -> Any:
    """torch's logit_backward kernel (a backward without create_graph), each step rounded to the
    dtype: outside [0, 1] nan, or outside [eps, 1 - eps] 0; at 0 and 1 ``g * inf``; else
    g / (x (1 - x))."""
    bounds = _bounds(x.dtype, eps)
    lo, hi = (0, 1) if bounds is None else bounds
    fill = x.dtype.type(math.nan if bounds is None else 0)
    inner = xp.where((x == 0) | (x == 1), g * x.dtype.type(math.inf), g / (x * (1 - x)))
    return xp.where((x < lo) | (x > hi), fill, inner)


LOGIT_BACKWARD = OpDef(
    "LogitBackwardBackward0",
    _logit_backward_fwd,
    ("grad_output", "self"),
    promote="common",
    iterator_operands=("grad_output", "self"),
)


def _logit_grad(g: Any, c: Any) -> Any:
    """derivatives.yaml's logit: with grad mode on (create_graph) infinitely_differentiable_logit_backward,
    where(eps <= x <= 1 - eps, grad / (x (1 - x)), 0 (nan without eps)), else the kernel."""
    if not grad_mode.is_grad_enabled():
        return apply(LOGIT_BACKWARD, g, c.self, eps=c.eps)

    x, eps = c.self, c.eps
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    fill = full((), math.nan if eps is None else 0.0, dtype=x.dtype, device=x.device)
    return apply(WHERE, g / (x * scalar_minus(1, x)), fill, condition=(x >= lo) & (x <= hi))


LOGIT = unary_op("LogitBackward0", _logit_fwd, "self eps", _logit_grad)
DEG_PER_RAD = 180 / math.pi
# torch's deg2rad/rad2deg multiply by the constant (cast to the opmath dtype)
DEG2RAD = unary_op(
    "Deg2RadBackward0",
    opmath(lambda xp, a: a * a.dtype.type(1 / DEG_PER_RAD)),
    "",
    lambda g, c: mul_scalar(g, 1 / DEG_PER_RAD),
)
RAD2DEG = unary_op(
    "Rad2DegBackward0",
    opmath(lambda xp, a: a * a.dtype.type(DEG_PER_RAD)),
    "",
    lambda g, c: mul_scalar(g, DEG_PER_RAD),
)


def _nan_to_num_fwd(xp: Any, a: Any, nan: float | None, posinf: float | None, neginf: float | None) -> Any:
    """nan, +inf and -inf replaced (by 0 and the dtype's largest and lowest by default, the
    replacements cast to the dtype: 1e10 is inf in float16); integers and bool are copied."""
    if a.dtype not in FLOAT_DTYPES:
        return a.copy()
    largest, dt = finfo(dtypes.from_numpy_dtype(a.dtype)).max, a.dtype.type
    out = xp.where(xp.isnan(a), dt(0.0 if nan is None else nan), a)
    out = xp.where(a == dt(math.inf), dt(largest if posinf is None else posinf), out)
    return xp.where(a == dt(-math.inf), dt(-largest if neginf is None else neginf), out)


NAN_TO_NUM = unary_op(
    "NanToNumBackward0", _nan_to_num_fwd, "self", lambda g, c: g * apply(ISFINITE, c.self), promote=None
)


# -- round to a number of decimals -------------------------------------------------------------
def _round_scaled(xp: Any, a: Any, decimals: int) -> Any:
    """torch's round_decimals kernel (in the opmath dtype): rint(a * 10^d) / 10^d, or for d < 0
    rint(a / 10^-d) * 10^-d, the power of ten a double (std::pow) cast to the dtype (inf where it
    overflows, so an overflowing scale gives nan)."""
    places = -decimals if decimals < 0 else decimals
    scale = math.inf if places > 308 else 10.0**places
    ten = a.dtype.type(scale if scale <= finfo(dtypes.from_numpy_dtype(a.dtype)).max else math.inf)
    return xp.rint(a / ten) * ten if decimals < 0 else xp.rint(a * ten) / ten


_ROUND_ZERO = ew.floating_only("round_vml_cpu", lambda xp, a, decimals: xp.round(a))
_ROUND_DECIMALS = ew.floating_only("round_cpu", opmath(_round_scaled))
# round(x, decimals=d): decimals=0 is round's own kernel (whose integer and bool versions are missing)
ROUND_DECIMALS = OpDef(
    "RoundBackward1",
    lambda xp, a, decimals: (_ROUND_DECIMALS if decimals else _ROUND_ZERO)(xp, a, decimals=decimals),
    derivatives=STEP,
    iterator_operands=UNARY,
)
_UNSET: Any = object()  # decimals not given: round's own overload (RoundBackward0, integers copied)


def _decimals(value: Any) -> int | None:
    """``value`` as torch's parser takes an int (a Python or numpy integer, a 0-d integer tensor),
    else None; beyond int64 raises its ValueError."""
    if isinstance(value, bool) or (isinstance(value, Tensor) and (value.dim() or value.is_floating_point())):
        return None
    try:
        number = value.__index__()
    except (AttributeError, TypeError, RuntimeError):
        return None
    if not -(2**63) <= number < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return number


def _rounded(self: Tensor, decimals: Any, inplace: bool) -> Tensor:
    """round (RoundBackward0) or round to ``decimals`` (RoundBackward1), in place or not."""
    op, attrs = (ROUND, {}) if decimals is _UNSET else (ROUND_DECIMALS, {"decimals": decimals})
    return ip.apply_inplace(op, self, **attrs) if inplace else apply(op, self, **attrs)


@api.function("round", out=SAME_DTYPE)
def round(input: Tensor, *args: Any, decimals: int = _UNSET) -> Tensor:
    """Round half to even, to ``decimals`` decimal places when given (negative: tens, hundreds
    ...), in the opmath dtype; integers are copied without decimals and refused with them."""
    if args:
        raise invalid_call(round, locals())
    number = _UNSET if decimals is _UNSET else _decimals(decimals)
    if not isinstance(input, Tensor) or number is None:
        raise invalid_call(round, locals())
    return _rounded(input, number, inplace=False)


def _round_method(name: str, inplace: bool) -> Any:
    """``x.round(decimals=d)`` / ``x.round_(decimals=d)``, with the method parser's errors."""

    def method(self: Tensor, *args: Any, decimals: int = _UNSET) -> Tensor:
        if len(args) == 1:
            raise TypeError(f"{name}() takes from 1 to 0 positional arguments but 1 were given")
        if args:
            signatures = [_Signature("()"), _Signature("(*, int decimals)")]
            raise _invalid_combination(name, signatures, args, {})
        number = _UNSET if decimals is _UNSET else _decimals(decimals)
        if number is None:
            raise TypeError(f"{name}(): argument 'decimals' must be int, not {type_name(decimals)}")
        return _rounded(self, number, inplace)

    return method


# -- predicates (bool results, no gradient) ----------------------------------------------------
def _predicate(fwd: Any) -> OpDef:
    """A predicate of floating values: integer and bool tensors give False everywhere."""

    def run(xp: Any, a: Any) -> Any:
        return fwd(xp, a) if a.dtype in FLOAT_DTYPES else xp.zeros(a.shape, dtype=bool)

    return OpDef("NotDifferentiable", run, iterator_operands=UNARY)


ISINF = _predicate(lambda xp, a: xp.isinf(a))
ISPOSINF = _predicate(lambda xp, a: a == a.dtype.type(math.inf))
ISNEGINF = _predicate(lambda xp, a: a == a.dtype.type(-math.inf))
SIGNBIT = OpDef(  # negative signed integers too; the sign bit of floats (-0.0 and -nan included)
    "NotDifferentiable",
    lambda xp, a: xp.signbit(a) if a.dtype in FLOAT_DTYPES else (a < 0) & (a.dtype.kind == "i"),
    iterator_operands=UNARY,
)


# -- functions, methods and in-place forms --------------------------------------------------------
def _function(op: OpDef, name: str) -> Any:
    """``torch.<name>(input)``; anything but a tensor raises torch's TypeError naming ``name``."""

    def fn(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise invalid_call(fn, locals(), name)
        return apply(op, input)

    fn.__name__ = name
    return fn


def _no_inplace_derivative(op: OpDef) -> OpDef:
    """The in-place form of asinh/acosh/atanh: torch records it (``AsinhBackward1``), but its
    derivative raises when the backward reaches it."""

    name = op.node_name.removesuffix("Backward0").lower()

    def formula(g: Any, c: Any) -> Any:
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")

    return unary_op(op.node_name[:-1] + "1", op.forward, "", formula)


def declare(op: OpDef, *names: str, inplace: OpDef | bool = True, out: Out | None = ELEMENTWISE) -> Any:
    """``torch.<name>(input)`` (taking ``out``) and ``x.<name>()`` for each of ``names`` (aliases,
    their autograd error under out= naming the first), and ``x.<name>_()`` running ``inplace`` (the
    op itself if True, none if False) in place; the functions."""
    out = out and out.named(names[0])
    fns = tuple(api.variants(name, out=out)(_function(op, name)) for name in names)
    if inplace:
        method = ip.unary_inplace(op if inplace is True else inplace)
        api.method(*(name + "_" for name in names))(method)
    return fns[0] if len(fns) == 1 else fns


tan = declare(TAN, "tan")
asin, arcsin = declare(ASIN, "asin", "arcsin")
acos, arccos = declare(ACOS, "acos", "arccos")
atan, arctan = declare(ATAN, "atan", "arctan")
sinh, cosh = declare(SINH, "sinh"), declare(COSH, "cosh")
asinh, arcsinh = declare(ASINH, "asinh", "arcsinh", inplace=_no_inplace_derivative(ASINH))
acosh, arccosh = declare(ACOSH, "acosh", "arccosh", inplace=_no_inplace_derivative(ACOSH))
atanh, arctanh = declare(ATANH, "atanh", "arctanh", inplace=_no_inplace_derivative(ATANH))
log1p, expm1 = declare(LOG1P, "log1p"), declare(EXPM1, "expm1")
log2, log10, exp2 = declare(LOG2, "log2"), declare(LOG10, "log10"), declare(EXP2, "exp2")
rsqrt, frac, sinc = declare(RSQRT, "rsqrt"), declare(FRAC, "frac", out=SAME_DTYPE), declare(SINC, "sinc")
deg2rad, rad2deg = declare(DEG2RAD, "deg2rad"), declare(RAD2DEG, "rad2deg")
isinf = declare(ISINF, "isinf", inplace=False, out=None)
isposinf = declare(ISPOSINF, "isposinf", inplace=False, out=BOOLEAN)
isneginf = declare(ISNEGINF, "isneginf", inplace=False, out=BOOLEAN)
signbit = declare(SIGNBIT, "signbit", inplace=False, out=BOOLEAN)
fix = declare(TRUNC, "fix", out=SAME_DTYPE.named("trunc"))


@api.variants("logit", out=Out())
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given (and not negative)."""
    if not isinstance(input, Tensor):
        raise invalid_call(logit, locals())
    return apply(LOGIT, input, eps=eps)


@api.method("logit_")
def _logit_(self: Tensor, eps: float | None = None) -> Tensor:
    return ip.apply_inplace(LOGIT, self, eps=eps)


@api.variants(
    "nan_to_num", out=Out("same", "nan_to_num: dtype of out: {out} should be same as input: {result}")
)
def nan_to_num(
    input: Tensor, nan: float | None = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """nan, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (defaults: 0 and the
    dtype's extremes)."""
    if not isinstance(input, Tensor):
        raise invalid_call(nan_to_num, locals())
    return apply(NAN_TO_NUM, input, nan=nan, posinf=posinf, neginf=neginf)


@api.method("nan_to_num_")
def _nan_to_num_(
    self: Tensor, nan: float | None = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    return ip.apply_inplace(NAN_TO_NUM, self, nan=nan, posinf=posinf, neginf=neginf)


@api.variants("positive")
def positive(input: Tensor) -> Tensor:
    """``input`` itself (the same tensor object), which torch refuses for bool."""
    if not isinstance(input, Tensor):
        raise invalid_call(positive, locals())
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@api.method("square_")
def _square_(self: Tensor) -> Tensor:
    """``x.square_()``: ``x.pow_(2)`` (a bool tensor's square is Long, which it cannot hold)."""
    ip._check_cast(dtypes.result_type(self, 2), self.dtype)
    return ip.apply_inplace(POW_TS, self, exponent=2)


api.method("round")(_round_method("round", inplace=False))
api.method("round_")(_round_method("round_", inplace=True))


# -- the backward ops formulas call by name (tanh_backward ...): declared as ops, so a gradient made


def _unary(op: OpDef) -> Any:
    def fn(input: Tensor) -> Tensor:
        return op._call((input,), {})

    fn.unary_op = op  # the Tensor method calls the op without this frame (impl._methods)
    return fn


def _declare_unary(op: OpDef, *names: str, inplace: bool = True, out: Out | None = ELEMENTWISE) -> Any:
    """``torch.<name>(input)`` (taking ``out``), ``x.<name>()`` and (``inplace``) ``x.<name>_()`` for
    each name."""
    fn = api.variants(*names, out=out)(_unary(op))
    if inplace:
        api.method(*(name + "_" for name in names))(ip.unary_inplace(op))
    return fn


exp, log, sqrt = _declare_unary(EXP, "exp"), _declare_unary(LOG, "log"), _declare_unary(SQRT, "sqrt")


sin, cos = _declare_unary(SIN, "sin"), _declare_unary(COS, "cos")


tanh, sigmoid = _declare_unary(TANH, "tanh"), _declare_unary(SIGMOID, "sigmoid")


relu = _declare_unary(RELU, "relu", inplace=False, out=None)  # relu_: impl/_ops/inplace.py


sign, sgn = _declare_unary(SIGN, "sign", out=SAME_DTYPE), _declare_unary(SGN, "sgn", out=SAME_DTYPE)


floor, ceil = _declare_unary(FLOOR, "floor", out=SAME_DTYPE), _declare_unary(CEIL, "ceil", out=SAME_DTYPE)


trunc = _declare_unary(TRUNC, "trunc", out=SAME_DTYPE)  # round: unary_math.py


abs = api.function("abs", "absolute", out=SAME_DTYPE)(api.method("abs", "absolute", "__abs__")(_unary(ABS)))


api.method("abs_", "absolute_")(ip.unary_inplace(ABS))


@api.method("relu_")
def relu_(self: Tensor) -> Tensor:
    return apply_inplace(RELU, self)
