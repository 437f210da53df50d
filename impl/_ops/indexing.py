"""Indexing: ``x[key]`` and ``x[key] = v`` (basic and advanced, index_put), cat, gather,
index_select, index_fill, masked_fill, masked_select and masked_scatter, with torch's errors."""

from __future__ import annotations

import builtins
import functools
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import zeros
from impl._names import type_name
from impl._ops.elementwise import _add_scaled, _plain_alpha, mul_scalar
from impl._ops.inplace import apply_inplace, check_inplace, copy_, fill_
from impl._ops.table import (
    NOT_OPERANDS,
    OWN,
    D,
    OpDef,
    apply,
    auto_linear,
    broadcast_mismatch,
    fill_array,
    linear_part,
)
from impl._ops.views import ALIAS, _slice, select_item, unsqueeze
from impl._signatures import CAT, EXACT, Out, invalid_call
from impl._tensor import Tensor, _wrap_dim
from impl._xp import namespace_of, to_numpy


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
    made on first use; the op table holds one OpDef per arity. (Its formulas move gradients
    about: they hold for complex tensors as they are.)"""

    @functools.cache
    def op(n: int) -> OpDef:
        names = tuple(f"tensors{i}" for i in range(n))
        derivatives = {nm: D(uses, grad(i)) for i, nm in enumerate(names)}
        return OpDef(name, forward, names, derivatives, promote="common", jvp=auto_linear, complex=OWN)

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
    jvp=auto_linear,
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
    jvp=auto_linear,
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
        jvp=auto_linear,
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
    jvp=auto_linear,
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
    jvp=auto_linear,
)
MASKED_FILL = OpDef(
    "MaskedFillBackward0",
    lambda xp, a, mask, value: xp.where(mask._data, fill_array(xp, value, a.dtype), a),
    derivatives={"self": D("mask", lambda g, c: g.masked_fill(c.mask, 0))},
    jvp=linear_part(value=0),
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
    return g.index_select(c.dim, unique).sum()  # of a 0-d grad too (torch's errors for -1)


INDEX_FILL = OpDef(
    "IndexFillBackward0",
    lambda xp, a, dim, index, value, **_: _index_filled(
        xp, a, dim, index._data, fill_array(xp, value, a.dtype)
    ),
    derivatives={"self": D("dim index", _index_fill_self_grad)},
    jvp=linear_part(value=0),
)
INDEX_FILL_TENSOR = OpDef(  # index_fill with a 0-d tensor value, which gets a gradient too
    "IndexFillBackward1",
    lambda xp, a, value, dim, index, **_: _index_filled(xp, a, dim, index._data, value.astype(a.dtype)),
    ("self", "value"),
    {"self": D("dim index", _index_fill_self_grad), "value": D("dim index", _index_fill_value_grad)},
    jvp=auto_linear,
)


def _masked_select_fwd(xp: Any, a: Any, mask: Any) -> Any:
    values, where = xp.broadcast_arrays(a, mask._data)
    return values[where]


def _masked_select_grad(g: Any, c: Any) -> Any:
    """torch's masked_select_backward: zeros of the broadcast shape, the gradient scattered in."""

    shape = tuple(np.broadcast_shapes(c.shape(), tuple(c.mask.shape)))
    return apply(MASKED_SCATTER, zeros(shape, dtype=g.dtype, device=g.device), g, mask=c.mask)


