"""Backends: the reference (real PyTorch) and the torch-like module under test.

A backend is a torch-shaped namespace (what ``import torch`` resolves to in a program or script),
the device programs run on, and an optional patch: planted-fault backends (see ``oracle.faults``)
are real torch with one behaviour broken while the patch is active.

Backend specs understood by ``load_backend``:
  ``torch``            the reference
  ``impl``             this project's engine (the default backend under test)
  ``fault:NAME``       torch with the planted fault NAME (``oracle.faults.FAULTS``)
  any module path      an importable torch-like module, e.g. ``mypkg`` or ``mypkg.torch_api``
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from types import ModuleType

REFERENCE = "torch"
DEFAULT_BACKEND = "impl"


@dataclass(frozen=True)
class Backend:
    """A torch-like namespace to run programs on."""

    name: str
    module: ModuleType
    device: str = "cpu"
    patch: Callable[[], AbstractContextManager] = field(default=nullcontext, compare=False)

    def active(self) -> AbstractContextManager:
        """Context in which programs run on this backend (applies a planted fault, if any)."""
        return self.patch()

    @property
    def version(self) -> str:
        return str(getattr(self.module, "__version__", "unknown"))

    @property
    def is_reference(self) -> bool:
        return self.name == REFERENCE

    def __str__(self) -> str:
        return self.name if self.device == "cpu" else f"{self.name}[{self.device}]"


class BackendError(RuntimeError):
    """A backend spec that cannot be loaded."""


def load_backend(spec: str, device: str = "cpu") -> Backend:
    """Resolve a backend spec (see module doc) to a Backend."""
    if spec.startswith("fault:"):
        from oracle.faults import FAULTS

        name = spec.split(":", 1)[1]
        if name not in FAULTS:
            raise BackendError(f"unknown planted fault {name!r}; known: {', '.join(sorted(FAULTS))}")
        return Backend(spec, _import(REFERENCE), device, FAULTS[name])
    return Backend(spec, _import(spec), device)


def reference(device: str = "cpu") -> Backend:
    return load_backend(REFERENCE, device)


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        hint = " (install the reference with: pip install -e '.[reference]')" if name == REFERENCE else ""
        raise BackendError(f"cannot import backend module {name!r}: {exc}{hint}") from exc
