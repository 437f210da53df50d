"""Planted faults that break tensor and node hooks (rules HOOK-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

from tests.impl_faults import fault, patched


@fault({"HOOK-002": "hook differs", "HOOK-004": "expected a tensor, got None"})
def engine_order_reversed() -> Iterator[None]:
    """The ready queue pops the earliest-created node first instead of the latest-created one."""
    import heapq

    from impl.autograd import engine

    class ReversedHeap:
        """heapq with the priority (minus the sequence number) negated on the way in."""

        heappop = staticmethod(heapq.heappop)

        @staticmethod
        def heappush(heap: list, item: tuple) -> None:
            priority, *rest = item
            heapq.heappush(heap, (-priority, *rest))

    with patched(engine, "heapq", lambda _orig: ReversedHeap):
        yield


@fault({"HOOK-006": ".grad: value"})
def retain_grad_hook_first() -> Iterator[None]:
    """retain_grad's hook runs before the tensor's other hooks instead of last among them."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def retain_grad_first(node: Any, grads: list) -> list:
            retains = node._retains_grad_hooks
            for slot, hook in list(retains.items()):
                hook(grads[slot])
            node._retains_grad_hooks = {}
            try:
                return original(node, grads)
            finally:
                node._retains_grad_hooks = retains

        return retain_grad_first

    with patched(engine, "call_tensor_pre_hooks", make):
        yield


def tensor_pre_hooks_as(run: Callable[[Callable, Any, list], list]) -> AbstractContextManager[None]:
    """The engine's ``call_tensor_pre_hooks(node, grads)`` replaced by ``run(original, node, grads)``."""
    from impl.autograd import engine

    return patched(engine, "call_tensor_pre_hooks", lambda original: partial(run, original))


@fault({"HOOK-001": "hook differs"})
def tensor_hooks_run_in_reverse() -> Iterator[None]:
    """Several hooks on one tensor run from the last registered to the first."""

    def reverse(original: Callable, node: Any, grads: list) -> list:
        hooks = node._tensor_pre_hooks
        if not hooks:
            return original(node, grads)
        node._tensor_pre_hooks = {slot: dict(reversed(h.items())) for slot, h in hooks.items()}
        try:
            return original(node, grads)
        finally:
            node._tensor_pre_hooks = hooks

    with tensor_pre_hooks_as(reverse):
        yield


@fault({"HOOK-003": "hook grad"})
def tensor_hook_result_not_passed_on() -> Iterator[None]:
    """The gradient a tensor hook returns reaches the next hooks but not the node nor the leaf's .grad."""

    def keep_incoming(original: Callable, node: Any, grads: list) -> list:
        original(node, list(grads))
        return grads

    with tensor_pre_hooks_as(keep_incoming):
        yield


@fault({"HOOK-005": "got hook"})
def removed_hook_still_fires() -> Iterator[None]:
    """RemovableHandle.remove leaves the hook registered."""
    from impl.utils.hooks import RemovableHandle

    with patched(RemovableHandle, "remove", lambda _orig: lambda self: None):
        yield


@fault({"HOOK-007": "expected error"})
def backward_pre_hook_result_not_passed_on() -> Iterator[None]:
    """The grad_output a module's full backward pre-hook returns is not what flows into the module."""
    from impl.nn.modules._backward_hook import BackwardHook

    def make(original: Callable) -> Callable:
        def output_hook(self: BackwardHook, grad_inputs: tuple, grad_outputs: tuple) -> None:
            original(self, grad_inputs, grad_outputs)

        return output_hook

    with patched(BackwardHook, "_output_hook", make):
        yield
