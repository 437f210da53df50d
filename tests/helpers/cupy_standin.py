"""A numpy-backed stand-in for the ``cupy`` module, so that CI, which has no GPU, runs impl's
``device='cuda'`` plumbing (``impl._xp`` picks cupy for 'cuda'; tests/impl/test_impl_device.py installs
this module in its place).

It is a test double for the plumbing, not a GPU: every value is computed by numpy on the host.
What it does copy from cupy is what impl's plumbing depends on, as cupy documents and implements it
(cupy/_core/core.pyx, ``class ndarray``; cupy/_core/_kernel.pyx, ``_preprocess_args``;
cupy/_core/_routines_indexing.pyx; https://docs.cupy.dev/en/stable/user_guide/interoperability.html):

- ``ndarray`` is its own type wrapping a numpy array, not a numpy subclass, so code that takes the
  numpy path by ``isinstance``/``type`` tests cannot mistake it for one;
- implicit conversion to numpy is refused: ``__array__`` raises cupy's ``TypeError`` ("Implicit
  conversion to a NumPy array is not allowed. ..."), so ``np.asarray(x)`` fails as on a GPU; ``get()``
  (and ``asnumpy``) copy to the host explicitly; ``item()``, ``tolist()``, ``float(x)``, ``int(x)``,
  ``bool(x)`` copy too (cupy allows them, synchronising the device);
- numpy functions called on it dispatch to this module (NEP 13 ``__array_ufunc__``, NEP 18
  ``__array_function__``) and return stand-in arrays; a numpy array among the operands of a kernel
  is refused with cupy's ``TypeError('Unsupported type <class 'numpy.ndarray'>')`` (host memory
  never reaches a kernel implicitly); numpy scalars and Python numbers are accepted;
- explicit transfers accept host data: ``asarray``/``array`` of a numpy array, list or number;
  index arrays (lists, numpy arrays) are copied to the device as cupy's ``_prepare_slice_list``
  does, and out-of-range integer array indices wrap around instead of raising (cupy's documented
  difference from numpy);
- reductions return 0-d arrays, never numpy scalars;
- ``cuda.runtime.getDeviceCount()`` reports one device; ``deviceSynchronize()`` returns at once.

Module functions exist only for the names listed in ``FUNCTIONS`` and ``UFUNCS`` (all of them cupy
functions of the same name), so impl calling a numpy function cupy lacks fails here as on a GPU.
Not modelled: streams and asynchrony, memory pools, several devices, and cupy's own numerics (its
kernels round as CUDA does; here numpy computes every value).
"""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable
from typing import Any

import numpy as np

IMPLICIT_CONVERSION = (
    "Implicit conversion to a NumPy array is not allowed. "
    "Please use `.get()` to construct a NumPy array explicitly."
)


