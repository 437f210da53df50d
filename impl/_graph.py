"""Graph primitives: nodes (what ``grad_fn`` holds) and saved tensors; below Tensor, calling no op
(a leaf's AccumulateGrad node, which does, is in ``impl.autograd.engine``).

A Node has edges ``next_functions`` (one ``(node, input_nr)`` per differentiable forward input),
metadata (shape, dtype, device) of each forward output (the engine checks incoming gradients
against it, as torch's InputMetadata; see ``input_meta``),
and four hook lists, run by the engine in torch's order: tensor pre-hooks (per output, from
``Tensor.register_hook``), retain_grad hooks, node pre-hooks, the node, node post-hooks.
"""

from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from impl._hooks import RemovableHandle
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
        out = self.apply(tuple(grads))
        return out[0] if len(out) == 1 else out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class SavedTensor:
    """A tensor saved for backward: checks the version counter on use, raises once freed."""

    __slots__ = ("tensor", "version", "freed", "output_of")

    def __init__(self, tensor: Tensor, output_of: Node | None = None) -> None:
        if tensor._inference:
            raise RuntimeError(INFERENCE_SAVED)
        self.tensor: Tensor | None = tensor
        self.version = tensor._version
        self.freed = False
        self.output_of = output_of  # the node that saved its own output (named in torch's message)

    def unpack(self) -> Tensor:
        if self.freed:
            raise RuntimeError(FREED)
        t = self.tensor
        assert t is not None
        if t._version != self.version:
            raise RuntimeError(_modified_message(t, self.version, self.output_of))
        return t

    def release(self) -> None:
        """Free the tensor. ``output_of`` goes too: a node saving its own output is a reference
        cycle (node -> saved -> node) that only the cycle collector could free otherwise."""
        self.tensor = None
        self.output_of = None
        self.freed = True


def _modified_message(t: Tensor, expected: int, output_of: Node | None = None) -> str:
    desc = f"[{legacy_name(t.dtype)} [{', '.join(str(s) for s in t.shape)}]]"
    fn = output_of if output_of is not None else t.grad_fn
    nr = 0 if output_of is not None else t._output_nr
    where = f", which is output {nr} of {fn._short_name()}," if fn is not None else ""
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"{desc}{where} is at version {t._vc.value}; expected version {expected} instead. {ANOMALY_HINT}"
    )


class GraphRoot(Node):
    """Starts a backward pass: hands the initial gradients to the roots' edges."""

    def __init__(self, edges: list[tuple[Node | None, int]], grads: list) -> None:
        super().__init__()
        self._next = tuple(edges)
        self._grads = grads

    def apply(self, grads: tuple) -> tuple:
        return tuple(self._grads)
