"""Reductions (sum mean prod max min var std), softmax/log_softmax, matrix products and trace."""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import _autocast, dtypes, return_types
from impl import _grad_mode as grad_mode
from impl._creation import linspace, ones, zeros_like
from impl._ops import elementwise
from impl._ops.binary_math import maximum, minimum
from impl._ops.cascade_sum import cascade_mean, cascade_sum, summable
from impl._ops.elementwise import _no_derivative
from impl._ops.indexing import cat
from impl._ops.pointwise_ternary import masked
from impl._ops.table import NOT_IMPLEMENTED, NOT_OPERANDS, D, OpDef, apply, auto_linear, separable
from impl._signatures import (
    ABSENT,
    ACCUMULATE,
    ELEMENTWISE,
    EXACT,
    INDICES,
    OVERLOADS,
    TYPE_META_NAMES,
    Out,
    invalid_call,
)
from impl._tensor import ArgumentTypeError, Dims, Tensor, _dim_list, _wrap_dim, as_int
from impl._xp import namespace_of


def _expand_back(g: Any, c: Any) -> Any:
    """Gradient of a reduction over ``c.dim`` back to the input shape (unsqueeze + expand)."""
    shape = c.shape()
    if c.dim is not None and not c.keepdim:
        for d in sorted(c.dim):
            g = g.unsqueeze(d)
    return g.expand(shape)


def _count(c: Any) -> int:
    shape = c.shape()
    if c.dim is None:
        return int(np.prod(shape))
    return int(np.prod([shape[d] for d in c.dim]))


def _mean_grad(g: Any, c: Any) -> Any:
    """torch's mean_backward: the gradient expanded back, divided by the count (div.Scalar)."""
    return elementwise.div_scalar(_expand_back(g, c), _count(c))


def accumulated_dtype(input: Any, dtype: Any) -> Any:
    """The dtype sum, prod, cumsum and cumprod compute in: ``dtype`` when given, else the input's
    when floating, else int64 (torch promotes integers and bools)."""
    if dtype is not None:
        return dtypes.to_dtype(dtype)
    return input.dtype if input.dtype.is_floating_point or input.dtype.is_complex else dtypes.int64


def check_differentiable(input: Any, out: Any) -> None:
    """torch's set_history check: a result that would get a grad_fn must be of a floating dtype
    (``torch.sum(x, dtype=torch.int64)`` of an ``x`` that requires grad raises, outside no_grad)."""
    differentiable = out.is_floating_point or out.is_complex
    if not differentiable and input.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"Autograd not support dtype: {dtypes.scalar_type(out)}")


def _sum_fwd(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The sum in ``dtype``: a floating one on the CPU in the order of torch's kernel (bit for
    bit); else float16/bfloat16 accumulated in float32 and rounded once, as torch's."""
    out = np.dtype(dtype) if dtype is not None else a.dtype
    if xp is np and summable(out):
        return cascade_sum(a, dim, keepdim, out)
    if out.kind not in "biufc" or out.kind == "f" and out.itemsize < 4:
        return xp.sum(a.astype(out, copy=False), axis=dim, keepdims=keepdim, dtype=np.float32).astype(out)
    return xp.sum(a, axis=dim, keepdims=keepdim, dtype=dtype)


