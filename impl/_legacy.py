"""torch's legacy constructor ``new``: ``torch.Tensor(...)`` (``Tensor.__new__``, set here),
``torch.FloatTensor(...)`` and the other legacy types, ``x.new(...)``. Above the ops: a tensor
given to it is aliased (AliasBackward0)."""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import _creation, dtypes
from impl._deterministic import uninitialised
from impl._names import type_name
from impl._ops import views as vw
from impl._ops.table import apply
from impl._signatures import _invalid_combination, _Signature
from impl._size import Size
from impl._tensor import Tensor
from impl._warn import warn_once
from impl._xp import cuda_available
from impl._xp import device as _device

# torch's legacy constructor ``new`` (``torch.Tensor(...)``, ``torch.FloatTensor(...)``,
# ``x.new(...)``): its signatures, as its argument parser lists them in its TypeError
NEW_SIGNATURES = (
    "(*, torch.device device = None)",
    "(torch.Storage storage)",
    "(Tensor other)",
    "(tuple of ints size, *, torch.device device = None)",
    "(object data, *, torch.device device = None)",
)
_DEVICE_WITH_TENSOR = {
    "ctor": "Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not supported.  "
    "Use torch.tensor(...) or torch.as_tensor(...) instead.",
    "new": "Legacy tensor new of the form tensor.new(tensor, device=device) is not supported.  Use "
    "torch.as_tensor(...) instead.",
}
_NUMPY_LIST_WARNING = (
    "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting the list "
    "to a single numpy.ndarray with numpy.array() before converting to a tensor. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:252.)"
)
_REQUIRES_GRAD_SCALAR = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)"
)


def legacy_new(dtype: dtypes.dtype | None, /, *args: Any, **kwargs: Any) -> Tensor:
    """``torch.Tensor(...)``: the legacy constructor of the default dtype (``dtype`` None) on the
    CPU, which takes a tensor of any dtype (its alias)."""
    return legacy_construct(dtype or dtypes.get_default_dtype(), "cpu", "base", args, kwargs, stacklevel=4)


def legacy_construct(
    d: dtypes.dtype, device_type: str, form: str, args: tuple, kwargs: dict, stacklevel: int = 3
) -> Tensor:
    """torch's legacy ``new`` of dtype ``d`` on ``device_type``, as ``form`` calls it: "base"
    (``torch.Tensor``), "ctor" (``torch.FloatTensor``) or "new" (``x.new``). No arguments give an
    empty tensor; ints or a torch.Size, a tensor of those sizes (torch leaves it uninitialised; impl
    fills zeros); one tensor, its alias (of ``d`` and the device type unless "base"); a sequence or
    an array, its values converted to ``d``. Only ``device`` (of ``device_type``) and the
    parameters' names are keywords. Warnings are given ``stacklevel`` frames up."""
    def invalid() -> TypeError:
        return _invalid_combination("new", [_Signature(text) for text in NEW_SIGNATURES], args, kwargs)

    given = dict(kwargs)
    device = given.pop("device", None)
    named = [k for k in ("data", "size", "other") if k in given]
    if set(given) - set(named) or len(named) > 1 or (named and args):
        raise invalid()
    form_of_call = named[0] if named else None
    values = (given[named[0]],) if named else args
    if device is not None and _device(device).type != device_type:
        raise RuntimeError(
            f"legacy constructor expects device type: {device_type} but device type: {_device(device).type} "
            "was passed"
        )
    if not values:
        return _creation._finish(_creation._xp(device_type).zeros((0,), dtype=d.np), False)
    first = values[0]
    if form_of_call == "other" or (form_of_call is None and len(values) == 1 and isinstance(first, Tensor)):
        if not isinstance(first, Tensor):
            raise invalid()
        if device is not None:
            raise RuntimeError(_DEVICE_WITH_TENSOR["new" if form == "new" else "ctor"])
        if form != "base" and (first.dtype is not d or first.device.type != device_type):
            expected, got = _options(d, device_type), _options(first.dtype, first.device)
            raise TypeError(f"expected {expected} (got {got})")
        return apply(vw.ALIAS, first)
    if form_of_call == "size" or (form_of_call is None and _sizes_given(values)):
        sizes = _legacy_sizes(values, invalid)
        negative = [n for n in sizes if n < 0]
        if negative:
            shown = ", ".join(map(str, sizes))
            raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: [{shown}]")
        array = _creation._xp(device_type).full(sizes, uninitialised(d.np), dtype=d.np)
        return _creation._finish(array, False)
    if len(values) > 1:
        raise invalid()
    values = _legacy_values(first, d, stacklevel=stacklevel + 1)
    return _creation._finish(_creation._xp(device_type).asarray(values), False)


