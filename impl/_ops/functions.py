"""The functional API (``torch.add``, ``torch.sum`` ...): argument handling in torch's style,
then one ``apply`` of an op from the table. Tensor methods are bound to these (impl._methods)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import _layout, dtypes
from impl._graph import Node, input_meta
from impl._names import type_name
from impl._ops import elementwise as ew
from impl._ops import indexing as ix
from impl._ops import inplace as ip
from impl._ops import views as vw
from impl._ops.indexing import cat, tensor_list
from impl._ops.table import NOT_OPERANDS, OpDef, _view_creation_meta, apply, broadcast_mismatch
from impl._signatures import invalid_call
from impl._tensor import Tensor, _dim_list, _wrap_dim, zeros_of
from impl._xp import namespace_of

_ABSENT: Any = object()  # an argument not given (where torch tells None given from none)


def _t(x: Any) -> bool:
    return isinstance(x, Tensor)


# -- arithmetic --------------------------------------------------------------------------------
# The hottest function forms (every ``x + y``, ``x * y`` and unary math) call their op's generated
# call directly: ``apply(op, *tensors, **attrs)`` is that call behind one more frame.
@api.function("add")
@api.method("add", tensor="other", numbers=True)
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    return ew.ADD._call((input, other), {"alpha": alpha})


@api.function("sub", "subtract")
@api.method("sub", tensor="other", numbers=True)
@api.method("subtract")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    ew.check_bool_subtraction(input, other)
    return apply(ew.SUB, input, other, alpha=alpha)


@api.function("rsub")
def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    if not isinstance(input, Tensor) or isinstance(other, NOT_OPERANDS):
        raise invalid_call(rsub, locals())
    ew.check_bool_subtraction(other, input)
    if _t(other):
        return apply(ew.RSUB, input, other, alpha=alpha)
    return apply(ew.RSUB_NUMBER, input, other=other, alpha=alpha)


@api.function("mul", "multiply")
@api.method("mul", tensor="other", numbers=True)
@api.method("multiply", tensor_or_number="other")
def mul(input: Any, other: Any) -> Tensor:
    if getattr(input, "_efficient_zero", False) or getattr(other, "_efficient_zero", False):
        return _efficient_zero_of(ew.MUL, input, other)
    return ew.MUL._call((input, other), {})


def _efficient_zero_of(op: OpDef, *args: Any) -> Tensor:
    """A product or quotient of torch's efficient zero tensor: recorded as usual, but its value is
    zeros whatever the other operand holds (inf and nan included), and it is one again."""
    with np.errstate(all="ignore"):
        out = apply(op, *args)
    out._data = namespace_of(out._data).zeros_like(out._data)
    out._efficient_zero = True
    return out


@api.function("div", "divide", "true_divide")
@api.method("div", tensor="other", numbers=True)
@api.method("divide")
@api.method("true_divide", tensor_or_number="other")
def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if getattr(input, "_efficient_zero", False) and rounding_mode is None:
        return _efficient_zero_of(ew.DIV, input, other)
    if rounding_mode is not None:
        check_rounding_mode(rounding_mode)
        return apply(ew.DIV_MODE, input, other, rounding_mode=rounding_mode)
    return apply(ew.DIV, input, other)


def check_rounding_mode(rounding_mode: Any) -> None:
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )


@api.variants("floor_divide")
def floor_divide(input: Any, other: Any) -> Tensor:
    """Python's floor division (torch's div_floor), without a derivative (NotImplemented)."""
    if not isinstance(input, Tensor) or isinstance(other, NOT_OPERANDS):
        raise invalid_call(floor_divide, locals())
    if _t(other) and other.requires_grad:
        if input.requires_grad:
            return apply(ew.FLOOR_DIVIDE, input, other)
        return _floor_divide_one(other, input, reverse=True)
    return _floor_divide_one(input, other, reverse=False)


def _floor_divide_one(t: Tensor, value: Any, reverse: bool) -> Tensor:
    """``t // value`` (or ``value // t``) with one edge, ``t``'s: torch's node for an op without a
    derivative links only the inputs that require grad. ``value``, a number or a tensor, is an
    attribute in the result's dtype."""
    dt = dtypes.result_type(t, value)
    x = t if dt is t.dtype else t.to(dt)
    array = value._data.astype(dt.np) if _t(value) else namespace_of(t._data).asarray(value, dtype=dt.np)
    return apply(ew.FLOOR_DIVIDE_SCALAR, x, other=array, reverse=reverse)


def rfloor_divide(input: Tensor, other: Any) -> Tensor:
    """``other // input`` for a number ``other`` (Tensor.__rfloordiv__)."""
    return _floor_divide_one(input, other, reverse=True)


true_divide = divide = div
multiply = mul
subtract = sub


@api.function("neg", "negative")
@api.method("neg", "negative", "__neg__")
def neg(input: Tensor) -> Tensor:
    return apply(ew.NEG, input)


negative = neg


@api.variants("reciprocal")
def reciprocal(input: Tensor) -> Tensor:
    return apply(ew.RECIPROCAL, input)


