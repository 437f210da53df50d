"""The gamma family and its neighbours: torch.lgamma, digamma, polygamma, mvlgamma, erfinv, i0 and
torch.special.i1 (LgammaBackward0, DigammaBackward0, PolygammaBackward0, MvlgammaBackward0,
ErfinvBackward0, I0Backward0, SpecialI1Backward0), with methods and in-place forms.

The kernels follow aten/src/ATen/native/Math.h (Cephes' digamma, trigamma, Hurwitz zeta and the
Chebyshev series of i0/i1; Pavlis' erfinv with its two Newton steps), lane by lane on any array
namespace, each lane's branch kept by ``where``: in float64, rounded once to the input's dtype
(torch's float32 kernels are within a few ulps of that; its half types compute in float32), except
digamma and trigamma, whose float32 overloads (which the half types call) drift enough in float32
arithmetic (near poles) that they run in it. lgamma is the C library's, as torch's (Python's
math.lgamma, lane by lane). Backward formulas are derivatives.yaml's, written with the same ops so
that create_graph graphs carry torch's nodes.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import arange, full
from impl._names import type_name
from impl._ops import inplace as ip
from impl._ops.elementwise import mul_scalar
from impl._ops.pointwise_ternary import WHERE
from impl._ops.special import _erf_fwd
from impl._ops.table import apply
from impl._ops.unary_math import declare, unary_op
from impl._signatures import ELEMENTWISE, Out, invalid_call
from impl._tensor import Tensor, as_int
from impl._type_info import finfo
from impl._xp import to_numpy

# Cephes' digamma asymptotic series, psi(10)
_PSI_A = (
    8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
    -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)
_PSI_10 = 2.25175258906672110764
# Cephes' zeta: the Euler-Maclaurin coefficients (2k)! / B_2k
_ZETA_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
    -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
    1.8152105401943546773e17, -7.1661652561756670113e18,
)
_MACHEP = 1.11022302462515654042e-16
# Math.h's Chebyshev coefficients (the double ones) of exp(-x) I0(x) on [0, 8] (A) and of
# exp(-x) sqrt(x) I0(x) beyond (B); I1's likewise
_I0_A = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1,
)
_I0_B = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)
_I1_A = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1,
)
_I1_B = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1,
)
# Pavlis' erfinv: the rational approximation on |y| <= 0.7 (a/b) and beyond (c/d)
_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (3.543889200, 1.637067800)


def _kernel(fn: Any) -> Any:
    """``fn(xp, x64, *attrs)`` (x in float64) as a forward: the result rounded once to the input's
    dtype, the half types through float32."""

    def fwd(xp: Any, a: Any, **attrs: Any) -> Any:
        r = fn(xp, a.astype(xp.float64), **attrs)
        if a.dtype.itemsize == 2:
            r = r.astype(xp.float32)
        return r.astype(a.dtype)

    return fwd


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # the poles (C's lgamma: inf), and beyond float64's range
        return math.inf


_LGAMMA_UFUNC = np.frompyfunc(_lgamma_scalar, 1, 1)


def _lgamma(xp: Any, x: Any) -> Any:
    """log|Gamma(x)| by the C library's lgamma (torch's), lane by lane on the host."""
    r = np.asarray(_LGAMMA_UFUNC(to_numpy(x)), dtype=np.float64)  # a 0-d one gives a float
    return r if xp is np else xp.asarray(r)


def _polevl(x: Any, coefficients: tuple[float, ...]) -> Any:
    r = 0 * x + coefficients[0]
    for c in coefficients[1:]:
        r = r * x + c
    return r


def _digamma(xp: Any, x: Any, single: bool = False) -> Any:
    """Cephes' digamma: the reflection formula below 0 (its pi / tan(pi r) in float64), the
    recurrence up to 10, the asymptotic series (psi(10) exactly at 10); +-inf at +-0, NaN at the
    negative integers; in float32 arithmetic for ``single`` (torch's float overload)."""
    dt = xp.float32 if single else xp.float64
    x = x.astype(dt)
    negative = x < 0
    y = xp.where(negative, dt(1) - x, x)
    result = xp.zeros_like(y)
    while True:
        low = y < 10
        if not bool(low.any()):
            break
        result = xp.where(low, result - dt(1) / xp.where(low, y, dt(1)), result)
        y = xp.where(low, y + dt(1), y)
    z = dt(1) / (y * y)
    series = xp.where(y < 1e17, z * _polevl(z, tuple(dt(a) for a in _PSI_A)), dt(0))
    log_y = xp.log(y.astype(xp.float64)).astype(dt)
    psi = xp.where(y == 10, result + dt(_PSI_10), result + log_y - dt(0.5) / y - series)
    fraction = (x - xp.trunc(xp.where(xp.isinf(x), dt(0), x))).astype(xp.float64)
    psi = xp.where(negative, psi - (math.pi / xp.tan(math.pi * fraction)).astype(dt), psi)
    psi = xp.where(negative & (x == xp.trunc(x)), xp.nan, psi)
    return xp.where(x == 0, xp.copysign(dt(xp.inf), -x), psi).astype(xp.float64)


def _single(fn: Any) -> Any:
    """A forward of ``fn(xp, x, single)``: float32 arithmetic below float64 (torch's float
    kernels, which its half types call), the result rounded to the input's dtype."""
    return lambda xp, a: _kernel(lambda xp, x: fn(xp, x, a.dtype != xp.float64))(xp, a)


def _trigamma(xp: Any, x: Any, single: bool) -> Any:
    """Math.h's trigamma: the reflection formula below 1/2, six recurrence steps, the series; in
    float32 arithmetic for ``single`` (torch's float overload, whose sin(pi x) is float32's)."""
    dt = xp.float32 if single else xp.float64
    x = x.astype(dt)
    one, pi = dt(1), dt(math.pi)
    reflect = x < dt(0.5)
    sin_pi = xp.sin((pi * x).astype(xp.float64)).astype(dt)
    result = xp.where(reflect, -(pi * pi) / (sin_pi * sin_pi), dt(0))
    x = xp.where(reflect, one - x, x)
    for _ in range(6):
        result = result + one / (x * x)
        x = x + one
    ixx = one / (x * x)
    sixth, thirtieth, fortysecond = dt(1 / 6), dt(1 / 30), dt(1 / 42)
    result = result + (one + one / (dt(2) * x) + ixx * (sixth - ixx * (thirtieth - ixx * fortysecond))) / x
    return xp.where(reflect, -result, result).astype(xp.float64)


def _zeta(xp: Any, x: Any, q: Any) -> Any:
    """Cephes' Hurwitz zeta(x, q) lane by lane: direct terms while fewer than nine or q + i <= 9
    (stopping where a term is below MACHEP of the sum), then Euler-Maclaurin's twelve."""
    x, q = xp.broadcast_arrays(x, q)
    special = xp.where(x == 1, xp.inf, xp.nan)
    special = xp.where((x > 1) & (q <= 0) & (q == xp.floor(q)), xp.inf, special)
    active = (x > 1) & ~((q <= 0) & (q == xp.floor(q))) & ~((q <= 0) & (x != xp.floor(x)))
    active |= xp.isnan(x) | xp.isnan(q)
    s = q ** -x
    a, b = q.copy(), xp.zeros_like(s)
    done = ~active
    i = 0
    while True:
        go = ~done & ((i < 9) | (a <= 9))
        if not bool(go.any()):
            break
        i += 1
        a = xp.where(go, a + 1, a)
        b = xp.where(go, a ** -x, b)
        s = xp.where(go, s + b, s)
        done |= go & (-_MACHEP * s < b) & (b < _MACHEP * s)
    w = a
    s = xp.where(done, s, s + b * w / (x - 1) - 0.5 * b)
    a, k = xp.ones_like(s), 0.0
    for coefficient in _ZETA_A:
        a, b = a * (x + k), b / w
        t = a * b / coefficient
        s = xp.where(done, s, s + t)
        done |= xp.abs(t / s) < _MACHEP
        a, b, k = a * (x + k + 1), b / w, k + 2
    return xp.where(active, s, special)


def _polygamma_fwd(xp: Any, a: Any, n: int) -> Any:
    """Math.h's polygamma: digamma (n = 0), trigamma (n = 1, in float32 below float64), else
    ``(-1)^(n+1) n! zeta(n + 1, x)``."""
    if n < 2:
        return _single(_trigamma if n else _digamma)(xp, a)
    return _kernel(_polygamma)(xp, a, n=n)


def _polygamma(xp: Any, x: Any, n: int) -> Any:
    return (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1)) * _zeta(xp, float(n + 1), x)


