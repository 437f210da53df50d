"""Arithmetic rounded as torch's CPU kernels round it, for the few ops whose results show the
last bits: a fused multiply-add (``fma``, one rounding; torch's ``add(alpha=)``, ``lerp`` and
``addcmul`` use it, so impl's add and optimisers do) and the sums of softmax's backward.

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
import threading
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


def _odd(s: Any, err: Any) -> Any:
    """``s + err`` (``s`` its rounding to nearest, ``err`` the exact rest) rounded to odd: ``s``
    when exact, else whichever neighbour of the exact sum has an odd last bit. A sum rounded to
    odd and then to nearest in a precision two or more bits narrower is rounded once."""
    bits = s.view(np.uint64 if s.dtype == np.float64 else np.uint32)
    move = (err != 0) & ((bits & 1) == 0)
    return np.where(move, np.nextafter(s, np.copysign(np.inf, err)), s)


def _fma64(acc: Any, g: Any, o: Any) -> Any:
    """float64 ``acc + g * o`` rounded once: the product and the sum as exact pairs (TwoProduct,
    TwoSum), their two errors added rounded to odd, that added to the rounded sum (Boldo and
    Melquiond's emulated FMA; exact barring underflow and overflow)."""
    p, p_err = _two_product(g, o)
    s, s_err = _two_sum(acc, p)
    return s + _odd(*_two_sum(s_err, p_err))


@functools.cache
def _midpoint_bits(dtype: Any) -> tuple[Any, Any, float]:
    """For float64 sums rounded to ``dtype``: the mask of the float64 mantissa bits ``dtype`` has
    not, their pattern at a midpoint of ``dtype``, and ``dtype``'s smallest normal number."""
    drop = np.finfo(np.float64).nmant - np.finfo(dtype).nmant
    return np.uint64((1 << drop) - 1), np.uint64(1 << (drop - 1)), float(np.finfo(dtype).tiny)


def _fma_narrow(acc: Any, g: Any, o: Any, out: Any, scratch: tuple) -> None:
    """float16/float32 ``acc + g * o`` rounded once into ``out``. The product is exact in float64,
    so the float64 sum is the exact one rounded once; rounding that to ``out``'s dtype rounds the
    exact sum, unless it landed exactly on a midpoint of the dtype (or in its subnormal range):
    those few are redone, rounded to odd. ``scratch``: float64, uint64 and two bool arrays of
    ``out``'s size."""
    wide, low, midpoint, tiny = scratch
    np.multiply(g, o, out=wide, dtype=np.float64)
    wide += acc
    out[...] = wide
    mask, half, smallest = _midpoint_bits(out.dtype)
    np.bitwise_and(wide.view(np.uint64), mask, out=low)
    np.equal(low, half, out=midpoint)
    np.less(np.abs(wide, out=wide), smallest, out=tiny)
    redo = np.flatnonzero(np.logical_or(midpoint, tiny, out=midpoint))
    if redo.size:
        pick = lambda a: a[redo] if np.ndim(a) else a  # noqa: E731
        a, p = pick(acc).astype(np.float64), pick(g).astype(np.float64) * pick(o)
        out[redo] = _odd(*_two_sum(a, p))


# Elements per block: the blocks of the operands and the scratch stay in cache, and no
# parameter-sized temporary is ever allocated (fresh multi-megabyte arrays cost more in page
# faults than the arithmetic itself).
_BLOCK = 32768
_scratch = threading.local()


def _scratch_blocks() -> tuple:
    """This thread's reusable scratch blocks for ``_fma_narrow``."""
    blocks = getattr(_scratch, "blocks", None)
    if blocks is None:
        kinds = (np.float64, np.uint64, np.bool_, np.bool_)
        blocks = _scratch.blocks = tuple(np.empty(_BLOCK, kind) for kind in kinds)
    return blocks


def fma(acc: Any, g: Any, o: Any) -> Any:
    """``acc + g * o`` rounded once (a fused multiply-add), as a new array of ``acc``'s dtype
    (float16, float32 or float64): torch's kernels fuse ``add(alpha=)``, ``lerp``, ``addcmul``
    and the dot products of softmax's backward. The operands are arrays of one shape or numpy
    scalars of that dtype; they go through in blocks (the values do not depend on it)."""
    dtype = acc.dtype
    shape = np.broadcast_shapes(*(np.shape(a) for a in (acc, g, o)))
    flat = [np.ascontiguousarray(np.broadcast_to(x, shape)).ravel() if np.ndim(x) else x for x in (acc, g, o)]
    out = np.empty(shape, dtype)
    out_flat = out.reshape(-1)
    blocks = _scratch_blocks()
    for start in range(0, out_flat.size, _BLOCK):
        part = slice(start, start + _BLOCK)
        a, b, c = (x[part] if np.ndim(x) else x for x in flat)
        if dtype == np.float64:
            out_flat[part] = _fma64(a, b, c)
        else:
            n = out_flat[part].size
            _fma_narrow(a, b, c, out_flat[part], tuple(block[:n] for block in blocks))
    return out


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


def softmax(a: Any, dim: int) -> Any:
    """torch's CPU float32 softmax along ``dim``: ``exp(x - max)`` (correctly rounded here, as the
    scalar loops' std::exp; the vector code's Sleef exp may be an ulp off), summed as its kernels
    sum (the last dimension in vector lanes, then across them; another dimension one slice after
    the other from 0), then the last dimension multiplied by the sum's reciprocal, another one
    divided by the sum."""
    e = np.exp((a - a.max(axis=dim, keepdims=True)).astype(np.float64)).astype(np.float32)
    if dim == a.ndim - 1:
        capability = cpu_capability()
        lanes = vector_bytes() // 4 if capability != "default" else 8
        total = _lane_sum(e, lanes, halving=capability != "default")[..., None]
        return e * (np.float32(1) / total)
    total = np.zeros_like(np.take(e, 0, axis=dim))
    for i in range(e.shape[dim]):
        total += np.take(e, i, axis=dim)
    return e / np.expand_dims(total, dim)


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


# torch's at::internal::GRAIN_SIZE: an elementwise loop over fewer elements runs in one chunk
GRAIN_SIZE = 32768


def vector_elements(shape: tuple, arrays: list, width: int) -> Any:
    """Where torch's CPU elementwise loop (``vectorized_loop``) over ``arrays`` (the operands as
    the kernel reads them, their result of ``shape``) computes the result in vectors of ``width``
    bytes: a bool array of ``shape``, or None where it computes none (the common case: small
    tensors). Ops whose vector and scalar code differ (``maximum`` keeps the other operand on a
    tie of zeros) read it.

    TensorIterator orders the dimensions by stride (``views.iteration_order``) and coalesces
    them from the innermost; along the inner row, blocks of two vectors go through the vector
    code and the row's rest through the scalar loop. A row is vectorized only when every operand
    steps one element along it, or one input is broadcast along it and the others step one.
    Exact for a loop run in one chunk (fewer than ``GRAIN_SIZE`` elements): above it torch
    splits the loop between threads, so the chunks' tails depend on the thread count."""
    from impl._ops.views import _broadcast_strides, elementwise_strides, iteration_order

    n = int(np.prod(shape))
    block = 2 * (width // arrays[0].dtype.itemsize)
    if n < block:
        return None
    operands = [(a.shape, tuple(s // a.itemsize for s in a.strides)) for a in arrays]
    strides = [elementwise_strides(shape, operands)] + [_broadcast_strides(shape, op) for op in operands]
    perm = [d for d in iteration_order(shape, operands) if shape[d] != 1]  # size 1 coalesces away
    if not perm:
        return None
    inner, row = perm[0], shape[perm[0]]
    for d in perm[1:]:  # TensorIterator.coalesce_dimensions, as far as the inner row goes
        if any(st[d] != st[inner] * row for st in strides):
            break
        row *= shape[d]
    steps = [st[inner] for st in strides]
    out_and_inputs_contiguous = all(s == 1 for s in steps)
    one_broadcast = steps[0] == 1 and steps[1:].count(0) == 1 and steps[1:].count(1) == len(steps) - 2
    whole = row - row % block
    if not whole or not (out_and_inputs_contiguous or one_broadcast):
        return None
    order = list(reversed(iteration_order(shape, operands)))  # outermost first, as memory runs
    in_row = (np.arange(n) % row < whole).reshape([shape[d] for d in order])
    return in_row.transpose(np.argsort(order))