@api.function("pow")
@api.method("pow", tensor_or_number="exponent")
def pow(input: Any, exponent: Any) -> Tensor:
    if not _t(input):
        if not _t(exponent) or isinstance(input, NOT_OPERANDS):
            raise invalid_call(pow, locals())
        dt = dtypes.result_type(input, exponent)
        if dt is not exponent.dtype:  # (-1) ** int tensor stays int; 0.5 ** int tensor is float
            exponent = exponent.to(dt)
        return apply(ew.POW_ST, exponent, base=input)
    if isinstance(exponent, NOT_OPERANDS):
        raise invalid_call(pow, locals())
    if _t(exponent):
        if dtypes.result_type(input, exponent) is dtypes.bool_:  # torch's CPU pow has no bool kernel
            raise dtypes.kernel_missing("pow", dtypes.bool_)
        return apply(ew.POW_TT, input, exponent)
    dt = dtypes.result_type(input, exponent)
    if dt is not input.dtype:  # an integer tensor to a float power is float, as in torch
        input = input.to(dt)
    return apply(ew.POW_TS, input, exponent=exponent)


def _unary(op: OpDef) -> Any:
    def fn(input: Tensor) -> Tensor:
        return op._call((input,), {})

    return fn


def _declare_unary(op: OpDef, *names: str, inplace: bool = True) -> Any:
    """``torch.<name>(input)``, ``x.<name>()`` and (``inplace``) ``x.<name>_()`` for each name."""
    fn = api.variants(*names)(_unary(op))
    if inplace:
        api.method(*(name + "_" for name in names))(ip.unary_inplace(op))
    return fn


exp, log, sqrt = _declare_unary(ew.EXP, "exp"), _declare_unary(ew.LOG, "log"), _declare_unary(ew.SQRT, "sqrt")
sin, cos = _declare_unary(ew.SIN, "sin"), _declare_unary(ew.COS, "cos")
tanh, sigmoid = _declare_unary(ew.TANH, "tanh"), _declare_unary(ew.SIGMOID, "sigmoid")
relu = _declare_unary(ew.RELU, "relu", inplace=False)  # relu_: impl/_ops/inplace.py
sign, sgn = _declare_unary(ew.SIGN, "sign"), _declare_unary(ew.SGN, "sgn")
floor, ceil = _declare_unary(ew.FLOOR, "floor"), _declare_unary(ew.CEIL, "ceil")
trunc = _declare_unary(ew.TRUNC, "trunc")  # round: unary_math.py
abs = api.function("abs", "absolute")(api.method("abs", "__abs__")(_unary(ew.ABS)))
api.method("abs_")(ip.unary_inplace(ew.ABS))
api.method("neg_")(ip.unary_inplace(ew.NEG))
api.method("reciprocal_")(ip.unary_inplace(ew.RECIPROCAL))


def _named_unary(op: OpDef, name: str) -> Any:
    """A unary op whose node says nothing of its name (a not differentiable one), for the
    errors torch words with it (``isnan(): argument 'input' ...``)."""

    def fn(input: Tensor) -> Tensor:
        if not isinstance(input, Tensor):
            raise invalid_call(fn, locals(), name)
        return apply(op, input)

    return fn


isfinite = api.variants("isfinite")(_named_unary(ew.ISFINITE, "isfinite"))
isnan = api.variants("isnan")(_named_unary(ew.ISNAN, "isnan"))
logical_not = api.variants("logical_not")(_named_unary(ew.LOGICAL_NOT, "logical_not"))
bitwise_not = api.variants("bitwise_not")(_named_unary(ew.NOT, "bitwise_not"))
clone_op = _unary(ew.CLONE)
absolute = abs


@api.variants("clone")
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(clone, locals())
    return clone_op(input)


NOT_BOUNDS = NOT_OPERANDS[1:]  # what clamp refuses as a bound (None means none)


@api.variants("clamp", "clip")
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if not isinstance(input, Tensor) or isinstance(min, NOT_BOUNDS) or isinstance(max, NOT_BOUNDS):
        raise invalid_call(clamp, locals())
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):  # clamp.Tensor (a number bound wrapped)
        operands, attrs = ew.clamp_tensor_operands(input, min, max)
        return apply(ew.CLAMP_TENSOR, *operands, **attrs)
    bounds = [b for b in (min, max) if b is not None]
    dt = dtypes.result_type(input, *bounds)
    if dt is not input.dtype:  # an integer tensor clamped by float bounds is float, as in torch
        input = input.to(dt)
    return apply(ew.CLAMP, input, min=min, max=max)


clip = clamp


@api.variants("maximum", tensor="other")
def maximum(input: Tensor, other: Tensor) -> Tensor:
    return apply(ew.MAXIMUM, input, other)


@api.variants("minimum", tensor="other")
def minimum(input: Tensor, other: Tensor) -> Tensor:
    return apply(ew.MINIMUM, input, other)


