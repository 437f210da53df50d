"""1-D, 2-D and 3-D convolutions, direct and transposed, by im2col on the array namespace
(ConvolutionBackward0).

One core serves conv1d/2d/3d and conv_transpose1d/2d/3d: a 1-D convolution is a 2-D one over a
unit height (as ATen views it), so the arrays below are (N, C, H, W) or (N, C, D, H, W). The
windows of the zero-padded input are copied tap by tap (one strided slice of the input per
kernel position; the padding is never materialised) into the im2col matrix ``(N, groups,
C/groups*prod(kernel), prod(output size))``; a direct convolution is one batched matrix product
with the weight, already laid out as ``(N, O, *output size)``. The adjoint adds window gradients back tap
by tap (col2im): it is a direct convolution's input gradient and a transposed convolution's
forward. The weight gradient multiplies the output gradient by the transposed im2col matrix, the
bias gradient sums. Few fresh large arrays are made: on numpy, a fresh multi-megabyte array costs
its page faults, often more than the arithmetic.

Under create_graph the three gradients are the outputs of one ConvolutionBackwardBackward0 node,
whose backward is again made of convolutions, so derivatives of every order have torch's
first-backward graph and torch's values.

Known divergence: a transposed convolution whose output size is below 1 always raises torch's
slow path's RuntimeError "... Output size is too small". torch's float32 CPU path picks oneDNN by
batch size, groups, kernel size and thread count, and that path returns an empty tensor (output
size 0) or raises "could not construct a memory descriptor using a format tag" (below 0) instead;
the conformance programs keep output sizes above 0 (strict xfail in tests/impl/test_impl_nn_conv.py).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from impl import _api as api
from impl import _autocast, _creation, _memory_format, dtypes
from impl import _grad_mode as grad_mode
from impl._graph import Node, SavedTensor, input_meta
from impl._layout import copy_like
from impl._ops.table import D, OpCtx, OpDef, apply
from impl._signatures import parse_error
from impl._tensor import Tensor
from impl._warn import warn_once
from impl._xp import namespace_of
from impl.nn._pad import pad


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    """torch's _single/_pair: a number repeated ``n`` times; a sequence as given (one element
    repeated ``n`` times)."""
    if isinstance(v, (tuple, list)):
        return tuple(int(e) for e in v) * (n if len(v) == 1 else 1)
    return (int(v),) * n


def _pair(v: Any) -> tuple[int, int]:
    return _ntuple(v, 2)[:2]  # type: ignore[return-value]


@dataclass(frozen=True)
class ConvParams:
    """What a convolution needs besides its tensors, one entry per spatial dim (a 1-D
    convolution in 2-D form: its height entries are stride 1, no padding, dilation 1); pads:
    (before, after) per spatial dim (top, bottom, left, right in 2-D)."""

    stride: tuple[int, ...]
    pads: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int
    transposed: bool = False
    output_padding: tuple[int, ...] = (0, 0)


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


def _taps(input_shape: tuple, kernel: tuple, out_size: tuple, p: ConvParams) -> Any:
    """For each kernel tap, in row-major order: (its index per spatial dim, the output slices,
    the input slices), the slices pairing window elements with the input elements they read
    (padding left out)."""
    axes = [
        [(i, *_overlap(i * p.dilation[a], p.pads[2 * a], n, p.stride[a], o)) for i in range(k)]
        for a, (k, n, o) in enumerate(zip(kernel, input_shape[2:], out_size, strict=True))
    ]
    for tap in itertools.product(*axes):
        yield tuple(t[0] for t in tap), tuple(t[1] for t in tap), tuple(t[2] for t in tap)


def output_hw(input_shape: tuple, kernel: tuple, p: ConvParams) -> tuple[int, ...]:
    """A direct convolution's output size, per spatial dim."""
    return tuple(
        (n + p.pads[2 * a] + p.pads[2 * a + 1] - p.dilation[a] * (k - 1) - 1) // p.stride[a] + 1
        for a, (n, k) in enumerate(zip(input_shape[2:], kernel, strict=True))
    )


