"""torch's CPU kernels of multi_margin_loss and multilabel_margin_loss (MultiMarginLossBackward0,
MultilabelMarginLossBackward0), loop for loop: the hinge terms summed in the input's dtype per
row, the rows in double for a reduction; their backwards have no derivative (NotImplemented)."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl._ops.elementwise import _no_derivative, zero_grad
from impl._ops.table import NOT_IMPLEMENTED, D, OpDef, apply


def _frames(x: Any) -> tuple[int, int]:
    """(nframe, dim) of torch's shape checks: a 0-d or 1-d input is one frame."""
    if x.ndim <= 1:
        return 1, 1 if x.ndim == 0 else x.shape[0]
    return x.shape[0], x.shape[1]


def _reduced(rows: list[Any], dt: Any, divide: int, reduction: int, out_shape: tuple) -> Any:
    """The per-row sums (already in ``dt``) as torch's kernels reduce them: summed in double,
    divided by ``divide`` (1 or dim) and by the frame count for 'mean'; or each divided."""
    if reduction == 0 and out_shape:
        return np.array([r / dt(divide) for r in rows], dtype=dt).reshape(out_shape)
    total = 0.0
    for r in rows:
        total += float(r)
    total /= divide
    if reduction == 1:
        total /= len(rows)
    return np.array(total, dtype=dt)


# -- multi_margin_loss ----------------------------------------------------------------------------
def _multi_margin_row(row: Any, idx: int, p: int, margin: Any, w: Any) -> tuple[Any, Any]:
    """One frame's sum of ``(margin - x[y] + x[d])^p`` (times ``weight[y]``) over ``d != y`` where
    positive, divided by the class count, in the dtype; and ``z`` per class."""
    dt = row.dtype.type
    total = dt(0)
    z = (margin - row[idx]) + row
    for d in range(row.shape[0]):
        if d != idx and z[d] > 0:
            h = z[d] if p == 1 else z[d] * z[d]
            total = dt(total + (h * w[idx] if w is not None else h))
    return dt(total / dt(row.shape[0])), z


def _multi_margin_fwd(
    xp: Any, x: Any, target: Any, p: int, margin: float, weight: Any, reduction: int
) -> Any:
    nframe, dim = _frames(x)
    rows, t = x.reshape(nframe, dim), target._data.reshape(-1)
    w = None if weight is None else weight._data
    m = x.dtype.type(margin)
    sums = [_multi_margin_row(rows[i], int(t[i]), p, m, w)[0] for i in range(nframe)]
    if reduction == 0 and target.dim() > 0:
        return np.array(sums, dtype=x.dtype)
    total = 0.0
    for s in sums:
        total += float(s)
    return np.array(total / nframe if reduction == 1 else total, dtype=x.dtype)


def _multi_margin_backward_fwd(
    xp: Any, grad: Any, x: Any, target: Any, p: int, margin: float, weight: Any, reduction: int
) -> Any:
    """torch's backward kernel: ``g`` (1 / dim, or 1 / (nframe * dim) for 'mean') or ``2 g z`` at
    each positive term, its negated sum at the target; then times the incoming gradient."""
    nframe, dim = _frames(x)
    dt = x.dtype.type
    rows, t = x.reshape(nframe, dim), target._data.reshape(-1)
    w = None if weight is None else weight._data
    g = dt(1.0 / (nframe * dim) if reduction == 1 else 1.0 / dim)
    out = np.zeros((nframe, dim), dtype=x.dtype)
    for i in range(nframe):
        idx = int(t[i])
        _, z = _multi_margin_row(rows[i], idx, p, dt(margin), w)
        at_target = dt(0)
        for d in range(dim):
            if d != idx and z[d] > 0:
                h = g if p == 1 else dt(2) * g * z[d]
                h = h * w[idx] if w is not None else h
                at_target = dt(at_target - h)
                out[i, d] = h
        out[i, idx] = at_target
    scale = grad.reshape(-1, 1) if reduction == 0 and grad.ndim > 0 else grad.reshape(())
    return (out * scale).astype(x.dtype).reshape(x.shape)


MULTI_MARGIN_OPTIONS = "target p margin weight reduction"


