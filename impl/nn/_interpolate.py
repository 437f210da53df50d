"""nn.functional.interpolate (and nn.Upsample, UpsamplingNearest2d, UpsamplingBilinear2d and the
deprecated F.upsample*) for mode 'nearest' on 3-d and 4-d inputs and 'bilinear' (align_corners) on
4-d ones, with ATen's source indices and weights (upsample_nearest*,
upsample_bilinear2d: UpsampleNearest2DBackward0, UpsampleBilinear2DBackward0) and their backward
ops, which scatter-add the gradient in the order of the output (torch's CPU loops). Bilinear
values are within an ulp or two of torch's: its CPU kernel's order of rounding is not reproduced."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from impl._ops.elementwise import zero_grad
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._tensor import Tensor


def _scale(in_size: int, out_size: int, scale: float | None, align_corners: bool) -> np.float32:
    """area_pixel_compute_scale (as ATen's float accumulation type for float32)."""
    if align_corners:
        return np.float32((in_size - 1) / (out_size - 1)) if out_size > 1 else np.float32(0)
    if scale is not None and scale > 0:
        return np.float32(1.0 / scale)
    return np.float32(in_size / out_size)


def _nearest_index(in_size: int, out_size: int, scale: float | None) -> Any:
    """nearest_idx: the identity, a halving, or ``min(floor(i * scale), in_size - 1)`` in float."""
    i = np.arange(out_size)
    if out_size == in_size:
        return i
    if out_size == 2 * in_size:
        return i >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(in_size / out_size)
    return np.minimum(np.floor(i.astype(np.float32) * s).astype(np.int64), in_size - 1)


def _linear_taps(in_size: int, out_size: int, scale: float | None, align_corners: bool, dtype: Any) -> tuple:
    """(index0, index1, weight0, weight1) along one dimension, as ATen's compute_indices_weights."""
    s = _scale(in_size, out_size, scale, align_corners)
    i = np.arange(out_size).astype(np.float32)
    real = s * i if align_corners else np.maximum(s * (i + np.float32(0.5)) - np.float32(0.5), np.float32(0))
    i0 = real.astype(np.int64)
    i1 = np.where(i0 < in_size - 1, i0 + 1, i0)
    lam1 = (real - i0.astype(np.float32)).astype(dtype)
    return i0, i1, (np.ones((), dtype) - lam1).astype(dtype), lam1


def _taps(shape: tuple, out: tuple, scales: tuple, mode: str, align_corners: bool, dtype: Any) -> list:
    """Per spatial dimension, the (index, weight) pairs of the output's sources."""
    taps = []
    for n, (size, o) in enumerate(zip(shape[2:], out, strict=True)):
        if mode == "nearest":
            taps.append([(_nearest_index(size, o, scales[n]), None)])
        else:
            i0, i1, w0, w1 = _linear_taps(size, o, scales[n], align_corners, dtype)
            taps.append([(i0, w0), (i1, w1)])
    return taps


def _corners(taps: list) -> list:
    """Every combination of one tap per dimension, in ATen's order (h0w0, h0w1, h1w0, h1w1)."""
    combos: list = [[]]
    for dim in taps:
        combos = [c + [t] for c in combos for t in dim]
    return combos


def _key(corner: list) -> tuple:
    k = len(corner)
    spatial = (idx.reshape((-1,) + (1,) * (k - 1 - n)) for n, (idx, _) in enumerate(corner))
    return (slice(None), slice(None), *spatial)


def _weight(corner: list) -> Any:
    k = len(corner)
    out = None
    for n, (_, w) in enumerate(corner):
        if w is None:
            continue
        w = w.reshape((-1,) + (1,) * (k - 1 - n))
        out = w if out is None else out * w
    return out


def _forward(xp: Any, a: Any, out: tuple, scales: tuple, mode: str, align_corners: bool) -> Any:
    taps = _taps(a.shape, out, scales, mode, align_corners, a.dtype)
    if mode == "nearest":
        return a[_key(_corners(taps)[0])]
    result = None
    if len(taps) == 2:  # h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11)
        (h0, hw0), (h1, hw1) = taps[0]
        (w0, ww0), (w1, ww1) = taps[1]
        rows = []
        for h in (h0, h1):
            x0 = a[:, :, h.reshape(-1, 1), w0.reshape(1, -1)]
            x1 = a[:, :, h.reshape(-1, 1), w1.reshape(1, -1)]
            rows.append(x0 * ww0.reshape(1, -1) + x1 * ww1.reshape(1, -1))
        result = rows[0] * hw0.reshape(-1, 1) + rows[1] * hw1.reshape(-1, 1)
    return result.astype(a.dtype)



def _backward(xp: Any, g: Any, self: Any, out: tuple, scales: tuple, mode: str, align_corners: bool) -> Any:
    """The gradient scattered back: each output position adds its weighted gradient to its sources,
    in the output's order."""
    taps = _taps(self.shape, out, scales, mode, align_corners, g.dtype)
    grad = xp.zeros(self.shape, dtype=g.dtype)
    corners = _corners(taps)
    flat_out = int(np.prod(out))
    parts = []
    for corner in corners:
        grid = tuple(np.broadcast_to(i, out) for i in _key(corner)[2:])
        idx = np.ravel_multi_index(grid, self.shape[2:]).reshape(-1)
        w = _weight(corner)
        values = g if w is None else g * np.broadcast_to(w, out)
        parts.append((idx, values.reshape(*g.shape[:2], flat_out)))
    view = grad.reshape(*self.shape[:2], -1)
    for j in range(flat_out):  # output order; each output's corners in ATen's order
        for idx, values in parts:
            view[:, :, idx[j]] += values[:, :, j]
    return grad


@functools.cache
def _ops(mode: str, k: int) -> tuple[OpDef, OpDef]:
    name = f"Upsample{'Nearest' if mode == 'nearest' else 'Bilinear'}{k}D"
    attrs = "out scales mode align_corners"

    def options(c: Any) -> dict:
        return {"out": c.out, "scales": c.scales, "mode": c.mode, "align_corners": c.align_corners}

    backward = OpDef(
        name + "BackwardBackward0",
        _backward,
        ("grad_output", "self"),
        {"grad_output": D(attrs, lambda gg, c: apply(forward, gg, **options(c))), "self": D("", zero_grad)},
    )
    forward = OpDef(
        name + "Backward0",
        _forward,
        derivatives={"self": D("self " + attrs, lambda g, c: apply(backward, g, c.self, **options(c)))},
        jvp=auto_linear,
    )
    return forward, backward


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize ``input``'s spatial dimensions to ``size`` or by ``scale_factor`` (torch's checks)."""
    if mode == "nearest":
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | "
                "bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                    "provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                    "format."
                )
            out = tuple(int(s) for s in size)
        else:
            out = (int(size),) * dim
        scales: tuple = (None,) * dim
    elif scale_factor is not None:
        factors = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * dim
        if len(factors) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. "
                "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                "(s1, s2, ...,sK) format."
            )
        out = tuple(math.floor(s * f) for s, f in zip(input.shape[2:], factors, strict=True))
        scales = (None,) * dim if recompute_scale_factor else tuple(float(f) for f in factors)
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    supported = {("nearest", 1), ("nearest", 2), ("bilinear", 2)}
    if antialias or (mode, dim) not in supported:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: "
            f"nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})"
        )
    forward = _ops(mode, dim)[0]
    return apply(forward, input, out=out, scales=scales, mode=mode, align_corners=bool(align_corners))


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=3
    )


def upsample(
    input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """F.interpolate, with torch's deprecation warning."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """F.interpolate in mode 'nearest', with torch's deprecation warning."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """F.interpolate in mode 'bilinear' with align_corners=True, with torch's deprecation warning."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
