"""2-D convolution by im2col on the array namespace (ConvolutionBackward0).

The input is padded, then viewed (as_strided, no copy) as windows of shape
``(N, C, H_out, W_out, kH, kW)``; the output is one einsum per group with the weight. The backward
scatters window gradients back (col2im) for the input, contracts the windows with the output
gradient for the weight, and sums for the bias. The backward is computed on arrays: its result
is not itself differentiable (double backward through conv2d is not supported).
"""

from __future__ import annotations

from typing import Any

import impl
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor
from impl._xp import namespace_of


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return int(v[0]), int(v[0])
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _windows(xp: Any, x: Any, kh: int, kw: int, stride: tuple, dilation: tuple, pads: tuple) -> Any:
    """(N, C, Ho, Wo, kh, kw) strided view of the padded input."""
    top, bottom, left, right = pads
    xp_ = xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right))) if any(pads) else xp.ascontiguousarray(x)
    n, c, h, w = xp_.shape
    ho = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    sn, sc, sh, sw = xp_.strides
    shape = (n, c, ho, wo, kh, kw)
    strides = (sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1])
    return xp.lib.stride_tricks.as_strided(xp_, shape=shape, strides=strides)


def _conv_fwd(
    xp: Any, x: Any, w: Any, b: Any, stride: tuple, pads: tuple, dilation: tuple, groups: int
) -> Any:
    o, cg, kh, kw = w.shape
    cols = _windows(xp, x, kh, kw, stride, dilation, pads)
    n, _c, ho, wo = cols.shape[:4]
    cols = cols.reshape(n, groups, cg, ho, wo, kh, kw)
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    out = xp.einsum("ngchwij,gocij->ngohw", cols, wg, optimize=True).reshape(n, o, ho, wo)
    return (out + b.reshape(1, o, 1, 1)).astype(x.dtype, order="C")  # torch returns contiguous output


def _grad_input(g: Tensor, c: Any) -> Tensor:
    w = c.weight._data
    gd = g._data
    xp = namespace_of(gd)
    n, c_in, h, wid = c.shape("input")
    o, cg, kh, kw = w.shape
    groups, stride, dilation = c.groups, c.stride, c.dilation
    top, bottom, left, right = c.pads
    ho, wo = gd.shape[2:]
    dcols = xp.einsum(
        "ngohw,gocij->ngchwij",
        gd.reshape(n, groups, o // groups, ho, wo),
        w.reshape(groups, o // groups, cg, kh, kw),
        optimize=True,
    ).reshape(n, c_in, ho, wo, kh, kw)
    padded = xp.zeros((n, c_in, h + top + bottom, wid + left + right), dtype=gd.dtype)
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilation[0], j * dilation[1]
            padded[
                :,
                :,
                r0 : r0 + stride[0] * (ho - 1) + 1 : stride[0],
                c0 : c0 + stride[1] * (wo - 1) + 1 : stride[1],
            ] += dcols[..., i, j]
    return Tensor._from_array(padded[:, :, top : top + h, left : left + wid].copy())


def _grad_weight(g: Tensor, c: Any) -> Tensor:
    x = c.input._data
    gd = g._data
    xp = namespace_of(gd)
    o, cg, kh, kw = c.shape("weight")
    groups = c.groups
    cols = _windows(xp, x, kh, kw, c.stride, c.dilation, c.pads)
    n, _c, ho, wo = cols.shape[:4]
    gw = xp.einsum(
        "ngohw,ngchwij->gocij",
        gd.reshape(n, groups, o // groups, ho, wo),
        cols.reshape(n, groups, cg, ho, wo, kh, kw),
        optimize=True,
    )
    return Tensor._from_array(gw.reshape(o, cg, kh, kw).astype(gd.dtype))


CONVOLUTION = OpDef(
    "ConvolutionBackward0",
    _conv_fwd,
    ("input", "weight", "bias"),
    {
        "input": D("weight stride pads dilation groups", _grad_input),
        "weight": D("input stride pads dilation groups", _grad_weight),
        "bias": D("", lambda g, c: g.sum((0, 2, 3))),
    },
    promote="common",
)


def _pads(padding: Any, kernel: tuple[int, int], dilation: tuple[int, int], stride: tuple[int, int]) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dilation, strict=True):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return tuple(pads)
    ph, pw = _pair(padding)
    return (ph, ph, pw, pw)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation of (N, C, H, W) or (C, H, W) input with (O, C/groups, kH, kW) weight."""
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(input.shape)}"
        )
    if input.dim() == 3:
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    stride, dilation = _pair(stride), _pair(dilation)
    o, cg, kh, kw = weight.shape
    if input.shape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {cg * groups} channels, but got {input.shape[1]} "
            "channels instead"
        )
    if o % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size {list(weight.shape)} instead"
        )
    pads = _pads(padding, (kh, kw), dilation, stride)
    eff_h = input.shape[2] + pads[0] + pads[1]
    eff_w = input.shape[3] + pads[2] + pads[3]
    if eff_h < dilation[0] * (kh - 1) + 1 or eff_w < dilation[1] * (kw - 1) + 1:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({eff_h} x {eff_w}). Kernel size: "
            f"({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1}). Kernel size can't be "
            "greater than actual input size"
        )
    b = bias if bias is not None else impl.zeros(o, dtype=weight.dtype, device=weight.device)
    return apply(CONVOLUTION, input, weight, b, stride=stride, pads=pads, dilation=dilation, groups=groups)
