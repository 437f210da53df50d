"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian and mode, with
torch's order of ties and NaN (NaN sorts as the largest value) and their value-selecting gradients.

Ties: torch's CPU sort is stable up to 16 elements per lane (its insertion-sort cutoff; beyond, only
``stable=True`` is), topk and median(dim) pick with ``std::nth_element``, which for lanes of up to
three elements is an insertion sort (stable) too, median picks the first NaN of a lane holding
one, and kthvalue runs torch's own quickselect (``quick_select_template``), ported below, whose swaps
decide which of equal elements it returns; mode sorts (value, index) pairs with libstdc++'s unstable
``std::sort`` and nanmedian of a lane of NaN only picks with its ``std::nth_element``, both ported
below (the index they return among equal values is these algorithms' doing).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from impl import _api as api
from impl import _autocast, dtypes, return_types
from impl._creation import full, full_like, scalar_tensor, zeros
from impl._ops.elementwise import mul_scalar
from impl._ops.indexing import _gather_key
from impl._ops.reductions import _evenly
from impl._ops.scatter import (
    SCATTER,  # zeros.scatter(dim, index, src), as value-selecting gradients build theirs
)
from impl._ops.stacking import broadcast_tensors
from impl._ops.table import D, OpDef, apply, number_array, separable
from impl._signatures import EXACT, OVERLOADS, Out, _invalid_combination, _Signature, invalid_call
from impl._tensor import Tensor, _wrap_dim
from impl._xp import namespace_of


# -- kernels -------------------------------------------------------------------------------------
def stable_order(xp: Any, a: Any, axis: int, descending: bool) -> Any:
    """The indices sorting ``a`` along ``axis``, ties in their original order, NaN as the largest
    value (last ascending, first descending). Descending: the ascending order of the reversed lane,
    reversed, which keeps equal elements in their original order."""
    if not descending:
        return xp.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    order = xp.argsort(xp.flip(a, axis), axis=axis, kind="stable")
    return (n - 1) - xp.flip(order, axis)


def _sort_fwd(xp: Any, a: Any, dim: int, descending: bool) -> tuple:
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype=np.int64)
    order = stable_order(xp, a, dim, descending)
    return xp.take_along_axis(a, order, axis=dim), order.astype(np.int64)


def _gt_or_nan(x: Any, y: Any) -> bool:
    """quick_select_template's order: NaN above everything, else ``>``."""
    return (x != x and y == y) or x > y


def quick_select(values: list, indices: list, k: int) -> None:
    """torch's CPU quick_select_template (aten/src/ATen/native/SortingUtils.h): reorders the lane so
    that position ``k`` holds its k-th smallest, swapping ``indices`` along (median of three pivot)."""

    def swap(i: int, j: int) -> None:
        values[i], values[j] = values[j], values[i]
        indices[i], indices[j] = indices[j], indices[i]

    low, high = 0, len(values) - 1
    while high > low:
        if high == low + 1:
            if _gt_or_nan(values[low], values[high]):
                swap(low, high)
            return
        swap(low + (high - low) // 2, low + 1)
        if _gt_or_nan(values[low + 1], values[high]):
            swap(low + 1, high)
        if _gt_or_nan(values[low], values[high]):
            swap(low, high)
        if _gt_or_nan(values[low + 1], values[low]):
            swap(low + 1, low)
        i, j, pivot = low + 1, high, values[low]
        while True:
            i += 1
            while _gt_or_nan(pivot, values[i]):
                i += 1
            j -= 1
            while _gt_or_nan(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1


_THRESHOLD = 16  # libstdc++'s _S_threshold: introsort leaves runs this short to insertion sort


def std_sort(a: list, less: Any) -> None:
    """libstdc++'s ``std::sort`` of ``a`` by ``less``, in place: introsort (median-of-three pivot
    moved to the front, unguarded partition, heapsort past 2*log2(n) levels) then a final
    insertion sort. Not stable: where equal elements end is this algorithm's doing."""
    if len(a) > 1:
        _introsort(a, 0, len(a), 2 * (len(a).bit_length() - 1), less)
        _insertion_sort(a, 0, len(a), less, guarded=_THRESHOLD)


def nth_element(a: list, nth: int, less: Any) -> None:
    """libstdc++'s ``std::nth_element`` (introselect): ``a[nth]`` the element a full sort would put
    there; which of equivalent elements is this algorithm's doing."""
    first, last, depth = 0, len(a), 2 * (len(a).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, less)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, less)
        first, last = (cut, last) if cut <= nth else (first, cut)
    _insertion_sort(a, first, last, less)


def _introsort(a: list, first: int, last: int, depth: int, less: Any) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_select(a, first, last, last, less)
            _sort_heap(a, first, last, less)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, less)
        _introsort(a, cut, last, depth, less)
        last = cut


