"""More reductions: logsumexp, nansum, nanmean, all, any and count_nonzero, with torch's result
dtypes (logsumexp of integers in the default dtype, nansum of integers in int64, all/any of uint8
in uint8, of everything else in bool) and its identities over empty dims; and the scans cummax,
cummin (which index among ties and NaN) and logcumsumexp."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes, return_types
from impl._creation import full
from impl._ops import functions as fn
from impl._ops import indexing
from impl._ops import reductions as rd
from impl._ops.functions import reduced_dims
from impl._ops.table import D, OpDef, apply
from impl._signatures import invalid_call
from impl._tensor import Tensor, _wrap_dim
from impl._type_info import finfo
from impl._xp import namespace_of


def _unsqueezed(t: Any, c: Any) -> Any:
    """``t`` (a gradient or result of a reduction over the dims ``c.dim``) unsqueezed back over
    them, as torch's unsqueeze_multiple does without keepdim (over none for an empty list, which
    reduced every dim: the 0-d ``t`` broadcasts)."""
    if c.keepdim or not c.shape():
        return t
    for d in c.dim:
        t = t.unsqueeze(d)
    return t


# -- logsumexp -----------------------------------------------------------------------------------
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
)


_REQUIRED: Any = object()


@api.function("logsumexp")
def logsumexp(input: Tensor, dim: Any = _REQUIRED, keepdim: bool = False, *, _position: int = 2) -> Tensor:
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
    dims = tuple(sorted(fn._dim_list(dim if isinstance(dim, (list, tuple)) else (dim,), input.dim())))
    if isinstance(dim, (list, tuple)) and not dim and not keepdim and input.dim() and input.numel():
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * input.dim()}")
    if not input.dtype.is_floating_point:
        input = input.to(dtypes.get_default_dtype())
    return apply(LOGSUMEXP, input, dim=dims, keepdim=bool(keepdim))


# -- nansum and nanmean --------------------------------------------------------------------------
def _nansum_fwd(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The sum of the elements that are not NaN (as sum does: half types accumulated in float32)."""
    if a.dtype.kind not in "biu":  # floating, bfloat16 (numpy kind "V") included
        a = xp.where(xp.isnan(a), xp.zeros_like(a), a)
    return rd._sum_fwd(xp, a, dim, keepdim, dtype)


def _nansum_grad(g: Any, c: Any) -> Any:
    """torch's nansum_backward: the gradient expanded back, times ``self.isnan().logical_not()``."""
    return rd._expand_back(g, c) * c.self.isnan().logical_not()


NANSUM = OpDef("NansumBackward0", _nansum_fwd, derivatives={"self": D("self dim keepdim", _nansum_grad)})


@api.variants("nansum")
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The sum over ``dim`` treating NaN as 0; integers and bools sum in int64 unless ``dtype``."""
    if not isinstance(input, Tensor):
        raise invalid_call(nansum, locals())
    out_dt = rd.accumulated_dtype(input, dtype)
    dims = reduced_dims(dim, input.dim())  # (checked before the dtype's grad)
    rd.check_differentiable(input, out_dt)
    return apply(NANSUM, input, dim=dims, keepdim=bool(keepdim), dtype=out_dt.np)


@api.variants("nanmean")
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
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


# -- all, any, count_nonzero ---------------------------------------------------------------------
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


all = api.variants("all")(_truth_reduction("all"))  # noqa: A001 (torch's name)
any = api.variants("any")(_truth_reduction("any"))  # noqa: A001 (torch's name)


@api.variants("count_nonzero")
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of non-zero elements over ``dim`` (an int or a tuple of ints), as int64."""
    if not isinstance(input, Tensor):
        raise invalid_call(count_nonzero, locals())
    xp = namespace_of(input._data)
    counts = xp.sum(input._data != 0, axis=reduced_dims(dim, input.dim()), dtype=np.int64)
    return Tensor._from_array(xp.asarray(counts, dtype=np.int64))


# -- cummax, cummin, logcumsumexp ----------------------------------------------------------------
def taking_over(xp: Any, a: Any, running: Any) -> Any:
    """Where an element sets the running max (min) of cummax (cummin): where it equals it (ties
    take over), or is NaN."""
    takes_over = a == running
    return takes_over | xp.isnan(a) if a.dtype.kind not in "biu" else takes_over


