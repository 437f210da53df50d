"""The in-place pointwise updates torch's optimisers are made of, rounded as torch's CPU kernels
round them.

torch computes ``add(other, alpha=)``, ``lerp`` and ``addcmul`` with a fused multiply-add (one
rounding), ``addcdiv`` as ``self + (value * t1) / t2``. Plain numpy rounds the product and the sum
separately, which moves a float32 parameter by an ulp now and then; over a training loop (and
through Adam's normalisation) those ulps become visible differences. The kernels are the ops'
own (impl/_ops/pointwise_ternary.py: torch.lerp, addcmul, addcdiv), fused with
``impl._ops.cpu_kernels.fma`` (rounded once, exactly; half precision in float32, as torch).

Each update writes its parameter with one ``copy_``, so the version counter moves as torch's
in-place op moves it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _grad_mode as grad_mode
from impl._ops.cpu_kernels import fma
from impl._ops.pointwise_ternary import ADDCDIV, ADDCMUL, LERP_SCALAR, fused
from impl._tensor import Tensor
from impl._xp import namespace_of

_IN_PLACE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _write(target: Tensor, array: Any) -> Tensor:
    """``target.copy_(array)``; ``array`` may be ``target``'s own array, already written in place
    (``add_scaled_``): then only its version moves, as the copy_ would move it."""
    if array is target._data:
        target._vc.bump()
        return target
    target.copy_(Tensor._from_array(array))
    return target


def add_scaled(a: Tensor, b: Tensor, alpha: float) -> Tensor:
    """``a.add(b, alpha=alpha)`` as a new tensor (fused: ``alpha * b + a``, one rounding)."""
    return Tensor._from_array(fused(a._data.dtype.type(alpha), b._data, a._data))


def add_scaled_(a: Tensor, b: Tensor, alpha: float) -> Tensor:
    """``a.add_(b, alpha=alpha)`` in place, rounded once. Not recorded, on numpy arrays of one
    float32/float64 layout that share no memory (an SGD step's), the fused multiply-add writes
    ``a``'s array itself (``_write`` then moves its version, as the ``copy_`` would): no fresh
    array the size of the parameter, no copy (an MLP step's update took 2.4 ms, torch's 0.4)."""
    x, y = a._data, b._data
    if (
        type(x) is np.ndarray and type(y) is np.ndarray and x.dtype in _IN_PLACE_DTYPES and y.dtype == x.dtype
        and x.shape == y.shape and x.flags.c_contiguous and x.flags.writeable and not a._inference
        and not grad_mode.is_recording() and not np.may_share_memory(x, y)
    ):
        return _write(a, fma(x, np.asarray(x.dtype.type(alpha), x.dtype), y, out=x))  # (fused's order)
    return _write(a, fused(a._data.dtype.type(alpha), b._data, a._data))


def lerp_(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """``start.lerp_(end, weight)``: torch's lerp kernel (impl/_ops/pointwise_ternary.py)."""
    return _write(
        start, LERP_SCALAR.forward(namespace_of(start._data), start._data, end._data, weight=weight)
    )


def addcmul_(a: Tensor, t1: Tensor, t2: Tensor, value: float) -> Tensor:
    """``a.addcmul_(t1, t2, value=value)``: ``(value * t1) * t2 + a``, the last step fused."""
    return _write(a, ADDCMUL.forward(namespace_of(a._data), a._data, t1._data, t2._data, value=value))


def addcdiv_(a: Tensor, t1: Tensor, t2: Tensor, value: float) -> Tensor:
    """``a.addcdiv_(t1, t2, value=value)``: ``a + (value * t1) / t2``."""
    return _write(a, ADDCDIV.forward(namespace_of(a._data), a._data, t1._data, t2._data, value=value))


def addcmul(a: Tensor, t1: Tensor, t2: Tensor, value: float) -> Tensor:
    """``a.addcmul(t1, t2, value=value)`` as a new tensor, rounded as ``addcmul_``."""
    xp = namespace_of(a._data)
    return Tensor._from_array(ADDCMUL.forward(xp, a._data, t1._data, t2._data, value=value))