@api.function("where")
def where(condition: Tensor, input: Any = _ABSENT, other: Any = _ABSENT) -> Any:
    if (
        not isinstance(condition, Tensor)
        or isinstance(input, NOT_OPERANDS)
        or isinstance(other, NOT_OPERANDS)
        or (input is _ABSENT) != (other is _ABSENT)
    ):
        raise invalid_call(where, locals())
    if input is _ABSENT:
        return tuple(Tensor._from_array(i) for i in condition._data.nonzero())  # numpy or cupy's own
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name.capitalize()}"
        )
    for number in [v for v in (input, other) if not isinstance(v, Tensor)]:  # a one-element fill
        dtypes.check_number(number, dtypes.result_type(input, other), single=True)
    return apply(ew.WHERE, input, other, condition=condition)


def _cmp(op: OpDef, name: str, numbers: bool = True) -> Any:
    """The function ``name`` (a comparison, logical or bitwise op, which torch names in its
    errors); ``numbers``: whether ``other`` may be a Python number (not for the logical ones)."""

    def fn(input: Any, other: Any) -> Tensor:
        refused = isinstance(other, NOT_OPERANDS) or not (numbers or isinstance(other, Tensor))
        if refused or not isinstance(input, Tensor):
            raise invalid_call(fn, locals(), name)
        return apply(op, input, other)

    return fn


eq, ne, lt, le, gt, ge = (
    api.variants(n, tensor_or_number="other")(_cmp(getattr(ew, n.upper()), n))
    for n in ("eq", "ne", "lt", "le", "gt", "ge")
)
_JOINS = ("and", "or", "xor")
logical_and, logical_or, logical_xor = (
    api.variants(f"logical_{n}", tensor="other")(
        _cmp(getattr(ew, f"LOGICAL_{n.upper()}"), f"logical_{n}", numbers=False)
    )
    for n in _JOINS
)
bitwise_and, bitwise_or, bitwise_xor = (
    api.variants(f"bitwise_{n}")(_cmp(getattr(ew, n.upper()), f"bitwise_{n}")) for n in _JOINS
)
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne


@api.variants("equal", tensor="other")
def equal(input: Tensor, other: Tensor) -> bool:
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(equal, locals())
    return tuple(input.shape) == tuple(other.shape) and bool((input._data == other._data).all())


@api.variants("allclose", tensor="other")
def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(allclose, locals())
    xp = namespace_of(input._data)
    return bool(xp.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


# -- reductions --------------------------------------------------------------------------------


# -- views -------------------------------------------------------------------------------------
def _shape_args(shape: tuple) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return shape


@api.method("view")
def view(input: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise NotImplementedError("view(dtype) is not supported")
    size = _layout.infer_size(_shape_args(shape), input.numel())
    return apply(vw.VIEW, input, size=size)


@api.variants("reshape")
def reshape(input: Tensor, *shape: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(reshape, locals())
    size = _layout.infer_size(_shape_args(shape), input.numel())
    strides = _layout.view_strides(tuple(input.shape), input.stride(), size)
    if strides is None:
        return _unsafe_view(apply(ew.CLONE_CONTIGUOUS, input), size)
    return apply(vw.VIEW if input.is_contiguous() else vw.RESHAPE_ALIAS, input, size=size)


@api.method("view_as", tensor="other")
def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, tuple(other.shape))


@api.method("reshape_as", tensor="other")
def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, tuple(other.shape))


@api.function("t")
def t(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(t, locals())
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    return apply(vw.T, input)


@api.function("transpose", "swapaxes", "swapdims")
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(transpose, locals())
    n = input.dim()
    return apply(vw.TRANSPOSE, input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


swapaxes = swapdims = transpose


@api.function("permute")
def permute(input: Tensor, dims: Any) -> Tensor:
    """torch.permute: ``dims`` is one sequence (the method takes them spread too)."""
    if not isinstance(input, Tensor):
        raise invalid_call(permute, locals())
    if not isinstance(dims, (tuple, list)):
        raise TypeError(
            f"permute(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}"
        )
    return permute_method(input, *dims)


@api.method("permute")
def permute_method(input: Tensor, *dims: Any) -> Tensor:
    dims = tuple(_wrap_dim(int(d), input.dim()) for d in _shape_args(dims))
    if len(dims) != input.dim():
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {input.dim()} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(vw.PERMUTE, input, dims=dims)


def _tensor_type(t: Tensor) -> str:
    """How torch's messages name a tensor's type: its legacy class (``torch.FloatTensor``), or for
    bfloat16 and bool, which have none there, ``CPUBFloat16Type``/``CPUBoolType``."""
    if t.dtype in (dtypes.bfloat16, dtypes.bool_):
        return f"{t.device.type.upper()}{dtypes.scalar_type(t.dtype)}Type"
    return f"torch.{'cuda.' if t.device.type == 'cuda' else ''}{t.dtype._legacy}"


@api.method("expand")
def expand(input: Tensor, *sizes: Any) -> Tensor:
    sizes = tuple(int(s) for s in _shape_args(sizes))
    if len(sizes) < input.dim():
        raise RuntimeError(
            f"expand({_tensor_type(input)}{{[{', '.join(map(str, input.shape))}]}}, "
            f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided ({len(sizes)}) must "
            f"be greater or equal to the number of dimensions in the tensor ({input.dim()})"
        )
    if input.dim() == 0 and builtins.any(s < 0 for s in sizes):  # torch multiplies the sizes out first
        raise RuntimeError("numel: integer multiplication overflow")
    lead = len(sizes) - input.dim()
    target = list(sizes)
    for i in reversed(range(len(sizes))):  # torch's inferExpandGeometry checks from the last dim
        s = sizes[i]
        if i < lead:
            if s == -1:
                raise RuntimeError(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                    f"dimension {i}"
                )
            continue
        cur = input.shape[i - lead]
        if s == -1:
            target[i] = cur
        elif cur != 1 and cur != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                f"Tensor sizes: [{', '.join(map(str, input.shape))}]"
            )
    if builtins.any(s < 0 for s in target):  # a new leading dim of negative size
        raise RuntimeError("numel: integer multiplication overflow")
    out = apply(vw.EXPAND, input, size=tuple(target))
    if input._efficient_zero:  # a view of torch's efficient zero tensor is one too
        out._efficient_zero = True
    return out


@api.method("expand_as", tensor="other")
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, tuple(other.shape))


@api.function("squeeze")
def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(squeeze, locals())
    if dim is None:
        return apply(vw.SQUEEZE, input)
    if isinstance(dim, (tuple, list)):
        return apply(vw.SQUEEZE_DIMS, input, dims=_dim_list(dim, input.dim()))
    return apply(vw.SQUEEZE_DIM, input, dim=_wrap_dim(dim, input.dim()))


@api.function("unsqueeze")
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(unsqueeze, locals())
    return apply(vw.UNSQUEEZE, input, dim=_wrap_dim(dim, input.dim() + 1))


@api.variants("flatten")
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(flatten, locals())
    if input.dim() == 0:
        _wrap_dim(start_dim, 0), _wrap_dim(end_dim, 0)
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, input.dim()), _wrap_dim(end_dim, input.dim())
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (-1,) + shape[e + 1 :])


