"""Planted faults: real PyTorch with exactly one behaviour broken.

They exist so that the oracle can test itself: each fault must be caught by the comparison of
traces (``tests/oracle/test_meta_faults.py``) and by ``python -m oracle diff-script``. A check that
cannot catch them is a defect of the oracle.

Each entry of ``FAULTS`` is a context-manager factory; while it is active, torch misbehaves, and
torch is itself again when it ends. Use them as backends with ``--backend fault:NAME``. Between
them they produce every class of divergence ``oracle.compare.CLASSES`` knows (``FAULT_CLASSES``);
``pow_segfault`` kills its process, so it runs only where the backend is isolated
(``oracle.runner.Isolated``, the plugin's default) or in a script's subprocess.

The faults planted in impl (``--plant NAME``, ``oracle.planted``) are test code, in a catalogue
package the session names (``--faults-module``, this repository's ``impl_faults``) and imports only
when a fault is planted: the oracle imports no impl code of its own. A process that runs impl for
a planted session (an isolated backend's worker, a script's subprocess) plants the fault named by
the environment variables ``ORACLE_PLANT`` and ``ORACLE_FAULTS_MODULE`` with
``plant_impl_fault_from_environment``.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any

GRAD_ERROR = 1e-3
VALUE_ERROR = 1e-3
REWORDED = "backward failed: "  # backward_error_reworded's prefix to torch's messages
FREED_GRAPH_MESSAGE = "Trying to backward through the graph a second time"


@contextmanager
def patched(owner: Any, name: str, make: Callable[[Any], Any]) -> Iterator[None]:
    """Replace ``owner.name`` (or ``owner[name]`` of a dict) by ``make(original)`` for the
    duration of the block; then ``owner`` is as it was (an attribute it inherited is inherited
    again). The planted faults of torch here and of impl (``impl_faults``) are made with it."""
    if isinstance(owner, dict):
        original = owner[name]
        owner[name] = make(original)
        try:
            yield
        finally:
            owner[name] = original
        return
    own = name in vars(owner)
    original = vars(owner)[name] if own else getattr(owner, name)
    setattr(owner, name, make(original))
    try:
        yield
    finally:
        if own:
            setattr(owner, name, original)
        else:
            delattr(owner, name)


@contextmanager
def _patched_op(name: str, make: Callable[[object], object]) -> Iterator[None]:
    """Replace the op ``name`` both as ``torch.name`` and as ``Tensor.name`` (each ``make(original)``)."""
    import torch

    with patched(torch, name, make), patched(torch.Tensor, name, make):
        yield


def _tensor_base():
    import torch

    return torch.Tensor, torch._C.TensorBase


@contextmanager
def is_leaf_inverted() -> Iterator[None]:
    """``Tensor.is_leaf`` answers the opposite."""
    tensor, base = _tensor_base()
    with patched(tensor, "is_leaf", lambda _orig: property(lambda t: not base.is_leaf.__get__(t))):
        yield


@contextmanager
def grad_off() -> Iterator[None]:
    """Every ``.grad`` read is off by a relative 1e-3."""
    tensor, base = _tensor_base()

    def read(t):
        g = base.grad.__get__(t)
        return None if g is None or not g.is_floating_point() else g * (1 + GRAD_ERROR)

    def make(_orig):
        return property(read, lambda t, v: base.grad.__set__(t, v), lambda t: base.grad.__delete__(t))

    with patched(tensor, "grad", make):
        yield


@contextmanager
def warning_dropped() -> Iterator[None]:
    """Reading ``.grad`` of a non-leaf no longer warns."""
    tensor, base = _tensor_base()

    def read(t):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return base.grad.__get__(t)

    def make(_orig):
        return property(read, lambda t, v: base.grad.__set__(t, v), lambda t: base.grad.__delete__(t))

    with patched(tensor, "grad", make):
        yield


@contextmanager
def _on_backward_error(handle: Callable[[RuntimeError], object]) -> Iterator[None]:
    """``torch.autograd.backward`` (which ``Tensor.backward`` calls) with its RuntimeErrors handed to
    ``handle``: what it returns, backward returns; what it raises, backward raises."""
    import torch.autograd

    def wrap(orig):
        def backward(*args, **kwargs):
            try:
                return orig(*args, **kwargs)
            except RuntimeError as exc:
                return handle(exc)

        return backward

    with patched(torch.autograd, "backward", wrap):
        yield


@contextmanager
def retain_graph_error_suppressed() -> Iterator[None]:
    """A second backward through a freed graph silently does nothing instead of raising."""

    def swallow(exc: RuntimeError) -> None:
        if FREED_GRAPH_MESSAGE not in str(exc):
            raise exc

    with _on_backward_error(swallow):
        yield


@contextmanager
def hook_order_swapped() -> Iterator[None]:
    """Tensor hooks run in reverse registration order (torch runs them in order)."""
    tensor, _ = _tensor_base()

    class _Handle:
        def __init__(self, chain: list, hook: Callable) -> None:
            self.chain, self.hook = chain, hook

        def remove(self) -> None:
            if self.hook in self.chain:
                self.chain.remove(self.hook)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.remove()

    def make(orig):
        def register_hook(t, hook):
            chain = getattr(t, "_swapped_hook_chain", None)
            if chain is None:
                chain = t._swapped_hook_chain = []

                def run_reversed(grad):
                    for h in reversed(list(chain)):
                        out = h(grad)
                        grad = grad if out is None else out
                    return grad

                orig(t, run_reversed)
            chain.append(hook)
            return _Handle(chain, hook)

        return register_hook

    with patched(tensor, "register_hook", make):
        yield


@contextmanager
def mean_off() -> Iterator[None]:
    """``torch.mean`` and ``Tensor.mean`` give results off by a relative 1e-3; their gradients are
    right (the forward kernel is wrong, the backward formula is not)."""

    def off(orig):
        def mean(*args, **kwargs):
            result = orig(*args, **kwargs)
            if result.is_floating_point():
                result.data.mul_(1 + VALUE_ERROR)  # .data: no version bump, the graph untouched
            return result

        return mean

    with _patched_op("mean", off):
        yield


@contextmanager
def sum_float64() -> Iterator[None]:
    """``torch.sum`` and ``Tensor.sum`` of float32 tensors return float64 (the accumulator's dtype
    leaks out; torch sums float32 into float32)."""
    import torch

    def widened(orig):
        def total(t, *args, **kwargs):
            if getattr(t, "dtype", None) == torch.float32 and "dtype" not in kwargs:
                kwargs["dtype"] = torch.float64
            return orig(t, *args, **kwargs)

        return total

    with _patched_op("sum", widened):
        yield


@contextmanager
def neg_as_mul() -> Iterator[None]:
    """``torch.neg`` and ``Tensor.neg`` compute ``x * -1``: the same values, but the result's
    ``grad_fn`` is ``MulBackward0`` where torch has ``NegBackward0``."""
    import torch

    with _patched_op("neg", lambda _orig: lambda t: torch.mul(t, -1)):
        yield


@contextmanager
def backward_error_reworded() -> Iterator[None]:
    """Errors of ``backward`` keep their type but say it in the backend's own words (a prefix)."""

    def reword(exc: RuntimeError) -> None:
        if type(exc) is not RuntimeError:
            raise exc
        raise RuntimeError(f"{REWORDED}{exc}") from None

    with _on_backward_error(reword):
        yield