def _chbevl(x: Any, coefficients: tuple[float, ...]) -> Any:
    b0, b1, b2 = 0 * x + coefficients[0], 0 * x, 0 * x
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _bessel(xp: Any, x: Any, near: tuple, far: tuple, odd: bool) -> Any:
    """Cephes' i0 (``odd`` False) or i1 of x: exp(|x|) times a Chebyshev series in |x|/2 - 2 on
    [0, 8], in 32/|x| - 2 over sqrt(|x|) beyond; i1 odd."""
    y = xp.abs(x)
    small = y <= 8
    inner = xp.exp(y) * (y if odd else 1) * _chbevl(xp.where(small, y, 8.0) / 2 - 2, near)
    far_y = xp.where(small, 8.0, y)
    outer = xp.exp(y) * _chbevl(32 / far_y - 2, far) / xp.sqrt(far_y)
    r = xp.where(small, inner, outer)
    return xp.where(x < 0, -r, r) if odd else r


def _erfinv(xp: Any, y: Any) -> Any:
    """Pavlis' rational approximation, then two Newton steps on erf; NaN beyond [-1, 1], +-inf at
    +-1."""
    y_abs = xp.abs(y)
    z = y * y
    central = y * _polevl(z, _ERFINV_A[::-1]) / (_polevl(z, _ERFINV_B[::-1]) * z + 1)
    z = xp.sqrt(-xp.log(xp.where(y_abs < 1, (1 - y_abs) / 2, 0.5)))
    tail = xp.copysign(_polevl(z, _ERFINV_C[::-1]), y) / ((_ERFINV_D[1] * z + _ERFINV_D[0]) * z + 1)
    x = xp.where(y_abs <= 0.7, central, tail)
    for _ in range(2):
        x = x - (_erf_fwd(xp, x) - y) / (2 / math.sqrt(math.pi) * xp.exp(-x * x))
    x = xp.where(y_abs == 1, xp.copysign(xp.inf, y), x)
    return xp.where(y_abs > 1, xp.nan, x)