@api.method("contiguous")
def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    return input if input.is_contiguous() else apply(ew.CLONE_CONTIGUOUS, input)


@api.variants("select")
def select(input: Tensor, dim: int, index: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(select, locals())
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    return apply(vw.SELECT, input, dim=d, index=index % size)


@api.variants("narrow")
def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(narrow, locals())
    d = _wrap_dim(dim, input.dim())
    start = start % input.shape[d] if start < 0 else start
    return _slice(input, d, start, start + length, 1)


def _slice(input: Tensor, dim: int, start: int | None, stop: int | None, step: int | None) -> Tensor:
    step = 1 if step is None else step
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = builtins.slice(start, stop, step).indices(input.shape[dim])
    stop = builtins.max(stop, start)
    return apply(vw.SLICE, input, dim=dim, start=start, end=stop, step=step)


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given geometry (the offset by default ``input``'s),
    as torch's as_strided; its backward reads ``input``'s geometry (_as_strided_back)."""
    if not isinstance(input, Tensor):
        raise invalid_call(as_strided, locals())
    size, stride, offset = as_strided_geometry("as_strided", input, size, stride, storage_offset, 1)
    out = apply(
        vw.AS_STRIDED,
        input,
        size=size,
        stride=stride,
        offset=offset,
        in_offset=input.storage_offset(),
        storage=input._storage_array(),
    )
    fn = out._grad_fn
    if fn is not None:  # the storage is the forward's, not the node's to keep
        fn._attrs.pop("storage", None)
    return out


def as_strided_geometry(
    name: str, input: Tensor, size: Any, stride: Any, storage_offset: Any, position: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The arguments of ``as_strided``/``as_strided_`` (``name``) checked as torch checks them,
    in its order: their types (``position``: that of ``size`` in the call), the lengths, the
    strides, the offset, the sizes and the storage's bounds."""
    size = _int_tuple(name, "size", size, position)
    stride = _int_tuple(name, "stride", stride, position + 1)
    if storage_offset is not None and not _is_int(storage_offset):
        where = f"argument 'storage_offset' (position {position + 2})"
        raise TypeError(f"{name}(): {where} must be int, not {type_name(storage_offset)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        shown = ", ".join(map(str, stride))
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: [{shown}]"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        if name == "as_strided_":
            raise RuntimeError("numel: integer multiplication overflow")
        sizes, strides = ", ".join(map(str, size)), ", ".join(map(str, stride))
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes=[{sizes}] and strides=[{strides}]"
        )
    itemsize = input._data.itemsize
    needed = _layout.min_storage_size(size, stride, offset) * itemsize
    available = input._storage_array().size * itemsize
    if 0 not in size and needed > available:
        sizes, strides = ", ".join(map(str, size)), ", ".join(map(str, stride))
        raise RuntimeError(
            f"setStorage: sizes [{sizes}], strides [{strides}], storage offset {offset}, and itemsize "
            f"{itemsize} requiring a storage size of {needed} are out of bounds for storage of size "
            f"{available}"
        )
    return size, stride, offset


def _is_int(value: Any) -> bool:
    """Whether torch's parser takes ``value`` as an int (a bool it does not)."""
    return type(value) is not bool and hasattr(value, "__index__")


def _int_tuple(name: str, argument: str, value: Any, position: int) -> tuple[int, ...]:
    """A ``tuple of ints`` argument, refused as torch's parser refuses it."""
    where = f"{name}(): argument '{argument}' (position {position}) must be tuple of ints"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{where}, not {type_name(value)}")
    for i, item in enumerate(value):
        if not _is_int(item):
            raise TypeError(f"{where}, but found element of type {type_name(item)} at pos {i}")
    return tuple(int(item) for item in value)


class _MultiViewNode(Node):
    """grad_fn shared by the views ``split``/``chunk``/``unbind`` return (one output per view):
    missing gradients are zeros, the pieces are joined back along ``dim``."""

    def __init__(self, dim: int, stacked: bool) -> None:
        super().__init__()
        self.dim, self.stacked = dim, stacked

    def apply(self, grads: tuple) -> tuple:
        if all(g is None for g in grads):
            return (None,)
        parts = [g if g is not None else zeros_of(m) for g, m in zip(grads, self._input_meta, strict=True)]
        return ((stack if self.stacked else cat)(parts, self.dim),)


_MULTI_VIEW_NODES = {
    name: type(name, (_MultiViewNode,), {})
    for name in ("SplitBackward0", "SplitWithSizesBackward0", "UnbindBackward0")
}


def _multi_view(input: Tensor, arrays: list, node_name: str, dim: int, stacked: bool) -> tuple:
    root = input._base if input._base is not None else input
    outs = []
    for a in arrays:
        t = Tensor._from_array(a)
        outs.append(t)
        if input._inference:  # torch tracks no view of an inference tensor (as codegen's views)
            t._inference, t._storage = True, input._storage_array()
            continue
        t._base, t._vc, t._view_version = root, input._vc, input._vc.value
        t._inference = False  # torch's MULTI_OUTPUT_NODE views (see _view_creation_meta)
        t._creation_meta = _view_creation_meta(input, "multiple")
    if grad_mode.is_recording() and input.requires_grad and not input._inference:
        node = _MULTI_VIEW_NODES[node_name](dim, stacked)
        node._next = (input._edge(),)
        node._input_meta = [input_meta(t) for t in outs]
        for i, t in enumerate(outs):
            t._grad_fn, t._output_nr = node, i
    return tuple(outs)


@api.variants("unbind")
def unbind(input: Tensor, dim: int = 0) -> tuple:
    if not isinstance(input, Tensor):
        raise invalid_call(unbind, locals())
    d = _wrap_dim(dim, input.dim())
    arrays = [input._data[(builtins.slice(None),) * d + (i, Ellipsis)] for i in range(input.shape[d])]
    return _multi_view(input, arrays, "UnbindBackward0", d, True)


@api.variants("split")
def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    if not isinstance(input, Tensor):  # torch.split is Python calling the method: what it does
        return input.split(split_size_or_sections, dim)
    d = _wrap_dim(dim, input.dim())
    n = input.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        sizes = [size] * (n // size) + ([n % size] if n % size else [])
        name = "SplitBackward0"
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
        name = "SplitWithSizesBackward0"
    arrays, start = [], 0
    for s in sizes:
        arrays.append(input._data[(builtins.slice(None),) * d + (builtins.slice(start, start + s),)])
        start += s
    return _multi_view(input, arrays, name, d, False)


@api.variants("chunk")
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    if not isinstance(input, Tensor):
        raise invalid_call(chunk, locals())
    n = input.shape[_wrap_dim(dim, input.dim())]
    return split(input, -(-n // chunks), dim)


# -- joining and indexing ----------------------------------------------------------------------
concat = concatenate = api.function("cat", "concat", "concatenate")(cat)


@api.function("stack")
def stack(tensors: Any, dim: int = 0) -> Tensor:
    tensors = tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(tensors[0].shape):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                f"entry 0 and {list(t.shape)} at entry {i}"
            )
    return apply(ix.stack_op(len(tensors)), *tensors, dim=_wrap_dim(dim, tensors[0].dim() + 1))


@api.variants("gather")
def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(index, Tensor)):
        raise invalid_call(gather, locals())
    dim = _wrap_dim(dim, input.dim())
    if index.numel():  # torch checks the dtype and shape of a non-empty index only
        check_index_dtype(index, "gather(): Expected dtype int32/int64 for index")
        check_gather_shape(input, dim, index)
    size = input.shape[dim] if input.dim() else 1
    idx = index._data.reshape(-1)
    outside = idx[(idx < 0) | (idx >= size)]
    if outside.size:
        raise RuntimeError(f"index {int(outside[0])} is out of bounds for dimension {dim} with size {size}")
    return apply(ix.GATHER, input, dim=dim, index=index)


def check_index_dtype(index: Tensor, message: str) -> None:
    """gather and index_select take an int64 or int32 index."""
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(message)


def check_gather_shape(input: Tensor, dim: int, index: Tensor) -> None:
    """gather's index has input's number of dims (a 0-d tensor counts as 1-d) and is no larger
    than input along every dim but ``dim``."""
    if builtins.max(index.dim(), 1) != builtins.max(input.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(index.dim()):
        if d != dim and index.shape[d] > (input.shape[d] if input.dim() else 1):
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be no larger "
                f"than self {list(input.shape)} apart from dimension {dim}"
            )


@api.variants("index_select")
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(index, Tensor)):
        raise invalid_call(index_select, locals())
    dim = _wrap_dim(dim, input.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if not input.dim() and index.numel() != 1:
        n = index.numel()
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {n} value(s)")
    check_index_dtype(index, "index_select(): Expected dtype int32 or int64 for index")
    size = input.shape[dim] if input.dim() else 1
    idx = index._data.reshape(-1)
    outside = idx[(idx < 0) | (idx >= size)]
    if outside.size:
        # torch's CPU kernel checks dim 1 in its gather path (the second message), others up front
        if dim == 1 and input.dim() >= 2:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(outside[0])} axis_dim={size}")
        raise IndexError("index out of range in self")
    return apply(ix.INDEX_SELECT, input, dim=dim, index=index)


@api.variants("masked_fill")
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mask, Tensor)) or isinstance(value, NOT_OPERANDS):
        raise invalid_call(masked_fill, locals())
    check_masked_fill(input, mask, in_place=False)
    if _t(value):
        check_fill_value(value)
        return apply(ix.MASKED_FILL_TENSOR, input, value, mask=mask)
    return apply(ix.MASKED_FILL, input, mask=mask, value=value)


