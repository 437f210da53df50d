"""Norms: ``linalg.vector_norm`` (LinalgVectorNormBackward0, torch's norm_backward with its
subgradient at zero), the matrix norms torch builds on it ('fro', 1, -1, inf, -inf), and
``linalg.norm`` / ``torch.norm`` / ``Tensor.norm``, which dispatch to them as torch 2.13 does."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes
from impl._creation import zeros
from impl._ops.inplace import inplace_method
from impl._ops.reductions import amax, amin
from impl._ops.table import D, OpDef, apply, separable
from impl._signatures import EXACT, invalid_call
from impl._tensor import Tensor, _dim_list, _wrap_dim

INF = math.inf


def _lanes(xp: Any, a: Any, dim: Any) -> Any:
    """``a`` with the reduced dims (every dim when None) flattened, in order, into the last axis."""
    if dim is None:
        return a.reshape(-1)
    kept = [d for d in range(a.ndim) if d not in dim]
    moved = xp.transpose(a, (*kept, *dim))
    return moved.reshape(*[a.shape[d] for d in kept], int(np.prod([a.shape[d] for d in dim])))


def _vector_norm_fwd(xp: Any, a: Any, ord: float, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """torch's CPU norm kernel on ``a`` cast to ``dtype``: each output's elements accumulated one
    after the other (in float32 for the half types), |x|**p evaluated in double and rounded;
    inf/-inf the max/min of |x| (NaN propagates), 0 the count of non-zeros."""
    a, ord = a.astype(dtype, copy=False), float(ord)
    acc = np.float32 if a.dtype.itemsize < 4 else a.dtype.type
    lanes = _lanes(xp, a, dim)
    absolute = xp.abs(lanes)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if abs(ord) == INF:
            out = (xp.max if ord > 0 else xp.min)(absolute, axis=-1) if lanes.shape[-1] else absolute.sum(-1)
        else:
            if ord == 0:
                terms = (lanes != 0).astype(acc)
            elif ord == 1:
                terms = absolute.astype(acc)
            elif ord == 2:
                wide = lanes.astype(acc)
                terms = wide * wide
            else:
                terms = (absolute.astype(np.float64) ** ord).astype(acc)
            out = xp.cumsum(terms, axis=-1, dtype=acc)[..., -1] if lanes.shape[-1] else terms.sum(-1)
            if ord == 2:
                out = xp.sqrt(out)
            elif ord not in (0, 1):
                out = (out.astype(np.float64) ** float(acc(1.0) / acc(ord))).astype(acc)
    out = xp.asarray(out).astype(a.dtype)
    if keepdim:
        out = out.reshape([1 if dim is None or d in dim else n for d, n in enumerate(a.shape)])
    return out


def _unsqueezed(t: Any, c: Any) -> Any:
    """torch's unsqueeze_multiple of ``t`` over the reduced dims (none when every dim was)."""
    if c.keepdim or not c.shape() or c.dim is None:
        return t
    for d in c.dim:
        t = t.unsqueeze(d)
    return t


def _norm_grad(g: Any, c: Any) -> Any:
    """torch's norm_backward: the gradient of |x|_p, with 0 where the norm is 0 (the subgradient
    torch picks), sgn(x) times an even share among the maximal |x| for inf/-inf, and no gradient
    (undefined) for the 0 "norm"."""
    p, x = float(c.ord), c.self
    grad, norm = _unsqueezed(g, c), _unsqueezed(c.result, c)
    if p == 0:
        return None
    if p == 1:
        return x.sgn() * grad
    if p == 2:
        return grad * (x / norm).masked_fill_(norm == 0, 0)
    if abs(p) == INF:
        magnitude = x.abs()
        mask = magnitude.eq(norm).logical_or(magnitude.isnan())
        return x.sgn() * ((grad / mask.sum(c.dim or (), True)) * mask)
    if p < 1:
        scaled = x.sgn() * x.abs().pow_(p - 1).masked_fill_(x == 0, 0)
        return scaled * grad * norm.pow(1 - p)
    scaled = x.sgn() * x.abs().pow_(p - 1) if p < 2 else x * x.abs().pow_(p - 2)
    share = grad / norm.pow(p - 1)
    return scaled * share.masked_fill_(norm == 0, 0)


LINALG_VECTOR_NORM = OpDef(
    "LinalgVectorNormBackward0",
    _vector_norm_fwd,
    derivatives={"self": D("self ord result dim keepdim", _norm_grad)},
    jvp=separable,  # linalg_vector_norm_jvp
)


def _order(ord: Any) -> Any:
    """The order as torch's Scalar holds it, its Python type kept (what ``_saved_ord`` shows): a
    bool or a 0-d tensor is a number too."""
    return ord.item() if isinstance(ord, Tensor) else ord


