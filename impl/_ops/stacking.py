"""Stacking and splitting: stack, unbind, split and chunk (views with one multi-output node), and
those torch composes of others: broadcast_tensors (expand), hstack, vstack, dstack and
column_stack (cat of the inputs raised to enough dims), tensor_split, hsplit, vsplit and dsplit
(slices).

They are composed here of the same ops as torch's, so their results are the same views or copies
with the same grad_fn names: broadcast_tensors' results are ExpandBackward0 views (an input of
the broadcast shape comes back itself), the stacks one CatBackward0 over the inputs' 1-, 2- or
3-d views (ViewBackward0, UnsqueezeBackward0), the splits SliceBackward0 views, one per piece.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable
from typing import Any

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import dtypes
from impl._graph import Node, input_meta
from impl._ops import indexing as ix
from impl._ops.indexing import cat, tensor_list
from impl._ops.table import _view_creation_meta, apply, broadcast_mismatch
from impl._ops.views import _slice, expand, reshape, unsqueeze
from impl._signatures import CAT, invalid_call
from impl._tensor import Tensor, _wrap_dim, as_int, zeros_of
from impl._warn import warn_once


# -- broadcast_tensors -------------------------------------------------------------------------
@api.function("broadcast_tensors")
def broadcast_tensors(*tensors: Any) -> tuple:
    """The tensors expanded to their common broadcast shape (an input of that shape as itself)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    shapes = [tuple(t.shape) for t in tensors]
    if not shapes:
        return ()
    error = broadcast_mismatch(shapes)
    if error:
        raise RuntimeError(error)
    ndim = builtins.max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + s for s in shapes]
    shape = tuple(builtins.max(sizes) if 0 not in sizes else 0 for sizes in zip(*padded, strict=True))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


# -- hstack / vstack / dstack / column_stack ---------------------------------------------------
def _at_least(t: Tensor, ndim: int) -> Tensor:
    """torch's atleast_{1,2,3}d: a 0-d tensor reshaped to ones, a 1-d one unsqueezed in front (and,
    to 3 dims, behind), a 2-d one, to 3 dims, unsqueezed behind; others as they are."""
    if t.dim() >= ndim:
        return t
    if t.dim() == 0:
        return reshape(t, (1,) * ndim)
    if t.dim() == 1:
        t = unsqueeze(t, 0)
        return unsqueeze(t, -1) if ndim == 3 else t
    return unsqueeze(t, -1)


def _stacked(name: str, tensors: Any, ndim: int) -> list:
    tensors = ix.tensor_list(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return [_at_least(t, ndim) for t in tensors]


@api.function("hstack", out=CAT.named("cat"))
def hstack(tensors: Any) -> Tensor:
    """The tensors (0-d ones as 1-d) concatenated along dim 1, or along dim 0 if they are 1-d."""
    parts = _stacked("hstack", tensors, 1)
    return ix.cat(parts, 0 if parts[0].dim() == 1 else 1)


@api.function("vstack", "row_stack", out=CAT.named("cat"))
def vstack(tensors: Any) -> Tensor:
    """The tensors, raised to at least 2 dims, concatenated along dim 0 (``row_stack``)."""
    return ix.cat(_stacked("vstack", tensors, 2), 0)


@api.function("dstack", out=CAT.named("cat"))
def dstack(tensors: Any) -> Tensor:
    """The tensors, raised to at least 3 dims, concatenated along dim 2."""
    return ix.cat(_stacked("dstack", tensors, 3), 2)


@api.function("column_stack", out=CAT.named("cat"))
def column_stack(tensors: Any) -> Tensor:
    """The tensors side by side as columns: a 0-d or 1-d one reshaped to a column, then hstack."""
    tensors = ix.tensor_list("column_stack", tensors)
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return hstack([reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors])


# -- tensor_split / hsplit / vsplit / dsplit ---------------------------------------------------
def _pieces(input: Tensor, dim: int, bounds: list[int]) -> tuple:
    """The slices of ``input`` along ``dim`` between consecutive ``bounds`` (the last to the end),
    sliced as torch slices: a negative bound counts from the end, one past the end is the end, an
    end before its start gives an empty piece."""
    starts, ends = [0, *bounds], [*bounds, input.shape[dim]]
    return tuple(_slice(input, dim, s, e, 1) for s, e in zip(starts, ends, strict=True))


def _section_bounds(size: int, sections: int) -> list[int]:
    """Where ``sections`` nearly equal pieces of ``size`` start: the first ``size % sections``
    pieces one element longer."""
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    small, extra = divmod(size, sections)
    return [i * small + builtins.min(i, extra) for i in range(1, sections)]


@api.variants("tensor_split")
def tensor_split(
    input: Tensor,
    indices_or_sections: Any = None,
    dim: int = 0,
    *,
    indices: Any = None,
    sections: Any = None,
    tensor_indices_or_sections: Any = None,
) -> tuple:
    """Views of ``input`` split along ``dim`` into ``sections`` nearly equal pieces, or at the
    ``indices`` (a list, or an int64 tensor: 0-d for sections, 1-d for indices)."""
    given = [v for v in (indices_or_sections, indices, sections, tensor_indices_or_sections) if v is not None]
    split = given[0] if len(given) == 1 else None
    if not isinstance(input, Tensor) or not isinstance(split, (int, list, tuple, Tensor)):
        raise invalid_call(tensor_split, locals())
    if input.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if isinstance(split, Tensor):
        if split.dtype != dtypes.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                f"{dtypes.scalar_type(split.dtype)}"
            )
        if split.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {split.dim()} dims"
            )
        split = int(split.item()) if split.dim() == 0 else [int(i) for i in split.tolist()]
    d = _wrap_dim(dim, input.dim())
    if isinstance(split, (list, tuple)):
        return _pieces(input, d, [int(i) for i in split])
    return _pieces(input, d, _section_bounds(input.shape[d], int(split)))


