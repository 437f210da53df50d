"""Planted faults that break custom autograd Functions (rules FN-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


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
    from impl._api import function

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
    from impl._api import function

    def make(_original: Callable) -> Callable:
        def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
            return fn

        return once_differentiable

    with patched(function, "once_differentiable", make):
        yield


@fault({"FN-004": "is_leaf"})
def function_backward_never_recorded() -> Iterator[None]:
    """A custom Function's backward runs under no_grad even with create_graph: its gradient has no graph."""
    from impl import _grad_mode as grad_mode
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
    from impl._api import function

    with patched(function, "_delayed_error", lambda _original: lambda outs: outs):
        yield


@fault({"FN-001": "graph differs"})
def function_node_numbered_like_builtins() -> Iterator[None]:
    """A custom Function's node is named <Class>Backward0, like a built-in op's, not <Class>Backward."""
    from impl.autograd.function import BackwardCFunction, FunctionMeta

    def make(original: Callable) -> Callable:
        def __init__(cls: type, name: str, bases: tuple, attrs: dict) -> None:
            original(cls, name, bases, attrs)
            cls._backward_cls = type(name + "Backward0", (BackwardCFunction,), {"_forward_cls": cls})

        return __init__

    with patched(FunctionMeta, "__init__", make):
        yield


@fault({"FN-001": "graph differs"})
def function_edges_skip_inputs_without_grad() -> Iterator[None]:
    """A custom Function's node has edges only to the inputs that require grad, not one per tensor input."""
    from impl._graph import Node
    from impl.autograd.function import BackwardCFunction

    def make(_original: Any) -> property:
        def get(self: BackwardCFunction) -> tuple:
            return tuple(e for e in Node._next.__get__(self) if e[0] is not None)

        return property(get, Node._next.__set__)

    with patched(BackwardCFunction, "_next", make):
        yield


@fault({"FN-001": "hook grads"})
def function_backward_gets_first_gradient_only() -> Iterator[None]:
    """A custom Function's backward receives the gradient of its first output only, not one per output."""
    from impl.autograd.function import BackwardCFunction

    def make(original: Callable) -> Callable:
        return lambda self, grads: original(self, grads[:1])

    with patched(BackwardCFunction, "apply", make):
        yield


@fault({"FN-001": "the backend raised none"})
def function_gradients_reach_inputs_reversed() -> Iterator[None]:
    """The gradients a custom Function's backward returns reach its inputs in reverse order."""
    from impl.autograd.function import BackwardCFunction

    def make(original: Callable) -> Callable:
        return lambda self, grads: original(self, grads)[::-1]

    with patched(BackwardCFunction, "apply", make):
        yield


@fault({"FN-001": "the backend raised none"})
def function_none_gradient_becomes_zeros() -> Iterator[None]:
    """A None a custom Function's backward returns for an input reaches it as zeros, not as no gradient."""
    from impl._tensor import zeros_of
    from impl.autograd.function import BackwardCFunction

    def make(original: Callable) -> Callable:
        def apply(self: BackwardCFunction, grads: tuple) -> tuple:  # zeros shaped like the first output
            return tuple(zeros_of(self._input_meta[0]) if g is None else g for g in original(self, grads))

        return apply

    with patched(BackwardCFunction, "apply", make):
        yield


@fault({"FN-002": ": value"})
def saved_tensors_reversed() -> Iterator[None]:
    """ctx.saved_tensors gives the saved tensors back in reverse order."""
    from impl.autograd.function import FunctionCtx

    def make(original: property) -> property:
        return property(lambda ctx: original.fget(ctx)[::-1])

    with patched(FunctionCtx, "saved_tensors", make):
        yield


@fault({"FN-002": "the backend raised none"})
def function_keeps_saved_tensors_after_backward() -> Iterator[None]:
    """A custom Function's node keeps its saved tensors after a backward without retain_graph."""
    from impl.autograd.function import BackwardCFunction

    with patched(BackwardCFunction, "release", lambda _original: lambda self: None):
        yield


@fault({"FN-003": "version differs"})
def mark_dirty_does_not_bump_version() -> Iterator[None]:
    """An input marked dirty comes back with the version its in-place forward op left, not bumped again."""
    from impl._api import function

    def make(original: Callable) -> Callable:
        def wire_output(ctx: Any, out: Any, i: int, inputs: tuple, kind: str) -> Any:
            if not any(out is t for t in ctx._dirty):
                return original(ctx, out, i, inputs, kind)
            version = out._vc.value
            out = original(ctx, out, i, inputs, kind)
            out._vc.value = version
            return out

        return wire_output

    with patched(function, "_wire_output", make):
        yield


@fault({"FN-001": "hook grad_outputs"})
def function_non_tensor_outputs_take_no_slot() -> Iterator[None]:
    """A custom Function's outputs that are no tensors get no gradient slot: the later outputs'
    gradients shift, and backward gets one gradient per tensor output, not one per output."""
    from impl._api import function

    def make(original: Callable) -> Callable:
        def wire_output(ctx: Any, out: Any, i: int, inputs: tuple, kind: str) -> Any:
            if not isinstance(out, function.Tensor):
                return out
            return original(ctx, out, i, inputs, kind)

        return wire_output

    with patched(function, "_wire_output", make):
        yield
