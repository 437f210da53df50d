"""Creation functions: tensor/as_tensor/from_numpy, filled and ranged tensors, random tensors,
and the legacy typed constructors (``torch.Tensor``, ``torch.FloatTensor`` ...)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from impl import _random, dtypes
from impl._layout import as_strided_array, contiguous_strides, preserved_strides, strided_array
from impl._ops.signatures import invalid_call
from impl._tensor import Tensor
from impl._xp import device as _device
from impl._xp import namespace_for, namespace_of

INT_GRAD_ERROR = "Only Tensors of floating point and complex dtype can require gradients"
COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor)."
)


def _xp(device: Any) -> Any:
    return namespace_for(_device(device) if device is not None else _device("cpu"))


def _finish(array: Any, requires_grad: bool) -> Tensor:
    t = Tensor._from_array(array)
    if requires_grad:
        if not t.dtype.is_floating_point:
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
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"new(): invalid data type '{arr.dtype.name}'")
        if dtype is None and arr.dtype.kind == "f" and not _contains_numpy(data):
            arr = arr.astype(dtypes.get_default_dtype().np)
        elif dtype is None and arr.dtype.kind in "iu":
            arr = arr.astype(np.int64)
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


def _contains_numpy(data: Any) -> bool:
    if isinstance(data, (np.ndarray, np.floating)):
        return True
    if isinstance(data, Tensor):
        return data.dtype is not dtypes.get_default_dtype()
    if isinstance(data, (list, tuple)):
        return any(_contains_numpy(d) for d in data)
    return False


def tensor(
    data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False
) -> Tensor:
    """A new tensor copying ``data`` (dtype inferred like torch when not given), on ``device``,
    else on the device of ``data`` if it is a tensor, else on cpu."""
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT_WARNING, UserWarning, stacklevel=2)
        device = data.device if device is None else device
    arr = _infer(data, None if dtype is None else dtypes.to_dtype(dtype))
    xp = _xp(device)
    return _finish(xp.array(arr, copy=True), requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Shares memory with a tensor or numpy array when dtype and device allow, else copies."""
    if isinstance(data, Tensor):  # itself, or converted (a ToCopyBackward0 if it requires grad)
        return data.to(device=data.device if device is None else device, dtype=dtype or data.dtype)
    if (
        isinstance(data, np.ndarray)
        and (dtype is None or dtypes.to_dtype(dtype).np == data.dtype)
        and device in (None, "cpu")
    ):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


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


def _size(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _dt(dtype: Any, default: dtypes.dtype | None = None) -> np.dtype:
    d = dtypes.to_dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())
    return d.np