def check_fill_value(value: Tensor, fill: str = "masked_fill_") -> None:
    """A fill's tensor value: one number (its gradient is the sum of the filled ones')."""
    if value.dim() != 0:
        raise RuntimeError(
            f"{fill} only supports a 0-dimensional value tensor, but got tensor with {value.dim()} "
            "dimension(s)."
        )


@api.variants("index_fill")
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) at ``index`` along ``dim``."""
    if not (isinstance(input, Tensor) and isinstance(index, Tensor)) or isinstance(value, NOT_OPERANDS):
        raise invalid_call(index_fill, locals())
    d = _wrap_dim(dim, input.dim())
    if index.dtype is not dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = input.shape[d] if input.dim() else 1
    idx = index._data.reshape(-1)
    outside = idx[(idx < -size) | (idx >= size)]
    if outside.size:
        raise IndexError(f"index {int(outside[0])} is out of bounds for dimension {d} with size {size}")
    if _t(value):
        check_fill_value(value, "index_fill_")
        return apply(ix.INDEX_FILL_TENSOR, input, value, dim=d, index=index)
    return apply(ix.INDEX_FILL, input, dim=d, index=index, value=value)


def check_masked_fill(input: Tensor, mask: Tensor, in_place: bool) -> None:
    """torch's checks, in its order: out of place, the mask and the input broadcast together
    (expand_outplace(mask, self)) before the mask's dtype is looked at; in place, the dtype first,
    then the input and the mask broadcast."""
    shapes = [tuple(input.shape), tuple(mask.shape)] if in_place else [tuple(mask.shape), tuple(input.shape)]
    mismatch = broadcast_mismatch(shapes)
    if mismatch is not None and not in_place:
        raise RuntimeError(mismatch)
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.name.replace('int64', 'long int')}"
        )
    if mismatch is not None:
        raise RuntimeError(mismatch)


@api.variants("masked_select")
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mask, Tensor)):
        raise invalid_call(masked_select, locals())
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    mismatch = broadcast_mismatch([tuple(mask.shape), tuple(input.shape)])
    if mismatch is not None:
        raise RuntimeError(mismatch)
    return apply(ix.MASKED_SELECT, input, mask=mask)


@api.variants("masked_scatter")
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` holds taking ``source``'s elements in order."""
    if not (isinstance(input, Tensor) and isinstance(mask, Tensor) and isinstance(source, Tensor)):
        raise invalid_call(masked_scatter, locals())
    if mask.dtype is not dtypes.bool_:
        found = dtypes.scalar_type(mask.dtype)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {found}")
    if source.dtype is not input.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{dtypes.scalar_type(input.dtype)} and {dtypes.scalar_type(source.dtype)}"
        )
    mismatch = broadcast_mismatch([tuple(input.shape), tuple(mask.shape)])
    if mismatch is not None:
        raise RuntimeError(mismatch)
    xp = namespace_of(mask._data)
    ones = int(xp.broadcast_to(mask._data, np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))).sum())
    if source.numel() < ones:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(ix.MASKED_SCATTER, input, source, mask=mask)


