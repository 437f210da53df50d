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


@fault({"FWAD-001": "value"})
def layer_norm_jvp_uncentered() -> Iterator[None]:
    """layer_norm's jvp scales the input's tangent by rstd and the weight, leaving out the
    normalisation's Jacobian (the tangent's mean and its projection on the normalised input)."""
    from impl.nn import _norm

    def uncentered(original: Callable) -> Callable:
        def jvp(c: Any) -> Any:
            x, dims = c.input, _norm._ln_dims(c)
            mean, rstd = _norm._row_stats(x, dims, c.eps)
            term = c.input_t * rstd * c.weight if c.tangent("input") is not None else None
            return _norm._affine_jvp(c, term, (x - mean) * rstd, tuple(c.weight.shape))

        return jvp

    with patched(_norm, "_ln_jvp", uncentered):
        yield
