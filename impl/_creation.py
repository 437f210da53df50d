"""Creation functions: tensor/as_tensor/from_numpy, filled and ranged tensors, random tensors,
and the legacy typed constructors (``torch.Tensor``, ``torch.FloatTensor`` ...)."""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import _memory_format, _random, dtypes
from impl._cpu import GRAIN_SIZE, cpu_capability, fma, intraop_threads, parallel_chunks
from impl._deterministic import uninitialised
from impl._layout import as_strided_array, contiguous_strides, preserved_strides, strided_array
from impl._signatures import CREATE, CREATE_RESIZED, OVERLOADS, TYPE_META_NAMES, Out, invalid_call
from impl._tensor import Dims, Tensor, as_ints
from impl._xp import default_device, namespace_for, namespace_of
from impl._xp import device as _device

INT_GRAD_ERROR = "Only Tensors of floating point and complex dtype can require gradients"
COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor)."
)


def _xp(device: Any) -> Any:
    """The namespace of ``device``, else of the default device (torch.set_default_device, a
    ``with torch.device(...)`` block), else numpy (cpu)."""
    return namespace_for(_device(device) if device is not None else default_device() or _device("cpu"))


@api.function("get_default_device")
def get_default_device() -> _device:
    """The default device; one set without an index gets the index of the device a tensor made
    there lands on (so 'cuda' reads as 'cuda:0', and raises where there is no cuda)."""
    dev = default_device() or _device("cpu")
    if dev.index is not None or dev.type == "cpu":
        return dev
    return tensor([], device=dev).device


def _finish(array: Any, requires_grad: bool) -> Tensor:
    t = Tensor._from_array(array)
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(INT_GRAD_ERROR)
        t._requires_grad = True
    return t


def _plain(data: Any) -> Any:
    """Nested sequences with tensors replaced by their values, for numpy to read."""
    if isinstance(data, Tensor):
        return data.numpy(force=True)
    if isinstance(data, (list, tuple)):
        return [_plain(d) for d in data]
    return data


def _infer(data: Any, dtype: dtypes.dtype | None = None) -> np.ndarray:
    """torch's dtype inference: numpy keeps its dtype, Python floats take the default dtype. With
    an explicit ``dtype`` the values convert straight to it, so ``tensor(1.000001,
    dtype=float64)`` keeps every digit instead of passing through the default float32."""
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
    else:
        if dtype is not None and dtype.np.kind in "iu":
            _check_range(data, dtype)
        arr = np.array(_plain(data))
        if arr.dtype.kind not in "fiubc":
            raise TypeError(f"new(): invalid data type '{arr.dtype.name}'")
        if dtype is None:
            arr = arr.astype(_inferred(data).np)
    if dtype is None:
        return arr
    with np.errstate(over="ignore"):  # float16(1e10) is inf, without numpy's warning
        return arr.astype(dtype.np)


def _check_range(data: Any, d: dtypes.dtype) -> None:
    """torch.tensor(data, dtype=<an integer dtype>) refuses a Python number the dtype cannot hold
    (c10::checked_convert, dtypes.overflows), naming the dtype as torch.tensor does."""
    if isinstance(data, (list, tuple)):
        for item in data:
            _check_range(item, d)
    elif isinstance(data, (int, float)) and not isinstance(data, bool) and dtypes.overflows(data, d):
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


def _inferred(data: Any) -> dtypes.dtype:
    """torch's infer_scalar_type: a tensor's, an array's or a numpy scalar's own dtype, bool,
    int64 for an int, the default dtype for a float, and for a sequence its items' dtypes
    promoted (``[np.float32(1), 2.5]`` is float32; an empty one takes the default dtype)."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return dtypes.from_numpy_dtype(data.dtype)
    if isinstance(data, bool):
        return dtypes.bool_
    if isinstance(data, int):
        return dtypes.int64
    if isinstance(data, complex):
        return dtypes.default_complex()
    if isinstance(data, (list, tuple)) and data:
        found = _inferred(data[0])
        for item in data[1:]:
            found = dtypes.promote_types(found, _inferred(item))
        return found
    return dtypes.get_default_dtype()


@api.function("tensor")
def tensor(
    data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False
) -> Tensor:
    """A new tensor copying ``data`` (dtype inferred like torch when not given), on ``device``,
    else on the device of ``data`` if it is a tensor, else on cpu."""
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT_WARNING, UserWarning, stacklevel=2)
        device = data.device if device is None and default_device() is None else device
    arr = _infer(data, None if dtype is None else dtypes.to_dtype(dtype))
    xp = _xp(device)
    return _finish(xp.array(arr, copy=True), requires_grad)


@api.function("as_tensor")
def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Shares memory with a tensor or numpy array when dtype and device allow, else copies."""
    device = default_device() if device is None else device
    if isinstance(data, Tensor):  # itself, or converted (a ToCopyBackward0 if it requires grad)
        return data.to(device=data.device if device is None else device, dtype=dtype or data.dtype)
    if (
        isinstance(data, np.ndarray)
        and (dtype is None or dtypes.to_dtype(dtype).np == data.dtype)
        and (device is None or _device(device).type == "cpu")
    ):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


