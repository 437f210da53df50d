"""Joining and gathering ops: cat, stack, gather, index_select, masked_fill, advanced indexing."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from impl._creation import zeros
from impl._ops.elementwise import _add_scaled, _plain_alpha, mul_scalar
from impl._ops.table import D, OpDef, apply, fill_array
from impl._tensor import Tensor, _wrap_dim
from impl._xp import namespace_of


def _cat_fwd(xp: Any, *arrays: Any, dim: int, sizes: tuple) -> Any:
    """The arrays joined along ``dim``, but those whose size is None: empty 1-d tensors that torch
    skips (its legacy rule) among tensors of other dims."""
    return xp.concatenate([a for a, size in zip(arrays, sizes, strict=True) if size is not None], axis=dim)


def _stack_fwd(xp: Any, *arrays: Any, dim: int) -> Any:
    return xp.stack(arrays, axis=dim)


def _cat_grad(i: int) -> Any:
    def grad(g: Any, c: Any) -> Any:
        if c.sizes[i] is None:  # a skipped empty 1-d tensor: an empty gradient of its shape
            return g.narrow(c.dim, 0, 0).reshape(0)
        start = sum(size for size in c.sizes[:i] if size is not None)
        return g.narrow(c.dim, start, c.sizes[i])

    return grad


def _stack_grad(i: int) -> Any:
    return lambda g, c: g.select(c.dim, i)


def _per_arity(name: str, forward: Any, uses: str, grad: Any) -> Any:
    """``op(n)``: the OpDef of a variadic op over ``n`` inputs (``tensors0`` ... ``tensors{n-1}``),
    made on first use; the op table holds one OpDef per arity."""

    @functools.cache
    def op(n: int) -> OpDef:
        names = tuple(f"tensors{i}" for i in range(n))
        derivatives = {nm: D(uses, grad(i)) for i, nm in enumerate(names)}
        return OpDef(name, forward, names, derivatives, promote="common")

    return op


cat_op = _per_arity("CatBackward0", _cat_fwd, "dim sizes", _cat_grad)
stack_op = _per_arity("StackBackward0", _stack_fwd, "dim", _stack_grad)


def _gather_key(index: Any, dim: int) -> tuple:
    """The advanced-indexing key addressing what ``gather(dim, index)`` read."""

    if index.ndim == 0 or not index.size:  # a 0-d index reads as 1-d; an empty one reads nothing
        return (index,)
    xp = namespace_of(index)
    n = index.ndim
    grids = [xp.arange(s).reshape([-1 if d == k else 1 for d in range(n)]) for k, s in enumerate(index.shape)]
    grids[dim] = index
    return tuple(grids)


def combine_at(xp: Any, name: str, target: Any, key: tuple, values: Any) -> None:
    """``target[key] = name(target[key], values)`` for every one of duplicate positions in turn,
    in the key's order (numpy's ``ufunc.at``). cupy's ``at`` covers few ufuncs (not multiply) and
    dtypes (not bool, int8, int16, uint8), so elsewhere the writes go in rounds: round ``r`` writes
    the ``r``-th of each position's duplicates."""
    combine = getattr(xp, name)
    if xp is np:
        combine.at(target, key, values)
        return
    positions = xp.arange(target.size).reshape(target.shape)[key]
    n = positions.size
    flat, where = target.reshape(-1), positions.reshape(-1)
    values = xp.broadcast_to(xp.asarray(values, dtype=target.dtype), positions.shape).reshape(-1)
    order = xp.argsort(where * n + xp.arange(n))  # by position, then in the key's order
    ordered = where[order]
    first = xp.concatenate([xp.ones(min(n, 1), dtype=bool), ordered[1:] != ordered[:-1]])
    rank = xp.arange(n) - xp.maximum.accumulate(xp.where(first, xp.arange(n), 0))
    for r in range(int(rank.max()) + 1 if n else 0):
        chosen = order[rank == r]
        flat[where[chosen]] = combine(flat[where[chosen]], values[chosen])


def _accumulate_fwd(xp: Any, zeros: Any, g: Any, key: tuple, **_: Any) -> Any:
    out = zeros.copy()
    if g.size:  # an empty read may hold indices out of range (torch never looks at them)
        combine_at(xp, "add", out if out.ndim else out.reshape(1), key, g)  # a 0-d target reads as 1-d
    return out


