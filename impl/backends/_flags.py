"""The flags of torch.backends' modules: bools torch keeps in C, and the float32 matmul precision
that torch.set_float32_matmul_precision sets and cuda.matmul.allow_tf32 reads and writes."""

from __future__ import annotations

import contextlib
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any

from impl import _api

PRECISIONS = ("highest", "high", "medium")
_precision = ["highest"]


def bool_flag(setter: str, default: bool) -> property:
    """A module flag: a bool only (else torch's '<setter> expects a bool' RuntimeError)."""
    name = f"_{setter}"

    def get(self: types.ModuleType) -> bool:
        return self.__dict__.get(name, default)

    def put(self: types.ModuleType, value: Any) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        self.__dict__[name] = value

    return property(get, put)


def flagged(module_name: str, cls: type) -> None:
    """Give module ``module_name`` the properties of ``cls`` (a ModuleType subclass), as torch's
    backends make their modules PropModules."""
    sys.modules[module_name].__class__ = cls


@contextlib.contextmanager
def swapped(module_name: str, values: dict[str, Any]) -> Iterator[None]:
    """Set the flags ``values`` of module ``module_name`` for a block, then restore them."""
    module = sys.modules[module_name]
    before = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(module, name, value)


@_api.function("set_float32_matmul_precision")
def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium' (else torch's warning, and nothing changes); impl computes
    float32 products in float32 whatever the precision (torch's CPU does too)."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _precision[0] = precision


@_api.function("get_float32_matmul_precision")
def get_float32_matmul_precision() -> str:
    return _precision[0]
