"""Scans along a dim: cumsum, cumprod, cummax, cummin and logcumsumexp, with torch's accumulation
order, dtypes and derivatives (cumprod's with zeros as FunctionsManual's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes, return_types
from impl._creation import full, ones, zeros_like
from impl._grad_mode import is_grad_enabled
from impl._ops import indexing
from impl._ops.indexing import cat
from impl._ops.pointwise_ternary import where
from impl._ops.reductions import accumulated_dtype, check_differentiable
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._signatures import ACCUMULATE, Out, invalid_call
from impl._tensor import Tensor, _wrap_dim
from impl._type_info import finfo
from impl._xp import namespace_of

_REQUIRED: Any = object()  # a dim not given


def _scan_fwd(scan: str) -> Any:
    """cumsum/cumprod along ``dim`` into ``dtype``, as torch's CPU kernel: the running value kept in
    its accumulate type (float32 in float64, float16 in float32), each step rounded to ``dtype``,
    the sum started from +0.0 (so -0.0 + ... is never -0.0, where numpy's starts from the first
    element); a 0-d input is its own scan."""

    def forward(xp: Any, a: Any, dim: int, dtype: Any, in_dtype: Any) -> Any:
        if a.ndim == 0:
            out = a.astype(dtype, copy=True)
        else:
            acc = _SCAN_ACCUMULATE.get(np.dtype(dtype), dtype)
            out = getattr(xp, scan)(a, axis=dim, dtype=acc).astype(dtype, copy=False)
        if scan == "cumsum" and out.dtype.kind == "f":
            out += 0.0  # -0.0 becomes +0.0, nothing else changes
        return out

    return forward


# the type torch's CPU scans keep their running value in (at::acc_type<T, /*is_cuda=*/false>)
_SCAN_ACCUMULATE = {
    np.dtype(np.float16): np.float32,
    dtypes.bfloat16.np: np.float32,
    np.dtype(np.float32): np.float64,
}


def reversed_cumsum(t: Any, dim: int) -> Any:
    """The sums from each element to the end along ``dim`` (flip, cumsum, flip as torch)."""
    return t.flip([dim]).cumsum(dim).flip([dim])


def _as_input(g: Any, c: Any) -> Any:
    """``grad.to(self.scalar_type())``: a scan computed in another dtype sends its input's back."""
    return g if g.dtype is c.in_dtype else g.to(c.in_dtype)


def _cumsum_grad(g: Any, c: Any) -> Any:
    g = _as_input(g, c)
    if g.numel() <= 1 or g.shape[c.dim] == 1:
        return g
    return reversed_cumsum(g, c.dim)


def _cumprod_grad(g: Any, c: Any) -> Any:
    """torch's cumprod_backward: without zeros, reversed_cumsum(result * grad) / self; with
    zeros, for each k the sum over i >= k of grad[i] times the product of the elements up to i
    but k, built from prod and cumprod of slices and written into zeros a slice at a time (as
    torch, so it has derivatives of every order)."""
    g, x, dim = _as_input(g, c), c.self, c.dim
    if x.numel() <= 1 or x.shape[dim] == 1:
        return g
    if not bool((x._data == 0).any()):
        return reversed_cumsum(c.result * g, dim).div(x)

    if not is_grad_enabled():
        return _cumprod_grad_with_zeros(g, x, c.result, dim)
    n = x.shape[dim]
    edge = [1 if d == dim else s for d, s in enumerate(x.shape)]
    one = ones(1, dtype=g.dtype, device=x.device).expand(edge)
    out = zeros_like(x, dtype=g.dtype)
    for k in range(n):
        if k == 0:
            omitted = cat([one, x.narrow(dim, 1, n - 1).cumprod(dim)], dim)
        else:
            until = x.narrow(dim, 0, k).prod(dim, True)
            if k < n - 1:
                after = x.narrow(dim, k + 1, n - k - 1).cumprod(dim)
                omitted = cat([until, until.expand_as(after) * after], dim)
            else:
                omitted = until
        out.select(dim, k).copy_((g.narrow(dim, k, n - k) * omitted).sum(dim))
    return out


def _cumprod_grad_with_zeros(g: Any, x: Any, result: Any, dim: int) -> Any:
    """torch's O(n) cumprod_backward where the input has zeros and no graph is wanted: before the
    first zero of a lane, reversed_cumsum(result * grad) / self; at the first zero, the sum of
    grad times the cumprod of the elements up to the second zero, times the product before it;
    after it, zero (inf and nan come out where torch's do)."""

    xp = namespace_of(x._data)
    a, grad, out = (xp.moveaxis(xp.asarray(t._data), dim, -1) for t in (x, g, result))
    zeros_so_far = xp.cumsum(a == 0, axis=-1)
    before = zeros_so_far == 0
    with np.errstate(all="ignore"):
        w = xp.where(before, out * grad, 0)
        head = xp.flip(xp.cumsum(xp.flip(w, -1), -1), -1) / a
        first = xp.argmax(zeros_so_far == 1, axis=-1)[..., None]
        at_first = (xp.arange(a.shape[-1]) == first) & (zeros_so_far == 1)
        between = (zeros_so_far == 1) & ~at_first
        products = xp.cumprod(xp.where(between, a, 1), axis=-1) * xp.where(zeros_so_far == 1, grad, 0)
        prior = xp.where(first == 0, 1, xp.take_along_axis(out, xp.maximum(first - 1, 0), axis=-1))
        value = products.sum(-1, keepdims=True) * prior
    grad_input = xp.where(at_first, value, xp.where(before, head, 0)).astype(a.dtype, copy=False)
    return Tensor._from_array(xp.ascontiguousarray(xp.moveaxis(grad_input, -1, dim)))


