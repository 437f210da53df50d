"""Planted faults that break forward-mode AD (rules FWAD-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


def _table() -> Any:
    from impl._ops import table

    return table


def _forward_ad() -> Any:
    from impl.autograd import forward_ad

    return forward_ad


@fault({"FWAD-001": "value"})
def op_tangent_doubled() -> Iterator[None]:
    """Every op's result gets twice the tangent its jvp formula computed."""

    def doubled(original: Callable) -> Callable:
        return lambda t, tangent: original(t, None if tangent is None else tangent * 2)

    with patched(_table(), "set_tangent", doubled):
        yield


@fault({"FWAD-002": "error"})
def tangent_size_unchecked() -> Iterator[None]:
    """make_dual takes a tangent of another size without refusing it (the dual's tangent is zeros)."""

    def lenient(original: Callable) -> Callable:
        def make_dual(tensor: Any, tangent: Any, *, level: Any = None) -> Any:
            if tuple(tangent.shape) != tuple(tensor.shape):
                tangent = tangent.new_zeros(tuple(tensor.shape))
            return original(tensor, tangent, level=level)

        return make_dual

    with patched(_forward_ad(), "make_dual", lenient):
        yield


def _function() -> Any:
    from impl.autograd import function

    return function


@fault({"FWAD-001": "error"})
def save_for_forward_dropped() -> Iterator[None]:
    """A custom Function's ctx.save_for_forward keeps nothing: jvp's saved_tensors is empty."""

    def dropped(original: Callable) -> Callable:
        return lambda ctx, *tensors: original(ctx)

    with patched(_function().FunctionCtx, "save_for_forward", dropped):
        yield
