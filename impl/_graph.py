"""Graph primitives: nodes (what ``grad_fn`` holds) and saved tensors; below Tensor, calling no op
(a leaf's AccumulateGrad node, which does, is in ``impl.autograd.engine``).

A Node has edges ``next_functions`` (one ``(node, input_nr)`` per differentiable forward input),
metadata (shape, dtype, device) of each forward output (the engine checks incoming gradients
against it, as torch's InputMetadata; see ``input_meta``),
and four hook lists, run by the engine in torch's order: tensor pre-hooks (per output, from
``Tensor.register_hook``), retain_grad hooks, node pre-hooks, the node, node post-hooks.

The engine records here which backward call is running (``GraphTask``), so that hooks can ask
what torch's ``_current_graph_task_id`` and ``_will_engine_execute_node`` answer;
``register_multi_grad_hook`` is built on them, as torch builds it.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from impl._hooks import RemovableHandle
from impl._names import type_name
from impl._xp import namespace_of
from impl.dtypes import legacy_name

if TYPE_CHECKING:
    from impl._tensor import Tensor

_sequence = itertools.count()
MAX_SEQUENCE_NR = 2**64 - 1

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward."
)
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
    "in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor "
    "and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)
ANOMALY_HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True, check_nan=False)."
)


def input_meta(t: Tensor) -> tuple:
    """What a gradient for ``t`` must be (torch's InputMetadata): its shape, its dtype, and its
    device as the array namespace (numpy on 'cpu', cupy on 'cuda'), compared by identity."""
    return (tuple(t.shape), t.dtype, namespace_of(t._data))


class _NoHooks(dict):
    """The shared empty hook table of nodes that have none (most nodes): reading is free, writing
    is a bug (a node makes its own table first, see ``Node._own``)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a node's shared empty hook table cannot be written; use Node._own")

    __setitem__ = setdefault = update = _refuse  # type: ignore[assignment]


NO_HOOKS: dict = _NoHooks()


class Node:
    """A backward function in the graph (torch.autograd.graph.Node).

    Nodes are the bulk of a long graph, so they hold slots, not a dict. The four hook tables and
    the metadata dict are class-level defaults (the shared empty ``NO_HOOKS``, None): a node that
    never gets a hook (most nodes) neither sets nor stores them, and one that does keeps its own
    table in its instance dict (see ``_own``). Fewer stores per node, fewer objects for Python's
    cycle collector to walk.
    """

    __slots__ = ("_sequence_nr", "_next", "_input_meta", "__dict__", "__weakref__")

    _pre_hooks: dict[int, Callable] = NO_HOOKS
    _post_hooks: dict[int, Callable] = NO_HOOKS
    _tensor_pre_hooks: dict[int, dict[int, Callable]] = NO_HOOKS
    _retains_grad_hooks: dict[int, Callable] = NO_HOOKS
    _hooked = False  # whether the node has owned a hook table (one test for the engine, not four)
    _metadata: dict | None = None

    def __init__(self) -> None:
        self._sequence_nr = next(_sequence)
        self._next: tuple[tuple[Node | None, int], ...] = ()
        self._input_meta: list[tuple] = []  # input_meta of each output

    def _own(self, table: str) -> dict:
        """The node's own hook table ``table`` (one of the four above), made on first use."""
        hooks = getattr(self, table)
        if hooks is NO_HOOKS:
            hooks = OrderedDict() if table != "_retains_grad_hooks" else {}
            setattr(self, table, hooks)
            self._hooked = True
        return hooks

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations (torch's Node.metadata), made on first access."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # -- introspection ------------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return self._next

    def _short_name(self) -> str:
        """The name torch's modified-saved-tensor error gives a node: a trailing ``Backward`` goes,
        its number stays unless it is 0 (LeakyReluBackward1 -> LeakyRelu1, ReluBackward0 -> Relu,
        MyFnBackward -> MyFn); other names stay whole (torch::autograd::CopySlices)."""
        return re.sub(r"Backward(?:0|(\d*))$", r"\1", self.name())

    # -- hooks --------------------------------------------------------------------------------
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """Post hook ``fn(grad_inputs, grad_outputs)``, may return replacement grad_inputs."""
        hooks = self._own("_post_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """Pre hook ``fn(grad_outputs)``, may return replacement grad_outputs."""
        hooks = self._own("_pre_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def _tensor_hooks(self, output_nr: int) -> OrderedDict[int, Callable]:
        return self._own("_tensor_pre_hooks").setdefault(output_nr, OrderedDict())

    # -- execution ----------------------------------------------------------------------------
    def apply(self, grads: tuple) -> tuple:
        raise NotImplementedError

    def release(self) -> None:
        """Free saved tensors (called after the node ran in a backward without retain_graph)."""

    def __call__(self, *grads: Any) -> Any:
        """Run the node on one gradient per output of its forward, as torch's C++ nodes take them."""
        expected = len(self._input_meta) or 1
        if len(grads) != expected:
            raise TypeError(f"expected {expected} arguments, got {len(grads)} instead")
        for i, g in enumerate(grads):
            if g is not None and not isinstance(g, TENSOR):
                raise TypeError(f"argument {i} is not a Variable")
        out = self.apply(tuple(grads))
        return out[0] if len(out) == 1 else out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class _SavedHooks(threading.local):
    """Per thread, as torch's: the default pack/unpack hook pairs (innermost last), and the message
    of ``disable_saved_tensors_hooks`` while it is in force."""

    stack: tuple[tuple[Callable, Callable], ...] = ()
    disabled: str | None = None


saved_hooks = _SavedHooks()
# the context pack hooks run in (torch runs them without grad); impl.autograd sets no_grad here
packing: Callable[[], Any] = contextlib.nullcontext
# the Tensor class, set by impl._tensor below which it sits: what an unpack hook must return
TENSOR: type = object

PACK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
    "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please open "
    "an issue if you need to perform in-place operations on the input to a pack hook."
)
HOOKS_SET = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair "
    "of hooks is allowed at a time."
)
DETACHED = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead"
)
HOOKS_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you "
    "need to backward through the graph a second time or if you need to access saved variables after "
    "calling backward."
)


