"""nn.functional.affine_grid (AffineGridGeneratorBackward0: a base grid of [-1, 1] coordinates times
each transposed affine matrix; its derivative a bmm of the transposed base grid, as ATen's) and
grid_sample (GridSampler2DBackward0, GridSampler3DBackward0) in modes 'bilinear' and 'nearest'
with padding modes 'zeros', 'border' and 'reflection', as ATen's CPU kernels compute them: a grid
point is unnormalised to input coordinates, clipped or reflected, and reads its corners (in the
order of the spatial dimensions, the last fastest) weighted by the products of their distances.

The backward's own derivative (GridSampler2DBackwardBackward0) gives torch's second-order
gradients: the backward is linear in grad_output and in the input, and a corner weight's second
derivative is the product of the other dims' factors.

Known divergences: mode 'bicubic' raises NotImplementedError, and the second-order gradients carry
no differentiable graph (a NotImplemented node; torch's are composite): see
tests/impl/test_impl_nn_spatial.py."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np

from impl import _creation, dtypes
from impl._ops.table import NOT_IMPLEMENTED, D, OpDef, apply
from impl._tensor import Tensor

_DEFAULT_CHANGED = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
    "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
    "details."
)


# -- affine_grid -----------------------------------------------------------------------------------
def _from_neg_one(steps: int, align_corners: bool, dtype: Any) -> Any:
    """ATen's linspace_from_neg_one: ``steps`` points over [-1, 1], scaled by (steps - 1) / steps
    without align_corners (one step: 0)."""
    if steps <= 1:
        return np.zeros(1, dtype=dtype)
    line = _creation.linspace(-1, 1, steps, dtype=dtypes.from_numpy_dtype(np.dtype(dtype)))._data
    if not align_corners:
        line = (line * np.asarray(steps - 1, dtype=dtype) / np.asarray(steps, dtype=dtype)).astype(dtype)
    return line


def _base_grid(xp: Any, spatial: tuple, align_corners: bool, dtype: Any) -> Any:
    """(*spatial, k + 1): the x, y[, z] coordinates of each output point, then 1."""
    k = len(spatial)
    base = xp.ones((*spatial, k + 1), dtype=dtype)
    for axis in range(k):  # coordinate ``axis`` varies along spatial dimension k - 1 - axis
        line = _from_neg_one(spatial[k - 1 - axis], align_corners, dtype)
        base[..., axis] = line.reshape((-1,) + (1,) * axis)
    return base


def _affine_grid_fwd(xp: Any, theta: Any, size: tuple, align_corners: bool) -> Any:
    spatial = size[2:]
    base = _base_grid(xp, spatial, align_corners, theta.dtype).reshape(1, -1, len(spatial) + 1)
    grid = xp.matmul(base, theta.transpose(0, 2, 1))
    return grid.reshape(theta.shape[0], *spatial, len(spatial)).astype(theta.dtype, copy=False)


def _affine_grid_backward(g: Tensor, c: Any) -> Tensor:
    """ATen's affine_grid_generator_backward: (base grid^T bmm grad)^T, on differentiable ops."""
    n, spatial = c.size[0], c.size[2:]
    k = len(spatial)
    base = _base_grid(np, spatial, c.align_corners, g._data.dtype)
    base_t = Tensor._from_array(np.ascontiguousarray(np.broadcast_to(base, (n, *base.shape))))
    flat = base_t.view(n, -1, k + 1)
    return flat.transpose(1, 2).bmm(g.reshape(n, -1, k)).transpose(1, 2)


