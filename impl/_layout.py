"""Stride and layout arithmetic over arrays and (shape, strides) tuples, torch's rules: view
geometry, contiguity, storage extents, and the layout torch's TensorIterator gives an elementwise
result. Foundations: no tensor, no op (the view ops are in ``impl._ops.views``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _memory_format
from impl._xp import namespace_of

VIEW_ERROR = (
    "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
    "two contiguous subspaces). Use .reshape(...) instead."
)


def infer_size(shape: tuple, numel: int) -> tuple[int, ...]:
    """Resolve one ``-1`` in a target shape, with torch's error texts."""
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape [{', '.join(map(str, shape))}] because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def view_strides(old_shape: tuple, old_strides: tuple, new_shape: tuple) -> tuple[int, ...] | None:
    """torch's computeStride: strides of ``new_shape`` over the same memory, or None if impossible."""
    if not old_shape:
        return tuple(1 for _ in new_shape)
    if 0 in old_shape:  # any strides will do: torch keeps the old ones, or else lays out as resize_ does
        return tuple(old_strides) if tuple(new_shape) == tuple(old_shape) else contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride
        ):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def contiguous_strides(shape: tuple) -> tuple[int, ...]:
    """The strides of a fresh contiguous tensor of ``shape`` (sizes of 0 counted as 1, as torch does)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    """torch's is_non_overlapping_and_dense: the elements fill a block of memory exactly, in some
    order of the dimensions (an empty tensor, being contiguous, always does)."""
    if 0 in shape:
        return True
    order = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: strides[d])
    expected = 1
    for d in order:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def preserved_strides(shape: tuple, strides: tuple) -> tuple[int, ...]:
    """The strides torch's ``memory_format=torch.preserve_format`` gives a new tensor like one of
    ``shape`` and ``strides`` (empty_like, clone, zeros_like ...): the same strides when those are
    non-overlapping and dense, else dense strides in the input's order of strides (torch's
    infer_dense_strides: an insertion sort from the innermost dimension in which a stride of 0
    compares as "keep the order" and equal strides put the smaller size first)."""
    if non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    perm = iteration_order(shape, [(shape, strides)])  # innermost first
    ndim = len(shape)
    out, step = [0] * ndim, 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def strided_array(xp: Any, shape: tuple, strides: tuple, dtype: Any, fill: Any = None) -> Any:
    """A new array of ``shape`` laid out with ``strides`` (in elements; dense ones, as
    ``preserved_strides`` gives), filled with ``fill`` unless it is None: torch's empty_strided."""
    shape = tuple(shape)
    if 0 in shape:
        size = 0
    elif tuple(strides) == contiguous_strides(shape):
        return xp.empty(shape, dtype=dtype) if fill is None else xp.full(shape, fill, dtype=dtype)
    else:
        size = 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    memory = xp.empty(size, dtype=dtype) if fill is None else xp.full(size, fill, dtype=dtype)
    return as_strided_array(xp, memory, shape, tuple(strides))


def new_like(xp: Any, a: Any, dtype: Any = None) -> Any:
    """A new (uninitialised) array of ``a``'s shape laid out as torch's preserve_format lays out a
    tensor like ``a`` (empty_like, clone, ``to``): write the values in with ``out[...] = values``."""
    strides = preserved_strides(a.shape, tuple(s // a.itemsize for s in a.strides))
    return strided_array(xp, a.shape, strides, a.dtype if dtype is None else dtype)


def copy_like(xp: Any, a: Any, dtype: Any = None, strides: tuple | None = None) -> Any:
    """A copy of ``a`` (converted to ``dtype`` if given) laid out as torch's preserve_format lays
    out a copy (clone, ``to``), or with ``strides`` where given (a memory format's)."""
    if strides is not None:
        out = strided_array(xp, a.shape, strides, a.dtype if dtype is None else dtype)
    elif a.size and a.base is None and a.flags.c_contiguous:  # a fresh C-ordered array: C order
        return a.astype(a.dtype if dtype is None else dtype, copy=True)
    else:
        out = new_like(xp, a, dtype)
    out[...] = a
    return out


def as_strided_array(xp: Any, a: Any, shape: tuple, strides: tuple) -> Any:
    """A view of ``a``'s memory with ``shape`` and ``strides`` (in elements), writable."""
    return (
        np.lib.stride_tricks.as_strided(a, shape, tuple(s * a.itemsize for s in strides))
        if xp is np
        else xp.lib.stride_tricks.as_strided(a, shape, tuple(s * a.itemsize for s in strides))
    )


def min_storage_size(shape: tuple, strides: tuple, offset: int) -> int:
    """torch's _min_storage_size: the elements a storage needs for this geometry."""
    if 0 in tuple(shape):
        return offset
    return offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))


def addresses(shape: tuple, strides: tuple, offset: int) -> Any:
    """The storage address of each element of a geometry (an int64 array of ``shape``)."""
    out = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        out += np.arange(n).reshape([-1 if i == d else 1 for i in range(len(shape))]) * s
    return out


