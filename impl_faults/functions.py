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
    from impl.autograd import function

    with patched(function, "_delayed_error", lambda _original: lambda outs: outs):
        yield


@fault({"FN-004": "value"})
def saved_output_read_as_first_output() -> Iterator[None]:
    """A saved output comes back from ctx.saved_tensors as the node's output 0, whichever it was: a
    double backward through it sends its gradient to the first output's place."""
    from impl._graph import SavedTensor

    def make(original: Callable) -> Callable:
        def __init__(self: SavedTensor, *args: Any, output_nr: int = 0, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            self.output_nr = 0

        return __init__

    with patched(SavedTensor, "__init__", make):
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
    from impl.autograd import function

    with patched(function, "_bump_dirty", lambda _original: lambda ctx: None):
        yield


@fault({"FN-001": "hook grad_outputs"})
def function_non_tensor_outputs_take_no_slot() -> Iterator[None]:
    """A custom Function's outputs that are no tensors get no gradient slot: the later outputs'
    gradients shift, and backward gets one gradient per tensor output, not one per output."""
    from impl.autograd import function

    def make(original: Callable) -> Callable:
        def wire_output(ctx: Any, out: Any, i: int, inputs: tuple, kind: str) -> Any:
            if not isinstance(out, function.Tensor):
                return out
            return original(ctx, out, i, inputs, kind)

        return wire_output

    with patched(function, "_wire_output", make):
        yield


@fault({"FN-002": "expected None, got a tensor"})
def materialize_non_diff_grads_ignored() -> Iterator[None]:
    """ctx._materialize_non_diff_grads = False is ignored: non-differentiable outputs' gradients are zeros."""
    from impl.autograd.function import BackwardCFunction

    def make(original: Callable) -> Callable:
        def apply(self: BackwardCFunction, grads: tuple) -> tuple:
            self._materialize_non_diff_grads = True
            return original(self, grads)

        return apply

    with patched(BackwardCFunction, "apply", make):
        yield


@fault({"FN-003": "graph differs"})
def dirty_view_not_rebased() -> Iterator[None]:
    """An input view marked dirty keeps its view node and its base its history: the Function's
    node is left out of the graph (no CopySlices, no AsStridedBackward0)."""
    from impl.autograd import function

    with patched(function, "_rebase_history", lambda _original: lambda out, node: None):
        yield


@fault({"FN-003": "expected error"})
def dirty_view_with_several_outputs_accepted() -> Iterator[None]:
    """A Function that edits a view in place and returns several outputs is accepted."""
    from impl.autograd import function

    with patched(function, "_check_dirty_views", lambda _original: lambda ctx, outs: None):
        yield


@fault({"FN-005": "warning"})
def function_instantiated_silently() -> Iterator[None]:
    """Instantiating a Function gives no DeprecationWarning."""
    from impl.autograd.function import Function

    with patched(Function, "__init__", lambda _original: lambda self, *args, **kwargs: None):
        yield


@fault({"FN-005": "expected error"})
def legacy_call_applies() -> Iterator[None]:
    """Calling a Function instance applies the Function instead of raising torch's legacy error."""
    from impl.autograd.function import Function

    with patched(Function, "__call__", lambda _original: lambda self, *args: type(self).apply(*args)):
        yield


@fault({"FN-005": "expected error"})
def backward_and_vjp_accepted() -> Iterator[None]:
    """A Function defining both backward and vjp runs its vjp instead of raising torch's error."""
    from impl.autograd import function

    def make(_original: Callable) -> Callable:
        return lambda cls: cls.backward if cls.vjp is function.Function.vjp else cls.vjp

    with patched(function, "_user_backward", make):
        yield


@fault({"FN-005": "type differs"})
def vjp_ignored() -> Iterator[None]:
    """A Function's vjp is not used as its backward: backward raises NotImplementedError."""
    from impl.autograd import function

    with patched(function, "_user_backward", lambda _original: lambda cls: cls.backward):
        yield


@fault({"FN-005": "the reference raised none"})
def legacy_methods_refused() -> Iterator[None]:
    """A Function whose forward is a plain method (torch's legacy style) cannot be applied."""
    from impl.autograd.function import LEGACY, Function

    def make(original: Callable) -> Callable:
        def apply(cls: type, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(vars(cls).get("forward"), staticmethod):
                raise RuntimeError(LEGACY)
            return original.__func__(cls, *args, **kwargs)

        return classmethod(apply)

    with patched(Function, "apply", make):
        yield


@fault({"FN-006": "type differs"})
def grad_fn_call_counts_nothing() -> Iterator[None]:
    """A grad_fn called with too few or too many gradients runs on what it got."""
    from impl._graph import Node

    def make(_original: Callable) -> Callable:
        def call(self: Node, *grads: Any) -> Any:
            n = max(len(self._input_meta), 1)
            out = self.apply((*grads, *(None,) * n)[:n])
            return out[0] if len(out) == 1 else out

        return call

    with patched(Node, "__call__", make):
        yield


@fault({"FN-006": "error"})
def grad_fn_call_takes_numbers() -> Iterator[None]:
    """A grad_fn called with a number takes it as a gradient instead of raising torch's TypeError
    (the call then returns, or fails later on the number: an error differs either way)."""
    from impl import _graph

    with patched(_graph, "TENSOR", lambda original: (original, int, float)):
        yield


@fault({"FN-006": "type differs"})
def custom_function_node_callable() -> Iterator[None]:
    """A custom Function's node can be called as a function, as built-in nodes can."""
    from impl._graph import Node
    from impl.autograd.function import BackwardCFunction

    with patched(BackwardCFunction, "__call__", lambda _original: Node.__call__):
        yield


@fault({"FN-006": "is_leaf differs"})
def grad_fn_call_unrecorded() -> Iterator[None]:
    """A grad_fn called as a function computes without recording: its results never have a grad_fn."""
    from impl import _grad_mode as grad_mode
    from impl._graph import Node

    def make(original: Callable) -> Callable:
        def call(self: Node, *grads: Any) -> Any:
            with grad_mode.no_grad():
                return original(self, *grads)

        return call

    with patched(Node, "__call__", make):
        yield


@fault({"FN-002": "hook grads[0]", "SAVED-001": "value 0 differs"})
def torch_c_names_wrong() -> Iterator[None]:
    """impl._C's names answer wrongly: UndefinedGrad's node passes zeros on, not an undefined
    gradient (a Function that set_materialize_grads(False) gets zeros instead of None), and
    _saved_tensors_hooks_is_enabled() answers True inside disable_saved_tensors_hooks too."""
    from impl import _C
    from impl.autograd.gradcheck import UndefinedGradBackward

    def apply(original: Callable) -> Callable:
        return lambda self, grads: tuple(None if g is None else g * 0 for g in grads)

    with patched(UndefinedGradBackward, "apply", apply), \
            patched(_C._autograd, "_saved_tensors_hooks_is_enabled", lambda original: lambda: True):
        yield
