"""Planted faults that break the freeing of the graph after backward (rules RG-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

from impl_faults import fault, patched
from impl_faults.accumulation import grad_defaulting


@fault({"RG-001": "the backend raised none"})
def saved_tensors_never_freed() -> Iterator[None]:
    """A node's saved tensors stay alive after backward, so no second backward ever raises."""
    from impl._graph import SavedTensor

    with patched(SavedTensor, "release", lambda _orig: lambda self: None):
        yield


@fault({"RG-001": "the backend raised none"})
def explicit_retain_graph_false_keeps_graph() -> Iterator[None]:
    """backward(retain_graph=False) keeps the graph: whether retain_graph was given is tested, not
    its value."""
    from impl import autograd

    def make(original: Callable) -> Callable:
        def backward(tensors: Any, grad: Any = None, retain_graph: Any = None, *args: Any, **kw: Any) -> None:
            return original(tensors, grad, True if retain_graph is not None else None, *args, **kw)

        return backward

    with patched(autograd, "backward", make):
        yield


@fault({"RG-001": "the backend raised none"})
def retained_graph_never_freed() -> Iterator[None]:
    """A graph once backpropagated with retain_graph=True stays retained: later passes without it do
    not free it."""
    import weakref

    from impl.autograd import engine

    retained: weakref.WeakSet = weakref.WeakSet()

    def make(original: Callable) -> Callable:
        def execute(root_edges: list, root_grads: list, keep_graph: bool, *args: Any, **kwargs: Any) -> list:
            roots = [node for node, _ in root_edges if node is not None]
            if keep_graph:
                retained.update(roots)
            keep_graph = keep_graph or any(node in retained for node in roots)
            return original(root_edges, root_grads, keep_graph, *args, **kwargs)

        return execute

    with patched(engine, "execute", make):
        yield


@fault({"RG-002": "the reference raised none"})
def every_node_freed_after_backward() -> Iterator[None]:
    """A backward without retain_graph marks every node of the graph freed, even those that saved nothing."""
    import weakref

    from impl._graph import FREED
    from impl.autograd import engine
    from impl.autograd.engine import AccumulateGrad

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


@fault({"RG-002": "the reference raised none"})
def view_nodes_freed_after_backward() -> Iterator[None]:
    """A view's node is freed by a backward without retain_graph as if it had saved its input, so a
    graph through a view cannot be backpropagated twice."""
    import weakref

    from impl._ops import codegen, views
    from impl._ops.table import _NODE_HELPERS, OpDef

    freed: weakref.WeakSet = weakref.WeakSet()

    def compiled(op: OpDef, method: str) -> Callable:  # compiled now: OpNode's would replace the patch
        return codegen.compile_node_method(op, method, _NODE_HELPERS)

    def guarded(op: OpDef) -> Callable:
        apply = compiled(op, "apply")
        return lambda node, grads: _raise_freed() if node in freed else apply(node, grads)

    def releasing(op: OpDef) -> Callable:
        release = compiled(op, "release")
        return lambda node: (freed.add(node), release(node))[-1]

    with ExitStack() as stack:
        for op in (op for op in vars(views).values() if isinstance(op, OpDef) and op.view):
            stack.enter_context(patched(op.node_class, "apply", lambda _apply, op=op: guarded(op)))
            stack.enter_context(patched(op.node_class, "release", lambda _release, op=op: releasing(op)))
        yield


def _raise_freed() -> Any:
    from impl._graph import FREED

    raise RuntimeError(FREED)


@fault({"RG-003": "the backend raised none"})
def autograd_grad_retains_graph_by_default() -> Iterator[None]:
    """torch.autograd.grad keeps the graph when retain_graph is not given, unlike backward."""
    with grad_defaulting("retain_graph", True):
        yield


@fault({"RG-004": "the reference raised none"})
def create_graph_frees_graph_by_default() -> Iterator[None]:
    """torch.autograd.grad with create_graph=True frees the graph when retain_graph is not given."""
    with grad_defaulting("retain_graph", False):
        yield
