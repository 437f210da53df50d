"""Joining and gathering ops: cat, stack, gather, index_select, masked_fill, advanced indexing."""

from __future__ import annotations

import functools
from typing import Any

from impl._ops.table import D, OpDef, apply


def _cat_fwd(xp: Any, *arrays: Any, dim: int, sizes: tuple) -> Any:
    return xp.concatenate(arrays, axis=dim)


def _stack_fwd(xp: Any, *arrays: Any, dim: int) -> Any:
    return xp.stack(arrays, axis=dim)


def _cat_grad(i: int) -> Any:
    def grad(g: Any, c: Any) -> Any:
        start = sum(c.sizes[:i])
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
    from impl._xp import namespace_of

    xp = namespace_of(index)
    n = index.ndim
    grids = [xp.arange(s).reshape([-1 if d == k else 1 for d in range(n)]) for k, s in enumerate(index.shape)]
    grids[dim] = index
    return tuple(grids)


def _index_put_acc_fwd(xp: Any, g: Any, shape: tuple, key: tuple) -> Any:
    out = xp.zeros(shape, dtype=g.dtype)
    xp.add.at(out, key, g)
    return out


INDEX_PUT_ACC = OpDef(
    "IndexPutBackward0", _index_put_acc_fwd, derivatives={"self": D("key", lambda g, c: index_key(g, c.key))}
)
INDEX = OpDef(
    "IndexBackward0",
    lambda xp, a, key: a[key],
    derivatives={"self": D("key", lambda g, c: apply(INDEX_PUT_ACC, g, shape=c.shape(), key=c.key))},
)


def index_key(t: Any, key: tuple) -> Any:
    """``t[key]`` for a numpy-ready advanced index ``key`` (IndexBackward0)."""
    return apply(INDEX, t, key=key)


def _gather_fwd(xp: Any, a: Any, dim: int, index: Any) -> Any:
    """torch.gather: the result has the index's shape; off ``dim`` the index may be smaller than
    the input (only the leading part of the input is read), where numpy would broadcast it."""
    if index.ndim == a.ndim:
        a = a[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))]
    return xp.take_along_axis(a, index, axis=dim)


GATHER = OpDef(
    "GatherBackward0",
    lambda xp, a, dim, index: _gather_fwd(xp, a, dim, index._data),
    derivatives={
        "self": D(
            "dim index",
            lambda g, c: apply(INDEX_PUT_ACC, g, shape=c.shape(), key=_gather_key(c.index._data, c.dim)),
        )
    },
)
INDEX_SELECT = OpDef(
    "IndexSelectBackward0",
    lambda xp, a, dim, index: xp.take(a, index._data, axis=dim),
    derivatives={
        "self": D(
            "dim index",
            lambda g, c: apply(
                INDEX_PUT_ACC, g, shape=c.shape(), key=(slice(None),) * c.dim + (c.index._data,)
            ),
        )
    },
)
MASKED_FILL = OpDef(
    "MaskedFillBackward0",
    lambda xp, a, mask, value: xp.where(mask._data, xp.asarray(value, dtype=a.dtype), a),
    derivatives={"self": D("mask", lambda g, c: g.masked_fill(c.mask, 0))},
)
