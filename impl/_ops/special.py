"""The error function: torch.erf and torch.erfc (ErfBackward0, ErfcBackward0).

The kernel is W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev approximations
for the error function", Math. Comp. 23 (1969) 631-637), with the coefficients and the three
intervals of his Fortran routine CALERF (netlib specfun): about an ulp in float64 over the whole
line. It runs on any array namespace (numpy or cupy), in float64, and the result is rounded once
to the input's precision (torch's float32 and float64 kernels are within an ulp or so of the
correctly rounded value). Integer and bool inputs give float32, as torch's unary float ops.

torch's CPU erf of float16 and bfloat16 is another formula: its vectorized float32 erf,
Abramowitz and Stegun's 7.1.26 (``1 - t P(t) exp(-x^2)``, ``t = 1 / (1 + p|x|)``, absolute error
1.5e-7) with fused multiply-adds, so it is 0 below about 1e-7 and off by a few half-precision ulps
in places; ``_erf_half`` is that formula, each fma emulated in float64 (the product of two float32
numbers is exact there), and matches torch on every finite float16 and bfloat16 value. Their erfc
is the correctly rounded one (float32's, rounded).
"""

from __future__ import annotations

import math
from typing import Any

from impl import _api as api
from impl._ops.elementwise import UNARY, mul_scalar
from impl._ops.inplace import unary_inplace
from impl._ops.table import D, OpDef
from impl._signatures import ELEMENTWISE

# CALERF's coefficients: erf on |x| <= 0.46875 (A/B), erfc on 0.46875 < |x| <= 4 (C/D), erfc beyond (P/Q)
_A = (
    3.16112374387056560e00,
    1.13864154151050156e02,
    3.77485237685302021e02,
    3.20937758913846947e03,
    1.85777706184603153e-1,
)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_C = (
    5.64188496988670089e-1,
    8.88314979438837594e00,
    6.61191906371416295e01,
    2.98635138197400131e02,
    8.81952221241769090e02,
    1.71204761263407058e03,
    2.05107837782607147e03,
    1.23033935479799725e03,
    2.15311535474403846e-8,
)
_D = (
    1.57449261107098347e01,
    1.17693950891312499e02,
    5.37181101862009858e02,
    1.62138957456669019e03,
    3.29079923573345963e03,
    4.36261909014324716e03,
    3.43936767414372164e03,
    1.23033935480374942e03,
)
_P = (
    3.05326634961232344e-1,
    3.60344899949804439e-1,
    1.25781726111229246e-1,
    1.60837851487422766e-2,
    6.58749161529837803e-4,
    1.63153871373020978e-2,
)
_Q = (
    2.56852019228982242e00,
    1.87295284992346725e00,
    5.27905102951428412e-1,
    6.05183413124413191e-2,
    2.33520497626869185e-3,
)
_THRESHOLD = 0.46875
_SQRT_PI_INV = 5.6418958354775628695e-1
_XBIG = 26.543  # erfc underflows to 0 in float64 beyond


def _erf_small(x: Any) -> Any:
    """erf(x) for |x| <= 0.46875."""
    z = x * x
    num, den = _A[4] * z, z
    for a, b in zip(_A[:3], _B[:3], strict=True):
        num, den = (num + a) * z, (den + b) * z
    return x * (num + _A[3]) / (den + _B[3])


def _erfc_large(xp: Any, y: Any) -> Any:
    """erfc(y) for 0.46875 < y (y finite, below _XBIG): ``exp(-y*y) * R(y)``, the exponential
    split as Cody's (``y*y`` rounded to a sixteenth, then the rest) to keep its accuracy."""
    num, den = _C[8] * y, y
    for c, d in zip(_C[:7], _D[:7], strict=True):
        num, den = (num + c) * y, (den + d) * y
    mid = (num + _C[7]) / (den + _D[7])
    z = 1 / (y * y)
    num, den = _P[5] * z, z
    for p, q in zip(_P[:4], _Q[:4], strict=True):
        num, den = (num + p) * z, (den + q) * z
    far = (_SQRT_PI_INV - z * (num + _P[4]) / (den + _Q[4])) / y
    r = xp.where(y <= 4, mid, far)
    y16 = xp.trunc(y * 16) / 16
    return xp.exp(-y16 * y16) * xp.exp(-(y - y16) * (y + y16)) * r