def _split_along(name: str, input: Tensor, split: Any, min_dims: int, dim: int) -> tuple:
    """hsplit/vsplit/dsplit: tensor_split along ``dim``, sections only if they divide the dim."""
    if not isinstance(input, Tensor) or not isinstance(split, (int, list, tuple)):
        raise invalid_call(globals()[name], {"input": input, "indices_or_sections": split})
    if input.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with "
            f"{input.dim()} dimensions!"
        )
    if isinstance(split, int):
        size = input.shape[dim]
        if split == 0 or size % split:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                f"{size} is not divisible by the split_size {split}!"
            )
    return tensor_split(input, split, dim)


@api.variants("hsplit")
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """tensor_split along dim 1 (dim 0 of a 1-d tensor)."""
    dim = 1 if isinstance(input, Tensor) and input.dim() > 1 else 0
    return _split_along("hsplit", input, indices_or_sections, 1, dim)


@api.variants("vsplit")
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """tensor_split along dim 0 of a tensor of at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 2, 0)


@api.variants("dsplit")
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """tensor_split along dim 2 of a tensor of at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 3, 2)


STACK_OUT = dataclasses.replace(CAT, resize_first=True)  # stack_out resizes before cat_out checks


@api.function("stack", out=STACK_OUT)
def stack(tensors: Any, dim: int = 0) -> Tensor:
    tensors = tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(tensors[0].shape):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                f"entry 0 and {list(t.shape)} at entry {i}"
            )
    return apply(ix.stack_op(len(tensors)), *tensors, dim=_wrap_dim(dim, tensors[0].dim() + 1))


class _MultiViewNode(Node):
    """grad_fn shared by the views ``split``/``chunk``/``unbind`` return (one output per view):
    missing gradients are zeros, the pieces are joined back along ``dim``."""

    def __init__(self, dim: int, stacked: bool) -> None:
        super().__init__()
        self.dim, self.stacked = dim, stacked

    def apply(self, grads: tuple) -> tuple:
        if all(g is None for g in grads):
            return (None,)
        parts = [g if g is not None else zeros_of(m) for g, m in zip(grads, self._input_meta, strict=True)]
        return ((stack if self.stacked else cat)(parts, self.dim),)


_MULTI_VIEW_NODES = {
    name: type(name, (_MultiViewNode,), {})
    for name in ("SplitBackward0", "SplitWithSizesBackward0", "UnbindBackward0")
}


def _multi_view(
    input: Tensor, arrays: list, node_name: str, dim: int, stacked: bool, again: Callable[[Tensor], tuple]
) -> tuple:
    """The views ``arrays`` of ``input``, with their shared grad_fn; under forward AD each view's
    tangent the same view of the input's tangent (``again`` makes the views of another tensor)."""
    root = input._base_ if input._base_ is not None else input
    outs = []
    for a in arrays:
        t = Tensor._from_array(a)
        outs.append(t)
        if input._inference:  # torch tracks no view of an inference tensor (as codegen's views)
            t._inference, t._storage = True, input._storage_array()
            continue
        t._base_, t._vc, t._view_version = root, input._vc, input._vc.value
        t._inference = False  # torch's MULTI_OUTPUT_NODE views (see _view_creation_meta)
        t._creation_meta = _view_creation_meta(input, "multiple")
    if grad_mode.is_recording() and input.requires_grad and not input._inference:
        node = _MULTI_VIEW_NODES[node_name](dim, stacked)
        node._next = (input._edge(),)
        node._input_meta = [input_meta(t) for t in outs]
        for i, t in enumerate(outs):
            t._grad_fn_, t._output_nr = node, i
    fw = grad_mode.forward_level
    tangent = grad_mode.tangent_of(input) if fw.token is not None and fw.propagating else None
    if tangent is not None:
        for t, view in zip(outs, again(tangent), strict=True):
            grad_mode.set_tangent(t, view)
    return tuple(outs)


