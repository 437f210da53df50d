"""select_scatter, slice_scatter and diagonal_scatter: a copy of the input with ``src`` written
into one of its views (select, slice or diagonal), with torch's errors (the view's, then
``expected src to have a size equal to the slice of self``); ``src`` of another dtype is cast.
derivatives.yaml: self's gradient is the gradient with that view zeroed, src's the view of it."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any

from impl import _api as api
from impl._creation import zeros_like
from impl._ops.reductions import check_differentiable
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._ops.views import _slice
from impl._signatures import EXACT, invalid_call
from impl._tensor import Tensor, _wrap_dim


def _select_view(t: Tensor, dim: int, index: int) -> Tensor:
    return t.select(dim, index)


def _slice_view(t: Tensor, dim: int, start: Any, end: Any, step: int) -> Tensor:
    return _slice(t, dim, start, end, step)


def _diagonal_view(t: Tensor, offset: int, dim1: int, dim2: int) -> Tensor:
    return t.diagonal(offset, dim1, dim2)


def _written(xp: Any, a: Any, src: Any, view: Callable, args: tuple) -> Any:
    out = a.copy()
    view(Tensor._from_array(out), *args)._data[...] = src  # a numpy view of ``out``
    return out


def _op(name: str, view: Callable) -> OpDef:
    def self_grad(g: Any, c: Any) -> Any:
        return apply(getattr(sys.modules[__name__], name.upper()), g, zeros_like(view(g, *c.args)),
                     view=view, args=c.args)

    return OpDef(
        f"{name.title().replace('_', '')}Backward0",
        lambda xp, a, src, view, args: _written(xp, a, src, view, args),
        ("self", "src"),
        {"self": D("args", self_grad), "src": D("args", lambda g, c: view(g, *c.args))},
        jvp=auto_linear,
    )


SELECT_SCATTER = _op("select_scatter", _select_view)
SLICE_SCATTER = _op("slice_scatter", _slice_view)
DIAGONAL_SCATTER = _op("diagonal_scatter", _diagonal_view)


def _scattered(op: OpDef, input: Tensor, src: Tensor, view: Callable, args: tuple) -> Tensor:
    """torch's checks: the view's own, src's shape against it, then autograd's."""
    shape = list(view(input, *args).shape)
    if list(src.shape) != shape:
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
            f"slice size = {shape}"
        )
    check_differentiable(src, input.dtype)  # an integer result of a src requiring grad
    return apply(op, input, src, view=view, args=args)


@api.variants("select_scatter")
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(src, Tensor)):
        raise invalid_call(select_scatter, locals())
    return _scattered(SELECT_SCATTER, input, src, _select_view, (dim, index))


@api.variants("slice_scatter", out=dataclasses.replace(EXACT, aten="aten::slice_scatter"))  # (the one out=)
def slice_scatter(
    input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(src, Tensor)):
        raise invalid_call(slice_scatter, locals())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _scattered(SLICE_SCATTER, input, src, _slice_view, (_wrap_dim(dim, input.dim()), start, end, step))


@api.variants("diagonal_scatter")
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(src, Tensor)):
        raise invalid_call(diagonal_scatter, locals())
    return _scattered(DIAGONAL_SCATTER, input, src, _diagonal_view, (offset, dim1, dim2))
