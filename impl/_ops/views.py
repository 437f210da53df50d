"""View ops: results share memory and the version counter with their base (numpy views).

``view`` follows torch's stride rule (a view is possible only when each group of merged/split
dimensions is contiguous in memory) and raises torch's error otherwise; ``reshape`` views when it
can and copies when it cannot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl._creation import zeros
from impl._layout import VIEW_ERROR, addresses, as_strided_array, min_storage_size, view_strides
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor
from impl._xp import namespace_of


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


def _overlapping_back(g: Any, size: int, out_addresses: Any, in_addresses: Any) -> Any:
    """The gradient where a geometry overlaps itself (see _as_strided_back), values only."""
    xp = namespace_of(g._data)
    storage = xp.zeros(size, dtype=g._data.dtype)
    xp.add.at(storage, xp.asarray(out_addresses), g._data)
    count = np.zeros(size, dtype=np.int64)
    np.add.at(count, in_addresses, 1)
    storage = storage / xp.asarray(np.maximum(count, 1)).astype(storage.dtype)
    return Tensor._from_array(storage[xp.asarray(in_addresses)])


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
