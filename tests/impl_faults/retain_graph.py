"""Planted faults that break the freeing of the graph after backward (rules RG-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tests.impl_faults import fault, patched
from tests.impl_faults.accumulation import grad_defaulting


@fault({"RG-001": "expected error, got value"})
def saved_tensors_never_freed() -> Iterator[None]:
    """A node's saved tensors stay alive after backward, so no second backward ever raises."""
    from impl.autograd.graph import SavedTensor

    with patched(SavedTensor, "release", lambda _orig: lambda self: None):
        yield


@fault({"RG-002": "expected value, got error"})
def every_node_freed_after_backward() -> Iterator[None]:
    """A backward without retain_graph marks every node of the graph freed, even those that saved nothing."""
    import weakref

    from impl.autograd import engine
    from impl.autograd.graph import FREED, AccumulateGrad

    freed: weakref.WeakSet = weakref.WeakSet()

    def make(original: Callable) -> Callable:
        def execute(root_edges: list, root_grads: list, keep_graph: bool, *args: Any, **kwargs: Any) -> list:
            roots = [node for node, _ in root_edges]
            reached = {n for n in (*roots, *engine._dependencies(roots)) if not isinstance(n, AccumulateGrad)}
            if any(node in freed for node in reached):
                raise RuntimeError(FREED)
            if not keep_graph:
                freed.update(reached)
            return original(root_edges, root_grads, keep_graph, *args, **kwargs)

        return execute

    with patched(engine, "execute", make):
        yield


@fault({"RG-003": "expected error, got value"})
def autograd_grad_retains_graph_by_default() -> Iterator[None]:
    """torch.autograd.grad keeps the graph when retain_graph is not given, unlike backward."""
    with grad_defaulting("retain_graph", True):
        yield


@fault({"RG-004": "expected value, got error"})
def create_graph_frees_graph_by_default() -> Iterator[None]:
    """torch.autograd.grad with create_graph=True frees the graph when retain_graph is not given."""
    with grad_defaulting("retain_graph", False):
        yield
