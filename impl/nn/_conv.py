"""2-D convolution by im2col on the array namespace (ConvolutionBackward0).

The windows of the zero-padded input are copied tap by tap (one strided slice of the input per
kernel position; the padding is never materialised) into the im2col matrix ``(N, groups,
C/groups*kH*kW, H_out*W_out)``; the output is one batched matrix product with the weight, already
laid out as ``(N, O, H_out, W_out)``. The backward adds window gradients back tap by tap (col2im)
straight into the input's gradient, multiplies the output gradient by the transposed im2col matrix
for the weight, and sums for the bias. Few fresh large arrays are made: on numpy, a fresh
multi-megabyte array costs its page faults, often more than the arithmetic.

Under create_graph the three gradients are the outputs of one ConvolutionBackwardBackward0 node,
whose backward is again made of convolutions, so derivatives of every order have torch's
first-backward graph and torch's values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from impl import _creation
from impl import _grad_mode as grad_mode
from impl._graph import Node, SavedTensor, input_meta
from impl._ops.table import D, OpCtx, OpDef, apply
from impl._tensor import Tensor
from impl._warn import warn_once
from impl._xp import namespace_of
from impl.nn._pad import pad


def _pair(v: Any) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return int(v[0]), int(v[0])
        return int(v[0]), int(v[1])
    return int(v), int(v)


@dataclass(frozen=True)
class ConvParams:
    """What a 2-D convolution needs besides its tensors (pads: top, bottom, left, right)."""

    stride: tuple[int, int]
    pads: tuple[int, int, int, int]
    dilation: tuple[int, int]
    groups: int


def _overlap(offset: int, pad: int, size: int, stride: int, out_len: int) -> tuple[slice, slice]:
    """Along one spatial axis, for the kernel tap at ``offset`` (its index times the dilation):
    the output positions whose tap reads a real (not padding) input element, and those input
    elements, as (output slice, input slice). Output t reads input ``offset + stride * t - pad``."""
    first = max(0, -(-(pad - offset) // stride))
    stop = min(out_len, (size - 1 + pad - offset) // stride + 1)
    if stop <= first:
        return slice(0, 0), slice(0, 0)
    start_in = offset + stride * first - pad
    return slice(first, stop), slice(start_in, start_in + stride * (stop - first - 1) + 1, stride)


def _taps(input_shape: tuple, kernel: tuple, out_hw: tuple, p: ConvParams) -> Any:
    """For each kernel tap (i, j): (i, j, output rows, output cols, input rows, input cols), the
    slices that pair window elements with the input elements they read (padding left out)."""
    h, w = input_shape[2:]
    top, _bottom, left, _right = p.pads
    for i in range(kernel[0]):
        out_r, in_r = _overlap(i * p.dilation[0], top, h, p.stride[0], out_hw[0])
        for j in range(kernel[1]):
            out_c, in_c = _overlap(j * p.dilation[1], left, w, p.stride[1], out_hw[1])
            yield i, j, out_r, out_c, in_r, in_c


def _output_hw(input_shape: tuple, kernel: tuple, p: ConvParams) -> tuple[int, int]:
    h, w = input_shape[2:]
    top, bottom, left, right = p.pads
    ho = (h + top + bottom - p.dilation[0] * (kernel[0] - 1) - 1) // p.stride[0] + 1
    wo = (w + left + right - p.dilation[1] * (kernel[1] - 1) - 1) // p.stride[1] + 1
    return ho, wo


def _columns(xp: Any, x: Any, kh: int, kw: int, p: ConvParams) -> tuple[Any, tuple[int, int]]:
    """im2col: every window of the zero-padded input, copied tap by tap from the input into
    (N, groups, C/groups * kh * kw, Ho * Wo), so that a convolution is one matrix product per
    sample and group whose result is already laid out as (N, O, Ho, Wo); and (Ho, Wo)."""
    n, c = x.shape[:2]
    ho, wo = _output_hw(x.shape, (kh, kw), p)
    cols = xp.zeros((n, c, kh, kw, ho, wo), dtype=x.dtype)
    for i, j, out_r, out_c, in_r, in_c in _taps(x.shape, (kh, kw), (ho, wo), p):
        cols[:, :, i, j, out_r, out_c] = x[:, :, in_r, in_c]
    return cols.reshape(n, p.groups, c // p.groups * kh * kw, ho * wo), (ho, wo)


def _per_group(xp: Any, a: Any, groups: int) -> Any:
    """(N, C, H, W) as (N, groups, C/groups, H * W), contiguous."""
    n, c, h, w = a.shape
    return xp.ascontiguousarray(a).reshape(n, groups, c // groups, h * w)


def _conv_fwd(
    xp: Any, x: Any, w: Any, b: Any, stride: tuple, pads: tuple, dilation: tuple, groups: int
) -> Any:
    o, cg, kh, kw = w.shape
    cols, (ho, wo) = _columns(xp, x, kh, kw, ConvParams(stride, pads, dilation, groups))
    out = xp.matmul(w.reshape(groups, o // groups, cg * kh * kw), cols)  # (N, groups, O/groups, Ho*Wo)
    out += b.reshape(1, groups, o // groups, 1)
    return out.reshape(x.shape[0], o, ho, wo).astype(x.dtype, copy=False)


def _input_grad_array(gd: Any, w: Any, input_shape: tuple, p: ConvParams) -> Any:
    """col2im: the gradient of the convolution with respect to its input, on arrays (one matrix
    product per sample and group for the window gradients, then one strided add per kernel
    position)."""
    xp = namespace_of(gd)
    n, c_in = input_shape[:2]
    o, cg, kh, kw = w.shape
    groups, (ho, wo) = p.groups, gd.shape[2:]
    wg_t = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    dcols = xp.matmul(wg_t, _per_group(xp, gd, groups)).reshape(n, c_in, kh, kw, ho, wo)
    out = xp.zeros(input_shape, dtype=gd.dtype)
    for i, j, out_r, out_c, in_r, in_c in _taps(input_shape, (kh, kw), (ho, wo), p):
        out[:, :, in_r, in_c] += dcols[:, :, i, j, out_r, out_c]
    return out


def _weight_grad_array(gd: Any, x: Any, weight_shape: tuple, p: ConvParams) -> Any:
    """The gradient of the convolution with respect to its weight, on arrays (the output gradient
    times the transposed im2col matrix, per sample and group, summed over the samples)."""
    xp = namespace_of(gd)
    o, cg, kh, kw = weight_shape
    cols, _ = _columns(xp, x, kh, kw, p)
    gw = xp.matmul(_per_group(xp, gd, p.groups), cols.transpose(0, 1, 3, 2)).sum(axis=0)
    return gw.reshape(o, cg, kh, kw).astype(gd.dtype, order="C")


def convolution_backward(
    grad: Tensor, input: Tensor, weight: Tensor, p: ConvParams, mask: tuple[bool, bool, bool]
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """ATen's convolution_backward: the gradients for (input, weight, bias) that ``mask`` asks
    for. Recording (create_graph=True), they are the outputs 0, 1, 2 of one
    ConvolutionBackwardBackward0 node whose edges are (grad_output, input, weight), as torch's."""
    gd = grad._data
    arrays = (
        _input_grad_array(gd, weight._data, tuple(input.shape), p) if mask[0] else None,
        _weight_grad_array(gd, input._data, tuple(weight.shape), p) if mask[1] else None,
        gd.sum(axis=(0, 2, 3)).astype(gd.dtype) if mask[2] else None,
    )
    outs = tuple(None if a is None else Tensor._from_array(a) for a in arrays)
    sources = (grad, input, weight)
    if grad_mode.is_recording() and any(t.requires_grad for t in sources):
        node = ConvolutionBackwardBackward0(grad, input, weight, p)
        for nr, t in enumerate(outs):
            if t is not None:
                t._grad_fn_, t._output_nr = node, nr
    return outs  # type: ignore[return-value]


