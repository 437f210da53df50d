"""Planted faults that break gradient accumulation (rules ACC-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from impl_faults import fault, patched


@fault({"ACC-001": ".grad: value"})
def accumulate_grad_replaces() -> Iterator[None]:
    """AccumulateGrad overwrites a leaf's existing .grad instead of adding to it."""
    from impl.autograd.engine import AccumulateGrad

    def make(original: Callable) -> Callable:
        def replace(self: AccumulateGrad, grads: tuple) -> tuple:
            if grads[0] is not None:
                self.variable._grad = None
            return original(self, grads)

        return replace

    with patched(AccumulateGrad, "apply", make):
        yield


@fault({"ACC-002": ".grad: value"})
def accumulation_resumes_after_grad_set_to_none() -> Iterator[None]:
    """AccumulateGrad remembers the .grad it last wrote and adds onto it after .grad was set to None."""
    import weakref

    from impl.autograd.engine import AccumulateGrad

    written: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def make(original: Callable) -> Callable:
        def resume(self: AccumulateGrad, grads: tuple) -> tuple:
            if self.variable._grad is None and self in written:
                self.variable._grad = written[self]
            try:
                return original(self, grads)
            finally:
                if self.variable._grad is not None:
                    written[self] = self.variable._grad

        return resume

    with patched(AccumulateGrad, "apply", make):
        yield