def _plain_list(v: Any) -> Any:
    if _t(v):
        return v._data
    if isinstance(v, list):
        return [_plain_list(x) for x in v]
    return v


_SEQUENCE_AS_TUPLE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch "
    "2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result (Triggered internally "
    "at /__w/pytorch/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)"
)


def _key_items(key: Any) -> tuple:
    """The key as a tuple of items; a list holding slices, None, Ellipsis, sequences or tensors is
    read as a tuple (torch's treatSequenceAsTuple, with its deprecation warning)."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and len(key) < 32:
        nested = (builtins.slice, list, tuple, Tensor)
        if any(k is None or k is Ellipsis or isinstance(k, nested) for k in key):
            import warnings

            warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=3)
            return tuple(key)
    return (key,)


def _is_integer(k: Any) -> bool:
    """An integer index (a Python or numpy int, or a 0-d integer tensor): torch selects."""
    if _t(k):
        return k.dim() == 0 and not k.dtype.is_floating_point and k.dtype is not dtypes.bool_
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _byte_as_mask(k: Any) -> Any:
    """A uint8 tensor index is read as a bool mask, with torch's deprecation warning (not for a
    0-d one)."""
    if not (_t(k) and k.dtype is dtypes.uint8):
        return k
    if k.dim():
        import warnings

        warnings.warn(BYTE_INDEX, UserWarning, stacklevel=4)
    return Tensor._from_array(k._data.astype(bool))


BYTE_INDEX = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead. (Triggered "
    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)"
)


def _index_tensor(k: Any, xp: Any = np) -> Tensor:
    """An advanced index as a tensor (a list becomes a new one, as torch.tensor would make it, in
    ``xp``, the namespace of the indexed tensor's device, where torch makes it; but an empty list
    is an empty integer index)."""
    if _t(k):
        if k.dtype not in (dtypes.int64, dtypes.int32, dtypes.bool_):  # uint8 is read as bool before
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k
    array = xp.asarray(_plain_list(k))
    return Tensor._from_array(array.astype(np.int64) if array.size == 0 else array)  # [] indexes nothing


def _dims_consumed(k: Any) -> int:
    """How many of the tensor's dims an index item uses up (a bool mask: its own dims)."""
    if _t(k) and k.dtype is dtypes.bool_:
        return k.dim()
    return 0 if k is None or k is Ellipsis or isinstance(k, bool) else 1


