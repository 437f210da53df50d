"""torch's determinism settings: ``use_deterministic_algorithms`` (and its debug-mode spelling,
``set_deterministic_debug_mode``) and ``torch.utils.deterministic.fill_uninitialized_memory``.
impl's algorithms are deterministic already; what the setting changes is uninitialised memory
(``empty``, ``empty_like``, ``new_empty``, the legacy constructors' sizes): torch fills it with NaN
(floating and complex dtypes) or the dtype's largest value (integers; True) while both are set,
and impl, which otherwise gives zeros, does the same (``uninitialised``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api


class _Settings:
    """The global flags torch keeps in its context (``at::globalContext()``)."""

    enabled = False
    warn_only = False
    fill_uninitialized_memory = True


settings = _Settings()


@api.function("use_deterministic_algorithms")
def use_deterministic_algorithms(mode: object, *, warn_only: object = False) -> None:
    """Set whether torch's algorithms must be deterministic (a Python function in torch: its
    arguments are checked by the C function it calls, which names itself)."""
    setter = "_set_deterministic_algorithms()"
    if not isinstance(mode, bool):
        raise TypeError(f"{setter}: argument 'mode' (position 1) must be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"{setter}: argument 'warn_only' must be bool, not {type(warn_only).__name__}")
    settings.enabled, settings.warn_only = mode, warn_only


@api.function("are_deterministic_algorithms_enabled")
def are_deterministic_algorithms_enabled() -> bool:
    return settings.enabled


@api.function("is_deterministic_algorithms_warn_only_enabled")
def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return settings.warn_only


@api.function("set_deterministic_debug_mode")
def set_deterministic_debug_mode(debug_mode: object) -> None:
    """0 ("default"): off; 1 ("warn"): on, warning only; 2 ("error"): on."""
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in ("default", "warn", "error"):
            expected = "expected one of `default`, `warn`, `error`"
            raise RuntimeError(f"invalid value of debug_mode, {expected}, but got {debug_mode}")
        debug_mode = ("default", "warn", "error").index(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


@api.function("get_deterministic_debug_mode")
def get_deterministic_debug_mode() -> int:
    return 0 if not settings.enabled else 1 if settings.warn_only else 2


def set_fill_uninitialized_memory(mode: Any) -> None:
    """``torch.utils.deterministic.fill_uninitialized_memory = mode``."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
    settings.fill_uninitialized_memory = mode


def uninitialised(dtype: np.dtype) -> Any:
    """What uninitialised memory of numpy ``dtype`` holds: 0 (impl's choice where torch leaves it
    as it was), or torch's deterministic fill while use_deterministic_algorithms is on."""
    if not (settings.enabled and settings.fill_uninitialized_memory):
        return 0
    if dtype == np.bool_:
        return True
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).max
    return float("nan")
