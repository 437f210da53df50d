"""Distances and similarities, as ATen composes them: ``torch.cdist`` (``_cdist_forward``, node
CdistBackward0; for p = 2 with more than 25 rows, or ``compute_mode='use_mm_for_euclid_dist'``,
``_euclidean_dist`` by a matrix product, node EuclideanDistBackward0 under a view),
``torch.cosine_similarity`` (each input divided by its norm clamped to ``eps``, multiplied,
summed) and ``torch.pairwise_distance`` (``norm(x1 - x2 + eps, p, -1)``, node NormBackward1)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import _autocast, dtypes
from impl import _grad_mode as grad_mode
from impl._ops import norms
from impl._ops.elementwise import add_scalar
from impl._ops.table import D, OpDef, apply, broadcast_mismatch
from impl._tensor import Tensor
from impl._xp import namespace_of, to_numpy

MODES = {
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def _pairs(x1: Any, x2: Any) -> Any:
    """``x1[..., i, :] - x2[..., j, :]`` for every i, j: shape (..., r1, r2, m)."""
    return x1[..., :, None, :] - x2[..., None, :, :]


def _reduce_lanes(values: Any, op: Any) -> Any:
    """The reduction over the last axis, left to right in the dtype (torch's kernel is within an
    ulp of it; it agrees for most row lengths)."""
    acc = np.zeros(values.shape[:-1], values.dtype)
    for i in range(values.shape[-1]):
        acc = op(acc, values[..., i])
    return acc


def _cdist_fwd(xp: Any, x1: Any, x2: Any, p: float) -> Any:
    if not x1.shape[-1]:  # no columns: distances 0
        shape = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2]) + (x1.shape[-2], x2.shape[-2])
        return xp.zeros(shape, x1.dtype)
    with np.errstate(all="ignore"):  # inf and nan come out silently, as in torch
        return xp.asarray(_distances(np.abs(_pairs(to_numpy(x1), to_numpy(x2))), p))


def _distances(diff: np.ndarray, p: float) -> np.ndarray:
    dt = diff.dtype
    if p == 0:
        dist = _reduce_lanes(np.minimum(np.ceil(diff), dt.type(1)), np.add)
    elif p == 1:
        dist = _reduce_lanes(diff, np.add)
    elif p == 2:
        dist = np.sqrt(_reduce_lanes(diff * diff, np.add))
    elif p == math.inf:
        dist = _reduce_lanes(diff, np.maximum)
    else:
        dist = np.power(_reduce_lanes(np.power(diff, dt.type(p)), np.add), dt.type(1 / p))
    return dist.astype(dt)


def _cdist_backward(grad: Any, x1: Any, x2: Any, p: float, dist: Any) -> Any:
    """ATen's _cdist_backward: the gradient of x1 from ``grad`` of shape (..., r1, r2)."""
    g, d = grad[..., None], dist[..., None]
    with np.errstate(all="ignore"):  # inf and nan come out silently, as in torch
        diff = _pairs(x1, x2)
        if p == 0:
            term = np.zeros_like(diff)
        elif p == 1:
            term = g * np.sign(diff)
        elif p < 2:
            term = np.sign(diff) * np.abs(diff) ** (p - 1) * g / d ** (p - 1)
            term = np.where((d == 0) | ((diff == 0) & (p < 1)), 0, term)
        elif p == 2:
            term = np.where(d == 0, 0, g * diff / d)
        elif p == math.inf:
            term = g * np.sign(diff) * (1 - np.minimum(1, np.ceil(np.abs(np.abs(diff) - d))))
        else:
            term = np.where(d == 0, 0, diff * np.abs(diff) ** (p - 2) * g / d ** (p - 1))
        return term.sum(axis=-2).astype(x1.dtype)


def _cdist_grad(which: str) -> Any:
    def formula(g: Any, c: Any) -> Any:
        x1, x2, result, grad = (to_numpy(t._data) for t in (c.x1, c.x2, c.result, g))
        if which == "x1":
            out = _cdist_backward(grad, x1, x2, c.p, result)
        else:
            out = _cdist_backward(np.swapaxes(grad, -1, -2), x2, x1, c.p, np.swapaxes(result, -1, -2))
        return Tensor._from_array(namespace_of(g._data).asarray(out))

    return formula


CDIST = OpDef(
    "CdistBackward0",
    _cdist_fwd,
    ("x1", "x2"),
    {"x1": D("x1 x2 p result", _cdist_grad("x1")), "x2": D("x1 x2 p result", _cdist_grad("x2"))},
    aten_name="_cdist_forward",
)


