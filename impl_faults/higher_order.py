"""Planted faults that break higher-order gradients (rules HO-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import derivative_replaced, fault, patched


@fault({"HO-001": "value", "HO-002": "value", "HO-003": "value",
        "NUM-002": "second derivatives differ from finite differences"})
def tanh_second_derivative_sign() -> Iterator[None]:
    """tanh's second derivative has the wrong sign: tanh_backward's derivative for output uses +2*y."""
    from impl._ops.elementwise import mul_scalar
    from impl._ops.unary_math import TANH_BACKWARD

    def formula(gg: Any, c: Any) -> Any:
        return gg * (mul_scalar(c.output, 2) * c.grad_output)

    with derivative_replaced(TANH_BACKWARD, "output", lambda _original: formula):
        yield


@fault({"HO-001": "graph differs"})
def sigmoid_backward_composed() -> Iterator[None]:
    """sigmoid's gradient is built from mul/rsub ops instead of the sigmoid_backward op (another graph)."""
    from impl._ops import unary_math

    def make(_original: Callable) -> Callable:
        def sigmoid_backward(grad: Any, output: Any) -> Any:
            return grad * (1 - output) * output

        return sigmoid_backward

    with patched(unary_math, "sigmoid_backward", make):
        yield


@fault({"HO-002": "is_leaf"})
def grad_records_without_create_graph() -> Iterator[None]:
    """autograd.grad always records the gradients' graph, so without create_graph they still require grad."""
    import impl.autograd

    def make(original: Callable) -> Callable:
        def run_grad(outs: tuple, ins: tuple, grads: list, retain_graph: bool, create_graph: bool) -> list:
            return original(outs, ins, grads, retain_graph, True)

        return run_grad

    with patched(impl.autograd, "_run_grad", make):
        yield


@fault({"HO-003": "the reference raised none"})
def create_graph_does_not_retain_graph() -> Iterator[None]:
    """backward(create_graph=True) frees the graph: retain_graph defaults to False, not to create_graph."""
    import impl.autograd

    def make(original: Callable) -> Callable:
        def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
                     create_graph: bool = False, **kwargs: Any) -> None:
            original(tensors, grad_tensors, bool(retain_graph), create_graph, **kwargs)

        return backward

    with patched(impl.autograd, "backward", make):
        yield


@fault({"HO-003": ".grad: is_leaf"})
def create_graph_accumulation_detached() -> Iterator[None]:
    """A second backward(create_graph=True) adds into .grad without recording: the sum has no grad_fn."""
    from impl.autograd.engine import AccumulateGrad

    def make(original: Callable) -> Callable:
        def accumulate(self: AccumulateGrad, grads: tuple) -> tuple:
            had_grad = self.variable._grad is not None
            out = original(self, grads)
            if had_grad and self.variable._grad is not None:
                self.variable._grad = self.variable._grad.detach()
            return out

        return accumulate

    with patched(AccumulateGrad, "apply", make):
        yield


@fault({"HO-001": "is_leaf"})
def grad_ignores_create_graph() -> Iterator[None]:
    """autograd.grad ignores create_graph=True: the gradients it returns do not require grad."""
    import impl.autograd

    def make(original: Callable) -> Callable:
        def run_grad(outs: tuple, ins: tuple, grads: list, retain_graph: bool, create_graph: bool) -> list:
            return original(outs, ins, grads, retain_graph or create_graph, False)

        return run_grad

    with patched(impl.autograd, "_run_grad", make):
        yield


@fault({"HO-001": "graph differs"})
def saved_outputs_unpacked_detached() -> Iterator[None]:
    """A node's saved output is unpacked without its history (detached), so the double-backward
    graph has no edge back to the node that made it (and loses the second derivatives through it)."""
    from impl._graph import SavedTensor

    def make(original: Callable) -> Callable:
        def unpack(self: SavedTensor, *args: Any) -> Any:
            t = original(self, *args)
            return t.detach() if self.is_output else t

        return unpack

    with patched(SavedTensor, "unpack", make):
        yield


@fault({"HO-002": "value"})
def double_backward_treats_grad_output_as_constant() -> Iterator[None]:
    """tanh's and sigmoid's double backward use the incoming gradient detached, so second
    derivatives are right but the third derivatives through it are lost."""
    from contextlib import ExitStack

    from impl._ops.unary_math import SIGMOID_BACKWARD, TANH_BACKWARD

    def detached_grad_output(formula: Callable) -> Callable:
        class Detached:
            def __init__(self, c: Any) -> None:
                self.c = c

            def __getattr__(self, name: str) -> Any:
                value = getattr(self.c, name)
                return value.detach() if name == "grad_output" else value

        return lambda gg, c: formula(gg, Detached(c))

    with ExitStack() as stack:
        for op in (TANH_BACKWARD, SIGMOID_BACKWARD):
            stack.enter_context(derivative_replaced(op, "output", detached_grad_output))
        yield
