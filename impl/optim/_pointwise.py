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

from impl._ops.pointwise_ternary import ADDCDIV, ADDCMUL, LERP_SCALAR, fused
from impl._tensor import Tensor
from impl._xp import namespace_of


def _write(target: Tensor, array: Any) -> Tensor:
    target.copy_(Tensor._from_array(array))
    return target


def add_scaled(a: Tensor, b: Tensor, alpha: float) -> Tensor:
    """``a.add(b, alpha=alpha)`` as a new tensor (fused: ``alpha * b + a``, one rounding)."""
    return Tensor._from_array(fused(a._data.dtype.type(alpha), b._data, a._data))


def add_scaled_(a: Tensor, b: Tensor, alpha: float) -> Tensor:
    """``a.add_(b, alpha=alpha)`` in place, rounded once."""
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