def _euclidean_fwd(xp: Any, x1: Any, x2: Any) -> Any:
    with np.errstate(all="ignore"):
        return _euclidean(xp, x1, x2)


def _euclidean(xp: Any, x1: Any, x2: Any) -> Any:
    norm1 = (x1 * x1).sum(-1, keepdims=True)
    norm2 = (x2 * x2).sum(-1, keepdims=True)
    left = xp.concatenate([x1 * -2, norm1, xp.ones_like(norm1)], -1)
    right = xp.concatenate([x2, xp.ones_like(norm2), norm2], -1)
    return xp.sqrt(xp.maximum(left @ xp.swapaxes(right, -1, -2), 0))


def _euclidean_grad(which: str) -> Any:
    """ATen's _euclidean_dist_backward (``grad / result``, 0 where the distance is 0)."""

    def formula(g: Any, c: Any) -> Any:
        ratio = g / c.result
        ratio = ratio.masked_fill(c.result == 0, 0)
        if which == "x1":
            return c.x1 * ratio.sum(-1, True) - ratio.matmul(c.x2)
        return c.x2 * ratio.sum(-2, False).unsqueeze(-1) - ratio.mT.matmul(c.x1)

    return formula


EUCLIDEAN_DIST = OpDef(
    "EuclideanDistBackward0",
    _euclidean_fwd,
    ("x1", "x2"),
    {"x1": D("x1 x2 result", _euclidean_grad("x1")), "x2": D("x1 x2 result", _euclidean_grad("x2"))},
)


@api.function("cdist")
@_autocast.policy("fp32")
def cdist(
    x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
) -> Tensor:
    """torch.cdist: the p-norm distance of each row of x1 to each row of x2 (batched)."""
    if compute_mode not in MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {dtypes.scalar_type(x.dtype)}"
            )
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mismatch = broadcast_mismatch([tuple(x1.shape[:-2]), tuple(x2.shape[:-2])])
    if mismatch:
        raise RuntimeError(mismatch)
    if x1.dtype != x2.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.scalar_type(x1.dtype)} but found {dtypes.scalar_type(x2.dtype)}"
        )
    if x1.dtype in (dtypes.float16, dtypes.bfloat16):
        raise dtypes.kernel_missing("cdist", x1.dtype)
    r1, r2, m = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    by_mm = p == 2 and (mode == 1 or (mode == 0 and max(r1, r2) > 25))
    if x1.numel() == 0 or x2.numel() == 0 or m == 0 or not by_mm:
        return apply(CDIST, x1, x2, p=float(p))
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    count = math.prod(batch)
    if count == 1:
        result = apply(EUCLIDEAN_DIST, x1, x2)
    else:
        left = x1.expand(*batch, r1, m).contiguous().view(count, r1, m)
        right = x2.expand(*batch, r2, m).contiguous().view(count, r2, m)
        result = apply(EUCLIDEAN_DIST, left, right)
    return result.view(*batch, r1, r2)


@api.function("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """torch.cosine_similarity: ``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps), dim)``."""
    common = dtypes.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is {dtypes.scalar_type(common)}"
        )
    x1 = x1 if x1.dtype.is_floating_point else x1.to(common)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(common)
    if tuple(x1.shape) != tuple(x2.shape):
        mismatch = broadcast_mismatch([tuple(x1.shape), tuple(x2.shape)])
        if mismatch:
            raise RuntimeError(mismatch)
        shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
        x1, x2 = x1.expand(shape), x2.expand(shape)
    norm1 = norms.vector_norm(x1, 2, dim, True).clone()
    norm2 = norms.vector_norm(x2, 2, dim, True).clone()
    with grad_mode.no_grad():
        norm1.clamp_(min=eps)
        norm2.clamp_(min=eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


NORM = dataclasses.replace(norms.LINALG_VECTOR_NORM, node_name="NormBackward1")  # at::norm's node


@api.function("pairwise_distance")
def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """torch.pairwise_distance: ``norm(x1 - x2 + eps, p, last dim, keepdim)``."""
    last = max(x1.dim(), x2.dim()) - 1
    diff = add_scalar(x1 - x2, eps)  # add.Scalar: AddBackward1
    dims = (last % diff.dim(),) if diff.dim() else None
    return apply(NORM, diff, ord=float(p), dim=dims, keepdim=bool(keepdim), dtype=diff._data.dtype)