@contextmanager
def everything_contiguous() -> Iterator[None]:
    """``Tensor.is_contiguous()`` answers True for every tensor, transposed views included (a
    backend that does not track strides)."""
    tensor, _ = _tensor_base()
    with patched(tensor, "is_contiguous", lambda _orig: lambda t, *args, **kwargs: True):
        yield


@contextmanager
def parameters_sorted() -> Iterator[None]:
    """``Module.named_parameters`` (and so ``parameters()``) lists parameters sorted by name
    instead of in registration order: ``bias`` before ``weight``."""
    import torch.nn

    def ordered(orig):
        def named_parameters(module, *args, **kwargs):
            return iter(sorted(orig(module, *args, **kwargs), key=lambda item: item[0]))

        return named_parameters

    with patched(torch.nn.Module, "named_parameters", ordered):
        yield


@contextmanager
def sigmoid_missing() -> Iterator[None]:
    """``torch.sigmoid`` does not exist (``Tensor.sigmoid`` still does): the backend lacks a name
    of torch's API, so programs calling it are unsupported, not failed."""
    import torch

    original = vars(torch)["sigmoid"]
    del torch.sigmoid
    try:
        yield
    finally:
        torch.sigmoid = original


@contextmanager
def pow_segfault() -> Iterator[None]:
    """``torch.pow`` kills the process with a segmentation fault, as a native kernel reading through
    a null pointer does. Never activate it in a process that must survive."""
    import torch

    def crash(_orig):
        def pow(*args, **kwargs):
            ctypes.string_at(0)  # reads address 0: SIGSEGV

        return pow

    with patched(torch, "pow", crash):
        yield


