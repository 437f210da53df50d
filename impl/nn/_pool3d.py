"""3-D pooling: max_pool3d (MaxPool3DWithIndicesBackward0), avg_pool3d (AvgPool3DBackward0),
adaptive_avg_pool3d and adaptive_max_pool3d (AdaptiveAvgPool3DBackward0, AdaptiveMaxPool3DBackward0),
on the n-d kernels of ``_pool``, with ATen's pool3d_shape_check and its messages."""

from __future__ import annotations

from typing import Any

from impl import dtypes
from impl._ops.table import apply
from impl._tensor import Tensor
from impl.nn._pool import (
    ADAPTIVE_AVG_POOL3D,
    ADAPTIVE_MAX_POOL3D,
    AVG_POOL3D,
    MAX_POOL3D,
    output_size,
)


def _triple(v: Any, name: str, fn: str) -> tuple[int, ...]:
    """torch's int[3] argument of max_pool3d / avg_pool3d: an int, or one or three ints."""
    if isinstance(v, (tuple, list)):
        if len(v) in (1, 3):
            return tuple(int(x) for x in v) * (3 if len(v) == 1 else 1)
        either = {"stride": "either be omitted, a single int", "dilation": "be either a single int"}.get(
            name, "either be a single int")
        if fn == "avg_pool3d":
            either = "be omitted, a single int" if name == "stride" else "be a single int"
        raise RuntimeError(f"{fn}: {name} must {either}, or a tuple of three ints")
    return (int(v),) * 3


def _args3d(input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
            fn: str) -> tuple:
    """The options as triples, checked in ATen's order (pooling_output_shape, pool3d_shape_check)."""
    k = _triple(kernel_size, "kernel_size", fn)
    omitted = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    s = k if omitted else _triple(stride, "stride", fn)
    p, d = _triple(padding, "padding", fn), _triple(dilation, "dilation", fn)
    if input.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if min(p) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    for kk, pp, dd in zip(k, p, d, strict=True):
        if kk > 0 and dd > 0 and pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}"
            )
    size = input.shape[-3:]
    if 0 in input.shape[-4:]:  # (ATen names dimension 0 whichever is empty)
        where = "max_pool3d_with_indices_out_cpu_template()" if fn == "max_pool3d" else f"{fn}()"
        raise RuntimeError(
            f"{where}: Expected input's non-batch dimensions to have positive length, but input has a "
            f"shape of {list(input.shape)} and non-batch dimension 0 has length zero!"
        )
    _shape_check(k, s, d, size, fn)
    out = tuple(output_size(size[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))
    if min(out) < 1:
        sizes = "x".join(map(str, input.shape[-4:]))
        raise RuntimeError(
            f"Given input size: ({sizes}). Calculated output size: ({input.shape[-4]}x"
            f"{'x'.join(map(str, out))}). Output size is too small"
        )
    return k, s, p, d


def _shape_check(k: tuple, s: tuple, d: tuple, size: tuple, fn: str) -> None:
    """pool3d_shape_check's checks of the options (avg_pool3d: the kernel within the input)."""
    for name, short, v in (("kernel size", "k", k), ("stride", "d", s), ("dilation", "dilation", d)):
        if min(v) <= 0:
            raise RuntimeError(
                f"{name} should be greater than zero, but got "
                f"{short}T: {v[0]} {short}H: {v[1]} {short}W: {v[2]}"
            )
    if fn == "avg_pool3d" and any(n < kk for n, kk in zip(size, k, strict=True)):
        raise RuntimeError(
            f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than kernel size "
            f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})"
        )


def max_pool3d_with_indices(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = True,
) -> tuple:
    """The max of each window and its flat index within the input's volume
    (MaxPool3DWithIndicesBackward0)."""
    k, s, p, d = _args3d(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d")
    return apply(MAX_POOL3D, input, kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=bool(ceil_mode))


def max_pool3d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False,
) -> Any:
    result = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return result if return_indices else result[0]


def avg_pool3d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
    count_include_pad: bool = True, divisor_override: int | None = None,
) -> Tensor:
    """The mean of each window (AvgPool3DBackward0); the divisor counts padding with
    ``count_include_pad``, or is ``divisor_override``."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, p, _ = _args3d(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool3d")
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing("avg_pool3d_out_frame", input.dtype)
    return apply(AVG_POOL3D, input, kernel_size=k, stride=s, padding=p, ceil_mode=bool(ceil_mode),
                 count_include_pad=bool(count_include_pad), divisor_override=divisor_override)


def _adaptive3d(input: Tensor, output_size: Any, fn: str) -> tuple[int, ...]:
    """torch's _list_with_default (a None taken from the input's size), then ATen's checks."""
    if isinstance(output_size, (tuple, list)) and input.dim() <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * 3
    if input.dim() not in (4, 5):
        colon = ":" if fn == "adaptive_max_pool3d" else ""
        raise RuntimeError(f"{fn}(): Expected 4D or 5D tensor, but got{colon} {list(input.shape)}")
    for i in range(input.dim() - 4, input.dim()):
        if input.shape[i] == 0 and (i > 0 or input.dim() == 4):
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {i} being empty"
            )
    if len(sizes) != 3:
        what = "internal error: output_size.size() must be 3" if fn == "adaptive_max_pool3d" else (
            "output_size must be 3")
        raise RuntimeError(f"{fn}(): {what}" if fn == "adaptive_max_pool3d" else f"{fn}: {what}")
    out = tuple(input.shape[i - 3] if n is None else int(n) for i, n in enumerate(sizes))
    if min(out) < 0:
        if fn == "adaptive_max_pool3d":
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                               f"{[*input.shape[:-3], *out]}")
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{out[0]}, {out[1]},{out[2]}}}")
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing(f"{fn}_cpu", input.dtype)
    return out


def _ones(input: Tensor, output_size: Any) -> bool:
    """Whether the output size asked for is 1x1x1 (a None: the input's size there)."""
    sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * 3
    if len(sizes) != 3 or input.dim() < 3:
        return False
    return [input.shape[i - 3] if n is None else n for i, n in enumerate(sizes)] == [1, 1, 1]


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Adaptive average pooling (AdaptiveAvgPool3DBackward0); a 1x1x1 output is a mean over the
    volume (MeanBackward1), as torch's."""
    if _ones(input, output_size):  # (any rank from 3, empty volumes too)
        return input.mean((-1, -2, -3), keepdim=True)
    out = _adaptive3d(input, output_size, "adaptive_avg_pool3d")
    return apply(ADAPTIVE_AVG_POOL3D, input, output_size=out)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = True) -> tuple:
    out = _adaptive3d(input, output_size, "adaptive_max_pool3d")
    return apply(ADAPTIVE_MAX_POOL3D, input, output_size=out)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    result = adaptive_max_pool3d_with_indices(input, output_size)
    return result if return_indices else result[0]