MASKED_SELECT = OpDef(
    "MaskedSelectBackward0",
    _masked_select_fwd,
    derivatives={"self": D("self mask", _masked_select_grad)},
    jvp=auto_linear,
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
    jvp=auto_linear,
)
MASKED_FILL_TENSOR = OpDef(  # masked_fill with a 0-d tensor value, which gets a gradient too
    "MaskedFillBackward1",
    lambda xp, a, value, mask: xp.where(mask._data, value.astype(a.dtype), a),
    ("self", "value"),
    {
        "self": D("mask", lambda g, c: g.masked_fill(c.mask, 0)),
        "value": D("mask", lambda g, c: g.masked_select(c.mask).sum()),  # torch's masked_fill_backward
    },
    jvp=auto_linear,
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


def _index_put_fwd(xp: Any, a: Any, values: Any, key: tuple, accumulate: bool = False) -> Any:
    out = a.copy()

    try:
        if accumulate:  # duplicates add up, in the indices' order
            added = xp.broadcast_to(values.astype(a.dtype, copy=False), out[key].shape)
            combine_at(xp, "add", out, key, added)
        else:
            out[key] = values.astype(a.dtype, copy=False)
    except IndexError as exc:
        if empty_result(a.shape, mask_free(key)):  # torch writes nothing and checks no index
            return out
        raise IndexError(str(exc).replace(" for axis ", " for dimension ")) from None  # numpy's "axis"
    return out


def _values_grad(g: Any, c: Any) -> Any:
    return index_key(g, c.key)


@functools.cache
def index_put_op(n: int, accumulate: bool = False) -> OpDef:
    """IndexPutBackward0 over ``n`` index tensors, each saved (``indices0`` ...) as torch saves
    ``indices``; ``key`` is the numpy key built from them. With ``accumulate`` the values are
    added (self's gradient passes whole), else written (self's gradient is 0 where they went)."""
    uses = " ".join(["key", "accumulate"] + [f"indices{i}" for i in range(n)])
    self_grad = (lambda g, c: g) if accumulate else (lambda g, c: _zero_at(g, c.key))
    return OpDef(
        "IndexPutBackward0",
        lambda xp, a, values, key, accumulate, **indices: _index_put_fwd(xp, a, values, key, accumulate),
        ("self", "values"),
        {"self": D(uses, self_grad), "values": D(uses, _values_grad)},
    )


def _zero_at(g: Any, key: tuple) -> Any:
    return index_put(g, key, 0.0)


def index_put(input: Tensor, key: tuple, values: Any) -> Tensor:
    return apply(index_put_op(0), input, values, key=key, accumulate=False)


def _value_tensor(self: Tensor, value: Any) -> Tensor:
    """torch's valueToTensor: a Python number becomes a 0-d tensor of ``self``'s dtype (a
    one-element fill: see dtypes.check_number)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        # on self's device, as torch's scalarToTensor makes it
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise ValueError("Overflow when unpacking long long")
        return Tensor._from_array(fill_array(namespace_of(self._data), value, self._data.dtype, single=True))
    tensor_type = f"torch.{dtypes.scalar_type(self.dtype)}Tensor"
    raise TypeError(f"can't assign a {type(value).__name__} to a {tensor_type}")


def _drop_leading_ones(shape: tuple) -> tuple:
    """torch's slicePrefix1sSize: the shape without its leading size-1 dims."""
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _copy_to(dst: Tensor, src: Tensor) -> None:
    """torch's indexing copy_to: copy_ when the shapes agree, fill_ from a 0-d value, otherwise
    copy_ from the value viewed without leading ones and expanded to ``dst``."""
    if tuple(dst.shape) == tuple(src.shape):
        copy_(dst, src)
    elif src.dim() == 0:
        fill_(dst, src)
    else:
        src = src.view(_drop_leading_ones(tuple(src.shape)))
        copy_(dst, src if tuple(src.shape) == tuple(dst.shape) else src.expand(tuple(dst.shape)))


def _index_put_(
    self: Tensor, indices: dict[int, Tensor], values: Tensor, accumulate: bool = False, inplace: bool = True
) -> Tensor:
    """index_put_ of ``values`` at tensor indices standing at the given dims of ``self`` (added up
    with ``accumulate``; into a copy unless ``inplace``), with torch's checks in its order: the
    shape, then the dtype (not checked where ATen dispatches to masked_fill_: one bool mask and one
    value), then the bounds (when writing)."""

    if inplace:
        check_inplace(self, (values,))  # autograd's checks come before the kernel's
    key = numpy_key(indices)
    broadcast_indices(mask_free(key))
    target = _indexed_shape(tuple(self.shape), key)
    if target is not None and not _broadcasts_to(tuple(values.shape), target):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to indexing "
            f"result of shape {list(target)}"
        )
    (first,) = indices.values() if len(indices) == 1 else (None,)
    masked_fill = first is not None and first.dtype is dtypes.bool_ and first.dim() > 0
    if values.dtype is not self.dtype and not (masked_fill and values.numel() == 1 and not accumulate):
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{dtypes.scalar_type(self.dtype)} for the destination and {dtypes.scalar_type(values.dtype)} "
            "for the source."
        )
    op, attrs = index_put_op(len(indices), accumulate), {"key": key, "accumulate": accumulate}
    if not inplace:
        return apply(op, self, values, **attrs, **saved_indices(indices))
    _check_bounds(self, key, values, accumulate)
    return apply_inplace(op, self, values, **attrs, **saved_indices(indices))