def flat_storage(a: Any) -> Any:
    """The memory array ``a`` spans, from its first element, as a 1-d array (a view): a fresh
    tensor's storage (its strides are not negative)."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    strides = tuple(s // a.itemsize for s in a.strides)
    return as_strided_array(namespace_of(a), a, (min_storage_size(a.shape, strides, 0),), (1,))


def is_expandable_to(shape: tuple, target: tuple) -> bool:
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target), strict=False):
        if s != 1 and s != t:
            return False
    return True


def _torch_contiguous(shape: tuple, strides: tuple, order: tuple) -> bool:
    """torch's contiguity test for the dimensions taken innermost first in ``order``: size-1
    dimensions have any stride, an empty tensor is contiguous."""
    return 0 in shape or _memory_format.dense_in(shape, strides, order)


def _channels_last_strides(shape: tuple) -> tuple[int, ...]:
    """torch's channels-last strides of a 4-d ``shape`` (N, C, H, W laid out as N, H, W, C)."""
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def _fast_setup_strides(shape: tuple, operands: list) -> tuple[int, ...] | None:
    """The strides of torch's TensorIterator fast setup, when it applies: every operand of the
    result's shape and all of them contiguous (C strides), all channels-last (4-d), or all
    non-overlapping and dense with equal strides (those strides); None otherwise."""
    ndim = len(shape)
    if any(s != shape for s, _ in operands):
        return None
    inner_first = tuple(range(ndim - 1, -1, -1))
    if all(_torch_contiguous(shape, st, inner_first) for _, st in operands):
        return contiguous_strides(shape)
    if ndim == 4 and all(_torch_contiguous(shape, st, (1, 3, 2, 0)) for _, st in operands):
        return _channels_last_strides(shape)
    first = operands[-1][1]
    if all(st == first for _, st in operands) and non_overlapping_and_dense(shape, first):
        return tuple(first)
    return None


def _broadcast_strides(shape: tuple, operand: tuple) -> list[int]:
    """An operand's strides over the result's ``shape``: 0 on the dimensions it is broadcast
    along (new leading ones, and size 1 grown to more)."""
    own_shape, own_strides = operand
    lead = len(shape) - len(own_shape)
    out = [0] * lead
    for i, (n, s) in enumerate(zip(own_shape, own_strides, strict=True)):
        out.append(0 if n == 1 and shape[lead + i] != 1 else s)
    return out


def iteration_order(shape: tuple, operands: list, reduction: bool = False) -> list[int]:
    """torch's TensorIterator reorder_dimensions (and infer_dense_strides, for one operand): the
    dimensions innermost first, sorted by insertion from the last dimension. Two dimensions are
    compared by the first operand that tells them apart: a broadcast (stride 0) dimension tells
    nothing, the smaller stride goes inside, and of equal strides the larger size goes outside.
    ``reduction``: the first operand is a reduction's output, whose reduced (stride 0)
    dimensions go inside the others."""
    strides = [_broadcast_strides(shape, op) for op in operands]

    def should_swap(d0: int, d1: int) -> int:
        for i, st in enumerate(strides):
            s0, s1 = st[d0], st[d1]
            if reduction and i == 0 and (s0 == 0) != (s1 == 0):
                return 1 if s1 == 0 else -1
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[d0], perm[d1])
            if comparison > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif comparison < 0:
                break
    return perm


def elementwise_strides(shape: tuple, operands: list) -> tuple[int, ...]:
    """The strides torch gives the result of an elementwise (TensorIterator) op whose result has
    ``shape``, from its tensor operands' ``(shape, strides)`` (strides in elements, operands in
    torch's order: ``where``'s condition first). The fast setup keeps the operands' common
    layout; otherwise the result is dense with its dimensions in the operands' order of strides
    (``iteration_order``), C strides when that order is the natural one."""
    shape = tuple(shape)
    fast = _fast_setup_strides(shape, operands)
    if fast is not None:
        return fast
    perm = iteration_order(shape, operands)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return contiguous_strides(shape)
    out, step = [0] * len(shape), 1
    for d in perm:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def _c_strided(a: Any) -> bool:
    """Whether array ``a`` has exactly C strides (numpy's C-contiguous flag lets a size-1
    dimension have any stride and an empty array any strides; torch's stride() shows them)."""
    if not a.flags.c_contiguous:
        return False
    if 1 not in a.shape and a.size:
        return True
    step = a.itemsize
    for n, s in zip(reversed(a.shape), reversed(a.strides), strict=True):
        if s != step:
            return False
        step *= max(n, 1)
    return True


def c_ordered(a: Any) -> Any:
    """``a`` with exactly C strides: itself when it has them, else a copy."""
    return a if _c_strided(a) else a.copy()


def elementwise_layout(xp: Any, result: Any, operands: list[tuple[Any, bool]]) -> Any:
    """``result`` of an elementwise op laid out as torch lays it out (``elementwise_strides``),
    copied when numpy laid it out otherwise. ``operands``: each tensor operand's array as the
    user passed it, in torch's order, and whether the op cast it to the common dtype (torch's
    CPU kernels cast such an operand first, a copy laid out as ``.to`` lays it out). When
    every operand has C strides, so has torch's result unless it is empty (a size-1 dimension
    then sorts outside a size-0 one): then only ``result`` is checked."""
    if result.size and all(_c_strided(a) for a, _ in operands):
        return c_ordered(result)
    layouts = []
    for a, cast in operands:
        strides = tuple(s // a.itemsize for s in a.strides)
        layouts.append((a.shape, preserved_strides(a.shape, strides) if cast else strides))
    strides = elementwise_strides(result.shape, layouts)
    if strides == tuple(s // result.itemsize for s in result.strides):
        return result
    out = strided_array(xp, result.shape, strides, result.dtype)
    out[...] = result
    return out
