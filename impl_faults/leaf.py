"""Planted faults that break leaf flags, grad_fn recording and which tensors keep .grad (rules LEAF-*)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from typing import Any

from impl_faults import fault, patched


def _recording(wrap: Callable[[Callable], Callable]) -> AbstractContextManager[None]:
    """Every op's node recording (``OpDef._record``) replaced by ``wrap(record)``, where ``record``
    is the op's generated recording function, compiled here (and cached for the fault only), so
    that no op keeps a faulty recorder once the fault ends."""
    from impl._ops import codegen, table

    recorders: dict[table.OpDef, Callable] = {}

    def make(_original: Callable) -> Callable:
        def record(op: table.OpDef, tensors: tuple, attrs: dict, results: tuple) -> None:
            if op not in recorders:
                recorders[op] = wrap(codegen.compile_recorder(op, table._RECORD_HELPERS))
            recorders[op](tensors, attrs, results)

        return record

    return patched(table.OpDef, "_record", make)


def is_leaf_defined_as(is_leaf: Callable[[Any], bool]) -> AbstractContextManager[None]:
    """``Tensor.is_leaf`` answered by ``is_leaf(tensor)``."""
    from impl._tensor import Tensor

    return patched(Tensor, "is_leaf", lambda _orig: property(is_leaf))


@fault({"LEAF-001": "is_leaf"})
def is_leaf_means_no_grad() -> Iterator[None]:
    """is_leaf reports whether a tensor does not require grad instead of whether it has no grad_fn."""
    with is_leaf_defined_as(lambda t: not t.requires_grad):
        yield


@fault({"LEAF-002": "graph differs"})
def only_first_input_recorded() -> Iterator[None]:
    """An op records its node only when its first input requires grad (the others' flags are ignored)."""

    def wrap(record: Callable) -> Callable:
        def record_if_first(tensors: tuple, attrs: dict, results: tuple) -> None:
            if getattr(tensors[0], "requires_grad", True):
                record(tensors, attrs, results)

        return record_if_first

    with _recording(wrap):
        yield


@fault({"LEAF-003": ".grad"})
def op_results_retain_grad() -> Iterator[None]:
    """Every op result keeps its .grad after backward, as if retain_grad() had been called on it."""

    def wrap(record: Callable) -> Callable:
        def record_and_retain(tensors: tuple, attrs: dict, results: tuple) -> None:
            record(tensors, attrs, results)
            for result in results:
                result.retain_grad()

        return record_and_retain

    with _recording(wrap):
        yield


def _grad_warning(warns: Callable[[Any], bool]) -> AbstractContextManager[None]:
    """``Tensor.grad`` read warns (torch's non-leaf warning) exactly when ``warns(tensor)``."""
    from impl._tensor import NON_LEAF_GRAD_WARNING, Tensor

    def make(original: property) -> property:
        def grad(self: Tensor) -> Tensor | None:
            if warns(self):
                warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
            return self._grad

        return property(grad, original.fset)

    return patched(Tensor, "grad", make)


@fault({"LEAF-003": "warning", "ERR-004": "warning",
        "SEED-002-1": "warnings line", "SEED-002-2": "warnings line", "SEED-004-1": "warnings line"})
def non_leaf_grad_read_silent() -> Iterator[None]:
    """Reading .grad of a non-leaf that does not retain its grad gives None without torch's warning."""
    with _grad_warning(lambda _t: False):
        yield


@fault({"LEAF-004": "warning", "ERR-004": "warning"})
def retained_grad_read_warns() -> Iterator[None]:
    """Reading .grad of a non-leaf warns even after retain_grad() (the warning is not silenced)."""
    with _grad_warning(lambda t: t._grad_fn is not None):
        yield


@fault({"LEAF-004": "expected error"})
def retain_grad_without_grad_accepted() -> Iterator[None]:
    """retain_grad() on a tensor that does not require grad is silently accepted."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def retain_grad(self: Tensor) -> None:
            if self.requires_grad:
                original(self)

        return retain_grad

    with patched(Tensor, "retain_grad", make):
        yield


@fault({"LEAF-005": "value"})
def detach_copies() -> Iterator[None]:
    """detach() returns a copy of the values instead of sharing them with the original."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def detach(self: Tensor) -> Tensor:
            t = original(self)
            t._data = t._data.copy()
            return t

        return detach

    with patched(Tensor, "detach", make):
        yield


@fault({"LEAF-006": "expected error", "ERR-002": "expected error"})
def non_leaf_requires_grad_off_accepted() -> Iterator[None]:
    """requires_grad_(False) on a non-leaf is silently accepted instead of raising."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
            if self._grad_fn is not None:
                return self
            return original(self, requires_grad)

        return requires_grad_

    with patched(Tensor, "requires_grad_", make):
        yield


@fault({"LEAF-006": ".grad"})
def grad_accumulated_after_requires_grad_off() -> Iterator[None]:
    """A leaf whose requires_grad was switched off after the graph was built still gets its .grad."""
    from impl.autograd.engine import AccumulateGrad

    def make(original: Callable) -> Callable:
        def accumulate(self: AccumulateGrad, grads: tuple) -> tuple:
            var = self.variable
            flag = var._requires_grad
            var._requires_grad = True
            try:
                return original(self, grads)
            finally:
                var._requires_grad = flag

        return accumulate

    with patched(AccumulateGrad, "apply", make):
        yield




@fault({"LEAF-002": "graph differs"})
def grad_fn_names_without_number() -> Iterator[None]:
    """Ops' backward nodes are named without torch's trailing number (MulBackward, not MulBackward0)."""
    renamed: dict[type, type] = {}

    def unnumbered(cls: type) -> type:
        if cls not in renamed:
            renamed[cls] = type(cls.__name__.rstrip("0123456789"), (cls,), {"__slots__": ()})
        return renamed[cls]

    def wrap(record: Callable) -> Callable:
        def record_renamed(tensors: tuple, attrs: dict, results: tuple) -> None:
            record(tensors, attrs, results)
            node = results[0]._grad_fn
            node.__class__ = unnumbered(type(node))

        return record_renamed

    with _recording(wrap):
        yield


@fault({"LEAF-001": "is_leaf"})
def is_leaf_means_in_graph() -> Iterator[None]:
    """is_leaf reports whether a tensor has no grad_fn and requires grad (a tensor that does not
    require grad is called a non-leaf)."""
    with is_leaf_defined_as(lambda t: t.grad_fn is None and t.requires_grad):
        yield


@fault({"LEAF-001": "grad_fn"})
def leaf_grad_fn_is_its_accumulator() -> Iterator[None]:
    """grad_fn of a leaf that requires grad is its AccumulateGrad node instead of None."""
    from impl._tensor import Tensor

    def make(original: property) -> property:
        def grad_fn(self: Tensor) -> Any:
            fn = original.fget(self)
            return self._grad_accumulator() if fn is None and self._requires_grad else fn

        return property(grad_fn)

    with patched(Tensor, "grad_fn", make), is_leaf_defined_as(lambda t: t._grad_fn is None):
        yield


@fault({"LEAF-002": "requires_grad"})
def op_results_require_grad_in_grad_mode() -> Iterator[None]:
    """A floating op result none of whose inputs requires grad is a leaf that requires grad (its
    flag follows grad mode, not its inputs): every op of impl's modules patched."""
    import sys
    from contextlib import ExitStack

    from impl import _grad_mode as grad_mode
    from impl._ops import codegen, table

    def flagged(call: Callable) -> Callable:
        def call_and_flag(tensors: tuple, attrs: dict) -> Any:
            result = call(tensors, attrs)
            for t in result if isinstance(result, tuple) else (result,):
                if (
                    getattr(t, "_grad_fn", 0) is None
                    and t.dtype.is_floating_point
                    and grad_mode.is_grad_enabled()
                    and t._base is None
                ):
                    t._requires_grad = True
            return result

        return call_and_flag

    ops = {id(v): v for m in list(sys.modules.values()) if m and m.__name__.startswith("impl.")
           for v in vars(m).values() if isinstance(v, table.OpDef)}
    with ExitStack() as stack:
        for op in ops.values():
            call = vars(op).get("_call") or codegen.compile_call(op, table._CALL_HELPERS)
            stack.enter_context(patched(op, "_call", lambda _orig, call=call: flagged(call)))
        yield


@fault({"LEAF-004": ".grad: value"})
def retain_grad_on_leaf_retains_again() -> Iterator[None]:
    """retain_grad() on a leaf registers a retaining hook on its AccumulateGrad too, so its
    .grad receives each gradient twice."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def retain_grad(self: Tensor) -> None:
            original(self)
            if self._grad_fn is None and self.requires_grad:

                def retain(grad: Any, t: Tensor = self) -> None:
                    t._grad = grad.detach().clone() if t._grad is None else t._grad + grad

                self._grad_accumulator()._own("_retains_grad_hooks")[0] = retain

        return retain_grad

    with patched(Tensor, "retain_grad", make):
        yield


@fault({"LEAF-005": "got error"})
def detach_keeps_requires_grad() -> Iterator[None]:
    """detach() returns a leaf that requires grad when the original does (the flag is copied)."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def detach(self: Tensor) -> Tensor:
            t = original(self)
            t._requires_grad = self.requires_grad and self.dtype.is_floating_point
            return t

        return detach

    with patched(Tensor, "detach", make):
        yield


@fault({"LEAF-006": "requires_grad"})
def requires_grad_off_ignored_on_leaves() -> Iterator[None]:
    """requires_grad_(False) on a leaf leaves it requiring grad."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
            if not requires_grad and self._grad_fn is None:
                return self
            return original(self, requires_grad)

        return requires_grad_

    with patched(Tensor, "requires_grad_", make):
        yield


@fault({"LEAF-006": "got error"})
def requires_grad_on_non_leaf_refused() -> Iterator[None]:
    """requires_grad_() raises on a non-leaf whatever the flag, also for requires_grad_(True)."""
    from impl._tensor import Tensor, _leaf_flags_error

    def make(original: Callable) -> Callable:
        def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
            if self._grad_fn is not None:
                raise RuntimeError(_leaf_flags_error(requires_grad))
            return original(self, requires_grad)

        return requires_grad_

    with patched(Tensor, "requires_grad_", make):
        yield


def _inplace_copy_on_write(when: Callable[[Any], bool]) -> AbstractContextManager[None]:
    """An in-place op on a tensor ``t`` with ``when(t)`` first gives ``t`` its own copy of its
    memory (copy-on-write), so the tensors sharing that memory do not see the write."""
    from impl._ops import inplace

    def make(original: Callable) -> Callable:
        def apply_inplace(op: Any, self: Any, *others: Any, **attrs: Any) -> Any:
            if when(self):
                self._data = self._data.copy()
            return original(op, self, *others, **attrs)

        return apply_inplace

    return patched(inplace, "apply_inplace", make)


@fault({"LEAF-005": "value"})
def inplace_without_grad_copies_on_write() -> Iterator[None]:
    """An in-place op on a tensor that does not require grad writes into a fresh copy of its memory,
    so editing a detached tensor does not change the tensor it was detached from."""
    with _inplace_copy_on_write(lambda t: not t.requires_grad):
        yield


@fault({"LEAF-005": "value"})
def inplace_with_grad_copies_on_write() -> Iterator[None]:
    """An in-place op on a tensor that requires grad writes into a fresh copy of its memory, so a
    tensor detached from it earlier does not see the edit."""
    with _inplace_copy_on_write(lambda t: t.requires_grad):
        yield


@fault({"LEAF-007": ".grad: value"})
def del_grad_keeps_grad() -> Iterator[None]:
    """``del t.grad`` does nothing: the next backward accumulates onto the old gradient."""
    from impl._tensor import Tensor

    def make(original: property) -> property:
        return property(original.fget, original.fset, lambda self: None)

    with patched(Tensor, "grad", make):
        yield


@fault({"LEAF-007": "type differs"})
def history_and_hooks_deletable() -> Iterator[None]:
    """``del`` of _grad_fn, _backward_hooks or _post_accumulate_grad_hooks is not refused."""
    from impl import _tensor

    with patched(_tensor, "_UNDELETABLE", lambda _original: {}):
        yield


@fault({"LEAF-007": "expected error"})
def read_only_attributes_deletable() -> Iterator[None]:
    """``del`` of a read-only attribute (grad_fn, is_leaf, _base, data, requires_grad) does nothing."""
    from impl._tensor import Tensor, _read_only

    def make(original: property) -> property:
        return property(original.fget, original.fset, lambda self: None)

    with ExitStack() as stack:
        stack.enter_context(patched(_read_only, "__delete__", lambda _original: lambda self, obj: None))
        for name in ("data", "requires_grad"):
            stack.enter_context(patched(Tensor, name, make))
        yield
