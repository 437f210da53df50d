"""Tensor's methods and operators (``x.sum()``, ``x + y``, ``x[i] = v``): the op families declare
them in ``impl._api``, where this module adds the conversions (``to``/``type``/``float()`` ...)
and random fills, and ``bind`` sets them all on Tensor with torch's argument checks."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from impl import _api as api
from impl import _creation, _memory_format, _new, _random, dtypes
from impl import _grad_mode as grad_mode
from impl._layout import copy_like, new_like
from impl._legacy import tensortype
from impl._names import type_name

# the op families, imported for the spellings they declare
from impl._ops import (  # noqa: F401
    activations,
    arithmetic,
    binary_math,
    comparison,
    distances,
    distributions,
    float_bits,
    gamma,
    igamma,
    index_arithmetic,
    indexing,
    inplace,
    inplace_views,
    integer_math,
    moments,
    norms,
    pointwise_ternary,
    products,
    puts,
    queries,
    reductions,
    scans,
    scatter,
    shapes,
    softmax,
    sorting,
    special,
    stacking,
    structure,
    unary_math,
    unfold,
    view_scatters,
    views,
)
from impl._ops import complex as complex_ops
from impl._ops import inplace as ip
from impl._ops.table import HOLOMORPHIC, NOT_OPERANDS, D, OpDef, apply, auto_linear
from impl._ops.views import as_strided, matrix_adjoint, permute_method, transpose
from impl._signatures import (
    NUMPY_ALIASES,
    OVERLOADS,
    Spellings,
    _invalid_combination,
    _Signature,
    method_error,
    method_precheck,
    named,
    numpy_names,
    reparse,
    signatures_of,
)
from impl._tensor import Tensor, view_rebase_error
from impl._warn import warn_once
from impl._xp import device as _device
from impl._xp import namespace_for, namespace_of, transferred

TO_COPY = OpDef(
    "ToCopyBackward0",
    copy_like,
    # (_to_copy_backward: a real input's gradient is the real part of a complex one)
    derivatives={"self": D("", lambda g, c: (g.real if g.is_complex() else g).to(c.dtype("self")))},
    jvp=auto_linear,
    complex=HOLOMORPHIC,
)


COMPLEX_TO_REAL = (  # torch's TORCH_WARN_ONCE where a copy casts complex values to a real dtype
    "Casting complex values to real discards the imaginary part (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)"
)


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``; self if nothing changes.
    A move to another device (into ``dtype`` too, if given) is one ToCopyBackward0 node, as
    torch's ``_to_copy``."""
    dtype, dev = kwargs.get("dtype"), kwargs.get("device")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _device)):
            dev = a
    target = self.dtype if dtype is None else dtypes.to_dtype(dtype)
    fmt = _memory_format.check(kwargs.get("memory_format"), "to") or _memory_format.preserve_format
    preserve = fmt is _memory_format.preserve_format
    strides = None if preserve else _memory_format.strides(fmt, tuple(self.shape))
    if dev is not None:
        xp = namespace_for(_device(dev))  # (refuses a device impl cannot reach, moving or not)
        if _device(dev).type != self.device.type:
            return apply(TO_DEVICE, self, target=xp, source=str(self.device), dtype=target.np)
    reformat = strides is not None and _memory_format.suggested(tuple(self.shape), self.stride()) is not fmt
    if target is not self.dtype or copy or reformat:
        source = self
        if self.dtype.is_complex and not target.is_complex:
            warn_once("complex to real", COMPLEX_TO_REAL, stacklevel=3)
            source = complex_ops.real(self)
        return apply(TO_COPY, source, dtype=target.np, strides=strides)
    return self


def _cuda_device(device: Any) -> _device:
    """``Tensor.cuda(device)``'s device: 'cuda' (the current one) by default, an index, a name."""
    if device is None:
        return _device("cuda")
    return _device("cuda", device) if isinstance(device, int) else _device(device)


def _move(xp: Any, a: Any, source: str, dtype: Any) -> Any:
    """``a`` copied onto the device of namespace ``xp`` (into ``dtype``), laid out as torch lays
    out a copy (``copy_like``): host data goes to the device by ``xp.asarray`` (cupy's explicit
    transfer), device data to the host by ``get()``; no implicit conversion either way."""
    out = new_like(xp, a, dtype)
    out[...] = transferred(xp, a)
    return out


TO_DEVICE = OpDef(
    "ToCopyBackward0",
    _move,
    derivatives={"self": D("source", lambda g, c: g.to(c.source, c.dtype("self")))},
    moves_device=True,
)


