"""The in-place pointwise updates torch's optimisers are made of, rounded as torch's CPU kernels
round them.

torch computes ``add(other, alpha=)``, ``lerp`` and ``addcmul`` with a fused multiply-add (one
rounding), ``addcdiv`` as ``self + (value * t1) / t2``. Plain numpy rounds the product and the sum
separately, which moves a float32 parameter by an ulp now and then; over a training loop (and
through Adam's normalisation) those ulps become visible differences. The fused operations are
``impl._ops.cpu_kernels.fma``, the one the ops use too (rounded once, exactly; float16 as a
correctly rounded fused operation, where torch computes float16 updates in float32).

Each update writes its parameter with one ``copy_``, so the version counter moves as torch's
in-place op moves it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl._ops.cpu_kernels import fma
from impl._tensor import Tensor
from impl._xp import namespace_of


def _fma(x: Any, y: Any, z: Any, dtype: Any) -> Any:
    """``x * y + z`` rounded once to ``dtype`` (``x`` may be a Python float: torch takes its
    scalar in the tensor's dtype first): cpu_kernels.fma on the CPU; on a GPU the product and the
    sum in float64, rounded to ``dtype`` as they are stored."""
    if isinstance(x, (int, float)):
        x = np.dtype(dtype).type(x)
    xp = namespace_of(z)
    if xp is not np:
        return xp.add(xp.multiply(x, y, dtype=xp.float64), z).astype(dtype)
    return fma(z, x, y)


def _write(target: Tensor, array: Any) -> Tensor:
    target.copy_(Tensor._from_array(array))
    return target


def add_scaled(a: Tensor, b: Tensor, alpha: float) -> Tensor:
    """``a.add(b, alpha=alpha)`` as a new tensor (fused: ``alpha * b + a``, one rounding)."""
    return Tensor._from_array(_fma(alpha, b._data, a._data, a._data.dtype))


def add_scaled_(a: Tensor, b: Tensor, alpha: float) -> Tensor:
    """``a.add_(b, alpha=alpha)`` in place, rounded once."""
    return _write(a, _fma(alpha, b._data, a._data, a._data.dtype))


def lerp_(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """``start.lerp_(end, weight)``: ``start + weight * (end - start)`` for ``|weight| < 0.5``,
    ``end + (weight - 1) * (end - start)`` otherwise, each a single fused rounding."""
    s, e = start._data, end._data
    dtype = s.dtype
    w = np.dtype(dtype).type(weight)
    diff = e - s
    if abs(float(w)) < 0.5:
        return _write(start, _fma(float(w), diff, s, dtype))
    return _write(start, _fma(float(w - np.dtype(dtype).type(1)), diff, e, dtype))


def addcmul_(a: Tensor, t1: Tensor, t2: Tensor, value: float) -> Tensor:
    """``a.addcmul_(t1, t2, value=value)``: ``(value * t1) * t2 + a``, the last step fused."""
    dtype = a._data.dtype
    scaled = np.dtype(dtype).type(value) * t1._data
    return _write(a, _fma(scaled, t2._data, a._data, dtype))


def addcdiv_(a: Tensor, t1: Tensor, t2: Tensor, value: float) -> Tensor:
    """``a.addcdiv_(t1, t2, value=value)``: ``a + (value * t1) / t2``."""
    dtype = a._data.dtype
    return _write(a, a._data + (np.dtype(dtype).type(value) * t1._data) / t2._data)
