"""torch's CPU as its kernels see it: the kernel set torch dispatches to (``cpu_capability``), the
threads ``parallel_for`` splits loops between (``intraop_threads``), and the fused multiply-add
(``fma``, rounded once). Below the ops and the factories: the ops (impl._ops.cpu_kernels) and the
range factories (``linspace``, ``arange``: the compiler contracts them into fused multiply-adds)
round like torch's kernels."""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

# torch's at::internal::GRAIN_SIZE: an elementwise loop over fewer elements runs in one chunk
GRAIN_SIZE = 32768


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


def intraop_threads() -> int:
    """The threads torch's ``parallel_for`` splits a loop between, by default (``torch.set_num_threads``
    in the program is not seen): the machine's physical cores, or MKL_NUM_THREADS, else
    OMP_NUM_THREADS, when set to a positive number. The x86 build sizes its OpenMP pool from MKL's
    (``init_num_threads``), and MKL, unless MKL_DYNAMIC is false, uses no more threads than cores."""
    for name in ("MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        chosen = os.environ.get(name, "").strip()
        if chosen.isdigit() and int(chosen) > 0:
            dynamic = os.environ.get("MKL_DYNAMIC", "").strip().lower() not in ("false", "0", "no")
            return min(int(chosen), physical_cores()) if dynamic else int(chosen)
    return physical_cores()


def parallel_chunks(n: int, grain: int, threads: int) -> list[tuple[int, int]]:
    """parallel_for's ranges: ``min(threads, ceil(n / grain))`` chunks of ``ceil(n / chunks)``."""
    if n <= grain or threads == 1:
        return [(0, n)]
    used = min(threads, -(-n // max(grain, 1)))
    size = -(-n // used)
    return [(b, min(n, b + size)) for b in range(0, n, size)]


@functools.cache
def physical_cores() -> int:
    """The machine's physical cores, as torch's thread pool counts them (cpuinfo's cores, not its
    logical processors: two hyperthreads of one core count once; the process's CPU affinity is not
    consulted): the distinct (package, core) pairs of Linux's CPU topology, else os.cpu_count()."""
    cores = set()
    for topology in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology"):
        try:
            cores.add(((topology / "physical_package_id").read_text(), (topology / "core_id").read_text()))
        except OSError:
            continue
    return len(cores) or os.cpu_count() or 1


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


def _emulated_fma64(acc: Any, g: Any, o: Any, residual: bool = False) -> Any:
    """float64 ``acc + g * o`` rounded once by Boldo and Melquiond's emulated FMA: the product and
    the sum as exact pairs (TwoProduct, TwoSum), their two errors added rounded to odd, that
    added to the rounded sum. Exact only while no step overflows or underflows: Veltkamp's split
    of a factor beyond ~2^997 overflows, a product's error below the subnormal grid (a product
    under ~2^-968) is not exact, and a subnormal result is rounded to 53 bits, not to its grid.

    ``residual``: also return a double with the sign of the exact sum less the result (zero when
    it is exact): the last sum's error, else what rounding to odd dropped. Its sign is right for
    factors in [0.5, 1) (``_fma64_scaled``): either ``acc`` and the product cancel exactly (then
    nothing was rounded to odd) or the sum is above 1/8 and a nonzero last error outweighs the
    dropped part, which is below an ulp of the rounded-to-odd term."""
    p, p_err = _two_product(g, o)
    s, s_err = _two_sum(acc, p)
    err, err_low = _two_sum(s_err, p_err)
    odd = _odd(err, err_low)
    if not residual:
        return s + odd
    fused, last = _two_sum(s, odd)
    return fused, np.where(last != 0, last, (err - odd) + err_low)


# Where the emulation above is exact: factors below 2^995, products in [2^-968, 2^1020] and
# results from 2^-1021 up to the largest double (``_fma64`` redoes the others)
_SPLIT_SAFE = 2.0**995
_PRODUCT_SAFE = (2.0**-968, 2.0**1020)
_RESULT_SAFE = (2.0**-1021, np.finfo(np.float64).max)


def _fma64(acc: Any, g: Any, o: Any) -> Any:
    """float64 ``acc + g * o`` rounded once, as the hardware FMA torch's kernels use (correctly
    rounded for every input): ``_emulated_fma64``, and where one of its steps could overflow or
    underflow (huge factors, tiny products, subnormal, zero or non-finite results: rare in
    practice) ``_fma64_scaled``."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        fused = _emulated_fma64(acc, g, o)
        p, r = np.abs(g * o), np.abs(fused)
        safe = (np.abs(g) < _SPLIT_SAFE) & (np.abs(o) < _SPLIT_SAFE)
        safe &= (p >= _PRODUCT_SAFE[0]) & (p <= _PRODUCT_SAFE[1])
        safe &= (r >= _RESULT_SAFE[0]) & (r <= _RESULT_SAFE[1])
        redo = np.flatnonzero(~safe)
        if redo.size:
            fused = np.asarray(fused)  # a fresh array (0-d for scalar operands): written in place
            operands = (np.broadcast_to(x, fused.shape).ravel()[redo] for x in (acc, g, o))
            fused.ravel()[redo] = _fma64_scaled(*operands)
    return fused


def _fma64_scaled(acc: Any, g: Any, o: Any) -> Any:
    """``_fma64`` on flat arrays for any inputs. Non-finite operands, a zero operand and a zero
    ``acc`` take IEEE's unfused ``acc + g * o`` (one rounding there: inf * 0 is nan, -0.0 + -0.0
    stays -0.0), except that an infinite ``acc`` plus a finite product that overflows stays
    ``acc`` and a zero ``acc`` plus a product that underflows to zero is that signed zero (the
    sign of the exact sum: +0.0 + -tiny is -0.0). An ``acc`` more than 2^55 times the product is the
    result. Otherwise the emulation runs on the factors' mantissas (``frexp``: in [0.5, 1), so
    nothing overflows or underflows) with ``acc`` scaled alike (where that falls below 2^-200
    only its sign can matter: it is clamped there), and the result is scaled back: exactly, or
    rounded to the subnormal grid, the emulation's residual breaking the ties it makes there."""
    product = g * o
    finite = np.isfinite(acc) & np.isfinite(g) & np.isfinite(o)
    out = np.where(np.isinf(acc) & np.isfinite(g) & np.isfinite(o), acc, acc + product)
    out = np.where(finite & (acc == 0) & (g != 0) & (o != 0), product, out)
    mg, eg = np.frexp(g)
    mo, eo = np.frexp(o)
    scale = eg + eo  # |g * o| < 2^scale
    general = finite & (acc != 0) & (g != 0) & (o != 0)
    dominant = np.frexp(acc)[1] - 1 >= scale + 55  # |acc| >= 2^55 |g * o|
    out = np.where(general & dominant, acc, out)
    rest = np.flatnonzero(general & ~dominant)
    if rest.size:
        scale = scale[rest]
        scaled = np.ldexp(acc[rest], -scale)
        scaled = np.where(np.abs(scaled) < 2.0**-200, np.copysign(2.0**-200, acc[rest]), scaled)
        fused, residual = _emulated_fma64(scaled, mg[rest], mo[rest], residual=True)
        # scaled back, a subnormal result is rounded again, to its grid (spacing ``step`` here):
        # right unless ``fused`` lies on a midpoint of the grid and the exact sum does not
        step = np.ldexp(1.0, -1074 - scale)
        tie = (np.abs(np.fmod(fused, step)) == step / 2) & (np.abs(fused) < step * 2.0**52) & (residual != 0)
        out[rest] = np.ldexp(np.where(tie, fused + np.copysign(step / 2, residual), fused), scale)
    return out


@functools.cache
def _midpoint_bits(dtype: Any) -> tuple[Any, Any, Any]:
    """For float64 sums rounded to ``dtype``: the mask of the float64 mantissa bits ``dtype`` has
    not, their pattern at a midpoint of ``dtype``, and ``dtype``'s smallest normal number."""
    drop = np.finfo(np.float64).nmant - np.finfo(dtype).nmant
    bits = (np.array(value, np.uint64) for value in ((1 << drop) - 1, 1 << (drop - 1)))
    return *bits, np.array(np.finfo(dtype).tiny)  # (0-d arrays: cheaper as ufunc operands than scalars)


def _fma_narrow(acc: Any, g: Any, o: Any, out: Any, scratch: tuple) -> None:
    """float16/float32 ``acc + g * o`` rounded once into ``out``. The product is exact in float64,
    so the float64 sum is the exact one rounded once; rounding that to ``out``'s dtype rounds the
    exact sum, unless it landed exactly on a midpoint of the dtype (or in its subnormal range):
    those few are redone, rounded to odd. ``scratch``: three float64 and two bool arrays of
    ``out``'s size. ``out`` may be ``acc`` itself: the operands are all read before it is written.
    Every pass is between arrays of one dtype (numpy's mixed-dtype loops cast in buffers, at
    twice the cost), and the subnormal test reads the narrow result: ``|out| <= tiny`` holds
    wherever ``|sum| < tiny`` does (rounding is monotone), and a few more, redone alike."""
    product, wide_acc, total, midpoint, tiny = scratch
    factors = [_widened(x, into) for x, into in ((g, product), (o, total))]
    np.multiply(*factors, out=product)
    np.add(product, _widened(acc, wide_acc), out=total)
    out[...] = total
    mask, half, smallest = _midpoint_bits(out.dtype)
    low = total.view(np.uint64)
    np.equal(np.bitwise_and(low, mask, out=low), half, out=midpoint)
    np.less_equal(np.abs(out, out=low.view(out.dtype)[: out.size]), smallest, out=tiny)
    redo = np.logical_or(midpoint, tiny, out=midpoint).nonzero()[0]
    if redo.size:
        a = wide_acc[redo] if np.ndim(acc) else np.float64(acc)
        out[redo] = _odd(*_two_sum(a, product[redo]))


def _widened(x: Any, into: Any) -> Any:
    """``x`` (an array block or a scalar) in float64: an array cast into ``into``."""
    if np.ndim(x):
        into[...] = x
        return into
    return np.float64(x)


# Elements per block of the elementwise kernels (impl/_ops/cpu_kernels.py): their float64
# temporaries stay in cache.
_BLOCK = 32768
# fma's blocks: no parameter-sized temporary is ever allocated (fresh multi-megabyte arrays cost
# more in page faults than the arithmetic itself), and the dozen numpy calls of a block are few per
# parameter (at 32768 elements their overhead was a fifth of an SGD step's update).
_FMA_BLOCK = 131072
_scratch = threading.local()


def _scratch_blocks() -> tuple:
    """This thread's reusable scratch blocks for ``_fma_narrow``."""
    blocks = getattr(_scratch, "blocks", None)
    if blocks is None:
        kinds = (np.float64, np.float64, np.float64, np.bool_, np.bool_)
        blocks = _scratch.blocks = tuple(np.empty(_FMA_BLOCK, kind) for kind in kinds)
    return blocks


def fma(acc: Any, g: Any, o: Any, out: Any = None) -> Any:
    """``acc + g * o`` rounded once (a fused multiply-add), as a new array of ``acc``'s dtype
    (float16, float32 or float64), or written into ``out`` (C-contiguous, of the result's shape
    and dtype; it may be ``acc``: an optimiser's update in place): torch's kernels fuse
    ``add(alpha=)``, ``lerp``, ``addcmul`` and the dot products of softmax's backward. The
    operands are arrays of one shape or numpy scalars of that dtype; they go through in blocks
    (the values do not depend on it)."""
    dtype = acc.dtype
    operands = (acc, g, o)
    shapes = {np.shape(x) for x in operands if np.ndim(x)}
    shape = shapes.pop() if len(shapes) == 1 else np.broadcast_shapes(*(np.shape(x) for x in operands))
    sliced = [np.ndim(x) > 0 for x in operands]  # the arrays, cut into blocks (not the scalars)
    flat = [_flattened(x, shape) if cut else x for x, cut in zip(operands, sliced, strict=True)]
    if out is None:
        out = np.empty(shape, dtype)
    elif out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"fma's out must be C-contiguous {dtype} of shape {shape}")
    out_flat = out.reshape(-1)
    size = out_flat.size
    blocks = _scratch_blocks()
    for start in range(0, size, _FMA_BLOCK):
        part = slice(start, start + _FMA_BLOCK)
        a, b, c = (x[part] if cut else x for x, cut in zip(flat, sliced, strict=True))
        if dtype == np.float64:
            out_flat[part] = _fma64(a, b, c)
        else:
            n = min(size - start, _FMA_BLOCK)
            _fma_narrow(a, b, c, out_flat[part], tuple(block[:n] for block in blocks))
    return out


def _flattened(x: Any, shape: tuple) -> Any:
    """An array operand of ``fma`` as a flat C-ordered array of ``shape`` (a view where it is one
    already)."""
    if x.shape == shape and x.flags.c_contiguous:
        return x.reshape(-1)
    return np.ascontiguousarray(np.broadcast_to(x, shape)).reshape(-1)


def _fma32(acc: Any, g: Any, o: Any) -> Any:
    """float32 ``acc + g * o`` rounded once, for float32 arrays of one shape, cheaper than ``fma``
    on small ones: the float64 sum (the product is exact there) rounded to float32, redone by
    ``fma`` where that could be a second rounding (the float64 sum on a float32 midpoint, or
    nonzero below float32's normal range)."""
    wide = np.multiply(g, o, dtype=np.float64)
    wide += acc
    out = wide.astype(np.float32)
    mask, half, smallest = _midpoint_bits(np.float32)
    redo = ((wide.view(np.uint64) & mask) == half) | ((np.abs(wide) < smallest) & (wide != 0))
    if redo.any():
        out[redo] = fma(acc[redo], g[redo], o[redo])
    return out

