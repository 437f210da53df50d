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
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from impl import _grad_mode as grad_mode
from impl._graph import MAX_SEQUENCE_NR, GraphTask, Node, graph_tasks, input_meta, saved_hooks
from impl._layout import is_expandable_to, non_overlapping_and_dense, strided_array
from impl._ops import views
from impl._ops.table import apply
from impl._ops.views import CLONE_CONTIGUOUS
from impl._tensor import Tensor
from impl._xp import namespace_of
from impl.dtypes import legacy_name


def _check_hook_result(hook: Any, value: Any, new: Any) -> None:
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if value is not None:  # torch's check_variable_result: the type first, then the size
        if new.dtype is not value.dtype:
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
        new = None  # the hook's tuple would count as a holder of the gradients (AccumulateGrad)
    outputs = _validate(node, node.apply(tuple(grads)), edges)
    if not node._post_hooks:
        return outputs
    for hook in list(node._post_hooks.values()):
        new = hook(outputs, tuple(grads))
        if new is not None:
            outputs = _hook_values(hook, outputs, new)
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
        shape, dtype, xp = nxt._input_meta[nr]
        data = grad._data
        if (
            data.shape != shape
            or data.dtype is not dtype.np
            or ((xp is not np or type(data) is not np.ndarray) and namespace_of(data) is not xp)
        ):
            if conformed is None:
                conformed = list(outputs)
            conformed[i] = _conform(node, i, grad, tuple(shape), dtype, xp)
    return outputs if conformed is None else tuple(conformed)


def _conform(node: Node, i: int, grad: Any, shape: tuple, dtype: Any, xp: Any) -> Any:
    """Gradient ``i`` of ``node`` as torch's validate_outputs makes it: summed to ``shape`` (when it
    broadcasts to it), cast to ``dtype``, and moved to the device of namespace ``xp`` when it is
    0-dim (a CPU scalar's gradient computed on 'cuda'); another device is refused."""
    if grad._data.shape != shape:
        if not is_expandable_to(shape, tuple(grad.shape)):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"[{', '.join(map(str, grad.shape))}] but expected shape compatible with "
                f"[{', '.join(map(str, shape))}]"
            )
        grad = views.sum_to(grad, shape)  # (read at call time: a planted fault patches it)
    if grad.dtype is not dtype:
        if grad.dtype.is_complex and not dtype.is_complex:  # torch's handle_r_to_c: a real input's
            grad = grad.real  # gradient is the real part
        grad = grad.to(dtype)
    if namespace_of(grad._data) is not xp:
        expected = "cpu" if xp is np else "cuda:0"
        if grad.dim() != 0:
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - expected device "
                f"{expected} but got {grad.device}"
            )
        grad = grad.to(expected)
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
    buffers: dict[Node, list] = {}  # the input buffers of the nodes waiting to run (see _run)
    for (node, nr), g in zip(root_edges, root_grads, strict=False):
        slots = buffers.setdefault(node, [None] * (len(node._input_meta) or 1))
        if g is not None:
            slots[nr] = g if slots[nr] is None else slots[nr] + g
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
    lone_root = roots[0] if len(root_edges) == 1 else None
    tasks = graph_tasks.stack
    tasks.append(GraphTask(roots, deps, needed, captures, lone_root))
    # saved-tensor hooks entered or left during backward do not outlive it (torch's engine restores
    # its thread-local state)
    hooks = saved_hooks.stack
    try:
        with grad_mode.set_grad_enabled(create_graph):
            _run(ready, counter, buffers, deps, needed, captures, captured, keep_graph, lone_root)
    finally:
        tasks.pop()
        saved_hooks.stack = hooks
    return captured