def _shown(ord: float) -> str:
    """An order as torch's messages print a Scalar (``-2``, ``-2.5``, ``inf``)."""
    return f"{ord:g}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) or isinstance(value, Tensor) and value.dim() == 0


def _dim_fits(dim: Any) -> bool:
    items = dim if isinstance(dim, (list, tuple)) else () if dim is None else (dim,)
    return all(isinstance(d, int) and not isinstance(d, bool) for d in items)


def check_floating(input: Tensor, fn: str) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"{fn}: Expected a floating point or complex tensor as input. "
            f"Got {dtypes.scalar_type(input.dtype)}"
        )


def _check_dtype(dtype: Any, input: Tensor, fn: str) -> Any:
    """torch's check_linalg_norm_dtype: a floating ``dtype`` the input's promotes to, unnarrowed."""
    if dtype is None:
        return None
    dt = dtypes.to_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(
            f"{fn}: dtype should be floating point or complex, but got {dtypes.scalar_type(dt)}"
        )
    if dtypes.promote_types(input.dtype, dt) is not dt:
        raise RuntimeError(
            f"{fn}: the dtype of the input ({dtypes.scalar_type(input.dtype)}) should be convertible without "
            f"narrowing to the specified dtype ({dtypes.scalar_type(dt)})"
        )
    return dt


def vector_norm(
    input: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """torch.linalg.vector_norm: (sum |x|**ord) ** (1/ord) over ``dim`` (every dim when None or
    empty); ord inf/-inf the max/min of |x|, 0 the count of non-zeros. ``dtype`` casts the input
    first (no ToCopy node: the node saves ``input`` as given, and the engine casts its gradient back)."""
    if not isinstance(input, Tensor) or not _is_number(ord) or not _dim_fits(dim):
        raise invalid_call(vector_norm, locals(), "linalg_vector_norm")
    check_floating(input, "linalg.vector_norm")
    p = _order(ord)
    given = () if dim is None else tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if input.numel() == 0 and (p < 0 or p == INF):
        if not given:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {_shown(p)} norm on an empty tensor because the "
                "operation does not have an identity"
            )
        for d in given:
            if input.shape[_wrap_dim(d, input.dim())] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {_shown(p)} norm on the dimension {d}because "
                    "this dimension is empty and the operation does not have an identity"
                )
    dt = _check_dtype(dtype, input, "linalg.vector_norm")
    dims = tuple(sorted(_dim_list(given, input.dim())))  # (checked on a 0-d input too)
    dims = dims if dims and input.dim() else None
    out_dt = (dt or input.dtype).np
    return apply(LINALG_VECTOR_NORM, input, ord=p, dim=dims, keepdim=bool(keepdim), dtype=out_dt)


def _matrix_checks(input: Tensor, dim: Any, dtype: Any, low_precision: bool) -> tuple[list[int], Any]:
    """torch's _linalg_matrix_norm_checks: a matrix (or a batch) of a floating dtype (no half
    types where an SVD would be needed), two different dims, the dtype unnarrowed."""
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    check_floating(input, "linalg.matrix_norm")
    if not low_precision and input.dtype in (dtypes.float16, dtypes.bfloat16):
        raise RuntimeError(
            f"linalg.matrix_norm: Low precision dtypes not supported. Got {dtypes.scalar_type(input.dtype)}"
        )
    dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
    dims = [_wrap_dim(d, input.dim()) for d in dims]
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})")
    return dims, _check_dtype(dtype, input, "linalg.matrix_norm")


def _needs_svd(ord: Any) -> None:
    raise NotImplementedError(
        f"impl: linalg.matrix_norm with ord={ord!r} needs singular values (linalg.svdvals), which impl "
        "does not compute bit for bit as torch's LAPACK does; use ord 'fro', 1, -1, inf or -inf"
    )


