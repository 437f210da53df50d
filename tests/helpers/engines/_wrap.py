"""Forwarding a fake engine's missing names to impl, minus the ones it lacks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import impl


def forward(module: str, lacks: Iterable[str] = ()) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module``: impl's name, or AttributeError for the ``lacks``."""
    lacked = frozenset(lacks)

    def __getattr__(name: str) -> Any:
        if name in lacked or name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(impl, name)

    return __getattr__