class ndarray:  # noqa: N801  (cupy's name)
    """A device array: a numpy array that numpy cannot see as one."""

    __slots__ = ("_host",)
    __array_priority__ = 100

    def __init__(self, shape: Any, dtype: Any = float) -> None:
        self._host = np.empty(shape, dtype)

    # what numpy may and may not do with it
    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError(IMPLICIT_CONVERSION)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy ufuncs called on it run as this module's (only ``__call__``: cupy's ``ndarray``
        answers NotImplemented to ``reduce``/``at``/... reached through numpy)."""
        if method != "__call__" or ufunc.__name__ not in UFUNCS:
            return NotImplemented
        if "out" in kwargs:
            kwargs["out"] = tuple(_device_only(o) for o in kwargs["out"])
        return _wrap(ufunc(*_kernel_args(inputs), **_kernel_args(kwargs)))

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        own = globals().get(func.__name__)
        if func.__name__ not in FUNCTIONS or own is None:
            return NotImplemented
        return own(*args, **kwargs)

    # explicit transfers and conversions (each a device sync in cupy)
    def get(self, stream: Any = None) -> np.ndarray:
        return self._host.copy()

    def item(self) -> Any:
        if self._host.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._host.item()

    def tolist(self) -> Any:
        return self._host.tolist()

    def __iter__(self) -> Any:
        if self._host.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._host)))

    # layout
    shape = property(lambda self: self._host.shape)
    dtype = property(lambda self: self._host.dtype)
    ndim = property(lambda self: self._host.ndim)
    size = property(lambda self: self._host.size)
    strides = property(lambda self: self._host.strides)
    itemsize = property(lambda self: self._host.itemsize)
    nbytes = property(lambda self: self._host.nbytes)
    T = property(lambda self: _wrap(self._host.T))
    device = property(lambda self: cuda.Device(0))

    @property
    def flags(self) -> Any:
        """cupy's Flags: these three only (no ``writeable``: device memory is always writable)."""
        host = self._host.flags
        return types.SimpleNamespace(
            c_contiguous=host.c_contiguous, f_contiguous=host.f_contiguous, owndata=self.base is None
        )

    @property
    def data(self) -> Any:
        """cupy's MemoryPointer: only ``ptr`` (here the host address, so views keep offsets)."""
        return types.SimpleNamespace(ptr=self._host.__array_interface__["data"][0])

    @property
    def base(self) -> ndarray | None:
        """The array owning the memory of a view (cupy's ``base``), None for an owner."""
        root = self._host
        while isinstance(root.base, np.ndarray):
            root = root.base
        return None if root is self._host else _wrap(root)

    # indexing: index arrays go to the device, integer ones wrap around
    def __getitem__(self, key: Any) -> ndarray:
        return _wrap(self._host[_device_key(self._host.shape, key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        key = _device_key(self._host.shape, key)
        if isinstance(value, np.ndarray) and value.ndim and not _advanced(key):
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._host[key] = value._host if isinstance(value, ndarray) else value


def _method(name: str) -> Callable[..., Any]:
    def method(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        return _wrap(getattr(self._host, name)(*_kernel_args(args), **_kernel_args(kwargs)))

    def inplace(self: ndarray, other: Any) -> ndarray:
        getattr(self._host, name)(_kernel_args(other))
        return self

    if name.startswith("__i") and name != "__invert__":
        method = inplace

    method.__name__ = name
    return method


# the cupy.ndarray methods impl uses (all in cupy's core.pyx)
METHODS = (
    "all", "any", "argmax", "argmin", "astype", "clip", "copy", "cumprod", "cumsum", "diagonal",
    "fill", "max", "mean", "min", "nonzero", "prod", "ravel", "repeat", "reshape", "squeeze", "std",
    "sum", "swapaxes", "take", "transpose", "var", "view", "flatten", "argsort", "sort", "dot",
    "conj", "round",
)
OPERATORS = (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge",
)
for _name in METHODS:
    setattr(ndarray, _name, _method(_name))
for _op in OPERATORS:
    for _form in ("__{}__", "__r{}__", "__i{}__"):
        if _op in ("eq", "ne", "lt", "le", "gt", "ge") and _form != "__{}__":
            continue
        _dunder = _form.format(_op)
        if hasattr(np.ndarray, _dunder):
            setattr(ndarray, _dunder, _method(_dunder))
for _dunder in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(ndarray, _dunder, _method(_dunder))
for _dunder in ("__float__", "__int__", "__bool__", "__len__", "__repr__", "__str__"):  # Python values
    setattr(ndarray, _dunder, lambda self, _name=_dunder: getattr(self._host, _name)())
ndarray.__hash__ = None  # type: ignore[assignment]  (an array, as numpy's and cupy's)


def _wrap(value: Any) -> Any:
    """numpy results as device arrays (numpy scalars as 0-d arrays, as cupy returns them)."""
    if isinstance(value, (np.ndarray, np.generic)):
        out = object.__new__(ndarray)
        out._host = np.asarray(value) if isinstance(value, np.generic) else value
        return out
    if isinstance(value, (tuple, list)):
        return type(value)(_wrap(v) for v in value)
    return value


def _kernel_args(value: Any) -> Any:
    """The host arrays of a kernel's operands; host arrays themselves are refused as cupy's
    ``_preprocess_args`` refuses them."""
    if isinstance(value, ndarray):
        return value._host
    if isinstance(value, np.ndarray):
        raise TypeError(f"Unsupported type {type(value)}")
    if isinstance(value, (tuple, list)):
        return type(value)(_kernel_args(v) for v in value)
    if isinstance(value, dict):
        return {k: _kernel_args(v) for k, v in value.items()}
    return value


def _device_only(value: Any) -> np.ndarray:
    if not isinstance(value, ndarray):
        raise TypeError(f"Unsupported type {type(value)}")
    return value._host


def _advanced(key: tuple) -> bool:
    return builtins.any(isinstance(k, np.ndarray) for k in key)


def _device_key(shape: tuple, key: Any) -> tuple:
    """An index as cupy's ``_prepare_slice_list`` and ``_view_getitem`` take it: lists, numpy
    arrays and bools become device arrays (a host-to-device copy), ints and slices stay; integer
    array indices wrap around modulo their dim's size."""
    items = list(key) if isinstance(key, tuple) else [key]
    for i, k in enumerate(items):
        if isinstance(k, ndarray):
            items[i] = k._host
        elif isinstance(k, (list, tuple, np.ndarray, bool, np.bool_)):
            items[i] = np.array(_kernel_args(k) if not isinstance(k, np.ndarray) else k)
            if isinstance(k, (list, tuple)) and items[i].size == 0:
                items[i] = items[i].astype(np.int32)
    indexed = [k for k in items if k is not None and k is not Ellipsis]
    dims = builtins.sum(k.ndim if isinstance(k, np.ndarray) and k.dtype.kind == "b" else 1 for k in indexed)
    axis = 0
    for i, k in enumerate(items):
        if k is Ellipsis:
            axis += len(shape) - dims
        elif isinstance(k, np.ndarray) and k.dtype.kind == "b":
            axis += k.ndim
        elif k is not None:
            if isinstance(k, np.ndarray) and k.dtype.kind in "iu" and axis < len(shape) and shape[axis]:
                items[i] = k % shape[axis]
            axis += 1
    return tuple(items)


# module functions: numpy's, on device arrays only
def _on_device(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` (a numpy function) taking and returning device arrays."""

    def function(*args: Any, **kwargs: Any) -> Any:
        return _wrap(fn(*_kernel_args(args), **_kernel_args(kwargs)))

    function.__name__ = name
    return function


class ufunc:  # noqa: N801  (cupy's name)
    """cupy.ufunc: called, or through its ``reduce``/``accumulate``/``at``/``outer`` methods."""

    def __init__(self, name: str) -> None:
        self.__name__ = name
        self._np = getattr(np, name)
        self.nin, self.nout = self._np.nin, self._np.nout
        self._call = _on_device(self._np, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)

    def at(self, a: ndarray, indices: Any, b: Any = None) -> None:
        key = _device_key(a.shape, indices)
        self._np.at(_device_only(a), key, *(() if b is None else (_kernel_args(b),)))

    def __getattr__(self, method: str) -> Any:
        if method not in ("reduce", "accumulate", "outer", "reduceat"):
            raise AttributeError(method)
        return _on_device(getattr(self._np, method), method)


def asarray(a: Any, dtype: Any = None, order: Any = None) -> ndarray:
    """A device array of ``a``: a device array as is (or cast), host data copied to the device."""
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    return _wrap(np.array(_host_data(a), dtype=dtype, order=order))


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", ndmin: int = 0) -> ndarray:
    if isinstance(obj, ndarray) and not copy and (dtype is None or obj.dtype == dtype):
        return obj
    return _wrap(np.array(_host_data(obj), dtype=dtype, order=order, ndmin=ndmin))


def _host_data(a: Any) -> Any:
    """Host data for a transfer; device arrays nested in lists are read from the device."""
    if isinstance(a, ndarray):
        return a._host
    if isinstance(a, (list, tuple)):
        return type(a)(_host_data(v) for v in a)
    return a


def asnumpy(a: Any) -> np.ndarray:
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def ascontiguousarray(a: ndarray, dtype: Any = None) -> ndarray:
    return _wrap(np.ascontiguousarray(_device_only(a), dtype=dtype))


def copyto(dst: ndarray, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    np.copyto(_device_only(dst), _kernel_args(src), casting=casting, where=_kernel_args(where))


UFUNCS = (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "negative", "positive",
    "power", "float_power", "remainder", "mod", "fmod", "absolute", "abs", "sign", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "reciprocal", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not", "left_shift", "right_shift",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "maximum", "minimum", "fmax", "fmin", "isfinite",
    "isinf", "isnan", "signbit", "copysign", "nextafter", "floor", "ceil", "trunc", "rint",
    "hypot", "logaddexp", "logaddexp2", "matmul", "conjugate", "conj", "heaviside",
)
FUNCTIONS = (  # the cupy functions impl calls (``xp.<name>``), plus the usual creation functions
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange",
    "where", "clip", "sum", "prod", "mean", "var", "max", "min", "argmax", "argmin", "cumsum",
    "cumprod", "concatenate", "stack", "broadcast_to", "broadcast_arrays", "reshape", "transpose",
    "moveaxis", "swapaxes", "expand_dims", "squeeze", "flip", "take", "take_along_axis", "nonzero",
    "dot", "trace", "unique", "allclose", "round", "result_type", "pad", "eye", "linspace",
    "sort", "argsort", "put_along_axis", "all", "any", "tril", "triu", "roll", "tile",
)
for _name in UFUNCS:
    globals()[_name] = ufunc(_name)
for _name in FUNCTIONS:
    globals().setdefault(_name, _on_device(getattr(np, _name), _name))
FUNCTIONS += ("asarray", "array", "ascontiguousarray", "copyto")

# dtypes and constants: cupy's are numpy's
for _name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
              "complex64", "complex128", "dtype", "finfo", "iinfo", "inf", "nan", "pi", "e", "newaxis",
              "integer", "floating", "number", "generic"):
    globals()[_name] = getattr(np, _name)


def _as_strided(x: ndarray, shape: Any = None, strides: Any = None) -> ndarray:
    return _wrap(np.lib.stride_tricks.as_strided(_device_only(x), shape, strides))


lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(as_strided=_as_strided))


class _Device:
    """cupy.cuda.Device: the current device, usable as a context manager."""

    def __init__(self, device: int = 0) -> None:
        self.id = device

    def __enter__(self) -> _Device:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def synchronize(self) -> None:
        return None


cuda = types.SimpleNamespace(
    Device=_Device,
    runtime=types.SimpleNamespace(getDeviceCount=lambda: 1, deviceSynchronize=lambda: None),
    Stream=types.SimpleNamespace(null=types.SimpleNamespace(synchronize=lambda: None)),
)
