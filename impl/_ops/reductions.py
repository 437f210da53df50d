"""Reductions (sum mean prod max min var std), softmax/log_softmax, matrix products and trace."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import dtypes
from impl._creation import arange, ones, zeros, zeros_like
from impl._grad_mode import is_grad_enabled
from impl._layout import new_like
from impl._ops import backward_ops as bw
from impl._ops import cpu_kernels, elementwise
from impl._ops.elementwise import WHERE, masked
from impl._ops.indexing import cat
from impl._ops.table import D, OpDef, _wrap, apply, fill_array
from impl._signatures import invalid_call
from impl._tensor import Tensor
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
    return input.dtype if input.dtype.is_floating_point else dtypes.int64


def check_differentiable(input: Any, out: Any) -> None:
    """torch's set_history check: a result that would get a grad_fn must be of a floating dtype
    (``torch.sum(x, dtype=torch.int64)`` of an ``x`` that requires grad raises, outside no_grad)."""
    if not out.is_floating_point and input.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"Autograd not support dtype: {dtypes.scalar_type(out)}")


def _sum_fwd(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The sum in ``dtype``; float16/bfloat16 accumulated in float32 and rounded once, as torch's."""
    out = np.dtype(dtype) if dtype is not None else a.dtype
    if out.kind not in "biuf" or out.kind == "f" and out.itemsize < 4:
        return xp.sum(a.astype(out, copy=False), axis=dim, keepdims=keepdim, dtype=np.float32).astype(out)
    return xp.sum(a, axis=dim, keepdims=keepdim, dtype=dtype)


def _mean_fwd(xp: Any, a: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """The mean, half types accumulated in float32 and rounded once (as torch's kernel); over no
    elements NaN, without numpy's "Mean of empty slice" warning."""
    out = dtype or a.dtype
    wide = np.float32 if np.dtype(out).itemsize < 4 else out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return xp.mean(a, axis=dim, keepdims=keepdim, dtype=wide).astype(out, copy=False)


SUM = OpDef("SumBackward0", _sum_fwd, derivatives={"self": D("dim keepdim", _expand_back)})
SUM_DIM = OpDef("SumBackward1", _sum_fwd, derivatives={"self": D("dim keepdim", _expand_back)})
MEAN = OpDef(
    "MeanBackward0",
    _mean_fwd,
    derivatives={"self": D("dim keepdim", lambda g, c: _mean_grad(g, c))},
)
MEAN_DIM = OpDef(
    "MeanBackward1",
    _mean_fwd,
    derivatives={"self": D("dim keepdim", lambda g, c: _mean_grad(g, c))},
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
)
PROD_DIM = OpDef(
    "ProdBackward1",
    _prod_fwd,
    derivatives={"self": D("self result dim keepdim", _prod_grad)},
)


# -- scans and flip ------------------------------------------------------------------------------
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
    one = ones(1, dtype=g.dtype, device=x.device).expand(*edge)
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


CUMSUM = OpDef("CumsumBackward0", _scan_fwd("cumsum"), derivatives={"self": D("dim in_dtype", _cumsum_grad)})
CUMPROD = OpDef(
    "CumprodBackward0",
    _scan_fwd("cumprod"),
    derivatives={"self": D("self dim result in_dtype", _cumprod_grad)},
)


def _flip_fwd(xp: Any, a: Any, dims: tuple) -> Any:
    """The flipped copy, laid out like the input (torch allocates it with empty_like)."""
    out = new_like(xp, a)
    out[...] = xp.flip(a, axis=dims) if dims else a
    return out


FLIP = OpDef(
    "FlipBackward0",
    _flip_fwd,
    derivatives={"self": D("dims", lambda g, c: g.flip(list(c.dims)))},
)


def _evenly(g: Any, c: Any) -> Any:
    """torch's evenly_distribute_backward: the gradient shared by the elements equal to the
    max/min, or by the nans when it is nan."""

    xp = namespace_of(c.self._data)
    nan = c.self.dtype.is_floating_point and bool(xp.isnan(c.result._data))
    mask = Tensor._from_array(xp.isnan(c.self._data)) if nan else c.self == c.result
    # CPU: zeros with the share filled in (the others stay +0.0, where a product gave -0.0)
    return zeros_like(c.self).masked_fill(mask, g / mask.sum())


def _amax_grad(g: Any, c: Any) -> Any:
    mask = c.self == _expand_back(c.result, c)
    count = mask.sum(c.dim, keepdim=True) if c.dim is not None else mask.sum()
    return _expand_back(g, c) * mask / count


def _amax_fwd(kind: str) -> Any:
    def fwd(xp: Any, a: Any, dim: Any, keepdim: bool) -> Any:
        return (xp.max if kind == "max" else xp.min)(a, axis=dim, keepdims=keepdim)

    return fwd


AMAX = OpDef(
    "AmaxBackward0", _amax_fwd("max"), derivatives={"self": D("self result dim keepdim", _amax_grad)}
)
AMIN = OpDef(
    "AminBackward0", _amax_fwd("min"), derivatives={"self": D("self result dim keepdim", _amax_grad)}
)
MAX_ALL = OpDef("MaxBackward1", lambda xp, a: xp.max(a), derivatives={"self": D("self result", _evenly)})
MIN_ALL = OpDef("MinBackward1", lambda xp, a: xp.min(a), derivatives={"self": D("self result", _evenly)})


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
)
MIN_DIM = OpDef(
    "MinBackward0",
    _select_reduce_fwd("min"),
    outputs=("result", "indices"),
    derivatives={"self": D("indices dim keepdim", _value_selecting_back)},
)