AFFINE_GRID = OpDef(
    "AffineGridGeneratorBackward0",
    _affine_grid_fwd,
    ("theta",),
    {"theta": D("size align_corners", _affine_grid_backward)},
)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, *spatial, k) of the affine matrices ``theta`` (N, k, k + 1) for an
    output of ``size`` (N, C, *spatial), k = 2 or 3."""
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) in (4, 5):
        k = len(size) - 2
        if theta.dim() != 3 or theta.shape[-2] != k or theta.shape[-1] != k + 1:
            raise ValueError(
                f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size {size}. Got "
                f"{theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}."
        )
    if align_corners and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the documentation of "
            "affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:  # (the batched matrix product's error)
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, {k + 1}] but got: "
            f"[{theta.shape[0]}, {k + 1}]."
        )
    return apply(AFFINE_GRID, theta, size=tuple(int(s) for s in size), align_corners=bool(align_corners))


# -- grid_sample -----------------------------------------------------------------------------------
def _reflect(x: Any, twice_low: int, twice_high: int) -> tuple[Any, Any]:
    """ATen's reflect_coordinates (and the sign of its derivative)."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    low = np.asarray(twice_low / 2, dtype=x.dtype)
    span = np.asarray((twice_high - twice_low) / 2, dtype=x.dtype)
    shifted = x - low
    sign = np.where(shifted < 0, -1, 1).astype(x.dtype)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _source(coord: Any, size: int, padding: str, align_corners: bool, scalar: bool) -> tuple[Any, Any]:
    """A grid coordinate as an input position, and d(position)/d(coordinate): with the 2-D
    kernel's vectorised formula, or the scalar one of the 3-D kernel (``scalar``)."""
    dtype = coord.dtype
    one, scale = np.asarray(1, dtype), np.asarray((size - (1 if align_corners else 0)) / 2, dtype=dtype)
    if scalar:
        pos = ((coord + one) / 2 * (size - 1) if align_corners else ((coord + one) * size - one) / 2)
    elif align_corners:
        pos = (coord + one) * scale
    else:
        pos = (coord + one) * scale - np.asarray(0.5, dtype)
    mult = np.broadcast_to(scale, pos.shape).astype(dtype)
    if padding == "reflection":
        pos, sign = _reflect(pos, 0, 2 * (size - 1)) if align_corners else _reflect(pos, -1, 2 * size - 1)
        mult = mult * sign
    if padding != "zeros":
        limit = np.asarray(size - 1, dtype=dtype)
        mult = mult * ((pos > 0) & (pos < limit))
        pos = np.minimum(np.maximum(pos, np.asarray(0, dtype)), limit)
    return pos.astype(dtype, copy=False), mult


def _corners(grid: Any, spatial: tuple, mode: str, padding: str, align_corners: bool) -> tuple[list, list]:
    """Each corner a grid point reads, as (its indices, its weight, the weight's factors and which
    end of each spatial dim it lies at; for 'nearest', None), and d(position)/d(coordinate) per
    spatial dim."""
    k = len(spatial)
    sources = [_source(grid[..., k - 1 - d], spatial[d], padding, align_corners, k == 3) for d in range(k)]
    mults = [m for _, m in sources]
    if mode == "nearest":
        index = [np.rint(pos).astype(np.int64) for pos, _ in sources]
        return [(index, None, None, None)], mults
    one = np.asarray(1, grid.dtype)
    low = [np.floor(pos) for pos, _ in sources]
    frac = [pos - lo for (pos, _), lo in zip(sources, low, strict=True)]
    corners = []
    # the 2-D kernel weighs a low corner 1 - frac, y first; the 3-D one lo + 1 - pos, x first
    far = [one - f for f in frac] if k == 2 else [
        lo + one - pos for lo, (pos, _) in zip(low, sources, strict=True)]
    for bits in itertools.product((0, 1), repeat=k):
        index = [lo.astype(np.int64) + b for lo, b in zip(low, bits, strict=True)]
        weights = [f if b else g for f, g, b in zip(frac, far, bits, strict=True)]
        corners.append((index, _product(weights if k == 2 else weights[::-1]), weights, bits))
    return corners, mults


def _product(values: list) -> Any:
    out = values[0]
    for v in values[1:]:
        out = out * v
    return out


def _locate(index: list, spatial: tuple) -> tuple[Any, tuple]:
    """Whether each corner lies inside the input, and its indices clamped into it."""
    inside = _product([(i >= 0) & (i < n) for i, n in zip(index, spatial, strict=True)])
    return inside, tuple(np.clip(i, 0, n - 1) for i, n in zip(index, spatial, strict=True))


def _read(a: Any, index: tuple, inside: Any) -> Any:
    """The input's values (N, C, *out) at the corner ``index`` (0 outside)."""
    batch = np.arange(a.shape[0]).reshape((-1,) + (1,) * (index[0].ndim - 1))
    values = np.moveaxis(a[(batch, slice(None), *index)], -1, 1)
    return np.where(inside[:, None], values, np.zeros((), a.dtype))


