"""Planted faults that break torch.autograd.graph.register_multi_grad_hook (rules MGH-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


def _graph() -> Any:
    from impl import _graph

    return _graph


def _mode_wrapped(mode: str, make: Callable[[Callable, list, Callable], Any]) -> Iterator[None]:
    """register_multi_grad_hook with hooks of ``mode`` registered by ``make(original, tensors, fn)``."""
    graph = _graph()

    def register(original: Callable) -> Callable:
        def wrapped(tensors: Any, fn: Callable, **kwargs: Any) -> Any:
            if kwargs.get("mode", "all") == mode:
                return make(original, list(tensors), fn)
            return original(tensors, fn, **kwargs)

        return wrapped

    with patched(graph, "register_multi_grad_hook", register):
        yield


@fault({"MGH-002": "hook"})
def multi_grad_any_fires_for_every_grad() -> Iterator[None]:
    """Mode "any" calls the hook with every gradient of its tensors, not only the first."""
    def every(_original: Callable, tensors: list, fn: Callable) -> Any:
        return _graph()._MultiHandle(tuple(t.register_hook(fn) for t in tensors if t.requires_grad))

    yield from _mode_wrapped("any", every)


@fault({"MGH-002": "hook"})
def multi_grad_any_fires_once_ever() -> Iterator[None]:
    """Mode "any" remembers that it fired across backward calls: it fires in the first only."""
    def once(original: Callable, tensors: list, fn: Callable) -> Any:
        fired: list[bool] = []

        def first(grad: Any) -> None:
            if not fired:
                fired.append(True)
                fn(grad)

        return original(tensors, first, mode="any")

    yield from _mode_wrapped("any", once)


@fault({"MGH-001": "hook"})
def multi_grad_all_zeros_for_none() -> Iterator[None]:
    """Mode "all" passes zeros for the tensors a backward call does not compute, not None."""
    def zeros(original: Callable, tensors: list, fn: Callable) -> Any:
        def filled(grads: list) -> None:
            fn([t.detach() * 0 if g is None else g for g, t in zip(grads, tensors, strict=True)])

        return original(tensors, filled, mode="all")

    yield from _mode_wrapped("all", zeros)


@fault({"MGH-001": "hook"})
def multi_grad_all_ignores_inputs() -> Iterator[None]:
    """Mode "all" waits for every tensor reached, whether backward's inputs= needs it or not: a call
    that does not compute them all never fires the hook."""
    def reached(original: Callable) -> Callable:
        def will_execute(task: Any, node: Any) -> bool:
            if task.captured:  # autograd.grad: as it was
                return original(task, node)
            needed = task.needed
            task.needed = None
            try:
                return original(task, node)
            finally:
                task.needed = needed

        return will_execute

    with patched(_graph().GraphTask, "will_execute", reached):
        yield


@fault({"MGH-001": "hook", "MGH-002": "hook"})
def multi_grad_handle_remove_ignored() -> Iterator[None]:
    """Removing a multi-grad hook's handle leaves its hooks registered."""
    with patched(_graph()._MultiHandle, "remove", lambda _original: lambda handle: None):
        yield


@fault({"MGH-001": "hook"})
def multi_grad_all_counts_the_lone_root() -> Iterator[None]:
    """A backward from one root edge counts the root's node as one the call runs (torch's engine
    does not: it starts from that node, no GraphRoot above it), so a hook on the root fires."""
    with patched(_graph().GraphTask, "__init__", _without_lone_root):
        yield


def _without_lone_root(original: Callable) -> Callable:
    def init(task: Any, *args: Any, **kwargs: Any) -> None:
        original(task, *args, **kwargs)
        task.lone_root = None

    return init
