"""torch's warn-always flag (``torch.set_warn_always``) and its TORCH_WARN_ONCE warnings.

A TORCH_WARN_ONCE warning is given once per process and call site, unless the flag is set: then
every time, without using up the once (c10's macro warns directly while the flag is on).
"""

from __future__ import annotations

import warnings
from typing import Any

from impl import _api as api

_state = {"always": False}
_warned: set[str] = set()


@api.function("set_warn_always")
def set_warn_always(b: Any, /) -> None:  # (Python-defined in torch: Python words its call errors)
    """When True, warnings torch gives once per process are given every time."""
    if type(b) is not bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _state["always"] = b


@api.function("is_warn_always_enabled")
def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in effect."""
    return _state["always"]


def warn_once(site: str, message: str, category: type[Warning] = UserWarning, stacklevel: int = 2) -> None:
    """Warn ``message`` as TORCH_WARN_ONCE at call site ``site`` does."""
    if not _state["always"]:
        if site in _warned:
            return
        _warned.add(site)
    warnings.warn(message, category, stacklevel=stacklevel + 1)
