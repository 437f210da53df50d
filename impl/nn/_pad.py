"""torch.nn.functional.pad: constant, reflect, replicate and circular padding with torch's graphs.

``pad`` lists (left, right) amounts from the last dimension backwards; negative amounts crop.
Reflect and replicate are gathers through one index array per padded dimension
(ReflectionPad{k}DBackward0 / ReplicationPad{k}DBackward0, whose backward scatter-adds and is
itself an op, ...BackwardBackward0, as in torch). Circular padding is built as ATen's
``_pad_circular`` builds it: an empty tensor and slice copies (CopySlices nodes).
"""

from __future__ import annotations

import functools
from typing import Any

from impl import _creation
from impl._ops.elementwise import zero_grad
from impl._ops.table import D, OpDef, apply, linear_part
from impl._tensor import Tensor

_UNSUPPORTED = (
    "Padding size {size} is not supported for {ndim}D input tensor.\n"
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)
_NAMES = {"reflect": "ReflectionPad{k}D", "replicate": "ReplicationPad{k}D"}


def _pairs(pad: tuple[int, ...], ndim: int) -> list[tuple[int, int, int]]:
    """(dim, left, right) for each padded dimension, last dimension first."""
    return [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def _source_index(xp: Any, size: int, left: int, right: int, mode: str) -> Any:
    """For each output position along one dimension, the input position it copies."""
    j = xp.arange(-left, size + right)
    if mode == "replicate":
        return xp.clip(j, 0, size - 1)
    j = xp.abs(j)  # reflect about 0, then about size - 1
    return xp.where(j > size - 1, 2 * (size - 1) - j, j)


def _key(xp: Any, shape: tuple, pad: tuple, mode: str) -> tuple:
    """An advanced-indexing key gathering the padded array from the input array."""
    key: list[Any] = [slice(None)] * len(shape)
    pairs = _pairs(pad, len(shape))
    for n, (dim, left, right) in enumerate(pairs):
        index = _source_index(xp, shape[dim], left, right, mode)
        key[dim] = index.reshape((-1,) + (1,) * n)
    return tuple(key)


def _gather(xp: Any, a: Any, pad: tuple, mode: str) -> Any:
    return a[_key(xp, a.shape, pad, mode)]


def _scatter(xp: Any, g: Any, self: Any, pad: tuple, mode: str) -> Any:
    out = xp.zeros(self.shape, dtype=g.dtype)
    xp.add.at(out, _key(xp, self.shape, pad, mode), g)
    return out


@functools.cache
def _gather_ops(mode: str, k: int) -> tuple[OpDef, OpDef]:
    """The forward op of ``mode`` over ``k`` dimensions and its backward op (for create_graph)."""
    name = _NAMES[mode].format(k=k)
    backward = OpDef(
        name + "BackwardBackward0",
        lambda xp, g, self, padding: _scatter(xp, g, self, padding, mode),
        ("grad_output", "self"),
        {
            "grad_output": D("padding", lambda gg, c: apply(forward, gg, padding=c.padding)),
            "self": D("", zero_grad),
        },
    )
    forward = OpDef(
        name + "Backward0",
        lambda xp, a, padding: _gather(xp, a, padding, mode),
        derivatives={"self": D("self padding", lambda g, c: apply(backward, g, c.self, padding=c.padding))},
    )
    return forward, backward


def _constant_fwd(xp: Any, a: Any, pad: tuple, value: float) -> Any:
    pairs = _pairs(pad, a.ndim)
    crop: list[Any] = [slice(None)] * a.ndim
    widths = [(0, 0)] * a.ndim
    for dim, left, right in pairs:
        crop[dim] = slice(max(-left, 0), a.shape[dim] - max(-right, 0))
        widths[dim] = (max(left, 0), max(right, 0))
    return xp.pad(a[tuple(crop)], widths, constant_values=value)


CONSTANT_PAD = OpDef(
    "ConstantPadNdBackward0",
    _constant_fwd,
    derivatives={
        "self": D("pad", lambda g, c: apply(CONSTANT_PAD, g, pad=tuple(-p for p in c.pad), value=0))
    },
    jvp=linear_part(value=0),  # constant_pad_nd(self_t, pad, 0)
)


def _check_gather(input: Tensor, pad: tuple, mode: str) -> None:
    """torch's checks for reflect/replicate: non-padded dims non-empty, reflect amounts < size."""
    k, shape = len(pad) // 2, tuple(input.shape)
    if any(s == 0 for s in shape[1:]):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {list(shape)}"
        )
    if mode != "reflect":
        return
    for n, (dim, left, right) in enumerate(_pairs(pad, len(shape))):
        if left >= shape[dim] or right >= shape[dim]:
            raise RuntimeError(
                f"Argument #{4 + 2 * n}: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({left}, {right}) at dimension {dim} of input {list(shape)}"
            )


def _circular(input: Tensor, pad: tuple) -> Tensor:
    """ATen's _pad_circular: the input copied into the middle of an empty tensor, then each padded
    dimension's left and right borders copied from the opposite side."""
    shape = list(input.shape)
    pairs = _pairs(pad, len(shape))
    out_shape = list(shape)
    for dim, left, right in pairs:
        if left > shape[dim] or right > shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[dim] = shape[dim] + left + right
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = _creation.empty(out_shape, dtype=input.dtype, device=input.device)
    middle, source = out, input
    for dim, left, right in pairs:
        middle = middle.narrow(dim, max(left, 0), out_shape[dim] - max(left, 0) - max(right, 0))
        source = source.narrow(dim, max(-left, 0), shape[dim] - max(-left, 0) - max(-right, 0))
    middle.copy_(source)
    for dim, left, right in pairs:
        size = out_shape[dim]
        if left > 0:
            out.narrow(dim, 0, left).copy_(out.narrow(dim, size - left - max(right, 0), left))
        if right > 0:
            out.narrow(dim, size - right, right).copy_(out.narrow(dim, max(left, 0), right))
    return out


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad ``input`` by ``pad`` ((left, right) per dimension, last dimension first) in ``mode``."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():  # every mode, before its own checks
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got "
            f"padding length {len(pad)} and input of dimension {input.dim()}"
        )
    if mode == "constant":
        return apply(CONSTANT_PAD, input, pad=pad, value=0.0 if value is None else value)
    if value is not None and value != 0.0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
        raise NotImplementedError(_UNSUPPORTED.format(size=len(pad), ndim=input.dim()))
    if mode == "circular":
        return _circular(input, pad)
    _check_gather(input, pad, mode)
    return apply(_gather_ops(mode, k)[0], input, padding=pad)