def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``type()``: the legacy type name (``torch.cuda.FloatTensor`` on 'cuda'); ``type(t)`` of a
    dtype, a legacy type (``torch.FloatTensor``, ``torch.Tensor``) or its name: the tensor
    converted to it (itself when nothing changes), onto the type's device type."""
    for key in kwargs:
        if key not in ("memory_format", "async"):
            raise TypeError(f"type() got an unexpected keyword argument '{key}'")
    if dtype is None:
        name = dtypes.legacy_name(self.dtype)
        return name.replace("torch.", "torch.cuda.", 1) if self.device.type == "cuda" else name
    if isinstance(dtype, dtypes.dtype):
        return to(self, dtype)
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(dtype, type):
        name = _type_name_of(dtype)
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    target, device_type = _parse_type_name(name)
    return to(self, self.device if device_type == self.device.type else device_type, target)


def _type_name_of(cls: type) -> str:
    """A class's name as torch's ``type()`` reads it (its C ``tp_name``)."""
    if cls is Tensor:
        return "torch.Tensor"
    if isinstance(cls, tensortype):
        return f"{cls.__module__}.{cls.__name__}"
    torch_name = getattr(cls, "_torch_type_name", None)
    if isinstance(torch_name, str):
        return torch_name
    heap_type = cls.__flags__ & (1 << 9)  # a Python class: its own name; a C one: qualified
    return cls.__name__ if heap_type or cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _parse_type_name(name: str) -> tuple[dtypes.dtype, str]:
    """torch's options_from_string: a legacy type's name as its dtype and device type."""
    if name == "torch.Tensor":
        return dtypes.get_default_dtype(), "cpu"
    for prefix, device_type in (("torch.cuda.", "cuda"), ("torch.", "cpu")):
        if name.startswith(prefix) and name[len(prefix) :] in dtypes._BY_LEGACY:
            return dtypes._BY_LEGACY[name[len(prefix) :]], device_type
    raise ValueError(f"invalid type: '{name}'")


def _caster(d: dtypes.dtype) -> Any:
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, d)

    return cast


for _name, _dtype in {
    "float": dtypes.float32, "double": dtypes.float64, "half": dtypes.float16, "bfloat16": dtypes.bfloat16,
    "long": dtypes.int64, "int": dtypes.int32, "short": dtypes.int16, "bool": dtypes.bool_,
    "byte": dtypes.uint8, "char": dtypes.int8,
}.items():  # fmt: skip
    api.method(_name)(_caster(_dtype))
api.method("to")(to)
api.method("type")(type_)


@api.method("type_as", tensor="other")
def type_as(self: Tensor, other: Tensor) -> Tensor:
    return type_(self, type_(other))  # torch: self.type(other.type())


@api.method("cpu")
def cpu(self: Tensor) -> Tensor:
    return to(self, "cpu")


@api.method("cuda")
def cuda(self: Tensor, device: Any = None, **kwargs: Any) -> Tensor:
    return to(self, _cuda_device(device))


@api.method("is_floating_point")
def is_floating_point(self: Tensor) -> bool:
    return self.dtype.is_floating_point


for _name in ("new", "new_tensor", "new_zeros", "new_ones", "new_full", "new_empty"):
    api.method(_name)(getattr(_new, _name))


