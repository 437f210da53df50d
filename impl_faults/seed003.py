"""Planted faults that break the seed 003 scripts (rules SEED-003-*: examples/seeds/seed003_*.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"SEED-003-1": "stdout line"})
def bool_inferred_as_int64() -> Iterator[None]:
    """torch.tensor() infers int64 for Python bools (a bool taken for an int) instead of torch.bool."""
    import numpy as np

    from impl import _creation

    def make(original: Callable) -> Callable:
        def infer(data: Any, dtype: Any = None) -> np.ndarray:
            arr = original(data, dtype)
            return arr.astype(np.int64) if dtype is None and arr.dtype.kind == "b" else arr

        return infer

    with patched(_creation, "_infer", make):
        yield


@fault({"SEED-003-2": "stdout line"})
def no_blank_line_between_printed_matrices() -> Iterator[None]:
    """A printed tensor of 3 or more dimensions has no blank line between its matrices (one newline)."""
    from impl import _repr

    def make(original: Callable) -> Callable:
        def body(a: Any, indent: int, summarize: bool, fmt: Any) -> str:
            return original(a, indent, summarize, fmt).replace(",\n\n", ",\n")

        return body

    with patched(_repr, "_body", make):
        yield


@fault({"SEED-003-5": "stdout line"})
def sum_backward_divides_by_count() -> Iterator[None]:
    """sum()'s backward divides the gradient by the number of elements (mean's formula)."""
    from impl._ops.reductions import SUM, _mean_grad
    from impl._ops.table import Derivative

    def make(plan: Any) -> Any:
        wrong = copy.copy(plan)
        wrong.diff = (Derivative(plan.diff[0].uses, _mean_grad),)
        return wrong

    with patched(SUM, "_plan", make):
        yield


@fault({"SEED-003-7": "stdout line"})
def sgd_drops_lr() -> Iterator[None]:
    """optim.SGD drops its lr argument and steps with the default learning rate 1e-3."""
    from impl.optim.sgd import SGD

    def make(original: Callable) -> Callable:
        def init(self: SGD, params: Any, lr: float = 1e-3, *args: Any, **kwargs: Any) -> None:
            original(self, params, *args, **kwargs)

        return init

    with patched(SGD, "__init__", make):
        yield


@fault({"SEED-003-8": "impl raised", "SEED-003-13": "impl raised", "SEED-002-2": "stdout line"})
def broadcast_grad_not_summed_over_size_one_dims() -> Iterator[None]:
    """A broadcast operand's gradient is summed over the leading dimensions only, not over its size-1 ones."""
    from impl._ops import views

    def make(original: Callable) -> Callable:
        def sum_leading(g: Any, shape: tuple) -> Any:
            return original(g, tuple(g.shape)[g.dim() - len(shape) :])

        return sum_leading

    with patched(views, "sum_to", make):
        yield


@fault({"SEED-003-9": "impl raised"})
def backward_drops_retain_graph() -> Iterator[None]:
    """autograd.backward drops its retain_graph argument: the graph is freed unless create_graph=True."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def backward(tensors: Any, grads: Any = None, _retain: Any = None, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("retain_graph", None)
            original(tensors, grads, None, *args, **kwargs)

        return backward

    with patched(autograd, "backward", make):
        yield


@fault({"SEED-003-10": "stdout line"})
def custom_function_node_named_backward0() -> Iterator[None]:
    """A custom Function's node class is named <Name>Backward0, as built-in ops' are, not <Name>Backward."""
    from impl.autograd.function import FunctionMeta

    def make(original: Callable) -> Callable:
        def init(cls: FunctionMeta, name: str, bases: tuple, attrs: dict) -> None:
            original(cls, name, bases, attrs)
            cls._backward_cls.__name__ = cls._backward_cls.__qualname__ = name + "Backward0"

        return init

    with patched(FunctionMeta, "__init__", make):
        yield


@fault({"SEED-003-11": "stdout line"})
def backward_root_keeps_grad() -> Iterator[None]:
    """Tensor.backward() keeps the root's gradient in its .grad, as if retain_grad() had been called on it."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def backward(self: Tensor, *args: Any, **kwargs: Any) -> None:
            if self.requires_grad:
                self.retain_grad()
            original(self, *args, **kwargs)

        return backward

    with patched(Tensor, "backward", make):
        yield


@fault({"SEED-003-12": "stdout line"})
def ready_queue_fifo() -> Iterator[None]:
    """The engine runs ready nodes first-in first-out instead of latest-created first."""
    from impl.autograd import engine

    class Fifo:
        """The heapq functions the engine uses, as a plain first-in first-out list."""

        @staticmethod
        def heappush(queue: list, item: tuple) -> None:
            queue.append(item)

        @staticmethod
        def heappop(queue: list) -> tuple:
            return queue.pop(0)

    with patched(engine, "heapq", lambda _orig: Fifo):
        yield


@fault({"SEED-003-13": "stdout line"})
def module_parameter_not_registered() -> Iterator[None]:
    """A Parameter assigned as a Module attribute is stored as a plain attribute, not registered."""
    from impl.nn.modules.module import Module
    from impl.nn.parameter import Parameter

    def make(original: Callable) -> Callable:
        def setattr_(self: Module, name: str, value: Any) -> None:
            if isinstance(value, Parameter) and name not in self._parameters:
                self.__dict__[name] = value
            else:
                original(self, name, value)

        return setattr_

    with patched(Module, "__setattr__", make):
        yield
