"""Planted faults that break seed 000's scripts: gradients of intermediate tensors kept with
retain_grad() or seen by tensor hooks (rules SEED-000-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"SEED-000-1": "stdout line", "SEED-002-3": "stdout line", "LEAF-004": ".grad"})
def retain_grad_registers_no_hook() -> Iterator[None]:
    """retain_grad() marks a non-leaf as retaining its gradient but keeps no hook, so its .grad stays None."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def retain_grad(self: Tensor) -> None:
            original(self)
            if self._grad_fn is not None:
                self._grad_fn._retains_grad_hooks.pop(self._output_nr, None)

        return retain_grad

    with patched(Tensor, "retain_grad", make):
        yield


@fault({"SEED-000-2": "stdout line"})
def tensor_hook_gets_passed_on_gradient() -> Iterator[None]:
    """A non-leaf's tensor hook gets the gradient its grad_fn passes to its first input, not its own."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def register_hook(self: Tensor, hook: Callable) -> Any:
            if self.grad_fn is None:
                return original(self, hook)

            def post_hook(grad_inputs: tuple, _grad_outputs: tuple) -> None:
                hook(grad_inputs[0])

            return self.grad_fn.register_hook(post_hook)

        return register_hook

    with patched(Tensor, "register_hook", make):
        yield
