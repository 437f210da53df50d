"""Pooling over the last two (or three) dims, as ATen's CPU kernels compute it: max pooling with
indices (MaxPool2DWithIndicesBackward0, 3D), average pooling (AvgPool2DBackward0, 3D), adaptive
average and max pooling (AdaptiveAvgPool2DBackward0, AdaptiveMaxPool2DBackward0, 3D), max unpooling
(MaxUnpool2DBackward0, 3D); the 1-D forms are the 2-D ones of an unsqueezed input, as torch's; LP
pooling composed as torch's Python composes it. The 2-D entry points are here, the 3-D ones in
``_pool3d``; the kernels serve both, the number of pooled dims being the kernel's length.

Regular windows are gathered tap by tap (the conv's ``_taps``: which outputs read a real input
element at each kernel position); sums run tap after tap in the kernel's row-major order, as
ATen's per-window loops add, so float32 results are torch's bit for bit. A max window picks its
first largest element, or its last NaN (ATen's ``val > maxval || isnan(val)``); indices are flat
within the input's plane (volume). Backward adds each output's gradient into its window in output
order.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from impl import _creation, dtypes
from impl._ops.table import D, OpDef, apply
from impl._tensor import Tensor
from impl.nn import _conv


def _tuple(v: Any, n: int, name: str, fn: str) -> tuple[int, ...]:
    """An int or a sequence of ``n`` ints (or of one) as ``n`` ints (torch's int[n] argument)."""
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * n
        if len(v) != n:
            raise RuntimeError(f"{fn}: {name} must either be a single int, or a tuple of {_WORDS[n]} ints")
        return tuple(int(x) for x in v)
    return (int(v),) * n


_WORDS = {2: "two", 3: "three"}


def output_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """ATen's pooling_output_shape: the last window must start inside the input or left padding."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


# -- kernels on arrays (planes or volumes in the last nd = len(kernel) dims) ----------------------
def _taps(size: tuple, k: tuple, s: tuple, p: tuple, d: tuple, out: tuple) -> Any:
    """The convolution's taps (``_conv._taps``) of a pooling window: per kernel position in
    row-major order, its flat index in the window, the output slices and the input slices."""
    params = _conv.ConvParams(tuple(s), tuple(v for pp in p for v in (pp, pp)), tuple(d), 1)
    for tap, outs, ins in _conv._taps((1, 1, *size), tuple(k), tuple(out), params):
        yield int(np.ravel_multi_index(tap, k)), outs, ins


def _flat(coords: list, size: tuple) -> Any:
    """Row-major flat indices within a volume of ``size`` of per-dim (broadcastable) coordinates."""
    return sum(c * math.prod(size[i + 1:]) for i, c in enumerate(coords))


def _windows(xp: Any, a: Any, k: tuple, s: tuple, p: tuple, d: tuple, out: tuple, fill: Any) -> tuple:
    """Every window of ``a`` as (..., *out, prod(k)) (``fill`` at padding), which taps are real
    (*out, prod(k)), and each tap's flat index in the plane (or volume)."""
    nd = len(k)
    size = a.shape[-nd:]
    taps = math.prod(k)
    vals = xp.full((*a.shape[:-nd], *out, taps), fill, dtype=a.dtype)
    valid = np.zeros((*out, taps), dtype=bool)
    starts = np.meshgrid(*[np.arange(o) * ss - pp for o, ss, pp in zip(out, s, p, strict=True)],
                         indexing="ij")
    offsets = np.indices(k).reshape(nd, taps)
    pos = _flat([starts[i][..., None] + offsets[i] * d[i] for i in range(nd)], size)
    for t, outs, ins in _taps(size, k, s, p, d, out):
        vals[(..., *outs, t)] = a[(..., *ins)]
        valid[(*outs, t)] = True
    return vals, valid, pos


def _select_max(xp: Any, vals: Any, valid: Any, pos: Any) -> tuple[Any, Any]:
    """Each window's first largest real element (or its last NaN) and its plane index."""
    valid = xp.asarray(valid)
    low = -np.inf if vals.dtype.kind == "f" else np.iinfo(vals.dtype).min
    best = xp.where(valid, vals, low).max(axis=-1, keepdims=True)
    choice = xp.argmax(valid & (vals == best), axis=-1)
    if vals.dtype.kind == "f":
        nan = valid & xp.isnan(vals)
        last_nan = nan.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        choice = xp.where(nan.any(axis=-1), last_nan, choice)
    picked = xp.take_along_axis(vals, choice[..., None], axis=-1)[..., 0]
    index = xp.take_along_axis(xp.broadcast_to(xp.asarray(pos), vals.shape), choice[..., None], axis=-1)
    return picked, index[..., 0].astype(np.int64)


def _max_pool_fwd(
    xp: Any, a: Any, kernel_size: tuple, stride: tuple, padding: tuple, dilation: tuple, ceil_mode: bool
) -> tuple:
    nd = len(kernel_size)
    size = a.shape[-nd:]
    out = tuple(
        output_size(size[i], kernel_size[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(nd)
    )
    low = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min
    vals, valid, pos = _windows(xp, a, kernel_size, stride, padding, dilation, out, low)
    values, indices = _select_max(xp, vals, valid, pos)
    empty = ~valid.any(axis=-1)
    if empty.any():  # a window all padding (dilated): ATen's index of its first tap at or past 0
        first = [np.arange(o) * s - p for o, s, p in zip(out, stride, padding, strict=True)]
        first = [np.where(f < 0, f + -(f // d) * d, f) for f, d in zip(first, dilation, strict=True)]
        start = _flat(np.meshgrid(*first, indexing="ij"), size)
        indices = xp.where(xp.asarray(empty), xp.asarray(start), indices)
    return values, indices


def _scatter_fwd(xp: Any, g: Any, a: Any, indices: Any, nd: int) -> Any:
    """The gradient ``g`` added at the plane (volume) ``indices`` of an input shaped like ``a``,
    in output order."""
    planes = math.prod(a.shape[:-nd])
    out = xp.zeros((planes, math.prod(a.shape[-nd:])), dtype=g.dtype)
    idx = getattr(indices, "_data", indices).reshape(planes, -1)
    # flat over all planes, as ATen's pointer arithmetic (an all-padding window's index may lie past
    # its plane, in the next one)
    flat = (np.arange(planes)[:, None] * out.shape[1] + idx).reshape(-1)
    inside = flat < out.size
    np.add.at(out.reshape(-1), flat[inside], g.reshape(-1)[inside])
    return out.reshape(a.shape)


def _avg_divisors(
    size: tuple, k: tuple, s: tuple, p: tuple, out: tuple, include_pad: bool, divisor: int | None
) -> Any:
    """ATen's divide_factor of each output position (*out)."""
    if divisor is not None:
        return np.full(out, divisor, dtype=np.int64)
    spans = []
    for n, kk, ss, pp, o in zip(size, k, s, p, out, strict=True):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        padded = end - start
        real = np.minimum(end, n) - np.maximum(start, 0)
        spans.append(padded if include_pad else real)
    return functools.reduce(np.multiply.outer, spans)


def _acc_dtype(dtype: Any) -> Any:
    return np.float32 if dtype in (np.float16,) or dtype.name == "bfloat16" else dtype


def _divide(xp: Any, total: Any, divisors: Any, dtype: Any) -> Any:
    if total.dtype.kind in "iu":  # C++ integer division truncates
        q = xp.abs(total) // divisors
        return (xp.sign(total) * q).astype(dtype)
    return (total / xp.asarray(divisors).astype(total.dtype)).astype(dtype, copy=False)


def _avg_pool_fwd(
    xp: Any,
    a: Any,
    kernel_size: tuple,
    stride: tuple,
    padding: tuple,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    nd = len(kernel_size)
    size = a.shape[-nd:]
    out = tuple(output_size(size[i], kernel_size[i], stride[i], padding[i], 1, ceil_mode) for i in range(nd))
    total = xp.zeros((*a.shape[:-nd], *out), dtype=_acc_dtype(a.dtype))
    for _, outs, ins in _taps(size, kernel_size, stride, padding, (1,) * nd, out):
        total[(..., *outs)] += a[(..., *ins)]
    divisors = _avg_divisors(size, kernel_size, stride, padding, out, count_include_pad, divisor_override)
    return _divide(xp, total, divisors, a.dtype)


def _avg_pool_backward_fwd(
    xp: Any,
    g: Any,
    a: Any,
    kernel_size: tuple,
    stride: tuple,
    padding: tuple,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    nd = len(kernel_size)
    size, out = a.shape[-nd:], g.shape[-nd:]
    divisors = _avg_divisors(size, kernel_size, stride, padding, out, count_include_pad, divisor_override)
    delta = g / xp.asarray(divisors).astype(g.dtype)
    result = xp.zeros(a.shape, dtype=g.dtype)
    # an input element gets its windows in output order: the taps in reverse
    for _, outs, ins in reversed(list(_taps(size, kernel_size, stride, padding, (1,) * nd, out))):
        result[(..., *ins)] += delta[(..., *outs)]
    return result


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    return [((o * size) // out, -(-((o + 1) * size) // out)) for o in range(out)]


def _adaptive_windows(size: tuple, out: tuple) -> Any:
    """Each output position of an adaptive pooling (row-major) and its window's (start, end) per dim."""
    bounds = [_adaptive_bounds(n, o) for n, o in zip(size, out, strict=True)]
    for position in itertools.product(*(range(o) for o in out)):
        yield position, [bounds[i][o] for i, o in enumerate(position)]


def _adaptive_avg_fwd(xp: Any, a: Any, output_size: tuple) -> Any:
    nd = len(output_size)
    batch = a.shape[:-nd]
    result = xp.empty((*batch, *output_size), dtype=a.dtype)
    for position, window in _adaptive_windows(a.shape[-nd:], output_size):
        total = xp.zeros(batch, dtype=_acc_dtype(a.dtype))
        for element in itertools.product(*(range(lo, hi) for lo, hi in window)):
            total += a[(..., *element)]
        for lo, hi in window:
            total = total / (hi - lo)
        result[(..., *position)] = total
    return result


def _adaptive_avg_backward_fwd(xp: Any, g: Any, a: Any, nd: int) -> Any:
    result = xp.zeros(a.shape, dtype=g.dtype)
    for position, window in _adaptive_windows(a.shape[-nd:], g.shape[-nd:]):
        delta = g[(..., *position, *[None] * nd)]
        for lo, hi in window:
            delta = delta / (hi - lo)
        result[(..., *(slice(lo, hi) for lo, hi in window))] += delta
    return result


def _adaptive_max_fwd(xp: Any, a: Any, output_size: tuple) -> tuple:
    nd = len(output_size)
    batch, size = a.shape[:-nd], a.shape[-nd:]
    values = xp.empty((*batch, *output_size), dtype=a.dtype)
    indices = xp.empty((*batch, *output_size), dtype=np.int64)
    for position, window in _adaptive_windows(size, output_size):
        vals = a[(..., *(slice(lo, hi) for lo, hi in window))].reshape(*batch, -1)
        pos = _flat(np.meshgrid(*(np.arange(lo, hi) for lo, hi in window), indexing="ij"), size).reshape(-1)
        valid = np.ones(pos.shape, dtype=bool)
        values[(..., *position)], indices[(..., *position)] = _select_max(xp, vals, valid, pos)
    return values, indices


# -- ops -------------------------------------------------------------------------------------------
def _zeros_like_self(g: Any, c: Any) -> Tensor:
    return _creation.zeros(c.shape("self"), dtype=g.dtype, device=g.device)


def _gathered(gg: Tensor, indices: Tensor, out_shape: tuple, nd: int) -> Tensor:
    """max_pool_double_backward: the gradient's gradient read back at each output's index."""
    flat = gg.reshape(*gg.shape[:-nd], -1)
    return flat.gather(-1, indices.reshape(*indices.shape[:-nd], -1)).reshape(out_shape)


def _max_pool_ops(name: str, forward: Any, nd: int) -> tuple[OpDef, OpDef]:
    """A max pool's op (result and indices, ``<name>Backward0``) and its backward's op
    (``<name>BackwardBackward0``: the gradient scattered to each window's maximum; its own gradient
    read back at the indices, max_pool_double_backward)."""
    backward = OpDef(
        f"{name}BackwardBackward0",
        lambda xp, g, a, indices, **_: _scatter_fwd(xp, g, a, indices, nd),
        ("grad_output", "self"),
        {
            "grad_output": D("indices", lambda gg, c: _gathered(gg, c.indices, c.shape("grad_output"), nd)),
            "self": D("", _zeros_like_self),
        },
    )
    op = OpDef(
        f"{name}Backward0",
        forward,
        outputs=("result", "indices"),
        derivatives={"self": D("self indices", lambda g, c: apply(backward, g, c.self, indices=c.indices))},
    )
    return op, backward


MAX_POOL2D, MAX_POOL2D_BACKWARD = _max_pool_ops("MaxPool2DWithIndices", _max_pool_fwd, 2)
MAX_POOL3D, MAX_POOL3D_BACKWARD = _max_pool_ops("MaxPool3DWithIndices", _max_pool_fwd, 3)
ADAPTIVE_MAX_POOL2D, ADAPTIVE_MAX_POOL2D_BACKWARD = _max_pool_ops("AdaptiveMaxPool2D", _adaptive_max_fwd, 2)
ADAPTIVE_MAX_POOL3D, ADAPTIVE_MAX_POOL3D_BACKWARD = _max_pool_ops("AdaptiveMaxPool3D", _adaptive_max_fwd, 3)
_AVG = "kernel_size stride padding ceil_mode count_include_pad divisor_override"


def _avg_attrs(c: Any) -> dict:
    return {name: getattr(c, name) for name in _AVG.split()}


def _avg_pool_ops(nd: int) -> tuple[OpDef, OpDef]:
    """avg_pool{nd}d's op (AvgPool{nd}DBackward0) and its backward's (AvgPool{nd}DBackwardBackward0),
    each the other's derivative."""
    ops: list[OpDef] = []
    ops.append(OpDef(
        f"AvgPool{nd}DBackward0",
        _avg_pool_fwd,
        derivatives={"self": D("self " + _AVG, lambda g, c: apply(ops[1], g, c.self, **_avg_attrs(c)))},
    ))
    ops.append(OpDef(
        f"AvgPool{nd}DBackwardBackward0",
        _avg_pool_backward_fwd,
        ("grad_output", "self"),
        {
            "grad_output": D(_AVG, lambda gg, c: apply(ops[0], gg, **_avg_attrs(c))),
            "self": D("", _zeros_like_self),
        },
    ))
    return ops[0], ops[1]


def _adaptive_avg_ops(nd: int) -> tuple[OpDef, OpDef]:
    """adaptive_avg_pool{nd}d's op (AdaptiveAvgPool{nd}DBackward0) and its backward's, each the
    other's derivative."""
    ops: list[OpDef] = []
    ops.append(OpDef(
        f"AdaptiveAvgPool{nd}DBackward0",
        _adaptive_avg_fwd,
        derivatives={"self": D("self", lambda g, c: apply(ops[1], g, c.self))},
    ))
    ops.append(OpDef(
        f"AdaptiveAvgPool{nd}DBackwardBackward0",
        lambda xp, g, a: _adaptive_avg_backward_fwd(xp, g, a, nd),
        ("grad_output", "self"),
        {
            "grad_output": D(
                "grad_output",
                lambda gg, c: apply(ops[0], gg, output_size=tuple(c.shape("grad_output")[-nd:])),
            ),
            "self": D("", _zeros_like_self),
        },
    ))
    return ops[0], ops[1]


AVG_POOL2D, AVG_POOL2D_BACKWARD = _avg_pool_ops(2)
AVG_POOL3D, AVG_POOL3D_BACKWARD = _avg_pool_ops(3)
ADAPTIVE_AVG_POOL2D, ADAPTIVE_AVG_POOL2D_BACKWARD = _adaptive_avg_ops(2)
ADAPTIVE_AVG_POOL3D, ADAPTIVE_AVG_POOL3D_BACKWARD = _adaptive_avg_ops(3)

# -- checks (ATen's pool2d_shape_check and friends) ------------------------------------------------
def _check_input(input: Tensor, fn: str) -> None:
    if fn == "avg_pool2d" and input.dim() < 3:  # (avg_pool2d reads the size of dim -3 first)
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
            f"{max(input.dim(), 1) - 1}], but got -3)"
        )
    if input.dim() not in (3, 4) and fn != "avg_pool2d":  # (avg_pool2d's message is the one below)
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if input.dim() not in (3, 4) or any(n == 0 for n in input.shape[-3:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(input.shape)}"
        )


def _check_pool2d(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, out: tuple) -> None:
    if any(n <= 0 for n in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if any(n <= 0 for n in s):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if any(n <= 0 for n in d):
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}"
        )
    for kk, pp, dd in zip(k, p, d, strict=True):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}"
            )
    c, h, w = input.shape[-3:]
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out[0]}x{out[1]}). "
            "Output size is too small"
        )


def _pool_args(
    input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool, fn: str
) -> tuple:
    k = _tuple(kernel_size, 2, "kernel_size", fn)
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        s = k
    else:
        s = _tuple(stride, 2, "stride", fn)
    if any(n == 0 for n in s):
        raise RuntimeError("stride should not be zero")
    p = _tuple(padding, 2, "padding", fn)
    d = _tuple(dilation, 2, "dilation", fn)
    if any(n < 0 for n in p):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    _check_input(input, fn)
    out = tuple(
        output_size(input.shape[i - 2], k[i], s[i], p[i], d[i], ceil_mode) if k[i] > 0 and d[i] > 0 else 0
        for i in range(2)
    )
    _check_pool2d(input, k, s, p, d, out)
    return k, s, p, d


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple:
    """The max of each window and its index within the input's plane (MaxPool2DWithIndicesBackward0)."""
    k, s, p, d = _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    return apply(MAX_POOL2D, input, kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=bool(ceil_mode))


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each window (AvgPool2DBackward0); the divisor counts padding with
    ``count_include_pad``, or is ``divisor_override``."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _ = _pool_args(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")
    return apply(
        AVG_POOL2D,
        input,
        kernel_size=k,
        stride=s,
        padding=p,
        ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad),
        divisor_override=divisor_override,
    )


def _check_adaptive_input(input: Tensor, fn: str) -> None:
    if input.dim() not in (3, 4):
        colon = ":" if fn == "adaptive_max_pool2d" else ""
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got{colon} {list(input.shape)}")
    for i in range(input.dim() - 2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {i} being empty"
            )


def _adaptive_size(input: Tensor, output_size: Any, fn: str) -> tuple[int, int]:
    """torch's _list_with_default (a sequence's None taken from the input's size), then ATen's
    checks of the output size (adaptive_max_pool2d checks the input first)."""
    if isinstance(output_size, (tuple, list)) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if fn == "adaptive_max_pool2d":
        _check_adaptive_input(input, fn)
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    if len(sizes) != 2:
        raise RuntimeError(f"{fn}: output_size must be 2")
    out = tuple(input.shape[i - 2] if n is None else int(n) for i, n in enumerate(sizes))
    if any(n < 0 for n in out):
        raise RuntimeError(
            f"{fn}: elements of output_size must be greater than or equal to 0 but received "
            f"{{{out[0]}, {out[1]}}}"
        )
    return out  # type: ignore[return-value]


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling (AdaptiveAvgPool2DBackward0); a 1x1 output is a mean over the
    plane (MeanBackward1), as torch's."""
    out = _adaptive_size(input, output_size, "adaptive_avg_pool2d")
    if out == (1, 1):  # (any rank, empty planes too)
        return input.mean((-1, -2), keepdim=True)
    _check_adaptive_input(input, "adaptive_avg_pool2d")
    return apply(ADAPTIVE_AVG_POOL2D, input, output_size=out)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> tuple:
    out = _adaptive_size(input, output_size, "adaptive_max_pool2d")
    return apply(ADAPTIVE_MAX_POOL2D, input, output_size=out)


def unsqueezed(fn: Any, input: Tensor, *args: Any) -> Any:
    """A 2-D pooling of ``input`` with a height-1 dim added before its last, then removed."""
    result = fn(input.unsqueeze(-2), *args)
    if isinstance(result, tuple):
        return tuple(t.squeeze(-2) for t in result)
    return result.squeeze(-2)


def check_pool1d_input(input: Tensor, fn: str) -> None:
    """ATen's checkDimRange(2, 4) of a 1-D pooling's input."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
            f"'self' (while checking arguments for {fn})"
        )


def _single(v: Any, name: str, fn: str) -> int:
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"{fn}() {name} must be a single int, or a tuple of one int")
        return int(v[0])
    return int(v)


def pool1d_args(kernel_size: Any, stride: Any, padding: Any, dilation: Any, fn: str) -> tuple:
    k = _single(kernel_size, "kernel_size", fn)
    s = (
        k
        if stride is None or (isinstance(stride, (tuple, list)) and not stride)
        else _single(stride, "stride", fn)
    )
    return k, s, _single(padding, "padding", fn), _single(dilation, "dilation", fn)


def max_pool1d_checks(input: Tensor, k: int, s: int, p: int, d: int, ceil_mode: bool) -> None:
    """ATen's check_max_pool1d (the messages of max_pool1d without indices)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
            "but got:"
            f"{list(input.shape)}"
        )
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={p} and kernel_size={k}"
        )
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = output_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out < 0 or out == 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


