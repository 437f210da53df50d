"""nn.functional.unfold and fold (ATen's im2col and col2im: Im2ColBackward0, Col2ImBackward0), each
the other's derivative, on the convolution's window copies (``columns``) and adds (``add_windows``):
a block's column holds channel, then kernel row, then kernel column, as torch's."""

from __future__ import annotations

from typing import Any

from impl import dtypes
from impl._names import type_name
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._tensor import Tensor
from impl.nn._conv import ConvParams, add_windows, columns, output_hw

_OPTIONS = ("kernel_size", "dilation", "padding", "stride")


def _conv_params(kernel_size: tuple, dilation: tuple, padding: tuple, stride: tuple) -> ConvParams:
    return ConvParams(stride, (padding[0], padding[0], padding[1], padding[1]), dilation, 1)


def _batched(a: Any) -> Any:
    """An unbatched (C, H, W) or (C*kH*kW, L) array with a unit batch."""
    return a[None]


def _im2col(xp: Any, a: Any, kernel_size: tuple, dilation: tuple, padding: tuple, stride: tuple) -> Any:
    x = a if a.ndim == 4 else _batched(a)
    cols = columns(xp, x, tuple(kernel_size), _conv_params(kernel_size, dilation, padding, stride))
    out = cols.reshape(x.shape[0], cols.shape[2], cols.shape[3])
    return out if a.ndim == 4 else out[0]


def _col2im(
    xp: Any, a: Any, output_size: tuple, kernel_size: tuple, dilation: tuple, padding: tuple, stride: tuple
) -> Any:
    x = a if a.ndim == 3 else _batched(a)
    p = _conv_params(kernel_size, dilation, padding, stride)
    n, c = x.shape[0], x.shape[1] // (kernel_size[0] * kernel_size[1])
    shape = (n, c, *output_size)
    out = add_windows(xp, x.reshape(n, c, *kernel_size, *output_hw(shape, kernel_size, p)), shape, p)
    return out if a.ndim == 3 else out[0]


def _options(c: Any) -> dict[str, tuple]:
    return {name: getattr(c, name) for name in _OPTIONS}


IM2COL = OpDef(  # (its derivative's op is declared below: the lambda reads it when it runs)
    "Im2ColBackward0",
    _im2col,
    derivatives={"self": D(" ".join(_OPTIONS) + " self", lambda g, c: apply(
        COL2IM, g, output_size=tuple(c.shape("self")[-2:]), **_options(c)))},
    jvp=auto_linear,
)
COL2IM = OpDef(
    "Col2ImBackward0",
    _col2im,
    derivatives={"self": D(" ".join(_OPTIONS), lambda g, c: apply(IM2COL, g, **_options(c)))},
    jvp=auto_linear,
)


def _pair(fn: str, name: str, position: int, value: Any) -> tuple[int, ...]:
    """torch's _pair, then the parser's int[2] argument and ATen's check of its length."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(
                f"{fn}(): argument '{name}' (position {position}) must be tuple of ints, but found element "
                f"of type {type_name(v)} at pos {i}"
            )
    if len(values) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")
    return values


def _pairs(fn: str, names: tuple, values: tuple) -> list[tuple[int, ...]]:
    """The int[2] arguments ``names`` (from position 2 on) of ATen's ``fn``."""
    return [_pair(fn, name, i + 2, v) for i, (name, v) in enumerate(zip(names, values, strict=True))]


def _check_options(kernel: tuple, dilation: tuple, padding: tuple, stride: tuple, order: str) -> None:
    """ATen's checks of the options (im2col and col2im check them in different orders)."""
    checks = {
        "kernel": (min(kernel) > 0, "kernel size should be greater than zero", "kernel", kernel),
        "dilation": (min(dilation) > 0, "dilation should be greater than zero", "dilation", dilation),
        "padding": (min(padding) >= 0, "padding should be non-negative", "pad", padding),
        "stride": (min(stride) > 0, "stride should be greater than zero", "stride", stride),
    }
    for key in order.split():
        ok, text, word, (h, w) = checks[key]
        if not ok:
            raise RuntimeError(f"{text}, but got {word}_height: {h} {word}_width: {w}")


def _blocks(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple[int, int]:
    return tuple(  # type: ignore[return-value]
        (n + 2 * p - (d * (k - 1) + 1)) // s + 1
        for n, k, d, p, s in zip(size, kernel, dilation, padding, stride, strict=True)
    )


def _floating(input: Tensor, kernel: str) -> None:
    """The CPU kernels' dtypes: floating, complex and bool."""
    d = input.dtype
    if not (d.is_floating_point or d.is_complex or d is dtypes.bool_):
        raise dtypes.kernel_missing(kernel, d)


def _pair_str(values: tuple) -> str:
    return f"({values[0]}, {values[1]})"


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sliding local blocks of a (N, C, H, W) or (C, H, W) input as columns (N, C*kH*kW, L)."""
    k, d, p, s = _pairs("im2col", _OPTIONS, (kernel_size, dilation, padding, stride))
    _check_options(k, d, p, s, "kernel dilation padding stride")
    valid = input.size(1) != 0 and input.size(2) != 0  # (torch's IndexError for fewer dimensions)
    ndim = input.dim()
    if not ((ndim == 3 and input.shape[0] and valid) or (ndim == 4 and valid and input.shape[3])):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
            f"for input, but got: {list(input.shape)}"
        )
    size = tuple(input.shape[-2:])
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size {_pair_str(size)}, kernel_size={_pair_str(k)}, dilation="
            f"{_pair_str(d)}, padding={_pair_str(p)}, calculated shape of the array of sliding blocks as "
            f"{_pair_str(blocks)}, but its components must be at least one."
        )
    _floating(input, "im2col_out_cpu")
    return apply(IM2COL, input, kernel_size=k, dilation=d, padding=p, stride=s)


def fold(
    input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Columns (N, C*kH*kW, L) or (C*kH*kW, L) summed back into (N, C, *output_size) (overlapping
    values added)."""
    values = (output_size, kernel_size, dilation, padding, stride)
    o, k, d, p, s = _pairs("col2im", ("output_size", *_OPTIONS), values)
    _check_options(k, d, p, s, "kernel stride dilation padding")
    shape = input.shape
    if not ((input.dim() == 2 and shape[0] and shape[1]) or (input.dim() == 3 and shape[1] and shape[2])):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
            f"dimensions for input, but got: {list(shape)}"
        )
    planes, length = shape[-2:]
    if planes % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={planes} and kernel_size={_pair_str(k)}."
        )
    blocks = _blocks(o, k, d, p, s)
    given = f"Given output_size={_pair_str(o)}, kernel_size={_pair_str(k)}, dilation={_pair_str(d)}, " \
        f"padding={_pair_str(p)}, stride={_pair_str(s)}, "
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"{given}expected size of input's dimension 2 to match the calculated number of sliding blocks "
            f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={length}."
        )
    if min(blocks) < 1:
        raise RuntimeError(
            f"{given}calculated shape of the array of sliding blocks as {_pair_str(blocks)}, which is too "
            "small (non-positive)"
        )
    if min(o) < 1:
        raise RuntimeError(
            f"Expected output spatial size to be positive, but got: output_size={_pair_str(o)}."
        )
    _floating(input, "col2im_out_cpu")
    return apply(COL2IM, input, output_size=o, kernel_size=k, dilation=d, padding=p, stride=s)