FAULTS: dict[str, Callable] = {
    "hook_order_swapped": hook_order_swapped,
    "grad_off": grad_off,
    "retain_graph_error_suppressed": retain_graph_error_suppressed,
    "is_leaf_inverted": is_leaf_inverted,
    "warning_dropped": warning_dropped,
    "mean_off": mean_off,
    "sum_float64": sum_float64,
    "neg_as_mul": neg_as_mul,
    "backward_error_reworded": backward_error_reworded,
    "everything_contiguous": everything_contiguous,
    "parameters_sorted": parameters_sorted,
    "sigmoid_missing": sigmoid_missing,
    "pow_segfault": pow_segfault,
}
# the class of divergence (oracle.compare.CLASSES) each fault shows first
FAULT_CLASSES: dict[str, str] = {
    "hook_order_swapped": "hook",
    "grad_off": "gradient",
    "retain_graph_error_suppressed": "error",
    "is_leaf_inverted": "flag",
    "warning_dropped": "warning",
    "mean_off": "value",
    "sum_float64": "dtype",
    "neg_as_mul": "graph",
    "backward_error_reworded": "message",
    "everything_contiguous": "layout",
    "parameters_sorted": "module",
    "sigmoid_missing": "unsupported",
    "pow_segfault": "crash",
}
# faults that must not be activated in a process that has to go on (they kill it)
CRASHING = frozenset({"pow_segfault"})


PLANT_VARIABLE = "ORACLE_PLANT"  # the impl fault planted in a session, for its subprocesses
FAULTS_MODULE_VARIABLE = "ORACLE_FAULTS_MODULE"  # the catalogue it comes from
CATALOGUE_NAME = "IMPL_FAULTS"  # what a catalogue holds: fault name -> context-manager factory
_planted_here: list[ExitStack] = []  # this process's impl fault, active until the process ends


class FaultCatalogueError(ImportError):
    """The catalogue of planted impl faults cannot be imported, or holds no ``IMPL_FAULTS``."""


def impl_faults(module: str) -> dict[str, Callable[[], AbstractContextManager[None]]]:
    """The planted impl faults by name, from the catalogue package ``module`` (its ``IMPL_FAULTS``;
    imported only when asked for: they are test code)."""
    try:
        catalogue = importlib.import_module(module)
    except ImportError as exc:
        raise FaultCatalogueError(f"cannot import the planted-fault catalogue {module!r}: {exc}") from exc
    faults = getattr(catalogue, CATALOGUE_NAME, None)
    if not isinstance(faults, dict):
        raise FaultCatalogueError(f"the planted-fault catalogue {module!r} ({catalogue.__file__}) has no "
                                  f"{CATALOGUE_NAME} dict (fault name -> context-manager factory)")
    return faults


def plant_impl_fault_from_environment(module: Any = None) -> str | None:
    """In a process of a planted session (``ORACLE_PLANT`` set) that runs impl (``module``, when
    given, is impl): plant that fault, from the catalogue ``ORACLE_FAULTS_MODULE`` names, for the
    rest of the process and return its name."""
    name = os.environ.get(PLANT_VARIABLE)
    if not name or _planted_here or (module is not None and module.__name__ != "impl"):
        return None
    catalogue = os.environ.get(FAULTS_MODULE_VARIABLE)
    if not catalogue:
        raise FaultCatalogueError(f"{PLANT_VARIABLE}={name} is set but not {FAULTS_MODULE_VARIABLE}, "
                                  "the planted-fault catalogue it comes from")
    stack = ExitStack()
    stack.enter_context(impl_faults(catalogue)[name]())
    _planted_here.append(stack)
    return name
