"""Tensor.unfold(dimension, size, step): every window of ``size`` elements ``step`` apart along
``dimension``, as a view (UnfoldBackward0) with the windows in a new last dim; its backward,
unfold_backward, adds each window's gradient back (UnfoldBackwardBackward0, whose derivative is
unfold again)."""

from __future__ import annotations

from typing import Any

from impl import _api as api
from impl._layout import as_strided_array
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._tensor import Tensor, _wrap_dim


def _unfold_fwd(xp: Any, a: Any, dimension: int, size: int, step: int) -> Any:
    if a.ndim == 0:
        return as_strided_array(xp, a, (size,), (1,))
    strides = [s // a.itemsize for s in a.strides]
    shape = list(a.shape)
    shape[dimension] = (shape[dimension] - size) // step + 1
    return as_strided_array(
        xp, a, (*shape, size), (*strides[:dimension], strides[dimension] * step, *strides[dimension + 1:],
                                strides[dimension]))


def _unfold_backward_fwd(xp: Any, g: Any, input_sizes: tuple, dimension: int, size: int, step: int) -> Any:
    """The window gradients ``g`` (..., windows, ..., size) added into zeros of ``input_sizes``."""
    out = xp.zeros(input_sizes, dtype=g.dtype)
    if not input_sizes:
        out[...] = g.sum()
        return out
    windows = g.shape[dimension]
    flat = out.reshape(input_sizes)
    before = (slice(None),) * dimension
    for j in range(size):
        flat[(*before, slice(j, j + step * (windows - 1) + 1, step))] += g[..., j]
    return out


UNFOLD_BACKWARD = OpDef(
    "UnfoldBackwardBackward0",
    _unfold_backward_fwd,
    ("grad_in",),
    {"grad_in": D("dimension size step", lambda gg, c: unfold(gg, c.dimension, c.size, c.step))},
    jvp=auto_linear,
)
UNFOLD = OpDef(
    "UnfoldBackward0",
    _unfold_fwd,
    derivatives={"self": D("dimension size step", lambda g, c: apply(
        UNFOLD_BACKWARD, g, input_sizes=tuple(c.shape()), dimension=c.dimension, size=c.size, step=c.step))},
    view=True,
    jvp=auto_linear,
)


@api.method("unfold")
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every ``size``-element window of ``input`` along ``dimension``, ``step`` apart,
    in a new last dim."""
    d = _wrap_dim(dimension, max(input.dim(), 1))
    length = input.shape[d] if input.dim() else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(UNFOLD, input, dimension=d, size=size, step=step)