# -- torch.nn.functional's pooling -------------------------------------------------------------------
def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    result = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return result if return_indices else result[0]


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple:
    """max_pool2d_with_indices of the input with a height-1 dim (SqueezeBackward1 on top)."""
    k, s, p, d = pool1d_args(kernel_size, stride, padding, dilation, "max_pool1d")
    check_pool1d_input(input, "max_pool1d")
    return unsqueezed(max_pool2d_with_indices, input, (1, k), (1, s), (0, p), (1, d), ceil_mode)


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    k, s, p, d = pool1d_args(kernel_size, stride, padding, dilation, "max_pool1d")
    max_pool1d_checks(input, k, s, p, d, ceil_mode)
    return unsqueezed(max_pool2d_with_indices, input, (1, k), (1, s), (0, p), (1, d), ceil_mode)[0]


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """avg_pool2d of the input with a height-1 dim (SqueezeBackward1 on top)."""
    k, s, p, _ = pool1d_args(kernel_size, stride, padding, 1, "avg_pool1d")
    check_pool1d_input(input, "avg_pool1d")
    return unsqueezed(avg_pool2d, input, (1, k), (1, s), (0, p), ceil_mode, count_include_pad)


def _adaptive_pool1d(pool2d: Any, fn: str, input: Tensor, output_size: Any) -> Any:
    """ATen's adaptive 1-D pooling: its checks, then the 2-D pooling over a unit height."""
    check_pool1d_input(input, fn)
    if fn == "adaptive_max_pool1d":
        for i in range(1, input.dim()):
            if input.shape[i] == 0:
                raise RuntimeError(
                    f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                    f"sizes {list(input.shape)} with dimension {i} being empty"
                )
    if isinstance(output_size, (tuple, list)) and len(output_size) != 1:
        raise RuntimeError(f"{fn}() argument 'output_size' should contain one int (got {len(output_size)})")
    return unsqueezed(pool2d, input, (1, _single(output_size, "output_size", fn)))


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive_pool1d(adaptive_avg_pool2d, "adaptive_avg_pool1d", input, output_size)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> tuple:
    """adaptive_max_pool2d over a unit height (SqueezeBackward1 on AdaptiveMaxPool2DBackward0)."""
    return _adaptive_pool1d(adaptive_max_pool2d_with_indices, "adaptive_max_pool1d", input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    result = adaptive_max_pool1d_with_indices(input, output_size)
    return result if return_indices else result[0]


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    result = adaptive_max_pool2d_with_indices(input, output_size)
    return result if return_indices else result[0]


def _lp_pool(max_pool: Any, avg_pool: Any, input: Tensor, norm_type: Any, kernel_size: Any, stride: Any,
             ceil_mode: bool, window: int) -> Tensor:
    """F.lp_pool1d/2d as torch composes it: the max pool of |x| for an infinite norm_type, else the
    average of x ** p over a window of ``window`` elements, times ``window``, to the power 1 / p."""
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(window).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: Any, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    return _lp_pool(max_pool1d, avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode, kernel_size)


def lp_pool2d(
    input: Tensor, norm_type: Any, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    kw, kh = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    return _lp_pool(max_pool2d, avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode, kw * kh)


# -- max_unpool (MaxUnpool2DBackward0, MaxUnpool3DBackward0; 1-D as 2-D over a unit width) --------
def _max_unpool_fwd(xp: Any, a: Any, indices: Any, out_hw: tuple) -> Any:
    """Each value written at its plane (volume) index of a zero output (N, C, *out_hw); a later
    value at the same index overwrites."""
    planes = a.shape[:-len(out_hw)]
    out = xp.zeros((*planes, math.prod(out_hw)), dtype=a.dtype)
    flat = getattr(indices, "_data", indices).reshape(*planes, -1)
    np.put_along_axis(out, flat, a.reshape(*planes, -1), axis=-1)
    return out.reshape(*planes, *out_hw)


def _max_unpool_op(nd: int) -> OpDef:
    return OpDef(
        f"MaxUnpool{nd}DBackward0",
        _max_unpool_fwd,
        derivatives={"self": D("self indices", lambda g, c: _gathered(g, c.indices, c.shape("self"), nd))},
    )


MAX_UNPOOL2D, MAX_UNPOOL3D = _max_unpool_op(2), _max_unpool_op(3)


def _unpool_size(
    input: Tensor, kernel_size: Any, stride: Any, padding: Any, output_size: Any, n: int
) -> list[int]:
    """torch's _unpool_output_size of an ``n``-d unpooling (the options as _single / _pair make
    them, the stride the kernel's by default): the default size, or ``output_size`` (its last n
    dims) within a stride of it."""
    k, p = _as_tuple(kernel_size, n), _as_tuple(padding, n)
    s = k if stride is None else _as_tuple(stride, n)
    default = [(input.shape[-n + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(n)]
    size = default
    if output_size is not None:
        size = list(output_size)[2:] if len(output_size) == n + 2 else list(output_size)
        if len(size) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length "
                f"of '{len(size)}'"
            )
        for d in range(n):
            low, high = default[d] - s[d], default[d] + s[d]
            if not low < size[d] < high:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})'
                )
    for d in range(n):
        if size[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                f"output_size[{d}]={size[d]}"
            )
    return size