LGAMMA = unary_op("LgammaBackward0", _kernel(_lgamma), "self", lambda g, c: g * c.self.digamma())
DIGAMMA = unary_op("DigammaBackward0", _single(_digamma), "self", lambda g, c: g * polygamma(1, c.self))
POLYGAMMA = unary_op(
    "PolygammaBackward0", _polygamma_fwd, "self n", lambda g, c: g * polygamma(c.n + 1, c.self)
)
ERFINV = unary_op(
    "ErfinvBackward0",
    _kernel(_erfinv),
    "self",
    lambda g, c: mul_scalar(c.self.erfinv().pow(2).exp(), 0.5 * math.sqrt(math.pi)) * g,
)
I0 = unary_op("I0Backward0", _kernel(lambda xp, x: _bessel(xp, x, _I0_A, _I0_B, False)), "self",
              lambda g, c: g * i1(c.self))


def _i1_grad(g: Any, c: Any) -> Any:
    """FunctionsManual's i1_backward: ``i0(x) - i1(x) / x``, 1/2 where |x| <= eps (float32 and
    float64 only: its dispatch has no half types)."""
    x = c.self
    if x.dtype.itemsize == 2:
        raise NotImplementedError(f'"i1_backward" not implemented for \'{dtypes.scalar_type(x.dtype)}\'')
    eps = full((), finfo(x.dtype).eps, dtype=x.dtype)
    not_tiny = x.abs() > eps
    safe = apply(WHERE, x, eps, condition=not_tiny)
    gradx = safe.i0() - c.result * safe.reciprocal()
    return g * apply(WHERE, gradx, full((), 0.5, dtype=x.dtype), condition=not_tiny)


