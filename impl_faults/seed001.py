"""Planted faults that break seed 001's scripts: backward errors, the legacy Variable gradient, a
Jacobian from backward calls, a training step (rules SEED-001-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"SEED-001-1": "stdout line"})
def backward_without_grad_is_silent() -> Iterator[None]:
    """backward() of a result that requires no grad returns silently instead of raising."""
    import impl.autograd

    def make(original: Callable) -> Callable:
        def backward(tensors: Any, *args: Any, **kwargs: Any) -> None:
            if all(not t.requires_grad for t in impl.autograd._outputs_tuple(tensors)):
                return
            original(tensors, *args, **kwargs)

        return backward

    with patched(impl.autograd, "backward", make):
        yield


@fault({"SEED-001-2": "stdout line"})
def mean_grad_not_divided_by_count() -> Iterator[None]:
    """mean's gradient is the gradient expanded back, not divided by the number of elements."""
    from impl._ops import reductions

    with patched(reductions, "_mean_grad", lambda _orig: reductions._expand_back):
        yield


@fault({"SEED-001-3": "stdout line"})
def data_returns_a_copy() -> Iterator[None]:
    """Tensor.data returns a copy instead of sharing the tensor's memory, so .data.zero_() is lost."""
    from impl._tensor import Tensor

    def make(original: property) -> property:
        def data(self: Tensor) -> Tensor:
            alias = original.fget(self)
            alias._data = alias._data.copy()
            return alias

        return property(data, original.fset)

    with patched(Tensor, "data", make):
        yield


@fault({"SEED-001-4": "stdout line"})
def optimizer_zero_grad_skips_frozen() -> Iterator[None]:
    """optimizer.zero_grad() leaves the .grad of parameters that require no grad (a frozen module's)."""
    from impl.optim.optimizer import Optimizer

    def make(original: Callable) -> Callable:
        def zero_grad(self: Optimizer, set_to_none: bool = True) -> None:
            params = [p for group in self.param_groups for p in group["params"]]
            frozen = [(p, p._grad) for p in params if not p.requires_grad]
            original(self, set_to_none)
            for p, grad in frozen:
                p._grad = grad

        return zero_grad

    with patched(Optimizer, "zero_grad", make):
        yield


@fault({"SEED-001-4": "stdout line"})
def module_zero_grad_fills_zeros() -> Iterator[None]:
    """Module.zero_grad() fills the gradients with zeros instead of dropping them (set_to_none ignored)."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def zero_grad(self: Module, set_to_none: bool = True) -> None:
            original(self, False)

        return zero_grad

    with patched(Module, "zero_grad", make):
        yield
