"""Planted faults that break gradient accumulation (rules ACC-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tests.impl_faults import fault, patched


@fault({"ACC-001": ".grad: value"})
def accumulate_grad_replaces() -> Iterator[None]:
    """AccumulateGrad overwrites a leaf's existing .grad instead of adding to it."""
    from impl.autograd.graph import AccumulateGrad

    def make(original: Callable) -> Callable:
        def replace(self: AccumulateGrad, grads: tuple) -> tuple:
            if grads[0] is not None:
                self.variable._grad = None
            return original(self, grads)

        return replace

    with patched(AccumulateGrad, "apply", make):
        yield