CUMSUM = OpDef(
    "CumsumBackward0",
    _scan_fwd("cumsum"),
    derivatives={"self": D("dim in_dtype", _cumsum_grad)},
    jvp=auto_linear,
)


CUMPROD = OpDef(
    "CumprodBackward0",
    _scan_fwd("cumprod"),
    derivatives={"self": D("self dim result in_dtype", _cumprod_grad)},
    jvp=lambda c: _cumprod_jvp(c.self_t, c.self, c.result, c.dim),
)


def _cumprod_jvp(self_t: Tensor, self_p: Tensor, result: Tensor, dim: int) -> Tensor:
    """torch's cumprod_jvp: ``cumsum(t / x) * result``, and where the input has zeros, from a
    lane's first zero on the cumprod of the input with that zero's tangent in its place."""
    gradient = (self_t / self_p).cumsum(dim) * result
    zeros = self_p == 0
    if self_p.dim() == 0:
        return gradient.masked_fill_(zeros, self_t)
    first_zero = zeros.logical_and(zeros.cumsum(dim) == 1)
    after = where(first_zero, self_t, self_p).cumprod(dim)
    return where(first_zero.cumsum(dim).to(dtypes.bool_), after, gradient)


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
    jvp=lambda c: c.self_t.gather(c.dim, c.indices),
)


CUMMIN = OpDef(
    "CumminBackward0",
    _cumulative_extreme_fwd("min"),
    outputs=("result", "indices"),
    derivatives={"self": D("self indices dim", _cummaxmin_grad)},
    jvp=lambda c: c.self_t.gather(c.dim, c.indices),
)


def _cumulative_extreme(op: OpDef, kind: str) -> Any:
    """torch.cummax / torch.cummin: (values, indices) along ``dim``, as a named tuple."""

    def scan(input: Tensor, dim: int = _REQUIRED) -> Any:
        if not isinstance(input, Tensor):
            raise invalid_call(scan, locals())
        if dim is _REQUIRED:
            raise TypeError(f'{kind}() missing 1 required positional arguments: "dim"')
        if input.dim() == 0 and dim not in (-1, 0):
            raise IndexError(f"{kind}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
        # an empty input is returned before its dim is looked at
        d = _wrap_dim(dim, input.dim()) if input.numel() else 0
        values, indices = apply(op, input, dim=d)
        return getattr(return_types, kind)((values, indices))

    scan.__name__ = scan.__qualname__ = kind
    return scan


SCALAR_TYPE = Out("same", "expected scalar_type {result} but found {out}")
CUMULATIVE_OUT = Out(parts=(SCALAR_TYPE, SCALAR_TYPE), checks_first=True)
cummax = api.variants("cummax", out=CUMULATIVE_OUT)(
    _cumulative_extreme(CUMMAX, "cummax")
)


cummin = api.variants("cummin", out=CUMULATIVE_OUT)(
    _cumulative_extreme(CUMMIN, "cummin")
)


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

    return part(where(g > 0, log_abs, lowest)) - part(where(g < 0, log_abs, lowest))


LOGCUMSUMEXP = OpDef(
    "LogcumsumexpBackward0",
    _logcumsumexp_fwd,
    derivatives={"self": D("self result dim", _logcumsumexp_grad)},
    jvp=lambda c: _logcumsumexp_jvp(c.self, c.self_t, c.dim),
)


def _logcumsumexp_jvp(self_p: Tensor, self_t: Tensor, dim: int) -> Tensor:
    """torch's logcumsumexp_jvp: ``cumsum(e * t) / cumsum(e)``, ``e = exp(x - max(x, dim))``."""
    e = (self_p - self_p.amax(dim, keepdim=True)).exp()
    return (e * self_t).cumsum(dim) / e.cumsum(dim)


@api.variants("logcumsumexp", out=SCALAR_TYPE)
def logcumsumexp(input: Tensor, dim: int = _REQUIRED) -> Tensor:
    """log(cumsum(exp(input))) along ``dim``, stable; floating inputs only (even 0-d or empty)."""
    if not isinstance(input, Tensor):
        raise invalid_call(logcumsumexp, locals())
    if dim is _REQUIRED:
        raise TypeError('logcumsumexp() missing 1 required positional arguments: "dim"')
    d = _wrap_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        raise dtypes.kernel_missing("logcumsumexp_out_cpu", input.dtype)
    return apply(LOGCUMSUMEXP, input, dim=d)


@api.variants("cumsum", out=ACCUMULATE)
def cumsum(input: Tensor, dim: int = _REQUIRED, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(cumsum, locals())
    return _scan(CUMSUM, "cumsum", input, dim, dtype)


@api.variants("cumprod", out=ACCUMULATE)
def cumprod(input: Tensor, dim: int = _REQUIRED, *, dtype: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(cumprod, locals())
    return _scan(CUMPROD, "cumprod", input, dim, dtype)


def _scan(op: Any, name: str, input: Tensor, dim: Any, dtype: Any) -> Tensor:
    """cumsum/cumprod: integer and bool inputs scan in int64 unless ``dtype`` says otherwise."""
    if dim is _REQUIRED:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    out = accumulated_dtype(input, dtype)
    d = _wrap_dim(dim, input.dim())
    if out is dtypes.bool_ and input.dim() and input.numel():  # 0-d and empty inputs run no kernel
        raise dtypes.kernel_missing(f"{name}_out_cpu", dtypes.bool_)
    check_differentiable(input, out)
    return apply(op, input, dim=d, dtype=out.np, in_dtype=input.dtype)