def _options(d: dtypes.dtype, device: Any) -> str:
    """A tensor's options as torch's TypeError prints them."""
    where = str(device) if str(device) != "cuda" else "cuda:0"
    return (
        f"TensorOptions(dtype={dtypes.CPP_NAMES[d.name]}, device={where}, layout=Strided, "
        "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))"
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _sizes_given(values: tuple) -> bool:
    """Whether the arguments are sizes: a torch.Size, or an int first (a lone tuple or list is data)."""
    return isinstance(values[0], Size) or _is_int(values[0])


def _legacy_sizes(values: tuple, invalid: Any) -> tuple[int, ...]:
    """The sizes given as ints (any value with ``__index__`` after the first) or as one torch.Size."""
    if isinstance(values[0], (Size, tuple, list)):
        if len(values) > 1:
            raise invalid()
        values = tuple(values[0])
    return int_sizes("new", values)


def int_sizes(name: str, values: Any) -> tuple[int, ...]:
    """The ints of a ``tuple of ints size`` argument of ``name`` (anything with ``__index__``),
    refused as torch's parser refuses an element that is none."""

    sizes = []
    for position, value in enumerate(values, 1):
        try:
            sizes.append(operator.index(value))
        except TypeError:
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {position} with error "
                f'"type must be tuple of ints,but got {type_name(value)}"'
            ) from None
    return tuple(sizes)


def new_tensor_values(data: Any, d: dtypes.dtype) -> np.ndarray:
    """``data`` (a number, an array, or nested sequences of numbers and one-element tensors)
    converted to ``d`` as ``Tensor.new_tensor`` reads it."""
    return _legacy_values(data, d, scalars=True, stacklevel=5)


def on_device(values: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    """A new leaf holding ``values`` on ``device``."""
    return _creation._finish(_creation._xp(device).asarray(values), requires_grad)


def _legacy_values(data: Any, d: dtypes.dtype, scalars: bool = False, stacklevel: int = 2) -> np.ndarray:
    """``data`` (an array, or nested sequences of numbers and one-element tensors; a number too
    where ``scalars``) converted to ``d`` as torch's legacy constructor reads it, with its errors
    and warnings (given ``stacklevel`` frames up)."""
    if isinstance(data, np.ndarray):
        with np.errstate(over="ignore", invalid="ignore"):
            return data.astype(d.np)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not scalars and not _is_sequence(data):
        raise TypeError(f"new(): data must be a sequence (got {type_name(data)})")
    if isinstance(data, list) and data and isinstance(data[0], np.ndarray):
        warn_once("numpy list", _NUMPY_LIST_WARNING, stacklevel=stacklevel)
    sizes: list[int] = []
    item = data
    while _is_sequence(item):
        sizes.append(len(item))
        if not len(item):
            break
        item = item[0]
    flat: list = []

    def store(obj: Any, dim: int) -> None:  # a 0-d tensor is read directly, another as a number
        if dim == len(sizes):
            if isinstance(obj, Tensor) and obj.requires_grad and obj.dim() and d.is_floating_point:
                warnings.warn(_REQUIRES_GRAD_SCALAR, UserWarning, stacklevel=stacklevel + dim + 1)
            flat.append(_legacy_scalar(obj, d))
            return
        if not _is_sequence(obj):
            raise TypeError("not a sequence")
        if len(obj) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
        for element in obj:
            store(element, dim + 1)

    store(data, 0)
    if d.np.kind in "iu":  # as torch.tensor(data, dtype=d): a number the dtype cannot hold is refused
        _creation._check_range(data, d)
    kind = np.float64 if d.is_floating_point else (np.bool_ if d is dtypes.bool_ else np.int64)
    with np.errstate(over="ignore"):  # float16(1e6) is inf, as torch stores it
        return np.array(flat, dtype=kind).reshape(sizes).astype(d.np)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple, range)) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _legacy_scalar(value: Any, d: dtypes.dtype) -> Any:
    """One element of legacy data as a Python number for ``d``: a float dtype takes a real number
    or a one-element tensor; an integer or bool dtype a float (truncated), a bool, or what has
    ``__index__``, within the dtype's range."""

    if d.is_floating_point:
        if isinstance(value, Tensor):
            if value.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            return float(value.item())
        if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            return float(value)
        raise TypeError(f"must be real number, not {type_name(value)}")
    if isinstance(value, float) and d is dtypes.bool_:
        return value != 0
    if isinstance(value, float):  # checked against the dtype only
        number = int(value) if math.isfinite(value) else 2**64
    else:
        number = operator.index(value)
        if d is not dtypes.bool_ and not -(2**63) <= number < 2**63:
            raise ValueError("Overflow when unpacking long long")
    if d is dtypes.bool_:
        return bool(number)
    if dtypes.overflows(number, d):
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
    return number


