"""Binds the functional API to Tensor methods and operators (``x.sum()``, ``x + y``, ``x[i] = v``),
plus conversions (``to``/``type``/``float()`` ...) and the in-place method forms."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from impl import _creation, _new, _random, dtypes
from impl import _grad_mode as grad_mode
from impl._layout import copy_like, new_like
from impl._legacy import tensortype
from impl._names import type_name
from impl._ops import binary_math as bm
from impl._ops import elementwise as ew
from impl._ops import functions as F
from impl._ops import inplace as ip
from impl._ops import inplace_views, reductions_more, scatter, shapes, sorting, special, stacking, unary_math
from impl._ops import pointwise_ternary as pt
from impl._ops import reductions as rd
from impl._ops.indexing import MASKED_FILL, MASKED_FILL_TENSOR
from impl._ops.table import NOT_OPERANDS, D, OpDef, apply
from impl._signatures import described, method_error
from impl._tensor import Tensor, view_rebase_error
from impl._warn import warn_once
from impl._xp import device as _device
from impl._xp import namespace_for, namespace_of, transferred

TO_COPY = OpDef(
    "ToCopyBackward0",
    copy_like,
    derivatives={"self": D("", lambda g, c: g.to(c.dtype("self")))},
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
    if dev is not None:
        xp = namespace_for(_device(dev))  # (refuses a device impl cannot reach, moving or not)
        if _device(dev).type != self.device.type:
            return apply(TO_DEVICE, self, target=xp, source=str(self.device), dtype=target.np)
    if target is not self.dtype:
        return apply(TO_COPY, self, dtype=target.np)
    if copy:
        return apply(TO_COPY, self, dtype=self._data.dtype)
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


def _operator(fn: Any) -> Any:
    """A binary operator: an operand that is neither a tensor nor a number gives NotImplemented,
    so Python raises its own TypeError (``unsupported operand type(s) for +``) and ``x == None``
    is False, as with torch."""

    def operator(self: Tensor, other: Any) -> Any:
        if isinstance(other, NOT_OPERANDS):
            return NotImplemented
        return fn(self, other)

    return operator


def _inplace(fn: Any) -> Any:
    """The in-place method form of a binary/unary table op: ``x.add_(y)``."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        op, others, attrs = fn(self, *args, **kwargs)
        return ip.apply_inplace(op, self, *others, **attrs)

    return method


def _invert(self: Tensor) -> Tensor:
    """``~t``: bitwise_not, which torch's operator refuses for floating tensors first."""
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return F.bitwise_not(self)


