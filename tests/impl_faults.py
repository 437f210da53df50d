"""Planted faults in impl: each breaks exactly one behaviour of the engine, by monkeypatching the
smallest piece of impl that holds it, and restores impl when the block ends.

They exist so that the conformance suite can be shown to catch real engine bugs (issue 5):
``tests/test_impl_planted_faults.py`` runs conformance families against impl with each fault
planted (``--plant NAME``, see ``oracle.planted``) and checks that the expected rules fail.

Each entry of ``IMPL_FAULTS`` is a context-manager factory; while it is active, impl misbehaves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

GRAD_ERROR = 1e-3  # relative error of the planted sigmoid gradient


@contextmanager
def _patched(owner: Any, name: str, make: Callable[[Any], Any]) -> Iterator[None]:
    """Replace ``owner.name`` by ``make(original)`` for the duration of the block."""
    if isinstance(owner, dict):
        original = owner[name]
        owner[name] = make(original)
        try:
            yield
        finally:
            owner[name] = original
        return
    original = vars(owner)[name] if name in vars(owner) else getattr(owner, name)
    setattr(owner, name, make(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


@contextmanager
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

    with _patched(engine, "heapq", lambda _orig: ReversedHeap):
        yield


@contextmanager
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

    with _patched(engine, "call_tensor_pre_hooks", make):
        yield


@contextmanager
def saved_tensors_never_freed() -> Iterator[None]:
    """A node's saved tensors stay alive after backward, so no second backward ever raises."""
    from impl.autograd.graph import SavedTensor

    with _patched(SavedTensor, "release", lambda _orig: lambda self: None):
        yield


@contextmanager
def sigmoid_grad_off() -> Iterator[None]:
    """sigmoid's gradient (the value of its backward op, sigmoid_backward) is off by a relative 1e-3.

    The backward op's forward is patched rather than the derivative formula, so the graph built
    with ``create_graph=True`` keeps torch's node names: only the numbers are wrong.
    """
    from impl._ops.backward_ops import SIGMOID_BACKWARD

    def make(original: Callable) -> Callable:
        return lambda xp, *arrays: original(xp, *arrays) * (1 + GRAD_ERROR)

    with _patched(SIGMOID_BACKWARD, "forward", make):
        yield


@contextmanager
def accumulate_grad_replaces() -> Iterator[None]:
    """AccumulateGrad overwrites a leaf's existing .grad instead of adding to it."""
    from impl.autograd.graph import AccumulateGrad

    def make(original: Callable) -> Callable:
        def replace(self: AccumulateGrad, grads: tuple) -> tuple:
            if grads[0] is not None:
                self.variable._grad = None
            return original(self, grads)

        return replace

    with _patched(AccumulateGrad, "apply", make):
        yield


@contextmanager
def full_backward_hook_gets_outputs() -> Iterator[None]:
    """A module's full backward hooks receive the gradients w.r.t. its outputs as ``grad_input``."""
    from impl.nn.modules._backward_hook import BackwardHook

    def make(original: Callable) -> Callable:
        def init(self: BackwardHook, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
            swapped = [lambda m, _gi, go, hook=hook: hook(m, go, go) for hook in user_hooks]
            original(self, module, swapped, user_pre_hooks)

        return init

    with _patched(BackwardHook, "__init__", make):
        yield


IMPL_FAULTS: dict[str, Callable[[], Any]] = {
    fault.__name__: fault
    for fault in (
        engine_order_reversed,
        retain_grad_hook_first,
        saved_tensors_never_freed,
        sigmoid_grad_off,
        accumulate_grad_replaces,
        full_backward_hook_gets_outputs,
    )
}