def _accumulating(name: str, source: str, uses: str, grad: Any) -> OpDef:
    """A backward that adds the gradient into zeros at what the forward read (torch's in-place
    accumulate into a fresh zeros tensor: its first edge leads nowhere)."""
    return OpDef(name, _accumulate_fwd, ("self", source), {source: D(uses, grad)})


def accumulate(op: OpDef, g: Any, shape: tuple, key: tuple, **attrs: Any) -> Any:
    """Zeros of ``shape`` with ``g`` added at ``key`` through ``op``."""

    return apply(op, zeros(shape, dtype=g.dtype, device=g.device), g, key=key, **attrs)


INDEX_PUT_ACC = _accumulating("IndexPutImplBackward0", "values", "key", lambda g, c: index_key(g, c.key))


def leading(a: Any, shape: tuple) -> Any:
    """The leading part of ``a`` of ``shape`` (the part a scatter of ``a`` through an index of
    ``shape`` reads); a 0-d array reads as 1-d."""
    if a.ndim != len(shape):
        return a.reshape(-1)[: int(np.prod(shape))].reshape(shape)
    return a[tuple(slice(0, n) for n in shape)]


def _scatter_add_fwd(xp: Any, a: Any, src: Any, dim: int, index: Any, key: tuple) -> Any:
    return _accumulate_fwd(xp, a, leading(src, index._data.shape), key)


# torch's scatter_add (also gather's backward, into zeros); derivatives.yaml: self: grad, src:
# grad.gather(dim, index)
SCATTER_ADD = OpDef(
    "ScatterAddBackward0",
    _scatter_add_fwd,
    ("self", "src"),
    {
        "self": D("", lambda g, c: g),
        "src": D("dim index", lambda g, c: apply(GATHER, g, dim=c.dim, index=c.index)),
    },
)


def _index_add_fwd(
    xp: Any, a: Any, source: Any, key: tuple, alpha: Any = 1, dim: int = 0, **attrs: Any
) -> Any:
    """``a`` with ``source`` times ``alpha`` added at ``key`` (each of duplicate indices adding),
    as torch's CPU kernel computes it: into a self of at most one dim, ``source * alpha`` in the
    dtype, then the sum; into a larger one, with alpha 1 a scatter_add, else one ``add_(alpha=)``
    (a fused multiply-add) per index, in order."""

    if not (a.size and attrs["index"].numel()):  # nothing is added (nor alpha converted)
        return a.copy()
    if a.ndim <= 1 or _plain_alpha(alpha):
        scaled = source if _plain_alpha(alpha) else source * fill_array(xp, alpha, a.dtype)
        return _accumulate_fwd(xp, a, scaled, key)
    wide = a.dtype.kind not in "biuf"  # bfloat16 (ml_dtypes) adds in float32, rounded once
    out, source = (a.astype(xp.float32), source.astype(xp.float32)) if wide else (a.copy(), source)
    typed = fill_array(xp, alpha, a.dtype).astype(out.dtype).item()
    for i, at in enumerate(attrs["index"]._data.reshape(-1).tolist()):
        lead = (slice(None),) * dim
        out[(*lead, at)] = _add_scaled(xp, out[(*lead, at)], source[(*lead, i)], typed)
    return out.astype(a.dtype) if wide else out


def picked_source(g: Any, c: Any) -> Any:
    """derivatives.yaml's gradient of index_add's and index_copy's ``source``: ``source.dim() > 0 ?
    grad.index_select(dim, index).expand_as(source) : grad.index_select(dim, index.squeeze(0))``."""
    shape = c.shape("source")
    if shape:
        return apply(INDEX_SELECT, g, dim=c.dim, index=c.index).expand(shape)
    return apply(INDEX_SELECT, g, dim=c.dim, index=c.index.squeeze(0))


def _index_add_source_grad(g: Any, c: Any) -> Any:
    """``maybe_multiply(picked, alpha)``: a MulBackward1 unless alpha is 1."""

    picked = picked_source(g, c)
    return picked if c.alpha == 1 else mul_scalar(picked, c.alpha)


# torch's index_add (also index_select's backward, into zeros); derivatives.yaml: self: grad
INDEX_ADD = OpDef(
    "IndexAddBackward0",
    _index_add_fwd,
    ("self", "source"),
    {"self": D("", lambda g, c: g), "source": D("dim index alpha", _index_add_source_grad)},
)