def _random_fill(sample: Any) -> Any:
    """In-place random fill (``uniform_``/``normal_`` ...) from torch's stream: no graph, versioned.
    The numbers come from torch's CPU stream (impl._random, numpy) and are copied to the device."""

    def method(self: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
        ip.check_inplace(self)
        values = sample(
            generator or _random.default_generator, tuple(self.shape), self._data.dtype, *args, **kwargs
        )
        self._data[...] = namespace_of(self._data).asarray(values)
        self._vc.bump()
        return self

    return method


def _uniform(g: Any, shape: tuple, dt: Any, a: float = 0.0, b: float = 1.0) -> Any:
    return _random.uniform(shape, dt, a, b, gen=g)


def _random_ints(g: Any, shape: tuple, dt: Any, low: int | None = None, high: int | None = None) -> Any:
    if low is None and high is None:
        return _random.random_full(shape, dt, gen=g)
    if high is None:
        low, high = 0, low
    return _random.randint(low, high, shape, dt, gen=g)


def _require_float(kind: str, dt: Any, spelled: Any) -> None:
    """torch's error of a continuous distribution's fill of a non-floating dtype (named by ``spelled``)."""
    if dt.kind != "f" and dt != dtypes.bfloat16.np:
        raise RuntimeError(
            f"{kind} distribution is a continuous probability distribution. dtype must be a floating "
            f"point but you specified {spelled(dtypes.from_numpy_dtype(dt))}"
        )


def _exponential(g: Any, shape: tuple, dt: Any, lambd: float = 1.0) -> Any:
    _require_float("Exponential", dt, dtypes.scalar_type)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _random.exponential(shape, dt, lambd, gen=g)


def _cauchy(g: Any, shape: tuple, dt: Any, median: float = 0.0, sigma: float = 1.0) -> Any:
    _require_float("Cauchy", dt, lambda d: dtypes.CPP_NAMES[d.name])
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _random.cauchy(shape, dt, median, sigma, gen=g)


def _log_normal(g: Any, shape: tuple, dt: Any, mean: float = 1.0, std: float = 2.0) -> Any:
    if dt.kind != "f" and dt != dtypes.bfloat16.np:
        raise dtypes.kernel_missing("log_normal_cpu", dtypes.from_numpy_dtype(dt))
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _random.log_normal(shape, dt, mean, std, gen=g)


def _geometric(g: Any, shape: tuple, dt: Any, p: float) -> Any:
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if dt == np.bool_:
        raise dtypes.kernel_missing("geometric_cpu", dtypes.bool_)
    return _random.geometric(shape, dt, p, gen=g)


api.method("uniform_")(_random_fill(_uniform))
api.method("random_")(_random_fill(_random_ints))
api.method("exponential_")(_random_fill(_exponential))
api.method("cauchy_")(_random_fill(_cauchy))
api.method("log_normal_")(_random_fill(_log_normal))
api.method("geometric_")(_random_fill(_geometric))
api.method("multinomial")(_creation.multinomial)


NUMBERS = (int, float, complex, np.number, np.bool_)


def _tensor_argument(name: str, fn: Any, argument: str, numbers: bool) -> Any:
    """``fn`` as method ``name``, refusing an argument that is neither a tensor nor (if ``numbers``) a
    number with torch's TypeError (the table's own error would word the function form)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if args or argument in kwargs:
            value = args[0] if args else kwargs[argument]
            if not isinstance(value, Tensor) and not (numbers and isinstance(value, NUMBERS)):
                where = f"argument '{argument}' (position 1)" if args else f"argument '{argument}'"
                raise TypeError(f"{name}(): {where} must be Tensor, not {type_name(value)}")
        return fn(self, *args, **kwargs)

    return method


def _tensor_or_number(name: str, fn: Any, argument: str) -> Any:
    """``fn`` as method ``name`` of two signatures, ``(Tensor argument)`` and ``(Number argument)``
    (or those ``OVERLOADS`` lists for it): a lone argument that is neither raises torch's "invalid
    combination" TypeError."""
    if name in OVERLOADS:
        overloads = signatures_of(fn, name, method=True)
    else:
        overloads = [_Signature(f"(Tensor {argument})"), _Signature(f"(Number {argument})")]

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if len(args) + len(kwargs) == 1 and (args or argument in kwargs):
            value = args[0] if args else kwargs[argument]
            if not isinstance(value, (Tensor, *NUMBERS)):
                raise _invalid_combination(name, overloads, args, kwargs)
        return fn(self, *args, **kwargs)

    return method


def _parsed_as_method(name: str, fn: Any, spellings: Spellings | None = None) -> Any:
    """``fn`` as Tensor method ``name`` whose argument-parser TypeError (raised by ``invalid_call``
    for the function) is worded as torch's method parser words it (``method_error``), taking
    NumPy's spellings of its parameters (``x.sum(axis=0)``) as torch's parser does."""
    function = getattr(fn, "__name__", name)
    spellings = spellings or Spellings(fn, name, method=True)
    targets = spellings.targets
    checks = method_precheck(api.METHODS.get(name, fn), name)

    takes_nothing = len(inspect.signature(fn).parameters) == 1  # torch binds it METH_NOARGS

    def recast(error: TypeError, self: Tensor, args: tuple, kwargs: dict) -> TypeError:
        new = reparse(error, fn, name, args, kwargs, method=True)
        return method_error(named(error, fn, name), self, name, function) if new is error else new

    @functools.wraps(fn)
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if targets and kwargs and not NUMPY_ALIASES.isdisjoint(kwargs):
            kwargs = spellings.renamed(len(args) + 1, kwargs)
        if checks is not None:
            args, kwargs = checks.check(args, kwargs)
        try:
            return fn(self, *args, **kwargs)
        except TypeError as error:
            if takes_nothing and (args or kwargs):  # Python's words for a C method taking nothing
                words = "keyword arguments" if kwargs else f"arguments ({len(args)} given)"
                raise TypeError(f"TensorBase.{name}() takes no {words}") from None
            new = recast(error, self, args, kwargs)
            if new is error:
                raise
            raise new from None

    op = vars(fn).get("unary_op") if not hasattr(fn, "__wrapped__") else None
    if op is None:
        return method

    @functools.wraps(fn)
    def unary_method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        """``x.<name>()`` of a unary op's function (``fn(x)`` is ``op._call((x,), {})``) without
        the function's frame; with arguments, the method above (which refuses them as torch)."""
        if args or kwargs:
            return method(self, *args, **kwargs)
        try:
            return op._call((self,), {})
        except TypeError as error:
            new = recast(error, self, (), {})
            if new is error:
                raise
            raise new from None

    return unary_method


T_DEPRECATED = {
    "n-d": (
        "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
        "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
        "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. (Triggered "
        "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)"
    ),
    "0-d": (
        "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases. (Triggered "
        "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)"
    ),
}


def reversed_dims(self: Tensor) -> Tensor:
    """``x.T``: the dimensions reversed; torch's deprecation warning, once, when ``x`` is not 2-D."""
    n = self.dim()
    if n != 2:
        kind = "0-d" if n == 0 else "n-d"
        warn_once(f"T {kind}", T_DEPRECATED[kind])  # torch's TORCH_WARN_ONCE
    return permute_method(self, *reversed(range(n)))


def adjoint(self: Tensor) -> Tensor:
    """``x.H``: the (conjugate) transpose of a matrix; torch rejects other ranks but 0-d (``x``
    itself, with a once-per-process deprecation warning)."""
    n = self.dim()
    if n == 0:
        warn_once(
            "H 0-d",
            "Tensor.H is deprecated on 0-D tensors. Consider using x.conj(). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4335.)",
        )
        return self
    if n != 2:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
    return transpose(self, 0, 1)


def _regenerate_grad_fn(self: Tensor) -> None:
    """A stale view's grad_fn made anew: an as_strided node onto its base's new history (see
    ``Tensor.grad_fn``)."""
    if self._creation_meta:
        raise view_rebase_error(self, indirect=True)
    with grad_mode.recording():
        fresh = as_strided(self._base_, tuple(self.shape), self.stride(), self.storage_offset())
    ip._move_retain_grad(self, fresh._grad_fn_)  # other hooks stay with the old node, as torch's
    self._grad_fn_, self._output_nr = fresh._grad_fn_, 0
    self._view_version = self._vc.value


def _operator(fn: Any) -> Any:
    """A binary operator: an operand that is neither a tensor nor a number gives NotImplemented,
    so Python raises its own TypeError (``unsupported operand type(s) for +``) and ``x == None``
    is False, as with torch. An operator that checks its operand itself (``_checks_operands``)
    stays as it is."""
    if getattr(fn, "_checks_operands", False):
        return fn

    def operator(self: Tensor, other: Any) -> Any:
        if isinstance(other, NOT_OPERANDS):
            return NotImplemented
        return fn(self, other)

    return operator


def bind() -> None:
    """Set every declared method on Tensor, with torch's argument checks."""
    Tensor._regenerate_grad_fn = _regenerate_grad_fn
    for name, fn in api.FUNCTIONS.items():
        if inspect.isfunction(fn):
            api.FUNCTIONS[name] = numpy_names(fn, name)
    for name, fn in api.METHODS.items():
        spellings = Spellings(fn, name, method=True)
        if name in api.OPERATORS:
            fn = _operator(fn)
        if name in api.TENSOR_ARGUMENTS:
            fn = _tensor_argument(name, fn, *api.TENSOR_ARGUMENTS[name])
        elif name in api.TENSOR_OR_NUMBER:
            fn = _tensor_or_number(name, fn, api.TENSOR_OR_NUMBER[name])
        if not name.startswith("__"):
            fn = _parsed_as_method(name, fn, spellings)
        setattr(Tensor, name, fn)
    Tensor.T = property(reversed_dims)
    Tensor.mT = property(lambda self: transpose(self, -2, -1))
    Tensor.H = property(adjoint)
    Tensor.mH = property(matrix_adjoint)
    Tensor.real = property(complex_ops.real, complex_ops.set_real)
    Tensor.imag = property(complex_ops.imag, complex_ops.set_imag)
