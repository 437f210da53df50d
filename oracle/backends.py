"""Backends: the reference (real PyTorch) and the torch-like module under test.

A backend is a torch-shaped namespace (what ``import torch`` resolves to in a program or script),
the device programs run on, and an optional patch: planted-fault backends (see ``oracle.faults``)
are real torch with one behaviour broken while the patch is active.

A ``Backend`` turns programs into traces (and runs the few checks that need the module itself).
``InProcess`` is a backend loaded in this process (the reference always is, see
``oracle.reference``); ``oracle.runner.Isolated`` runs one in a worker process of its own.

Backend specs understood by ``load_backend``:
  ``torch``            the reference
  ``impl``             this project's engine (the default backend under test)
  ``fault:NAME``       torch with the planted fault NAME (``oracle.faults.FAULTS``)
  any module path      an importable torch-like module, e.g. ``mypkg`` or ``mypkg.torch_api``
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from oracle.interpreter import run
from oracle.program import Program
from oracle.trace import Trace

REFERENCE = "torch"
DEFAULT_BACKEND = "impl"


class Backend:
    """A backend programs run on (``name``, ``device``), wherever it is loaded."""

    name: str
    device: str

    def trace(self, program: Program, float64: bool = False, nudge: bool = False) -> Trace:
        """The trace of ``program`` (``float64``, ``nudge``: see ``oracle.interpreter``)."""
        raise NotImplementedError

    def start(self, program: Program, float64: bool = False, nudge: bool = False) -> Callable[[], Trace]:
        """Begin ``trace(program, ...)``; the returned function finishes it. A backend in another
        process runs the program meanwhile; by default it runs when the result is asked for."""
        return lambda: self.trace(program, float64, nudge)

    def call(self, function: str, *args: Any) -> Any:
        """The oracle function ``function`` (``"oracle.module:name"``) called with the loaded
        backend and ``args``: the checks that need the backend's module itself."""
        raise NotImplementedError

    def info(self) -> dict:
        """What was imported as the backend: module name, version and file, whether torch is loaded."""
        raise NotImplementedError

    @property
    def version(self) -> str:
        return str(self.info().get("version", "unknown"))

    def on(self, device: str) -> Backend:
        """The same backend on ``device`` (itself when it runs there): the version-only rule of
        ``oracle.differential`` reruns a program on cpu with it."""
        raise NotImplementedError(f"{type(self).__name__} cannot be moved to another device")

    def close(self) -> None:
        """Release what the runner holds (a worker process)."""

    def __str__(self) -> str:
        return self.name if self.device == "cpu" else f"{self.name}[{self.device}]"


@dataclass(frozen=True)
class InProcess(Backend):
    """A torch-like namespace loaded in this process."""

    name: str
    module: ModuleType
    device: str = "cpu"
    patch: Callable[[], AbstractContextManager] = field(default=nullcontext, compare=False)

    def active(self) -> AbstractContextManager:
        """Context in which programs run on this backend (applies a planted fault, if any)."""
        return self.patch()

    @property
    def is_reference(self) -> bool:
        return self.name == REFERENCE

    def trace(
        self, program: Program, float64: bool = False, nudge: bool = False, seen: dict | None = None
    ) -> Trace:
        """The trace of ``program``; ``seen`` (a dict) gets what each op and module call received
        (``oracle.interpreter``; for the argument coverage of the reference's runs)."""
        return run(program, self, float64=float64, nudge=nudge, seen=seen)

    def call(self, function: str, *args: Any) -> Any:
        module, _, name = function.partition(":")
        if not module.startswith("oracle.") or not name:
            raise ValueError(f"not an oracle function: {function!r}")
        return getattr(importlib.import_module(module), name)(self, *args)

    def on(self, device: str) -> InProcess:
        return self if device == self.device else replace(self, device=device)

    def info(self) -> dict:
        return {
            "name": self.module.__name__,
            "version": str(getattr(self.module, "__version__", "unknown")),
            "file": getattr(self.module, "__file__", None),
            "torch_loaded": "torch" in sys.modules,
        }

    __str__ = Backend.__str__


class BackendError(RuntimeError):
    """A backend spec that cannot be loaded."""


def load_backend(spec: str, device: str = "cpu") -> InProcess:
    """Load the backend a spec names (see module doc) in this process."""
    if spec.startswith("fault:"):
        from oracle.faults import FAULTS

        name = spec.split(":", 1)[1]
        if name not in FAULTS:
            raise BackendError(f"unknown planted fault {name!r}; known: {', '.join(sorted(FAULTS))}")
        return InProcess(spec, _import(REFERENCE), device, FAULTS[name])
    return InProcess(spec, _import(spec), device)


def reference_supports(device: str) -> bool:
    """Whether the reference torch can place a tensor on ``device`` (its CPU build: cpu only)."""
    if device == "cpu":
        return True
    torch = _import(REFERENCE)
    try:
        torch.empty(0, device=device)
    except Exception:  # noqa: BLE001 - torch's error for a device it lacks, whatever its type
        return False
    return True


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        hint = " (install the reference with: pip install -e '.[reference]')" if name == REFERENCE else ""
        raise BackendError(f"cannot import backend module {name!r}: {exc}{hint}") from exc