def _index_fwd(xp: Any, a: Any, key: tuple, **indices: Any) -> Any:
    if xp is not np:  # cupy wraps an index out of range around where numpy raises: check first
        _raise_out_of_range(a.shape, mask_free(key))
    try:
        return a[key]
    except IndexError as exc:
        items = mask_free(key)
        _raise_out_of_range(a.shape, items)
        if empty_result(a.shape, items):  # torch reads no index, numpy checks them all
            return a[tuple(k if isinstance(k, slice) else k * 0 for k in items)]
        raise IndexError(str(exc).replace(" for axis ", " for dimension ")) from None


def _raise_out_of_range(shape: tuple, items: list) -> None:
    """torch's IndexError for the first index of a mask-free key out of range, if any."""
    found = first_out_of_range(shape, items)
    if found is not None:
        raise found[2] from None


def empty_result(shape: tuple, items: list) -> bool:
    """Whether the dims a mask-free key does not index select nothing (so the result is empty)."""
    sliced = [len(range(*k.indices(shape[d]))) for d, k in enumerate(items) if isinstance(k, slice)]
    return 0 in sliced or 0 in shape[len(items) :]


def mask_free(key: tuple) -> list:
    """The key with each bool mask replaced by the integer indices of its true elements."""
    return [i for k in key for i in ((k,) if isinstance(k, slice) or k.dtype.kind != "b" else k.nonzero())]


def broadcast_indices(items: list) -> list:
    """The index arrays of a mask-free key broadcast together, or torch's error."""
    arrays = [k for k in items if not isinstance(k, slice)]
    xp = namespace_of(arrays[0]) if arrays else np
    try:
        return xp.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
        ) from None


def first_out_of_range(shape: tuple, items: list) -> tuple[tuple, Any, IndexError] | None:
    """torch's CPU index kernels walk the result in C order and stop at the first index out of
    range: its place in the broadcast indices, where the indices are out of range, and torch's
    error, which names the index by its place among the index tensors (not by the dim it
    indexes); None when every index is in range or the result is empty. Indices into an empty dim
    are refused before the kernel runs (place and mask None)."""
    sizes = [shape[d] for d, k in enumerate(items) if not isinstance(k, slice)]
    arrays = broadcast_indices(items)
    if 0 in sizes and arrays[0].size:  # no index is valid for an empty dim (torch's AdvancedIndex)
        return (), None, IndexError("index is out of bounds for dimension with size 0")
    if empty_result(shape, items):
        return None  # the kernel reads no index
    bad = namespace_of(arrays[0]).zeros(arrays[0].shape, dtype=bool)
    for a, n in zip(arrays, sizes, strict=True):
        bad |= (a < -n) | (a >= n)
    if not bad.any():
        return None
    at = np.unravel_index(int(bad.reshape(-1).argmax()), bad.shape)
    pairs = enumerate(zip(arrays, sizes, strict=True))
    i, a, n = next((i, a, n) for i, (a, n) in pairs if not -n <= a[at] < n)
    return at, bad, IndexError(f"index {int(a[at])} is out of bounds for dimension {i} with size {n}")


@functools.cache
def _index_op(n: int) -> OpDef:
    """IndexBackward0 over ``n`` index tensors: each is saved (``indices0`` ...) as torch's
    derivatives.yaml saves ``indices``, so a second backward raises and an index modified in
    place is caught; ``key`` is the numpy key built from them."""
    uses = " ".join(["key"] + [f"indices{i}" for i in range(n)])
    return OpDef(
        "IndexBackward0",
        _index_fwd,
        derivatives={"self": D(uses, lambda g, c: accumulate(INDEX_PUT_ACC, g, c.shape(), c.key))},
    )


def index(t: Any, indices: dict[int, Any]) -> Any:
    """``t`` indexed by tensors at the given dims (the other dims taken whole), as torch's index."""
    return apply(_index_op(len(indices)), t, key=numpy_key(indices), **saved_indices(indices))