def _transposed_hw(input_shape: tuple, kernel: tuple, p: ConvParams) -> tuple[int, ...]:
    """A transposed convolution's output size: the input size its direct convolution maps from."""
    return tuple(
        (n - 1) * s - p.pads[2 * i] - p.pads[2 * i + 1] + d * (k - 1) + op + 1
        for i, (n, k, s, d, op) in enumerate(zip(input_shape[2:], kernel, p.stride, p.dilation,
                                                 p.output_padding, strict=True))
    )


def columns(xp: Any, x: Any, kernel: tuple, p: ConvParams, out_hw: tuple | None = None) -> Any:
    """im2col: every window of the zero-padded input, copied tap by tap from the input into
    (N, groups, C/groups * prod(kernel), prod(output size)), so that a convolution is one matrix
    product per sample and group whose result is already laid out as (N, O, *output size).
    ``out_hw``: the output positions wanted (the convolution's own by default)."""
    n, c = x.shape[:2]
    out = out_hw or output_hw(x.shape, kernel, p)
    cols = xp.zeros((n, c, *kernel, *out), dtype=x.dtype)
    every = (slice(None),) * 2
    for tap, outs, ins in _taps(x.shape, kernel, out, p):
        cols[(*every, *tap, *outs)] = x[(*every, *ins)]
    return cols.reshape(n, p.groups, c // p.groups * math.prod(kernel), math.prod(out))


def _per_group(xp: Any, a: Any, groups: int) -> Any:
    """(N, C, *size) as (N, groups, C/groups, prod(size)), contiguous."""
    n, c = a.shape[:2]
    return xp.ascontiguousarray(a).reshape(n, groups, c // groups, math.prod(a.shape[2:]))


def _direct(xp: Any, x: Any, w: Any, p: ConvParams, out_hw: tuple | None = None) -> Any:
    """The direct convolution of 4-D or 5-D arrays, without bias, as (N, groups, O/groups,
    prod(output size)) and the output size."""
    o, cg, *kernel = w.shape
    out_hw = out_hw or output_hw(x.shape, kernel, p)
    cols = columns(xp, x, tuple(kernel), p, out_hw)
    return xp.matmul(w.reshape(p.groups, o // p.groups, cg * math.prod(kernel)), cols), out_hw


def _planar(a: Any) -> Any:
    """A 1-D convolution's array (N, C, L) as the 2-D one's (N, C, 1, L); a 2-D one as it is."""
    return a[:, :, None] if a.ndim == 3 else a


def _conv_fwd(
    xp: Any, x: Any, w: Any, b: Any, stride: tuple, pads: tuple, dilation: tuple, groups: int,
    transposed: bool = False, output_padding: tuple = (0, 0), channels_last: bool = False,
) -> Any:
    if channels_last:  # torch's output layout where the input or the weight is channels_last
        out = _conv_fwd(xp, x, w, b, stride, pads, dilation, groups, transposed, output_padding)
        return copy_like(xp, out, strides=_memory_format.strides(_memory_format.channels_last, out.shape))
    p = ConvParams(stride, pads, dilation, groups, transposed, output_padding)
    x4, w4 = _planar(x), _planar(w)
    if transposed:
        c_out = w4.shape[1] * groups
        out = _input_grad_array(x4, w4, (x4.shape[0], c_out, *_transposed_hw(x4.shape, w4.shape[2:], p)), p)
        out += b.reshape(1, c_out, *[1] * (x4.ndim - 2))
    else:
        out, out_hw = _direct(xp, x4, w4, p)
        out += b.reshape(1, groups, -1, 1)
        out = out.reshape(x.shape[0], w.shape[0], *out_hw)
    return out.reshape(*out.shape[:2], *out.shape[x4.ndim - x.ndim + 2:]).astype(x.dtype, copy=False)


def _input_grad_array(gd: Any, w: Any, input_shape: tuple, p: ConvParams) -> Any:
    """col2im: the gradient of the convolution with respect to its input, on 4-D arrays (one
    matrix product per sample and group for the window gradients, then one strided add per
    kernel position)."""
    xp = namespace_of(gd)
    n, c_in = input_shape[:2]
    o, cg, *kernel = w.shape
    groups = p.groups
    wg_t = w.reshape(groups, o // groups, cg * math.prod(kernel)).transpose(0, 2, 1)
    dcols = xp.matmul(wg_t, _per_group(xp, gd, groups)).reshape(n, c_in, *kernel, *gd.shape[2:])
    return add_windows(xp, dcols, input_shape, p)


def add_windows(xp: Any, dcols: Any, input_shape: tuple, p: ConvParams) -> Any:
    """col2im: window values ``dcols`` (N, C, *kernel, *output size) added back into an input of
    ``input_shape`` (N, C, *size), tap by tap (padding left out)."""
    out = xp.zeros(input_shape, dtype=dcols.dtype)
    nd, every = len(input_shape) - 2, (slice(None),) * 2
    for tap, outs, ins in _taps(input_shape, dcols.shape[2:2 + nd], dcols.shape[2 + nd:], p):
        out[(*every, *ins)] += dcols[(*every, *tap, *outs)]
    return out


def _weight_grad_array(gd: Any, x: Any, weight_shape: tuple, p: ConvParams) -> Any:
    """The gradient of the convolution with respect to its weight, on 4-D arrays (the output
    gradient times the transposed im2col matrix, per sample and group, summed over the samples)."""
    xp = namespace_of(gd)
    cols = columns(xp, x, tuple(weight_shape[2:]), p, gd.shape[2:])
    gw = xp.matmul(_per_group(xp, gd, p.groups), cols.transpose(0, 1, 3, 2)).sum(axis=0)
    return gw.reshape(weight_shape).astype(gd.dtype, order="C")


def convolution_backward(
    grad: Tensor, input: Tensor, weight: Tensor, p: ConvParams, mask: tuple[bool, bool, bool]
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """ATen's convolution_backward: the gradients for (input, weight, bias) that ``mask`` asks
    for (of a transposed convolution: the direct convolution of the output gradient, and the
    weight gradient with input and output gradient in each other's place). Recording
    (create_graph=True), they are the outputs 0, 1, 2 of one ConvolutionBackwardBackward0 node
    whose edges are (grad_output, input, weight), as torch's."""
    gd, xd, wd = _planar(grad._data), _planar(input._data), _planar(weight._data)
    gi = gw = None
    if p.transposed:
        if mask[0]:
            gi, _ = _direct(namespace_of(gd), gd, wd, p, xd.shape[2:])
            gi = gi.astype(gd.dtype, copy=False)
        if mask[1]:
            gw = _weight_grad_array(xd, gd, wd.shape, p)
    else:
        gi = _input_grad_array(gd, wd, xd.shape, p) if mask[0] else None
        gw = _weight_grad_array(gd, xd, wd.shape, p) if mask[1] else None
    arrays = (
        None if gi is None else gi.reshape(input.shape),
        None if gw is None else gw.reshape(weight.shape),
        gd.sum(axis=(0, *range(2, gd.ndim))).astype(gd.dtype) if mask[2] else None,
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
    backward is ATen's _convolution_double_backward, written with differentiable ops (the
    convolution and convolution_backward), so every further order has a graph too."""

    def __init__(self, grad: Tensor, input: Tensor, weight: Tensor, p: ConvParams) -> None:
        super().__init__()
        self._next = tuple(t._edge() if t.requires_grad else (None, 0) for t in (grad, input, weight))
        bias_meta = ((grad.shape[1],), *input_meta(weight)[1:])
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
            no_bias = _creation.zeros(grad.shape[1], dtype=weight.dtype, device=weight.device)
            terms = []
            if gg_input is not None:
                terms.append(apply(CONVOLUTION, gg_input, weight, no_bias, **_attrs(p)))
            if gg_weight is not None:
                terms.append(apply(CONVOLUTION, input, gg_weight, no_bias, **_attrs(p)))
            if gg_bias is not None:
                terms.append(gg_bias.contiguous().view(1, -1, *[1] * (grad.dim() - 2)).expand(*grad.shape))
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


def _attrs(p: ConvParams) -> dict[str, Any]:
    return {"stride": p.stride, "pads": p.pads, "dilation": p.dilation, "groups": p.groups,
            "transposed": p.transposed, "output_padding": p.output_padding}


def _params(c: Any) -> ConvParams:
    return ConvParams(c.stride, c.pads, c.dilation, c.groups, c.transposed, c.output_padding)


# ATen's one formula for all three saves both input and weight
_USES = "input weight stride pads dilation groups transposed output_padding"
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


def _pads(padding: Any, kernel: tuple[int, ...], dilation: tuple[int, ...], stride: tuple[int, ...]) -> tuple:
    """(before, after) per spatial dimension, flattened, for a padding string or numbers."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0) * len(kernel)
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dilation, strict=True):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return tuple(pads)
    return tuple(p for p in _expand(padding, "padding", len(kernel)) for _ in range(2))


def _pad_extra(input: Tensor, pads: tuple) -> tuple[Tensor, tuple]:
    """padding='same' whose total is odd in a dimension, as ATen's _convolution_mode does it: the
    extra element goes on the bottom/right through a ConstantPadNd of the input, and the
    convolution gets the symmetric part (with torch's warning about the padded copy)."""

    warn_once(  # torch's TORCH_WARN_ONCE
        "conv same",
        "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy "
        "of the input be created (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
        "Convolution.cpp:1101.)",
        stacklevel=5,
    )
    extra = [a - b for b, a in zip(pads[::2], pads[1::2], strict=True)]
    return pad(input, tuple(v for e in reversed(extra) for v in (0, e))), tuple(
        v for b in pads[::2] for v in (b, b))


def _expand(value: Any, name: str, dims: int) -> tuple[int, ...]:
    """ATen's expand_param_if_needed: one value for every spatial dimension, or one each."""
    values = _ntuple(value, dims)
    if len(values) != dims:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dims} values to match the "
            f"convolution dimensions, but got {name}={list(values)}"
        )
    return values


def _check_types(input: Tensor, weight: Tensor, bias: Tensor | None, transposed: bool) -> None:
    """torch's CPU kernels' errors for operands of different dtypes (a transposed convolution
    takes a bias of another dtype, but for float32 input)."""

    def dense(name: str, other: Tensor) -> RuntimeError:
        return RuntimeError(
            f"Input type ({dtypes.legacy_name(input.dtype)}) and {name} type "
            f"({dtypes.legacy_name(other.dtype)}) should be the same or input should be a MKLDNN tensor and "
            f"{name} is a dense tensor"
        )

    if input.dtype != weight.dtype:
        if input.dtype == dtypes.float32:
            raise dense("weight", weight)
        raise RuntimeError(
            f"expected scalar type {dtypes.scalar_type(input.dtype)} but found "
            f"{dtypes.scalar_type(weight.dtype)}"
        )
    if bias is None or bias.dtype == input.dtype:
        return
    if transposed:
        if input.dtype == dtypes.float32:
            raise dense("bias", bias)
        return
    raise RuntimeError(
        f"Input type ({dtypes.CPP_NAMES[input.dtype.name]}) and bias type "
        f"({dtypes.CPP_NAMES[bias.dtype.name]}) should be the same"
    )


def _check_shapes(input: Tensor, weight: Tensor, bias: Tensor | None, groups: int, transposed: bool) -> None:
    """ATen's check_shape_forward, but for the kernel size (see ``_check_sizes``)."""
    ws, k = list(weight.shape), input.dim()
    if weight.dim() != k:
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight {ws}, but "
            f"got {k}-dimensional input of size {list(input.shape)} instead"
        )
    if ws[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
            f"weight of size {ws} instead"
        )
    if ws[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{ws}] instead"
        )
    channels, out = (ws[0], ws[1] * groups) if transposed else (ws[1] * groups, ws[0])
    given = f"transposed={int(transposed)}" if transposed else f"groups={groups}"
    if input.shape[1] != channels:
        raise RuntimeError(
            f"Given {given}, weight of size {ws}, expected input{list(input.shape)} to have {channels} "
            f"channels, but got {input.shape[1]} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out):
        raise RuntimeError(
            f"Given {given + ', ' if transposed else ''}weight of size {ws}, expected bias to be "
            f"1-dimensional with {out} elements, but got bias of size {list(bias.shape)} instead"
        )


def _check_sizes(planar: tuple, kernel: tuple, p: ConvParams, dims: int) -> None:
    """Sizes torch refuses (the input's shape, the kernel and ``p`` in 2-D form): a kernel larger
    than the padded input (direct); of a transposed convolution, an output padding too large, an
    empty input plane or an output size below 1."""
    if not p.transposed:
        padded = [n + p.pads[2 * i] + p.pads[2 * i + 1] for i, n in enumerate(planar[2:])]
        extent = [d * (k - 1) + 1 for d, k in zip(p.dilation, kernel, strict=True)]
        if any(n < k for n, k in zip(padded, extent, strict=True)):
            raise RuntimeError(  # (a 1-D convolution's sizes only)
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded[-dims:]))}). Kernel "
                f"size: ({' x '.join(map(str, extent[-dims:]))}). Kernel size can't be greater than actual "
                "input size"
            )
        return
    if any(o >= s and o >= d for o, s, d in zip(p.output_padding, p.stride, p.dilation, strict=True)):
        axes = ("depth", "height", "width")[-len(p.stride):]
        shown = " ".join(
            f"{what}_{axis}: {v}" for what, values in
            (("output_padding", p.output_padding), ("stride", p.stride), ("dilation", p.dilation))
            for axis, v in zip(axes, values, strict=True))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {shown}")
    if 0 in planar[2:] and 0 not in planar[:2]:
        raise RuntimeError(
            f"Only zero batch or zero channel inputs are supported, but got input shape: {list(planar)}"
        )
    out = _transposed_hw(planar, kernel, p)
    if min(out) <= 0:  # torch's slow path's error (a known divergence: see the module's docstring)
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, planar[2:]))}). Calculated output size per "
            f"channel: ({' x '.join(map(str, out))}). Output size is too small"
        )