def _run(
    ready: list,
    counter: Any,
    buffers: dict,
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

    ``buffers`` maps each node waiting to run to its input buffer (one slot per input); gradients
    arriving at a filled slot are summed. When a node makes exactly one other node ready and the
    ready queue is empty, that node is the next one the queue would give, so it runs without going
    through the queue (the whole of a chain). Nothing else holds a gradient between nodes, so
    AccumulateGrad can tell from its reference count whether it may keep a gradient as ``.grad``
    (see AccumulateGrad below).
    """
    pop, push = heapq.heappop, heapq.heappush
    plain = needed is None  # backward() without inputs: every reached node runs, nothing is captured
    node = None
    while node is not None or ready:
        if node is None:
            node = pop(ready)[2]
        grads = buffers.pop(node, None) or [None] * (len(node._input_meta) or 1)
        if not plain:
            if node not in needed:
                if node in captures or node is lone_root:
                    grads = call_tensor_pre_hooks(node, list(grads))
                for nr, k in captures.get(node, ()):
                    captured[k] = grads[nr]
                node = None
                continue
            for nr, k in captures.get(node, ()):
                captured[k] = grads[nr]
        edges = node._next
        if node._hooked:
            outputs = _call_function(node, grads, edges)
        else:  # most nodes have no hooks
            outputs = _validate(node, node.apply(tuple(grads)), edges)
        if not keep_graph:
            node.release()
        node = fast = None
        for grad, (nxt, nr) in zip(outputs, edges, strict=False):
            if nxt is None:
                continue
            if not plain and nxt not in needed and nxt not in captures:
                continue
            slots = buffers.get(nxt)
            if slots is None:
                slots = buffers[nxt] = [None] * (len(nxt._input_meta) or 1)
            if grad is not None:
                old = slots[nr]
                slots[nr] = grad if old is None else old + grad
            left = deps[nxt] - 1
            deps[nxt] = left
            if left == 0:
                if fast is None and not ready:
                    fast = nxt
                else:  # several ready: all through the queue, in the order they became ready
                    if fast is not None:
                        push(ready, (-fast._sequence_nr, next(counter), fast))
                        fast = None
                    push(ready, (-nxt._sequence_nr, next(counter), nxt))
        node, outputs, grad, old = fast, None, None, None  # hold no gradient across nodes


__all__ = ["execute", "AccumulateGrad"]

class AccumulateGrad(Node):
    """The node of a leaf that requires grad: writes (or adds to) ``variable.grad``."""

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self._sequence_nr = MAX_SEQUENCE_NR
        self.variable = variable
        self._input_meta = [input_meta(variable)]
        self._post_acc_hooks: OrderedDict[int, Callable] = OrderedDict()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads: tuple) -> tuple:
        new = grads[0]
        var = self.variable
        if not var.requires_grad:  # requires_grad was switched off after the graph was built
            return ()
        if new is not None:
            if var._grad is None:
                if grad_mode.is_grad_enabled():
                    var._grad = _clone_obey_contract(new, var)
                elif _stealable(grads, var):
                    var._grad = new.detach()
                else:
                    var._grad = _clone_obey_contract(new.detach(), var)
            elif grad_mode.is_grad_enabled():
                var._grad = var._grad + new
            else:
                with np.errstate(all="ignore"):
                    var._grad._data[...] = var._grad._data + new._data.astype(var._grad._data.dtype)
                var._grad._vc.bump()
        for hook in list(self._post_acc_hooks.values()):
            out = hook(var)
            if out is not None:
                if not isinstance(out, Tensor):
                    raise TypeError(f"expected Variable, but hook returned '{type(out).__name__}'")
                _check_hook_result(hook, var, out)
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return ()


def _stealable(grads: tuple, var: Tensor) -> bool:
    """torch keeps the incoming gradient itself as ``.grad`` when nothing but the engine refers to
    it (``new_grad.use_count() <= num_expected_refs``) and it obeys the layout contract; otherwise
    ``.grad`` is a copy (``_clone_obey_contract``). A Python object's reference count is the use
    count: a gradient the user holds (given to backward, kept by a hook, saved by a Function) or
    that another input buffer still holds is copied; a fresh one is kept, a hook's result too."""
    if _references(grads) > _ENGINE_REFERENCES:  # counted before this function names it too
        return False
    grad = grads[0]
    writeable = getattr(grad._data.flags, "writeable", True)  # (cupy's flags have none: always)
    return writeable and _obeys_layout_contract(grad, var)


def _references(grads: tuple) -> int:
    """References to ``grads[0]`` (as counted from inside AccumulateGrad.apply)."""
    return sys.getrefcount(grads[0])


def _engine_references() -> int:
    """What ``_references`` counts for a gradient that only the engine holds: its input buffer (a
    list) and the tuple it passes to ``AccumulateGrad.apply``, which names it ``new``. Measured on
    this interpreter rather than assumed, in the same code shape as the engine's call."""
    buffer = [object()]
    grads = tuple(buffer)
    new = grads[0]  # noqa: F841 - apply's own reference, counted as in apply
    return _references(grads)


_ENGINE_REFERENCES = _engine_references()


def _obeys_layout_contract(grad: Tensor, var: Tensor) -> bool:
    """torch's obeys_layout_contract: a variable whose elements fill memory densely wants its own
    strides (on dimensions of size > 1; a size-1 dimension of stride 0 is a view, refused), any
    other variable a contiguous gradient."""
    if not non_overlapping_and_dense(tuple(var.shape), var.stride()):
        return grad.is_contiguous()
    for size, g, v in zip(grad.shape, grad.stride(), var.stride(), strict=True):
        if (size != 1 and g != v) or (size == 1 and g == 0):
            return False
    return True


def _clone_obey_contract(grad: Tensor, var: Tensor) -> Tensor:
    """torch's clone_obey_contract: ``grad`` copied into the variable's strides when those are
    non-overlapping and dense (new_empty_strided then copy_: CopyBackwards under create_graph),
    else a contiguous clone (CloneBackward0)."""
    shape, strides = tuple(var.shape), var.stride()
    if not non_overlapping_and_dense(shape, strides):
        return apply(CLONE_CONTIGUOUS, grad)
    out = Tensor._from_array(strided_array(namespace_of(grad._data), shape, strides, var._data.dtype))
    out.copy_(grad)
    return out


def _grad_accumulator(self: Tensor) -> AccumulateGrad:
    """``Tensor._grad_accumulator``: a leaf's AccumulateGrad node, made on first need (bound here,
    where the node is declared: Tensor sits below the ops it calls)."""
    if self._grad_acc is None:
        self._grad_acc = AccumulateGrad(self)
    return self._grad_acc


Tensor._grad_accumulator = _grad_accumulator
