"""Second moments: var and std (VarBackward0, StdBackward0), and var_mean and std_mean, which
give both and take a gradient for each, with torch's correction (``unbiased``) rules."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl._ops.elementwise import mul_scalar
from impl._ops.pointwise_ternary import WHERE
from impl._ops.reductions import _count, _mean_grad, reduced_dims
from impl._ops.table import D, OpDef, _wrap, apply, separable
from impl._signatures import Out, invalid_call
from impl._tensor import Dims, Tensor, is_int_like


def _variance(xp: Any, a: Any, dim: Any, correction: float | None, keepdim: bool) -> Any:
    correction = _numeric(correction)
    """The variance in float64 (torch's Welford kernel accumulates every floating type in double: a
    float32 variance may overflow where its std does not), not yet rounded to ``a``'s dtype."""
    a = a.astype(np.float64, copy=False)
    n = a.size if dim is None else int(np.prod([a.shape[d] for d in dim]))  # elements per result
    if n - correction > 0:
        return xp.var(a, axis=dim, ddof=correction, keepdims=keepdim)
    # no degrees of freedom: the squared deviations over max(0, n - correction), as numpy and torch
    # compute it, without numpy's RuntimeWarning (std/var raise torch's own warning)
    squares = xp.var(a, axis=dim, keepdims=keepdim) * n if n else xp.sum(a * 0, axis=dim, keepdims=keepdim)
    return squares / max(0, n - correction)


def _var_fwd(xp: Any, a: Any, dim: Any, correction: float, keepdim: bool) -> Any:
    return _variance(xp, a, dim, correction, keepdim).astype(a.dtype, copy=False)


def _std_fwd(xp: Any, a: Any, dim: Any, correction: float, keepdim: bool) -> Any:
    return xp.sqrt(_variance(xp, a, dim, correction, keepdim)).astype(a.dtype, copy=False)


def _centered(c: Any) -> Any:
    x = c.self
    return x - x.mean(c.dim, keepdim=True) if c.dim is not None else x - x.mean()


def _var_grad(g: Any, c: Any) -> Any:
    """torch's var_backward: (2 / dof) * grad * (self - mean), the grad unsqueezed (not expanded)
    over the reduced dims of a self of more than one dim; a full reduction without degrees of
    freedom gives grad * (nan where self is its mean, else inf)."""
    if c.dim is not None and not c.keepdim and len(c.shape()) > 1:
        for d in sorted(c.dim):
            g = g.unsqueeze(d)
    dof = float(_count(c) - _numeric(c.correction))  # may be <= 0: torch's formula divides by it as is
    if dof <= 0 and c.dim is None:

        x = c.self
        mean = x.mean(c.dim, keepdim=True) if c.dim is not None else x.mean()
        nan, inf = _wrap(float("nan"), x), _wrap(float("inf"), x)  # numbers on x's device
        return g * apply(WHERE, nan, inf, condition=x == mean)
    return mul_scalar(g, 2.0 / dof if dof else float("inf")) * _centered(c)


def std_grad(g: Any, std: Any, c: Any) -> Any:
    """torch's std_backward: var's gradient of grad / (2 * std), zeroed where std is 0."""
    return _var_grad((g / mul_scalar(std, 2)).masked_fill(std == 0, 0), c)


def _std_grad(g: Any, c: Any) -> Any:
    return std_grad(g, c.result, c)


# var_jvp, std's ``var_jvp / (2 * result)``: the backward formulas times the tangent, summed
VAR = OpDef(
    "VarBackward0", _var_fwd, derivatives={"self": D("self dim correction keepdim", _var_grad)}, jvp=separable
)


STD = OpDef(
    "StdBackward0",
    _std_fwd,
    derivatives={"self": D("self result dim correction keepdim", _std_grad)},
    jvp=separable,
)


class _Unset:
    """The default of var/std's ``dim`` and ``correction``: whether they were given decides which of
    torch's overloads a call takes, and so what its node saves as ``correction``."""

    def __repr__(self) -> str:
        return "None"


UNSET: Any = _Unset()


def _numeric(correction: float | None) -> float:
    """The correction computed with: None (the correction overload's default) is 1."""
    return 1 if correction is None else correction


def _correction(dim: Any, unbiased: Any, correction: Any) -> float | None:
    """The correction torch's node saves: the correction overload's (None unless given) when a call
    gives neither ``dim`` nor ``unbiased``, or gives ``correction``; else the dim (or bool)
    overload's ``unbiased`` as 1 or 0."""
    if correction is not UNSET:
        return correction
    if dim is UNSET and unbiased is None:
        return None
    return 1 if unbiased is None or unbiased else 0


def spread_call_fits(input: Any, dim: Any, unbiased: Any, correction: Any) -> bool:
    """Whether torch's parser takes a var/std/var_mean/std_mean call: a tensor, a dim that is an int
    or a list of ints (or a bool standing for ``unbiased``), and not both ``unbiased`` and
    ``correction`` (no signature has both)."""
    if not isinstance(input, Tensor):
        return False
    dim = None if dim is UNSET else dim
    correction = None if correction is UNSET else correction
    dims = dim if isinstance(dim, (list, tuple)) else () if dim is None else (dim,)
    return (not dims or is_int_like(dims[0])) and not (unbiased is not None and correction is not None)


