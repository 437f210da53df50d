"""Planted faults that break tensor and node hooks (rules HOOK-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
