"""The functional API (``torch.add``, ``torch.sum`` ...): argument handling in torch's style,
then one ``apply`` of an op from the table. Tensor methods are bound to these (impl._methods)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import _layout, dtypes, return_types
from impl._graph import Node, input_meta
from impl._names import type_name
from impl._ops import elementwise as ew
from impl._ops import indexing as ix
from impl._ops import inplace as ip
from impl._ops import reductions as rd
from impl._ops import views as vw
from impl._ops.indexing import cat, tensor_list
from impl._ops.inplace import squeeze_result_
from impl._ops.table import NOT_OPERANDS, OpDef, _view_creation_meta, apply, broadcast_mismatch
from impl._signatures import invalid_call
from impl._tensor import Tensor, _wrap_dim, zeros_of
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
def _dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """Reduction dims, wrapped and sorted; None for all dims (also for a 0-d tensor, which torch
    lets reduce over dim 0/-1 as over everything)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        dims = tuple(sorted(_dim_list(dim, ndim)))  # (a repeated dim raises torch's error)
    else:
        dims = (_wrap_dim(int(dim), ndim),)
    return dims if ndim else None


_ALL = object()  # dim not given: torch's full-reduction overload (SumBackward0); dim=None picks the dim one


@api.variants("sum")
def sum(input: Tensor, dim: Any = _ALL, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(sum, locals())
    out_dt = rd.accumulated_dtype(input, dtype)
    dims = None if dim is _ALL else _dims(dim, input.dim())  # (checked before the dtype's grad)
    rd.check_differentiable(input, out_dt)
    if dim is _ALL:
        return apply(rd.SUM, input, dim=None, keepdim=False, dtype=out_dt.np)
    return apply(rd.SUM_DIM, input, dim=dims, keepdim=keepdim, dtype=out_dt.np)


@api.variants("cumsum")
def cumsum(input: Tensor, dim: Any = _ALL, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(cumsum, locals())
    return _scan(rd.CUMSUM, "cumsum", input, dim, dtype)


@api.variants("cumprod")
def cumprod(input: Tensor, dim: Any = _ALL, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(cumprod, locals())
    return _scan(rd.CUMPROD, "cumprod", input, dim, dtype)


def _scan(op: Any, name: str, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    """cumsum/cumprod: integer and bool inputs scan in int64 unless ``dtype`` says otherwise."""
    if dim is _ALL:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    out = rd.accumulated_dtype(input, dtype)
    d = _wrap_dim(int(dim), input.dim())
    if out is dtypes.bool_ and input.dim() and input.numel():  # 0-d and empty inputs run no kernel
        raise dtypes.kernel_missing(f"{name}_out_cpu", dtypes.bool_)
    rd.check_differentiable(input, out)
    return apply(op, input, dim=d, dtype=out.np, in_dtype=input.dtype)


@api.function("flip")
def flip(input: Tensor, dims: Any) -> Tensor:
    """A copy with the order of the elements reversed along ``dims``."""
    if not isinstance(input, Tensor):
        raise invalid_call(flip, locals())
    if not isinstance(dims, (list, tuple)):
        raise TypeError(
            f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}"
        )
    wrapped = _dim_list(dims, input.dim())
    return apply(rd.FLIP, input, dims=wrapped if input.dim() else ())


def _dim_list(dims: Any, ndim: int) -> tuple[int, ...]:
    """Dims wrapped and checked one by one, as torch's dim_list_to_bitset."""
    wrapped: list[int] = []
    for d in dims:
        d = _wrap_dim(int(d), ndim)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    return tuple(wrapped)


def reduced_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """torch's dim list of a reduction: an int or a list of ints, wrapped, each once (a repeated
    dim raises), sorted; None (every dim) for an empty list, None, or a 0-d input."""
    if dim is None:
        return None
    dims = _dim_list(dim if isinstance(dim, (list, tuple)) else (dim,), ndim)
    return tuple(sorted(dims)) if dims and ndim else None


@api.variants("mean")
def mean(input: Tensor, dim: Any = _ALL, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(mean, locals())
    dt = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    if not dt.is_floating_point:
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"mean(): could not infer output dtype. {which} dtype must be either a floating point or "
            f"complex dtype. Got: {dtypes.scalar_type(dt)}"
        )
    if dim is _ALL:
        return apply(rd.MEAN, input, dim=None, keepdim=False, dtype=dt.np)
    return apply(rd.MEAN_DIM, input, dim=_dims(dim, input.dim()), keepdim=keepdim, dtype=dt.np)


@api.variants("prod")
def prod(input: Tensor, dim: Any = _ALL, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(prod, locals())
    if dim is None:
        raise TypeError("prod(): argument 'dim' (position 2) must be int, not NoneType")
    out_dt = rd.accumulated_dtype(input, dtype)
    dims = None if dim is _ALL else _dims(dim, input.dim())  # (checked before the dtype's grad)
    rd.check_differentiable(input, out_dt)
    if dim is _ALL:
        return apply(rd.PROD, input, dim=None, keepdim=False, dtype=out_dt.np)
    return apply(rd.PROD_DIM, input, dim=dims, keepdim=keepdim, dtype=out_dt.np)


def _minmax(kind: str, input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    if _t(dim):
        return maximum(input, dim) if kind == "max" else minimum(input, dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{kind}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return apply(rd.MAX_ALL if kind == "max" else rd.MIN_ALL, input)
    d = _wrap_dim(dim, input.dim())
    values, indices = apply(rd.MAX_DIM if kind == "max" else rd.MIN_DIM, input, dim=d, keepdim=keepdim)
    return (return_types.max if kind == "max" else return_types.min)((values, indices))


@api.variants("max")
def max(input: Tensor, dim: Any = _ABSENT, keepdim: bool = False) -> Any:
    if not isinstance(input, Tensor) or isinstance(dim, (float, *NOT_OPERANDS)):
        raise invalid_call(max, locals())
    return _minmax("max", input, None if dim is _ABSENT else dim, keepdim)


@api.variants("min")
def min(input: Tensor, dim: Any = _ABSENT, keepdim: bool = False) -> Any:
    if not isinstance(input, Tensor) or isinstance(dim, (float, *NOT_OPERANDS)):
        raise invalid_call(min, locals())
    return _minmax("min", input, None if dim is _ABSENT else dim, keepdim)


@api.variants("amax")
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(amax, locals())
    return apply(rd.AMAX, input, dim=_dims(dim, input.dim()), keepdim=keepdim)


@api.variants("amin")
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(amin, locals())
    return apply(rd.AMIN, input, dim=_dims(dim, input.dim()), keepdim=keepdim)


@api.variants("square")
def square(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(square, locals())
    return pow(input, 2)


@api.variants("argmax")
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(argmax, locals())
    if dim is None:
        xp = namespace_of(input._data)
        return Tensor._from_array(xp.asarray(xp.argmax(input._data), dtype=np.int64))
    return max(input, dim, keepdim).indices


@api.variants("argmin")
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(argmin, locals())
    if dim is None:
        xp = namespace_of(input._data)
        return Tensor._from_array(xp.asarray(xp.argmin(input._data), dtype=np.int64))
    return min(input, dim, keepdim).indices


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def spread_call_fits(input: Any, dim: Any, unbiased: Any, correction: Any) -> bool:
    """Whether torch's parser takes a var/std/var_mean/std_mean call: a tensor, a dim that is an int
    or a list of ints (or a bool standing for ``unbiased``), and not both ``unbiased`` and
    ``correction`` (no signature has both)."""
    if not isinstance(input, Tensor):
        return False
    dims = dim if isinstance(dim, (list, tuple)) else () if dim is None or isinstance(dim, bool) else (dim,)
    given_unbiased = unbiased is not None or isinstance(dim, bool)
    return all(isinstance(d, int) and not isinstance(d, bool) for d in dims) and not (
        given_unbiased and correction is not None
    )


def _spread(
    op: Any, name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any
) -> Tensor:
    """std/var (and var_mean/std_mean): torch's checks (floating input, each dim once), and its
    warning when the correction leaves no degrees of freedom: the elements reduced into each output
    (none of an empty input, whatever the dims) minus the correction."""
    if not input.dtype.is_floating_point:
        which = "std and var" if name in ("var", "std") else name
        raise RuntimeError(f"{which} only support floating point and complex dtypes")
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    dims = reduced_dims(dim, input.dim())
    corr = _correction(unbiased, correction)
    shape = tuple(input.shape)
    factor = int(np.prod([shape[d] for d in dims] if dims is not None else shape)) if input.numel() else 0
    if factor - corr <= 0:
        import warnings

        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
            "factor (input numel divided by output numel). (Triggered internally at /__w/pytorch/pytorch/"
            "aten/src/ATen/native/ReduceOps.cpp:1861.)",
            UserWarning,
            stacklevel=3,
        )
    return apply(op, input, dim=dims, correction=corr, keepdim=keepdim)


@api.variants("var")
def var(
    input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
) -> Tensor:
    if not spread_call_fits(input, dim, unbiased, correction):
        raise invalid_call(var, locals())
    return _spread(rd.VAR, "var", input, dim, unbiased, keepdim, correction)


@api.variants("std")
def std(
    input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
) -> Tensor:
    if not spread_call_fits(input, dim, unbiased, correction):
        raise invalid_call(std, locals())
    return _spread(rd.STD, "std", input, dim, unbiased, keepdim, correction)


@api.variants("softmax")
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(softmax, locals())
    x = input.to(dtype) if dtype is not None else input
    return apply(rd.SOFTMAX, x, dim=_wrap_dim(dim, x.dim()))


@api.variants("log_softmax")
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(log_softmax, locals())
    x = input.to(dtype) if dtype is not None else input
    return apply(rd.LOG_SOFTMAX, x, dim=_wrap_dim(dim, x.dim()))


# -- matrix products ---------------------------------------------------------------------------
def _check_same_dtype(a: Tensor, b: Tensor) -> None:
    """mm's check, which spells dtypes as C++ types (``double != float``)."""
    if a.dtype is not b.dtype:
        cpp = dtypes.CPP_NAMES
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {cpp[a.dtype.name]} != {cpp[b.dtype.name]}"
        )


@api.variants("mm", tensor="mat2")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mat2, Tensor)):
        raise invalid_call(mm, locals())
    if input.dim() != 2 or mat2.dim() != 2:
        bad = input if input.dim() != 2 else mat2
        which = "self" if bad is input else "mat2"
        raise RuntimeError(f"{which} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    _check_same_dtype(input, mat2)
    return apply(rd.MM, input, mat2)


@api.variants("bmm", tensor="mat2")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mat2, Tensor)):
        raise invalid_call(bmm, locals())
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if input.dtype is not mat2.dtype:
        expected, found = dtypes.scalar_type(input.dtype), dtypes.scalar_type(mat2.dtype)
        raise RuntimeError(f"expected scalar type {expected} but found {found}")
    return apply(rd.BMM, input, mat2)


@api.variants("dot", tensor="tensor")
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(tensor, Tensor)):
        raise invalid_call(dot, locals())
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{dtypes.scalar_type(input.dtype)} and {dtypes.scalar_type(tensor.dtype)}"
        )
    if input.numel() != tensor.numel():
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.numel()}] and src "
            f"[{tensor.numel()}] to have the same number of elements, but got {input.numel()} "
            f"and {tensor.numel()} elements respectively"
        )
    return apply(rd.DOT, input, tensor)