def _check_bounds(self: Tensor, key: tuple, values: Tensor, accumulate: bool = False) -> None:
    """torch's CPU kernel walks the indexing result in C order and raises at the first index out
    of range, after writing the elements before it (no version bump: the write never finished)."""

    items = mask_free(key)
    found = first_out_of_range(tuple(self.shape), items)
    if found is None:
        return
    at, bad, error = found
    # refused before the kernel runs, or on 'cuda', where the partial write below (the CPU
    # kernel's) does not apply (torch's CUDA kernel asserts on the device): nothing written
    if bad is None or namespace_of(self._data) is not np:
        raise error
    dims = [d for d, k in enumerate(items) if not isinstance(k, slice)]
    for d, a in zip(dims, broadcast_indices(items), strict=True):
        items[d] = np.where(bad, 0, a)
    grids = np.indices(tuple(self.shape), sparse=True)
    coords = [np.broadcast_to(g, tuple(self.shape))[tuple(items)] for g in grids]
    # the result holds the index dims where the first index stands if the indices are adjacent,
    # else first; the failing element has them at ``at`` and every sliced dim at 0
    before = dims[0] if dims == list(range(dims[0], dims[-1] + 1)) else 0
    rest = coords[0].ndim - before - bad.ndim
    stop = int(np.ravel_multi_index((0,) * before + at + (0,) * rest, coords[0].shape))
    written = np.broadcast_to(values._data, coords[0].shape).reshape(-1)[:stop]
    where = tuple(c.reshape(-1)[:stop] for c in coords)
    if accumulate:
        combine_at(np, "add", self._data, where, written)
    else:
        self._data[where] = written
    raise error


def _indices_at_dims(indices: Any, name: str, position: int) -> dict[int, Tensor]:
    """index_put's tuple (or list) of index tensors, by the dim each stands at (a bool mask spans
    its own dims; a uint8 one is read as a mask), with the argument parser's errors."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"{name}(): argument 'indices' (position {position + 1}) must be tuple of Tensors, not "
            f"{type_name(indices)}"
        )
    at: dict[int, Tensor] = {}
    dim = 0
    for i, k in enumerate(indices):
        if not isinstance(k, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {position}, but got {type_name(k)}")
        k = _byte_as_mask(k)
        if k.dtype not in (dtypes.int64, dtypes.int32, dtypes.bool_):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        at[dim] = k
        dim += k.dim() if k.dtype is dtypes.bool_ else 1
    if not at:
        raise RuntimeError("sym_strides() called on an undefined Tensor")
    return at


def _index_put_call(
    self: Tensor, indices: Any, values: Any, accumulate: Any, name: str, inplace: bool, method: bool = True
) -> Any:
    at = _indices_at_dims(indices, name, 0 if method else 1)
    if not isinstance(values, Tensor):
        position = 2 if method else 3
        got = type_name(values)
        raise TypeError(f"{name}(): argument 'values' (position {position}) must be Tensor, not {got}")
    byte_mask = any(k.dtype is dtypes.uint8 for k in indices)
    if byte_mask and values.numel() == 1 and not accumulate:  # (see setitem)
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    consumed = builtins.sum(k.dim() if k.dtype is dtypes.bool_ else 1 for k in at.values())
    if consumed > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {consumed})")
    return _index_put_(self, at, values, bool(accumulate), inplace)


@api.function("index_put")
def put_at_indices(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` written (added, with ``accumulate``) at ``indices``, a
    tuple of index tensors for its first dims (IndexPutBackward0)."""
    if not isinstance(input, Tensor):
        raise invalid_call(put_at_indices, locals(), "index_put")
    return _index_put_call(input, indices, values, accumulate, "index_put", inplace=False, method=False)