def _max_unpool(input: Tensor, indices: Tensor, out_hw: tuple) -> Tensor:
    """ATen's max_unpooling2d/3d_forward_out_cpu (by ``len(out_hw)``): its checks in its order,
    then MaxUnpool2DBackward0 (3D). Of several invalid indices impl names the first; which one
    torch names follows its kernel's loop (not modelled)."""
    nd = len(out_hw)
    if indices.dtype != dtypes.int64:
        found = dtypes.scalar_type(indices.dtype)
        raise RuntimeError(f"elements in indices should be type int64 but got: {found}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
            f"{input.dim()} dimensions."
        )
    if input.shape != indices.shape:
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    for d in range(input.dim() - nd - 1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                f"dimensions, but got {list(input.shape)} with dimension {d} being empty."
            )
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise dtypes.kernel_missing(f"max_unpool{nd}d", input.dtype)
    index = indices._data
    bad = (index < 0) | (index >= math.prod(out_hw))
    if bad.any():
        raise RuntimeError(
            f"Found an invalid max index: {index[bad][0]} (output volumes are of size "
            f"{'x'.join(map(str, out_hw))})"
        )
    return apply(MAX_UNPOOL2D if nd == 2 else MAX_UNPOOL3D, input, indices=indices, out_hw=tuple(out_hw))


def _max_unpool_nd(n: int) -> Any:
    """F.max_unpool{n}d (2-D, 3-D): the partial inverse of max_pool{n}d, each value put back at its
    index, zeros elsewhere."""

    def unpool(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               output_size: Any = None) -> Tensor:
        size = _unpool_size(input, kernel_size, stride, padding, output_size, n)
        return _max_unpool(input, indices, tuple(size))

    unpool.__name__ = unpool.__qualname__ = f"max_unpool{n}d"
    unpool.__doc__ = f"The partial inverse of max_pool{n}d: each value put back at its index."
    return unpool


max_unpool2d, max_unpool3d = _max_unpool_nd(2), _max_unpool_nd(3)


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """max_unpool2d over a unit width (UnsqueezeBackward0 and SqueezeBackward1 around it)."""
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), (*size, 1)).squeeze(-1)


def _as_tuple(v: Any, n: int) -> tuple:
    """torch's _single / _pair / _triple (``n`` = 1, 2, 3): a number repeated, a sequence as it is."""
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n
