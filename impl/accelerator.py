"""torch.accelerator: the current accelerator, which for impl is 'cuda' where cupy has a device,
else none (as a CPU build of torch has none): the calls that need one then raise torch's error."""

from __future__ import annotations

from typing import Any

from impl import _xp, cuda

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> _xp.device | None:
    """``device(type='cuda')`` (no index, as torch's) where there is one, else None."""
    if not _xp.cuda_available() or (check_available and not cuda.is_available()):
        return None
    return _xp.device("cuda")


def is_available() -> bool:
    return current_accelerator() is not None and cuda.is_available()


def device_count() -> int:
    return 0 if current_accelerator() is None else cuda.device_count()


def current_device_index() -> int:
    _require()
    return cuda.current_device()


def set_device_index(device: Any, /) -> None:
    """Select the accelerator's device: impl has only device 0."""
    _require()
    index = device.index if isinstance(device, _xp.device) else device
    if index not in (None, 0):
        raise RuntimeError(f"Invalid device index {index}: impl uses its accelerator's device 0 only.")


def synchronize(device: Any = None, /) -> None:
    _require()
    cuda.synchronize(device)


def _require() -> None:
    if current_accelerator() is None:
        raise RuntimeError(_NONE)
