"""The backward engine, modelled on torch's.

1. Dependencies: count incoming edges of every node reachable from the roots (iteratively).
2. Ready queue: a heap ordered by sequence number, later-created nodes first (AccumulateGrad has
   the largest number, so a leaf's gradient is written as soon as it is complete).
3. Each node runs as torch's ``call_function``: tensor pre-hooks, retain_grad hooks, node pre-hooks,
   the node, node post-hooks; its outputs are validated (reduced to the input's shape, cast to
   its dtype) and summed into the input buffers of the next nodes.
4. With ``inputs`` (autograd.grad or backward(inputs=)), only nodes on a path to them run; the
   gradients reaching them are captured.
Saved tensors of each node are released after it runs unless ``retain_graph``.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any

from impl.autograd import grad_mode
from impl.autograd.graph import AccumulateGrad, Node


def _check_hook_result(hook: Any, value: Any, new: Any) -> None:
    from impl._tensor import Tensor

    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if value is not None:  # torch's check_variable_result: the type first, then the size
        if new.dtype is not value.dtype:
            from impl.dtypes import legacy_name

            raise RuntimeError(
                f"hook '{name}' has changed the type of value (was {legacy_name(value.dtype)} "
                f"got {legacy_name(new.dtype)})"
            )
        if tuple(new.shape) != tuple(value.shape):
            raise RuntimeError(f"hook '{name}' has changed the size of value")


def call_tensor_pre_hooks(node: Node, grads: list) -> list:
    """Tensor hooks (per output slot, in registration order), then retain_grad hooks (always last)."""
    if not node._tensor_pre_hooks and not node._retains_grad_hooks:
        return grads
    for slot, hooks in node._tensor_pre_hooks.items():
        for hook in list(hooks.values()):
            new = hook(grads[slot])
            if new is not None:
                _check_hook_result(hook, grads[slot], new)
                grads[slot] = new
                if _tasks:
                    _tasks[-1].disown(new)
    for slot, hook in list(node._retains_grad_hooks.items()):
        hook(grads[slot])
    return grads


def _hook_values(hook: Any, old: tuple, new: Any) -> tuple:
    """Check a node hook's replacement values like torch (count, then each value's size and dtype)."""
    new = tuple(new)
    if len(new) != len(old):
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(new)}, but "
            f"expected {len(old)})"
        )
    for o, n in zip(old, new, strict=True):
        if n is not None and o is not None:
            _check_hook_result(hook, o, n)
    return new


def _call_function(node: Node, grads: list, edges: tuple) -> tuple:
    """torch's call_function: pre-hooks, the node, output validation, then post hooks.
    ``edges`` is ``node._next`` (read once by the caller)."""
    if node._tensor_pre_hooks or node._retains_grad_hooks:
        grads = call_tensor_pre_hooks(node, grads)
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(_hook_values(hook, tuple(grads), new))
    outputs = _validate(node, node.apply(tuple(grads)), edges)
    if not node._post_hooks:
        return outputs
    for hook in list(node._post_hooks.values()):
        new = hook(outputs, tuple(grads))
        if new is not None:
            outputs = _hook_values(hook, outputs, new)
            if _tasks:
                for g in outputs:
                    _tasks[-1].disown(g)
    return outputs


def _validate(node: Node, outputs: tuple, edges: tuple) -> tuple:
    """Each gradient reduced to the shape the next node expects and cast to its dtype (``outputs``
    itself when all conform, the common case)."""
    if len(outputs) != len(edges):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected "
            f"{len(edges)}, got {len(outputs)})"
        )
    conformed = None
    for i, grad in enumerate(outputs):
        if grad is None:
            continue
        nxt, nr = edges[i]
        if nxt is None:
            continue
        shape, dtype = nxt._input_meta[nr]
        data = grad._data
        if data.shape != shape or data.dtype is not dtype.np:
            if conformed is None:
                conformed = list(outputs)
            conformed[i] = _conform(node, i, grad, tuple(shape), dtype)
    return outputs if conformed is None else tuple(conformed)


def _conform(node: Node, i: int, grad: Any, shape: tuple, dtype: Any) -> Any:
    """Gradient ``i`` of ``node`` summed to ``shape`` (when it broadcasts to it) and cast to ``dtype``."""
    if grad._data.shape != shape:
        from impl._ops.views import is_expandable_to, sum_to

        if not is_expandable_to(shape, tuple(grad.shape)):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, grad.shape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]"
            )
        grad = sum_to(grad, shape)
    if grad.dtype is not dtype:
        grad = grad.to(dtype)
    return grad


def _dependencies(roots: list[Node]) -> dict[Node, int]:
    deps: dict[Node, int] = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for nxt, _ in node._next:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _needed(roots: list[Node], targets: set[Node]) -> set[Node]:
    """Nodes from which a target is reachable (the targets included), found without recursion."""
    order: list[Node] = []
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _ in node._next:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    needed = set(t for t in targets if t in seen)
    changed = True
    while changed:  # fixed point over the reachable set
        changed = False
        for node in order:
            if node not in needed and any(n in needed for n, _ in node._next if n is not None):
                needed.add(node)
                changed = True
    return needed


def execute(
    root_edges: list[tuple[Node, int]],
    root_grads: list,
    keep_graph: bool,
    create_graph: bool,
    capture: list[tuple[Node, int]] | None = None,
    accumulate_only: set[Node] | None = None,
) -> list:
    """Run backward from ``root_edges`` with ``root_grads``.

    ``capture``: edges whose incoming gradient is returned (autograd.grad); those nodes do not run
    unless they lead to another captured edge. ``accumulate_only``: backward(inputs=) targets.
    """
    buffers = _Buffers()
    for (node, nr), g in zip(root_edges, root_grads, strict=False):
        buffers.disown(g)
        buffers.add(node, nr, g)
    roots = list(dict.fromkeys(node for node, _ in root_edges))
    deps = _dependencies(roots)
    needed: set[Node] | None = None
    captures: dict[Node, list[tuple[int, int]]] = {}
    if capture is not None:
        for k, (node, nr) in enumerate(capture):
            if node is not None:
                captures.setdefault(node, []).append((nr, k))
        reach = _needed(roots, set(captures))
        needed = {
            n for n in reach if n not in captures or any(c in reach for c, _ in n._next if c is not None)
        }
    if accumulate_only is not None:
        needed = _needed(roots, accumulate_only)
    captured: list = [None] * (len(capture) if capture else 0)

    counter = itertools.count()
    ready: list = []
    for node in roots:
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, next(counter), node))
    _tasks.append(buffers)
    try:
        with grad_mode.set_grad_enabled(create_graph):
            lone_root = roots[0] if len(root_edges) == 1 else None
            _run(ready, counter, buffers, deps, needed, captures, captured, keep_graph, lone_root)
    finally:
        _tasks.pop()
    return captured


def _run(
    ready: list,
    counter: Any,
    buffers: _Buffers,
    deps: dict,
    needed: set | None,
    captures: dict,
    captured: list,
    keep_graph: bool,
    lone_root: Node | None,
) -> None:
    """The engine loop: pop the ready node with the highest sequence number, run it, route its outputs.

    A node that is reached but not needed (a captured edge, or the root itself when the backward has
    a single root edge; torch puts a dummy GraphRoot before several) still runs its tensor pre-hooks
    and retain_grad hooks, as torch's evaluate_function does; it is not run.
    """
    pop, push = heapq.heappop, heapq.heappush
    plain = needed is None  # backward() without inputs: every reached node runs, nothing is captured
    while ready:
        node = pop(ready)[2]
        grads = buffers.pop(node)
        if not plain:
            if node not in needed:
                if node in captures or node is lone_root:
                    grads = call_tensor_pre_hooks(node, list(grads))
                for nr, k in captures.get(node, ()):
                    captured[k] = grads[nr]
                continue
            for nr, k in captures.get(node, ()):
                captured[k] = grads[nr]
        edges = node._next
        if node._tensor_pre_hooks or node._retains_grad_hooks or node._pre_hooks or node._post_hooks:
            outputs = _call_function(node, grads, edges)
        else:  # most nodes have no hooks
            outputs = _validate(node, node.apply(tuple(grads)), edges)
        if not keep_graph:
            node.release()
        for grad, (nxt, nr) in zip(outputs, edges, strict=False):
            if nxt is None:
                continue
            if not plain and nxt not in needed and nxt not in captures:
                continue
            buffers.add(nxt, nr, grad)
            left = deps[nxt] - 1
            deps[nxt] = left
            if left == 0:
                push(ready, (-nxt._sequence_nr, next(counter), nxt))


class _Buffers:
    """Input buffers of the nodes waiting to run, and which gradient tensors the engine itself made.

    torch's AccumulateGrad keeps an incoming gradient as ``.grad`` without copying when nothing
    else refers to it ("stealing", visible when it aliases a user tensor through a view); here a
    gradient may be stolen when a node of this backward produced it and no other buffer holds it.
    """

    def __init__(self) -> None:
        self.slots: dict[Node, list] = {}
        # id -> [tensor, number of buffer slots holding it]; an entry goes when its count drops to
        # 0 (the gradient was consumed), except at AccumulateGrad, which asks can_steal after.
        self.owned: dict[int, list] = {}
        self.foreign: dict[int, Any] = {}  # tensors the user may hold: given gradients, hook results

    def disown(self, g: Any) -> None:
        if g is not None:
            self.foreign[id(g)] = g
            self.owned.pop(id(g), None)

    def add(self, node: Node, nr: int, grad: Any) -> None:
        slots = self.slots.get(node)
        if slots is None:
            slots = self.slots[node] = [None] * (len(node._input_meta) or 1)
        if grad is None:
            return
        old = slots[nr]
        if old is not None:
            self._drop(old)
            grad = old + grad
        slots[nr] = grad
        # ``grad`` now sits in one more buffer slot (owned unless the user may hold it)
        entry = self.owned.get(id(grad))
        if entry is not None:
            entry[1] += 1
        elif id(grad) not in self.foreign:
            self.owned[id(grad)] = [grad, 1]

    def pop(self, node: Node) -> list:
        grads = self.slots.pop(node, None) or [None] * (len(node._input_meta) or 1)
        keep = type(node) is AccumulateGrad
        for g in grads:
            if g is not None:
                self._drop(g, keep)
        return grads

    def _drop(self, g: Any, keep: bool = False) -> None:
        """``g`` left one buffer slot; forget it when no slot holds it any more (unless ``keep``)."""
        entry = self.owned.get(id(g))
        if entry is not None:
            entry[1] -= 1
            if entry[1] == 0 and not keep:
                del self.owned[id(g)]

    def can_steal(self, g: Any) -> bool:
        entry = self.owned.get(id(g))
        return entry is not None and entry[0] is g and entry[1] == 0


_tasks: list[_Buffers] = []


def can_steal(grad: Any) -> bool:
    """Whether AccumulateGrad may keep ``grad`` itself as ``.grad`` (see _Buffers)."""
    return bool(_tasks) and _tasks[-1].can_steal(grad)


__all__ = ["execute", "AccumulateGrad"]