I1 = unary_op("SpecialI1Backward0", _kernel(lambda xp, x: _bessel(xp, x, _I1_A, _I1_B, True)), "self result",
              _i1_grad)

lgamma, digamma, erfinv, i0 = (declare(op, name) for op, name in
                               ((LGAMMA, "lgamma"), (DIGAMMA, "digamma"), (ERFINV, "erfinv"), (I0, "i0")))


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1."""
    if not isinstance(input, Tensor):
        raise invalid_call(i1, locals(), "special_i1")
    return apply(I1, input)


def _order(n: Any) -> int:
    n = as_int(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return n


@api.function("polygamma", out=ELEMENTWISE.named("polygamma"))
def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma (``n >= 0``)."""
    if not isinstance(input, Tensor):
        raise invalid_call(polygamma, locals())
    return apply(POLYGAMMA, input, n=_order(n))


# in place, the node is PolygammaBackward1 (derivatives.yaml's polygamma_)
POLYGAMMA_ = dataclasses.replace(POLYGAMMA, node_name="PolygammaBackward1")


def _method_order(n: Any) -> int:
    """polygamma's ``n`` as the method's parser reads it."""
    if type(n) is bool or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type_name(n)}")
    return _order(n)


@api.method("polygamma")
def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return apply(POLYGAMMA, self, n=_method_order(n))


@api.method("polygamma_")
def _polygamma_(self: Tensor, n: int) -> Tensor:
    return ip.apply_inplace(POLYGAMMA_, self, n=_method_order(n))


def _mvlgamma_fwd(xp: Any, a: Any, p: int) -> Any:
    """UnaryOps.cpp's mvlgamma: the lgamma of x - j/2 (j < p, in the input's dtype) summed, plus
    p(p-1)/4 log(pi), each step rounded to the dtype."""
    dt = a.dtype
    args = a[..., None] + xp.arange(-p / 2 + 0.5, 0.5, 0.5).astype(dt)
    terms = _kernel(_lgamma)(xp, args)
    total = terms.astype(xp.float64).sum(-1)
    if dt.itemsize == 2:
        total = total.astype(xp.float32)
    total = total.astype(dt).astype(xp.float64) + p * (p - 1) * math.log(math.pi) / 4
    return (total.astype(xp.float32) if dt.itemsize == 2 else total).astype(dt)


def _mvlgamma_grad(g: Any, c: Any) -> Any:
    """FunctionsManual's mvlgamma_backward: ``grad * digamma(x - j/2).sum(-1)``."""
    steps = arange(-c.p / 2 + 0.5, 0.5, 0.5, dtype=c.self.dtype, device=c.self.device)
    return g * (steps + c.self.unsqueeze(-1)).digamma_().sum(-1)


MVLGAMMA = unary_op("MvlgammaBackward0", _mvlgamma_fwd, "self p", _mvlgamma_grad)


def _mvlgamma_args(input: Tensor, p: Any) -> int:
    p = as_int(p)
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return p


@api.variants("mvlgamma", out=Out())
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``."""
    if not isinstance(input, Tensor):
        raise invalid_call(mvlgamma, locals())
    return apply(MVLGAMMA, input, p=_mvlgamma_args(input, p))


@api.method("mvlgamma_")
def _mvlgamma_(self: Tensor, p: int) -> Tensor:
    p = _mvlgamma_args(self, p)
    if not self.is_floating_point():  # torch casts the float result back (its own wording)
        into = dtypes.scalar_type(dtypes.get_default_dtype())
        raise RuntimeError(f"mvlgamma: result type {dtypes.scalar_type(self.dtype)} can't be cast to the "
                           f"desired output type {into}")
    return ip.apply_inplace(MVLGAMMA, self, p=p)
