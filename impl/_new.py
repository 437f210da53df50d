"""Tensor methods that make new tensors like ``self``: the legacy ``new`` and ``new_tensor``,
``new_zeros``, ``new_ones``, ``new_full``, ``new_empty``, with torch's argument parsing (size as
ints or one sequence; dtype, device and requires_grad default to none of ``self``'s autograd
state, ``self``'s dtype and device)."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from impl import _creation, _legacy, dtypes
from impl._deterministic import uninitialised
from impl._names import type_name
from impl._size import Size
from impl._tensor import Tensor

_OPTIONS = ("dtype", "layout", "device", "pin_memory", "requires_grad")
COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor)."
)


def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.new(...)``: torch's legacy constructor of ``x``'s dtype on ``x``'s device type."""
    return _legacy.legacy_construct(self.dtype, self.device.type, "new", args, kwargs)


def _options(name: str, kwargs: dict, allowed: tuple[str, ...]) -> dict:
    """The keyword options, checked as torch's parser checks them."""
    for key, value in kwargs.items():
        if key not in allowed:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if key == "requires_grad" and type(value) is not bool:
            raise TypeError(f"{name}(): argument 'requires_grad' must be bool, not {type_name(value)}")
        if key == "dtype" and value is not None and not isinstance(value, dtypes.dtype):
            raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not {type_name(value)}")
    return kwargs


def _size(name: str, value: Any) -> tuple[int, ...]:
    """A ``tuple of ints size`` argument given alone: an int, or a sequence of ints."""
    if isinstance(value, (Size, tuple, list)):
        return _legacy.int_sizes(name, value)
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
        raise TypeError(
            f"{name}(): argument 'size' (position 1) must be tuple of ints, not {type_name(value)}"
        )
    return (operator.index(value),)


def _sized(name: str, args: tuple, kwargs: dict, positional: int = 1) -> tuple[tuple[int, ...], tuple]:
    """The size (spread ints, one sequence, or ``size=``) and the other positional arguments of
    a ``new_*`` method taking ``positional`` arguments, size first."""
    if "size" in kwargs:
        if args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        return _size(name, kwargs.pop("size")), ()
    if not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    first = args[0]
    spread = (
        positional == 1 and hasattr(first, "__index__") and not isinstance(first, (bool, np.bool_, Tensor))
    )
    if spread and len(args) > 1:  # ints spread: x.new_zeros(2, 3)
        return _legacy.int_sizes(name, args), ()
    if len(args) > positional:
        raise TypeError(
            f"{name}() takes {positional} positional argument{'s' if positional > 1 else ''} but "
            f"{len(args)} were given"
        )
    if positional == 1 or isinstance(first, (Size, tuple, list)):
        return _size(name, first), args[1:]
    raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not {type_name(first)}")


def _made(self: Tensor, size: tuple, fill: Any, options: dict) -> Tensor:
    d = options.get("dtype") or self.dtype
    device = options.get("device") or self.device
    if callable(fill):  # what uninitialised memory of that dtype holds
        fill = fill(d.np)
    negative = [n for n in size if n < 0]
    if negative:
        shown = ", ".join(map(str, size))
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: [{shown}]")
    return _creation.full(
        size, fill, dtype=d, device=device, requires_grad=options.get("requires_grad", False)
    )


def _filled(name: str, fill: Any) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        size, _ = _sized(name, args, dict(kwargs))
        return _made(
            self, size, fill, _options(name, {k: v for k, v in kwargs.items() if k != "size"}, _OPTIONS)
        )

    method.__name__ = name
    return method


new_zeros = _filled("new_zeros", 0)
new_ones = _filled("new_ones", 1)
new_empty = _filled("new_empty", uninitialised)  # zeros, or torch's deterministic fill


def new_full(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.new_full(size, fill_value)``: size is one sequence here (no spread ints)."""
    kwargs = dict(kwargs)
    named = {k: kwargs.pop(k) for k in ("size", "fill_value") if k in kwargs}
    if len(args) > 2:
        raise TypeError(f"new_full() takes 2 positional arguments but {len(args)} were given")
    given = dict(zip(("size", "fill_value"), args, strict=False))
    for key, value in named.items():
        if key in given:
            raise TypeError(f"new_full() got multiple values for argument '{key}'")
        given[key] = value
    order = ("size", "fill_value")
    first_missing = next((i for i, k in enumerate(order) if k not in given), None)
    if first_missing is not None:  # torch names the parameters from the first one missing, its grammar
        missing = [f'"{k}"' for k in order[first_missing:]]
        noun = "arguments" if len(missing) == 1 else "argument"
        raise TypeError(f"new_full() missing {len(missing)} required positional {noun}: {', '.join(missing)}")
    size, fill = given["size"], given["fill_value"]
    if not isinstance(size, (Size, tuple, list)):
        raise TypeError(
            f"new_full(): argument 'size' (position 1) must be tuple of ints, not {type_name(size)}"
        )
    size = _legacy.int_sizes("new_full", size)
    if isinstance(fill, Tensor) and fill.dim() == 0:
        fill = fill.item()
    if not isinstance(fill, (bool, int, float, np.number, np.bool_)):
        where = " (position 2)" if "fill_value" not in named else ""
        raise TypeError(f"new_full(): argument 'fill_value'{where} must be Number, not {type_name(fill)}")
    return _made(self, size, fill, _options("new_full", kwargs, _OPTIONS))


def new_tensor(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.new_tensor(data)``: ``data`` copied into a new leaf of ``x``'s dtype and device unless
    given (a tensor's values are copied, with torch's warning)."""
    kwargs = dict(kwargs)
    if "data" in kwargs:
        if args:
            raise TypeError("new_tensor() got multiple values for argument 'data'")
        args = (kwargs.pop("data"),)
    if not args:
        raise TypeError('new_tensor() missing 1 required positional arguments: "data"')
    if len(args) > 1:
        raise TypeError(f"new_tensor() takes 1 positional argument but {len(args)} were given")
    options = _options("new_tensor", kwargs, ("dtype", "device", "requires_grad"))
    d = options.get("dtype") or self.dtype
    device = options.get("device") or self.device
    data = args[0]
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT_WARNING, UserWarning, stacklevel=3)
        values = data.detach().to(device, d).clone()._data
    else:
        values = _legacy.new_tensor_values(data, d)
    return _legacy.on_device(values, device, options.get("requires_grad", False))