@api.function("from_numpy")
def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory: writes through either are seen by both."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._from_array(array)


def scalar_tensor(value: Any, like: Tensor | None = None) -> Tensor:
    """A Python number wrapped as a 0-dim tensor (torch's wrapped number) for ops."""
    d = dtypes.scalar_dtype(value)
    xp = np if like is None or type(like._data) is np.ndarray else namespace_for(like.device)
    if d is dtypes.get_default_dtype() and isinstance(value, (float, np.floating)):
        arr = xp.asarray(value, dtype=np.float64)  # keep full precision; promotion decides the dtype
    elif isinstance(value, int) and not isinstance(value, bool):  # from 2**63 a uint64 (it wraps)
        dtypes.check_parsed_int(value)
        arr = xp.asarray(dtypes.parsed_array(value))
    else:
        arr = xp.asarray(value, dtype=d.np)
    t = Tensor._from_array(arr)
    t._wrapped_number = True
    return t


def _sized(name: str, size: tuple, keywords: dict) -> tuple:
    """The size of creation function ``name`` given by position (``zeros(2, 3)``, ``zeros((2, 3))``)
    or by keyword (``zeros(size=(2, 3))``), as torch's parser takes it."""
    if "size" not in keywords:
        return size
    if size:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (keywords.pop("size"),)


def _size(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return as_ints(size)


def _dt(dtype: Any, default: dtypes.dtype | None = None) -> np.dtype:
    d = dtypes.to_dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())
    return d.np


# arange's warning where out= holds another number of elements (it resizes out itself)
ARANGE_RESIZED = (
    "The number of elements in the out tensor of shape {old} is {numel} which does not match the computed "
    "number of elements {count}. Note that this may occur as a result of rounding error. The out tensor will "
    "be resized to a tensor of shape {shape}. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/RangeFactories.cpp:199.)"
)

ARANGE_OUT = dataclasses.replace(
    CREATE, aten="aten::arange", warn=True, resized=ARANGE_RESIZED, keeps_numel=True
)
SPACED_OUT = dataclasses.replace(CREATE, keeps_numel=True)  # linspace's, logspace's


_UNSET: Any = object()  # an argument not given