def _convolution(
    name: str, dims: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
    dilation: Any, groups: int, transposed: bool = False, output_padding: Any = 0,
) -> Tensor:
    """conv{dims}d or conv_transpose{dims}d (``name``): unbatched input batched and back, torch's
    checks in ATen's order, an odd 'same' padding's extra element padded first, then the
    convolution op (ConvolutionBackward0)."""
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but got input of "
            f"size: {list(input.shape)}"
        )
    if input.dim() == dims + 1:
        return _convolution(name, dims, input.unsqueeze(0), weight, bias, stride, padding, dilation, groups,
                            transposed, output_padding).squeeze(0)
    nd = weight.dim() - 2
    if nd <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = _expand(_ntuple(stride, dims), "stride", nd)
    dilation = _expand(_ntuple(dilation, dims), "dilation", nd)
    output_padding = _expand(_ntuple(output_padding, dims), "output_padding", nd)
    pads = _pads(padding if isinstance(padding, str) else _ntuple(padding, dims),
                 tuple(weight.shape[2:]), dilation, stride)
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(output_padding) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("non-positive dilation is not supported")
    _check_shapes(input, weight, bias, groups, transposed)
    _check_types(input, weight, bias, transposed)
    if pads[::2] != pads[1::2]:  # 'same' with an odd total: torch pads the extra first
        input, pads = _pad_extra(input, pads)
    unit = (1,) * (nd == 1)  # the 2-D form of a 1-D convolution: a unit height
    p = ConvParams((*unit, *stride), (0, 0) * (nd == 1) + pads, (*unit, *dilation), groups, transposed,
                   (0,) * (nd == 1) + output_padding)
    _check_sizes((*input.shape[:2], *unit, *input.shape[2:]), (*unit, *weight.shape[2:]), p, nd)
    out = weight.shape[1] * groups if transposed else weight.shape[0]
    b = bias if bias is not None else _creation.zeros(out, dtype=weight.dtype, device=weight.device)
    cl = input.dim() == 4 and _memory_format.channels_last in (
        _memory_format.suggested(tuple(t.shape), t.stride()) for t in (input, weight))
    return apply(CONVOLUTION, input, weight, b, **_attrs(p), **({"channels_last": True} if cl else {}))