def numpy_key(indices: dict[int, Any]) -> tuple:
    """The numpy key for index tensors standing at the given dims (whole slices between them; a
    bool scalar indexes the new dim of size one that applySlicing made for it)."""
    key: list = []
    dim = 0
    while dim <= max(indices):
        idx = indices.get(dim)
        if idx is None:
            key.append(slice(None))
            dim += 1
            continue
        a = idx._data
        if a.dtype == bool and a.ndim == 0:
            a = a.reshape(1).nonzero()[0]
        key.append(a)
        dim += a.ndim if a.dtype == bool else 1
    return tuple(key)


def saved_indices(indices: dict[int, Any]) -> dict[str, Any]:
    """The index tensors as the node saves them (``indices0`` ...), as derivatives.yaml saves
    ``indices``."""
    return {f"indices{i}": idx for i, idx in enumerate(indices.values())}


def index_key(t: Any, key: tuple) -> Any:
    """``t[key]`` for a numpy-ready key (a backward formula's read of what a write addressed)."""
    return apply(_index_op(0), t, key=key)


def _gather_fwd(xp: Any, a: Any, dim: int, index: Any) -> Any:
    """torch.gather: the result has the index's shape; off ``dim`` the index may be smaller than
    the input (only the leading part of the input is read), where numpy would broadcast it. An
    empty index is not checked; a 0-d input or index reads as 1-d."""
    if not index.size:
        return xp.zeros(index.shape, dtype=a.dtype)
    if not (a.ndim and index.ndim):
        return _gather_fwd(xp, a.reshape(-1), 0, index.reshape(-1)).reshape(index.shape)
    if index.ndim == a.ndim:
        a = a[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))]
    return xp.take_along_axis(a, index, axis=dim)


GATHER = OpDef(
    "GatherBackward0",
    lambda xp, a, dim, index: _gather_fwd(xp, a, dim, index._data),
    derivatives={
        "self": D(
            "dim index",
            lambda g, c: accumulate(
                SCATTER_ADD, g, c.shape(), _gather_key(c.index._data, c.dim), dim=c.dim, index=c.index
            ),
        )
    },
)
INDEX_SELECT = OpDef(
    "IndexSelectBackward0",
    lambda xp, a, dim, index: xp.take(a, index._data.reshape(-1), axis=dim) if a.ndim else a.copy(),
    derivatives={
        "self": D(
            "dim index",
            lambda g, c: accumulate(
                INDEX_ADD,
                g,
                c.shape(),
                (slice(None),) * c.dim + (c.index._data.reshape(-1),),
                dim=c.dim,
                index=c.index,
                alpha=1,
            ),
        )
    },
)
MASKED_FILL = OpDef(
    "MaskedFillBackward0",
    lambda xp, a, mask, value: xp.where(mask._data, fill_array(xp, value, a.dtype), a),
    derivatives={"self": D("mask", lambda g, c: g.masked_fill(c.mask, 0))},
)


def _index_filled(xp: Any, a: Any, dim: int, index: Any, value: Any) -> Any:
    """A copy of ``a`` with ``value`` at positions ``index`` along ``dim``."""
    out = a.copy()
    if out.ndim == 0:
        if index.size:
            out[...] = value
        return out
    out[(slice(None),) * dim + (index.reshape(-1),)] = value
    return out


def _index_fill_self_grad(g: Any, c: Any) -> Any:
    return g.index_fill(c.dim, c.index, 0)


def _index_fill_value_grad(g: Any, c: Any) -> Any:
    """torch's ``grad.index_select(dim, unique(index)).sum()``: each filled position counts once."""

    xp = namespace_of(c.index._data)
    unique = Tensor._from_array(xp.unique(c.index._data.reshape(-1)))
    return (g.index_select(c.dim, unique) if g.dim() else g).sum()


INDEX_FILL = OpDef(
    "IndexFillBackward0",
    lambda xp, a, dim, index, value: _index_filled(xp, a, dim, index._data, fill_array(xp, value, a.dtype)),
    derivatives={"self": D("dim index", _index_fill_self_grad)},
)
INDEX_FILL_TENSOR = OpDef(  # index_fill with a 0-d tensor value, which gets a gradient too
    "IndexFillBackward1",
    lambda xp, a, value, dim, index: _index_filled(xp, a, dim, index._data, value.astype(a.dtype)),
    ("self", "value"),
    {"self": D("dim index", _index_fill_self_grad), "value": D("dim index", _index_fill_value_grad)},
)


def _masked_select_fwd(xp: Any, a: Any, mask: Any) -> Any:
    values, where = xp.broadcast_arrays(a, mask._data)
    return values[where]