def _mean_fwd(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The mean, half types accumulated in float32 and rounded once (as torch's kernel; on the
    CPU torch's sum divided by the count, bit for bit); over no elements NaN, without numpy's
    "Mean of empty slice" warning."""
    out = dtype or a.dtype
    if xp is np and summable(out):
        return cascade_mean(a, dim, keepdim, out)
    wide = np.float32 if np.dtype(out).itemsize < 4 else out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return xp.mean(a, axis=dim, keepdims=keepdim, dtype=wide).astype(out, copy=False)


_SUM_DERIVATIVES = {"self": D("dim keepdim", _expand_back)}
SUM = OpDef("SumBackward0", _sum_fwd, derivatives=_SUM_DERIVATIVES, jvp=auto_linear)
SUM_DIM = OpDef("SumBackward1", _sum_fwd, derivatives=_SUM_DERIVATIVES, jvp=auto_linear)
MEAN = OpDef(
    "MeanBackward0",
    _mean_fwd,
    derivatives={"self": D("dim keepdim", lambda g, c: _mean_grad(g, c))},
    jvp=auto_linear,
)
MEAN_DIM = OpDef(
    "MeanBackward1",
    _mean_fwd,
    derivatives={"self": D("dim keepdim", lambda g, c: _mean_grad(g, c))},
    jvp=auto_linear,
)


def _prod_grad(g: Any, c: Any) -> Any:
    """torch's prod_backward: ``grad * (result / self)`` with grad and result unsqueezed back
    over a reduced ``dim`` (a full product's 0-d grad and result broadcast); a 0-d input passes
    grad through. Where the input has zeros, the products of the other elements as exclusive
    cumprods (``_prod_of_others``, a graph of cat/cumprod/flip, so it has derivatives); a full
    product with several zeros outside grad mode is plain zeros."""

    x, res = c.self, c.result
    if x.dim() == 0:
        return g
    if c.dim is not None and not c.keepdim:
        g, res = g.unsqueeze(c.dim[0]), res.unsqueeze(c.dim[0])
    zeros = int((x._data == 0).sum())
    if zeros == 0:
        return g * (res / x)
    if c.dim is not None:
        return _prod_of_others(g, x, c.dim[0])
    if zeros > 1 and not grad_mode.is_grad_enabled():
        return zeros_like(x)
    return _prod_of_others(g, x.contiguous().view(-1), 0).view_as(x)


def _prod_of_others(g: Any, x: Any, dim: int) -> Any:
    """``g`` times, for each element, the product of the others along ``dim``: the cumprod of
    the elements before it times the reversed cumprod of those after it (torch's
    prod_safe_zeros_backward), exact where the input has zeros."""
    if x.numel() == 0:
        return g.expand_as(x)
    n = x.shape[dim]
    if n == 1:  # no other elements
        return g
    one = ones(*[1 if d == dim else s for d, s in enumerate(x.shape)], dtype=g.dtype, device=x.device)
    before = cat([one, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    after = cat([one, x.narrow(dim, 1, n - 1).flip([dim])], dim).cumprod(dim).flip([dim])
    return g * (before * after)


def _prod_fwd(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The product in ``dtype``, the input cast to it first (as torch casts before reducing)."""
    return xp.prod(a.astype(dtype, copy=False), axis=dim, keepdims=keepdim, dtype=dtype)


PROD = OpDef(
    "ProdBackward0",
    _prod_fwd,
    derivatives={"self": D("self result dim keepdim", _prod_grad)},
    jvp=separable,  # (prod_backward(ones, self_p, result) * self_t).sum()
)
PROD_DIM = OpDef(
    "ProdBackward1",
    _prod_fwd,
    derivatives={"self": D("self result dim keepdim", _prod_grad)},
    jvp=separable,
)


def _evenly(g: Any, c: Any) -> Any:
    """torch's evenly_distribute_backward: the gradient shared by the elements equal to the
    max/min, or by the nans when it is nan."""

    xp = namespace_of(c.self._data)
    nan = c.self.dtype.is_floating_point and bool(xp.isnan(c.result._data))
    mask = Tensor._from_array(xp.isnan(c.self._data)) if nan else c.self == c.result
    # CPU: zeros with the share filled in (the others stay +0.0, where a product gave -0.0)
    return zeros_like(c.self).masked_fill(mask, g / mask.sum())


def _amax_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """The dims amax/amin save, as torch's node keeps them: as given (wrapped), () for none.
    Checked as every reduction's (a repeated dim raises torch's error)."""
    _dims(dim, ndim)
    given = dim if isinstance(dim, (list, tuple)) else () if dim is None else (dim,)
    return tuple(_wrap_dim(d, ndim) for d in given)


def _reduced(dim: Any, ndim: int) -> Any:
    """The dims of an amax/amin over ``dim`` (as saved), None for all (also for a 0-d input)."""
    return tuple(dim) if dim and ndim else None


def _amax_grad(g: Any, c: Any) -> Any:
    shape = c.shape()
    dims, result = _reduced(c.dim, len(shape)), c.result
    if dims is not None and not c.keepdim:
        for d in sorted(dims):
            g, result = g.unsqueeze(d), result.unsqueeze(d)
    mask = c.self == result.expand(shape)
    count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
    return g.expand(shape) * mask / count


def _amax_fwd(kind: str) -> Any:
    def fwd(xp: Any, a: Any, dim: Any, keepdim: bool) -> Any:
        return (xp.max if kind == "max" else xp.min)(a, axis=_reduced(dim, a.ndim), keepdims=keepdim)

    return fwd


# amaxamin_jvp and evenly_read_jvp: the tangents of the extremes, averaged over ties
AMAX = OpDef(
    "AmaxBackward0",
    _amax_fwd("max"),
    derivatives={"self": D("self result dim keepdim", _amax_grad)},
    jvp=separable,
)
AMIN = OpDef(
    "AminBackward0",
    _amax_fwd("min"),
    derivatives={"self": D("self result dim keepdim", _amax_grad)},
    jvp=separable,
)
MAX_ALL = OpDef(
    "MaxBackward1", lambda xp, a: xp.max(a), derivatives={"self": D("self result", _evenly)}, jvp=separable
)
MIN_ALL = OpDef(
    "MinBackward1", lambda xp, a: xp.min(a), derivatives={"self": D("self result", _evenly)}, jvp=separable
)


def _select_reduce_fwd(kind: str) -> Any:
    def fwd(xp: Any, a: Any, dim: int, keepdim: bool) -> Any:
        if a.ndim == 0:  # torch reduces a 0-d tensor over dim 0/-1 to itself, index 0
            return a.copy(), xp.zeros((), dtype=np.int64)
        idx = (xp.argmax if kind == "max" else xp.argmin)(a, axis=dim)
        idx = xp.expand_dims(idx, dim)
        values = xp.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            values, idx = xp.squeeze(values, dim), xp.squeeze(idx, dim)
        return values, idx.astype(np.int64)

    return fwd


def _value_selecting_back(g: Any, c: Any) -> Any:
    idx = c.indices
    xp = namespace_of(idx._data)
    shape = c.shape()
    if shape == ():
        return g
    if not c.keepdim:
        g = g.unsqueeze(c.dim)
        idx_arr = xp.expand_dims(idx._data, c.dim)
    else:
        idx_arr = idx._data
    positions = xp.arange(shape[c.dim]).reshape([-1 if d == c.dim else 1 for d in range(len(shape))])

    return masked(g.expand(shape), Tensor._from_array(positions == idx_arr))


MAX_DIM = OpDef(
    "MaxBackward0",
    _select_reduce_fwd("max"),
    outputs=("result", "indices"),
    derivatives={"self": D("indices dim keepdim", _value_selecting_back)},
    jvp=separable,  # gather_with_keepdimed_indices(self_t, dim, indices, keepdim)
)
MIN_DIM = OpDef(
    "MinBackward0",
    _select_reduce_fwd("min"),
    outputs=("result", "indices"),
    derivatives={"self": D("indices dim keepdim", _value_selecting_back)},
    jvp=separable,
)


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
        dims = (_wrap_dim(dim, ndim),)
    return dims if ndim else None


_ALL = object()  # dim not given: torch's full-reduction overload (SumBackward0); dim=None picks the dim one


def _mean_out(args: tuple, kwargs: dict) -> Out:
    """mean's out=: computed in out's dtype, the input's dtype cast to it where it can be (worded
    for mean.dtype_out without dims)."""
    if len(args) > 1 or kwargs.get("dim") is not None:
        return Out("accumulate_cast")
    return Out(
        "accumulate_cast", "mean.dtype_out(): input types can't be cast to the desired output type {out}"
    )


AMAX_OUT = Out(
    "same",
    "Expected the dtype for input and out to match, but got {result} for input's dtype and {out} for out's "
    "dtype.",
)
EXTREME_OF_ALL = Out(
    message="Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) to be "
    "true, but got false.  (Could this error message be improved?  If so, please report an enhancement "
    "request to PyTorch.)"
)


def _extreme_out(pointwise: str) -> Any:
    """max's (min's) out= by overload: of every element, of two tensors (``pointwise``), or along a
    dim into (values, indices)."""

    def pick(args: tuple, kwargs: dict) -> Out:
        dim = args[1] if len(args) > 1 else kwargs.get("dim", ABSENT)
        if isinstance(dim, Tensor):
            return ELEMENTWISE.named(pointwise)
        return EXTREME_OF_ALL if dim is ABSENT else Out(parts=(EXACT, EXACT))

    return pick


@api.variants("sum", out=ACCUMULATE)
def sum(input: Tensor, dim: Dims = _ALL, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(sum, locals())
    out_dt = accumulated_dtype(input, dtype)
    dims = None if dim is _ALL else _dims(dim, input.dim())  # (checked before the dtype's grad)
    check_differentiable(input, out_dt)
    if dim is _ALL:
        return apply(SUM, input, dim=None, keepdim=False, dtype=out_dt.np)
    return apply(SUM_DIM, input, dim=dims, keepdim=keepdim, dtype=out_dt.np)


def reduced_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """torch's dim list of a reduction: an int or a list of ints, wrapped, each once (a repeated
    dim raises), sorted; None (every dim) for an empty list, None, or a 0-d input."""
    if dim is None:
        return None
    dims = _dim_list(dim if isinstance(dim, (list, tuple)) else (dim,), ndim)
    return tuple(sorted(dims)) if dims and ndim else None


@api.variants("mean", out=Out(pick=_mean_out))
def mean(input: Tensor, dim: Dims = _ALL, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(mean, locals())
    dt = dtypes.to_dtype(dtype) if dtype is not None else input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"mean(): could not infer output dtype. {which} dtype must be either a floating point or "
            f"complex dtype. Got: {dtypes.scalar_type(dt)}"
        )
    if dim is _ALL:
        return apply(MEAN, input, dim=None, keepdim=False, dtype=dt.np)
    return apply(MEAN_DIM, input, dim=_dims(dim, input.dim()), keepdim=keepdim, dtype=dt.np)


@api.variants("prod", out=ACCUMULATE)
@_autocast.policy("fp32")
def prod(input: Tensor, dim: int = _ALL, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(prod, locals())
    if dim is None:
        raise TypeError("prod(): argument 'dim' (position 2) must be int, not NoneType")
    out_dt = accumulated_dtype(input, dtype)
    dims = None if dim is _ALL else _dims(dim, input.dim())  # (checked before the dtype's grad)
    check_differentiable(input, out_dt)
    if dim is _ALL:
        return apply(PROD, input, dim=None, keepdim=False, dtype=out_dt.np)
    return apply(PROD_DIM, input, dim=dims, keepdim=keepdim, dtype=out_dt.np)


def _minmax(kind: str, input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    if isinstance(dim, Tensor):
        return maximum(input, dim) if kind == "max" else minimum(input, dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{kind}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        return apply(MAX_ALL if kind == "max" else MIN_ALL, input)
    d = _wrap_dim(dim, input.dim())
    values, indices = apply(MAX_DIM if kind == "max" else MIN_DIM, input, dim=d, keepdim=keepdim)
    return (return_types.max if kind == "max" else return_types.min)((values, indices))


def _other_by_position(fn: Any) -> Any:
    """max/min taking torch's ``(Tensor input, Tensor other)`` overload: a tensor right after the
    input (or ``other=``) is maximum's other; ``dim=`` a tensor is a dim (a 0-d integer one)."""

    @functools.wraps(fn)
    def extreme(input: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(kwargs.get("dim"), Tensor):
            kwargs["dim"] = as_int(kwargs["dim"])
        if "other" in kwargs:
            if args or len(kwargs) > 1:  # other with a dim: no overload
                raise ArgumentTypeError(f"{fn.__name__}(): other given with a dim")
            args, kwargs = (kwargs["other"],), {}
        return fn(input, *args, **kwargs)

    return extreme


@api.variants("max", out=Out(pick=_extreme_out("maximum")))
@_other_by_position
def max(input: Tensor, dim: int = ABSENT, keepdim: bool = ABSENT) -> Any:
    refused = isinstance(dim, (float, *NOT_OPERANDS)) or (isinstance(dim, Tensor) and keepdim is not ABSENT)
    if not isinstance(input, Tensor) or refused:
        raise invalid_call(max, locals())
    return _minmax("max", input, None if dim is ABSENT else dim, keepdim is not ABSENT and keepdim)


@api.variants("min", out=Out(pick=_extreme_out("minimum")))
@_other_by_position
def min(input: Tensor, dim: int = ABSENT, keepdim: bool = ABSENT) -> Any:
    refused = isinstance(dim, (float, *NOT_OPERANDS)) or (isinstance(dim, Tensor) and keepdim is not ABSENT)
    if not isinstance(input, Tensor) or refused:
        raise invalid_call(min, locals())
    return _minmax("min", input, None if dim is ABSENT else dim, keepdim is not ABSENT and keepdim)


def _check_identity(name: str, input: Tensor, dim: Any) -> None:
    """amax/amin have no identity: torch refuses to reduce an empty dim (or, without dims, an
    empty tensor)."""
    if input.numel():
        return
    given = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if not given:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in given:
        if input.shape[_wrap_dim(d, input.dim())] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


@api.variants("amax", out=AMAX_OUT)
def amax(input: Tensor, dim: Dims = (), keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(amax, locals())
    _check_identity("amax", input, dim)
    return apply(AMAX, input, dim=_amax_dims(dim, input.dim()), keepdim=keepdim)


@api.variants("amin", out=AMAX_OUT)
def amin(input: Tensor, dim: Dims = (), keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(amin, locals())
    _check_identity("amin", input, dim)
    return apply(AMIN, input, dim=_amax_dims(dim, input.dim()), keepdim=keepdim)


@api.variants("square", out=ELEMENTWISE.named("pow"))
def square(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(square, locals())
    return pow(input, 2)


@api.variants("argmax", out=INDICES)
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(argmax, locals())
    if dim is None:
        xp = namespace_of(input._data)
        return Tensor._from_array(xp.asarray(xp.argmax(input._data), dtype=np.int64))
    return max(input, as_int(dim), keepdim).indices  # (a tensor dim: not max's other)


@api.variants("argmin", out=INDICES)
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(argmin, locals())
    if dim is None:
        xp = namespace_of(input._data)
        return Tensor._from_array(xp.asarray(xp.argmin(input._data), dtype=np.int64))
    return min(input, as_int(dim), keepdim).indices


def _unsqueezed(t: Any, c: Any) -> Any:
    """``t`` (a gradient or result of a reduction over the dims ``c.dim``) unsqueezed back over
    them, as torch's unsqueeze_multiple does without keepdim (over none for an empty list, which
    reduced every dim: the 0-d ``t`` broadcasts)."""
    if c.keepdim or not c.shape():
        return t
    for d in c.dim:
        t = t.unsqueeze(d)
    return t


def _logsumexp_fwd(xp: Any, a: Any, dim: tuple, keepdim: bool) -> Any:
    """torch's logsumexp_out_impl: the max over ``dim`` (every dim when empty) set to 0 where it
    is infinite, subtracted before the exponentials and added after the log; of no elements,
    log(0) = -inf. Each step rounded to ``a``'s dtype as torch's kernels round it (the exp and log
    evaluated in float64, the sum of half types accumulated in float32)."""
    dim = (dim or None) if a.ndim else None
    wide = np.float64 if a.dtype == np.float64 else np.float32

    def rounded(f: Any, v: Any) -> Any:
        return f(v.astype(np.float64)).astype(a.dtype)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if a.size == 0:
            return rounded(xp.log, xp.sum(rounded(xp.exp, a), axis=dim, keepdims=keepdim, dtype=wide))
        maxes = xp.max(a, axis=dim, keepdims=True)
        maxes = xp.where(xp.isinf(maxes), xp.zeros_like(maxes), maxes)
        exps = rounded(xp.exp, (a - maxes).astype(a.dtype))
        total = xp.sum(exps, axis=dim, keepdims=keepdim, dtype=wide).astype(a.dtype)
        shift = maxes if keepdim else maxes.reshape(total.shape)
        return (rounded(xp.log, total).astype(wide) + shift).astype(a.dtype)


def _logsumexp_grad(g: Any, c: Any) -> Any:
    """torch's logsumexp_backward: ``grad * (self - result).exp()``, grad and result unsqueezed
    back over the reduced dims."""
    return _unsqueezed(g, c) * (c.self - _unsqueezed(c.result, c)).exp()


LOGSUMEXP = OpDef(
    "LogsumexpBackward0",
    _logsumexp_fwd,
    derivatives={"self": D("self result dim keepdim", _logsumexp_grad)},
    jvp=separable,  # logsumexp_jvp
)


_REQUIRED: Any = object()


@api.function(
    "logsumexp",
    out=Out("upcast_floating", "logsumexp(): Expected floating point type for result tensor, but got: {out}"),
)
def logsumexp(input: Tensor, dim: Dims = _REQUIRED, keepdim: bool = False, *, _position: int = 2) -> Tensor:
    """log(sum(exp(input))) over ``dim``, stabilised by the max; integer and bool inputs are
    computed in the default dtype. An empty ``dim`` reduces every dim (torch then fails to add the
    kept max to the result of a non-0-d input unless ``keepdim``)."""
    if not isinstance(input, Tensor):
        raise invalid_call(logsumexp, locals())
    if dim is _REQUIRED:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    if dim is None:
        raise TypeError(
            f"logsumexp(): argument 'dim' (position {_position}) must be tuple of ints, not NoneType"
        )
    dims = tuple(sorted(_dim_list(dim if isinstance(dim, (list, tuple)) else (dim,), input.dim())))
    if isinstance(dim, (list, tuple)) and not dim and not keepdim and input.dim() and input.numel():
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * input.dim()}")
    if not input.dtype.is_floating_point:
        input = input.to(dtypes.get_default_dtype())
    return apply(LOGSUMEXP, input, dim=dims, keepdim=bool(keepdim))


def _nansum_fwd(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The sum of the elements that are not NaN (as sum does: half types accumulated in float32)."""
    if xp is np and summable(dtype):
        return cascade_sum(a, dim, keepdim, dtype, ignore_nan=True)
    if a.dtype.kind not in "biu":  # floating, bfloat16 (numpy kind "V") included
        a = xp.where(xp.isnan(a), xp.zeros_like(a), a)
    return _sum_fwd(xp, a, dim, keepdim, dtype)


def _nansum_grad(g: Any, c: Any) -> Any:
    """torch's nansum_backward: the gradient expanded back, times ``self.isnan().logical_not()``."""
    return _expand_back(g, c) * c.self.isnan().logical_not()


NANSUM = OpDef(
    "NansumBackward0", _nansum_fwd, derivatives={"self": D("self dim keepdim", _nansum_grad)}, jvp=separable
)


NANSUM_OUT = Out("accumulate_floating", "\"nansum_cpu\" not implemented for '{out}'", NotImplementedError)


def _nansum_out(args: tuple, kwargs: dict) -> Out:
    """nansum's out=: in out's dtype, a floating one for a floating input (an integral one sums)."""
    input = args[0] if args else kwargs.get("input")
    return NANSUM_OUT if isinstance(input, Tensor) and input.dtype.is_floating_point else ACCUMULATE


@api.variants("nansum", out=Out(pick=_nansum_out))
def nansum(input: Tensor, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The sum over ``dim`` treating NaN as 0; integers and bools sum in int64 unless ``dtype``."""
    if not isinstance(input, Tensor):
        raise invalid_call(nansum, locals())
    out_dt = accumulated_dtype(input, dtype)
    dims = reduced_dims(dim, input.dim())  # (checked before the dtype's grad)
    check_differentiable(input, out_dt)
    return apply(NANSUM, input, dim=dims, keepdim=bool(keepdim), dtype=out_dt.np)


NANMEAN_OUT = Out(
    "accumulate_floating", "\"nansum_cpu\" not implemented for '{out}'", NotImplementedError, aten="nansum",
    writes=2,
)  # fmt: skip


def _nanmean_out(args: tuple, kwargs: dict) -> Out:
    """nanmean's out= (nansum's into out, divided in place), which refuses an integral input first
    (once the parser took out)."""
    input = args[0] if args else kwargs.get("input")
    floating = not isinstance(input, Tensor) or input.dtype.is_floating_point or input.dtype.is_complex
    if not floating and isinstance(kwargs["out"], Tensor):
        raise RuntimeError(
            "nanmean(): integral types and 'Bool' are not supported for nanmean, even for empty tensors."
        )
    return NANMEAN_OUT


@api.variants("nanmean", out=Out(pick=_nanmean_out))
def nanmean(input: Tensor, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """torch's composite nanmean: ``nansum(input, dim, keepdim, dtype)`` divided by the count of
    the elements that are not NaN (DivBackward0 on top of NansumBackward0); floating inputs only."""
    if not isinstance(input, Tensor):
        raise invalid_call(nanmean, locals())
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{dtypes.scalar_type(input.dtype)}"
        )
    if dtype is not None and not dtypes.to_dtype(dtype).is_floating_point:
        raise RuntimeError(
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating point or "
            f"complex dtype. Got: {dtypes.scalar_type(dtypes.to_dtype(dtype))}"
        )
    dims = reduced_dims(dim, input.dim())  # checked first (sum does not refuse a repeated dim)
    counted = input.isnan().logical_not()
    factor = counted.sum() if dim is None else counted.sum(dims or (), keepdim)
    return nansum(input, dim, keepdim, dtype=dtype).div(factor)


def truth_dtype(dtype: Any) -> Any:
    """The dtype of all/any: uint8 for uint8 (torch's legacy byte masks), else bool."""
    return dtypes.uint8 if dtype is dtypes.uint8 else dtypes.bool_


def _truth_reduction(kind: str) -> Any:
    """torch.all / torch.any: over every dim, a dim or a list of dims (an empty list reduces over
    none: each element's truth); uint8 inputs give uint8, every other dtype bool. No gradient."""

    def reduce(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        if not isinstance(input, Tensor):
            raise invalid_call(reduce, locals())
        xp = namespace_of(input._data)
        truth = input._data != 0
        if isinstance(dim, (list, tuple)) and not dim:
            out = truth
        else:
            dims = reduced_dims(dim, input.dim())
            out = getattr(xp, kind)(truth, axis=dims, keepdims=bool(keepdim))
        return Tensor._from_array(xp.asarray(out, dtype=truth_dtype(input.dtype).np))

    reduce.__name__ = reduce.__qualname__ = kind
    return reduce


TRUTH_OUT = Out("same", "{name} only supports bool tensor for result, got: {out}", differentiable=False)
all = api.variants("all", out=TRUTH_OUT)(_truth_reduction("all"))  # noqa: A001 (torch's name)


any = api.variants("any", out=TRUTH_OUT)(_truth_reduction("any"))  # noqa: A001 (torch's name)


@api.variants("count_nonzero")
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of non-zero elements over ``dim`` (an int or a tuple of ints), as int64."""
    if not isinstance(input, Tensor):
        raise invalid_call(count_nonzero, locals())
    xp = namespace_of(input._data)
    counts = xp.sum(input._data != 0, axis=reduced_dims(dim, input.dim()), dtype=np.int64)
    return Tensor._from_array(xp.asarray(counts, dtype=np.int64))


def _aminmax_fwd(xp: Any, a: Any, dim: int | None, keepdim: bool) -> tuple:
    """The min and the max over ``dim`` (every dim when None; a 0-d input is its own)."""
    axis = dim if a.ndim else None
    return xp.min(a, axis=axis, keepdims=keepdim), xp.max(a, axis=axis, keepdims=keepdim)


def _restore_reduced_dims(t: Any, dims: tuple, keepdim: bool) -> Any:
    """torch's restore_reduced_dims: ``t`` reshaped with a 1 back at each reduced dim (a view)."""
    if keepdim:
        return t
    shape = [0] * (t.dim() + len(dims))
    for d in dims:
        shape[d] = 1
    sizes = iter(t.shape)
    return t.reshape([1 if size else next(sizes) for size in shape])


def _aminmax_grad(grads: tuple, c: Any) -> Any:
    """torch's aminmax_backward: for each output whose gradient is defined, scale_grad_by_count's
    ``(grad / mask.sum(dims, True)) * mask`` with the mask of the elements equal to that output
    (ties share), grad and output restored over the reduced dim; the sum when both are."""
    dims = () if c.dim is None else (c.dim,)
    gself = None
    for g, result in zip(grads, (c.min, c.max), strict=True):
        if g is not None:
            mask = _restore_reduced_dims(result, dims, c.keepdim) == c.self
            part = (_restore_reduced_dims(g, dims, c.keepdim) / mask.sum(dims, keepdim=True)) * mask
            gself = part if gself is None else gself + part
    return gself


AMINMAX = OpDef(
    "AminmaxBackward0",
    _aminmax_fwd,
    outputs=("min", "max"),
    derivatives={"self": D("self min max dim keepdim", _aminmax_grad)},
    differentiable_outputs=2,
)


@api.function("aminmax", out=Out(parts=(EXACT, EXACT)))
def aminmax(input: Tensor, *, dim: int = None, keepdim: bool = False) -> Any:
    """(min, max) over ``dim`` (every dim when None) as torch.return_types.aminmax; any dtype. No
    reduction over an empty dim: torch has no identity for it."""
    if not isinstance(input, Tensor):
        raise invalid_call(aminmax, locals())
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    d = None if dim is None else _wrap_dim(dim, input.dim())
    if not input.numel():
        if d is None:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
            )
        if input.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    return return_types.aminmax(apply(AMINMAX, input, dim=d, keepdim=bool(keepdim)))


@api.method("aminmax")
def _aminmax_method(self: Tensor, *args: Any, dim: int = None, keepdim: bool = False) -> Any:
    """``Tensor.aminmax``: ``dim`` and ``keepdim`` are keyword-only (torch counts no ``self``)."""
    if args:
        given = f"{len(args)} was" if len(args) == 1 else f"{len(args)} were"
        raise TypeError(f"aminmax() takes 0 positional arguments but {given} given")
    return aminmax(self, dim=dim, keepdim=keepdim)


@api.method("logsumexp")
def _logsumexp_method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return logsumexp(self, *args, **kwargs, _position=1)


@api.variants("bincount")
def bincount(input: Tensor, weights: Any = None, minlength: int = 0) -> Tensor:
    """Counts of each value of a 1-d non-negative integer tensor (int64), or sums of ``weights``
    (of their float dtype; double for other weights), at least ``minlength`` long."""
    if not isinstance(input, Tensor) or not (weights is None or isinstance(weights, Tensor)):
        raise invalid_call(bincount, locals())
    if input.dtype.is_floating_point or input.dtype is dtypes.bool_:
        raise dtypes.kernel_missing("bincount_cpu", input.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = input._data
    if input.dim() != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    xp = namespace_of(a)
    length = int(a.max()) + 1 if a.size else 0
    length = length if length > minlength else minlength
    if weights is None or not a.size:  # torch's empty input: int64 zeros, whatever (unchecked) weights
        return Tensor._from_array(xp.bincount(a, minlength=length).astype(np.int64))
    if weights.dim() != 1 or weights.shape[0] != input.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = weights.dtype if weights.dtype in (dtypes.float32, dtypes.float64) else dtypes.float64
    return Tensor._from_array(xp.bincount(a, weights=weights._data.astype(np.float64), minlength=length)
                              .astype(out.np))


def _edge_text(value: float, computed: bool) -> str:
    """A double as torch's message prints it (C++'s ``<<``); the NaN of ``aminmax`` as ``-nan``."""
    if value != value:
        return "-nan" if computed else "nan"
    return f"{value:g}"


HISTC_OUT = Out(
    "same",
    "torch.histogram: input tensor and hist tensor should have the same dtype, but got input {result_cpp} "
    "and hist {out_cpp}",
    differentiable=False,
)


@api.variants("histc", out=HISTC_OUT)
def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """Counts of the elements in ``bins`` equal-width bins between ``min`` and ``max`` (the
    elements' own range when the two are equal; widened by 1 each side when that is empty), in
    the input's dtype, never differentiable. Elements outside the range and NaN are not counted;
    the bin is torch's ``(x - min) * bins / (max - min)`` in the input dtype, truncated, the last
    one taking ``max``."""
    if not isinstance(input, Tensor) or not isinstance(bins, int) or isinstance(bins, bool):
        raise invalid_call(histc, locals())
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    a = input._data.reshape(-1)
    left, right = (float(v.item() if isinstance(v, Tensor) else v) for v in (min, max))
    computed = left == right and a.size > 0
    if computed:
        left, right = float(a.min()), float(a.max())
    if left == right:
        left, right = left - 1, right + 1
    if not (math.isfinite(left) and math.isfinite(right)):
        text = ", ".join(_edge_text(v, computed) for v in (left, right))
        raise RuntimeError(f"torch.histc: range of [{text}] is not finite")
    if not left < right:
        raise RuntimeError("torch.histc: max must be larger than min")
    if input.dtype is dtypes.bool_:
        raise dtypes.kernel_missing("linspace_cpu", input.dtype)
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing("histogram_cpu", input.dtype)
    t = a.dtype.type
    return Tensor._from_array(histc_counts(namespace_of(a), a, t(left), t(right), bins).astype(a.dtype))


def histc_counts(xp: Any, a: Any, lo: Any, hi: Any, bins: int) -> Any:
    """How many of the flat ``a`` fall in each of ``bins`` bins from ``lo`` to ``hi`` (of its dtype)."""
    with np.errstate(invalid="ignore"):
        kept = a[(a >= lo) & (a <= hi)]
    pos = ((kept - lo) * a.dtype.type(bins) / (hi - lo)).astype(np.int64)
    pos[pos == bins] = bins - 1
    return xp.bincount(pos, minlength=bins)


# -- histogram -----------------------------------------------------------------------------------
OVERLOADS["histogram"] = (
    "(Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, tuple of Tensors out = None)",
    "(Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = None, "
    "bool density = False, tuple of Tensors out = None)",
)


def _histogram_fwd(xp: Any, *arrays: Any, edges: Any, density: bool, weighted: bool) -> tuple:
    """Sums of the weights (ones) of the flat input's elements per bin of ``edges`` (the bin is
    ``upper_bound(edges, x) - 1``, the last edge in the last bin; outside and NaN skipped), added in
    the input's order and dtype; with ``density``, divided by their total, then by the bin widths."""
    a = arrays[0].reshape(-1)
    w = arrays[-1].reshape(-1) if weighted else xp.ones_like(a)
    with np.errstate(invalid="ignore"):
        kept = (a >= edges[0]) & (a <= edges[-1])
    pos = xp.minimum(xp.searchsorted(edges, a[kept], side="right") - 1, edges.size - 2)
    hist = xp.zeros(edges.size - 1, dtype=a.dtype)
    xp.add.at(hist, pos, w[kept])
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = (hist / hist.sum()).astype(a.dtype)
            hist = (hist / (edges[1:] - edges[:-1])).astype(a.dtype)
    return hist, edges.copy()


@functools.cache
def _histogram_op(inputs: tuple[str, ...]) -> OpDef:
    """histogram of the tensors ``inputs`` (input, bins, weight, as given): torch records its
    autograd fallback's NotImplemented node (of the inputs requiring grad) on both results."""
    formula = D("", _no_derivative("histogram"))
    return OpDef("NotImplemented", _histogram_fwd, inputs, dict.fromkeys(inputs, formula),
                 outputs=("hist", "bin_edges"), differentiable_outputs=2, qualified_name=NOT_IMPLEMENTED)


def _histogram_weight(input: Tensor, weight: Tensor | None) -> None:
    if weight is None:
        return
    if weight.dtype is not input.dtype:
        names = TYPE_META_NAMES[input.dtype.name], TYPE_META_NAMES[weight.dtype.name]
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                           "should have the same dtype, but got input({}), and weight({})".format(*names))
    if weight.numel() != input.numel():
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as the input "
            f"tensor excluding its innermost dimension, but got input with shape [{input.numel()}, 1] and "
            f"weight with shape {list(weight.shape)}"
        )


@api.variants("histogram", out=Out(parts=(Out("same"), Out("same")), differentiable=False))
def histogram(
    input: Tensor, bins: Any = 100, *, range: Any = None, weight: Tensor = None, density: bool = False
) -> Any:
    """(hist, bin_edges): the histogram of ``input``'s elements (a floating dtype) over ``bins``
    equal bins (from ``range``, else the elements' min to max, widened by 0.5 each side when empty)
    or the edges of a 1-d tensor ``bins``, weighted by ``weight`` and normalised with ``density``."""
    by_edges = isinstance(bins, Tensor)
    if (
        not isinstance(input, Tensor)
        or not (by_edges or isinstance(bins, int)) or isinstance(bins, bool)
        or (by_edges and range is not None)
        or not (weight is None or isinstance(weight, Tensor))
    ):
        raise invalid_call(histogram, locals())
    if by_edges:
        if bins.dtype is not input.dtype:
            names = TYPE_META_NAMES[input.dtype.name], TYPE_META_NAMES[bins.dtype.name]
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input "
                "with dtype {} and bins for dimension 0 with dtype {}".format(*names)
            )
        if bins.dim() != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{bins.dim()} dimensions in the bins tensor for dimension 0")
        if not bins.numel():
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                               "elements in the bins tensor for dimension 0")
        _histogram_weight(input, weight)
    count = bins.numel() - 1 if by_edges else bins
    if count <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension 0")
    if by_edges:
        edges = bins._data.copy()
    else:
        edges = _histogram_edges(input, bins, range)
    _histogram_weight(input, weight)  # (checked before the counting kernel refuses integers)
    if not input.dtype.is_floating_point:  # (the counting kernel: the half types included)
        raise dtypes.kernel_missing("histogram_cpu", input.dtype)
    given = {"input": input, "bins": bins if by_edges else None, "weight": weight}
    names = tuple(k for k, v in given.items() if v is not None)
    hist, bin_edges = apply(_histogram_op(names), *(given[k] for k in names),
                            edges=edges, density=bool(density), weighted=weight is not None)
    return return_types.histogram((hist, bin_edges))


def _histogram_edges(input: Tensor, bins: int, range: Any) -> Any:
    """torch's select_outer_bin_edges, then linspace of ``bins + 1`` edges in the input's dtype."""
    left, right = 0.0, 1.0
    if range is not None:
        if len(range) != 2:
            raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should have 2 "
                               f"elements, but got {len(range)}")
        left, right = float(range[0]), float(range[1])
    elif input.numel():  # (its min and max: a kernel for float and double only)
        if input.dtype not in (dtypes.float32, dtypes.float64):
            raise dtypes.kernel_missing("histogramdd", input.dtype)
        a = input._data
        left, right = (float(a.min()), float(a.max())) if not np.isnan(a).any() else (math.nan, math.nan)
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{left:g}, {right:g}] is not finite")
    if left > right:
        raise RuntimeError("torch.histogramdd: min should not exceed max, but got min "
                           f"{left:g} max {right:g} for dimension 0")
    if left == right:
        left, right = left - 0.5, right + 0.5
    return linspace(left, right, bins + 1, dtype=input.dtype)._data