@api.variants("mv", tensor="vec")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(vec, Tensor)):
        raise invalid_call(mv, locals())
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
            f"vec ({vec.shape[0]})"
        )
    if input.dtype is not vec.dtype:  # torch's mv is addmv into a result of vec's dtype
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {dtypes.scalar_type(vec.dtype)}, "
            f"{dtypes.scalar_type(input.dtype)}, and {dtypes.scalar_type(vec.dtype)}"
        )
    return apply(rd.MV, input, vec)


@api.variants("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    if not (isinstance(input, Tensor) and isinstance(mat1, Tensor) and isinstance(mat2, Tensor)):
        raise invalid_call(addmm, locals())
    for name, t in (("self", input), ("mat1", mat1)):
        if isinstance(t, Tensor) and t.dtype is not mat2.dtype:
            got = f"{dtypes.scalar_type(t.dtype)} and {dtypes.scalar_type(mat2.dtype)}"
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {got}")
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.dim()}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    n, p = mat1.shape[0], mat2.shape[1]
    if isinstance(input, Tensor) and tuple(input.shape) not in ((p,), (n, p)):
        input.expand(n, p)  # torch expands ``input`` to the result's shape: expand's errors
    return apply(rd.ADDMM, input, mat1, mat2, beta=beta, alpha=alpha)


