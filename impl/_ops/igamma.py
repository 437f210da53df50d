"""The regularized incomplete gamma functions igamma (P(a, x), torch.special.gammainc) and igammac
(Q(a, x) = 1 - P, gammaincc): functions, methods, in-place forms.

Values are evaluated in float64 and rounded once to the operands' dtype: the power series of P
below ``x < a + 1``, the continued fraction of Q above (Lentz's method), each giving the other as
its complement; accurate to about ``1e-16 * a * log(a)`` (the prefactor's cancellation), within
the oracle's tolerance for the a of everyday use. Edges are torch's, checked in its order: NaN
for a negative a or x, a of 0 (and x > 0) is 1 for P, an infinite a or x as its limits, NaN
after them. derivatives.yaml has a gradient for x only; the one for a is not implemented."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impl._ops.binary_math import _binary, _declare, _tensors_only
from impl._ops.elementwise import floating_only
from impl._ops.table import D
from impl._xp import to_numpy

__all__ = ["igamma", "igammac"]

_EPS = 1e-17
_TINY = 1e-300
_MAXITER = 1_000_000


def _prefactor(a: float, x: float) -> float:
    """x**a * exp(-x) / Gamma(a)."""
    return math.exp(a * math.log(x) - x - math.lgamma(a))


def _series(a: float, x: float) -> float:
    """P(a, x) by its power series, sum of x**n / (a (a+1) ... (a+n))."""
    term = total = 1.0 / a
    n = 0
    while n < _MAXITER:
        n += 1
        term *= x / (a + n)
        total += term
        if abs(term) <= abs(total) * _EPS:
            break
    return total * _prefactor(a, x)


def _continued_fraction(a: float, x: float) -> float:
    """Q(a, x) by Legendre's continued fraction, evaluated by Lentz's method."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAXITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) <= _EPS * 10:
            break
    return h * _prefactor(a, x)


def _regularized(a: float, x: float, upper: bool) -> float:
    """P(a, x), or Q(a, x) where ``upper``, with torch's values at the edges."""
    if a < 0 or x < 0:
        return math.nan
    if a == 0:
        return (0.0 if upper else 1.0) if x > 0 else math.nan
    if x == 0:
        return 1.0 if upper else 0.0
    if math.isinf(a):
        return math.nan if math.isinf(x) else (1.0 if upper else 0.0)
    if math.isinf(x):
        return 0.0 if upper else 1.0
    if math.isnan(a) or math.isnan(x):  # (after the edges, which torch checks first)
        return math.nan
    if x < a + 1.0:
        p = _series(a, x)
        return 1.0 - p if upper else p
    q = _continued_fraction(a, x)
    return q if upper else 1.0 - q


_P = np.frompyfunc(lambda a, x: _regularized(a, x, False), 2, 1)
_Q = np.frompyfunc(lambda a, x: _regularized(a, x, True), 2, 1)


def _kernel(ufunc: Any) -> Any:
    def fwd(xp: Any, a: Any, x: Any) -> Any:
        a64, x64 = to_numpy(a).astype(np.float64), to_numpy(x).astype(np.float64)
        r = np.asarray(ufunc(a64, x64), dtype=np.float64)
        if a.dtype.itemsize == 2:
            r = r.astype(np.float32)
        return xp.asarray(r.astype(a.dtype))

    return fwd


def _not_implemented(name: str) -> Any:
    def formula(g: Any, c: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")

    return formula


def _density(c: Any) -> Any:
    """The derivative of P(a, x) in x, as derivatives.yaml writes it."""
    return ((c.self - 1) * c.other.log() - c.other - c.self.lgamma()).exp()


IGAMMA = _binary(
    "IgammaBackward0",
    floating_only("igamma_cpu", _kernel(_P)),
    {"self": D("", _not_implemented("igamma")), "other": D("self other", lambda g, c: g * _density(c))},
)
IGAMMAC = _binary(
    "IgammacBackward0",
    floating_only("igammac_cpu", _kernel(_Q)),
    {"self": D("", _not_implemented("igammac")), "other": D("self other", lambda g, c: -g * _density(c))},
)

igamma = _declare(_tensors_only(IGAMMA, "igamma"), IGAMMA, tensor="other")
igammac = _declare(_tensors_only(IGAMMAC, "igammac"), IGAMMAC, tensor="other")
