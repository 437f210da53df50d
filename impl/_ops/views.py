"""View ops: results share memory and the version counter with their base (numpy views).

``view`` follows torch's stride rule (a view is possible only when each group of merged/split
dimensions is contiguous in memory) and raises torch's error otherwise; ``reshape`` views when it
can and copies when it cannot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl._ops.table import D, OpDef, apply

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


def copy_like(xp: Any, a: Any, dtype: Any = None) -> Any:
    """A copy of ``a`` (converted to ``dtype`` if given) laid out as torch's preserve_format lays
    out a copy (clone, ``to``)."""
    if a.size and a.base is None and a.flags.c_contiguous:  # a fresh C-ordered array: C order
        return a.astype(a.dtype if dtype is None else dtype, copy=True)
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


def _expand_fwd(xp: Any, a: Any, size: tuple) -> Any:
    """A writable expanded view (numpy's broadcast_to is read-only) with torch's strides
    (inferExpandGeometry): 0 on a dimension grown from size 1 or new and not of size 1; a new
    dimension of size 1 gets size * stride of the dimension after it (0 for a 0-d tensor's)."""
    lead = len(size) - a.ndim
    strides = [s // a.itemsize for s in a.strides]
    out = [0] * len(size)
    for i in range(len(size) - 1, -1, -1):
        own = i - lead
        if own >= 0:
            out[i] = 0 if (a.shape[own] == 1 and size[i] != 1) else strides[own]
        elif size[i] == 1 and i + 1 < len(size):
            out[i] = size[i + 1] * out[i + 1]
    return as_strided_array(xp, a, tuple(size), tuple(out))


def _view_fwd(xp: Any, a: Any, size: tuple) -> Any:
    strides = view_strides(a.shape, tuple(s // a.itemsize for s in a.strides), size)
    if strides is None:
        raise RuntimeError(VIEW_ERROR)
    return as_strided_array(xp, a, size, strides)


VIEW = OpDef(
    "ViewBackward0", _view_fwd, derivatives={"self": D("", lambda g, c: g.reshape(c.shape()))}, view=True
)
RESHAPE_ALIAS = OpDef(
    "ReshapeAliasBackward0",
    _view_fwd,
    derivatives={"self": D("", lambda g, c: g.reshape(c.shape()))},
    view=True,
)
UNSAFE_VIEW = OpDef(
    "UnsafeViewBackward0",
    lambda xp, a, size: a.reshape(size),
    derivatives={"self": D("", lambda g, c: g.reshape(c.shape()))},
)
TRANSPOSE = OpDef(
    "TransposeBackward0",
    lambda xp, a, dim0, dim1: xp.swapaxes(a, dim0, dim1) if a.ndim else a[...],
    derivatives={"self": D("dim0 dim1", lambda g, c: g.transpose(c.dim0, c.dim1))},
    view=True,
)
T = OpDef("TBackward0", lambda xp, a: a.T, derivatives={"self": D("", lambda g, c: g.t())}, view=True)
PERMUTE = OpDef(
    "PermuteBackward0",
    lambda xp, a, dims: xp.transpose(a, dims),
    derivatives={"self": D("dims", lambda g, c: g.permute(*[int(i) for i in np.argsort(c.dims)]))},
    view=True,
)
EXPAND = OpDef(
    "ExpandBackward0",
    _expand_fwd,
    derivatives={"self": D("", lambda g, c: sum_to(g, c.shape()))},
    view=True,
)


def _unsqueeze_fwd(xp: Any, a: Any, dim: int) -> Any:
    """The new dim's stride is torch's: size * stride of the dim it precedes (1 at the end)."""
    strides = [s // a.itemsize for s in a.strides]
    new = strides[dim] * a.shape[dim] if dim < a.ndim else 1
    shape = a.shape[:dim] + (1,) + a.shape[dim:]
    return as_strided_array(xp, a, shape, tuple(strides[:dim] + [new] + strides[dim:]))


def _unsqueeze_to(g: Any, shape: tuple, dims: Any) -> Any:
    """torch's unsqueeze_to: put back each squeezed dim of ``shape`` (size 1) with unsqueeze, so a
    create_graph gradient records UnsqueezeBackward0 nodes; a dim that was not of size 1 is skipped."""
    for d in sorted(dims):
        if shape and shape[d] == 1:
            g = g.unsqueeze(d)
    return g


def _squeezed(xp: Any, a: Any, dims: Any) -> Any:
    """``a`` without its size-1 dims among ``dims``; the other dims keep their strides, as torch's."""
    kept = [d for d in range(a.ndim) if not (d in dims and a.shape[d] == 1)]
    strides = [s // a.itemsize for s in a.strides]
    return as_strided_array(xp, a, tuple(a.shape[d] for d in kept), tuple(strides[d] for d in kept))


UNSQUEEZE = OpDef(
    "UnsqueezeBackward0",
    _unsqueeze_fwd,
    derivatives={"self": D("dim", lambda g, c: g.squeeze(c.dim))},
    view=True,
)
SQUEEZE = OpDef(
    "SqueezeBackward0",
    lambda xp, a: _squeezed(xp, a, range(a.ndim)),
    derivatives={"self": D("", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), range(len(c.shape()))))},
    view=True,
)
SQUEEZE_DIM = OpDef(
    "SqueezeBackward1",
    lambda xp, a, dim: _squeezed(xp, a, (dim,)),
    derivatives={"self": D("dim", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), (c.dim,)))},
    view=True,
)
SQUEEZE_DIMS = OpDef(
    "SqueezeBackward2",
    lambda xp, a, dims: _squeezed(xp, a, dims),
    derivatives={"self": D("dims", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), c.dims))},
    view=True,
)
SELECT = OpDef(
    "SelectBackward0",
    lambda xp, a, dim, index: a[(slice(None),) * dim + (index, Ellipsis)],
    derivatives={
        "self": D(
            "dim index",
            lambda g, c: _embed(g, c.shape(), (slice(None),) * c.dim + (c.index,), "SelectBackwardBackward0"),
        )
    },
    view=True,
)
SLICE = OpDef(
    "SliceBackward0",
    lambda xp, a, dim, start, end, step: a[(slice(None),) * dim + (slice(start, end, step),)],
    derivatives={
        "self": D(
            "dim start end step",
            lambda g, c: _embed(
                g,
                c.shape(),
                (slice(None),) * c.dim + (slice(c.start, c.end, c.step),),
                "SliceBackwardBackward0",
            ),
        )
    },
    view=True,
)


def _as_strided_fwd(
    xp: Any, a: Any, size: tuple, stride: tuple, offset: int, in_offset: int, storage: Any
) -> Any:
    """A view of ``storage`` (the input's: Tensor._storage_array) from ``offset``; ``in_offset``,
    the input's own storage offset, is for the backward."""
    return as_strided_array(xp, storage[offset:], size, stride)


AS_STRIDED = OpDef(
    "AsStridedBackward0",
    _as_strided_fwd,
    derivatives={"self": D("size stride offset in_offset self.strides", lambda g, c: _as_strided_back(g, c))},
    view=True,
)
ALIAS = OpDef("AliasBackward0", lambda xp, a: a[...], derivatives={"self": D("", lambda g, c: g)}, view=True)


def _embed_fwd(xp: Any, g: Any, shape: tuple, key: tuple) -> Any:
    out = xp.zeros(shape, dtype=g.dtype)
    out[key] = g
    return out


_EMBED_OPS: dict[str, OpDef] = {}


def _embed(g: Any, shape: tuple, key: tuple, name: str) -> Any:
    """Zeros of ``shape`` with ``g`` written at ``key`` (backward of select/slice), differentiable."""
    op = _EMBED_OPS.get(name)
    if op is None:
        op = _EMBED_OPS[name] = OpDef(
            name, _embed_fwd, derivatives={"self": D("key", lambda gg, c: gg[c.key])}
        )
    return apply(op, g, shape=shape, key=key)


def _as_strided_back(g: Any, c: Any) -> Any:
    """torch's as_strided_backward: the gradient of the view (size, stride, offset) written into
    zeros the size of the storage both geometries span, read back in the input's geometry (its
    shape, strides and storage offset); differentiable where neither overlaps itself (the view's
    size-1 dims squeezed first: SqueezeBackward1, CopySlices and AsStridedBackward0 in a
    create_graph graph). Otherwise each address gets the sum of the view's gradients there, and
    each element of the input that sum divided by how many of its elements read it (values only)."""
    from impl._creation import zeros

    shape, in_stride = tuple(c.shape()), tuple(c.strides("self"))
    shared = min(c.in_offset, c.offset)
    in_offset, out_offset = c.in_offset - shared, c.offset - shared
    size = max(min_storage_size(shape, in_stride, in_offset), min_storage_size(c.size, c.stride, out_offset))
    out_addresses = addresses(c.size, c.stride, out_offset)
    in_addresses = addresses(shape, in_stride, in_offset)
    if _overlap(out_addresses) or _overlap(in_addresses):
        return _overlapping_back(g, size, out_addresses, in_addresses)
    out_size, out_stride = list(c.size), list(c.stride)
    for d in reversed(range(len(out_size))):
        if out_size[d] == 1:
            g = g.squeeze(d)
            del out_size[d], out_stride[d]
    storage = zeros(size, dtype=g.dtype, device=g.device)
    storage.as_strided(tuple(out_size), tuple(out_stride), out_offset).copy_(g)
    return storage.as_strided(shape, in_stride, in_offset)


def _overlap(addresses: Any) -> bool:
    return addresses.size != np.unique(addresses).size


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


def _overlapping_back(g: Any, size: int, out_addresses: Any, in_addresses: Any) -> Any:
    """The gradient where a geometry overlaps itself (see _as_strided_back), values only."""
    from impl._tensor import Tensor
    from impl._xp import namespace_of

    xp = namespace_of(g._data)
    storage = xp.zeros(size, dtype=g._data.dtype)
    xp.add.at(storage, xp.asarray(out_addresses), g._data)
    count = np.zeros(size, dtype=np.int64)
    np.add.at(count, in_addresses, 1)
    storage = storage / xp.asarray(np.maximum(count, 1)).astype(storage.dtype)
    return Tensor._from_array(storage[xp.asarray(in_addresses)])


def flat_storage(a: Any) -> Any:
    """The memory array ``a`` spans, from its first element, as a 1-d array (a view): a fresh
    tensor's storage (its strides are not negative)."""
    from impl._xp import namespace_of

    if a.flags.c_contiguous:
        return a.reshape(-1)
    strides = tuple(s // a.itemsize for s in a.strides)
    return as_strided_array(namespace_of(a), a, (min_storage_size(a.shape, strides, 0),), (1,))


def sum_to(g: Any, shape: tuple) -> Any:
    """Sum a broadcast gradient back to ``shape`` as torch's at::sum_to (leading dims, then size-1
    dims, kept and viewed away)."""
    shape = tuple(shape)
    if not shape:  # torch's sum_to: a full sum (SumBackward0) for a 0-d target, even of a 0-d g
        return g.sum()
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    out = g.sum(dims, keepdim=True) if dims else g
    return out.reshape(shape) if tuple(out.shape) != shape else out


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
    if 0 in shape:
        return True
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


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


def iteration_order(shape: tuple, operands: list) -> list[int]:
    """torch's TensorIterator reorder_dimensions (and infer_dense_strides, for one operand): the
    dimensions innermost first, sorted by insertion from the last dimension. Two dimensions are
    compared by the first operand that tells them apart: a broadcast (stride 0) dimension tells
    nothing, the smaller stride goes inside, and of equal strides the larger size goes outside."""
    strides = [_broadcast_strides(shape, op) for op in operands]

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
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
