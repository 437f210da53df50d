"""Autocast's state (per device type: on or off, its dtype; the nesting and the weight cache) and
its casting policies, as torch's autocast_mode.cpp applies them to the ops of its lists: an op
``lower`` casts its floating arguments (float64 excepted) to the autocast dtype, ``fp32`` to
float32, each a ToCopyBackward0 node; inside such an op autocast is off (torch's dispatch key
excluded), so the ops it calls run as they are."""

from __future__ import annotations

import functools
import warnings
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from impl import _api as api
from impl import dtypes
from impl._tensor import Tensor

T = TypeVar("T")

# torch's device types (c10 Device.cpp) and those autocast is available on, with their default dtypes
DEVICE_TYPES = (
    "cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu mtia "
    "privateuseone"
).split()
DEFAULT_DTYPES = {
    "cpu": dtypes.bfloat16, "cuda": dtypes.float16, "ipu": dtypes.float16, "xpu": dtypes.float16,
    "maia": dtypes.bfloat16, "xla": dtypes.bfloat16, "mps": dtypes.float16, "hpu": dtypes.bfloat16,
    "mtia": dtypes.float16, "privateuseone": dtypes.float16,
}  # fmt: skip

_enabled: dict[str, bool] = dict.fromkeys(DEFAULT_DTYPES, False)
_dtype: dict[str, Any] = dict(DEFAULT_DTYPES)
_state = {"nesting": 0, "cache_enabled": True, "inside_op": False}
_cache: dict[int, tuple[Any, Tensor]] = {}  # id of a leaf weight -> (a weak reference to it, its cast)


def device_type(name: Any) -> str:
    """``name``'s device type where autocast knows it, else torch's errors."""
    kind = str(name).split(":")[0]
    if kind not in DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: {name}"
        )
    return kind


def is_available(name: str) -> bool:
    return device_type(name) in DEFAULT_DTYPES


def is_enabled(name: str = "cuda") -> bool:
    kind = device_type(name)
    if kind not in _enabled:
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    return _enabled[kind]


def get_dtype(name: str) -> Any:
    kind = device_type(name)
    if kind not in _dtype:
        raise RuntimeError("unsupported scalarType")
    return _dtype[kind]


def set_enabled(name: str, on: bool) -> None:
    _enabled[device_type(name)] = on


def set_dtype(name: str, dtype: Any) -> None:
    _dtype[device_type(name)] = dtype


def nest(step: int) -> int:
    """Enter (1) or leave (-1) an autocast block; the weight cache is cleared on leaving the last."""
    _state["nesting"] += step
    if _state["nesting"] == 0:
        _cache.clear()
    return _state["nesting"]


def _cast(t: Any, target: Any, lower: bool) -> Any:
    """``t`` cast to ``target`` where autocast casts it: a floating CPU tensor, not float64, of
    another dtype; a float32 leaf weight requiring grad cast to the lower dtype once per block."""
    if not isinstance(t, Tensor) or t.device.type != "cpu" or t.dtype is target:
        return t
    if not t.dtype.is_floating_point or t.dtype is dtypes.float64:
        return t
    cached = (
        lower and _state["cache_enabled"] and t.dtype is dtypes.float32 and t.requires_grad and t.is_leaf
        and t._base_ is None
    )
    if not cached:
        return t.to(target)
    ref, cast = _cache.get(id(t), (None, None))
    if ref is None or ref() is not t:
        cast = t.to(target)
        _cache[id(t)] = (weakref.ref(t), cast)
    return cast


def policy(kind: str) -> Callable[[T], T]:
    """Decorator: the op casts its tensor arguments (lists of them too) by ``kind`` ('lower' or
    'fp32') while CPU autocast is on, and runs with autocast off inside."""

    def wrap(fn: Any) -> Any:
        @functools.wraps(fn)
        def autocast_op(*args: Any, **kwargs: Any) -> Any:
            if not _enabled["cpu"] or _state["inside_op"]:
                return fn(*args, **kwargs)
            target = _dtype["cpu"] if kind == "lower" else dtypes.float32
            lower = kind == "lower"

            def cast(v: Any) -> Any:
                if isinstance(v, (list, tuple)) and v and all(isinstance(x, Tensor) for x in v):
                    return type(v)(_cast(x, target, lower) for x in v)
                return _cast(v, target, lower)

            args = tuple(cast(a) for a in args)
            kwargs = {k: cast(v) for k, v in kwargs.items()}
            _state["inside_op"] = True
            try:
                return fn(*args, **kwargs)
            finally:
                _state["inside_op"] = False

        return autocast_op

    return wrap


# -- torch's functions over the state --------------------------------------------------------------
api.function("is_autocast_enabled")(is_enabled)
api.function("get_autocast_dtype")(get_dtype)
api.function("autocast_increment_nesting")(lambda: nest(1))
api.function("autocast_decrement_nesting")(lambda: nest(-1))
api.function("clear_autocast_cache")(_cache.clear)


@api.function("set_autocast_enabled")
def set_autocast_enabled(*args: Any) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or ``set_autocast_enabled(enabled)`` for CUDA."""
    name, on = args if len(args) == 2 else ("cuda", *args)
    set_enabled(name, on)


@api.function("set_autocast_dtype")
def set_autocast_dtype(name: str, dtype: Any) -> None:
    set_dtype(name, dtype)


@api.function("is_autocast_cache_enabled")
def is_autocast_cache_enabled() -> bool:
    return _state["cache_enabled"]


@api.function("set_autocast_cache_enabled")
def set_autocast_cache_enabled(on: bool) -> None:
    _state["cache_enabled"] = on


def _deprecated(old: str, new: str, line: int) -> None:
    warnings.warn(
        f"torch.{old}() is deprecated. Please use torch.{new} instead. (Triggered internally at "
        f"/__w/pytorch/pytorch/torch/csrc/autograd/init.cpp:{line}.)",
        DeprecationWarning,
        stacklevel=3,
    )


@api.function("is_autocast_cpu_enabled")
def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')", 883)
    return _enabled["cpu"]


@api.function("get_autocast_cpu_dtype")
def get_autocast_cpu_dtype() -> Any:
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')", 1016)
    return _dtype["cpu"]


@api.function("get_autocast_gpu_dtype")
def get_autocast_gpu_dtype() -> Any:
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')", 1007)
    return _dtype["cuda"]