def _filled(fill: Any, size: tuple, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    return _finish(_xp(device).full(_size(size), fill, dtype=_dt(dtype)), requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    return _filled(0, size, dtype, device, requires_grad)


def full(
    size: Any, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any
) -> Tensor:
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    if isinstance(fill_value, (int, float, np.number, np.bool_)):  # as torch converts a fill
        d = dtypes.to_dtype(dtype)
        dtypes.check_number(fill_value, d, single=math.prod(_size(size)) == 1)
        fill_value = dtypes.cast_number(fill_value, d.np).item()
    return _filled(fill_value, tuple(size), dtype, device, requires_grad)


def _like(fill: Any, t: Tensor, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    """A tensor like ``t`` filled with ``fill``, strided as torch's preserve_format strides it."""
    d = dtype if dtype is not None else t.dtype
    dev = device if device is not None else t.device
    strides = preserved_strides(tuple(t.shape), t.stride())
    return _finish(strided_array(_xp(dev), tuple(t.shape), strides, _dt(d), fill), requires_grad)


def zeros_like(
    input: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(zeros_like, locals())
    return _like(0, input, dtype, device, requires_grad)


def ones_like(
    input: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(ones_like, locals())
    return _like(1, input, dtype, device, requires_grad)


def empty_like(
    input: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(empty_like, locals())
    return _like(0, input, dtype, device, requires_grad)


def full_like(
    input: Tensor,
    fill_value: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **_: Any,
) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(full_like, locals())
    return _like(fill_value, input, dtype, device, requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = dtypes.result_type(start, end, step)
        if not isinstance(start, float) and not isinstance(end, float) and not isinstance(step, float):
            dtype = dtypes.int64
    n = max(0, math.ceil((float(end) - float(start)) / float(step)))
    arr = (
        (np.arange(n, dtype=np.float64) * float(step) + float(start))
        if dtypes.to_dtype(dtype).is_floating_point
        else np.arange(int(start), int(end), int(step))
    )
    return _finish(_xp(device).asarray(arr.astype(_dt(dtype))), requires_grad)


def linspace(
    start: float,
    end: float,
    steps: int,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    arr = np.linspace(float(start), float(end), int(steps)).astype(_dt(dtype))
    return _computed(arr, device, requires_grad)


def eye(
    n: int, m: int | None = None, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    return _finish(_xp(device).eye(n, m if m is not None else n, dtype=_dt(dtype)), requires_grad)


# -- random (torch's CPU stream, see impl._random) ------------------------------------------------
def manual_seed(seed: int) -> _random.Generator:
    """Seed the default generator: the same seed gives torch's numbers for rand/randn/randint."""
    return _random.default_generator.manual_seed(seed)


def seed() -> int:
    s = int(np.random.SeedSequence().entropy) % (2**63)
    manual_seed(s)
    return s


def initial_seed() -> int:
    return _random.default_generator.initial_seed()


def _float_dtype(dtype: Any) -> np.dtype:
    return _dt(dtype)


def _computed(arr: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    """A tensor of newly computed values (random, linspace); an empty one strided as torch strides
    a fresh tensor (numpy's reshaped empty arrays keep strides of 0)."""
    xp = _xp(device)
    if arr.size == 0:
        return _finish(strided_array(xp, arr.shape, contiguous_strides(arr.shape), arr.dtype), requires_grad)
    return _finish(xp.asarray(arr), requires_grad)


def rand(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, generator: Any = None
) -> Tensor:
    arr = _random.uniform(_size(size), _float_dtype(dtype), gen=generator)
    return _computed(arr, device, requires_grad)


def randn(
    *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, generator: Any = None
) -> Tensor:
    arr = _random.normal(_size(size), _float_dtype(dtype), gen=generator)
    return _computed(arr, device, requires_grad)


def randint(
    low: int,
    high: Any = None,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    generator: Any = None,
) -> Tensor:
    if size is None:
        low, high, size = 0, low, high
    arr = _random.randint(int(low), int(high), tuple(size), _dt(dtype, dtypes.int64), gen=generator)
    return _computed(arr, device, requires_grad)


def rand_like(input: Tensor, dtype: Any = None, **kw: Any) -> Tensor:
    kw["device"] = kw.get("device") or input.device  # as every ``*_like``: the input's by default
    return _laid_out_like(rand(input.numel(), dtype=dtype or input.dtype, **kw), input)


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


# -- legacy constructors -----------------------------------------------------------------------
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
    from impl._ops.signatures import _invalid_combination, _Signature

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
        return _finish(_xp(device_type).zeros((0,), dtype=d.np), False)
    first = values[0]
    if form_of_call == "other" or (form_of_call is None and len(values) == 1 and isinstance(first, Tensor)):
        if not isinstance(first, Tensor):
            raise invalid()
        if device is not None:
            raise RuntimeError(_DEVICE_WITH_TENSOR["new" if form == "new" else "ctor"])
        if form != "base" and (first.dtype is not d or first.device.type != device_type):
            expected, got = _options(d, device_type), _options(first.dtype, first.device)
            raise TypeError(f"expected {expected} (got {got})")
        from impl._ops import views as vw
        from impl._ops.table import apply

        return apply(vw.ALIAS, first)
    if form_of_call == "size" or (form_of_call is None and _sizes_given(values)):
        sizes = _legacy_sizes(values, invalid)
        negative = [n for n in sizes if n < 0]
        if negative:
            shown = ", ".join(map(str, sizes))
            raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: [{shown}]")
        return _finish(_xp(device_type).zeros(sizes, dtype=d.np), False)
    if len(values) > 1:
        raise invalid()
    return _finish(_xp(device_type).asarray(_legacy_values(first, d, stacklevel=stacklevel + 1)), False)


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
    from impl._size import Size

    return isinstance(values[0], Size) or _is_int(values[0])


def _legacy_sizes(values: tuple, invalid: Any) -> tuple[int, ...]:
    """The sizes given as ints (any value with ``__index__`` after the first) or as one torch.Size."""
    from impl._size import Size

    if isinstance(values[0], (Size, tuple, list)):
        if len(values) > 1:
            raise invalid()
        values = tuple(values[0])
    return int_sizes("new", values)


def int_sizes(name: str, values: Any) -> tuple[int, ...]:
    """The ints of a ``tuple of ints size`` argument of ``name`` (anything with ``__index__``),
    refused as torch's parser refuses an element that is none."""
    import operator

    from impl._ops.signatures import type_name

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
    return _finish(_xp(device).asarray(values), requires_grad)


def _legacy_values(data: Any, d: dtypes.dtype, scalars: bool = False, stacklevel: int = 2) -> np.ndarray:
    """``data`` (an array, or nested sequences of numbers and one-element tensors; a number too
    where ``scalars``) converted to ``d`` as torch's legacy constructor reads it, with its errors
    and warnings (given ``stacklevel`` frames up)."""
    from impl._ops.signatures import type_name

    if isinstance(data, np.ndarray):
        with np.errstate(over="ignore", invalid="ignore"):
            return data.astype(d.np)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not scalars and not _is_sequence(data):
        raise TypeError(f"new(): data must be a sequence (got {type_name(data)})")
    if isinstance(data, list) and data and isinstance(data[0], np.ndarray):
        from impl._warn import warn_once

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
        _check_range(data, d)
    kind = np.float64 if d.is_floating_point else (np.bool_ if d is dtypes.bool_ else np.int64)
    with np.errstate(over="ignore"):  # float16(1e6) is inf, as torch stores it
        return np.array(flat, dtype=kind).reshape(sizes).astype(d.np)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple, range)) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _legacy_scalar(value: Any, d: dtypes.dtype) -> Any:
    """One element of legacy data as a Python number for ``d``: a float dtype takes a real number
    or a one-element tensor; an integer or bool dtype a float (truncated), a bool, or what has
    ``__index__``, within the dtype's range."""
    import operator

    from impl._ops.signatures import type_name

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
            from impl._xp import cuda_available

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