def _unsafe_view(t: Tensor, shape: tuple) -> Tensor:
    return apply(vw.UNSAFE_VIEW, t, size=tuple(shape))


@api.variants("matmul", tensor="other")
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul's dispatch: dot, mv, mm, folded mm/mv, or broadcast bmm."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(matmul, locals())
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:  # torch squeezes the mm result in place: not a view, at version 1
        return squeeze_result_(mm(input.unsqueeze(0), other), 0)
    if da == 2 and db == 2:
        return mm(input, other)
    if da == db == 3 and input.shape[0] != other.shape[0]:
        # torch drops a batch of one that requires grad (its gradient is then one mm, not a sum
        # over the expanded batch): the rest folds into mm
        if input.shape[0] == 1 and input.requires_grad:
            return matmul(squeeze(input, 0), other)
        if other.shape[0] == 1 and other.requires_grad:
            return matmul(input, squeeze(other, 0))
    if _should_fold(input, other):
        transpose = db > da
        t1 = other.transpose(-1, -2) if transpose else input
        t2 = (input.t() if da == 2 else input) if transpose else other
        out_shape = tuple(t1.shape[:-1]) + ((t2.shape[1],) if t2.dim() == 2 else ())
        folded = t1.reshape(-1, t1.shape[-1])
        out = _unsafe_view(folded.mm(t2) if t2.dim() == 2 else folded.mv(t2), out_shape)
        return out.transpose(-1, -2).contiguous() if transpose and t2.dim() == 2 else out
    a = input.unsqueeze(0) if da == 1 else input
    b = other.unsqueeze(-1) if db == 1 else other
    mismatch = broadcast_mismatch([tuple(a.shape[:-2]), tuple(b.shape[:-2])])
    if mismatch is not None:
        raise RuntimeError(mismatch)
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    n, m, p = a.shape[-2], a.shape[-1], b.shape[-1]
    a3 = a.expand(*batch, n, m).reshape(-1, n, m)
    b3 = b.expand(*batch, b.shape[-2], p).reshape(-1, b.shape[-2], p)
    out = bmm(a3, b3)
    if db == 1:
        out = out.squeeze(-1)
    return _unsafe_view(out, batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ()))


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """torch's test for computing a batched matmul as one mm/mv on a folded operand."""
    t1, t2 = (a, b) if a.dim() >= b.dim() else (b, a)
    if not (t1.dim() >= 3 and t2.dim() <= 2):
        return False
    if t2.requires_grad:
        return True
    if a.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, strides = list(t1.shape), list(t1.stride())
    if t1 is not a:  # torch checks the larger operand as it will be used: transposed
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.dim() - 2))


@api.variants("trace")
def trace(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(trace, locals())
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.dim()))
    return apply(rd.TRACE, input)


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


@api.method("flip")
def flip_method(input: Tensor, *dims: Any, **kwargs: Any) -> Tensor:
    """``x.flip(0)``, ``x.flip(1, 0)``, ``x.flip([0])`` or ``x.flip(dims=[0])``."""
    return flip(input, list(kwargs["dims"]) if "dims" in kwargs else list(_shape_args(dims)))


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
        t._base, t._vc, t._view_version = root, input._vc, input._vc.value
        t._inference = input._inference  # torch's MULTI_OUTPUT_NODE views (see _view_creation_meta)
        t._creation_meta = _view_creation_meta(input, "multiple")
        outs.append(t)
    if grad_mode.is_recording() and input.requires_grad:
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
api.operator("__matmul__")(matmul)
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


@api.operator("__rmatmul__")
def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return matmul(other, self)


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
