"""Planted faults that break saved-tensor hooks and grad_fn._saved_* (rules SAVED-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


def _graph() -> Any:
    from impl import _graph

    return _graph


def _table() -> Any:
    from impl._ops import table

    return table


@fault({"SAVED-001": "hook"})
def unpack_hook_skipped() -> Iterator[None]:
    """A saved tensor with hooks gives back what pack returned, without calling the unpack hook."""
    def unpacked(_original: Callable) -> Callable:
        def read(self: Any, saved_for: Any = None) -> Any:
            packed, fn = self.hooks[1], self.hooks[2]
            var = packed.detach()
            if fn is not None:
                var._grad_fn, var._output_nr = fn, self.hooks[3]
            return var

        return read

    with patched(_graph().SavedTensor, "_unpacked", unpacked):
        yield


@fault({"SAVED-001": "hook"})
def unpacked_at_each_formula() -> Iterator[None]:
    """The tensor a node's backward unpacked once is not kept for its formulas: each formula
    unpacks again, running the unpack hook twice per use."""
    def unpack(original: Callable) -> Callable:
        def read(self: Any, *args: Any) -> Any:
            held, self.held = self.held, None
            try:
                return original(self, *args)
            finally:
                self.held = held

        return read

    with patched(_graph().SavedTensor, "unpack", unpack):
        yield


@fault({"SAVED-001": "hook"})
def outermost_hooks_apply() -> Iterator[None]:
    """Nested saved_tensors_hooks: the outermost pair packs, not the innermost."""
    graph = _graph()

    def init(original: Callable) -> Callable:
        def make(
            self: Any, tensor: Any = None, output_of: Any = None, pack: bool = True, output_nr: int = 0
        ) -> None:
            stack = graph.saved_hooks.stack
            graph.saved_hooks.stack = stack[:1]
            try:
                original(self, tensor, output_of, pack, output_nr)
            finally:
                graph.saved_hooks.stack = stack

        return make

    with patched(graph.SavedTensor, "__init__", init):
        yield


@fault({"SAVED-002": "names differs"})
def raw_saved_names_unlisted() -> Iterator[None]:
    """dir(grad_fn) lists the _saved_* names but none of the _raw_saved_* ones."""
    def listing(original: Callable) -> Callable:
        return lambda node: [n for n in original(node) if not n.startswith("_raw_saved_")]

    with patched(_table().OpNode, "__dir__", listing):
        yield


@fault({"SAVED-002": "values differs"})
def freed_saved_tensor_readable() -> Iterator[None]:
    """A saved tensor read after backward freed the graph gives None instead of torch's error."""
    def value(original: Callable) -> Callable:
        def read(node: Any, saved: str, source: str, raw: bool) -> Any:
            try:
                return original(node, saved, source, raw)
            except RuntimeError:
                return None

        return read

    with patched(_table(), "_saved_value", value):
        yield


def _keeping_outputs(original: Callable) -> Callable:
    """SavedTensor's ``__init__`` keeping a saved output itself, history and all (a cycle: the node
    holds its output, which holds the node), instead of torch's alias without history."""

    def init(
        self: Any, tensor: Any = None, output_of: Any = None, pack: bool = True, output_nr: int = 0
    ) -> None:
        original(self, tensor, output_of, pack, output_nr)
        if self.is_output and self.hooks is None:
            self.tensor = tensor

    return init


@fault({"SAVED-002": "own differs"})
def saved_output_unpacked_as_itself() -> Iterator[None]:
    """A saved output is kept and read as the output itself (torch unpacks it into a new tensor)."""
    def unpack(original: Callable) -> Callable:
        def read(self: Any, saved_for: Any = None, history: bool = True) -> Any:
            t = original(self, saved_for, history)
            return self.tensor if self.is_output and self.hooks is None else t

        return read

    SavedTensor = _graph().SavedTensor
    with patched(SavedTensor, "__init__", _keeping_outputs), patched(SavedTensor, "unpack", unpack):
        yield


@fault({"SAVED-002": "freed differs"})
def saved_output_kept_with_history() -> Iterator[None]:
    """A node keeps its saved output itself, not torch's alias without history: the graph is a
    reference cycle, freed by the cycle collector only."""
    with patched(_graph().SavedTensor, "__init__", _keeping_outputs):
        yield


@fault({"SAVED-002": "values differs"})
def spread_saves_numeric_correction() -> Iterator[None]:
    """var/std called without dim, unbiased or correction save correction 1, not torch's None."""
    from impl._ops import moments

    def correction(original: Callable) -> Callable:
        return lambda dim, unbiased, correction: moments._numeric(original(dim, unbiased, correction))

    with patched(moments, "_correction", correction):
        yield


@fault({"SAVED-002": "error"})
def inplace_bookkeeping_of_saved_tensors_lost() -> Iterator[None]:
    """In-place changes are lost on saved tensors: detach_() does not record when it took a
    tensor's history (a node that saved the tensor before computes its gradient from it instead of
    raising torch's error), and an op saving its output in place on a view does not keep the view's
    grad_fn (a later write is reported against the op's node, not the view's grad_fn torch names).
    Each half alone is caught too (by test_saved_lifetimes, "error" and "message")."""
    from impl._ops import inplace
    from impl._tensor import Tensor

    def detach_(original: Callable) -> Callable:
        def detach(self: Any) -> Any:
            original(self)
            vars(self).pop("_detached_at", None)
            return self

        return detach

    def save(original: Callable) -> Callable:
        def save_self_as_result(node: Any, self: Any) -> None:
            original(node, self)
            for value in node._saved.values():
                if isinstance(value, _graph().SavedTensor):
                    value.weak_fn = None

        return save_self_as_result

    with patched(Tensor, "detach_", detach_), patched(inplace, "_save_self_as_result", save):
        yield


@fault({"SAVED-002": "values differs"})
def reductions_save_normalised_values() -> Iterator[None]:
    """amax()/amin() over every dim save dim None, not the () torch's node keeps, and a vector norm
    saves its order as a float (2.0), not as given (torch's node keeps an int). Each half alone is
    caught too (by test_reduction_saved_values)."""
    from impl._ops import norms, reductions

    def all_dims(original: Callable) -> Callable:
        return lambda dim, ndim: original(dim, ndim) or None

    with patched(reductions, "_amax_dims", all_dims), \
            patched(norms, "_order", lambda original: lambda ord: float(original(ord))):
        yield
