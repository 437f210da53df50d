"""torch.pixel_shuffle and pixel_unshuffle (nn.functional's too): channels moved into space and
back, each the other's derivative (PixelShuffleBackward0, PixelUnshuffleBackward0); and
torch.channel_shuffle (ChannelShuffleBackward0: its derivative the shuffle in C / groups groups)."""

from __future__ import annotations

from typing import Any

from impl import _api as api
from impl._names import type_name
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._signatures import invalid_call
from impl._tensor import Tensor


def _shuffle(xp: Any, a: Any, factor: int) -> Any:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    *batch, c, h, w = a.shape
    oc = c // (factor * factor)
    v = a.reshape(*batch, oc, factor, factor, h, w)
    n = len(batch)
    v = v.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return xp.ascontiguousarray(v.reshape(*batch, oc, h * factor, w * factor))


def _unshuffle(xp: Any, a: Any, factor: int) -> Any:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    *batch, c, h, w = a.shape
    oh, ow = h // factor, w // factor
    v = a.reshape(*batch, c, oh, factor, ow, factor)
    n = len(batch)
    v = v.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return xp.ascontiguousarray(v.reshape(*batch, c * factor * factor, oh, ow))


PIXEL_SHUFFLE = OpDef(
    "PixelShuffleBackward0",
    lambda xp, a, factor: _shuffle(xp, a, factor),
    derivatives={"self": D("factor", lambda g, c: apply(PIXEL_UNSHUFFLE, g, factor=c.factor))},
    jvp=auto_linear,
)
PIXEL_UNSHUFFLE = OpDef(
    "PixelUnshuffleBackward0",
    lambda xp, a, factor: _unshuffle(xp, a, factor),
    derivatives={"self": D("factor", lambda g, c: apply(PIXEL_SHUFFLE, g, factor=c.factor))},
    jvp=auto_linear,
)


def _checked(fn: Any, values: dict, argument: str, name: str) -> tuple[Tensor, int]:
    """The input and factor of pixel_shuffle / pixel_unshuffle / channel_shuffle after torch's
    checks in its order."""
    input, factor = values["input"], values[argument]
    if not isinstance(input, Tensor):
        raise invalid_call(fn, values)
    if isinstance(factor, bool) or not isinstance(factor, int):
        raise TypeError(f"{name}(): argument '{argument}' (position 2) must be int, not {type_name(factor)}")
    if name == "channel_shuffle":  # (its own wording)
        if input.dim() <= 2:
            raise RuntimeError(
                f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}"
            )
        if factor <= 0:
            raise RuntimeError(
                f"Number of groups to divide channels in must be positive. Value of groups:{factor}"
            )
        return input, factor
    if input.dim() < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input with {input.dim()} "
            "dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {argument}, but got {factor}")
    return input, factor


@api.function("pixel_shuffle")
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    input, r = _checked(pixel_shuffle, locals(), "upscale_factor", "pixel_shuffle")
    if input.shape[-3] % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
            f"upscale_factor, but input.size(-3)={input.shape[-3]} is not divisible by {r * r}"
        )
    return apply(PIXEL_SHUFFLE, input, factor=r)


@api.function("pixel_unshuffle")
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    input, r = _checked(pixel_unshuffle, locals(), "downscale_factor", "pixel_unshuffle")
    for side, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {side} to be divisible by downscale_factor, but "
                f"input.size({dim})={input.shape[dim]} is not divisible by {r}"
            )
    return apply(PIXEL_UNSHUFFLE, input, factor=r)


def _channel_shuffle(xp: Any, a: Any, groups: int) -> Any:
    """(N, C, *) -> (N, C, *) with channel g * (C / groups) + i moved to i * groups + g."""
    n, c = a.shape[:2]
    v = a.reshape(n, groups, c // groups, *a.shape[2:]).swapaxes(1, 2)
    return xp.ascontiguousarray(v).reshape(a.shape)


CHANNEL_SHUFFLE = OpDef(
    "ChannelShuffleBackward0",
    _channel_shuffle,
    derivatives={"self": D("self groups", lambda g, c: apply(
        CHANNEL_SHUFFLE, g, groups=c.shape("self")[1] // c.groups))},
    jvp=auto_linear,
)


@api.function("channel_shuffle")
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Channels of (N, C, *) regrouped: ``groups`` groups of C / groups interleaved."""
    input, groups = _checked(channel_shuffle, locals(), "groups", "channel_shuffle")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    return apply(CHANNEL_SHUFFLE, input, groups=groups)
