"""Planted faults that break custom autograd Functions (rules FN-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tests.impl_faults import fault, patched


def _ignored(_original: Callable) -> Callable:
    """A ctx method that accepts its arguments and does nothing with them."""
    return lambda ctx, *args: None


@fault({"FN-001": "needs_input_grad"})
def needs_input_grad_ignores_requires_grad() -> Iterator[None]:
    """ctx.needs_input_grad is True for every tensor input, whether it requires grad or not."""
    from impl.autograd.function import BackwardCFunction

    def make(original: Callable) -> Callable:
        def apply(self: BackwardCFunction, grads: tuple) -> tuple:
            self.needs_input_grad = self._is_tensor_input
            return original(self, grads)

        return apply

    with patched(BackwardCFunction, "apply", make):
        yield


@fault({"FN-002": "is_leaf"})
def mark_non_differentiable_ignored() -> Iterator[None]:
    """ctx.mark_non_differentiable does nothing: such outputs get the Function's node and require grad."""
    from impl.autograd.function import FunctionCtx

    with patched(FunctionCtx, "mark_non_differentiable", _ignored):
        yield


@fault({"FN-002": "expected None, got a tensor"})
def materialize_grads_cannot_be_disabled() -> Iterator[None]:
    """ctx.set_materialize_grads(False) is ignored: backward gets zeros, not None, for unused outputs."""
    from impl.autograd.function import FunctionCtx

    with patched(FunctionCtx, "set_materialize_grads", _ignored):
        yield


@fault({"FN-003": "version"})
def mark_dirty_ignored() -> Iterator[None]:
    """ctx.mark_dirty does nothing: the modified input comes back as a new view, keeping its old grad_fn."""
    from impl.autograd.function import FunctionCtx

    with patched(FunctionCtx, "mark_dirty", _ignored):
        yield


@fault({"FN-003": "graph differs"})
def dirty_output_keeps_its_grad_fn() -> Iterator[None]:
    """An input marked dirty and returned keeps the grad_fn it had instead of the Function's node."""
    from impl.autograd import function

    def make(original: Callable) -> Callable:
        def wire_output(ctx: Any, out: Any, i: int, inputs: tuple, kind: str) -> Any:
            if not any(out is t for t in ctx._dirty):
                return original(ctx, out, i, inputs, kind)
            history = out._grad_fn, out._output_nr
            out = original(ctx, out, i, inputs, kind)
            out._grad_fn, out._output_nr = history
            return out

        return wire_output

    with patched(function, "_wire_output", make):
        yield


@fault({"FN-004": "is_leaf"})
def once_differentiable_is_a_no_op() -> Iterator[None]:
    """@once_differentiable returns backward unchanged, so create_graph records its graph."""
    from impl.autograd import function

    def make(_original: Callable) -> Callable:
        def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
            return fn

        return once_differentiable

    with patched(function, "once_differentiable", make):
        yield


@fault({"FN-004": "is_leaf"})
def function_backward_never_recorded() -> Iterator[None]:
    """A custom Function's backward runs under no_grad even with create_graph: its gradient has no graph."""
    from impl.autograd import grad_mode
    from impl.autograd.function import BackwardCFunction

    def make(original: Callable) -> Callable:
        def apply(self: BackwardCFunction, grads: tuple) -> tuple:
            with grad_mode.no_grad():
                return original(self, grads)

        return apply

    with patched(BackwardCFunction, "apply", make):
        yield


@fault({"FN-004": "is_leaf"})
def once_differentiable_drops_its_error() -> Iterator[None]:
    """@once_differentiable returns its unrecorded result without its Error node: it does not require grad."""
    from impl.autograd import function

    with patched(function, "_delayed_error", lambda _original: lambda outs: outs):
        yield