class SavedTensor:
    """A tensor saved for backward (torch's SavedVariable, ``grad_fn._raw_saved_<name>``): checks the
    version counter on use, raises once freed. An input is kept as itself; an output (``output_of``,
    the node saving it) as torch's ``tensor_data()``, an alias on its memory and version counter
    without its history, which each use with history gives back with the node's (``saved_for``,
    torch's argument to unpack) as grad_fn: the node -> output -> node cycle torch avoids so, and
    that only the cycle collector could free. An output written in place through a view keeps the
    view's grad_fn weakly (``weak_fn``, named in torch's message while it lives). An input that had a
    history when saved (``nonleaf``) and lost it to ``detach_()`` raises torch's error when used
    without ``saved_for`` (by a formula). Saved while ``saved_tensors_hooks`` are in force (a
    wrapped number excepted, as torch's), it keeps what the pack hook returned instead of the
    tensor, and each use rebuilds a tensor from the unpack hook's result with the saved one's
    grad_fn (or, for a leaf, its gradient accumulator); no version check then, as in torch.
    ``held``: the unpacked tensor while a node's backward runs (one unpack per saved tensor)."""

    __slots__ = (
        "tensor", "version", "freed", "is_output", "weak_fn", "nonleaf", "hooks", "held", "source",
        "output_nr",
    )

    def __init__(
        self,
        tensor: Tensor | None = None,
        output_of: Node | None = None,
        pack: bool = True,
        output_nr: int = 0,
    ) -> None:
        self.hooks: tuple | None = None
        self.held: Tensor | None = None
        self.freed = False
        self.is_output = output_of is not None
        self.output_nr = output_nr  # which output of ``output_of`` it is (torch's SavedVariable output_nr_)
        self.weak_fn: Callable[[], Node | None] | None = None
        self.nonleaf = False
        self.tensor: Tensor | None = tensor
        self.source: Callable[[], Tensor | None] | None = None  # a kept output's own tensor, weakly
        self.version = 0
        if tensor is None:  # torch's default-constructed SavedVariable: nothing was saved
            return
        if tensor._inference:
            raise RuntimeError(INFERENCE_SAVED)
        self.version = tensor._version
        if pack and saved_hooks.stack and not tensor._wrapped_number:
            self._pack(saved_hooks.stack[-1], output_of=output_of)
        elif output_of is not None:
            self.tensor, self.source = tensor.detach(), weakref.ref(tensor)
        else:
            self.nonleaf = tensor._grad_fn_ is not None

    def _pack(
        self, hooks: tuple[Callable, Callable], detached: bool = False, output_of: Node | None = None
    ) -> None:
        """Keep what ``pack_hook(tensor)`` returns (run without grad; given the tensor ``detached``
        when registered on the saved tensor) and what rebuilds the tensor."""
        tensor = self.tensor
        assert tensor is not None
        pack_hook, unpack_hook = hooks
        version = tensor._version
        if output_of is not None and tensor._grad_fn_ is None:  # the hook sees the output's
            tensor._grad_fn_, tensor._output_nr = output_of, self.output_nr  # grad_fn, about to be set
        with packing():
            packed = pack_hook(tensor.detach() if detached else tensor)
        if tensor._version != version:
            raise RuntimeError(PACK_INPLACE)
        fn = None if self.is_output else tensor.grad_fn
        acc = tensor._grad_accumulator() if fn is None and tensor._requires_grad else None
        self.hooks = (unpack_hook, packed, fn, tensor._output_nr, acc)
        self.tensor = None

    def _output_fn(self, saved_for: Node | None) -> Node | None:
        """A saved output's grad_fn: the view's it was written through while that lives, else the
        node using it."""
        fn = self.weak_fn() if self.weak_fn is not None else None
        return saved_for if fn is None else fn

    def unpack(self, saved_for: Node | None = None, history: bool = True) -> Tensor | None:
        """The saved tensor, checked (as torch's ``SavedVariable::unpack(saved_for)``); a saved
        output without ``history`` is given back as kept, without the node's history (for a
        backward that records no graph, which reads only its values)."""
        if self.freed:
            raise RuntimeError(FREED)
        if self.held is not None:
            return self.held
        if self.hooks is not None:
            return self._unpacked(saved_for)
        t = self.tensor
        if t is None:
            return None
        fn = self._output_fn(saved_for) if self.is_output else None
        if self.nonleaf and saved_for is None and t._grad_fn_ is None:
            raise RuntimeError(DETACHED)
        if t._version != self.version:
            raise RuntimeError(_modified_message(t, self.version, fn, self.output_nr))
        if not self.is_output or not history or fn is None:
            return t
        var = t.detach()
        var._grad_fn_, var._output_nr = fn, self.output_nr
        source = self.source and self.source()  # its tangent, set after saving (torch shares fw_grad)
        if source is not None:
            var._fw = source._fw
        return var

    def _unpacked(self, saved_for: Node | None) -> Tensor:
        unpack_hook, packed, fn, output_nr, acc = self.hooks  # type: ignore[misc]
        data = unpack_hook(packed)
        if not isinstance(data, TENSOR):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                + type_name(data)
            )
        var = data.detach()
        fn = self._output_fn(saved_for) if self.is_output else fn
        if fn is not None:
            var._grad_fn_, var._output_nr = fn, output_nr
        elif acc is not None:
            var._requires_grad, var._grad_acc = True, acc
        return var

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack the saved tensor now with ``pack_hook`` (torch's SavedTensor.register_hooks)."""
        if self.hooks is not None:
            raise RuntimeError(HOOKS_SET)
        if self.tensor is None:
            raise RuntimeError(HOOKS_AFTER_FREE if self.freed else
                               "Calling register_hooks on a saved tensor with value None is forbidden")
        self._pack((pack_hook, unpack_hook), detached=True)

    def release(self) -> None:
        """Free the tensor (and what rebuilds it)."""
        self.tensor = None
        self.weak_fn = None
        self.hooks = None
        self.held = None
        self.freed = True


class saved_tensors_hooks:
    """Pack/unpack hooks for the tensors saved for backward inside the block (the innermost pair
    applies); entering while ``disable_saved_tensors_hooks`` is in force raises its message."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if saved_hooks.disabled is not None:
            raise RuntimeError(saved_hooks.disabled)
        saved_hooks.stack = (*saved_hooks.stack, (self.pack_hook, self.unpack_hook))

    def __exit__(self, *args: object) -> None:
        saved_hooks.stack = saved_hooks.stack[:-1]


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept on the CPU, moved back to their device when used (torch's save_on_cpu;
    no memory is pinned here, which changes nothing a program sees)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Refuse saved-tensor hooks inside the block with ``error_message`` (raised at once if hooks
    are in force); the message in force before comes back after."""
    previous = saved_hooks.disabled
    try:
        if saved_hooks.stack:
            raise RuntimeError(error_message)
        saved_hooks.disabled = error_message
        yield
    finally:
        saved_hooks.disabled = previous


def increment_version(tensor: Any) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an in-place
    write would (torch.autograd.graph.increment_version); an inference tensor has none to bump."""
    tensors = (tensor,) if isinstance(tensor, TENSOR) else tensor
    try:
        tensors = tuple(tensors)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    if not all(isinstance(t, TENSOR) for t in tensors):
        raise RuntimeError("increment_version expects each element of the iterable to be a tensor")
    for t in tensors:
        if not t._inference or t._tracked_inference:
            t._vc.bump()


def _modified_message(t: Tensor, expected: int, output_of: Node | None = None, output_nr: int = 0) -> str:
    desc = f"[{legacy_name(t.dtype)} [{', '.join(str(s) for s in t.shape)}]]"
    fn = output_of if output_of is not None else t.grad_fn
    nr = output_nr if output_of is not None else t._output_nr
    where = f", which is output {nr} of {fn._short_name()}," if fn is not None else ""
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"{desc}{where} is at version {t._vc.value}; expected version {expected} instead. {ANOMALY_HINT}"
    )


class GraphTask:
    """One backward call (torch's GraphTask) as hooks see it: its id, the nodes reachable from its
    roots, and which of them run (``needed`` None: all; else those needed or ``captured``).
    ``lone_root``: the root node of a call from one root edge, where torch's engine starts from
    that node itself instead of a GraphRoot, so that it is no node of the graph it records."""

    __slots__ = ("id", "roots", "reached", "needed", "captured", "lone_root")
    _ids = itertools.count()

    def __init__(
        self, roots: list, reached: dict, needed: set | None, captured: dict, lone_root: Node | None = None
    ) -> None:
        self.id = next(GraphTask._ids)
        self.roots, self.reached, self.needed, self.captured = roots, reached, needed, captured
        self.lone_root = lone_root

    def will_execute(self, node: Node) -> bool:
        """torch's ``_will_engine_execute_node``: reached, and run or captured by this call (a lone
        root: never, as torch answers)."""
        if node is self.lone_root or (node not in self.reached and node not in self.roots):
            return False
        if self.needed is None or node in self.needed:
            return True
        if node not in self.captured:
            return False
        if all(n is None for n, _ in node._next):  # torch: topological_nr 0, a leaf's node
            raise RuntimeError(
                "A leaf node was passed to _will_engine_execute_node but we are currently running "
                "autograd.grad(). This is currently not supported."
            )
        return True


class _Tasks(threading.local):
    def __init__(self) -> None:
        self.stack: list[GraphTask] = []  # the running backward calls, innermost (reentrant) last


graph_tasks = _Tasks()


def _current_task() -> GraphTask:
    if not graph_tasks.stack:
        raise AssertionError("expected this hook to be called inside a backward call")
    return graph_tasks.stack[-1]


def _grad_fn_or_grad_acc(t: Tensor) -> Node:
    node = t.grad_fn if t.grad_fn is not None or not t.requires_grad else t._grad_accumulator()
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


class _MultiHandle(RemovableHandle):
    """The handle of a multi-grad hook: removes the hook from every tensor it was registered on."""

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __getstate__(self) -> tuple[RemovableHandle, ...]:
        return self.handles

    def __setstate__(self, state: tuple[RemovableHandle, ...]) -> None:
        self.handles = state


def register_multi_grad_hook(tensors: Any, fn: Callable, *, mode: str = "all") -> RemovableHandle:
    """``fn`` called once per backward call: in mode "all" with every tensor's gradient (None for
    those the call does not compute) once the last one the call computes is ready; in mode "any"
    with the first gradient computed. Built, as torch's, on one tensor hook per tensor."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if mode == "any":
        ran: set[int] = set()

        def first(grad: Tensor) -> None:
            task = _current_task().id
            if task not in ran:
                ran.add(task)
                fn(grad)

        return _MultiHandle(tuple(t.register_hook(first) for t in tensors if t.requires_grad))
    nodes = [_grad_fn_or_grad_acc(t) for t in tensors]
    buffers: dict[int, list] = {}  # per backward call: the gradients so far
    expected: dict[int, int] = {}  # per backward call: how many of the tensors' nodes it runs

    def inner(idx: int) -> Callable:
        def hook(grad: Tensor) -> None:
            task = _current_task()
            if task.id not in buffers:
                buffers[task.id] = [None] * len(nodes)
                expected[task.id] = sum(map(task.will_execute, nodes))
            buffers[task.id][idx] = grad
            expected[task.id] -= 1
            if expected[task.id] == 0:
                del expected[task.id]
                fn(buffers.pop(task.id))

        return hook

    return _MultiHandle(tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors)))


class GraphRoot(Node):
    """Starts a backward pass: hands the initial gradients to the roots' edges."""

    def __init__(self, edges: list[tuple[Node | None, int]], grads: list) -> None:
        super().__init__()
        self._next = tuple(edges)
        self._grads = grads

    def apply(self, grads: tuple) -> tuple:
        return tuple(self._grads)