class ConvolutionBackwardBackward0(Node):
    """The node of convolution_backward's outputs (grad_input, grad_weight, grad_bias): its
    backward is ATen's _convolution_double_backward, written with differentiable ops (conv2d and
    convolution_backward), so every further order has a graph too."""

    def __init__(self, grad: Tensor, input: Tensor, weight: Tensor, p: ConvParams) -> None:
        super().__init__()
        self._next = tuple(t._edge() if t.requires_grad else (None, 0) for t in (grad, input, weight))
        bias_meta = ((weight.shape[0],), *input_meta(weight)[1:])
        self._input_meta = [input_meta(input), input_meta(weight), bias_meta]
        self.saved = [SavedTensor(grad), SavedTensor(input), SavedTensor(weight)]
        self.params = p

    def apply(self, grads: tuple) -> tuple:
        gg_input, gg_weight, gg_bias = grads
        if gg_input is None and gg_weight is None and gg_bias is None:
            return (None, None, None)
        grad, input, weight = (s.unpack() for s in self.saved)
        p = self.params
        need = tuple(fn is not None for fn, _ in self._next)
        g_grad = g_input = g_weight = None
        if need[0]:
            terms = []
            if gg_input is not None:
                terms.append(apply(CONVOLUTION, gg_input, weight, _no_bias(weight), **_attrs(p)))
            if gg_weight is not None:
                terms.append(apply(CONVOLUTION, input, gg_weight, _no_bias(weight), **_attrs(p)))
            if gg_bias is not None:
                terms.append(gg_bias.contiguous().view(1, -1, 1, 1).expand(*grad.shape))
            g_grad = terms[0]
            for t in terms[1:]:
                g_grad = g_grad + t
        if need[1] and gg_weight is not None:
            g_input = convolution_backward(grad, input, gg_weight, p, (True, False, False))[0]
        if need[2] and gg_input is not None:
            g_weight = convolution_backward(grad, gg_input, weight, p, (False, True, False))[1]
        return (g_grad, g_input, g_weight)

    def release(self) -> None:
        for s in self.saved:
            s.release()