@api.method("index_put")
def _index_put_copy(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    return _index_put_call(self, indices, values, accumulate, "index_put", inplace=False)


@api.method("index_put_")
def _index_put_method(self: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    return _index_put_call(self, indices, values, accumulate, "index_put_", inplace=True)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _indexed_shape(shape: tuple, key: tuple) -> tuple | None:
    """The shape ``key`` selects from ``shape`` (integer indices read as in range, so the shape
    check comes before the bounds check as in torch); None where numpy cannot tell."""
    probe = tuple(  # on the host: only the shape is wanted
        k if isinstance(k, slice) else to_numpy(k) if k.dtype.kind == "b" else np.zeros(k.shape, k.dtype)
        for k in key
    )
    try:
        return np.broadcast_to(np.empty((), dtype=bool), shape)[probe].shape
    except (IndexError, ValueError):
        return None


api.function("cat", "concat", "concatenate", out=CAT)(cat)


@api.variants("gather", out=EXACT)
def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(index, Tensor)):
        raise invalid_call(gather, locals())
    dim = _wrap_dim(dim, input.dim())
    if index.numel():  # torch checks the dtype and shape of a non-empty index only
        check_index_dtype(index, "gather(): Expected dtype int32/int64 for index")
        check_gather_shape(input, dim, index)
    size = input.shape[dim] if input.dim() else 1
    idx = index._data.reshape(-1)
    outside = idx[(idx < 0) | (idx >= size)]
    if outside.size:
        raise RuntimeError(f"index {int(outside[0])} is out of bounds for dimension {dim} with size {size}")
    return apply(GATHER, input, dim=dim, index=index)


def check_index_dtype(index: Tensor, message: str) -> None:
    """gather and index_select take an int64 or int32 index."""
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(message)


def check_gather_shape(input: Tensor, dim: int, index: Tensor) -> None:
    """gather's index has input's number of dims (a 0-d tensor counts as 1-d) and is no larger
    than input along every dim but ``dim``."""
    if builtins.max(index.dim(), 1) != builtins.max(input.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(index.dim()):
        if d != dim and index.shape[d] > (input.shape[d] if input.dim() else 1):
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be no larger "
                f"than self {list(input.shape)} apart from dimension {dim}"
            )


@api.variants(
    "index_select", out=Out("same", "index_select(): self and result must have the same scalar type")
)
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(index, Tensor)):
        raise invalid_call(index_select, locals())
    dim = _wrap_dim(dim, input.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if not input.dim() and index.numel() != 1:
        n = index.numel()
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {n} value(s)")
    check_index_dtype(index, "index_select(): Expected dtype int32 or int64 for index")
    size = input.shape[dim] if input.dim() else 1
    idx = index._data.reshape(-1)
    outside = idx[(idx < 0) | (idx >= size)]
    if outside.size:
        # torch's CPU kernel checks dim 1 in its gather path (the second message), others up front
        if dim == 1 and input.dim() >= 2:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(outside[0])} axis_dim={size}")
        raise IndexError("index out of range in self")
    return apply(INDEX_SELECT, input, dim=dim, index=index)


def _take_fwd(xp: Any, a: Any, index: Tensor) -> Any:
    idx = index._data
    return xp.ascontiguousarray(a).reshape(-1)[xp.where(idx < 0, idx + a.size, idx)]


def _take_grad(g: Tensor, c: Any) -> Tensor:
    """put_(accumulate=True) of the gradient into zeros of the input's elements, in order."""
    n = int(np.prod(c.shape(), dtype=np.int64))
    idx = c.index._data.reshape(-1)
    idx = idx + n * (idx < 0)
    flat = accumulate(INDEX_ADD, g.reshape(-1), (n,), (idx,), dim=0, index=Tensor._from_array(idx), alpha=1)
    return flat.view(c.shape())