def _options(c: Any, names: str) -> dict:
    return {name: getattr(c, name) for name in names.split()}


def _without_derivative(forward: Any, aten: str) -> OpDef:
    """A backward kernel torch has no derivative of: a gradient taken with create_graph=True
    carries a NotImplemented node, whose backward raises."""
    derivatives = {"grad_output": D("", _no_derivative(aten)), "self": D("", zero_grad)}
    inputs = ("grad_output", "self")
    return OpDef("NotImplemented", forward, inputs, derivatives, qualified_name=NOT_IMPLEMENTED)


MULTI_MARGIN_BACKWARD = _without_derivative(_multi_margin_backward_fwd, "multi_margin_loss_backward")
MULTI_MARGIN_LOSS = OpDef(
    "MultiMarginLossBackward0",
    _multi_margin_fwd,
    derivatives={
        "self": D(
            "self " + MULTI_MARGIN_OPTIONS,
            lambda g, c: apply(MULTI_MARGIN_BACKWARD, g, c.self, **_options(c, MULTI_MARGIN_OPTIONS)),
        )
    },
)
"""``target`` and ``weight`` are attributes: torch's node has an edge for the input only."""


# -- multilabel_margin_loss -----------------------------------------------------------------------
def _labels(t: Any) -> list[int]:
    """A frame's target classes: its entries up to the first negative one."""
    out = []
    for v in t:
        if v < 0:
            break
        out.append(int(v))
    return out


def _multilabel_row(row: Any, labels: list[int]) -> tuple[Any, list[tuple[int, int]]]:
    """One frame's sum (in double, returned in the dtype) of ``1 - x[y] + x[d]`` where positive,
    over its targets ``y`` and non-target classes ``d``; and the (y, d) pairs of those terms."""
    dt = row.dtype.type
    is_target = set(labels)
    total, pairs = 0.0, []
    for y in labels:
        for d in range(row.shape[0]):
            if d not in is_target:
                z = (dt(1) - row[y]) + row[d]
                if z > 0:
                    total += float(z)
                    pairs.append((y, d))
    return dt(total), pairs


def _multilabel_fwd(xp: Any, x: Any, target: Any, reduction: int) -> Any:
    nframe, dim = _frames(x)
    rows, t = x.reshape(nframe, dim), target._data.reshape(nframe, dim)
    sums = [_multilabel_row(rows[i], _labels(t[i]))[0] for i in range(nframe)]
    return _reduced(sums, x.dtype.type, dim, reduction, (nframe,) if target.dim() > 1 else ())


def _multilabel_backward_fwd(xp: Any, grad: Any, x: Any, target: Any, reduction: int) -> Any:
    """torch's backward kernel: ``g`` (1 / dim, or 1 / (nframe * dim) for 'mean') subtracted at the
    target and added at the class of each positive term, then times the incoming gradient."""
    nframe, dim = _frames(x)
    dt = x.dtype.type
    rows, t = x.reshape(nframe, dim), target._data.reshape(nframe, dim)
    g = dt(1.0 / (nframe * dim) if reduction == 1 else 1.0 / dim)
    out = np.zeros((nframe, dim), dtype=x.dtype)
    for i in range(nframe):
        for y, d in _multilabel_row(rows[i], _labels(t[i]))[1]:
            out[i, y] = dt(out[i, y] - g)
            out[i, d] = dt(out[i, d] + g)
    scale = grad.reshape(-1, 1) if reduction == 0 and grad.ndim > 0 else grad.reshape(())
    return (out * scale).astype(x.dtype).reshape(x.shape)


MULTILABEL_MARGIN_BACKWARD = _without_derivative(_multilabel_backward_fwd, "multilabel_margin_loss_backward")
MULTILABEL_MARGIN_LOSS = OpDef(
    "MultilabelMarginLossBackward0",
    _multilabel_fwd,
    derivatives={
        "self": D(
            "self target reduction",
            lambda g, c: apply(MULTILABEL_MARGIN_BACKWARD, g, c.self, target=c.target, reduction=c.reduction),
        )
    },
)
"""``target`` is an attribute: torch's node has an edge for the input only."""
