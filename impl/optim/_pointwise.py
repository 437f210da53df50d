"""The in-place pointwise updates torch's optimisers are made of, rounded as torch's CPU kernels
round them.

torch computes ``add(other, alpha=)``, ``lerp`` and ``addcmul`` with a fused multiply-add (one
rounding), ``addcdiv`` as ``self + (value * t1) / t2``. Plain numpy rounds the product and the sum
separately, which moves a float32 parameter by an ulp now and then; over a training loop (and
through Adam's normalisation) those ulps become visible differences. Here the fused operations are
computed in a wider float and rounded once: float64 for float32 and narrower (exact products, so
the result is torch's but for a rare double rounding), the platform's long double for float64.

Each update writes its parameter with one ``copy_``, so the version counter moves as torch's
in-place op moves it.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from impl._tensor import Tensor
from impl._xp import namespace_of


def _wide(xp: Any, dtype: Any) -> Any:
    """The float type a fused multiply-add of ``dtype`` operands is computed in."""
    if np.dtype(dtype).itemsize >= 8:
        return np.longdouble if xp is np else np.float64
    return np.float64


# Elements per block of a blocked multiply-add: the wide scratch block (256 KiB of float64) and
# its operands' blocks stay in cache, and no parameter-sized wide temporary is ever allocated
# (fresh multi-megabyte arrays cost more in page faults than the arithmetic itself).
_BLOCK = 32768
_scratch = threading.local()


def _scratch_block(wide: Any) -> np.ndarray:
    """This thread's reusable ``_BLOCK``-element scratch array of the float type ``wide``."""
    blocks = _scratch.__dict__.setdefault("blocks", {})
    block = blocks.get(wide)
    if block is None:
        block = blocks[wide] = np.empty(_BLOCK, wide)
    return block


def _fma(x: Any, y: Any, z: Any, dtype: Any) -> Any:
    """``x * y + z`` rounded once to ``dtype`` (``x``, ``y``, ``z`` arrays or Python floats).

    The product and the sum are computed in the wide float, and the sum is rounded to ``dtype``
    as it is stored. Same-shaped C-contiguous numpy operands go block by block through a reused
    scratch block (the values are the same; only the memory traffic differs).
    """
    xp = namespace_of(next((a for a in (x, y, z) if not isinstance(a, (int, float))), z))
    wide = _wide(xp, dtype)
    x, y, z = (wide(np.dtype(dtype).type(a)) if isinstance(a, (int, float)) else a for a in (x, y, z))
    arrays = [a for a in (x, y, z) if not isinstance(a, np.generic)]
    shape = arrays[0].shape
    if xp is not np or any(a.shape != shape or not a.flags.c_contiguous for a in arrays):
        return xp.add(xp.multiply(x, y, dtype=wide), z, dtype=wide).astype(dtype)
    out = np.empty(shape, dtype)
    flat = lambda a: a if isinstance(a, np.generic) else a.reshape(-1)  # noqa: E731
    x, y, z, out_flat = flat(x), flat(y), flat(z), out.reshape(-1)
    part = lambda a, s: a if isinstance(a, np.generic) else a[s]  # noqa: E731
    scratch = _scratch_block(wide)
    for start in range(0, out.size, _BLOCK):
        s = slice(start, start + _BLOCK)
        product = scratch[: out_flat[s].size]
        np.multiply(part(x, s), part(y, s), out=product, dtype=wide)
        np.add(product, part(z, s), out=out_flat[s], dtype=wide, casting="same_kind")
    return out


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
