"""torch.cpu.amp: ``autocast``, deprecated for ``torch.amp.autocast('cpu', ...)``."""

from __future__ import annotations

import warnings
from typing import Any

from impl import dtypes
from impl.amp import autocast_mode


class autocast(autocast_mode.autocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)``."""

    __module__ = "torch.cpu.amp.autocast_mode"

    def __init__(
        self, enabled: bool = True, dtype: Any = dtypes.bfloat16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


__all__ = ["autocast"]