TAKE = OpDef("TakeBackward0", _take_fwd, derivatives={"self": D("index", _take_grad)})


TAKE_OUT = Out(
    "same",
    "take(): self and out expected to have the same dtype, but got self.dtype = {result} and "
    "out.dtype = {out}",
)


@api.variants("take", out=TAKE_OUT)
def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of ``input`` read as 1-d (row-major) at ``index`` (negative from the end), in
    ``index``'s shape."""
    if not (isinstance(input, Tensor) and isinstance(index, Tensor)):
        raise invalid_call(take, locals())
    if index.dtype is not dtypes.int64:
        got = dtypes.scalar_type(index.dtype)
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    n = input.numel()
    if index.numel() and n == 0:
        raise IndexError("take(): tried to take from an empty tensor")
    idx = to_numpy(index._data).reshape(-1)
    outside = idx[(idx >= n) | (idx < -n)]
    if outside.size:
        first = int(outside[0])
        raise IndexError(f"out of range: tried to access index {first} on a tensor of {n} elements.")
    return apply(TAKE, input, index=index)


@api.variants("masked_fill")
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mask, Tensor)) or isinstance(value, NOT_OPERANDS):
        raise invalid_call(masked_fill, locals())
    check_masked_fill(input, mask, in_place=False)
    if isinstance(value, Tensor):
        check_fill_value(value)
        return apply(MASKED_FILL_TENSOR, input, value, mask=mask)
    return apply(MASKED_FILL, input, mask=mask, value=value)


def check_fill_value(value: Tensor, fill: str = "masked_fill_") -> None:
    """A fill's tensor value: one number (its gradient is the sum of the filled ones')."""
    if value.dim() != 0:
        raise RuntimeError(
            f"{fill} only supports a 0-dimensional value tensor, but got tensor with {value.dim()} "
            "dimension(s)."
        )


@api.variants("index_fill")
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) at ``index`` along ``dim``."""
    if not (isinstance(input, Tensor) and isinstance(index, Tensor)) or isinstance(value, NOT_OPERANDS):
        raise invalid_call(index_fill, locals())
    return _index_fill(input, dim, index, value, apply)


@api.method("index_fill_")
def _index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """index_fill in place (IndexFillBackward0/1 on ``self``, its version bumped)."""
    if not isinstance(index, Tensor) or isinstance(value, NOT_OPERANDS):
        raise invalid_call(index_fill, {"input": self, "dim": dim, "index": index, "value": value})
    check_inplace(self, (value,) if isinstance(value, Tensor) else ())  # autograd's checks come first
    # its index does not broadcast with self: a key, as index_put_'s, says so to apply_inplace
    return _index_fill(self, dim, index, value, functools.partial(apply_inplace, key=()))


def _index_fill(input: Tensor, dim: int, index: Tensor, value: Any, applied: Any) -> Tensor:
    """torch's checks of an index_fill, in its order, then ``applied`` (apply or apply_inplace)."""
    d = _wrap_dim(dim, input.dim())
    if index.dtype is not dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = input.shape[d] if input.dim() else 1
    idx = index._data.reshape(-1)
    outside = idx[(idx < -size) | (idx >= size)]
    if outside.size:
        raise IndexError(f"index {int(outside[0])} is out of bounds for dimension {d} with size {size}")
    if isinstance(value, Tensor):
        check_fill_value(value, "index_fill_")
        return applied(INDEX_FILL_TENSOR, input, value, dim=d, index=index)
    return applied(INDEX_FILL, input, dim=d, index=index, value=value)


