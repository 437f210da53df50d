"""torch.cuda's subset impl has: cupy's device, when there is one."""

from __future__ import annotations

import types
import warnings
from typing import Any

from impl import _legacy, _xp, dtypes
from impl.amp import autocast_mode, grad_scaler


def is_available() -> bool:
    return _xp.cuda_available()


def device_count() -> int:
    return 1 if is_available() else 0


def current_device() -> int:
    """0: impl keeps its arrays on cupy's current device. Without one, torch's AssertionError."""
    _cupy()
    return 0


def synchronize(device: Any = None) -> None:
    """Wait until the device has run the work queued on it (cupy runs kernels asynchronously)."""
    _cupy().cuda.runtime.deviceSynchronize()


def manual_seed(seed: int) -> None:
    """Nothing to seed: impl draws a 'cuda' tensor's random numbers from its CPU stream
    (``impl.manual_seed`` seeds it) and moves them, where torch has a CUDA generator of its
    own (Philox) that impl does not reproduce. Without CUDA torch ignores the call too."""


manual_seed_all = manual_seed


def _cupy() -> Any:
    """cupy, or torch's AssertionError where there is no CUDA device."""
    return _xp.namespace_for(_xp.device("cuda"))


for _d, _type in _legacy.CUDA_LEGACY_TYPES.items():  # torch.cuda.FloatTensor ...
    globals()[_d._legacy] = _type


class _CudaGradScaler(grad_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(...)``, deprecated for ``torch.amp.GradScaler('cuda', ...)``."""

    __module__ = "torch.cuda.amp.grad_scaler"
    __qualname__ = __name__ = "GradScaler"

    def __init__(
        self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
        growth_interval: int = 2000, enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', "
            "args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


amp = types.SimpleNamespace(  # torch.cuda.amp
    autocast=autocast_mode.deprecated("cuda", dtypes.float16), GradScaler=_CudaGradScaler
)