def _cumulative_extreme_fwd(kind: str) -> Any:
    """torch's cummax/cummin kernel: along ``dim``, the running max (min) and the index of the last
    element that set it: an element at least as large (small) as the running value, or NaN, takes
    over (NaN then stays, and a later NaN takes the index)."""

    def forward(xp: Any, a: Any, dim: int) -> tuple:
        if a.ndim == 0:
            return a.copy(), xp.zeros((), dtype=np.int64)
        ufunc = xp.maximum if kind == "max" else xp.minimum
        takes_over = taking_over(xp, a, ufunc.accumulate(a, axis=dim))  # the running value: NaN propagates
        positions = xp.arange(a.shape[dim], dtype=np.int64).reshape(
            [-1 if d == dim else 1 for d in range(a.ndim)]
        )
        indices = xp.maximum.accumulate(xp.where(takes_over, positions, 0), axis=dim)
        return xp.take_along_axis(a, indices, axis=dim), indices  # -0.0 takes over from 0.0

    return forward


def _cummaxmin_grad(g: Any, c: Any) -> Any:
    """torch's cummaxmin_backward: the gradient added (scatter_add) into zeros at the indices; of an
    empty input, the input itself."""
    if not c.self.numel():
        return c.self
    key = indexing._gather_key(c.indices._data, c.dim)
    return indexing.accumulate(indexing.SCATTER_ADD, g, c.shape(), key, dim=c.dim, index=c.indices)


CUMMAX = OpDef(
    "CummaxBackward0",
    _cumulative_extreme_fwd("max"),
    outputs=("result", "indices"),
    derivatives={"self": D("self indices dim", _cummaxmin_grad)},
)
CUMMIN = OpDef(
    "CumminBackward0",
    _cumulative_extreme_fwd("min"),
    outputs=("result", "indices"),
    derivatives={"self": D("self indices dim", _cummaxmin_grad)},
)


