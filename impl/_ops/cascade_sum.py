"""Floating-point sums in the order of torch's CPU kernel (``cascade_sum`` in
aten/src/ATen/native/cpu/SumKernel.cpp), so that a float32 loss prints torch's last digits.

torch builds a TensorIterator over the input and an output with stride 0 on the reduced
dimensions: the dimensions sorted by stride with the reduced ones inside
(``_layout.iteration_order``), then coalesced. The output is filled with 0 and each 2-d loop
(``size0`` along the innermost dimension, ``size1`` rows) adds its results into it (``out +=
value``, in the output's dtype: float16/bfloat16 round there and accumulate in float32). In a
loop, with ``lanes`` the elements of one of torch's vectors (32 bytes: AVX2's, even on AVX512):

- reduced dimension contiguous and ``size0 >= lanes``: each row's whole vectors (float16: pairs
  of neighbours summed into a float32 lane; bfloat16: element ``i`` plus element ``i + lanes/2``)
  through ``row_sum``, the scalar tail summed from 0, then the float lanes added one by one;
- else rows contiguous and ``size1 >= lanes``: the columns in groups of ``4 * lanes`` through
  ``multi_row_sum``, the others through ``row_sum``; otherwise, if the reduced stride is the
  smaller, every column through ``row_sum``, else columns in groups of 4 through
  ``multi_row_sum`` and the rest through ``row_sum``.

``row_sum`` keeps 4 interleaved partial sums (element ``i`` to ``i % 4``) through
``multi_row_sum``, adds the last ``n % 4`` elements to the first and then the other three.
``multi_row_sum`` sums blocks of ``2**p`` elements (``p = max(4, ceil(log2(n)) // 4)``) and the
block sums in a cascade of 4 levels, each level flushing into the next every ``2**p`` values.
Above ``GRAIN_SIZE`` elements with several threads, a full reduction gives each thread's range
(``parallel_for``'s chunks) its own partial sum (stored in the output dtype), which are then
summed as a row; otherwise the loop is split between threads along an output dimension
(columns rounded to 128 bytes when contiguous). A float16/bfloat16 sum whose loop reduces two
dimensions sums a float32 copy instead (``should_use_acc_buffer``).

Each sum below is a numpy operation over all the rows and lanes at once (left-to-right sums are
``np.add.accumulate``'s order), so the order is torch's and the cost stays numpy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _layout
from impl._cpu import GRAIN_SIZE, intraop_threads, parallel_chunks

_LEVELS = 4  # multi_row_sum's cascade levels
# The sum kernel is registered with REGISTER_DISPATCH, which registers no AVX512 build (its
# AVX512 machines run the AVX2 one): 32-byte vectors, as in the baseline build's emulated ones.
VECTOR_BYTES = 32


def summable(dtype: Any) -> bool:
    """Whether torch's CPU sum of ``dtype`` is the cascade emulated here (floating, not complex)."""
    return np.dtype(dtype).name in ("float16", "bfloat16", "float32", "float64")


def _acc_type(dtype: Any) -> Any:
    return np.dtype(np.float64 if np.dtype(dtype) == np.float64 else np.float32)


def _seq(x: Any, axis: int = 0) -> Any:
    """The left-to-right sum along ``axis`` (0 for no elements)."""
    if axis:  # (np.moveaxis, in a transpose: its checks cost more than these sums)
        axis %= x.ndim
        x = x.transpose(axis, *range(axis), *range(axis + 1, x.ndim))
    n = x.shape[0]
    if n == 0:
        return np.zeros(x.shape[1:], x.dtype)
    if _rows_outer(x):  # (from -0.0, as -0.0 + v is v: numpy's +0.0 would make a -0.0 sum +0.0)
        return np.add.reduce(x, axis=0, initial=-0.0)
    if n > 32 or x[0].size <= 256:  # (one call; over large rows numpy's accumulate is slow)
        return np.add.accumulate(x, axis=0)[-1]
    acc = x[0].copy()
    for i in range(1, n):
        acc += x[i]
    return acc


def _rows_outer(x: Any) -> bool:
    """Whether numpy reduces ``x`` along axis 0 row after row, each element in order: where the
    last axis is the fastest of ``x`` (and of the C-ordered result), numpy's inner loop adds a row
    to the result (its pairwise summation runs only along the fast axis)."""
    if x.ndim < 2 or x.shape[-1] < 2 or x.strides[0] <= 0 or x.strides[-1] <= 0:
        return False
    last = x.strides[-1]
    return all(size == 1 or stride > last for size, stride in zip(x.shape[:-1], x.strides[:-1], strict=True))