def execute_with(**fixed: Any) -> AbstractContextManager[None]:
    """``impl.autograd.engine.execute`` called with the arguments ``fixed`` whatever its caller passed."""
    import inspect

    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        signature = inspect.signature(original)

        def execute(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.arguments.update(fixed)
            return original(*bound.args, **bound.kwargs)

        return execute

    return patched(engine, "execute", make)


def grad_keywords(change: Callable[[dict], None]) -> AbstractContextManager[None]:
    """``torch.autograd.grad`` called with its keyword arguments changed in place by ``change``."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def grad(*args: Any, **kwargs: Any) -> Any:
            change(kwargs)
            return original(*args, **kwargs)

        return grad

    return patched(autograd, "grad", make)


def grad_defaulting(option: str, value: Any) -> AbstractContextManager[None]:
    """``torch.autograd.grad`` with ``value`` as the default of its keyword ``option``."""

    def default(kwargs: dict) -> None:
        if kwargs.get(option) is None:
            kwargs[option] = value

    return grad_keywords(default)


def make_grads_with(transform: Callable[[Any, Any], Any]) -> AbstractContextManager[None]:
    """``autograd._make_grads`` given ``transform(output, gradient)`` of each pair instead of each
    gradient passed to backward or autograd.grad."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def make_grads(outputs: tuple, grads: tuple, *args: Any) -> list:
            grads = tuple(transform(o, g) for o, g in zip(outputs, grads, strict=False))
            return original(outputs, grads, *args)

        return make_grads

    return patched(autograd, "_make_grads", make)


@fault({"ACC-003": ".grad: expected None, got a tensor"})
def backward_inputs_ignored() -> Iterator[None]:
    """backward(inputs=[...]) runs the whole graph, accumulating into every leaf, not only the inputs."""
    with execute_with(accumulate_only=None):
        yield


def every_node_needed() -> AbstractContextManager[None]:
    """The engine's ``_needed`` giving every node reached from the roots."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def everything(roots: list, targets: set) -> set:
            return original(roots, targets | set(engine._dependencies(roots)))

        return everything

    return patched(engine, "_needed", make)


@fault({"ACC-003": ".grad: expected None, got a tensor", "ACC-004": ".grad: expected None, got a tensor"})
def every_reached_node_runs() -> Iterator[None]:
    """The engine runs every node it reaches, not only those on a path to the requested inputs."""
    with every_node_needed():
        yield


@fault({"ACC-004": "the backend raised none"})
def allow_unused_by_default() -> Iterator[None]:
    """torch.autograd.grad returns None for an unused input, without allow_unused=True, instead of raising."""
    with grad_defaulting("allow_unused", True):
        yield


@fault({"ACC-005": "the backend raised none", "ERR-001": "expected error"})
def implicit_gradient_for_non_scalars() -> Iterator[None]:
    """backward on a non-scalar without a gradient silently uses a gradient of ones."""
    from impl._creation import ones_like

    with make_grads_with(lambda o, g: ones_like(o) if g is None and o.requires_grad else g):
        yield


@fault({"ACC-005": ".grad: value", "ACC-006": ": value"})
def given_gradients_ignored() -> Iterator[None]:
    """backward and autograd.grad use ones in place of the gradient (grad_outputs) they are given."""
    from impl._creation import ones_like

    with make_grads_with(lambda _o, g: g if g is None else ones_like(g)):
        yield


@fault({"ACC-006": "is_leaf differs", "RG-004": "is_leaf differs", "SEED-003-6": "impl raised"})
def create_graph_ignored() -> Iterator[None]:
    """The engine always runs backward with grad mode off, so create_graph=True records no graph."""
    with execute_with(create_graph=False):
        yield


@fault({"ACC-007": "the reference raised none"})
def batched_grad_frees_graph_after_first_row() -> Iterator[None]:
    """is_grads_batched=True frees the graph after the first row's backward unless retain_graph=True."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def batched(outs: tuple, ins: tuple, grads: list, retain_graph: bool, create_graph: bool) -> list:
            def each_row(run: Callable) -> Callable:
                return lambda o, i, g, _retain, c: run(o, i, g, retain_graph, c)

            with patched(autograd, "_run_grad", each_row):
                return original(outs, ins, grads, retain_graph, create_graph)

        return batched

    with patched(autograd, "_run_grad_batched", make):
        yield


@fault({"ACC-004": ".grad: expected None, got a tensor"})
def grad_accumulates_into_leaf_inputs() -> Iterator[None]:
    """autograd.grad also runs its inputs' nodes, so a leaf input's gradient is accumulated into its .grad."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def execute(*args: Any, capture: list | None = None, accumulate_only: set | None = None) -> list:
            if capture and accumulate_only is None:
                accumulate_only = {node for node, _ in capture if node is not None}
            return original(*args, capture=capture, accumulate_only=accumulate_only)

        return execute

    with patched(engine, "execute", make):
        yield


@fault({"ACC-004": "expected None, got a tensor"})
def allow_unused_gives_zeros() -> Iterator[None]:
    """autograd.grad(allow_unused=True) returns zeros for an unused input, as if materialize_grads=True."""

    def materialize(kwargs: dict) -> None:
        if kwargs.get("allow_unused"):
            kwargs["materialize_grads"] = True

    with grad_keywords(materialize):
        yield


@fault({"ACC-004": "expected a tensor, got None"})
def materialize_grads_gives_none() -> Iterator[None]:
    """autograd.grad with materialize_grads=True returns None for an unused input instead of zeros."""

    def unmaterialized(kwargs: dict) -> None:
        if kwargs.get("materialize_grads") and kwargs.get("allow_unused") is not False:
            kwargs.update(materialize_grads=False, allow_unused=True)

    with grad_keywords(unmaterialized):
        yield


@fault({"ACC-007": ": value"})
def batched_grad_repeats_first_row() -> Iterator[None]:
    """is_grads_batched=True weights every row's gradient by the first row of grad_outputs."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def batched(outs: tuple, ins: tuple, grads: list, retain_graph: bool, create_graph: bool) -> list:
            firsts = [g[:1].expand(g.shape) if getattr(g, "ndim", 0) else g for g in grads]
            return original(outs, ins, firsts, retain_graph, create_graph)

        return batched

    with patched(autograd, "_run_grad_batched", make):
        yield


@fault({"ACC-007": "expected warning"})
def only_inputs_false_silent() -> Iterator[None]:
    """torch.autograd.grad(only_inputs=False) does not warn that only_inputs is deprecated."""
    with grad_keywords(lambda kwargs: kwargs.pop("only_inputs", None)):
        yield


@fault({"ACC-007": ".grad: expected None, got a tensor"})
def only_inputs_false_accumulates() -> Iterator[None]:
    """autograd.grad(only_inputs=False) also accumulates into the .grad of the other leaves it reaches."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def grad(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("only_inputs", True):
                return original(*args, **kwargs)
            with every_node_needed():
                return original(*args, **kwargs)

        return grad

    with patched(autograd, "grad", make):
        yield