def _is_int(v: Any) -> bool:
    """An int torch's parser takes: an integral number (not a bool), or a 0-dim integer tensor."""
    if isinstance(v, Tensor):
        kind = v.dtype
        return v.dim() == 0 and not (kind.is_floating_point or kind.is_complex or kind is dtypes.bool_)
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _fits(name: str, p: dict[str, Any]) -> bool:
    """Whether torch's parser takes the bound arguments ``p`` of convolution ``name``."""
    if not (isinstance(p["input"], Tensor) and isinstance(p["weight"], Tensor)):
        return False
    if not (p["bias"] is None or isinstance(p["bias"], Tensor)) or not _is_int(p["groups"]):
        return False
    for key in ("stride", "padding", "dilation", "output_padding"):
        v = p.get(key, 0)
        if key == "padding" and isinstance(v, str) and "transpose" not in name:
            continue
        if not all(_is_int(e) for e in (v if isinstance(v, (tuple, list)) else [v])):
            return False
    return True


def _parsed(fn: Callable) -> Callable:
    """``fn`` behind torch's argument parser: a call none of torch's signatures of ``fn`` takes
    raises torch's TypeError (``parse_error``)."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def parsed(*args: Any, **kwargs: Any) -> Tensor:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            raise parse_error(fn.__name__, args, kwargs) from None
        bound.apply_defaults()
        if not _fits(fn.__name__, bound.arguments):
            raise parse_error(fn.__name__, args, kwargs)
        return fn(*args, **kwargs)

    return parsed


def _declare(dims: int, transposed: bool) -> Callable:
    """torch's conv{dims}d or conv_transpose{dims}d, behind its argument parser, on CPU autocast's
    lower-precision list."""
    name = f"conv_transpose{dims}d" if transposed else f"conv{dims}d"
    if transposed:
        def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
            return _convolution(name, dims, input, weight, bias, stride, padding, dilation, groups, True,
                                output_padding)
    else:
        def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
            return _convolution(name, dims, input, weight, bias, stride, padding, dilation, groups)

    conv.__name__ = conv.__qualname__ = name
    conv.__doc__ = (
        f"The transposed {dims}-D convolution of (N, C, *size) or (C, *size) input with (C, O/groups, "
        "*kernel) weight." if transposed else
        f"{dims}-D cross-correlation of (N, C, *size) or (C, *size) input with (O, C/groups, *kernel) weight."
    )
    return api.function(name)(_parsed(_autocast.policy("lower")(conv)))


conv1d, conv2d, conv3d = (_declare(dims, False) for dims in (1, 2, 3))
conv_transpose1d, conv_transpose2d, conv_transpose3d = (_declare(dims, True) for dims in (1, 2, 3))