def _sample_fwd(xp: Any, input: Any, grid: Any, mode: str, padding: str, align_corners: bool) -> Any:
    spatial = input.shape[2:]
    corners, _ = _corners(grid, spatial, mode, padding, align_corners)
    out = np.zeros((*input.shape[:2], *grid.shape[1:-1]), dtype=input.dtype)
    for index, weight, _weights, _bits in corners:
        inside, index = _locate(index, spatial)
        values = _read(input, index, inside)
        out = out + (values if weight is None else values * weight[:, None])
    return out.astype(input.dtype, copy=False)


def _input_grad(g: Any, input_shape: tuple, grid: Any, mode: str, padding: str, align_corners: bool) -> Any:
    spatial = input_shape[2:]
    corners, _ = _corners(grid, spatial, mode, padding, align_corners)
    out = np.zeros(input_shape, dtype=g.dtype)
    batch = np.arange(g.shape[0]).reshape((-1,) + (1,) * (grid.ndim - 2))
    for index, weight, _weights, _bits in corners:
        inside, index = _locate(index, spatial)
        scaled = g if weight is None else g * weight[:, None]
        values = np.where(inside[:, None], scaled, np.zeros((), g.dtype))
        np.add.at(out, (batch, slice(None), *index), np.moveaxis(values, 1, -1))
    return out


def _grid_grad(g: Any, input: Any, grid: Any, mode: str, padding: str, align_corners: bool) -> Any:
    out = np.zeros(grid.shape, dtype=g.dtype)
    if mode == "nearest":
        return out
    spatial = input.shape[2:]
    k = len(spatial)
    corners, mults = _corners(grid, spatial, mode, padding, align_corners)
    positions = [np.zeros(grid.shape[:-1], dtype=g.dtype) for _ in range(k)]
    for index, _weight, weights, bits in corners:
        inside, index = _locate(index, spatial)
        read = (_read(input, index, inside) * g).sum(axis=1)
        for d in range(k):
            others = [w for e, w in enumerate(weights) if e != d]
            slope = read * (_product(others) if others else 1)
            positions[d] = positions[d] + (slope if bits[d] else -slope)
    for d in range(k):
        out[..., k - 1 - d] = positions[d] * mults[d]
    return out


def _slope(weights: list, bits: tuple, skip: tuple) -> Any:
    """d(corner weight)/d(positions ``skip``): the other factors' product, signed per end."""
    factors = [w for e, w in enumerate(weights) if e not in skip]
    sign = -1 if sum(1 for d in skip if not bits[d]) % 2 else 1
    return sign * (_product(factors) if factors else np.ones((), weights[0].dtype))


def _double_backward(xp: Any, go: Any, input: Any, grid: Any, gg_input: Any, gg_grid: Any, mode: str,
                     padding: str, align_corners: bool) -> tuple:
    """The gradients of the backward's outputs (grad_input, grad_grid), given ``gg_input`` and
    ``gg_grid``, with respect to grad_output, input and grid: the backward is linear in
    grad_output and in input, and a corner weight's second derivative is the product of the
    other dims' factors."""
    spatial, k = input.shape[2:], input.ndim - 2
    corners, mults = _corners(grid, spatial, mode, padding, align_corners)
    v = [gg_grid[..., k - 1 - d] * mults[d] for d in range(k)]  # the grid's upstream in positions
    g_go = np.zeros(go.shape, dtype=go.dtype)
    g_input = np.zeros(input.shape, dtype=go.dtype)
    g_pos = [np.zeros(grid.shape[:-1], dtype=go.dtype) for _ in range(k)]
    batch = np.arange(go.shape[0]).reshape((-1,) + (1,) * k)
    for index, weight, weights, bits in corners:
        inside, index = _locate(index, spatial)
        u = _read(gg_input, index, inside)
        if weight is None:
            g_go = g_go + u
            continue
        x = _read(input, index, inside)
        along = sum(v[d] * _slope(weights, bits, (d,)) for d in range(k))
        g_go = g_go + u * weight[:, None] + x * along[:, None]
        scattered = np.where(inside[:, None], go * along[:, None], np.zeros((), go.dtype))
        np.add.at(g_input, (batch, slice(None), *index), np.moveaxis(scattered, 1, -1))
        for d in range(k):
            curve = sum(v[e] * _slope(weights, bits, (d, e)) for e in range(k) if e != d)
            slope = _slope(weights, bits, (d,))
            g_pos[d] = g_pos[d] + (go * (u * slope[:, None] + x * curve[:, None])).sum(1)
    g_grid = np.zeros(grid.shape, dtype=go.dtype)
    for d in range(k):
        g_grid[..., k - 1 - d] = g_pos[d] * mults[d]
    return g_go, g_input, g_grid