@api.method("fill_diagonal_")
def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """torch's fill_diagonal_: ``fill_`` of an as_strided view of the main diagonal (CopySlices on
    ``self``); a tall 2-d matrix with ``wrap`` refills every ``columns + 1`` rows."""
    number = isinstance(fill_value, (bool, int, float, complex)) or (
        isinstance(fill_value, Tensor) and fill_value.dim() == 0
    )
    if not number:
        raise TypeError(
            "fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not "
            f"{type_name(fill_value)}"
        )
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and builtins.any(n != self.shape[0] for n in self.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    for diagonal in _diagonals(self, wrap):
        fill_(diagonal, fill_value)
    return self


def _diagonals(self: Tensor, wrap: bool) -> list[Tensor]:
    """fill_diagonal_'s as_strided views: the main diagonal, then (``wrap``) torch's wrapped one."""
    height, width = self.shape[0], self.shape[1]
    length = builtins.min(height, width)
    step = builtins.sum(self.stride())
    views = [self.as_strided((length,), (step,), self.storage_offset())]
    if wrap and self.dim() == 2 and height > width + 1:
        rest = (self.numel() + width) // (width + 1) - length  # torch's wrap_size
        views.append(self.as_strided((rest,), (step,), self.storage_offset() + self.stride(0) * (width + 1)))
    return views


def check_masked_fill(input: Tensor, mask: Tensor, in_place: bool) -> None:
    """torch's checks, in its order: out of place, the mask and the input broadcast together
    (expand_outplace(mask, self)) before the mask's dtype is looked at; in place, the dtype first,
    then the input and the mask broadcast."""
    shapes = [tuple(input.shape), tuple(mask.shape)] if in_place else [tuple(mask.shape), tuple(input.shape)]
    mismatch = broadcast_mismatch(shapes)
    if mismatch is not None and not in_place:
        raise RuntimeError(mismatch)
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.name.replace('int64', 'long int')}"
        )
    if mismatch is not None:
        raise RuntimeError(mismatch)


@api.variants(
    "masked_select", out=Out("same", "masked_select(): self and result must have the same scalar type")
)
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mask, Tensor)):
        raise invalid_call(masked_select, locals())
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    mismatch = broadcast_mismatch([tuple(mask.shape), tuple(input.shape)])
    if mismatch is not None:
        raise RuntimeError(mismatch)
    return apply(MASKED_SELECT, input, mask=mask)