def _no_bias(weight: Tensor) -> Tensor:
    return _creation.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device)


def _attrs(p: ConvParams) -> dict[str, Any]:
    return {"stride": p.stride, "pads": p.pads, "dilation": p.dilation, "groups": p.groups}


def _params(c: Any) -> ConvParams:
    return ConvParams(c.stride, c.pads, c.dilation, c.groups)


_USES = "input weight stride pads dilation groups"  # ATen's one formula for all three saves both
CONVOLUTION = OpDef(
    "ConvolutionBackward0",
    _conv_fwd,
    ("input", "weight", "bias"),
    {name: D(_USES, lambda g, c: None) for name in ("input", "weight", "bias")},
    promote="common",
)


def _convolution_node_apply(node: Any, grads: tuple) -> tuple:
    """ConvolutionBackward0: the three gradients from one convolution_backward call."""
    g = grads[0]
    if g is None:
        return (None, None, None)
    c = OpCtx(node)
    mask = (c.needs("input"), c.needs("weight"), c.needs("bias"))
    return convolution_backward(g, c.input, c.weight, _params(c), mask)


CONVOLUTION.node_class = type(
    "ConvolutionBackward0", (CONVOLUTION.node_class,), {"__slots__": (), "apply": _convolution_node_apply}
)


def _pads(padding: Any, kernel: tuple[int, int], dilation: tuple[int, int], stride: tuple[int, int]) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dilation, strict=True):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return tuple(pads)
    ph, pw = _pair(padding)
    return (ph, ph, pw, pw)


def _pad_extra(input: Tensor, pads: tuple) -> tuple[Tensor, tuple]:
    """padding='same' whose total is odd in a dimension, as ATen's _convolution_mode does it: the
    extra element goes on the bottom/right through a ConstantPadNd of the input, and the
    convolution gets the symmetric part (with torch's warning about the padded copy)."""

    warn_once(  # torch's TORCH_WARN_ONCE
        "conv same",
        "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
        "of the input be created (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
        "Convolution.cpp:1101.)",
        stacklevel=4,
    )
    top, bottom, left, right = pads
    return pad(input, (0, right - left, 0, bottom - top)), (top, top, left, left)


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
    if pads[0] != pads[1] or pads[2] != pads[3]:  # 'same' with an odd total: torch pads the extra first
        input, pads = _pad_extra(input, pads)
    eff_h = input.shape[2] + pads[0] + pads[1]
    eff_w = input.shape[3] + pads[2] + pads[3]
    if eff_h < dilation[0] * (kh - 1) + 1 or eff_w < dilation[1] * (kw - 1) + 1:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({eff_h} x {eff_w}). Kernel size: "
            f"({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1}). Kernel size can't be "
            "greater than actual input size"
        )
    b = bias if bias is not None else _creation.zeros(o, dtype=weight.dtype, device=weight.device)
    return apply(CONVOLUTION, input, weight, b, stride=stride, pads=pads, dilation=dilation, groups=groups)