def _cumulative_extreme(op: OpDef, kind: str) -> Any:
    """torch.cummax / torch.cummin: (values, indices) along ``dim``, as a named tuple."""

    def scan(input: Tensor, dim: Any = _REQUIRED) -> Any:
        if not isinstance(input, Tensor):
            raise invalid_call(scan, locals())
        if dim is _REQUIRED:
            raise TypeError(f'{kind}() missing 1 required positional arguments: "dim"')
        if input.dim() == 0 and dim not in (-1, 0):
            raise IndexError(f"{kind}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
        # an empty input is returned before its dim is looked at
        d = _wrap_dim(int(dim), input.dim()) if input.numel() else 0
        values, indices = apply(op, input, dim=d)
        return getattr(return_types, kind)((values, indices))

    scan.__name__ = scan.__qualname__ = kind
    return scan


cummax = api.variants("cummax")(_cumulative_extreme(CUMMAX, "cummax"))
cummin = api.variants("cummin")(_cumulative_extreme(CUMMIN, "cummin"))


def _logcumsumexp_fwd(xp: Any, a: Any, dim: int) -> Any:
    """log(cumsum(exp(a))) along ``dim`` as torch's log-add-exp scan from log(0) = -inf (which
    makes a first -0.0 0.0): -inf stays -inf, inf and NaN propagate. Computed in float64, rounded
    once."""
    if a.ndim == 0 or a.size == 0:
        return a.copy()
    start = xp.full([1 if d == dim else s for d, s in enumerate(a.shape)], -np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        lanes = xp.concatenate([start, a.astype(np.float64)], axis=dim)
        return xp.take(
            xp.logaddexp.accumulate(lanes, axis=dim), xp.arange(1, lanes.shape[dim]), axis=dim
        ).astype(a.dtype)


def _logcumsumexp_grad(g: Any, c: Any) -> Any:
    """torch's logcumsumexp_backward: the positive and negative parts of the gradient, each as
    ``exp(reverse_logcumsumexp(log|grad| - result) + self)`` (where the part is absent, the
    dtype's lowest value stands for log 0); a 0-d or empty gradient passes as is."""

    if g.dim() == 0 or g.numel() == 0:
        return g
    d = c.dim
    lowest = full((), finfo(g.dtype).min, dtype=g.dtype, device=g.device)  # at::scalar_tensor
    log_abs = g.abs().log()

    def part(log_grad: Any) -> Any:
        return (logcumsumexp((log_grad - c.result).flip(d), d).flip(d) + c.self).exp()

    return part(fn.where(g > 0, log_abs, lowest)) - part(fn.where(g < 0, log_abs, lowest))


LOGCUMSUMEXP = OpDef(
    "LogcumsumexpBackward0",
    _logcumsumexp_fwd,
    derivatives={"self": D("self result dim", _logcumsumexp_grad)},
)


@api.variants("logcumsumexp")
def logcumsumexp(input: Tensor, dim: Any = _REQUIRED) -> Tensor:
    """log(cumsum(exp(input))) along ``dim``, stable; floating inputs only (even 0-d or empty)."""
    if not isinstance(input, Tensor):
        raise invalid_call(logcumsumexp, locals())
    if dim is _REQUIRED:
        raise TypeError('logcumsumexp() missing 1 required positional arguments: "dim"')
    d = _wrap_dim(int(dim), input.dim())
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing("logcumsumexp_out_cpu", input.dtype)
    return apply(LOGCUMSUMEXP, input, dim=d)


# -- var_mean, std_mean, aminmax: two differentiable outputs ---------------------------------------
def _mean_of(xp: Any, a: Any, dim: Any, keepdim: bool) -> Any:
    """The mean over ``dim`` (every dim when None) as torch's Welford pass computes it with the
    variance: accumulated in float64 (as the variance), rounded once; of no elements NaN; and the running
    mean, once infinite, turns NaN at the next element (``inf + (x - inf) / k``), so a lane with an
    infinity before its last element has a NaN mean (where ``mean()`` gives inf)."""
    wide = a.astype(np.float64, copy=False)
    axes = tuple(range(a.ndim)) if dim is None else tuple(dim)
    n = int(np.prod([a.shape[d] for d in axes]))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = xp.sum(wide, axis=dim, keepdims=keepdim) / n
    if n > 1:
        lanes = xp.moveaxis(xp.isinf(wide), axes, range(a.ndim - len(axes), a.ndim))
        early = lanes.reshape(*lanes.shape[: a.ndim - len(axes)], n)[..., :-1].any(axis=-1)
        mean = xp.where(early.reshape(mean.shape), xp.asarray(np.nan, dtype=mean.dtype), mean)
    return mean.astype(a.dtype, copy=False)


def _var_mean_fwd(xp: Any, a: Any, dim: Any, correction: float, keepdim: bool) -> tuple:
    return rd._var_fwd(xp, a, dim, correction, keepdim), _mean_of(xp, a, dim, keepdim)


def _std_mean_fwd(xp: Any, a: Any, dim: Any, correction: float, keepdim: bool) -> tuple:
    return rd._std_fwd(xp, a, dim, correction, keepdim), _mean_of(xp, a, dim, keepdim)


def _with_mean_grad(spread_grad: Any) -> Any:
    """torch's var_mean_backward / std_mean_backward: the spread's gradient where its output's
    gradient is defined, plus mean_backward's where the mean's is (their sum when both are; an
    undefined gradient adds nothing, no zeros are made)."""

    def formula(grads: tuple, c: Any) -> Any:
        g_spread, g_mean = grads
        gself = None if g_spread is None else spread_grad(g_spread, c)
        if g_mean is not None:
            aux = rd._mean_grad(g_mean, c)
            gself = aux if gself is None else gself + aux
        return gself

    return formula


VAR_MEAN = OpDef(
    "VarMeanBackward0",
    _var_mean_fwd,
    outputs=("result0", "result1"),
    derivatives={"self": D("self dim correction keepdim", _with_mean_grad(rd._var_grad))},
    differentiable_outputs=2,
)
STD_MEAN = OpDef(
    "StdMeanBackward0",
    _std_mean_fwd,
    outputs=("result0", "result1"),
    derivatives={
        "self": D(
            "self result0 dim correction keepdim", _with_mean_grad(lambda g, c: rd.std_grad(g, c.result0, c))
        )
    },
    differentiable_outputs=2,
)


def _spread_and_mean(op: OpDef, name: str) -> Any:
    """torch.var_mean / torch.std_mean: the spread (var's or std's arguments, checks and warning)
    and the mean over the same dims, as a plain tuple; floating inputs only."""

    def reduce(
        input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None
    ) -> tuple:
        if not fn.spread_call_fits(input, dim, unbiased, correction):
            raise invalid_call(reduce, locals())
        return fn._spread(op, name, input, dim, unbiased, keepdim, correction)

    reduce.__name__ = reduce.__qualname__ = name
    return reduce


var_mean = api.function("var_mean")(_spread_and_mean(VAR_MEAN, "var_mean"))
std_mean = api.function("std_mean")(_spread_and_mean(STD_MEAN, "std_mean"))


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


@api.function("aminmax")
def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
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
def _aminmax_method(self: Tensor, *args: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """``Tensor.aminmax``: ``dim`` and ``keepdim`` are keyword-only (torch counts no ``self``)."""
    if args:
        given = f"{len(args)} was" if len(args) == 1 else f"{len(args)} were"
        raise TypeError(f"aminmax() takes 0 positional arguments but {given} given")
    return aminmax(self, dim=dim, keepdim=keepdim)



@api.method("logsumexp")
def _logsumexp_method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    return logsumexp(self, *args, **kwargs, _position=1)