def _masked_select_grad(g: Any, c: Any) -> Any:
    """torch's masked_select_backward: zeros of the broadcast shape, the gradient scattered in."""

    shape = tuple(np.broadcast_shapes(c.shape(), tuple(c.mask.shape)))
    return apply(MASKED_SCATTER, zeros(shape, dtype=g.dtype, device=g.device), g, mask=c.mask)


MASKED_SELECT = OpDef(
    "MaskedSelectBackward0", _masked_select_fwd, derivatives={"self": D("self mask", _masked_select_grad)}
)


def _masked_scatter_fwd(xp: Any, a: Any, source: Any, mask: Any) -> Any:
    """``a`` (broadcast with the mask) with the mask's positions taking ``source``'s first elements."""
    where = xp.broadcast_to(mask._data, np.broadcast_shapes(a.shape, mask.shape))  # shapes: host tuples
    out = xp.broadcast_to(a, where.shape).copy()
    out[where] = source.reshape(-1)[: int(where.sum())]
    return out


def _masked_scatter_backward_fwd(xp: Any, g: Any, mask: Any, sizes: tuple) -> Any:
    """The gradient at the mask's positions, in order, then zeros, in the source's shape."""
    where = xp.broadcast_to(mask._data, g.shape)
    out = xp.zeros(int(np.prod(sizes)), dtype=g.dtype)
    picked = g[where]
    out[: picked.size] = picked
    return out.reshape(sizes)


def _masked_scatter_backward_grad(gg: Any, c: Any) -> Any:
    """derivatives.yaml: ``zeros_like(grad_output).masked_scatter(mask, grad)``."""

    base = zeros(c.shape("grad_output"), dtype=gg.dtype, device=gg.device)
    return apply(MASKED_SCATTER, base, gg, mask=c.mask)


MASKED_SCATTER_BACKWARD = OpDef(
    "MaskedScatterBackwardBackward0",
    _masked_scatter_backward_fwd,
    ("grad_output",),
    {"grad_output": D("mask", _masked_scatter_backward_grad)},
)


def _masked_scatter_source_grad(g: Any, c: Any) -> Any:
    return apply(MASKED_SCATTER_BACKWARD, g, mask=c.mask, sizes=c.shape("source"))


MASKED_SCATTER = OpDef(
    "MaskedScatterBackward0",
    _masked_scatter_fwd,
    ("self", "source"),
    {
        "self": D("mask", lambda g, c: g.masked_fill(c.mask, 0)),
        "source": D("mask", _masked_scatter_source_grad),
    },
)
MASKED_FILL_TENSOR = OpDef(  # masked_fill with a 0-d tensor value, which gets a gradient too
    "MaskedFillBackward1",
    lambda xp, a, value, mask: xp.where(mask._data, value.astype(a.dtype), a),
    ("self", "value"),
    {
        "self": D("mask", lambda g, c: g.masked_fill(c.mask, 0)),
        "value": D("mask", lambda g, c: g.masked_select(c.mask).sum()),  # torch's masked_fill_backward
    },
)


def tensor_list(name: str, tensors: Any) -> list:
    """The tensors of ``cat``/``stack``'s list argument, refused as torch's parser refuses them."""
    if not isinstance(tensors, (list, tuple)):
        found = type(tensors).__name__
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {found}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def _legacy_empty(t: Tensor) -> bool:
    """A tensor of shape (0,), which cat skips among tensors of other dims (torch's legacy rule)."""
    return t.dim() == 1 and t.numel() == 0


def cat(tensors: Any, dim: int = 0) -> Tensor:
    tensors = tensor_list("cat", tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    nonempty = [t for t in tensors if not _legacy_empty(t)]
    ref = nonempty[0] if nonempty else tensors[0]
    d = _wrap_dim(dim, ref.dim())
    for i, t in enumerate(nonempty):
        if t.dim() != ref.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.dim()} and {t.dim()}")
        for k in range(ref.dim()):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list."
                )
    # (an empty 1-d tensor among tensors of other dims is skipped: its size None)
    sizes = tuple(None if _legacy_empty(t) and ref.dim() != 1 else t.shape[d] for t in tensors)
    return apply(cat_op(len(tensors)), *tensors, dim=d, sizes=sizes)