def _partition_pivot(a: list, first: int, last: int, less: Any) -> int:
    """__unguarded_partition_pivot: the median of three to the front, then partition around it."""
    x, y, z = first + 1, first + (last - first) // 2, last - 1
    if less(a[x], a[y]):
        pick = y if less(a[y], a[z]) else z if less(a[x], a[z]) else x
    else:
        pick = x if less(a[x], a[z]) else z if less(a[y], a[z]) else y
    a[first], a[pick] = a[pick], a[first]
    lo, hi, pivot = first + 1, last, a[first]
    while True:
        while less(a[lo], pivot):
            lo += 1
        hi -= 1
        while less(pivot, a[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        a[lo], a[hi] = a[hi], a[lo]
        lo += 1


def _insertion_sort(a: list, first: int, last: int, less: Any, guarded: int | None = None) -> None:
    """__insertion_sort of a[first:last] (an element below a[first] moved to the front, the others
    inserted linearly); past ``first + guarded``, __unguarded_insertion_sort's linear inserts."""
    for i in range(first + 1, last):
        item = a[i]
        if (guarded is None or i < first + guarded) and less(item, a[first]):
            a[first + 1 : i + 1] = a[first:i]
            a[first] = item
            continue
        j = i - 1  # (unguarded: a lane with NaN could run past the front in C++; stopped here)
        while j >= first and less(item, a[j]):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = item


def _heap_select(a: list, first: int, middle: int, last: int, less: Any) -> None:
    """__heap_select: a max-heap of a[first:middle] holding the smallest of a[first:last]."""
    n = middle - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(a, first, parent, n, a[first + parent], less)
    for i in range(middle, last):
        if less(a[i], a[first]):  # __pop_heap(first, middle, i)
            item, a[i] = a[i], a[first]
            _adjust_heap(a, first, 0, n, item, less)


def _sort_heap(a: list, first: int, last: int, less: Any) -> None:
    n = last - first
    while n > 1:
        n -= 1
        item = a[first + n]
        a[first + n] = a[first]
        _adjust_heap(a, first, 0, n, item, less)


def _adjust_heap(a: list, first: int, hole: int, n: int, item: Any, less: Any) -> None:
    top, child = hole, hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(a[first + parent], item):  # __push_heap
        a[first + hole] = a[first + parent]
        hole, parent = parent, (parent - 1) // 2
    a[first + hole] = item


def _mode_of(lane: list) -> int:
    """The index torch's CPU mode kernel returns for ``lane``: the last, in ``std_sort``'s order, of
    the first longest run of equal values (NaN equals nothing: a run of one)."""
    items = [(v, i) for i, v in enumerate(lane)]
    std_sort(items, lambda x, y: x[0] < y[0])
    best, run, index = 0, 0, 0
    for i, (value, position) in enumerate(items):
        run += 1
        if i == len(items) - 1 or value != items[i + 1][0]:
            if run > best:
                best, index = run, position
            run = 0
    return index


def _mode_fwd(xp: Any, a: Any, dim: int, keepdim: bool) -> tuple:
    lanes = _lanes(xp, a, dim)
    picked = [_mode_of(lane) for lane in lanes.tolist()]
    return _picked(xp, a, lanes, xp.asarray(picked, dtype=np.int64).reshape(-1), dim, keepdim)


def _lanes(xp: Any, a: Any, dim: int) -> Any:
    """``a`` as rows of its lanes along ``dim`` (a 0-d ``a`` as one lane of one element)."""
    if a.ndim == 0:
        return a.reshape(1, 1)
    return xp.moveaxis(a, dim, -1).reshape(-1, a.shape[dim])


def _kthvalue_fwd(xp: Any, a: Any, k: int, dim: int, keepdim: bool) -> tuple:
    """The k-th smallest along ``dim`` and its index, as torch's CPU quickselect picks it on each
    lane (on every device: torch's CUDA kernel is another algorithm, whose choice among ties is
    not documented)."""
    lanes = _lanes(xp, a, dim)
    picked = []
    for lane in lanes.tolist():
        indices = list(range(len(lane)))
        quick_select(lane, indices, k - 1)
        picked.append(indices[k - 1])
    return _picked(xp, a, lanes, xp.asarray(picked, dtype=np.int64), dim, keepdim)


def _picked(xp: Any, a: Any, lanes: Any, index: Any, dim: int, keepdim: bool) -> tuple:
    """The elements of ``lanes`` (``a`` moved to lanes along ``dim``) at ``index``, and ``index``,
    shaped as a reduction of ``a`` over ``dim``."""
    values = xp.take_along_axis(lanes, index[:, None], axis=-1)[:, 0]
    shape = [s for d, s in enumerate(a.shape) if d != dim]
    values, index = values.reshape(shape), index.reshape(shape)
    if keepdim and a.ndim:
        values, index = xp.expand_dims(values, dim), xp.expand_dims(index, dim)
    return values, index


def _median_dim_fwd(xp: Any, a: Any, dim: int, keepdim: bool) -> tuple:
    """The lower of the two middle values along ``dim`` (its index as a stable sort orders ties),
    or the first NaN of a lane holding one."""
    lanes = _lanes(xp, a, dim)
    middle = stable_order(xp, lanes, -1, False)[:, (lanes.shape[-1] - 1) // 2]
    if a.dtype.kind == "f":
        nans = xp.isnan(lanes)
        middle = xp.where(nans.any(-1), xp.argmax(nans, axis=-1), middle)
    return _picked(xp, a, lanes, middle.astype(np.int64), dim, keepdim)


def _median_fwd(xp: Any, a: Any) -> Any:
    """The lower of the two middle values of all elements; NaN if any is (and of no elements)."""
    flat = a.reshape(-1)
    if flat.size == 0:  # no kernel runs: NaN cast to the dtype (the lowest int64/int32, 0, True)
        return number_array(xp, np.nan, a.dtype)
    if a.dtype.kind == "f" and bool(xp.isnan(flat).any()):
        return xp.full((), np.nan, dtype=a.dtype)
    return xp.sort(flat)[(flat.size - 1) // 2]


def _nan_last(lane: list) -> Any:
    """torch's nanmedian order of a lane's indices: by value, ties by index, NaN after all."""
    return lambda i, j: (
        lane[i] < lane[j] or (lane[i] == lane[j] and i < j) or (lane[j] != lane[j] and lane[i] == lane[i])
    )


def _nanmedian_dim_fwd(xp: Any, a: Any, dim: int, keepdim: bool) -> tuple:
    """The lower middle of the non-NaN values along ``dim`` (its index as a stable sort orders ties):
    the element ``std::nth_element`` puts at that place under torch's order (``_nan_last``); of a
    lane of NaN only, the NaN that introselect leaves first."""
    lanes = _lanes(xp, a, dim)
    picked = []
    for lane in lanes.tolist():
        valid = sum(v == v for v in lane)
        order = list(range(len(lane)))
        nth_element(order, max(valid - 1, 0) // 2, _nan_last(lane))
        picked.append(order[max(valid - 1, 0) // 2])
    return _picked(xp, a, lanes, xp.asarray(picked, dtype=np.int64).reshape(-1), dim, keepdim)


def _nanmedian_fwd(xp: Any, a: Any) -> Any:
    """The lower middle of the non-NaN elements; NaN if none (cast to the dtype: no kernel runs)."""
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        flat = flat[~xp.isnan(flat)]
    if flat.size == 0:
        return number_array(xp, np.nan, a.dtype)
    return xp.sort(flat)[(flat.size - 1) // 2]


def _topk_fwd(xp: Any, a: Any, k: int, dim: int, largest: bool) -> tuple:
    if a.ndim == 0:
        return a.copy(), xp.zeros((), dtype=np.int64)
    order = xp.take(stable_order(xp, a, dim, largest), xp.arange(k), axis=dim)
    return xp.take_along_axis(a, order, axis=dim), order.astype(np.int64)


# -- gradients -----------------------------------------------------------------------------------
def value_selecting_backward(g: Any, dim: int, indices: Any, sizes: tuple, keepdim: bool) -> Any:
    """torch's value_selecting_reduction_backward: the gradient scattered at ``indices`` along
    ``dim`` into zeros of the input's ``sizes`` (unsqueezed first when the dim was dropped)."""

    if not keepdim and sizes:
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    key = _gather_key(indices._data, dim)
    return apply(SCATTER, zeros(sizes, dtype=g.dtype, device=g.device), g, dim=dim, index=indices, key=key)


def _selected(keepdim: bool | None = None) -> Any:
    """The derivative of a value-selecting op (the grad goes back to the selected elements)."""
    return D(
        "indices dim" + ("" if keepdim else " keepdim"),
        lambda g, c: value_selecting_backward(g, c.dim, c.indices, c.shape(), keepdim or c.keepdim),
    )


def _gathered(c: Any) -> Any:
    """The jvp of sort and topk: the tangent at the indices selected."""
    return c.self_t if c.self.dim() == 0 else c.self_t.gather(c.dim, c.indices)


_SELECTING = {"outputs": ("result", "indices"), "derivatives": {"self": _selected(True)}, "jvp": _gathered}
SORT = OpDef("SortBackward0", _sort_fwd, **_SELECTING)
# sort's overload taking ``stable`` (given, even as None... or False)
SORT_STABLE = OpDef("SortBackward1", _sort_fwd, **_SELECTING)
TOPK = OpDef("TopkBackward0", _topk_fwd, **_SELECTING)
# the reductions selecting a value: their jvp the tangent at its index, as their backward
_REDUCING = {"outputs": ("result", "indices"), "derivatives": {"self": _selected()}, "jvp": separable}
KTHVALUE = OpDef("KthvalueBackward0", _kthvalue_fwd, **_REDUCING)
MEDIAN_DIM = OpDef("MedianBackward1", _median_dim_fwd, **_REDUCING)
MODE = OpDef("ModeBackward0", _mode_fwd, **_REDUCING)
NANMEDIAN_DIM = OpDef("NanmedianBackward1", _nanmedian_dim_fwd, **_REDUCING)
# the reductions of all elements to one of them: the gradient shared by the elements equal to it
_SHARED = {"derivatives": {"self": D("self result", _evenly)}, "jvp": separable}
NANMEDIAN = OpDef("NanmedianBackward0", _nanmedian_fwd, **_SHARED)
MEDIAN = OpDef("MedianBackward0", _median_fwd, **_SHARED)


# -- functions -----------------------------------------------------------------------------------
def _no_bool(input: Tensor, kernel: str) -> None:
    if input.dtype is dtypes.bool_:
        raise dtypes.kernel_missing(kernel, input.dtype)


def _check_nonempty(name: str, input: Tensor, dim: int) -> None:
    if input.dim() and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


_UNSET: Any = object()  # not given (sort: the overload without ``stable``, SortBackward0)


OVERLOADS["sort"] = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None)",
    "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)",
)


@api.variants("sort", out=Out(parts=(EXACT, EXACT)))
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = _UNSET) -> Any:
    """torch.sort: (values, indices) along ``dim``, ascending unless ``descending``; the order of
    ties is the stable one (torch's for lanes of up to 16 elements, or with ``stable=True``)."""
    if not isinstance(input, Tensor) or isinstance(dim, bool):
        raise invalid_call(sort, locals())
    d = _wrap_dim(dim, input.dim())
    op = SORT if stable is _UNSET else SORT_STABLE
    values, indices = apply(op, input, dim=d, descending=bool(descending))
    return return_types.sort((values, indices))


OVERLOADS["argsort"] = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)",
    "(Tensor input, int dim = -1, bool descending = False)",
)


def _argsort_out(args: tuple, kwargs: dict) -> Out:
    """argsort's out=: its overload with ``stable`` only (sort's, refusing an input requiring grad)."""
    if "stable" not in kwargs:
        raise _invalid_combination("argsort", [_Signature(s) for s in OVERLOADS["argsort"]], args, kwargs)
    return ARGSORT_OUT


ARGSORT_OUT = EXACT.named("sort")


@api.variants("argsort", out=Out(pick=_argsort_out))
def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices of ``sort`` (no gradient)."""
    if not isinstance(input, Tensor):
        raise invalid_call(argsort, locals())
    return sort(input, dim, descending, stable=stable).indices


@api.variants("msort", out=EXACT.named("sort"))
def msort(input: Tensor) -> Tensor:
    """The values of ``sort`` along dim 0."""
    if not isinstance(input, Tensor):
        raise invalid_call(msort, locals())
    return sort(input, 0).values


@api.variants("topk", out=Out(parts=(EXACT, EXACT)))
def topk(input: Tensor, k: int = _UNSET, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (or smallest) along ``dim``, in order, NaN counting as the largest."""
    if (
        not isinstance(input, Tensor)
        or isinstance(k, bool)
        or not isinstance(k, (int, np.integer))
        and k is not _UNSET
    ):
        raise invalid_call(topk, locals())
    if k is _UNSET:
        raise TypeError('topk() missing 1 required positional arguments: "k"')
    d = _wrap_dim(dim, input.dim())
    if not 0 <= k <= (input.shape[d] if input.dim() else 1):
        raise RuntimeError("selected index k out of range")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    values, indices = apply(TOPK, input, k=int(k), dim=d, largest=bool(largest))
    return return_types.topk((values, indices))


KTHVALUE_OUT = Out(
    parts=(
        Out("same", "output values must be of same type as input"),
        Out("same", "output indices must be of scalar type Long"),
    )
)


def _kthvalue_out(args: tuple, kwargs: dict) -> Out:
    """kthvalue's out=: without keepdim, an out of the result's rank is unsqueezed at dim and resized
    to the keepdim shape first (torch's _reduction_with_indices_allocate_or_resize_output)."""
    given = dict(zip(("input", "k", "dim", "keepdim"), args, strict=False), **kwargs)
    input, dim = given.get("input"), given.get("dim", -1)
    if given.get("keepdim") or not isinstance(input, Tensor) or not isinstance(dim, int):
        return KTHVALUE_OUT
    at = dim + max(input.dim(), 1) if dim < 0 else dim
    parts = tuple(dataclasses.replace(part, unsqueezed=at) for part in KTHVALUE_OUT.parts)
    return dataclasses.replace(KTHVALUE_OUT, parts=parts)


@api.variants("kthvalue", out=Out(pick=_kthvalue_out))
def kthvalue(input: Tensor, k: int = _UNSET, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest along ``dim`` and its index (as torch's quickselect picks among ties)."""
    if (
        not isinstance(input, Tensor)
        or isinstance(k, bool)
        or not isinstance(k, (int, np.integer))
        and k is not _UNSET
    ):
        raise invalid_call(kthvalue, locals())
    if k is _UNSET:
        raise TypeError('kthvalue() missing 1 required positional arguments: "k"')
    d = _wrap_dim(dim, input.dim())
    _check_nonempty("kthvalue", input, d)
    if not 1 <= k <= (input.shape[d] if input.dim() else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.dim():  # a 0-d input is copied, not selected from
        _no_bool(input, "kthvalue_cpu")
    values, indices = apply(KTHVALUE, input, k=int(k), dim=d, keepdim=bool(keepdim))
    return return_types.kthvalue((values, indices))


MEDIAN_OUT = Out(
    parts=(
        Out(
            "same",
            "Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but type "
            "{out_type} does not equal {result_type} (while checking arguments for median)",
        ),
        Out(
            "same",
            "Expected tensor for argument #1 'indices' to have scalar type Long; but got {out_type} instead "
            "(while checking arguments for median)",
        ),
    ),
    checks_first=True,
)


def _median_out(name: str) -> Any:
    """median's (nanmedian's) out=: (values, indices) along a dim; torch has no out= without one."""

    def pick(args: tuple, kwargs: dict) -> Out:
        if len(args) < 2 and kwargs.get("dim") is None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        return MEDIAN_OUT

    return pick


def _medians(fn: Any, given: dict, of_all: OpDef, along: OpDef) -> Any:
    """``fn`` (median or nanmedian) of all elements, or (values, indices) along ``dim``."""
    input, dim = given["input"], given["dim"]
    if not isinstance(input, Tensor) or isinstance(dim, bool):
        raise invalid_call(fn, given)
    if dim is None:
        if input.numel():
            _no_bool(input, "median_cpu")
        return apply(of_all, input)
    d = _wrap_dim(dim, input.dim())
    _check_nonempty("median", input, d)
    _no_bool(input, "median_out")
    values, indices = apply(along, input, dim=d, keepdim=bool(given["keepdim"]))
    return getattr(return_types, fn.__name__)((values, indices))


@api.variants("median", out=Out(pick=_median_out("median")))
def median(input: Tensor, dim: int = None, keepdim: bool = False) -> Any:
    """Without ``dim``: the lower middle value of all elements (NaN if any is). With it:
    (values, indices) along ``dim``."""
    return _medians(median, locals(), MEDIAN, MEDIAN_DIM)


MODE_OUT = Out(  # (torch checks the indices first: both wrong, its error names the indices)
    parts=tuple(
        Out("same", "expected scalar type '{result}' but got '{out}' for " + part + " output")
        for part in ("values", "indices")
    )
)


@api.variants("mode", out=MODE_OUT)
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and an index of
    it, the one torch's CPU kernel (``std::sort`` of (value, index) pairs) leaves last."""
    if not isinstance(input, Tensor) or isinstance(dim, bool):
        raise invalid_call(mode, locals())
    d = _wrap_dim(dim, input.dim())
    _check_nonempty("mode", input, d)
    values, indices = apply(MODE, input, dim=d, keepdim=bool(keepdim))
    return return_types.mode((values, indices))


@api.variants("nanmedian", out=Out(pick=_median_out("nanmedian")))
def nanmedian(input: Tensor, dim: int = None, keepdim: bool = False) -> Any:
    """median ignoring NaN: of all elements (NaN if all are), or (values, indices) along ``dim``."""
    return _medians(nanmedian, locals(), NANMEDIAN, NANMEDIAN_DIM)


# -- quantile, nanquantile ----------------------------------------------------------------------
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")
INTERPOLATING = ("linear", "midpoint")  # the modes that lerp between the values below and above
for _name in ("quantile", "nanquantile"):
    OVERLOADS[_name] = tuple(
        f"(Tensor input, {q} q, int dim = None, bool keepdim = False, *, str interpolation = \"linear\", "
        "Tensor out = None)"
        for q in ("Tensor", "float")
    )


def _quantiles(fn: Any, given: dict, ignore_nan: bool) -> Tensor:
    """torch's quantile_out/quantile_compute, composed of the ops torch composes it of (sort, gather,
    lerp_, squeeze_ ...): so its values, graph and gradients (to q too) are theirs."""
    input, q, dim, keepdim = given["input"], given["q"], given["dim"], given["keepdim"]
    interpolation = given["interpolation"]
    if (
        not isinstance(input, Tensor)
        or not isinstance(q, (Tensor, int, float))
        or isinstance(dim, bool)
        or not (dim is None or isinstance(dim, int))
        or not isinstance(interpolation, str)
    ):
        raise invalid_call(fn, given)
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
        q = full((), q, dtype=input.dtype)
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got "
            + interpolation
        )
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    wrapped = _wrap_dim(0 if dim is None else dim, input.dim())
    shape = list(input.shape)
    if dim is not None and input.dim():
        shape[wrapped : wrapped + 1] = [1] if keepdim else []
    elif dim is None:
        shape = [1] * input.dim() if keepdim else []
    if not bool(q.ge(0).logical_and(q.le(1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        reduced = input.flatten()
    elif wrapped == input.dim() - 1:
        reduced = input
    else:
        reduced = input.unsqueeze(-1).transpose(wrapped, -1)
    sorted = sort(reduced).values
    sorted = sorted.view(*shape, sorted.shape[-1]) if shape else sorted.view(sorted.shape[-1])
    if ignore_nan:
        ranks = q * (sorted.isnan().logical_not().sum(-1, True) - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:
        last = sorted.shape[-1] - 1
        scaled, nan = broadcast_tensors(mul_scalar(q, last), sorted.isnan().any(-1, True))  # (mul.Scalar)
        ranks = scaled.masked_fill(nan, last)
    if interpolation in ("lower", "higher", "nearest"):
        {"lower": ranks.floor_, "higher": ranks.ceil_, "nearest": ranks.round_}[interpolation]()
    below = ranks.to(dtypes.int64)
    values = sorted.gather(-1, below)
    if interpolation in INTERPOLATING:
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = ranks.ceil_().to(dtypes.int64)
        values.lerp_(sorted.gather(-1, above), weights)
    if q.dim() == 0:
        values.squeeze_(-1)
    else:
        values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)
    return values


# (torch's out= copies the result in, recording CopyBackwards where the input requires grad: impl
# writes it without a node)
QUANTILE_OUT = Out(
    "same", "quantile() out tensor must be same dtype as the input tensor", differentiable=False
)


@api.variants("quantile", out=QUANTILE_OUT)
@_autocast.policy("fp32")
def quantile(
    input: Tensor, q: Any, dim: int = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """The ``q``-th quantiles (a number or a 0-d or 1-d tensor, in [0, 1]) of all elements or along
    ``dim``, interpolated as ``interpolation`` says; NaN where a lane holds NaN."""
    return _quantiles(quantile, locals(), ignore_nan=False)


@api.variants("nanquantile", out=QUANTILE_OUT)
@_autocast.policy("fp32")
def nanquantile(
    input: Tensor, q: Any, dim: int = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """quantile of the non-NaN values (NaN where a lane holds nothing else)."""
    return _quantiles(nanquantile, locals(), ignore_nan=True)


# -- searchsorted, bucketize ---------------------------------------------------------------------
def _insertion_points(xp: Any, seq: Any, values: Any, right: bool, order: Any) -> Any:
    """Per lane of ``seq`` (rows of an (L, M) array, or its one row for all), where each value of
    the same lane of ``values`` (L, K) goes: torch's lower (upper, ``right``) bound, a binary search
    whose comparisons with NaN are false, so a NaN value goes last and NaN boundaries count as
    above every value. ``order`` (L, M), or (1, M) for every lane, is the sorter: the lane read in
    that order."""
    lanes, m = values.shape[0], seq.shape[-1]
    start = xp.zeros(values.shape, dtype=np.int64)
    end = xp.full(values.shape, m, dtype=np.int64)
    rows = xp.arange(lanes)[:, None] if seq.shape[0] > 1 else 0
    order_rows = rows if order.shape[0] > 1 else 0
    while bool((start < end).any()):
        active = start < end
        mid = start + (end - start) // 2
        at = xp.minimum(mid, m - 1)
        mid_val = seq[rows, order[order_rows, at]]
        below = ~(mid_val > values) if right else ~(mid_val >= values)
        start = xp.where(active & below, mid + 1, start)
        end = xp.where(active & ~below, mid, end)
    return start


def _scalar_tensor(value: bool | int | float, like: Tensor) -> Tensor:
    """A Python number as torch's scalar overload takes it (``scalar_to_tensor``): a 0-d bool,
    int64 or float64 tensor on ``like``'s device that promotes as a tensor, not as a wrapped number
    (300 searched in uint8 boundaries wraps, as in torch)."""
    t = scalar_tensor(value, like)
    t._wrapped_number = False
    return t


SEARCH_OUT = Out(
    "same",
    differentiable=False,
    message="torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) "
    "depending on whether out_int32 flag is True, but we got output tensor's dtype {out} and "
    "out_int32 flag is {int32}",
)


@api.function("searchsorted", out=SEARCH_OUT)
def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """The indices at which ``input``'s values would go into the innermost dim of ``sorted_sequence``
    (the same lane of it, when it has more than one dim) to keep it sorted; no gradient."""
    scalar = isinstance(input, (bool, int, float))
    bad_sorter = sorter is not None and not isinstance(sorter, Tensor)
    if not isinstance(sorted_sequence, Tensor) or not (scalar or isinstance(input, Tensor)) or bad_sorter:
        raise invalid_call(searchsorted, locals())
    values = _scalar_tensor(input, sorted_sequence) if scalar else input
    _check_search(sorted_sequence, values, scalar, right, side, sorter)
    return _searched(sorted_sequence, values, out_int32, bool(right) or side == "right", sorter)


@api.function("bucketize", out=SEARCH_OUT.named("searchsorted"))
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of ``boundaries`` (1-d, sorted) each value of ``input`` falls in; no gradient."""
    scalar = isinstance(input, (bool, int, float))
    if not isinstance(boundaries, Tensor) or not (scalar or isinstance(input, Tensor)):
        raise invalid_call(bucketize, locals())
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


_WHO = "torch.searchsorted(): "


def _check_search(
    seq: Tensor, values: Tensor, scalar: bool, right: bool, side: str | None, sorter: Tensor | None
) -> None:
    """torch's checks of a searchsorted call, in its order."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{_WHO}side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(
                f"{_WHO}side and right can't be set to opposites, got side of left while right was True"
            )
    if seq.dim() == 0:


        raise RuntimeError(f"{_WHO}boundaries tensor should have positive dimension, but got 0 dimension")
    if scalar and seq.dim() != 1:
        raise RuntimeError(
            f"{_WHO}input value can be a scalar only when boundaries tensor dimension is 1, but we got "
            f"boundaries tensor dim({seq.dim()}) and input value's dim(0) numel(1)"
        )
    if seq.dim() != 1 and (seq.dim() != values.dim() or tuple(seq.shape[:-1]) != tuple(values.shape[:-1])):
        raise RuntimeError(
            f"{_WHO}boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
            f"and input value tensor must match, but we got boundaries tensor {list(seq.shape)} and input "
            f"value tensor {list(values.shape)}"
        )
    if sorter is not None:
        if sorter.dtype is not dtypes.int64:
            raise RuntimeError(f"{_WHO}sorter must be a tensor of long dtype but got dtype "
                               f"{dtypes.scalar_type(sorter.dtype)}")
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(f"{_WHO}boundary and sorter must have the same size, but got boundary tensor "
                               f"{list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
        if sorter.numel() and (int(sorter._data.min()) < 0 or int(sorter._data.max()) >= seq.shape[-1]):
            raise RuntimeError(f"{_WHO}sorter index out of range")
    if dtypes.result_type(seq, values) is dtypes.bool_:
        raise dtypes.kernel_missing("searchsorted_out_cpu", dtypes.bool_)


def _searched(seq: Tensor, values: Tensor, out_int32: bool, right: bool, sorter: Tensor | None) -> Tensor:
    """The insertion points, compared in the two tensors' result type."""
    xp, kind, width = namespace_of(seq._data), dtypes.result_type(seq, values).np, seq.shape[-1]
    lanes = int(np.prod(seq.shape[:-1]))  # 1 for a 1-d sequence: its one lane for every value
    flat = values._data.astype(kind).reshape(lanes, -1)
    if width == 0:
        found = xp.zeros(flat.shape, dtype=np.int64)
    else:
        bounds = seq._data.astype(kind).reshape(-1, width)
        order = sorter._data.reshape(-1, width) if sorter is not None else xp.arange(width)[None, :]
        found = _insertion_points(xp, bounds, flat, right, order)
    return Tensor._from_array(found.astype(np.int32 if out_int32 else np.int64).reshape(values.shape))


# -- unique, unique_consecutive: torch records a node whose derivative is not implemented ---------
def _not_differentiable(name: str) -> Any:
    def formula(g: Any, c: Any) -> Any:
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    return {"self": D("", formula)}


def _unique_fwd(xp: Any, a: Any, dim: Any, consecutive: bool) -> tuple:
    """Sorted distinct values (NaNs apart, as torch keeps them), or consecutive runs collapsed;
    along ``dim`` slices compare whole (lexicographically sorted); with inverse indices and counts."""
    if dim is None:
        flat = xp.reshape(a, -1)
        if consecutive:
            starts = xp.concatenate([xp.ones(min(flat.size, 1), bool), flat[1:] != flat[:-1]])
            values, inverse = flat[starts], xp.cumsum(starts) - 1
            counts = xp.diff(xp.append(xp.nonzero(starts)[0], flat.size))
        else:
            found = np.unique(flat, return_inverse=True, return_counts=True, equal_nan=False)
            values, inverse, counts = found
        return values, xp.reshape(inverse, a.shape).astype(np.int64), counts.astype(np.int64)
    moved = xp.moveaxis(a, dim, 0)
    rows = xp.reshape(moved, (moved.shape[0], int(np.prod(moved.shape[1:]))))
    if consecutive:
        starts = xp.ones(rows.shape[0], bool)
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        keep, inverse = xp.nonzero(starts)[0], xp.cumsum(starts) - 1
        counts = xp.diff(xp.append(keep, rows.shape[0]))
    else:
        _, keep, inverse, counts = np.unique(rows, axis=0, return_index=True, return_inverse=True,
                                             return_counts=True)
    values = xp.moveaxis(moved[keep], 0, dim)
    return xp.ascontiguousarray(values), xp.reshape(inverse, -1).astype(np.int64), counts.astype(np.int64)


_UNIQUE_OUTPUTS = ("result", "inverse", "counts")
UNIQUE = OpDef(
    "Unique2Backward0",
    _unique_fwd,
    outputs=_UNIQUE_OUTPUTS,
    derivatives=_not_differentiable("_unique2"),
    aten_name="_unique2",
)
UNIQUE_DIM = OpDef(
    "UniqueDimBackward0", _unique_fwd, outputs=_UNIQUE_OUTPUTS, derivatives=_not_differentiable("unique_dim")
)
UNIQUE_CONSECUTIVE = OpDef(
    "UniqueConsecutiveBackward0", _unique_fwd, outputs=_UNIQUE_OUTPUTS,
    derivatives=_not_differentiable("unique_consecutive"),
)


def _uniques(op: OpDef, input: Tensor, dim: Any, consecutive: bool, inverse: bool, counts: bool) -> Any:
    """``op``'s values, then the inverse indices and counts asked for; torch's checks of ``dim``."""
    if dim is not None and input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = None if dim is None else _wrap_dim(dim, input.dim())
    zero_dims = tuple(input.shape).count(0)
    if d is not None and input.shape[d] == 0 and zero_dims > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if d is not None and input.shape[d] != 0 and zero_dims:
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    values, inverse_indices, counted = apply(op, input, dim=d, consecutive=consecutive)
    picked = (values, *([inverse_indices] if inverse else []), *([counted] if counts else []))
    return picked[0] if len(picked) == 1 else picked


@api.variants("unique")
def unique(
    input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
    dim: Any = None,
) -> Any:
    """torch.unique: the sorted distinct values (torch sorts on the CPU even when not asked), or
    slices along ``dim``; with the inverse indices and the counts if asked."""
    if not isinstance(input, Tensor):
        raise invalid_call(unique, locals(), name="_unique2")
    op = UNIQUE if dim is None else UNIQUE_DIM
    return _uniques(op, input, dim, False, return_inverse, return_counts)


@api.variants("unique_consecutive")
def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: Any = None
) -> Any:
    """Each run of equal consecutive values (slices along ``dim``) collapsed to one."""
    if not isinstance(input, Tensor):
        raise invalid_call(unique_consecutive, locals())
    return _uniques(UNIQUE_CONSECUTIVE, input, dim, True, return_inverse, return_counts)