def _no_third(g: Any, c: Any) -> Tensor:
    raise RuntimeError("impl: the third derivative of grid_sample is not implemented")


_DOUBLE_INPUTS = ("grad_output", "input", "grid", "gg_input", "gg_grid")
# one of the three second-order gradients (``which``); its own derivative raises (a known divergence)
GRID_SAMPLER_DOUBLE_BACKWARD = OpDef(
    "NotImplemented",
    lambda xp, *arrays, which, **attrs: _double_backward(xp, *arrays, **attrs)[which],
    _DOUBLE_INPUTS,
    {name: D("", _no_third) for name in _DOUBLE_INPUTS},
    qualified_name=NOT_IMPLEMENTED,
)


def _twice(which: int) -> Any:
    """The derivative formula of the backward's input ``which`` (grad_output, input, grid)."""

    def formula(grads: tuple, c: Any) -> Tensor:
        go, input, grid = c.grad_output, c.input, c.grid
        gg = [g if g is not None else _creation.zeros(t.shape, dtype=go.dtype) for g, t in zip(
            grads, (input, grid), strict=True)]
        return apply(GRID_SAMPLER_DOUBLE_BACKWARD, go, input, grid, *gg, which=which,
                     **{a: getattr(c, a) for a in _ATTRS.split()})

    return formula


_ATTRS = "mode padding align_corners"


def _sampler_ops(k: int) -> tuple[OpDef, OpDef]:
    name = f"GridSampler{k}D"
    backward = OpDef(
        f"{name}BackwardBackward0",
        lambda xp, g, input, grid, mode, padding, align_corners: (
            _input_grad(g, input.shape, grid, mode, padding, align_corners),
            _grid_grad(g, input, grid, mode, padding, align_corners),
        ),
        ("grad_output", "input", "grid"),
        {name: D("grad_output input grid " + _ATTRS, _twice(i))
         for i, name in enumerate(("grad_output", "input", "grid"))},
        outputs=("grad_input", "grad_grid"),
        differentiable_outputs=2,
    )

    def grads(g: Tensor, c: Any) -> tuple:
        return apply(backward, g, c.input, c.grid, **{a: getattr(c, a) for a in _ATTRS.split()})

    forward = OpDef(
        f"{name}Backward0",
        _sample_fwd,
        ("input", "grid"),
        {
            "input": D("input grid " + _ATTRS, lambda g, c: grads(g, c)[0]),
            "grid": D("input grid " + _ATTRS, lambda g, c: grads(g, c)[1]),
        },
    )
    return forward, backward


GRID_SAMPLER_2D, GRID_SAMPLER_2D_BACKWARD = _sampler_ops(2)
GRID_SAMPLER_3D, GRID_SAMPLER_3D_BACKWARD = _sampler_ops(3)


def _check_sampler(input: Tensor, grid: Tensor, mode: str) -> None:
    """ATen's grid_sampler checks, in its order."""
    if input.dtype != grid.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.scalar_type(input.dtype)} but found "
            f"{dtypes.scalar_type(grid.dtype)}"
        )
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[:1] != grid.shape[:1]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}"
        )
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got grid "
            f"with sizes {list(grid.shape)}"
        )
    expected = 4 if input.dim() == 4 else 5  # (grid_sampler_2d's check, else grid_sampler_3d's)
    if input.dim() != expected or grid.dim() != expected:
        raise RuntimeError(
            f"grid_sampler(): expected {expected}D input and grid with same number of dimensions, but got "
            f"{sizes}"
        )
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {d} being empty"
            )
    if mode == "bicubic":
        if input.dim() != 4:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("impl: grid_sample's mode 'bicubic' is not implemented")
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing(f"grid_sampler_{input.dim() - 2}d_cpu_kernel_impl", input.dtype)


def grid_sample(
    input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """``input`` (N, C, *in) sampled at the grid's points (N, *out, k) in [-1, 1] coordinates."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: "
            f"'{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_DEFAULT_CHANGED, stacklevel=2)
        align_corners = False
    _check_sampler(input, grid, mode)
    op = GRID_SAMPLER_2D if input.dim() == 4 else GRID_SAMPLER_3D
    return apply(op, input, grid, mode=mode, padding=padding_mode, align_corners=bool(align_corners))