def _ceil_log2(n: int) -> int:
    return 1 if n <= 2 else (n - 1).bit_length()


def _multi_row_sum(x: Any) -> Any:
    """torch's multi_row_sum along axis 0: blocks of ``step`` summed from 0, the block sums
    cascaded through levels that flush every ``step`` values; then the tail, and the partial
    levels added to it in order."""
    n, rest = x.shape[0], x.shape[1:]
    step = 1 << max(4, _ceil_log2(n) // _LEVELS)
    full = n - n % step
    values = _seq(x[:full].reshape(full // step, step, *rest), 1)
    parts = [_seq(x[full:])]
    for _ in range(_LEVELS - 2):
        whole = values.shape[0] - values.shape[0] % step
        parts.append(_seq(values[whole:]))
        values = _seq(values[:whole].reshape(whole // step, step, *rest), 1)
    parts.append(_seq(values))
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _row_sum(x: Any) -> Any:
    """torch's row_sum along axis 0: 4 interleaved partial sums, the tail, then the partials."""
    n = x.shape[0]
    whole = n - n % 4
    partials = _multi_row_sum(x[:whole].reshape(whole // 4, 4, *x.shape[1:]))
    total = partials[0]
    for i in range(whole, n):
        total = total + x[i]
    for k in range(1, 4):
        total = total + partials[k]
    return total


def _inner_vector_sum(x: Any, acc: Any, pairs: bool) -> Any:
    """torch's vectorized_inner_sum along axis 0 (contiguous): whole vectors into float lanes
    through row_sum, the scalar tail from 0, then the lanes one by one. ``pairs``: bfloat16
    loaded as float16 is (nansum's load has no bfloat16 case)."""
    width = VECTOR_BYTES
    lanes_in, lanes = width // x.itemsize, width // acc.itemsize
    whole = x.shape[0] - x.shape[0] % lanes_in
    vectors = x[:whole].reshape(whole // lanes_in, lanes_in, *x.shape[1:])
    if lanes_in == lanes:
        loaded = vectors.astype(acc)
    elif x.dtype.name == "bfloat16" and not pairs:  # load_fp32_from_bf16: the two halves, added
        loaded = vectors[:, :lanes].astype(acc) + vectors[:, lanes:].astype(acc)
    else:  # load_reduce_vec: neighbours added
        loaded = vectors[:, 0::2].astype(acc) + vectors[:, 1::2].astype(acc)
    partial = _row_sum(loaded)
    total = _seq(x[whole:].astype(acc))
    for k in range(lanes):
        total = total + partial[k]
    return total


def _loop_values(x: Any, stride0: int, stride1: int, acc: Any, pairs: bool = False) -> Any:
    """The values one of torch's 2-d loops computes: ``x`` of numpy shape (..., size1, size0),
    reduced along its last axis (element strides ``stride0``, rows ``stride1``), one per row."""
    size1, size0 = x.shape[-2], x.shape[-1]
    lanes_in, lanes = VECTOR_BYTES // x.itemsize, VECTOR_BYTES // acc.itemsize
    rows = x.transpose(x.ndim - 1, *range(x.ndim - 1))  # np.moveaxis(x, -1, 0)
    if stride0 == 1 and size0 >= lanes_in:
        return _inner_vector_sum(rows, acc, pairs)
    rows = rows.astype(acc, copy=False)
    if stride1 == 1 and size1 >= lanes_in:
        split = size1 - size1 % (4 * lanes)
    elif stride0 < stride1:
        split = 0
    else:
        split = size1 - size1 % 4
    out = np.empty(x.shape[:-1], acc)
    if split:
        out[..., :split] = _multi_row_sum(rows[..., :split])
    if split < size1:
        out[..., split:] = _row_sum(rows[..., split:])
    return out


def _accumulate(values: Any, out_dtype: Any) -> Any:
    """``out += value`` over the last axis from ``out = 0``, in ``out_dtype``: float16 and
    bfloat16 round the value, then the sum (c10::Half's ``+=`` of a float)."""
    if values.dtype == out_dtype:
        return _seq(values, -1) + out_dtype.type(0)
    values = values.astype(out_dtype).astype(values.dtype)
    out = np.zeros(values.shape[:-1], out_dtype)
    for k in range(values.shape[-1]):
        out = (out.astype(values.dtype) + values[..., k]).astype(out_dtype)
    return out


class _Iter:
    """A reduction's TensorIterator after reorder and coalescing: ``x`` the input viewed with the
    iterator's dimensions reversed (numpy order: the innermost last), ``strides`` its element
    strides innermost first, ``out`` the output viewed likewise over the kept dimensions, and
    ``reduced`` how many of the innermost dimensions are reduced, ``pairs`` nansum's load."""

    def __init__(self, x: Any, strides: list, out: Any, reduced: int, pairs: bool = False) -> None:
        self.x, self.strides, self.out, self.reduced, self.pairs = x, strides, out, reduced, pairs

    def narrow(self, dim: int, begin: int, end: int) -> _Iter:
        ndim = self.x.ndim
        index = [slice(None)] * ndim
        index[ndim - 1 - dim] = slice(begin, end)
        out_index = index[: ndim - self.reduced]
        return _Iter(self.x[tuple(index)], self.strides, self.out[tuple(out_index)], self.reduced, self.pairs)


def _iterator(a: Any, dims: tuple, keepdim: bool, out: Any) -> _Iter:
    """The iterator torch builds for summing ``a`` over ``dims`` into ``out`` (C-ordered, of the
    keepdim shape): the output's strides are 0 on the reduced dimensions, and on those of size 1
    too unless ``keepdim`` (review_reduce_result)."""
    shape = a.shape
    out_shape = tuple(1 if d in dims else n for d, n in enumerate(shape))
    out_strides = [
        0 if d in dims and (n != 1 or not keepdim) else s
        for d, (n, s) in enumerate(zip(shape, _layout.contiguous_strides(out_shape), strict=True))
    ]
    in_strides = [s // a.itemsize for s in a.strides]
    perm = _layout.iteration_order(shape, [(out_shape, tuple(out_strides)), (shape, tuple(in_strides))], True)
    sizes = [shape[d] for d in perm]
    ins = [in_strides[d] for d in perm]
    outs = [out_strides[d] for d in perm]
    k = 0  # TensorIterator.coalesce_dimensions
    for d in range(1, len(sizes)):
        if sizes[k] == 1 or sizes[d] == 1 or (sizes[k] * ins[k] == ins[d] and sizes[k] * outs[k] == outs[d]):
            if sizes[k] == 1:
                ins[k], outs[k] = ins[d], outs[d]
            sizes[k] *= sizes[d]
        else:
            k += 1
            sizes[k], ins[k], outs[k] = sizes[d], ins[d], outs[d]
    n = k + 1 if sizes else 0
    sizes, ins, outs = sizes[:n] or [1], ins[:n] or [0], outs[:n] or [0]
    reduced = sum(1 for size, o in zip(sizes, outs, strict=True) if o == 0 and size > 1)
    x = np.lib.stride_tricks.as_strided(a, sizes[::-1], [s * a.itemsize for s in ins[::-1]])
    kept = np.lib.stride_tricks.as_strided(
        out, sizes[reduced:][::-1], [s * out.itemsize for s in outs[reduced:][::-1]], writeable=True
    )
    return _Iter(x, ins, kept, reduced)


def _serial(it: _Iter, acc: Any) -> Any:
    """serial_for_each over the whole iterator: the kept positions' sums (in ``it.out``'s shape)."""
    x, strides, r = it.x, it.strides, it.reduced
    if r == 0:  # no true reduction: out = 0 + x
        return x + x.dtype.type(0)
    if x.ndim == 1:
        x, strides = x[np.newaxis], [*strides, 0]
    values = _loop_values(x, strides[0], strides[1], acc, it.pairs)
    if r == 1:
        return (values.astype(it.out.dtype) + it.out.dtype.type(0)).reshape(it.out.shape)
    return _accumulate(values.reshape(*values.shape[: values.ndim - (r - 1)], -1), it.out.dtype)


def _range_sum(it: _Iter, begin: int, end: int, acc: Any) -> Any:
    """serial_for_each over the linear positions [begin, end) of an iterator that reduces every
    dimension, by DimCounter's 2-d steps (a partial row, whole rows, ...): its one sum."""
    x, strides = it.x, it.strides
    if x.ndim == 1:
        values = [_loop_values(x[np.newaxis, begin:end], strides[0], 0, acc, it.pairs)]
    else:
        values, offset, shape = [], begin, x.shape[::-1]
        while offset < end:
            at = np.unravel_index(offset, x.shape)
            i0, i1 = at[-1], at[-2]
            step0 = min(shape[0] - i0, end - offset)
            step1 = min(shape[1] - i1, (end - offset) // shape[0]) if step0 == shape[0] else 1
            block = x[tuple(at[:-2]) + (slice(i1, i1 + step1), slice(i0, i0 + step0))]
            values.append(_loop_values(block, strides[0], strides[1], acc, it.pairs))
            offset += step0 * step1
    return _accumulate(np.concatenate(values), it.out.dtype)


def _parallel(it: _Iter, acc: Any, threads: int) -> None:
    """parallel_reduce above the grain size: two passes for one output, else split along a kept
    dimension (find_split_dim, columns rounded to 128 bytes when contiguous)."""
    x = it.x
    if it.out.size == 1:
        partials = np.zeros(threads, it.out.dtype)
        for t, (b, e) in enumerate(parallel_chunks(x.size, GRAIN_SIZE, threads)):
            partials[t] = _range_sum(it, b, e, acc)
        final = _iterator(partials, (0,), True, np.zeros(1, it.out.dtype))
        it.out[...] = _serial(final, acc).reshape(it.out.shape)
        return
    shape = x.shape[::-1]
    best = len(shape) - 1
    dim = None
    for d in range(len(shape) - 1, it.reduced - 1, -1):
        if shape[d] >= threads:
            dim = d
            break
        if shape[d] > shape[best]:
            best = d
    dim = best if dim is None else dim
    cols = shape[dim]
    multiple = 128 // x.itemsize if it.strides[dim] == 1 else 1
    for b, e in parallel_chunks(cols, 1, threads):
        b -= b % multiple
        e = e if e == cols else e - e % multiple
        if b != e:
            sub = it.narrow(dim, b, e)
            sub.out[...] = _serial(sub, acc)


def cascade_sum(a: Any, dims: tuple | None, keepdim: bool, out_dtype: Any, ignore_nan: bool = False) -> Any:
    """torch's CPU sum of numpy array ``a`` over ``dims`` (None: all) in ``out_dtype`` (a
    floating dtype ``summable`` takes), bit for bit, ``a`` converted first as torch's ``to``
    converts. ``ignore_nan``: nansum's, NaN read as 0 (and no float32 copy for float16)."""
    out_dtype = np.dtype(out_dtype)
    dims = tuple(range(a.ndim)) if dims is None else tuple(dims)
    original = a
    if a.dtype != out_dtype or any(s < 0 for s in a.strides):
        a = _layout.copy_like(np, a, out_dtype)
    out = np.zeros(tuple(1 if d in dims else n for d, n in enumerate(a.shape)), out_dtype)
    if a.size:
        it = _iterator(a, dims, keepdim, out)
        if ignore_nan:  # (a copy in the iterator's order: the kernel's choices read it.strides)
            it.x, it.pairs = np.where(np.isnan(it.x), out_dtype.type(0), it.x), True
        if not ignore_nan and out_dtype.itemsize == 2 and it.reduced >= 2:
            out = cascade_sum(original, dims, True, np.float32).astype(out_dtype)
        elif a.size < GRAIN_SIZE or intraop_threads() == 1:
            it.out[...] = _serial(it, _acc_type(out_dtype))
        else:
            _parallel(it, _acc_type(out_dtype), intraop_threads())
    return out if keepdim else out.reshape(tuple(n for d, n in enumerate(a.shape) if d not in dims))


def cascade_mean(a: Any, dims: tuple | None, keepdim: bool, out_dtype: Any) -> Any:
    """torch's CPU mean: the sum (float16/bfloat16 in float32) divided by the count, rounded."""
    out_dtype = np.dtype(out_dtype)
    wide = np.dtype(np.float32) if out_dtype.itemsize == 2 else out_dtype
    count = a.size if dims is None else int(np.prod([a.shape[d] for d in dims]))
    with np.errstate(divide="ignore", invalid="ignore"):
        return (cascade_sum(a, dims, keepdim, wide) / wide.type(count)).astype(out_dtype)