def matrix_norm(
    input: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """torch.linalg.matrix_norm: 'fro' is the vector 2-norm over the two dims; 1/-1 the max/min
    over columns of the column sums of |x| (inf/-inf over rows); 'nuc' and 2/-2 need an SVD."""
    if not isinstance(input, Tensor) or not (isinstance(ord, str) or _is_number(ord)):
        raise invalid_call(matrix_norm, locals(), "linalg_matrix_norm")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        dims, dt = _matrix_checks(input, dim, dtype, ord == "fro")
        if ord == "nuc":
            _needs_svd(ord)
        return vector_norm(input, 2, dims, keepdim, dtype=dt)
    p = _order(ord)
    if abs(p) not in (1, 2, INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {_shown(p)} not supported.")
    dims, dt = _matrix_checks(input, dim, dtype, abs(p) != 2)
    if abs(p) == 2:
        _needs_svd(ord)
    if abs(p) == INF:
        dims.reverse()
    if not keepdim and dims[0] < dims[1]:
        dims[1] -= 1
    sums = vector_norm(input, 1.0, [dims[0]], keepdim, dtype=dt)
    if p > 0 and sums.shape[dims[1]] == 0:  # the max of no sums is 0 (torch's _max_min_wrapper)
        shape = [1 if d == dims[1] else n for d, n in enumerate(sums.shape) if keepdim or d != dims[1]]
        return zeros(shape, dtype=sums.dtype)
    return (amax if p > 0 else amin)(sums, dims[1], keepdim)


def linalg_norm(
    input: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """torch.linalg.norm: a matrix norm when ``ord`` is given over two dims (or a 2-D input without
    ``dim``), else the vector norm (ord 2 when None)."""
    if not isinstance(input, Tensor):
        raise invalid_call(linalg_norm, locals(), "linalg_norm")
    given = None if dim is None else list(dim) if isinstance(dim, (list, tuple)) else [dim]
    if given is not None:
        if len(given) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {given}")
    elif ord is not None and input.dim() not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {input.dim()}D."
        )
    if (
        isinstance(ord, str)
        or ord is not None
        and (len(given or ()) == 2 or given is None and input.dim() == 2)
    ):
        return matrix_norm(input, ord, given or [0, 1], keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if ord is None else ord, given, keepdim, dtype=dtype)


@api.variants("norm", out=dataclasses.replace(EXACT, aten="linalg_vector_norm", parser="linalg_vector_norm"))
def norm(
    input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Any = None, dtype: Any = None
) -> Tensor:
    """torch.norm (deprecated): 'fro' over at most two dims and every number are vector norms
    (2 for 'fro' and None); 'fro' over more dims, and 'nuc', go to matrix_norm."""
    if out is not None:  # given by position: torch.norm as called with out= (the declared function)
        return api.FUNCTIONS["norm"](input, p, dim, keepdim, out=out, dtype=dtype)
    dims = None if dim is None else [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        return matrix_norm(input, p, list(range(input.dim())) if dims is None else dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


def _renorm_dims(ndim: int, dim: int) -> tuple[int, ...]:
    return tuple(d for d in range(ndim) if d != dim)


def _renorm_fwd(xp: Any, a: Any, p: float, dim: int, maxnorm: float) -> Any:
    """torch's CPU renorm: each slice along ``dim`` whose p-norm (in float for the half types)
    exceeds ``maxnorm`` scaled by maxnorm / (norm + 1e-7), the factor rounded to ``a``'s dtype."""
    acc = np.float32 if a.dtype.itemsize < 4 else a.dtype.type
    norm = _vector_norm_fwd(xp, a, p, _renorm_dims(a.ndim, dim), True, acc)
    m = acc(maxnorm)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        factor = xp.where(norm > m, m / (norm + acc(1e-7)), acc(1.0))
    return a * factor.astype(a.dtype)


def _renorm_grad(g: Any, c: Any) -> Any:
    """torch's renorm_backward: where the slice was scaled, maxnorm / (norm + 1e-7) times the
    gradient less its projection through the norm (norm_backward); elsewhere the gradient."""
    x, dims = c.self, _renorm_dims(c.self.dim(), c.dim)
    norm = vector_norm(x, c.p, dims, True)
    share = (x.conj() * g).sum(dims, True)
    nb = _norm_grad(share, SimpleNamespace(ord=c.p, self=x, result=norm, dim=dims, keepdim=True))
    invnorm = (norm + 1e-7).reciprocal()
    return ((invnorm * c.maxnorm) * (g - invnorm * nb)).where(norm > c.maxnorm, g)


RENORM = OpDef("RenormBackward0", _renorm_fwd, derivatives={"self": D("self p dim maxnorm", _renorm_grad)})


def _renorm_checked(input: Tensor, p: Any, dim: int, maxnorm: Any) -> tuple[float, int, float]:
    numbers = _is_number(p) and _is_number(maxnorm)
    if not isinstance(input, Tensor) or not numbers or not isinstance(dim, int):
        raise invalid_call(renorm, locals())
    if not float(p) > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not float(maxnorm) >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    dim = _wrap_dim(dim, input.dim())
    check_floating(input, "linalg.vector_norm")
    return float(p), dim, float(maxnorm)


@api.variants("renorm", out=EXACT)
def renorm(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    """Each slice of ``input`` along ``dim`` with a p-norm over ``maxnorm`` scaled down to it."""
    p, dim, maxnorm = _renorm_checked(input, p, dim, maxnorm)
    return apply(RENORM, input, p=p, dim=dim, maxnorm=maxnorm)


def _renorm_(self: Tensor, p: Any, dim: int, maxnorm: Any) -> tuple:
    p, dim, maxnorm = _renorm_checked(self, p, dim, maxnorm)
    return RENORM, (), {"p": p, "dim": dim, "maxnorm": maxnorm}


api.method("renorm_")(inplace_method(_renorm_))