def _erf_parts(xp: Any, a: Any) -> tuple[Any, Any, Any]:
    """(x in float64, erf on the small interval, erfc(|x|) elsewhere) for ``a``."""
    x = a.astype(xp.float64)
    y = xp.abs(x)
    small = _erf_small(xp.where(y <= _THRESHOLD, x, 0.0))
    y_large = xp.where((y > _THRESHOLD) & (y < _XBIG), y, 1.0)  # finite in the other lanes
    tail = xp.where(y >= _XBIG, 0.0, _erfc_large(xp, y_large))
    return x, small, tail


_AS_P = 0.3275911
_AS_COEFFICIENTS = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def _erf_half(xp: Any, a: Any) -> Any:
    """torch's erf of float16/bfloat16 ``a``: Abramowitz-Stegun 7.1.26 in float32 with fmas."""
    f32 = xp.float32

    def fma(u: Any, v: Any, w: float) -> Any:  # the constants are float32 ones
        return (u.astype(xp.float64) * v.astype(xp.float64) + float(f32(w))).astype(f32)

    x = a.astype(f32)
    t = f32(1) / fma(xp.full_like(x, _AS_P), xp.abs(x), 1.0)
    r = fma(xp.full_like(t, _AS_COEFFICIENTS[0]), t, _AS_COEFFICIENTS[1])
    for c in _AS_COEFFICIENTS[2:]:
        r = fma(r, t, c)
    e = xp.exp(-(x * x).astype(xp.float64)).astype(f32)
    return xp.copysign(fma(-(e * t), r, 1.0), x).astype(a.dtype)


def _erf_fwd(xp: Any, a: Any) -> Any:
    if a.dtype.itemsize == 2:
        return _erf_half(xp, a)
    x, small, tail = _erf_parts(xp, a)
    big = xp.where(x < 0, tail - 1, 1 - tail)  # (0.5 - erfc) + 0.5, the sign of x
    r = xp.where(xp.abs(x) <= _THRESHOLD, small, big)
    return xp.where(xp.isnan(x), x, r).astype(a.dtype)  # a is floating (promote), not a half type


def _erfc_fwd(xp: Any, a: Any) -> Any:
    x, small, tail = _erf_parts(xp, a)
    big = xp.where(x < 0, 2 - tail, tail)
    r = xp.where(xp.abs(x) <= _THRESHOLD, 1 - small, big)
    r = xp.where(xp.isnan(x), x, r)
    return (r.astype(xp.float32) if a.dtype.itemsize == 2 else r).astype(
        a.dtype
    )  # the half types via float32


def _gaussian_grad(coefficient: float) -> Any:
    """derivatives.yaml's ``coefficient * exp(-(self.pow(2))) * grad`` (the Scalar product first:
    MulBackward1, then MulBackward0)."""
    return lambda g, c: mul_scalar((-c.self.pow(2)).exp(), coefficient) * g


TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
ERF = OpDef(
    "ErfBackward0",
    _erf_fwd,
    derivatives={"self": D("self", _gaussian_grad(TWO_OVER_SQRT_PI))},
    promote="float",
    iterator_operands=UNARY,
)
ERFC = OpDef(
    "ErfcBackward0",
    _erfc_fwd,
    derivatives={"self": D("self", _gaussian_grad(-TWO_OVER_SQRT_PI))},
    promote="float",
    iterator_operands=UNARY,
)


@api.variants("erf", out=ELEMENTWISE)
def erf(input: Any) -> Any:
    """torch.erf: the error function, elementwise (integers and bools give float32)."""
    return ERF._call((input,), {})


@api.variants("erfc", out=ELEMENTWISE)
def erfc(input: Any) -> Any:
    """torch.erfc: ``1 - erf(x)``, accurate where erf is near 1."""
    return ERFC._call((input,), {})


api.method("erf_")(unary_inplace(ERF))
api.method("erfc_")(unary_inplace(ERFC))
