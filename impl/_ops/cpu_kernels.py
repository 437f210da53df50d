"""Arithmetic rounded as torch's CPU kernels round it, for the few ops whose results show the
last bits: a fused multiply-add (``fma``, one rounding; torch's ``add(alpha=)``, ``lerp`` and
``addcmul`` use it, so impl's add and optimisers do), the float32 exps of (log_)softmax and the
sums of softmax's forward and backward.

Softmax's backward ``out * (grad - sum(grad * out))`` cancels: with ``grad = [81, 80]`` the
difference keeps only a few bits of the float32 dot product, so numpy's pairwise sum and
torch's kernel give gradients that differ in the fifth digit; with a uniform gradient torch gets
exactly 0 only because its forward sums to 1 with its own exp. Torch's kernels
(aten/src/ATen/native/cpu/SoftMaxKernel.cpp) take exp from Sleef (``sleef_expf``) in their vector
code and from glibc (``glibc_expf``) in their scalar loops, and accumulate the dot product

- along the last dimension (no inner elements): in ``lanes`` vector lanes, element ``i`` going to
  lane ``i % lanes`` (``lane + grad * out``, product rounded first), then the lanes are summed by
  halving; rows shorter than one vector are summed left to right;
- along another dimension: one sequential fused multiply-add chain per inner element.

The vector width and the fused multiply-add are those of the CPU capability torch dispatches to
on this machine (AVX512: 64-byte vectors, AVX2: 32 bytes, both with FMA; the baseline build: 32
bytes without FMA), chosen as torch chooses it (``ATEN_CPU_CAPABILITY`` overrides). Only
float32 (and float16, which torch's kernel accumulates in float32) needs this: float64
differences stay far inside float64 tolerances, and other devices use the plain formula. The
functions here compute with numpy's floating-point warnings as the caller set them (ops run
them quietly, as torch computes inf and NaN silently).
"""

from __future__ import annotations

import decimal
import functools
from typing import Any

import numpy as np

from impl import _layout
from impl._cpu import _BLOCK, _fma32, cpu_capability, fma, intraop_threads


def vector_bytes() -> int:
    """Width of the vectors torch's kernels use here: 64 bytes on AVX512, else 32 (AVX2, and the
    baseline build's emulated vectors)."""
    return 64 if cpu_capability() == "avx512" else 32


def _lane_sum(products: Any, lanes: int, halving: bool, fused_tail: tuple | None = None) -> Any:
    """Sum over the last axis in ``lanes`` vector lanes, then across lanes by halving (the AVX
    shuffles) or left to right (the baseline build). ``fused_tail``: the factors ``(g, o)`` of
    ``products`` when the partial last vector is accumulated with a fused multiply-add."""
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
    if fused_tail is None:
        acc[..., : n - whole] += products[..., whole:]
    elif n > whole:
        g, o = fused_tail
        acc[..., : n - whole] = fma(acc[..., : n - whole], g[..., whole:], o[..., whole:])
    if not halving:
        return _lane_sum(acc, lanes + 1, False)
    while acc.shape[-1] > 1:
        half = acc.shape[-1] // 2
        acc = acc[..., :half] + acc[..., half:]
    return acc[..., 0]


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
        # its loop over rows, called directly when there is one row (or one thread) and from
        # OpenMP's threads otherwise, was compiled twice: the direct copy fuses the partial last
        # vector's products into the lanes (a row alone gives other bits than beside another)
        direct = capability != "default" and (out.size == out.shape[-1] or intraop_threads() == 1)
        fused_tail = (grad, out) if direct else None
        dot = _lane_sum(grad * out, lanes, halving=capability != "default", fused_tail=fused_tail)
    else:
        dot = _chain(np.moveaxis(grad, dim, 0), np.moveaxis(out, dim, 0), fused=capability != "default")
    return np.expand_dims(dot, dim)


# Sleef's expf_u10 (xexpf in src/libm/sleefsimdsp.c), as torch's AVX2 and AVX512 builds call it
# for Vectorized<float>::exp: x = q ln2 + s with q = rint(x / ln2) and ln2 split in two float32
# parts, exp(s) by a degree-7 polynomial (Horner in fused multiply-adds), then scaled by 2^q in
# two multiplications (so that subnormal results round once, at the second).
_R_LN2 = np.float32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U, _L2L = -0.693145751953125, -1.428606765330187045e-06  # float32 values, negated
_EXP_POLY = tuple(
    float(np.float32(c))
    for c in (
        0.000198527617612853646278381,
        0.00139304355252534151077271,
        0.00833336077630519866943359,
        0.0416664853692054748535156,
        0.166666671633720397949219,
        0.5,
    )
)


