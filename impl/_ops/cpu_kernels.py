"""Arithmetic rounded as torch's CPU kernels round it, for the few ops whose results show the
last bits: a fused multiply-add (``fma``, one rounding; torch's ``add(alpha=)`` uses it) and the
sums of softmax's backward.

Softmax's backward ``out * (grad - sum(grad * out))`` cancels: with ``grad = [81, 80]`` the
difference keeps only a few bits of the float32 dot product, so numpy's pairwise sum and
torch's kernel give gradients that differ in the fifth digit. Torch's kernel
(aten/src/ATen/native/cpu/SoftMaxKernel.cpp) accumulates the dot product

- along the last dimension (no inner elements): in ``lanes`` vector lanes, element ``i`` going to
  lane ``i % lanes`` (``lane + grad * out``, product rounded first), then the lanes are summed by
  halving; rows shorter than one vector are summed left to right;
- along another dimension: one sequential fused multiply-add chain per inner element.

The vector width and the fused multiply-add are those of the CPU capability torch dispatches to
on this machine (AVX512: 64-byte vectors, AVX2: 32 bytes, both with FMA; the baseline build: 32
bytes without FMA), chosen as torch chooses it (``ATEN_CPU_CAPABILITY`` overrides). Only
float32 (and float16, which torch's kernel accumulates in float32) needs this: float64
differences stay far inside float64 tolerances, and other devices use the plain formula.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np


@functools.cache
def cpu_capability() -> str:
    """The kernel set torch dispatches to on this machine: "avx512", "avx2" or "default"."""
    chosen = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if chosen in ("default", "avx2", "avx512"):
        return chosen
    features = np._core._multiarray_umath.__cpu_features__
    if all(features.get(f) for f in ("AVX512VL", "AVX512BW", "AVX512DQ", "FMA3")):
        return "avx512"
    if features.get("AVX2") and features.get("FMA3"):
        return "avx2"
    return "default"


def vector_bytes() -> int:
    """Width of the vectors torch's kernels use here: 64 bytes on AVX512, else 32 (AVX2, and the
    baseline build's emulated vectors)."""
    return 64 if cpu_capability() == "avx512" else 32


def _lane_sum(products: Any, lanes: int, halving: bool) -> Any:
    """Sum over the last axis in ``lanes`` vector lanes, then across lanes by halving (the AVX
    shuffles) or left to right (the baseline build)."""
    n = products.shape[-1]
    if n < lanes:
        acc = products[..., 0]
        for i in range(1, n):
            acc = acc + products[..., i]
        return acc
    acc = products[..., :lanes].copy()
    whole = n - n % lanes
    for start in range(lanes, whole, lanes):
        acc += products[..., start : start + lanes]
    acc[..., : n - whole] += products[..., whole:]
    if not halving:
        return _lane_sum(acc, lanes + 1, False)
    while acc.shape[-1] > 1:
        half = acc.shape[-1] // 2
        acc = acc[..., :half] + acc[..., half:]
    return acc[..., 0]


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``s = a + b`` rounded and its exact error ``a + b - s`` (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a: Any, b: Any) -> tuple[Any, Any]:
    """``p = a * b`` rounded (float64) and its exact error (Dekker's product, Veltkamp's split)."""
    def split(x: Any) -> tuple[Any, Any]:
        c = x * 134217729.0  # 2**27 + 1
        hi = c - (c - x)
        return hi, x - hi

    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma(acc: Any, g: Any, o: Any) -> Any:
    """``acc + g * o`` rounded once (a fused multiply-add), in the arrays' dtype (float32 or float64).

    float32: the product is exact in float64 and the float64 sum is rounded to odd (TwoSum gives
    its error), which then rounds to float32 as one rounding would. float64: TwoProduct and
    TwoSum give the exact sum as three float64 terms, added smallest first."""
    if acc.dtype == np.float64:
        p, p_err = _two_product(g, o)
        s, s_err = _two_sum(acc, p)
        return s + (s_err + p_err)
    s, err = _two_sum(acc.astype(np.float64), g.astype(np.float64) * o.astype(np.float64))
    even = (s.view(np.uint64) & 1) == 0
    inexact = (err != 0) & even
    s[inexact] = np.nextafter(s[inexact], np.where(err[inexact] > 0, np.inf, -np.inf))
    return s.astype(np.float32)


def _chain(grad: Any, out: Any, fused: bool) -> Any:
    """``acc += grad[i] * out[i]`` along axis 0, fused into one rounding per step or not."""
    acc = np.zeros(grad.shape[1:], grad.dtype)
    for g, o in zip(grad, out, strict=True):
        acc = fma(acc, g, o) if fused else acc + g * o
    return acc


def _dot(grad: Any, out: Any, dim: int, lanes: int) -> Any:
    """``sum(grad * out, dim, keepdim=True)`` in torch's CPU kernel order."""
    capability = cpu_capability()
    if dim == out.ndim - 1:  # torch's last-dimension kernel
        dot = _lane_sum(np.moveaxis(grad * out, dim, -1), lanes, halving=capability != "default")
    else:
        dot = _chain(np.moveaxis(grad, dim, 0), np.moveaxis(out, dim, 0), fused=capability != "default")
    return np.expand_dims(dot, dim)


def softmax_backward(xp: Any, grad: Any, out: Any, dim: int) -> Any:
    """``out * (grad - sum(grad * out, dim))``: the gradient of softmax given its output."""
    floating = out.dtype in (np.float16, np.float32, np.float64)
    if xp is not np or not floating or out.ndim == 0 or out.size == 0:
        return out * (grad - xp.sum(grad * out, axis=dim, keepdims=True))
    capability = cpu_capability()
    lanes = vector_bytes() // out.dtype.itemsize
    if capability == "default":  # the baseline build converts float16 to 8-lane float32 vectors
        lanes = 32 // max(out.dtype.itemsize, 4)
    wide = np.float64 if out.dtype == np.float64 else np.float32  # float16 accumulates in float32
    g, o = grad.astype(wide, copy=False), out.astype(wide, copy=False)
    return (o * (g - _dot(g, o, dim, lanes))).astype(out.dtype, copy=False)
