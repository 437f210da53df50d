"""torch's float32 Box-Muller block on the CPU, bit for bit: ``normal_fill_16_AVX2``
(aten/src/ATen/native/cpu/DistributionTemplates.h) with ``log256_ps`` and ``sincos256_ps`` of
aten/src/ATen/native/cpu/avx_mathfun.h (Pommier's cephes float32 polynomials).

Every intrinsic is one float32 rounding. The build contracts a multiply into the add or subtract
that consumes it (GCC's ``-ffp-contract=fast`` with FMA enabled), so the polynomial steps, the
``y * z`` of log (into ``+ e * q1``), the ``- z * 0.5`` and ``+ e * q2`` of log, the three-part
range reduction and the last steps of both sincos polynomials are fused multiply-adds; which
multiply is fused where both operands are products was measured against torch (any other choice
differs in the last bit of about 1 value in 10**3 to 10**4)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_F32 = np.float32
_LOG_P = tuple(
    _F32(c)
    for c in (
        7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
        -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
    )
)  # fmt: skip
_LOG_Q1, _LOG_Q2 = _F32(-2.12194440e-4), _F32(0.693359375)
_SQRTHF = _F32(0.707106781186547524)
_MIN_NORM_POS = np.array(0x00800000, dtype=np.int32).view(_F32)
_MANT_MASK = np.int32(0x7F800000)
_HALF_BITS = np.array(0.5, dtype=_F32).view(np.int32)
_FOPI = _F32(1.27323954473516)  # 4 / pi
_MINUS_DP = (_F32(-0.78515625), _F32(-2.4187564849853515625e-4), _F32(-3.77489497744594108e-8))
_SINCOF = (_F32(-1.9515295891e-4), _F32(8.3321608736e-3), _F32(-1.6666654611e-1))
_COSCOF = (_F32(2.443315711809948e-5), _F32(-1.388731625493765e-3), _F32(4.166664568298827e-2))
_TWO_PI = _F32(2.0 * math.pi)


def fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """float32 ``a * b + c`` rounded once: the product is exact in float64, the sum is rounded to
    odd there (the exact sum's error from Knuth's two-sum), so the cast to float32 rounds once."""
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    back = s - p
    err = (p - (s - back)) + (c - back)
    even = (err != 0) & ((s.view(np.int64) & 1) == 0)
    if even.any():
        s = np.where(even, np.nextafter(s, np.copysign(np.inf, err)), s)
    return s.astype(_F32)


def log256_ps(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's ``log256_ps`` of positive float32 values."""
    x = np.maximum(x, _MIN_NORM_POS)
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F32) + _F32(1)
    x = ((bits & ~_MANT_MASK) | _HALF_BITS).view(_F32)  # the mantissa, in [0.5, 1)
    small = x < _SQRTHF
    e = e - small.astype(_F32)
    x = (x - _F32(1)) + np.where(small, x, _F32(0))
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma32(y, x, p)
    y = fma32(y * x, z, e * _LOG_Q1)
    y = fma32(z, _F32(-0.5), y)
    return fma32(e, _LOG_Q2, x + y)


def sincos256_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's ``sincos256_ps``: (sin, cos) of float32 values (exact reduction below 8192)."""
    sign_sin = np.signbit(x)
    x = np.abs(x)
    j = (x * _FOPI).astype(np.int32)  # truncation, as _mm256_cvttps_epi32
    j = (j + 1) & ~1
    y = j.astype(_F32)
    for dp in _MINUS_DP:
        x = fma32(y, dp, x)
    sign_sin ^= (j & 4) != 0
    sign_cos = (~(j - 2) & 4) != 0
    z = x * x
    cos_poly = fma32(fma32(np.full_like(z, _COSCOF[0]), z, _COSCOF[1]), z, _COSCOF[2]) * z
    cos_poly = fma32(cos_poly, z, -(z * _F32(0.5))) + _F32(1)
    sin_poly = fma32(fma32(np.full_like(z, _SINCOF[0]), z, _SINCOF[1]), z, _SINCOF[2]) * z
    sin_poly = fma32(sin_poly, x, x)
    first = (j & 2) == 0  # the sine polynomial gives the sine (else the cosine's gives it)
    sin = np.where(first, sin_poly, cos_poly)
    cos = np.where(first, cos_poly, sin_poly)
    return np.where(sign_sin, -sin, sin), np.where(sign_cos, -cos, cos)


def normal_fill_16(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """torch's ``normal_fill_16_AVX2`` on rows of 16 float32 uniforms: Box-Muller over the pairs
    (j, j + 8), ``fma(radius * cos, std, mean)`` and ``fma(radius * sin, std, mean)``."""
    radius = np.sqrt(_F32(-2) * log256_ps(_F32(1) - blocks[:, :8]))
    sin, cos = sincos256_ps(_TWO_PI * blocks[:, 8:])
    std32, mean32 = _F32(std), _F32(mean)
    return np.concatenate([fma32(radius * cos, std32, mean32), fma32(radius * sin, std32, mean32)], axis=1)