def _variance(xp: Any, a: Any, dim: Any, correction: float, keepdim: bool) -> Any:
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
    dof = float(_count(c) - c.correction)  # may be <= 0: torch's formula divides by it as is
    if dof <= 0 and c.dim is None:

        x = c.self
        mean = x.mean(c.dim, keepdim=True) if c.dim is not None else x.mean()
        nan, inf = _wrap(float("nan"), x), _wrap(float("inf"), x)  # numbers on x's device
        return g * apply(WHERE, nan, inf, condition=x == mean)
    return elementwise.mul_scalar(g, 2.0 / dof if dof else float("inf")) * _centered(c)


def std_grad(g: Any, std: Any, c: Any) -> Any:
    """torch's std_backward: var's gradient of grad / (2 * std), zeroed where std is 0."""
    return _var_grad((g / elementwise.mul_scalar(std, 2)).masked_fill(std == 0, 0), c)


def _std_grad(g: Any, c: Any) -> Any:
    return std_grad(g, c.result, c)


VAR = OpDef("VarBackward0", _var_fwd, derivatives={"self": D("self dim correction keepdim", _var_grad)})
STD = OpDef(
    "StdBackward0", _std_fwd, derivatives={"self": D("self result dim correction keepdim", _std_grad)}
)


def _softmax_fwd(xp: Any, a: Any, dim: int) -> Any:
    if xp is np and a.dtype == np.float32 and a.ndim:
        return cpu_kernels.softmax(a, dim)  # torch's order of float32 operations
    e = xp.exp(a - xp.max(a, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_fwd(xp: Any, a: Any, dim: int) -> Any:
    if xp is np and a.dtype == np.float32 and a.ndim:
        return cpu_kernels.log_softmax(a, dim)  # torch's order of float32 operations
    shifted = a - xp.max(a, axis=dim, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=dim, keepdims=True))


def _floating_kernel(name: str, forward: Any) -> Any:
    """``forward`` behind torch's CPU (log_)softmax dispatch: kernels exist for floating dtypes
    only, one for the last dimension and one for the others (the error names which); an empty
    input returns an empty result of its own dtype before any kernel runs."""

    def run(xp: Any, a: Any, dim: int) -> Any:
        if a.size == 0:
            return new_like(xp, a)
        if a.dtype.kind == "f":
            return forward(xp, a, dim)
        kernel = f"{name}_lastdim_kernel_impl" if dim == max(a.ndim, 1) - 1 else f"{name}_kernel_impl"
        raise dtypes.kernel_missing(kernel, a.dtype)

    return run


SOFTMAX = OpDef(
    "SoftmaxBackward0",
    _floating_kernel("softmax", _softmax_fwd),
    derivatives={"self": D("result dim", lambda g, c: bw.softmax_backward_data(g, c.result, c.dim))},
)
LOG_SOFTMAX = OpDef(
    "LogSoftmaxBackward0",
    _floating_kernel("log_softmax", _log_softmax_fwd),
    derivatives={"self": D("result dim", lambda g, c: bw.log_softmax_backward_data(g, c.result, c.dim))},
)


# -- matrix products ---------------------------------------------------------------------------
def mm_mat1_backward(g: Any, mat2: Any, sizes: tuple, strides: tuple, alpha: Any = 1) -> Any:
    """Gradient of ``mat1 @ mat2`` for mat1; a column-major mat1 gets a column-major gradient
    (torch's mm_mat1_backward: ``.grad`` then keeps the parameter's layout and is not copied)."""
    if strides[0] == 1 and strides[1] == sizes[0]:
        out = mat2.mm(g.t()).t()
    else:
        out = g.mm(mat2.t())
    return out if alpha == 1 else out * alpha


def mm_mat2_backward(g: Any, mat1: Any, sizes: tuple, strides: tuple, alpha: Any = 1) -> Any:
    """Gradient of ``mat1 @ mat2`` for mat2, column-major when mat2 was (torch's mm_mat2_backward;
    a Linear's ``weight.t()`` is, so the weight's gradient comes out contiguous)."""
    if strides[0] == 1 and strides[1] == sizes[0]:
        out = g.t().mm(mat1).t()
    else:
        out = mat1.t().mm(g)
    return out if alpha == 1 else out * alpha


MM = OpDef(
    "MmBackward0",
    lambda xp, a, b: a @ b,
    ("self", "mat2"),
    {
        "self": D(
            "mat2 self.strides", lambda g, c: mm_mat1_backward(g, c.mat2, c.shape("self"), c.strides("self"))
        ),
        "mat2": D(
            "self mat2.strides", lambda g, c: mm_mat2_backward(g, c.self, c.shape("mat2"), c.strides("mat2"))
        ),
    },
)
BMM = OpDef(
    "BmmBackward0",
    lambda xp, a, b: a @ b,
    ("self", "mat2"),
    {
        "self": D("mat2", lambda g, c: g.bmm(c.mat2.transpose(1, 2))),
        "mat2": D("self", lambda g, c: c.self.transpose(1, 2).bmm(g)),
    },
)
DOT = OpDef(
    "DotBackward0",
    lambda xp, a, b: xp.dot(a, b),
    ("self", "tensor"),
    {"self": D("tensor", lambda g, c: g * c.tensor), "tensor": D("self", lambda g, c: g * c.self)},
)


@api.variants("outer", tensor="vec2")
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """torch's outer: ``input`` reshaped to a column (a view: ViewBackward0) times ``vec2``."""
    if not (isinstance(input, Tensor) and isinstance(vec2, Tensor)):
        raise invalid_call(outer, locals())
    return input.reshape(input.shape[0], 1) * vec2


# -- views -------------------------------------------------------------------------------------


def _outer(g: Any, vec: Any) -> Any:
    """derivatives.yaml's ``grad.ger(vec)``."""
    return outer(g, vec)


MV = OpDef(
    "MvBackward0",
    lambda xp, a, v: a @ v,
    ("self", "vec"),
    {"self": D("vec", lambda g, c: _outer(g, c.vec)), "vec": D("self", lambda g, c: c.self.t().mv(g))},
)


def _addmm_fwd(xp: Any, s: Any, a: Any, b: Any, beta: Any, alpha: Any) -> Any:
    if (beta, alpha) == (1, 1):
        return s + a @ b
    if s.dtype.kind in "iu":  # torch converts the scalars to an integer input's dtype as a fill's
        beta, alpha = (fill_array(xp, v, s.dtype) for v in (beta, alpha))  # (0.5 -> 0, -1 -> 255 in uint8)
    product = alpha * (a @ b)
    return product if beta == 0 else beta * s + product  # beta 0: the input is not read (nan, inf)


ADDMM = OpDef(
    "AddmmBackward0",
    _addmm_fwd,
    ("self", "mat1", "mat2"),
    {
        "self": D("beta", lambda g, c: g if c.beta == 1 else g * c.beta),
        "mat1": D(
            "mat2 alpha mat1.strides",
            lambda g, c: mm_mat1_backward(g, c.mat2, c.shape("mat1"), c.strides("mat1"), c.alpha),
        ),
        "mat2": D(
            "mat1 alpha mat2.strides",
            lambda g, c: mm_mat2_backward(g, c.mat1, c.shape("mat2"), c.strides("mat2"), c.alpha),
        ),
    },
    promote="common",
)


def _trace_back(g: Any, c: Any) -> Any:
    """torch's trace_backward: zeros with the gradient filled in at every (m + 1)-th element, viewed
    as the matrix (the others +0.0; graph ViewBackward0 <- IndexFillBackward1)."""

    n, m = c.shape()
    diagonal = arange(0, n * m, m + 1, device=g.device)
    return zeros(n * m, dtype=g.dtype, device=g.device).index_fill(0, diagonal, g).view(n, m)


def _trace(xp: Any, a: Any) -> Any:
    """The trace; of integers an int64 (numpy's of uint8 would be a uint64); none of bools."""
    if a.dtype.kind == "b":
        raise dtypes.kernel_missing("trace", dtypes.bool_)
    return xp.trace(a, dtype=xp.int64 if a.dtype.kind in "iu" else None)


TRACE = OpDef(
    "TraceBackward0",
    _trace,
    derivatives={"self": D("", _trace_back)},
)
