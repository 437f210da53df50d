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
        def read(self: Any) -> Any:
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
        def read(self: Any) -> Any:
            held, self.held = self.held, None
            try:
                return original(self)
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
        def make(self: Any, tensor: Any = None, output_of: Any = None, pack: bool = True) -> None:
            stack = graph.saved_hooks.stack
            graph.saved_hooks.stack = stack[:1]
            try:
                original(self, tensor, output_of, pack)
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


@fault({"SAVED-002": "own differs"})
def saved_output_unpacked_as_itself() -> Iterator[None]:
    """A saved output reads as the output itself (torch unpacks it into a new tensor)."""
    with patched(_table(), "_output_alias", lambda original: lambda t: t):
        yield


@fault({"SAVED-002": "values differs"})
def spread_saves_numeric_correction() -> Iterator[None]:
    """var/std called without dim, unbiased or correction save correction 1, not torch's None."""
    from impl._ops import moments

    def correction(original: Callable) -> Callable:
        return lambda dim, unbiased, correction: moments._numeric(original(dim, unbiased, correction))

    with patched(moments, "_correction", correction):
        yield