def _filled(fill: Any, size: tuple, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    return _finish(_xp(device).full(_size(size), fill, dtype=_dt(dtype)), requires_grad)


@api.function("zeros", out=CREATE.named("aten::zeros"))
def zeros(
    *size: Dims, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    return _filled(0, _sized("zeros", size, kw), dtype, device, requires_grad)


@api.function("ones", out=CREATE.named("aten::ones"))
def ones(
    *size: Dims, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    return _filled(1, _sized("ones", size, kw), dtype, device, requires_grad)


@api.function("empty", out=dataclasses.replace(CREATE_RESIZED, writes=0, resize_bumps=True))
def empty(
    *size: Dims, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    fmt = _memory_format.check(kw.pop("memory_format", None), "empty") or _memory_format.contiguous_format
    if fmt is _memory_format.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the empty operator")  # (torch's)
    shape = _size(_sized("empty", size, kw))
    fill = uninitialised(_dt(dtype))
    strides = _memory_format.strides(fmt, shape)
    return _finish(strided_array(_xp(device), shape, strides, _dt(dtype), fill), requires_grad)


@api.function("full", out=CREATE.named("aten::full"))
def full(
    size: Dims, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any
) -> Tensor:
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    if isinstance(fill_value, (int, float, np.number, np.bool_)):  # as torch converts a fill
        d = dtypes.to_dtype(dtype)
        dtypes.check_number(fill_value, d, single=math.prod(_size(size)) == 1)
        fill_value = dtypes.cast_number(fill_value, d.np).item()
    return _filled(fill_value, tuple(size), dtype, device, requires_grad)


def _like(fill: Any, t: Tensor, dtype: Any, device: Any, requires_grad: bool, memory_format: Any) -> Tensor:
    """A tensor like ``t`` filled with ``fill``, strided as ``memory_format`` (by default
    preserve_format) strides it."""
    d = dtype if dtype is not None else t.dtype
    dev = device if device is not None else t.device
    fmt = _memory_format.check(memory_format, "empty_like") or _memory_format.preserve_format
    if fmt is _memory_format.preserve_format:
        strides = preserved_strides(tuple(t.shape), t.stride())
    else:
        strides = _memory_format.strides(fmt, tuple(t.shape))
    return _finish(strided_array(_xp(dev), tuple(t.shape), strides, _dt(d), fill), requires_grad)


_LIKE = (
    "torch.memory_format memory_format = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
)
OVERLOADS.update({
    **{name: (f"(Tensor input, *, {_LIKE}",) for name in ("zeros_like", "ones_like", "empty_like")},
    "full_like": (f"(Tensor input, Number fill_value, *, {_LIKE}",),
    **{name: (f"(Tensor input, *, torch.Generator generator, {_LIKE}", f"(Tensor input, *, {_LIKE}")
       for name in ("rand_like", "randn_like")},
})  # fmt: skip


@api.function("zeros_like")
def zeros_like(
    input: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(zeros_like, locals())
    return _like(0, input, dtype, device, requires_grad, kw.get("memory_format"))


@api.function("ones_like")
def ones_like(
    input: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(ones_like, locals())
    return _like(1, input, dtype, device, requires_grad, kw.get("memory_format"))


@api.function("empty_like")
def empty_like(
    input: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(empty_like, locals())
    fill = uninitialised(_dt(dtype, input.dtype))
    return _like(fill, input, dtype, device, requires_grad, kw.get("memory_format"))


@api.function("full_like")
def full_like(
    input: Tensor,
    fill_value: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **kw: Any,
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(full_like, locals())
    return _like(fill_value, input, dtype, device, requires_grad, kw.get("memory_format"))


# torch's signatures of the factories with several, as its parser lists them
_FACTORY = (
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)"
)
_MADE = f"Tensor out = None, {_FACTORY}"
_RANDOM = (f"*, torch.Generator generator, {_MADE}", f"*, {_MADE}")
_SPACED = [f"{a} start, {b} end" for b in ("Tensor", "Number") for a in ("Tensor", "Number")]
OVERLOADS.update({
    "range": (f"(Number start, Number end, Number step = 1, *, {_MADE}",),
    "arange": (f"(Number end, *, {_MADE}", f"(Number start, Number end, *, {_FACTORY}",
               f"(Number start, Number end, Number step = 1, *, {_MADE}"),
    "linspace": tuple(f"({ends}, int steps, *, {_MADE}" for ends in _SPACED),
    "logspace": tuple(f"({ends}, int steps, float base = 10.0, *, {_MADE}" for ends in _SPACED),
    "eye": (f"(int n, *, {_MADE}", f"(int n, int m, *, {_MADE}"),
    "rand": tuple(f"(tuple of ints size, {rest}" for rest in _RANDOM),
    "randn": tuple(f"(tuple of ints size, {rest}" for rest in _RANDOM),
    "randint": tuple(f"({ints}, tuple of ints size, {rest}" for ints in ("int high", "int low, int high")
                     for rest in _RANDOM),
    "randperm": tuple(f"(int n, {rest}" for rest in _RANDOM),
})  # fmt: skip


@api.function("arange", out=ARANGE_OUT)
def arange(
    start: Any = None,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if end is None:
        start, end = 0, start
    elif start is None:  # arange(end=n)
        start = 0
    if dtype is None:
        dtype = dtypes.result_type(start, end, step)
        if not isinstance(start, float) and not isinstance(end, float) and not isinstance(step, float):
            dtype = dtypes.int64
    _supported("arange_cpu", dtype)
    if not dtypes.to_dtype(dtype).is_floating_point and int(step) == 0:  # a float step cast to 0
        raise ValueError("step must be nonzero")
    n = max(0, math.ceil((float(end) - float(start)) / float(step)))
    arr = (
        _arange_values(float(start), float(step), n, _dt(dtype))
        if dtypes.to_dtype(dtype).is_floating_point
        else np.arange(int(start), int(end), int(step))
    )
    return _finish(_xp(device).asarray(arr.astype(_dt(dtype))), requires_grad)


RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its behavior is "
    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
    "[start, end)."
)


def _acc_number(value: Any, acc: np.dtype) -> Any:
    """``Scalar::to<acc>()``: a number in the kernel's accumulate type, refused where it overflows."""
    if acc.kind == "i":
        if not math.isfinite(value) or not -(2**63) <= int(value) < 2**63:
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return int(value)
    if acc == np.float32 and math.isfinite(value) and abs(value) > float(np.finfo(np.float32).max):
        raise RuntimeError("value cannot be converted to type float without overflow")
    return acc.type(value)


def _cpp(value: Any) -> str:
    """A number as C++'s ostream prints it (6 significant digits, ``inf``, ``nan``)."""
    return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)


RANGE_OUT = dataclasses.replace(CREATE, aten="aten::range", warn=False)


def _range_out(args: tuple, kwargs: dict) -> Out:
    """range's out=: torch's binding warns before it checks out (and tells range not to warn again)."""
    warnings.warn(RANGE_DEPRECATED, UserWarning, stacklevel=4)
    kwargs["_warned"] = True
    return RANGE_OUT


@api.function("range", out=Out(pick=_range_out))
def range_(
    start: Any = _UNSET,
    end: Any = _UNSET,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    _warned: bool = False,
) -> Tensor:
    """torch.range: ``start``, ``start + step``, ... up to ``end`` included, in the default dtype
    unless ``dtype`` says otherwise, computed as torch's range_cpu kernel does (``start + i * step``
    in the accumulate type: double for float and double, float for the half types, int64 for integers),
    after torch's deprecation warning."""
    start, end, step = (v.item() if isinstance(v, Tensor) and not v.dim() else v for v in (start, end, step))
    if any(v is _UNSET or not isinstance(v, (int, float, np.number)) for v in (start, end, step)):
        raise invalid_call(range_, locals(), "range")
    if not _warned:
        warnings.warn(RANGE_DEPRECATED, UserWarning, stacklevel=3)  # (past the binding)
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    _supported("range_cpu", d)
    acc = np.dtype(np.int64)
    if d.is_floating_point:
        acc = np.dtype(np.float64 if d.np.itemsize >= 4 else np.float32)
    first, last, by = (_acc_number(v, acc) for v in (start, end, step))
    if by == 0:  # (torch's process dies of SIGFPE for a fractional step of an integer dtype)
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(first) and math.isfinite(last)):
        raise RuntimeError(f"unsupported range: {_cpp(first)} -> {_cpp(last)}")
    if not ((by > 0 and last >= first) or (by < 0 and last <= first)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if acc.kind == "i":
        size = abs(last - first) // abs(by) + 1  # (C++'s truncating division)
        values = first + np.arange(size, dtype=np.int64) * by
    else:
        size = int(acc.type((last - first) / by) + acc.type(1))
        values = first + np.arange(size, dtype=acc) * by
    with np.errstate(over="ignore"):  # (beyond float16's range: inf, as torch's cast gives)
        values = values.astype(d.np)
    return _finish(_xp(device).asarray(values), requires_grad)


def _fused(fused: bool, acc: Any, g: Any, o: Any) -> Any:
    """``acc + g * o`` in ``acc``'s dtype, rounded once where torch's build fuses it."""
    if fused:
        return fma(*np.broadcast_arrays(acc, g, o))
    return acc + g * o


def _arange_values(start: float, step: float, n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` floating values ``start + i * step`` as torch's CPU arange kernel computes them
    (RangeFactoriesKernel.cpp): in the accumulate type (float64 for float32 and float64, float32
    for the half types), ``parallel_for``'s chunks each through ``vectorized_loop``: blocks of two
    32-byte vectors (the kernel runs its AVX2 build on AVX512 too), each vector from its first
    index's value ``base`` (rounded to ``dtype``) as ``base + k * step``, the chunk's rest
    element by element; the AVX2 build fuses each multiply-add, the baseline one does not."""
    acc = np.dtype(np.float64 if dtype.itemsize >= 4 else np.float32)
    fused = cpu_capability() != "default"
    start_, step_ = acc.type(start), acc.type(step)
    out = _fused(fused, start_, step_, np.arange(n, dtype=acc)).astype(dtype)
    lanes = 32 // dtype.itemsize
    for begin, end in parallel_chunks(n, GRAIN_SIZE, intraop_threads()):
        whole = (end - begin) - (end - begin) % (2 * lanes)
        if whole:
            firsts = np.arange(begin, begin + whole, lanes, dtype=acc)
            base = _fused(fused, start_, step_, firsts).astype(dtype).astype(acc)
            vectors = _fused(fused, base[:, None], np.arange(lanes, dtype=acc)[None, :], step_)
            out[begin : begin + whole] = vectors.reshape(-1).astype(dtype)
    return out


@api.function("linspace", out=SPACED_OUT.named("aten::linspace"))
def linspace(
    start: float,
    end: float,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    _supported("linspace_cpu", dtype)
    arr = _ramp(start, end, steps, _dt(dtype)).astype(_dt(dtype))
    return _computed(arr, device, requires_grad)


def _floating(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is floating (ml_dtypes' bfloat16 included, which numpy files as "V")."""
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _ramp(start: Any, end: Any, steps: Any, dtype: np.dtype) -> np.ndarray:
    """``steps`` evenly spaced values from start to end in ``dtype`` as torch's CPU linspace kernel
    computes them (RangeFactoriesKernel.cpp): start and end converted to ``dtype``, ``step = (end
    - start) / (steps - 1)`` (in float64 for integers), the first half ``start + step * i``, the
    second half ``end - step * (steps - 1 - i)``. Its AVX2/AVX512 builds fuse those into one
    rounding; the half types round each operation to ``dtype`` (c10::Half's operators go through
    float32)."""
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:
        return np.full(1, start).astype(dtype)
    i = np.arange(steps)
    up = i < steps // 2
    count = np.where(up, i, steps - 1 - i)
    if _floating(dtype) and dtype.itemsize < 4:
        f = np.float32
        first, last = dtype.type(start), dtype.type(end)
        with np.errstate(over="ignore"):  # steps beyond float16's range: a step of 0, as in torch
            step = dtype.type(f(dtype.type(f(last) - f(first))) / f(dtype.type(steps - 1)))
        moved = (f(step) * count.astype(f).astype(dtype).astype(f)).astype(dtype).astype(f)
        return np.where(up, f(first) + moved, f(last) - moved).astype(dtype)
    wide = np.dtype(dtype if dtype.kind == "f" else np.float64)
    first, last = (wide.type(dtype.type(v) if dtype.kind == "f" else int(v)) for v in (start, end))
    step = (last - first) / wide.type(steps - 1)
    base = np.where(up, first, last)
    return _fused(cpu_capability() != "default", base, np.where(up, step, -step), count.astype(wide))


def _pow(base: float, x: float) -> float:
    """libm's pow (torch's std::pow; numpy's vectorised power differs in the last bit), inf where
    it overflows."""
    try:
        return math.pow(base, x)
    except OverflowError:
        return math.inf


@api.function("logspace", out=SPACED_OUT.named("aten::logspace"))
def logspace(
    start: float,
    end: float,
    steps: int,
    base: float = 10.0,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``base`` to the powers from start to end, as torch's CPU logspace (RangeFactories.cpp, not
    fused) computes them: start and end converted to ``dtype``, their difference in ``dtype``,
    then in float64 ``step = difference / (steps - 1)`` and the powers ``start + step * i`` for
    the first half, ``end - step * (steps - 1 - i)`` for the second, each through libm's pow,
    rounded to ``dtype`` (the half types through float32)."""
    _supported("logspace_cpu", dtype)
    dt = _dt(dtype)
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:
        exponents = np.array([float(start)])
    else:
        convert = dt.type if _floating(dt) else int
        first, last = convert(start), convert(end)
        with np.errstate(over="ignore"):
            step = float(last - first) / (steps - 1)
        i = np.arange(steps)
        exponents = np.where(i < steps // 2, float(first) + step * i, float(last) - step * (steps - 1 - i))
    powers = np.array([_pow(float(base), x) for x in exponents.tolist()])
    with np.errstate(over="ignore", invalid="ignore"):
        if dt.itemsize < 4:  # double to c10::Half goes through float
            powers = powers.astype(np.float32)
        return _computed(powers.astype(dt), device, requires_grad)


@api.function("eye", out=CREATE.named("aten::eye"))
def eye(
    n: int, m: int | None = None, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return _finish(_xp(device).eye(n, m if m is not None else n, dtype=_dt(dtype)), requires_grad)


def _triangle(name: str, row: int, col: int, offset: int, dtype: Any, device: Any, upper: bool) -> Tensor:
    """The (2, N) coordinates of the lower (upper) triangle of a row x col matrix, row by row."""
    for what, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{what} must be non-negative, got{value}")
    d = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    if d not in (dtypes.int32, dtypes.int64):  # torch's kernel takes the index types only
        raise dtypes.kernel_missing(name, d)
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return _finish(_xp(device).asarray(np.stack([rows, cols]).astype(d.np).reshape(2, -1)), False)


@api.function("tril_indices")
def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, **_: Any
) -> Tensor:
    return _triangle("tril_indices", row, col, offset, dtype, device, upper=False)


@api.function("triu_indices")
def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, **_: Any
) -> Tensor:
    return _triangle("triu_indices", row, col, offset, dtype, device, upper=True)


@api.function("get_num_threads")
def get_num_threads() -> int:
    """The threads torch's intra-op pool would use: impl computes on one, but reports and keeps
    what was set, as programs read it back."""
    return _THREADS[0]


@api.function("set_num_threads")
def set_num_threads(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _THREADS[0] = n


_THREADS = [max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)]


# -- random (torch's CPU stream, see impl._random) ------------------------------------------------
@api.function("manual_seed")
def manual_seed(seed: Any) -> _random.Generator:
    """Seed the default generator: the same seed gives torch's numbers for rand/randn/randint."""
    return _random.default_generator.manual_seed(int(seed))


@api.function("seed")
def seed() -> int:
    s = int(np.random.SeedSequence().entropy) % (2**63)
    manual_seed(s)
    return s


@api.function("get_rng_state")
def get_rng_state() -> Tensor:
    """The default generator's state: torch's ByteTensor of 5056 bytes."""
    return _random.default_generator.get_state()


@api.function("set_rng_state")
def set_rng_state(new_state: Tensor) -> None:
    _random.default_generator.set_state(new_state)


@api.function("initial_seed")
def initial_seed() -> int:
    return _random.default_generator.initial_seed()


def _state_tensor(state: np.ndarray) -> Tensor:
    return Tensor._from_array(state)


def _state_bytes(state: Any) -> np.ndarray:
    if not isinstance(state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(state).__name__}")
    if state.dtype != dtypes.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    return np.ascontiguousarray(state.detach().cpu().numpy())


_random.Generator._state_tensor = staticmethod(_state_tensor)
_random.Generator._state_bytes = staticmethod(_state_bytes)


def _supported(kernel: str, dtype: Any, floating: bool = False) -> None:
    """torch's NotImplementedError of a factory's kernel without a version for ``dtype``: bool for
    every one, any dtype but floating and complex ones for the ``floating`` ones."""
    d = None if dtype is None else dtypes.to_dtype(dtype)
    if d is not None and (d is dtypes.bool_ or (floating and not (d.is_floating_point or d.is_complex))):
        raise dtypes.kernel_missing(kernel, d)


def _float_dtype(dtype: Any) -> np.dtype:
    return _dt(dtype)


def _computed(arr: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    """A tensor of newly computed values (random, linspace); an empty one strided as torch strides
    a fresh tensor (numpy's reshaped empty arrays keep strides of 0)."""
    xp = _xp(device)
    if arr.size == 0:
        return _finish(strided_array(xp, arr.shape, contiguous_strides(arr.shape), arr.dtype), requires_grad)
    return _finish(xp.asarray(arr), requires_grad)


@api.function("rand", out=CREATE.named("aten::rand"))
def rand(
    *size: Dims,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: Any = None,
    **kw: Any,
) -> Tensor:
    size = _sized("rand", size, kw)
    if kw:
        raise TypeError(f"rand() got an unexpected keyword argument '{next(iter(kw))}'")
    _supported("check_uniform_bounds", dtype, floating=True)
    arr = _random.uniform(_size(size), _float_dtype(dtype), gen=generator)
    return _computed(arr, device, requires_grad)


@api.function("randn", out=dataclasses.replace(CREATE_RESIZED, resize_bumps=True))
def randn(
    *size: Dims,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: Any = None,
    **kw: Any,
) -> Tensor:
    size = _sized("randn", size, kw)
    if kw:
        raise TypeError(f"randn() got an unexpected keyword argument '{next(iter(kw))}'")
    _supported("normal_kernel_cpu", dtype, floating=True)
    return _computed(_normal(_size(size), _float_dtype(dtype), generator), device, requires_grad)


def _normal(shape: tuple, dt: np.dtype, generator: Any) -> np.ndarray:
    """Standard normal draws of numpy dtype ``dt``; a complex one as torch's normal_ draws it, the
    real and imaginary parts interleaved, each of standard deviation 1/sqrt(2)."""
    if dt.kind != "c":
        return _random.normal(shape, dt, gen=generator)
    parts = _random.normal((*shape, 2), np.dtype(f"f{dt.itemsize // 2}"), std=1 / math.sqrt(2), gen=generator)
    return parts.view(dt)[..., 0]


@api.function("randint", out=CREATE.named("aten::randint"))
def randint(
    low: int = 0,
    high: Any = None,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: Any = None,
) -> Tensor:
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=size): torch's (int high, tuple of ints size) overload
        low, high = 0, low
    if dtype is not None and dtypes.to_dtype(dtype) is dtypes.bool_:
        raise RuntimeError("to - 1 is out of bounds for bool")
    arr = _random.randint(int(low), int(high), tuple(size), _dt(dtype, dtypes.int64), gen=generator)
    return _computed(arr, device, requires_grad)


@api.function("randperm", out=CREATE.named("aten::randperm"))
def randperm(
    n: int,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A random permutation of 0..n-1 (int64 by default) drawn as torch's CPU randperm draws it."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise invalid_call(randperm, locals())
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    if dt == dtypes.bool_:
        raise dtypes.kernel_missing("randperm", dt)
    if n > 0 and not dt.is_floating_point and n - 1 > np.iinfo(dt.np).max:
        raise RuntimeError(
            f"value cannot be converted to type {dtypes.CONVERT_NAMES[dt.name]} without overflow"
        )
    if requires_grad and not dt.is_floating_point:
        raise RuntimeError(INT_GRAD_ERROR)
    return _computed(_random.randperm(n, generator).astype(dt.np), device, requires_grad)


@api.function("multinomial", out=Out("same", "multinomial expects Long tensor out, got: {out}", warn=False))
def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """Indices drawn from the rows of ``input`` (weights) as torch's CPU multinomial draws them: with
    replacement by the cumulative distribution, without (or for one sample) as the largest
    ``input / q`` for ``q`` exponentials (torch's Gumbel trick)."""
    if not isinstance(input, Tensor):
        raise invalid_call(multinomial, locals())
    if not 0 < input.dim() <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        name = dtypes.scalar_type(input.dtype)
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {name}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    probs = np.asarray(input.detach().cpu().numpy())
    if replacement and num_samples > 1:
        drawn = _random.multinomial_with_replacement(probs, num_samples, generator)
        return _computed(drawn, input.device, False)
    if not (np.isfinite(probs).all() and (probs >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.sum(-1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    q = _random.exponential(probs.shape, probs.dtype, 1.0, generator)
    keys = probs / q
    order = np.argsort(-keys, axis=-1, kind="stable")[..., :num_samples]
    return _computed(order.astype(np.int64), input.device, False)


@api.function("rand_like")
def rand_like(input: Tensor, dtype: Any = None, **kw: Any) -> Tensor:
    kw["device"] = kw.get("device") or input.device  # as every ``*_like``: the input's by default
    return _laid_out_like(rand(input.numel(), dtype=dtype or input.dtype, **kw), input)


_FLOAT_RANGE = (
    "{which} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {type} can support "
    "discrete uniform distribution only within this range. This warning will become an error in version 1.7 "
    "release, please fix the code in advance (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:{line}.)"
)


def _check_from_to(low: int, high: int, d: dtypes.dtype) -> None:
    """torch's check_from_to of random_(low, high) on dtype ``d``: bounds an integer dtype cannot
    hold refused, those a floating one cannot count exactly warned about."""
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    cpp = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}
    if d.is_floating_point:
        digits = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}[d.name]
        for which, value, line in (("from", low, 110), ("to - 1", high - 1, 111)):
            if not -(2**digits) <= value <= 2**digits:
                text = _FLOAT_RANGE.format(which=which, digits=digits, type=cpp[d.name], line=line)
                warnings.warn(text, UserWarning, stacklevel=3)
        return
    info = (0, 1) if d is dtypes.bool_ else np.iinfo(d.np)
    low_bound, high_bound = (0, 1) if d is dtypes.bool_ else (int(info.min), int(info.max))
    kind = "bool" if d is dtypes.bool_ else TYPE_META_NAMES[d.name]
    if not low_bound <= low <= high_bound:
        raise RuntimeError(f"from is out of bounds for {kind}")
    if not low_bound <= high - 1 <= high_bound:
        raise RuntimeError(f"to - 1 is out of bounds for {kind}")


_LIKE = (
    "torch.memory_format memory_format = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
)
OVERLOADS["randint_like"] = tuple(
    f"(Tensor input, {bounds}, *, {generator}{_LIKE}"
    for bounds in ("int low, int high", "Tensor high", "int high")
    for generator in ("torch.Generator generator, ", "")
)


@api.function("randint_like")
def randint_like(
    input: Tensor, low: int = _UNSET, high: Any = None, *, dtype: Any = None, generator: Any = None, **kw: Any
) -> Tensor:
    """Integers drawn uniformly from [low, high) (torch's random_) in a tensor like ``input``; high
    alone may be a 0-d tensor."""
    if low is _UNSET and high is not None:  # randint_like(x, high=n)
        low, high = high, None
    if high is None and isinstance(low, Tensor) and not low.dim() and not low.dtype.is_floating_point:
        low = int(low.item())
    bounds = (low, high) if high is not None else (low,)
    if not isinstance(input, Tensor) or not all(type(v) is int for v in bounds):
        raise invalid_call(randint_like, locals())
    low, high = (0, low) if high is None else (low, high)
    d = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    _check_from_to(low, high, d)
    kw["device"] = kw.get("device") or input.device
    arr = _random.randint(low, high, (input.numel(),), d.np, gen=generator)
    return _laid_out_like(_computed(arr, kw["device"], kw.get("requires_grad", False)), input)


@api.function("randn_like")
def randn_like(input: Tensor, dtype: Any = None, **kw: Any) -> Tensor:
    kw["device"] = kw.get("device") or input.device
    shape = tuple(input.shape)
    if preserved_strides(shape, input.stride()) == contiguous_strides(shape):
        return randn(*shape, dtype=dtype or input.dtype, **kw)
    return _laid_out_like(_serial_normal(input.numel(), dtype or input.dtype, **kw), input)


def _serial_normal(n: int, dtype: Any, generator: Any = None, **kw: Any) -> Tensor:
    """``n`` standard normal numbers as torch's serial normal kernel draws them (a double each,
    then cast): the kernel it fills a tensor that is not contiguous with, in memory order."""
    g = generator or _random.default_generator
    values = np.array([g.normal_one(True) for _ in range(n)], dtype=np.float64).astype(_float_dtype(dtype))
    return _finish(_xp(kw.get("device")).asarray(values), kw.get("requires_grad", False))


def _laid_out_like(flat: Tensor, like: Tensor) -> Tensor:
    """The values of the fresh 1-d ``flat`` taken as the memory of a tensor shaped like ``like``
    and strided as torch's preserve_format strides it (torch draws random numbers in memory order)."""
    strides = preserved_strides(tuple(like.shape), like.stride())
    data = flat._data
    return _finish(as_strided_array(namespace_of(data), data, tuple(like.shape), strides), flat.requires_grad)