def _blockwise(kernel: Any, x: Any) -> Any:
    """``kernel`` (elementwise) over ``x`` in blocks of ``_BLOCK`` elements, so that its float64
    temporaries stay in cache (on a large tensor that halves the time)."""
    if x.size <= _BLOCK:
        return kernel(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    for start in range(0, flat.size, _BLOCK):
        out[start : start + _BLOCK] = kernel(flat[start : start + _BLOCK])
    return out.reshape(x.shape)


def sleef_expf(x: Any) -> Any:
    """float32 ``exp`` as Sleef's ``expf_u10`` computes it (torch's vectorized float32 exp on AVX2
    and AVX512; it differs from the correctly rounded exp by an ulp for ~6% of inputs).

    Each fused multiply-add is done in float64 and rounded to float32 once: the range reduction's
    products are exact there and so are their sums (the operands' bits span fewer than 53), and
    for the polynomial's steps the float64 sum rounded to float32 was checked to equal the fused
    one for every float32 input, as the whole function was against Sleef_expf16_u10 and
    Sleef_expf8_u10 in torch's library. Below -104 Sleef returns +0, above 100 infinity: the
    clamped input gives the same (exp(-104) rounds to 0, exp(100) overflows); NaN stays NaN."""
    return _blockwise(_sleef_expf_block, x)


def _sleef_expf_block(x: Any) -> Any:
    d = np.fmin(np.fmax(x, np.float32(-104)), np.float32(100))  # NaN becomes -104, fixed last
    q = np.rint(d * _R_LN2)
    q64 = q.astype(np.float64)
    s = (q64 * _L2U + d).astype(np.float32)
    s = (q64 * _L2L + s).astype(np.float32).astype(np.float64)
    u = _EXP_POLY[0] * s + _EXP_POLY[1]
    for c in _EXP_POLY[2:]:
        u = u.astype(np.float32) * s + c
    u = (u.astype(np.float32) * (s * s).astype(np.float32).astype(np.float64) + s).astype(np.float32)
    u += np.float32(1)
    # Sleef multiplies by 2^(q >> 1), then by 2^(q - (q >> 1)): the first is exact, so the
    # product is u * 2^q rounded once, as ldexp rounds it (subnormal results included; above
    # ~88.7 infinity, as in Sleef)
    u = np.ldexp(u, q.astype(np.int32))
    np.copyto(u, x, where=np.isnan(x))
    return u


@functools.cache
def _exp2_table() -> Any:
    """glibc expf's table: the bits of 2^(i/32) (correctly rounded to float64) less ``i << 47``,
    so that adding ``k << 47`` gives 2^(k/32) for any integer k."""
    decimal.getcontext().prec = 40
    powers = np.array([float(decimal.Decimal(2) ** (decimal.Decimal(i) / 32)) for i in range(32)])
    return powers.view(np.uint64) - (np.arange(32, dtype=np.uint64) << np.uint64(47))


# glibc expf's (ARM optimized-routines) polynomial for 2^(r/32), r in [-1/2, 1/2], and 32/ln2
_EXP2_POLY = tuple(
    float.fromhex(c) / 32**n
    for c, n in (("0x1.c6af84b912394p-5", 3), ("0x1.ebfce50fac4f3p-3", 2), ("0x1.62e42ff0c52d6p-1", 1))
)
_INV_LN2_32 = float.fromhex("0x1.71547652b82fep+0") * 32
_INV_LN2_32_HI = float(np.float32(_INV_LN2_32))  # 24 bits: times a float32, exact in float64
_INV_LN2_32_LO = _INV_LN2_32 - _INV_LN2_32_HI
_SHIFT = float.fromhex("0x1.8p+52")  # adding it rounds a float64 below 2^51 to an integer


def glibc_expf(x: Any) -> Any:
    """float32 ``std::exp`` as glibc's expf computes it (torch's scalar loops call it; it is not
    always the correctly rounded exp: numpy's float64 exp rounded differs for ~4e-5 of float32
    inputs): in float64, x * 32/ln2 = k + r with k an integer, 2^(k/32) from the table, 2^(r/32)
    by a cubic, their product rounded to float32 once. Above ~88.72 infinity, below ~-103.97
    zero (-inf included), NaN stays NaN. Checked equal to this machine's libm expf for every
    float32 input."""
    return _blockwise(_glibc_expf_block, x)


def _glibc_expf_block(x: Any) -> Any:
    wide = np.clip(x.astype(np.float64), -104.0, 89.0)  # beyond: overflow/underflow below
    shifted = _INV_LN2_32 * wide + _SHIFT
    k = shifted.view(np.uint64)
    # r = x * 32/ln2 - k rounded once (glibc's FMA build fuses it): the constant's high part
    # times the float32 is exact and so is its difference with k; its low part's product is
    # exact too, added with the one rounding
    r = (_INV_LN2_32_HI * wide - (shifted - _SHIFT)) + _INV_LN2_32_LO * wide
    scale = (_exp2_table()[k & np.uint64(31)] + (k << np.uint64(47))).view(np.float64)
    c0, c1, c2 = _EXP2_POLY
    y = ((c0 * r + c1) * (r * r) + (c2 * r + 1)) * scale
    out = y.astype(np.float32)
    out[x > np.float32(float.fromhex("0x1.62e42ep6"))] = np.inf  # log(2^128), rounded down
    out[x < np.float32(float.fromhex("-0x1.9fe368p6"))] = 0  # log(2^-150), rounded up
    np.copyto(out, x, where=np.isnan(x))
    return out


# Sleef's logf_u10 (xlogf_u1): log 2 split in two float32 parts, and its polynomial in x^2
_LN2_HI, _LN2_LO = np.float32(0.69314718246459960938), np.float32(-1.904654323148236017e-09)
_LOG_POLY = tuple(np.float32(c) for c in (0.3027294874, 0.3996108174, 0.6666694880))


def _fused32(acc: Any, g: Any, o: Any) -> Any:
    """float32 ``acc + g * o`` through float64: the product is exact there and the sum rounded
    twice (to float64, then float32). In ``sleef_logf`` that is its single rounding: either the
    float64 sum is exact, or it was checked, for every float32 input, not to land on a float32
    midpoint (``fma`` is the general, slower, exact one)."""
    return (np.multiply(g, o, dtype=np.float64) + acc).astype(np.float32)


def sleef_logf(d: Any) -> Any:
    """float32 ``log`` as Sleef's ``logf_u10`` computes it (torch's vectorized float32 log on AVX2
    and AVX512, which log_softmax applies to its sums; ~1% of its results are an ulp from the
    correctly rounded log). In float32 double-float arithmetic: d = m * 2^e with m in
    [0.75, 1.5), log d = e log 2 + 2 atanh((m - 1) / (m + 1)), the quotient x as a pair from a
    reciprocal refined by fused multiply-adds, then e log 2 + 2x + x^3 P(x^2) summed as pairs.
    Every step is as in the AVX512 build's code (the AVX2 build's only differs in how it finds
    m and e). 0 gives -inf, a negative or NaN input NaN, +inf +inf. Checked equal to
    Sleef_logf16_u10 and Sleef_logf8_u10 in torch's library for every float32 input."""
    one = np.float32(1)
    pos = np.where((d > 0) & np.isfinite(d), d, one)
    frac, _ = np.frexp(pos)  # pos = frac * 2^k, frac in [0.5, 1)
    m = np.where(frac * 2 < np.float32(1.5), frac * 2, frac).astype(np.float32)
    scaled = pos * np.float32(1 / 0.75)  # e = floor(log2(d / 0.75)), 128 where that overflows
    e = np.where(np.isinf(scaled), np.float32(128), np.frexp(scaled)[1] - 1).astype(np.float32)
    sx = e * _LN2_HI  # e log 2 as a pair (sx, sy)
    sy = _fused32(_fused32(-sx, _LN2_HI, e), e, _LN2_LO)
    nx, dx = m - one, m + one  # m - 1 and m + 1 as pairs (TwoSum)
    ny = (-one - (nx - (nx + one))) + (m - (nx + one))
    dy = (one - (dx - (dx - one))) + (m - (dx - one))
    t = one / dx  # x = (nx, ny) / (dx, dy) as a pair (xx, xy)
    xx = t * nx
    error = _fused32(-xx, t, nx)  # t * nx - xx, the product's rounding error
    residue = _fused32(_fused32(one, -dx, t), -dy, t)  # 1 - (dx + dy) * t
    xy = _fused32(_fused32(error, ny, t), residue, xx)
    x2 = xx * xx
    poly = _fused32(_LOG_POLY[2], x2, _fused32(_LOG_POLY[1], x2, _LOG_POLY[0]))
    hi = (xx + xx) + sx  # (sx, sy) + 2x, then + x^3 P(x^2)
    lo = (((sx - hi) + (xx + xx)) + sy) + (xy + xy)
    w = (x2 * xx) * poly
    top = hi + w
    r = (lo + ((hi - top) + w)) + top
    r[np.isposinf(d)] = np.inf
    r[(d < 0) | np.isnan(d)] = np.nan
    r[d == 0] = -np.inf
    return r


def vector_log(x: Any) -> Any:
    """float32 ``Vectorized<float>::log``: Sleef's logf_u10 on AVX2 and AVX512; the baseline
    build's std::log (glibc's logf) is not reproduced: the float64 log rounded stands for it."""
    return sleef_logf(x) if cpu_capability() != "default" else np.log(x.astype(np.float64)).astype(np.float32)


def vector_exp(x: Any) -> Any:
    """float32 ``Vectorized<float>::exp`` on this machine's capability: Sleef's expf_u10 on AVX2 and
    AVX512, ``std::exp`` element by element in the baseline build."""
    return sleef_expf(x) if cpu_capability() != "default" else glibc_expf(x)


def inner_vectorized(outer: int, inner: int) -> Any:
    """Which (outer, inner) positions torch's CPU softmax kernel along a dimension that is not the
    last (``_vec_softmax``) computes in vectors, a bool array of that shape. Its ``parallel_for``
    has grain size 0: the ``outer * inner`` positions are split into one chunk per thread (of
    ``ceil(n / threads)``), however few they are. In a chunk, from its first position, runs of
    ``lanes`` positions along ``inner`` go through the vector code while the run fits in the
    row and in the chunk; the rest of the row (or of the chunk) goes through the scalar code."""
    lanes = vector_bytes() // 4
    n = outer * inner
    threads = intraop_threads()
    chunk = n if n <= 1 or threads == 1 else -(-n // threads)
    idx = np.arange(n)
    begin = idx - idx % chunk
    end = np.minimum(begin + chunk, n)
    row_start = np.maximum(begin, idx - idx % inner)
    step = row_start + (idx - row_start) // lanes * lanes
    return ((step % inner + lanes <= inner) & (step + lanes <= end)).reshape(outer, inner)


def below_whole_vectors(outer: int, inner: int) -> Any:
    """Which (outer, inner) positions torch's log_softmax kernels along a dimension that is not the
    last (forward and backward) compute in vectors: they split ``inner`` into chunks of whole
    vectors and run the vector code up to each chunk's last whole vector, so the positions
    below ``inner``'s last whole vector (no threads involved)."""
    lanes = vector_bytes() // 4
    return np.broadcast_to(np.arange(inner) < inner - inner % lanes, (outer, inner))


def _dim_exp(x: Any, dim: int, vectorized: Any) -> Any:
    """float32 ``exp`` of ``x`` as torch's (log_)softmax kernels along ``dim`` compute it: the last
    dimension's kernels map whole rows through the vector exp (a short tail as a partial
    vector); the others use it at the (outer, inner) positions ``vectorized(outer, inner)``
    marks and std::exp elsewhere (``x`` holds the kernel's (outer, dim, inner) layout)."""
    if dim == x.ndim - 1 or cpu_capability() == "default":
        return vector_exp(x)
    outer, size = int(np.prod(x.shape[:dim])), x.shape[dim]
    inner = x.size // max(outer * size, 1)
    in_vectors = vectorized(outer, inner)
    if not in_vectors.any():
        return glibc_expf(x)
    flat = x.reshape(outer, size, inner)
    mask = np.broadcast_to(in_vectors[:, None, :], flat.shape)
    e = np.empty_like(flat)
    e[mask] = sleef_expf(flat[mask])
    e[~mask] = glibc_expf(flat[~mask])
    return e.reshape(x.shape)


def _kernel_sum(values: Any, dim: int) -> Any:
    """``sum(values, dim, keepdim=True)`` in float32 as torch's (log_)softmax kernels add: along the
    last dimension in vector lanes, then across them (``vec::reduce_all``); along another one
    slice after the other, from +0."""
    if dim == values.ndim - 1:
        capability = cpu_capability()
        lanes = vector_bytes() // 4 if capability != "default" else 8
        return _lane_sum(values, lanes, halving=capability != "default")[..., None]
    total = np.zeros_like(np.take(values, 0, axis=dim))
    for i in range(values.shape[dim]):
        total += np.take(values, i, axis=dim)
    return np.expand_dims(total, dim)


def softmax(a: Any, dim: int) -> Any:
    """torch's CPU float32 softmax along ``dim``: ``exp(x - max)`` where its kernels take it
    (``_dim_exp``), summed as they sum (``_kernel_sum``), then the last dimension multiplied by
    the sum's reciprocal, another one divided by the sum."""
    e = _dim_exp(a - a.max(axis=dim, keepdims=True), dim, inner_vectorized)
    total = _kernel_sum(e, dim)
    return e * (np.float32(1) / total) if dim == a.ndim - 1 else e / total


def log_softmax(a: Any, dim: int) -> Any:
    """torch's CPU float32 log_softmax along ``dim``: ``x - max - log(sum(exp(x - max)))`` in that
    order, the exp, the sum and the log as its kernels take them (the log in vectors, always)."""
    peak = a.max(axis=dim, keepdims=True)
    total = _kernel_sum(_dim_exp(a - peak, dim, below_whole_vectors), dim)
    return a - peak - vector_log(total)


def log_softmax_backward(grad: Any, out: Any, dim: int) -> Any:
    """torch's CPU float32 log_softmax backward: ``grad - exp(out) * sum(grad, dim)``, the exp and
    the sum as its kernels take them, the product and the difference fused into one rounding
    (the compiler contracts them in every path of the AVX2/AVX512 kernels)."""
    e = _dim_exp(out, dim, below_whole_vectors)
    total = np.broadcast_to(_kernel_sum(grad, dim), grad.shape)
    return _fma32(grad, -e, total) if cpu_capability() != "default" else grad - e * total


def softmax_backward(xp: Any, grad: Any, out: Any, dim: int) -> Any:
    """``out * (grad - sum(grad * out, dim))``: the gradient of softmax given its output."""
    floating = out.dtype in (np.float16, np.float32, np.float64) or out.dtype.name == "bfloat16"
    if xp is not np or not floating or out.ndim == 0 or out.size == 0:
        return out * (grad - xp.sum(grad * out, axis=dim, keepdims=True))
    capability = cpu_capability()
    lanes = vector_bytes() // out.dtype.itemsize
    if capability == "default":  # the baseline build converts float16 to 8-lane float32 vectors
        lanes = 32 // max(out.dtype.itemsize, 4)
    wide = np.float64 if out.dtype == np.float64 else np.float32  # (b)float16 accumulates in float32
    g, o = grad.astype(wide, copy=False), out.astype(wide, copy=False)
    return (o * (g - _dot(g, o, dim, lanes))).astype(out.dtype, copy=False)


def vector_elements(shape: tuple, arrays: list, width: int) -> Any:
    """Where torch's CPU elementwise loop (``vectorized_loop``) over ``arrays`` (the operands as
    the kernel reads them, their result of ``shape``) computes the result in vectors of ``width``
    bytes: a bool array of ``shape``, or None where it computes none (the common case: small
    tensors). Ops whose vector and scalar code differ (``maximum`` keeps the other operand on a
    tie of zeros) read it.

    TensorIterator orders the dimensions by stride (``_layout.iteration_order``) and coalesces
    them from the innermost; along the inner row, blocks of two vectors go through the vector
    code and the row's rest through the scalar loop. A row is vectorized only when every operand
    steps one element along it, or one input is broadcast along it and the others step one.
    Exact for a loop run in one chunk (fewer than ``GRAIN_SIZE`` elements): above it torch
    splits the loop between threads, so the chunks' tails depend on the thread count."""
    n = int(np.prod(shape))
    block = 2 * (width // arrays[0].dtype.itemsize)
    if n < block:
        return None
    operands = [(a.shape, tuple(s // a.itemsize for s in a.strides)) for a in arrays]
    strides = [_layout.elementwise_strides(shape, operands)]
    strides += [_layout._broadcast_strides(shape, op) for op in operands]
    perm = [d for d in _layout.iteration_order(shape, operands) if shape[d] != 1]  # size 1 coalesces away
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
    order = list(reversed(_layout.iteration_order(shape, operands)))  # outermost first, as memory runs
    in_row = (np.arange(n) % row < whole).reshape([shape[d] for d in order])
    return in_row.transpose(np.argsort(order))