def _rev(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


def _binary_inplace(op: OpDef, promote_alpha: bool = False) -> Any:
    def spec(self: Tensor, other: Any, *, alpha: Any = 1) -> tuple:
        return op, (other,), ({"alpha": alpha} if promote_alpha else {})

    return spec


def _div_spec(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> tuple:
    """``x.div_(other, rounding_mode=)``: div_'s own op when rounding (DivBackward2)."""
    if rounding_mode is None:
        return ew.DIV, (other,), {}
    F.check_rounding_mode(rounding_mode)
    return ew.DIV_MODE, (other,), {"rounding_mode": rounding_mode}


def _sub_spec(self: Tensor, other: Any, *, alpha: Any = 1) -> tuple:
    ew.check_bool_subtraction(self, other)
    return ew.SUB, (other,), {"alpha": alpha}


def _pow_spec(self: Tensor, exponent: Any) -> tuple:
    if isinstance(exponent, Tensor):
        return ew.POW_TT, (exponent,), {}
    negative = isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0
    if not negative:  # the kernel refuses a negative integer power of integers, before this cast
        ip._check_cast(dtypes.result_type(self, exponent), self.dtype)  # x.pow_(0.5) of an integer x
    return ew.POW_TS, (), {"exponent": exponent}


def _masked_fill_spec(self: Tensor, mask: Tensor, value: Any) -> tuple:
    F.check_masked_fill(self, mask, in_place=True)
    if isinstance(value, Tensor):
        F.check_fill_value(value)
        return MASKED_FILL_TENSOR, (value,), {"mask": mask}
    return MASKED_FILL, (), {"mask": mask, "value": value}


def _unary_spec(op: OpDef) -> Any:
    return lambda self: (op, (), {})


def _size_arg(fn: Any) -> Any:
    return lambda self, *shape: fn(self, *shape)


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


def _normal(g: Any, shape: tuple, dt: Any, mean: float = 0.0, std: float = 1.0) -> Any:
    return _random.normal(shape, dt, mean, std, gen=g)


def _bernoulli(g: Any, shape: tuple, dt: Any, p: float = 0.5) -> Any:
    return (_random.uniform(shape, np.float64, gen=g) < p).astype(dt)


def _random_ints(g: Any, shape: tuple, dt: Any, low: int | None = None, high: int | None = None) -> Any:
    if low is None and high is None:
        return _random.random_full(shape, dt, gen=g)
    if high is None:
        low, high = 0, low
    return _random.randint(low, high, shape, dt, gen=g)


def _exponential(g: Any, shape: tuple, dt: Any, lambd: float = 1.0) -> Any:
    if dt.kind != "f" and dt != dtypes.bfloat16.np:
        name = dtypes.scalar_type(dtypes.from_numpy_dtype(dt))
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a floating "
            f"point but you specified {name}"
        )
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _random.exponential(shape, dt, lambd, gen=g)


METHODS: dict[str, Any] = {
    # arithmetic and math
    "add": F.add,
    "sub": F.sub,
    "mul": F.mul,
    "div": F.div,
    "true_divide": F.div,
    "neg": F.neg,
    "pow": F.pow,
    "reciprocal": F.reciprocal,
    "exp": F.exp,
    "erf": special.erf,
    "erfc": special.erfc,
    "log": F.log,
    "sqrt": F.sqrt,
    "sin": F.sin,
    "cos": F.cos,
    "tanh": F.tanh,
    "sigmoid": F.sigmoid,
    "relu": F.relu,
    "abs": F.abs,
    "sign": F.sign,
    "sgn": F.sgn,
    "clamp": F.clamp,
    "clip": F.clamp,
    "maximum": F.maximum,
    "minimum": F.minimum,
    "floor": F.floor,
    "ceil": F.ceil,
    "trunc": F.trunc,
    "clone": F.clone,
    "isfinite": F.isfinite,
    "isnan": F.isnan,
    "multiply": F.mul,
    "subtract": F.sub,
    "divide": F.div,
    "negative": F.neg,
    "eq": F.eq,
    "ne": F.ne,
    "lt": F.lt,
    "le": F.le,
    "gt": F.gt,
    "ge": F.ge,
    "equal": F.equal,
    "logical_and": F.logical_and,
    "logical_or": F.logical_or,
    "logical_not": F.logical_not,
    "logical_xor": F.logical_xor,
    "bitwise_and": F.bitwise_and,
    "bitwise_or": F.bitwise_or,
    "bitwise_xor": F.bitwise_xor,
    "bitwise_not": F.bitwise_not,
    "allclose": F.allclose,
    "where": lambda self, cond, other: F.where(cond, self, other),
    # reductions
    "sum": F.sum,
    "mean": F.mean,
    "prod": F.prod,
    "cumsum": F.cumsum,
    "cumprod": F.cumprod,
    "max": F.max,
    "min": F.min,
    "var": F.var,
    "std": F.std,
    "amax": F.amax,
    "amin": F.amin,
    "square": F.square,
    "argmax": F.argmax,
    "argmin": F.argmin,
    "softmax": F.softmax,
    "log_softmax": F.log_softmax,
    # products
    "matmul": F.matmul,
    "mm": F.mm,
    "bmm": F.bmm,
    "dot": F.dot,
    "mv": F.mv,
    "addmm": F.addmm,
    "trace": F.trace,
    "outer": rd.outer,
    # shape and views
    "view": F.view,
    "reshape": F.reshape,
    "view_as": F.view_as,
    "reshape_as": F.reshape_as,
    "t": F.t,
    "transpose": F.transpose,
    "swapaxes": F.transpose,
    "permute": F.permute_method,
    "flip": F.flip_method,
    "expand": F.expand,
    "expand_as": F.expand_as,
    "squeeze": F.squeeze,
    "unsqueeze": F.unsqueeze,
    "flatten": F.flatten,
    "contiguous": F.contiguous,
    "select": F.select,
    "narrow": F.narrow,
    "as_strided": F.as_strided,
    "unbind": F.unbind,
    "split": F.split,
    "chunk": F.chunk,
    # indexing
    "gather": F.gather,
    "index_select": F.index_select,
    "index_fill": F.index_fill,
    "masked_scatter": F.masked_scatter,
    "masked_fill": F.masked_fill,
    "masked_select": F.masked_select,
    "__getitem__": F.getitem,
    "__setitem__": F.setitem,
    # conversions
    "to": to,
    "type": type_,
    "float": _caster(dtypes.float32),
    "double": _caster(dtypes.float64),
    "half": _caster(dtypes.float16),
    "bfloat16": _caster(dtypes.bfloat16),
    "long": _caster(dtypes.int64),
    "int": _caster(dtypes.int32),
    "short": _caster(dtypes.int16),
    "bool": _caster(dtypes.bool_),
    "byte": _caster(dtypes.uint8),
    "char": _caster(dtypes.int8),
    "type_as": lambda self, other: type_(self, type_(other)),  # torch: self.type(other.type())
    "cpu": lambda self: to(self, "cpu"),
    "cuda": lambda self, device=None, **kw: to(self, _cuda_device(device)),
    "new": _new.new,
    "new_tensor": _new.new_tensor,
    "new_zeros": _new.new_zeros,
    "new_ones": _new.new_ones,
    "new_full": _new.new_full,
    "new_empty": _new.new_empty,
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    # operators
    "__add__": _operator(F.add),
    "__radd__": _operator(F.add),
    "__sub__": _operator(F.sub),
    "__rsub__": _operator(lambda self, o: F.rsub(self, o)),
    "__mul__": _operator(F.mul),
    "__rmul__": _operator(F.mul),
    "__truediv__": _operator(F.div),
    "__rtruediv__": _operator(lambda self, o: F.mul(F.reciprocal(self), o)),
    "__pow__": _operator(F.pow),
    "__rpow__": _operator(lambda self, o: F.pow(o, self)),
    "__neg__": F.neg,
    "__matmul__": _operator(F.matmul),
    "__rmatmul__": _operator(lambda self, o: F.matmul(o, self)),
    "__abs__": F.abs,
    "__eq__": _operator(F.eq),
    "__ne__": _operator(F.ne),
    "__lt__": _operator(F.lt),
    "__le__": _operator(F.le),
    "__gt__": _operator(F.gt),
    "__ge__": _operator(F.ge),
    "__and__": _operator(F.bitwise_and),
    "__or__": _operator(F.bitwise_or),
    "__xor__": _operator(F.bitwise_xor),
    "__invert__": _invert,
    "__rand__": _operator(F.bitwise_and),
    "__ror__": _operator(F.bitwise_or),
    "__rxor__": _operator(F.bitwise_xor),
    "__floordiv__": _operator(F.floor_divide),
    "__rfloordiv__": _operator(F.rfloor_divide),
    "floor_divide": F.floor_divide,
    # in place
    "copy_": ip.copy_,
    "fill_": ip.fill_,
    "zero_": ip.zero_,
    "clamp_": ip.clamp_,
    "relu_": ip.relu_,
    "add_": _inplace(_binary_inplace(ew.ADD, True)),
    "sub_": _inplace(_sub_spec),
    "mul_": _inplace(_binary_inplace(ew.MUL)),
    "div_": _inplace(_div_spec),
    "pow_": _inplace(_pow_spec),
    "masked_fill_": _inplace(_masked_fill_spec),
    "exp_": _inplace(_unary_spec(ew.EXP)),
    "erf_": _inplace(_unary_spec(special.ERF)),
    "erfc_": _inplace(_unary_spec(special.ERFC)),
    "neg_": _inplace(_unary_spec(ew.NEG)),
    "sigmoid_": _inplace(_unary_spec(ew.SIGMOID)),
    "tanh_": _inplace(_unary_spec(ew.TANH)),
    "sqrt_": _inplace(_unary_spec(ew.SQRT)),
    "abs_": _inplace(_unary_spec(ew.ABS)),
    "__iadd__": _inplace(_binary_inplace(ew.ADD, True)),
    "__isub__": _inplace(_sub_spec),
    "uniform_": _random_fill(_uniform),
    "normal_": _random_fill(_normal),
    "bernoulli_": _random_fill(_bernoulli),
    "random_": _random_fill(_random_ints),
    "exponential_": _random_fill(_exponential),
    "multinomial": _creation.multinomial,
    "__imul__": _inplace(_binary_inplace(ew.MUL)),
    "__itruediv__": _inplace(_binary_inplace(ew.DIV)),
}
METHODS.update(sorting.METHODS)  # sort, argsort, msort, topk, kthvalue, median
METHODS.update(unary_math.METHODS)  # unary math
METHODS.update({name: _inplace(_unary_spec(op)) for name, op in unary_math.INPLACE_OPS.items()})
METHODS.update({name: _operator(fn) if name.startswith("__") else fn for name, fn in bm.METHODS.items()})
METHODS.update({name: _inplace(spec) for name, spec in bm.INPLACE.items()})
METHODS.update(shapes.METHODS)  # shape ops (impl/_ops/shapes.py)
METHODS.update(reductions_more.METHODS)  # logsumexp, nansum, nanmean, all, any, count_nonzero
METHODS.update(stacking.METHODS)  # splits (impl/_ops/stacking.py)
METHODS.update(pt.METHODS)  # lerp, addcmul, addcdiv
METHODS.update({name: _inplace(spec) for name, spec in pt.INPLACE.items()})
METHODS.update(inplace_views.METHODS)  # t_, transpose_, squeeze_ ... (impl/_ops/inplace_views.py)
METHODS.update(scatter.METHODS)  # scatter, scatter_add and their in-place forms (impl/_ops/scatter.py)


# Methods whose argument after self torch's argument parser types as Tensor: its name, and whether
# a Python number passes too (torch wraps it). Anything else raises torch's TypeError as the
# method words it, the position counted after self: "add(): argument 'other' (position 1) ...".
TENSOR_ARGUMENTS: dict[str, tuple[str, bool]] = {
    **dict.fromkeys(["add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_"], ("other", True)),
    **dict.fromkeys(
        ["maximum", "minimum", "logical_and", "logical_or", "logical_xor", "matmul", "expand_as", "view_as",
         "reshape_as", "type_as", "equal", "allclose"],
        ("other", False),
    ),
    "mm": ("mat2", False),
    "bmm": ("mat2", False),
    "dot": ("tensor", False),
    "mv": ("vec", False),
    "outer": ("vec2", False),
    **bm.TENSOR_ARGUMENTS,
}
# Methods torch declares twice, for a Tensor and for a Number: anything else fails both signatures.
TENSOR_OR_NUMBER = {
    **dict.fromkeys(["pow", "pow_"], "exponent"),
    **dict.fromkeys(["eq", "ne", "lt", "le", "gt", "ge", "multiply", "true_divide"], "other"),
    **bm.TENSOR_OR_NUMBER,
}
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
    """``fn`` as method ``name`` of two signatures, ``(Tensor argument)`` and ``(Number argument)``:
    a lone argument that is neither raises torch's "invalid combination" TypeError."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if len(args) + len(kwargs) == 1 and (args or argument in kwargs):
            value = args[0] if args else kwargs[argument]
            if not isinstance(value, (Tensor, *NUMBERS)):
                if args:
                    got, bad = type_name(value), f"!{described(value)}!"
                else:  # a keyword argument is shown named, with a trailing comma
                    got, bad = f"{argument}={type_name(value)}, ", f"!{argument}={described(value)}!, "
                reason = f"      didn't match because some of the arguments have invalid types: ({bad})\n"
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                    f"of:\n * (Tensor {argument})\n{reason} * (Number {argument})\n{reason}"
                )
        return fn(self, *args, **kwargs)

    return method


def _parsed_as_method(name: str, fn: Any) -> Any:
    """``fn`` as Tensor method ``name`` whose argument-parser TypeError (raised by ``invalid_call``
    for the function) is worded as torch's method parser words it (``method_error``)."""
    function = getattr(fn, "__name__", name)

    @functools.wraps(fn)
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except TypeError as error:
            recast = method_error(error, self, name, function)
            if recast is error:
                raise
            raise recast from None

    return method


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
    return F.permute_method(self, *reversed(range(n)))


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
    return F.transpose(self, 0, 1)


def _regenerate_grad_fn(self: Tensor) -> None:
    """A stale view's grad_fn made anew: an as_strided node onto its base's new history (see
    ``Tensor.grad_fn``)."""
    if self._creation_meta:
        raise view_rebase_error(self, indirect=True)
    with grad_mode.recording():
        fresh = F.as_strided(self._base, tuple(self.shape), self.stride(), self.storage_offset())
    ip._move_retain_grad(self, fresh._grad_fn)  # other hooks stay with the old node, as torch's
    self._grad_fn, self._output_nr = fresh._grad_fn, 0
    self._view_version = self._vc.value


def bind() -> None:
    Tensor._regenerate_grad_fn = _regenerate_grad_fn
    for name, fn in METHODS.items():
        if name in TENSOR_ARGUMENTS:
            fn = _tensor_argument(name, fn, *TENSOR_ARGUMENTS[name])
        elif name in TENSOR_OR_NUMBER:
            fn = _tensor_or_number(name, fn, TENSOR_OR_NUMBER[name])
        if not name.startswith("__"):
            fn = _parsed_as_method(name, fn)
        setattr(Tensor, name, fn)
    Tensor.T = property(reversed_dims)
    Tensor.mT = property(lambda self: F.transpose(self, -2, -1))
    Tensor.H = property(adjoint)
