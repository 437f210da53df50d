"""The array namespace: numpy on CPU, cupy on 'cuda' when available. Ops are written once
against ``xp`` and pick it from their operands' arrays."""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from impl import _api as api

try:  # pragma: no cover - only on machines with a GPU
    import cupy as _cupy
except Exception:  # ImportError, or a CUDA runtime that fails to load
    _cupy = None


# the device types torch's device string parser names (c10/core/Device.cpp); impl runs on two
TORCH_DEVICE_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, "
    "meta, hpu, mtia, privateuseone"
)


@api.function("device")
class device:
    """torch.device for impl's two devices: ``device('cpu')``, ``device('cuda:0')``,
    ``device('cuda', 0)``, ``device(0)`` (the accelerator's device 0); parsed, refused, printed
    and compared as torch's (a device never equals a string)."""
    __module__ = __package__  # torch's class is torch.X, as type() and repr(cls) show

    def __init__(self, spec: str | int | device = "cpu", index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        elif isinstance(spec, int):
            if not cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            spec, index = "cuda", spec
        if not spec:
            raise RuntimeError("Device string must not be empty")
        parsed = re.fullmatch(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?", spec)  # torch's device regex
        if parsed is None:
            raise RuntimeError(f"Invalid device string: '{spec}'")
        spec = parsed.group(1)
        if parsed.group(2) is not None:
            index = int(parsed.group(2))
        if spec not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of {TORCH_DEVICE_TYPES} device type at start of device string: {spec}"
            )
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = spec
        self.index = index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __enter__(self) -> device:
        """``with torch.device(d):`` makes ``d`` the default device of the factory functions
        until the block ends (the innermost block wins over ``set_default_device``)."""
        _ENTERED.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self in _ENTERED:
            del _ENTERED[len(_ENTERED) - 1 - _ENTERED[::-1].index(self)]


_ENTERED: list[device] = []  # the devices of the ``with torch.device(...)`` blocks open, innermost last
_GLOBAL: list[device] = []  # set_default_device's device, if one is set


def default_device() -> device | None:
    """The device the factory functions take when given none (None: cpu, nothing set)."""
    if _ENTERED:
        return _ENTERED[-1]
    return _GLOBAL[0] if _GLOBAL else None


@api.function("set_default_device")
def set_default_device(dev: Any) -> None:
    """The device factory functions (zeros, tensor, arange, rand ... not the ``*_like`` ones, nor
    ``torch.Tensor(...)``) use when called without one; None for cpu again. Checked as
    ``torch.device(dev)`` checks it, not reached until a tensor is made there."""
    _GLOBAL[:] = [] if dev is None else [device(dev)]


def cuda_available() -> bool:
    if _cupy is None:
        return False
    try:
        return _cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def namespace_of(array: Any) -> Any:
    """numpy or cupy, whichever owns ``array``."""
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy
    return np


def namespace_for(dev: device) -> Any:
    """The namespace whose arrays live on ``dev``: numpy for 'cpu', cupy for 'cuda:0' (impl
    keeps its 'cuda' arrays on cupy's current device, the first); torch's refusals for a 'cuda'
    it cannot reach or a device index the machine lacks."""
    if dev.type == "cuda":
        if not cuda_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        if dev.index:
            if dev.index >= _cupy.cuda.runtime.getDeviceCount():
                raise RuntimeError("CUDA error: invalid device ordinal")
            raise NotImplementedError(f"impl runs on cuda:0 only, not on {dev}")
        return _cupy
    return np


def device_of(array: Any) -> device:
    return device("cuda", 0) if namespace_of(array) is not np else device("cpu")


def to_numpy(array: Any) -> np.ndarray:
    return array if isinstance(array, np.ndarray) else array.get()


def transferred(xp: Any, array: Any) -> Any:
    """``array`` on the device of namespace ``xp``, by an explicit transfer as cupy wants it: to the
    host by ``get()``, to the device by ``xp.asarray`` (no copy where it already is)."""
    return to_numpy(array) if xp is np else xp.asarray(array)


def _quiet_context() -> tuple[Any, Any]:
    """How ops silence numpy's floating-point warnings (torch computes inf/nan silently).

    ``np.errstate`` rebuilds its state object on every entry, which costs more than a small op;
    numpy 2 keeps that state in a context variable, so the ignoring state is built once and set
    directly. Other numpy versions fall back to ``np.errstate``."""
    try:
        from numpy._core import _ufunc_config as config

        var = config._extobj_contextvar
        with np.errstate(all="ignore"):
            ignoring = var.get()
        return functools.partial(var.set, ignoring), var.reset  # no Python frame per op
    except (ImportError, AttributeError):
        def enter() -> Any:
            state = np.errstate(all="ignore")
            state.__enter__()
            return state

        return enter, lambda state: state.__exit__(None, None, None)


quiet_enter, quiet_exit = _quiet_context()
