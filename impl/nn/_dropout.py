"""Dropout as torch's CPU kernel computes it (ATen's ``_dropout_impl``): a noise tensor of the
input's shape (or, for feature dropout, of shape ``(N, C, 1, ...)``) filled by ``bernoulli_(1 - p)``
(one double uniform per element on the default generator), divided by ``1 - p`` (alpha dropout:
scaled by ``a`` and shifted by ``b``), and multiplied into the input: MulBackward0 (AddBackward0
after alpha dropout's shift). p == 0, eval mode and an empty input return the input itself; p == 1
multiplies by a 0-dim zero. ``torch.dropout`` ... are the native functions, ``F.dropout`` ... their
Python wrappers with torch's checks and warnings.

This is torch's default ``bernoulli_`` stream, the one it uses on AMD and other CPUs. On an Intel
CPU, torch built with MKL (the pip wheels) draws a scalar-p ``bernoulli_`` from MKL's own generator
instead (seeded from the default generator), which impl does not reproduce: seeded masks there
differ from torch's (MOD-012's seeded programs and the unit tests assume a non-Intel CPU)."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from impl import _api as api
from impl import _creation, _random, dtypes
from impl import _grad_mode as grad_mode
from impl._layout import preserved_strides
from impl._names import type_name
from impl._signatures import invalid_call
from impl._tensor import Tensor

SELU_ALPHA = 1.7580993408473766  # alpha dropout's saturation: SELU's -lambda * alpha, negated


def _noise(input: Tensor, p: float, feature: bool, scaled: bool) -> Tensor:
    """``bernoulli_(1 - p)`` of an empty tensor of the input's dtype, shaped like the input or (for
    feature dropout) like its first two dimensions followed by ones; ``scaled``: then divided by
    ``1 - p`` as torch's ``div_`` does it (a float32 reciprocal multiplied in for float16 and
    bfloat16, a division in the dtype otherwise)."""
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (*input.shape[:2], *(1,) * (input.dim() - 2))
    else:
        shape = tuple(input.shape)
    n = int(np.prod(shape))
    # torch's noise is empty_like(input): laid out as the input, its draws made in memory order
    order = list(range(len(shape))) if feature else _memory_order(shape, input.stride())
    drawn = (_random.default_generator.uniform(n, True) < 1 - p).reshape([shape[d] for d in order])
    keep = drawn.transpose(np.argsort(order))
    if scaled:
        scale = 1 / (1 - p) if input.dtype == dtypes.float64 else np.float32(1) / np.float32(1 - p)
        keep = keep * np.float64(scale)
    return _creation.tensor(keep, dtype=input.dtype, device=input.device)


def _memory_order(shape: tuple, strides: tuple) -> list[int]:
    """The dimensions of a tensor like one of ``shape`` and ``strides`` (preserve_format), outermost
    first."""
    preserved = preserved_strides(shape, strides)
    return sorted(range(len(shape)), key=lambda d: -preserved[d])


def _dropout(input: Tensor, p: float, train: bool, feature: bool, alpha: bool, inplace: bool) -> Tensor:
    """ATen's ``_dropout_impl``."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    with grad_mode.no_grad():
        if p == 1:
            noise, shift = _creation.zeros((), dtype=input.dtype, device=input.device), None
        else:
            noise, shift = _noise(input, p, feature, not alpha), None
            if alpha:
                a = 1.0 / math.sqrt((SELU_ALPHA * SELU_ALPHA * p + 1) * (1 - p))
                shift = noise.add(-1).mul_(SELU_ALPHA * a).add_(SELU_ALPHA * a * p)
                noise.mul_(a)
    out = input.mul_(noise) if inplace else input * noise
    return out if shift is None else out.add_(shift)


NATIVE: dict = {}  # name -> torch.<name>, the native functions the wrappers call


def _native(name: str, feature: bool, alpha: bool, inplace: bool) -> None:
    """Declare ``torch.<name>(input, p, train)``."""

    def native(input: Tensor, p: float, train: bool) -> Tensor:
        if not isinstance(input, Tensor):
            raise invalid_call(native, locals(), name)
        for position, (arg, value, kind) in enumerate((("p", p, numbers.Real), ("train", train, bool)), 2):
            if not isinstance(value, kind) or (kind is numbers.Real and isinstance(value, bool)):
                expected = "float" if kind is numbers.Real else "bool"
                given = type_name(value)
                raise TypeError(
                    f"{name}(): argument '{arg}' (position {position}) must be {expected}, not {given}"
                )
        return _dropout(input, float(p), train, feature, alpha, inplace)

    native.__name__ = native.__qualname__ = name
    NATIVE[name] = api.function(name)(native)


for _name, _feature, _alpha in (
    ("dropout", False, False),
    ("feature_dropout", True, False),
    ("alpha_dropout", False, True),
    ("feature_alpha_dropout", True, True),
):
    _native(_name, _feature, _alpha, False)
    _native(f"{_name}_", _feature, _alpha, True)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _wrapper(name: str, feature: bool, alpha: bool, training: bool) -> object:
    """``F.<name>(input, p, training, inplace)``: torch's check of ``p``, then the native function."""

    def functional(input: Tensor, p: float = 0.5, training: bool = training, inplace: bool = False) -> Tensor:
        _check_p(p)
        native = f"{'feature_' if feature else ''}{'alpha_' if alpha else ''}dropout{'_' if inplace else ''}"
        return NATIVE[native](input, p, training)

    functional.__name__ = functional.__qualname__ = name
    return functional


dropout = _wrapper("dropout", False, False, True)
alpha_dropout = _wrapper("alpha_dropout", False, True, False)
feature_alpha_dropout = _wrapper("feature_alpha_dropout", True, True, False)


def _feature_nd(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    """Feature dropout, on the input given a batch dimension first unless ``batched``."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = NATIVE["feature_dropout_" if inplace else "feature_dropout"](input, p, training)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (C, L) or (N, C, L) inputs; others refused."""
    _check_p(p)
    dim = input.dim()
    if dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    return _feature_nd(input, p, training, inplace, dim == 3)


def _deprecated_dims(name: str, dim: int, spatial: int) -> None:
    """torch's warning for an input of dropout2d/3d outside its dimensions."""
    if dim not in (spatial + 1, spatial + 2):
        warnings.warn(
            f"{name}: Received a {dim}-D input to {name}, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that "
            f"{name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
            "a channel dimension, and an optional batch dimension "
            f"(i.e. {spatial + 1}D or {spatial + 2}D inputs).",
            stacklevel=3,
        )


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (N, C, H, W) inputs; a 3-D input is taken as (N, C, L), with torch's
    warning."""
    _check_p(p)
    dim = input.dim()
    _deprecated_dims("dropout2d", dim, 2)
    if dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_nd(input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (C, D, H, W) or (N, C, D, H, W) inputs."""
    _check_p(p)
    dim = input.dim()
    _deprecated_dims("dropout3d", dim, 3)
    return _feature_nd(input, p, training, inplace, dim == 5)
