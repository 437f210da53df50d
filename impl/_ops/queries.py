"""torch's questions to an object or a tensor: is_tensor, is_inference and numel."""

from __future__ import annotations

from typing import Any

from impl import _api as api
from impl._signatures import invalid_call
from impl._tensor import Tensor


@api.function("is_tensor")
def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)


@api.function("is_inference")
def is_inference(*args: Any, **kwargs: Any) -> bool:
    """Whether ``input`` was made in inference mode."""
    if not args and not kwargs:
        raise TypeError('is_inference() missing 1 required positional arguments: "input"')
    return _is_inference(*args, **kwargs)


def _is_inference(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise invalid_call(_is_inference, locals(), name="is_inference")
    return input.is_inference()


@api.function("numel")
def numel(input: Tensor) -> int:
    if not isinstance(input, Tensor):
        raise invalid_call(numel, locals())
    return input.numel()


@api.function("is_floating_point")
def is_floating_point(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise invalid_call(is_floating_point, locals())
    return input.dtype.is_floating_point


@api.variants("is_complex")
def is_complex(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise invalid_call(is_complex, locals())
    return input.dtype.is_complex


@api.variants("is_nonzero")
def is_nonzero(input: Tensor) -> bool:
    """Whether the one element of ``input`` is not zero (NaN is); torch refuses other sizes."""
    if not isinstance(input, Tensor):
        raise invalid_call(is_nonzero, locals())
    n = input.numel()
    if n != 1:
        which = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
    return bool(input.item() != 0)
