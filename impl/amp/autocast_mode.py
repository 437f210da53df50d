"""torch.autocast (torch.amp.autocast): a context manager and decorator that turns autocast on
(or off) for a device type with a dtype, restoring the previous state on leaving, with torch's
checks and warnings (no CUDA here: a CUDA block is disabled; CPU takes bfloat16 and float16)."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from impl import _api, _autocast, dtypes

_SUPPORTED = (dtypes.bfloat16, dtypes.float16)


def is_autocast_available(device_type: str) -> bool:
    return _autocast.is_available(device_type)


class autocast:
    """``with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``."""

    __module__ = "torch.amp.autocast_mode"

    def __init__(
        self, device_type: str, dtype: Any = None, enabled: bool = True, cache_enabled: bool | None = None
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = _autocast.get_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not _autocast.is_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        cached = _autocast.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        self._cache_enabled = cached
        if enabled and device_type == "cuda":  # a CPU build: CUDA is never available
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        elif enabled and self.fast_dtype not in _SUPPORTED:
            name = device_type.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = _autocast.is_autocast_cache_enabled()
        self.prev = _autocast.is_enabled(self.device)
        self.prev_fastdtype = _autocast.get_dtype(self.device)
        _autocast.set_enabled(self.device, self._enabled)
        _autocast.set_dtype(self.device, self.fast_dtype)
        _autocast.nest(1)
        _autocast.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc: Any) -> bool:
        return leave(self)

    def __call__(self, func: Any) -> Any:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def deprecated(device_type: str, default_dtype: Any) -> type:
    """``torch.<device_type>.amp.autocast(enabled=True, dtype=default_dtype, cache_enabled=True)``:
    autocast for ``device_type`` with torch's FutureWarning."""

    class deprecated_autocast(autocast):
        __module__ = f"torch.{device_type}.amp.autocast_mode"

        def __init__(
            self, enabled: bool = True, dtype: Any = default_dtype, cache_enabled: bool = True
        ) -> None:
            warnings.warn(
                f"`torch.{device_type}.amp.autocast(args...)` is deprecated. Please use "
                f"`torch.amp.autocast('{device_type}', args...)` instead.",
                FutureWarning,
                stacklevel=2,
            )
            super().__init__(device_type, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    deprecated_autocast.__name__ = deprecated_autocast.__qualname__ = "autocast"
    return deprecated_autocast


def leave(context: autocast) -> bool:
    """Leave an autocast block: the state before it restored (the weight cache dropped with the last)."""
    _autocast.nest(-1)
    _autocast.set_enabled(context.device, context.prev)
    _autocast.set_dtype(context.device, context.prev_fastdtype)
    _autocast.set_autocast_cache_enabled(context.prev_cache_enabled)
    return False


_api.public(autocast, "autocast")