def unbiased_by_position(fn: Any) -> Any:
    """var/std/var_mean/std_mean taking torch's ``(Tensor input, bool unbiased)`` overload: a bool
    right after the input is ``unbiased`` (``std(x, False)``), while ``dim=True`` fits no overload."""

    @functools.wraps(fn)
    def spread(input: Any, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], bool) and not kwargs:
            return fn(input, UNSET, args[0], **kwargs)
        return fn(input, *args, **kwargs)

    return spread


def _spread(
    op: Any, name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any
) -> Tensor:
    """std/var (and var_mean/std_mean): torch's checks (floating input, each dim once), and its
    warning when the correction leaves no degrees of freedom: the elements reduced into each output
    (none of an empty input, whatever the dims) minus the correction."""
    if not input.dtype.is_floating_point:
        which = "std and var" if name in ("var", "std") else name
        raise RuntimeError(f"{which} only support floating point and complex dtypes")
    corr = _correction(dim, unbiased, correction)
    dims = reduced_dims(None if dim is UNSET else dim, input.dim())
    shape = tuple(input.shape)
    factor = int(np.prod([shape[d] for d in dims] if dims is not None else shape)) if input.numel() else 0
    if factor - _numeric(corr) <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
            "factor (input numel divided by output numel). (Triggered internally at /__w/pytorch/pytorch/"
            "aten/src/ATen/native/ReduceOps.cpp:1861.)",
            UserWarning,
            stacklevel=3,
        )
    return apply(op, input, dim=dims, correction=corr, keepdim=keepdim)


@api.variants("var", out=Out("upcast_cast"))
@unbiased_by_position
def var(
    input: Tensor, dim: Dims = UNSET, unbiased: bool = None, keepdim: bool = False, *, correction: Any = UNSET
) -> Tensor:
    if not spread_call_fits(input, dim, unbiased, correction):
        raise invalid_call(var, locals())
    return _spread(VAR, "var", input, dim, unbiased, keepdim, correction)


@api.variants("std", out=Out("upcast_cast"))
@unbiased_by_position
def std(
    input: Tensor, dim: Dims = UNSET, unbiased: bool = None, keepdim: bool = False, *, correction: Any = UNSET
) -> Tensor:
    if not spread_call_fits(input, dim, unbiased, correction):
        raise invalid_call(std, locals())
    return _spread(STD, "std", input, dim, unbiased, keepdim, correction)


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
    return _var_fwd(xp, a, dim, correction, keepdim), _mean_of(xp, a, dim, keepdim)


def _std_mean_fwd(xp: Any, a: Any, dim: Any, correction: float, keepdim: bool) -> tuple:
    return _std_fwd(xp, a, dim, correction, keepdim), _mean_of(xp, a, dim, keepdim)


def _with_mean_grad(spread_grad: Any) -> Any:
    """torch's var_mean_backward / std_mean_backward: the spread's gradient where its output's
    gradient is defined, plus mean_backward's where the mean's is (their sum when both are; an
    undefined gradient adds nothing, no zeros are made)."""

    def formula(grads: tuple, c: Any) -> Any:
        g_spread, g_mean = grads
        gself = None if g_spread is None else spread_grad(g_spread, c)
        if g_mean is not None:
            aux = _mean_grad(g_mean, c)
            gself = aux if gself is None else gself + aux
        return gself

    return formula


VAR_MEAN = OpDef(
    "VarMeanBackward0",
    _var_mean_fwd,
    outputs=("result0", "result1"),
    derivatives={"self": D("self dim correction keepdim", _with_mean_grad(_var_grad))},
    differentiable_outputs=2,
    jvp=separable,
)


STD_MEAN = OpDef(
    "StdMeanBackward0",
    _std_mean_fwd,
    outputs=("result0", "result1"),
    derivatives={
        "self": D(
            "self result0 dim correction keepdim", _with_mean_grad(lambda g, c: std_grad(g, c.result0, c))
        )
    },
    differentiable_outputs=2,
    jvp=separable,
)


def _spread_and_mean(op: OpDef, name: str) -> Any:
    """torch.var_mean / torch.std_mean: the spread (var's or std's arguments, checks and warning)
    and the mean over the same dims, as a plain tuple; floating inputs only."""

    def reduce(
        input: Tensor,
        dim: Any = UNSET,
        unbiased: Any = None,
        keepdim: bool = False,
        *,
        correction: Any = UNSET,
    ) -> tuple:
        if not spread_call_fits(input, dim, unbiased, correction):
            raise invalid_call(reduce, locals())
        return _spread(op, name, input, dim, unbiased, keepdim, correction)

    reduce.__name__ = reduce.__qualname__ = name
    return unbiased_by_position(reduce)


var_mean = api.function("var_mean")(_spread_and_mean(VAR_MEAN, "var_mean"))


std_mean = api.function("std_mean")(_spread_and_mean(STD_MEAN, "std_mean"))
