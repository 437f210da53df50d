"""put and put_: ``source`` written (or added, with ``accumulate``) into ``input`` read as 1-d at
``index`` (negative from the end), take's inverse, with PutBackward0 (saving accumulate, index and
source) and torch's checks in its order: index dtype, element counts, dtypes, then the bounds, which
torch's CPU kernel checks element by element after writing the ones before (put_ keeps them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._ops.indexing import combine_at, take
from impl._ops.inplace import apply_inplace, check_inplace
from impl._ops.table import D, OpDef, apply
from impl._signatures import invalid_call
from impl._tensor import Tensor
from impl._xp import namespace_of, to_numpy


def _put_fwd(xp: Any, a: Any, source: Any, index: Any, accumulate: bool) -> Any:
    """``a`` with ``source`` put at ``index`` (a tensor, as the op's attribute, or an array)."""
    out = a.copy()
    flat, where = out.reshape(-1), (index._data if isinstance(index, Tensor) else index).reshape(-1)
    values = source.reshape(-1).astype(a.dtype, copy=False)
    if accumulate:  # duplicates add up, in the index's order
        combine_at(xp, "add", flat, (where,), values)
    else:
        flat[where] = values
    return flat.reshape(a.shape)


def _self_grad(g: Any, c: Any) -> Any:
    return g if c.accumulate else put(g, c.index, c.source.new_zeros(()).expand(tuple(c.source.shape)))


PUT = OpDef(
    "PutBackward0",
    _put_fwd,
    ("self", "source"),
    {
        "self": D("accumulate index source", _self_grad),
        "source": D("accumulate index source", lambda g, c: take(g, c.index).reshape(tuple(c.source.shape))),
    },
)


def _first_outside(self: Tensor, index: Tensor) -> int | None:
    """Where in ``index`` (read as 1-d) the first index out of range stands, None if none is."""
    n, idx = self.numel(), to_numpy(index._data).reshape(-1)
    outside = np.flatnonzero((idx >= n) | (idx < -n))
    return int(outside[0]) if outside.size else None


def _check(self: Tensor, index: Any, source: Any, name: str, method: bool) -> int | None:
    if not (isinstance(index, Tensor) and isinstance(source, Tensor)):
        if method:
            raise invalid_call(getattr(Tensor, name), {"self": self, "index": index, "source": source})
        raise invalid_call(put, {"input": self, "index": index, "source": source})
    if index.dtype is not dtypes.int64:
        got = dtypes.scalar_type(index.dtype)
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {got}")
    if source.numel() != index.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got source.numel() = "
            f"{source.numel()}, index.numel() = {index.numel()}"
        )
    if source.dtype is not self.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{dtypes.scalar_type(self.dtype)} and source.dtype = {dtypes.scalar_type(source.dtype)}"
        )
    return _first_outside(self, index) if index.numel() else None


def _out_of_range(self: Tensor, index: Tensor, at: int) -> IndexError:
    bad = int(to_numpy(index._data).reshape(-1)[at])
    return IndexError(f"out of range: tried to access index {bad} on a tensor of {self.numel()} elements.")


def _put_copy(self: Tensor, index: Any, source: Any, accumulate: Any, method: bool) -> Tensor:
    at = _check(self, index, source, "put", method=method)
    if at is not None:
        raise _out_of_range(self, index, at)
    return apply(PUT, self, source, index=index, accumulate=bool(accumulate))


@api.function("put")
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` put at the flat ``index`` (added with ``accumulate``)."""
    if not isinstance(input, Tensor):
        raise invalid_call(put, locals())
    return _put_copy(input, index, source, accumulate, method=False)


@api.method("put")
def _put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    return _put_copy(self, index, source, accumulate, method=True)


@api.method("put_")
def _put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    check_inplace(self, (source,))
    at = _check(self, index, source, "put_", method=True)
    if at is not None:  # the elements before the bad index are written, then the kernel raises
        written = _put_fwd(np, to_numpy(self._data), to_numpy(source._data).reshape(-1)[:at],
                           to_numpy(index._data).reshape(-1)[:at], bool(accumulate))
        self._data[...] = namespace_of(self._data).asarray(written)
        raise _out_of_range(self, index, at)
    return apply_inplace(PUT, self, source, index=index, accumulate=bool(accumulate))