@api.variants("masked_scatter")
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` holds taking ``source``'s elements in order."""
    if not (isinstance(input, Tensor) and isinstance(mask, Tensor) and isinstance(source, Tensor)):
        raise invalid_call(masked_scatter, locals())
    mismatch = broadcast_mismatch([tuple(mask.shape), tuple(input.shape)])  # torch's checks in its order
    if mismatch is not None:
        raise RuntimeError(mismatch)
    _check_source_dtype(input, source)
    _check_mask_dtype(mask)
    xp = namespace_of(mask._data)
    ones = int(xp.broadcast_to(mask._data, np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))).sum())
    if source.numel() < ones:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(MASKED_SCATTER, input, source, mask=mask)


@api.method("masked_scatter_")
def _masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """masked_scatter in place: torch checks the dtypes of source, then that the mask expands to
    ``self``'s shape (expand's errors), then the mask's dtype and the number of ones (torch's kernel
    counts them as it writes: a short source has filled the first ones when it raises)."""
    if not (isinstance(mask, Tensor) and isinstance(source, Tensor)):
        raise invalid_call(_masked_scatter_, locals())
    check_inplace(self, (source,))
    _check_source_dtype(self, source)
    ones = int(mask.expand(tuple(self.shape))._data.sum())
    _check_mask_dtype(mask)
    if source.numel() < ones:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply_inplace(MASKED_SCATTER, self, source, mask=mask)


def _check_mask_dtype(mask: Tensor) -> None:
    if mask.dtype is not dtypes.bool_:
        found = dtypes.scalar_type(mask.dtype)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {found}")


def _check_source_dtype(self: Tensor, source: Tensor) -> None:
    if source.dtype is not self.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{dtypes.scalar_type(self.dtype)} and {dtypes.scalar_type(source.dtype)}"
        )


def _plain_list(v: Any) -> Any:
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, (list, tuple, range)):
        return [_plain_list(x) for x in v]
    return v


def _is_sequence(k: Any) -> bool:
    """An index item torch reads as a sequence (PySequence_Check, a str aside): it becomes a tensor."""
    return isinstance(k, (list, tuple, range, np.ndarray))


_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch "
    "2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result (Triggered internally "
    "at /__w/pytorch/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)"
)


def _key_items(key: Any) -> tuple:
    """The key as a tuple of items; a list holding slices, None, Ellipsis, sequences or tensors is
    read as a tuple (torch's treatSequenceAsTuple, with its deprecation warning)."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, (list, range)) and len(key) < 32:
        nested = (builtins.slice, list, tuple, range, np.ndarray, Tensor)
        if any(k is None or k is Ellipsis or isinstance(k, nested) for k in key):
            warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=3)
            return tuple(key)
    return (key,)


def _is_integer(k: Any) -> bool:
    """An integer index (a Python or numpy int, or a 0-d integer tensor): torch selects."""
    if isinstance(k, Tensor):
        return k.dim() == 0 and not k.dtype.is_floating_point and k.dtype is not dtypes.bool_
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _byte_as_mask(k: Any) -> Any:
    """A uint8 tensor index is read as a bool mask, with torch's deprecation warning (not for a
    0-d one)."""
    if not (isinstance(k, Tensor) and k.dtype is dtypes.uint8):
        return k
    if k.dim():
        warnings.warn(BYTE_INDEX, UserWarning, stacklevel=4)
    return Tensor._from_array(k._data.astype(bool))


BYTE_INDEX = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)"
)


def _index_tensor(k: Any, xp: Any = np) -> Tensor:
    """An advanced index as a tensor. A sequence (list, tuple, range, numpy array) becomes a new
    one, in ``xp``, the namespace of the indexed tensor's device, where torch makes it: as torch's
    indexing_tensor_from_data, bool and uint8 data keep their dtype and anything else is int64
    (floats truncated)."""
    if isinstance(k, Tensor):
        if k.dtype not in (dtypes.int64, dtypes.int32, dtypes.bool_):  # uint8 is read as bool before
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k
    array = xp.asarray(k if isinstance(k, np.ndarray) else _plain_list(k))
    if array.dtype not in (np.bool_, np.uint8) or array.size == 0:  # [] indexes nothing
        array = array.astype(np.int64)
    return Tensor._from_array(array)


def _dims_consumed(k: Any) -> int:
    """How many of the tensor's dims an index item uses up (a bool mask: its own dims)."""
    if isinstance(k, Tensor) and k.dtype is dtypes.bool_:
        return k.dim()
    return 0 if k is None or k is Ellipsis or isinstance(k, bool) else 1


def check_zero_dim_key(t: Tensor, key: Any) -> None:
    """torch's errors for a lone integer or slice indexing a 0-dim tensor (its single-index paths,
    taken before applySlicing: a tuple key or a tensor index says "too many indices" there)."""
    if t.dim() != 0 or isinstance(key, tuple):
        return
    if isinstance(key, builtins.slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        if key == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                "C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"index {int(key)} is out of bounds for dimension 0 with size 0")


@api.method("__getitem__")
def getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]`` as torch's applySlicing (see ``apply_slicing``), then any tensor/list/bool indices
    index the result at the dims they stand at (IndexBackward0, which saves them)."""
    check_zero_dim_key(t, key)
    out, indices = apply_slicing(t, _key_items(key), skip_full_slices=isinstance(key, tuple))
    if indices:
        return index(out, indices)
    return apply(ALIAS, t) if out is t else out


@api.method("__setitem__")
def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value`` as torch's set_item: applySlicing makes a view of ``self`` (``self``
    itself when nothing is sliced); without tensor indices the value is copied into it
    (``copy_to``), otherwise ``index_put_`` writes the view, so a sliced view gets CopySlices."""
    if key is False:  # torch writes nothing (and checks nothing) for a False key
        return
    check_zero_dim_key(self, key)
    byte_mask = any(isinstance(k, Tensor) and k.dtype is dtypes.uint8 for k in _key_items(key))
    if byte_mask and (not isinstance(value, Tensor) or value.numel() == 1):
        # torch writes a single value through a mask with masked_fill_, which takes bool masks only
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    value = _value_tensor(self, value)
    if key is None or key is True or key is Ellipsis:
        _copy_to(self.unsqueeze(0) if key is not Ellipsis else self, value)
        return
    sliced, indices = apply_slicing(self, _key_items(key), skip_full_slices=True)
    if not indices:
        _copy_to(sliced, value)
        return
    shape = _drop_leading_ones(tuple(value.shape))
    _index_put_(sliced, indices, value.view(shape) if shape != tuple(value.shape) else value)


def apply_slicing(t: Tensor, items: tuple, skip_full_slices: bool) -> tuple[Tensor, dict[int, Tensor]]:
    """torch's applySlicing: integers select, slices slice (a full slice is skipped where torch
    skips it), None and bool scalars unsqueeze; returns the view (``t`` itself when nothing was
    sliced) and the tensor indices left to apply, by the view's dim they stand at."""
    if builtins.sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    xp = namespace_of(t._data)
    items = tuple(_byte_as_mask(_index_tensor(k, xp) if _is_sequence(k) else k) for k in items)
    consumed = builtins.sum(_dims_consumed(k) for k in items)
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    out, dim = t, 0
    indices: dict[int, Tensor] = {}
    for k in items:
        if k is Ellipsis:
            dim += t.dim() - consumed
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, builtins.slice):
            if not (skip_full_slices and _is_full_slice(k, out.shape[dim])):
                out = _slice(out, dim, k.start, k.stop, k.step)
            dim += 1
        elif _is_integer(k):
            out = select_item(out, dim, int(k))
        elif isinstance(k, (bool, np.bool_)) or (
            isinstance(k, Tensor) and k.dim() == 0 and k.dtype is dtypes.bool_
        ):
            out = unsqueeze(out, dim)  # a bool scalar: a new dim
            indices[dim] = k if isinstance(k, Tensor) else Tensor._from_array(xp.asarray(bool(k)))
            dim += 1
        elif isinstance(k, Tensor):
            indices[dim] = _index_tensor(k)
            dim += k.dim() if k.dtype is dtypes.bool_ else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                f"indices (got {type(k).__name__})"
            )
    return out, indices


def _is_full_slice(k: builtins.slice, size: int) -> bool:
    """Whether applySlice skips the slice: its start as written is 0 (a negative start that
    wraps to 0 is still sliced), its step 1 and its stop at or past the end."""
    return k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= size)


@api.method("masked_fill_")
def _masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    check_masked_fill(self, mask, in_place=True)
    if isinstance(value, Tensor):
        check_fill_value(value)
        return apply_inplace(MASKED_FILL_TENSOR, self, value, mask=mask)
    return apply_inplace(MASKED_FILL, self, mask=mask, value=value)


@api.variants(
    "nonzero",
    out=Out(
        "same",
        "nonzero: Expected out tensor to have scalar type Long but got scalar type{out}",
        differentiable=False,
        order="F",
    ),
)
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """The int64 (n, ndim) coordinates of the nonzero elements (a 0-d input: (1, 0) or (0, 0)); with
    ``as_tuple``, one 1-d tensor per dim (a 0-d input counts as 1-d)."""
    if not isinstance(input, Tensor):
        raise invalid_call(nonzero, locals())
    xp = namespace_of(input._data)
    a = input._data
    if as_tuple:
        found = xp.nonzero(xp.reshape(a, (1,)) if a.ndim == 0 else a)
        return tuple(Tensor._from_array(xp.ascontiguousarray(f.astype(np.int64))) for f in found)
    coords = xp.argwhere(a) if a.ndim else xp.zeros((int(bool(a)), 0), np.int64)
    return Tensor._from_array(xp.ascontiguousarray(coords.astype(np.int64)))


@api.variants("argwhere")
def argwhere(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(argwhere, locals())
    return nonzero(input)