def check_zero_dim_key(t: Tensor, key: Any) -> None:
    """torch's errors for a lone integer or slice indexing a 0-dim tensor (its single-index paths,
    taken before applySlicing: a tuple key or a tensor index says "too many indices" there)."""
    if t.dim() != 0 or isinstance(key, tuple):
        return
    if isinstance(key, builtins.slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        if key == 0:
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                "C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"index {int(key)} is out of bounds for dimension 0 with size 0")


@api.method("__getitem__")
def getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]`` as torch's applySlicing (see ``apply_slicing``), then any tensor/list/bool indices
    index the result at the dims they stand at (IndexBackward0, which saves them)."""
    check_zero_dim_key(t, key)
    out, indices = apply_slicing(t, _key_items(key), skip_full_slices=isinstance(key, tuple))
    if indices:
        return ix.index(out, indices)
    return apply(vw.ALIAS, t) if out is t else out


@api.method("__setitem__")
def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value`` as torch's set_item: applySlicing makes a view of ``self`` (``self``
    itself when nothing is sliced); without tensor indices the value is copied into it
    (``copy_to``), otherwise ``index_put_`` writes the view, so a sliced view gets CopySlices."""
    if key is False:  # torch writes nothing (and checks nothing) for a False key
        return
    check_zero_dim_key(self, key)
    byte_mask = any(isinstance(k, Tensor) and k.dtype is dtypes.uint8 for k in _key_items(key))
    if byte_mask and (not isinstance(value, Tensor) or value.numel() == 1):
        # torch writes a single value through a mask with masked_fill_, which takes bool masks only
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    value = ip._value_tensor(self, value)
    if key is None or key is True or key is Ellipsis:
        ip._copy_to(self.unsqueeze(0) if key is not Ellipsis else self, value)
        return
    sliced, indices = apply_slicing(self, _key_items(key), skip_full_slices=True)
    if not indices:
        ip._copy_to(sliced, value)
        return
    shape = ip._drop_leading_ones(tuple(value.shape))
    ip._index_put_(sliced, indices, value.view(shape) if shape != tuple(value.shape) else value)


def apply_slicing(t: Tensor, items: tuple, skip_full_slices: bool) -> tuple[Tensor, dict[int, Tensor]]:
    """torch's applySlicing: integers select, slices slice (a full slice is skipped where torch
    skips it), None and bool scalars unsqueeze; returns the view (``t`` itself when nothing was
    sliced) and the tensor indices left to apply, by the view's dim they stand at."""
    if builtins.sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    xp = namespace_of(t._data)
    items = tuple(_index_tensor(k, xp) if isinstance(k, list) else _byte_as_mask(k) for k in items)
    consumed = builtins.sum(_dims_consumed(k) for k in items)
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    out, dim = t, 0
    indices: dict[int, Tensor] = {}
    for k in items:
        if k is Ellipsis:
            dim += t.dim() - consumed
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, builtins.slice):
            if not (skip_full_slices and _is_full_slice(k, out.shape[dim])):
                out = _slice(out, dim, k.start, k.stop, k.step)
            dim += 1
        elif _is_integer(k):
            out = select(out, dim, int(k))
        elif isinstance(k, (bool, np.bool_)) or (_t(k) and k.dim() == 0 and k.dtype is dtypes.bool_):
            out = unsqueeze(out, dim)  # a bool scalar: a new dim
            indices[dim] = k if _t(k) else Tensor._from_array(xp.asarray(bool(k)))
            dim += 1
        elif _t(k):
            indices[dim] = _index_tensor(k)
            dim += k.dim() if k.dtype is dtypes.bool_ else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                f"indices (got {type(k).__name__})"
            )
    return out, indices


