"""Planted faults: real PyTorch with exactly one behaviour broken.

They exist so that the oracle can test itself: each fault must be caught by the comparison of
traces (``tests/test_meta_faults.py``) and by ``python -m oracle diff-script``. A check that
cannot catch them is a defect of the oracle.

Each entry of ``FAULTS`` is a context-manager factory; while it is active, torch misbehaves.
Use them as backends with ``--backend fault:NAME``.

The faults planted in impl (``--plant NAME``, ``oracle.planted``) are test code, in the package
``tests/impl_faults``; a process that runs impl for a planted session (an isolated backend's
worker, a script's subprocess) plants the one named by the environment variable ``ORACLE_PLANT``
with ``plant_impl_fault_from_environment``.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

GRAD_ERROR = 1e-3
FREED_GRAPH_MESSAGE = "Trying to backward through the graph a second time"


@contextmanager
def _patched(owner: object, name: str, make: Callable[[object], object]) -> Iterator[None]:
    """Replace ``owner.name`` by ``make(original)`` for the duration of the block."""
    original = owner.__dict__[name] if name in vars(owner) else getattr(owner, name)
    setattr(owner, name, make(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def _tensor_base():
    import torch

    return torch.Tensor, torch._C.TensorBase


@contextmanager
def is_leaf_inverted() -> Iterator[None]:
    """``Tensor.is_leaf`` answers the opposite."""
    tensor, base = _tensor_base()
    with _patched(tensor, "is_leaf", lambda _orig: property(lambda t: not base.is_leaf.__get__(t))):
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

    with _patched(tensor, "grad", make):
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

    with _patched(tensor, "grad", make):
        yield


@contextmanager
def retain_graph_error_suppressed() -> Iterator[None]:
    """A second backward through a freed graph silently does nothing instead of raising."""
    import torch.autograd

    def swallow(orig):
        def wrapper(*args, **kwargs):
            try:
                return orig(*args, **kwargs)
            except RuntimeError as exc:
                if FREED_GRAPH_MESSAGE not in str(exc):
                    raise
                return None

        return wrapper

    with _patched(torch.autograd, "backward", swallow):
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

    with _patched(tensor, "register_hook", make):
        yield


FAULTS: dict[str, Callable] = {
    "hook_order_swapped": hook_order_swapped,
    "grad_off": grad_off,
    "retain_graph_error_suppressed": retain_graph_error_suppressed,
    "is_leaf_inverted": is_leaf_inverted,
    "warning_dropped": warning_dropped,
}


IMPL_FAULTS_MODULE = "tests.impl_faults"
PLANT_VARIABLE = "ORACLE_PLANT"  # the impl fault planted in a session, for its subprocesses
_planted_here: list[ExitStack] = []  # this process's impl fault, active until the process ends


def impl_faults() -> dict:
    """The planted impl faults by name (imported only when asked for: they are test code)."""
    return importlib.import_module(IMPL_FAULTS_MODULE).IMPL_FAULTS


def plant_impl_fault_from_environment(module: Any = None) -> str | None:
    """In a process of a planted session (``ORACLE_PLANT`` set) that runs impl (``module``, when
    given, is impl): plant that fault for the rest of the process and return its name."""
    name = os.environ.get(PLANT_VARIABLE)
    if not name or _planted_here or (module is not None and module.__name__ != "impl"):
        return None
    stack = ExitStack()
    stack.enter_context(impl_faults()[name]())
    _planted_here.append(stack)
    return name
