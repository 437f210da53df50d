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
    numel = int(np.prod(old_shape))
    if numel == 0:
        return tuple(int(np.prod(new_shape[i + 1 :])) for i in range(len(new_shape))) if new_shape else ()
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


def _as_view(xp: Any, a: Any, shape: tuple, strides: tuple) -> Any:
    return (
        np.lib.stride_tricks.as_strided(a, shape, tuple(s * a.itemsize for s in strides))
        if xp is np
        else xp.lib.stride_tricks.as_strided(a, shape, tuple(s * a.itemsize for s in strides))
    )


def _expand_fwd(xp: Any, a: Any, size: tuple) -> Any:
    """A writable expanded view: stride 0 on new and broadcast dims (numpy's broadcast_to is read-only)."""
    lead = len(size) - a.ndim
    strides = [0] * lead + [
        0 if (a.shape[i] == 1 and size[lead + i] != 1) else a.strides[i] // a.itemsize for i in range(a.ndim)
    ]
    return _as_view(xp, a, tuple(size), tuple(strides))


def _view_fwd(xp: Any, a: Any, size: tuple) -> Any:
    strides = view_strides(a.shape, tuple(s // a.itemsize for s in a.strides), size)
    if strides is None:
        raise RuntimeError(VIEW_ERROR)
    return _as_view(xp, a, size, strides)


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
    lambda xp, a, dim0, dim1: xp.swapaxes(a, dim0, dim1),
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
    return _as_view(xp, a, a.shape[:dim] + (1,) + a.shape[dim:], tuple(strides[:dim] + [new] + strides[dim:]))


def _unsqueeze_to(g: Any, shape: tuple, dims: Any) -> Any:
    """torch's unsqueeze_to: put back each squeezed dim of ``shape`` (size 1) with unsqueeze, so a
    create_graph gradient records UnsqueezeBackward0 nodes; a dim that was not of size 1 is skipped."""
    for d in sorted(dims):
        if shape and shape[d] == 1:
            g = g.unsqueeze(d)
    return g


def _squeezed(a: Any, dims: Any) -> Any:
    return a.reshape([n for d, n in enumerate(a.shape) if not (d in dims and n == 1)])


UNSQUEEZE = OpDef(
    "UnsqueezeBackward0",
    _unsqueeze_fwd,
    derivatives={"self": D("dim", lambda g, c: g.squeeze(c.dim))},
    view=True,
)
SQUEEZE = OpDef(
    "SqueezeBackward0",
    lambda xp, a: _squeezed(a, range(a.ndim)),
    derivatives={"self": D("", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), range(len(c.shape()))))},
    view=True,
)
SQUEEZE_DIM = OpDef(
    "SqueezeBackward1",
    lambda xp, a, dim: _squeezed(a, (dim,)),
    derivatives={"self": D("dim", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), (c.dim,)))},
    view=True,
)
SQUEEZE_DIMS = OpDef(
    "SqueezeBackward2",
    lambda xp, a, dims: _squeezed(a, dims),
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
AS_STRIDED = OpDef(
    "AsStridedBackward0",
    lambda xp, a, size, stride, offset: _as_view(xp, a.reshape(-1)[offset:], size, stride),
    derivatives={"self": D("size stride offset", lambda g, c: _as_strided_back(g, c))},
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
    """torch's as_strided_backward (of a view of a contiguous base): the gradient, its size-1
    dims squeezed away, copied into its region of zeros the size of the base's storage, read
    back in the base's geometry; differentiable (SqueezeBackward1, CopySlices and
    AsStridedBackward0 in a create_graph graph). A view that overlaps itself adds up instead."""
    from impl._creation import zeros

    shape = tuple(c.shape())
    numel = int(np.prod(shape))
    addresses = _addresses(c)
    if addresses.size != np.unique(addresses).size:
        return _overlapping_back(g, c, numel, shape)
    size, stride = list(c.size), list(c.stride)
    for d in reversed(range(len(size))):
        if size[d] == 1:
            g = g.squeeze(d)
            del size[d], stride[d]
    storage = zeros(numel, dtype=g.dtype, device=g.device)
    storage.as_strided(tuple(size), tuple(stride), c.offset).copy_(g)
    strides = tuple(int(np.prod(shape[d + 1 :])) for d in range(len(shape)))
    return storage.as_strided(shape, strides, 0)


def _addresses(c: Any) -> Any:
    """The storage address of each element of the view (shape ``c.size``)."""
    out = np.full(tuple(c.size), c.offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(c.size, c.stride, strict=True)):
        out += np.arange(n).reshape([-1 if i == d else 1 for i in range(len(c.size))]) * s
    return out


def _overlapping_back(g: Any, c: Any, numel: int, shape: tuple) -> Any:
    """Gradient of a view whose elements share memory: each address gets the sum of the
    gradients of the elements that read it (values only)."""
    from impl._tensor import Tensor
    from impl._xp import namespace_of

    xp = namespace_of(g._data)
    out = xp.zeros(numel, dtype=g._data.dtype)
    xp.add.at(out, xp.asarray(_addresses(c)), g._data)
    return Tensor._from_array(out.reshape(shape))


def sum_to(g: Any, shape: tuple) -> Any:
    """Sum a broadcast gradient back to ``shape`` as torch's at::sum_to (leading dims, then size-1
    dims, kept and viewed away)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    if not shape:  # torch's sum_to: a full sum (SumBackward0) for a 0-d target
        return g.sum()
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