def _is_full_slice(k: builtins.slice, size: int) -> bool:
    """Whether applySlice skips the slice: its start as written is 0 (a negative start that
    wraps to 0 is still sliced), its step 1 and its stop at or past the end."""
    return k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= size)


# -- operators and in-place arithmetic ---------------------------------------------------------------
api.operator("__add__", "__radd__")(add)
api.operator("__sub__")(sub)
api.operator("__mul__", "__rmul__")(mul)
api.operator("__truediv__")(div)
api.operator("__pow__")(pow)
api.operator("__floordiv__")(floor_divide)
api.operator("__rfloordiv__")(rfloor_divide)
api.operator("__and__", "__rand__")(bitwise_and)
api.operator("__or__", "__ror__")(bitwise_or)
api.operator("__xor__", "__rxor__")(bitwise_xor)
for _name, _compare in {"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge}.items():
    api.operator(f"__{_name}__")(_compare)


@api.operator("__rsub__")
def _rsub(self: Tensor, other: Any) -> Tensor:
    return rsub(self, other)


@api.operator("__rtruediv__")
def _rtruediv(self: Tensor, other: Any) -> Tensor:
    return mul(reciprocal(self), other)


@api.operator("__rpow__")
def _rpow(self: Tensor, other: Any) -> Tensor:
    return pow(other, self)


@api.method("__invert__")
def _invert(self: Tensor) -> Tensor:
    """``~t``: bitwise_not, which torch's operator refuses for floating tensors first."""
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


@api.method("where")
def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    return where(condition, self, other)


def _alpha_inplace(op: OpDef) -> Any:
    """``x.add_(other, alpha=)`` and ``x += other``: ``op`` in place."""
    return ip.inplace_method(lambda self, other, *, alpha=1: (op, (other,), {"alpha": alpha}))


def _other_inplace(op: OpDef) -> Any:
    """``x.mul_(other)``, ``x *= other``, ``x /= other``: ``op`` in place."""
    return ip.inplace_method(lambda self, other: (op, (other,), {}))


_add_, _mul_ = _alpha_inplace(ew.ADD), _other_inplace(ew.MUL)
api.method("add_", tensor="other", numbers=True)(_add_)
api.method("mul_", tensor="other", numbers=True)(_mul_)
api.method("__iadd__")(_add_)
api.method("__imul__")(_mul_)
api.method("__itruediv__")(_other_inplace(ew.DIV))


@api.method("__isub__")
@api.method("sub_", tensor="other", numbers=True)
def _sub_(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    ew.check_bool_subtraction(self, other)
    return ip.apply_inplace(ew.SUB, self, other, alpha=alpha)


@api.method("div_", tensor="other", numbers=True)
def _div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """``x.div_(other, rounding_mode=)``: div_'s own op when rounding (DivBackward2)."""
    if rounding_mode is None:
        return ip.apply_inplace(ew.DIV, self, other)
    check_rounding_mode(rounding_mode)
    return ip.apply_inplace(ew.DIV_MODE, self, other, rounding_mode=rounding_mode)


@api.method("pow_", tensor_or_number="exponent")
def _pow_(self: Tensor, exponent: Any) -> Tensor:
    if isinstance(exponent, Tensor):
        return ip.apply_inplace(ew.POW_TT, self, exponent)
    negative = isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0
    if not negative:  # the kernel refuses a negative integer power of integers, before this cast
        ip._check_cast(dtypes.result_type(self, exponent), self.dtype)  # x.pow_(0.5) of an integer x
    return ip.apply_inplace(ew.POW_TS, self, exponent=exponent)


@api.method("masked_fill_")
def _masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    check_masked_fill(self, mask, in_place=True)
    if isinstance(value, Tensor):
        check_fill_value(value)
        return ip.apply_inplace(ix.MASKED_FILL_TENSOR, self, value, mask=mask)
    return ip.apply_inplace(ix.MASKED_FILL, self, mask=mask, value=value)


# -- questions to a tensor -----------------------------------------------------------------------
@api.function("is_tensor")
def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)


@api.function("is_inference")
def is_inference(*args: Any, **kwargs: Any) -> bool:
    """Whether ``input`` was made in inference mode."""
    if not args and not kwargs:
        raise TypeError('is_inference() missing 1 required positional arguments: "input"')
    return _is_inference(*args, **kwargs)


def _is_inference(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise invalid_call(_is_inference, locals(), name="is_inference")
    return input.is_inference()


@api.function("numel")
def numel(input: Tensor) -> int:
    if not isinstance(input, Tensor):
        raise invalid_call(numel, locals())
    return input.numel()


@api.function("detach")
def detach(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(detach, locals())
    return input.detach()


def _unsafe_view(t: Tensor, shape: tuple) -> Tensor:
    return apply(vw.UNSAFE_VIEW, t, size=tuple(shape))