@api.variants("unbind")
def unbind(input: Tensor, dim: int = 0) -> tuple:
    if not isinstance(input, Tensor):
        raise invalid_call(unbind, locals())
    d = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    arrays = [input._data[(builtins.slice(None),) * d + (i, Ellipsis)] for i in range(input.shape[d])]
    return _multi_view(input, arrays, "UnbindBackward0", d, True, lambda t: unbind(t, d))


def _at_least_1d(input: Tensor, op: str) -> None:
    if input.dim() == 0:
        raise RuntimeError(f"{op} expects at least a 1-dimensional tensor")


def _split_sizes(input: Tensor, sizes: list, dim: int) -> tuple:
    """torch.split_with_sizes: views of the given lengths along ``dim``."""
    _at_least_1d(input, "split")
    d = _wrap_dim(dim, input.dim())
    n = input.shape[d]
    if any(size < 0 for size in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={sizes}"
        )
    if builtins.sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {dim}), but got split_sizes={sizes}"
        )
    return _split_views(input, d, sizes, "SplitWithSizesBackward0")


def _split_views(input: Tensor, d: int, sizes: list, node_name: str) -> tuple:
    """Views of consecutive pieces of ``sizes`` along dim ``d``, sharing one node ``node_name``."""
    arrays, start = [], 0
    for size in sizes:
        arrays.append(input._data[(builtins.slice(None),) * d + (builtins.slice(start, start + size),)])
        start += size
    return _multi_view(input, arrays, node_name, d, False, lambda t: _split_views(t, d, sizes, node_name))


@api.variants("split")
def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """torch's Tensor.split: an int is a size (the last piece the rest), a list the pieces' sizes."""
    if not isinstance(input, Tensor):  # torch.split is Python calling the method: what it does
        return input.split(split_size_or_sections, dim)
    if not isinstance(split_size_or_sections, int):
        sizes = split_size_or_sections
        if not isinstance(sizes, (list, tuple)):
            raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, "
                            f"not {type(sizes).__name__}")
        return _split_sizes(input, list(sizes), dim)
    size = split_size_or_sections
    _at_least_1d(input, "split")
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    d = _wrap_dim(dim, input.dim())
    n = input.shape[d]
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = builtins.max(-(-n // size), 1) if size else 1
    return _split_views(input, d, [size] * (count - 1) + [n - size * (count - 1)], "SplitBackward0")


@api.variants("chunk")
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """torch.chunk: ``split`` by ceil(size / chunks); of an empty dim, ``chunks`` empty pieces."""
    if not isinstance(input, Tensor):
        raise invalid_call(chunk, locals())
    chunks = as_int(chunks)
    _at_least_1d(input, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.dim())]
    if n == 0:
        return _split_sizes(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


@api.function("meshgrid")
def meshgrid(*tensors: Any, indexing: Any = None) -> tuple:
    """The grids of 0-d and 1-d tensors, each its input viewed along its own dim and expanded (with
    ``indexing='xy'`` the first two swapped); torch's warning once when ``indexing`` is omitted."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not all(isinstance(t, Tensor) for t in tensors):
        raise invalid_call(meshgrid, {"tensors": tensors, "indexing": indexing})
    if indexing is None:
        warn_once("meshgrid", MESHGRID_WARNING)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    order = "ij" if indexing is None else indexing
    if order not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {order}')
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"{t}\n[ {t.type()}{{{','.join(map(str, t.shape))}}} ]")
    refs = list(tensors)
    swap = order == "xy" and len(refs) >= 2
    if swap:
        refs[0], refs[1] = refs[1], refs[0]
    shape = [t.numel() for t in refs]
    grids = []
    for i, t in enumerate(refs):
        view_shape = [1] * len(refs)
        view_shape[i] = -1
        grids.append(t.view(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


MESHGRID_WARNING = (
    "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)"
)