class tensortype(type):
    """The type of torch's legacy tensor types (``torch.FloatTensor`` ...): type checks, not
    classes of tensors. ``isinstance(t, torch.FloatTensor)`` tests the tensor's dtype and device
    type; calling one is the legacy constructor of its dtype; Tensor's attributes are its own."""

    dtype: dtypes.dtype
    _device_type: str

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device_type

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        if cls._device_type == "cuda":
            if not cuda_available():  # as a torch built without CUDA says it
                name = f"{cls.__module__}.{cls.__name__}"
                raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
        return legacy_construct(cls.dtype, cls._device_type, "ctor", args, kwargs)

    def __dir__(cls) -> list[str]:
        return dir(Tensor)

    def __getattr__(cls, name: str) -> Any:
        try:
            return getattr(Tensor, name)
        except AttributeError:
            where = f"{cls.__module__}.{cls.__name__}"
            raise AttributeError(f"type object '{where}' has no attribute '{name}'") from None


tensortype.__module__ = "torch"


def _legacy_type(d: dtypes.dtype, device_type: str = "cpu") -> tensortype:
    module = "torch" if device_type == "cpu" else "torch.cuda"
    namespace = {
        "__module__": module,
        "__doc__": None,
        "dtype": d,
        "_device_type": device_type,
        "is_cuda": device_type == "cuda",
        "is_sparse": False,
    }
    return tensortype(d._legacy, (), namespace)


LEGACY_TYPES = {d: _legacy_type(d) for d in dtypes.ALL}
CUDA_LEGACY_TYPES = {d: _legacy_type(d, "cuda") for d in dtypes.ALL}
FloatTensor = LEGACY_TYPES[dtypes.float32]
DoubleTensor = LEGACY_TYPES[dtypes.float64]
HalfTensor = LEGACY_TYPES[dtypes.float16]
BFloat16Tensor = LEGACY_TYPES.get(dtypes.bfloat16)
LongTensor = LEGACY_TYPES[dtypes.int64]
IntTensor = LEGACY_TYPES[dtypes.int32]
ShortTensor = LEGACY_TYPES[dtypes.int16]
CharTensor = LEGACY_TYPES[dtypes.int8]
ByteTensor = LEGACY_TYPES[dtypes.uint8]
BoolTensor = LEGACY_TYPES[dtypes.bool_]
for _d, _type in LEGACY_TYPES.items():  # torch.FloatTensor ... (torch has no complex ones)
    if not _d.is_complex:
        api.public(_type, _type.__name__)


def _tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor(...)``, the legacy constructor (``Tensor.__new__``, set here: Tensor sits below)."""
    t = legacy_new(None, *args, **kwargs)
    return t if cls is Tensor else Tensor._make_subclass(cls, t)


_tensor_new.__name__, _tensor_new.__qualname__ = "__new__", "Tensor.__new__"
Tensor.__new__ = staticmethod(_tensor_new)
