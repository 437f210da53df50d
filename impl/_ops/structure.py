"""Structure and product ops: cross/linalg.cross (LinalgCrossBackward0), dist (DistBackward0) and
block_diag (BlockDiagBackward0), nodes of their own, and those torch composes of others
(CompositeImplicitAutograd): kron, tensordot, take_along_dim, diagflat, cartesian_prod, combinations,
trapezoid/trapz/cumulative_trapezoid, linalg.vecdot, linalg.diagonal, cov, corrcoef, vander,
linalg.vander and linalg.multi_dot.

Each is written with the ops ATen's composite calls, in its order, so values, dtypes (promotion
follows from the parts), views and grad_fn names (the parts': kron's UnsafeViewBackward0 over a
MulBackward0, tensordot's ViewBackward0 over MmBackward0) come out as torch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from impl import _api as api
from impl import _autocast, dtypes
from impl._creation import empty, tensor, zeros
from impl._ops.elementwise import check_bool_subtraction, div_scalar, mul_scalar
from impl._ops.indexing import _per_arity, tensor_list
from impl._ops.indexing import cat as cat_
from impl._ops.norms import _norm_grad, _vector_norm_fwd, check_floating
from impl._ops.stacking import meshgrid, stack
from impl._ops.table import D, OpDef, apply, broadcast_mismatch
from impl._ops.views import _slice, _unsafe_view
from impl._signatures import EXACT, TYPE_META_NAMES, Out, invalid_call
from impl._tensor import Tensor, _wrap_dim
from impl._warn import warn_once


# -- cross, linalg.cross -----------------------------------------------------------------------
def _cross_fwd(xp: Any, a: Any, b: Any, dim: int) -> Any:
    a, b = xp.broadcast_arrays(a, b)
    return xp.ascontiguousarray(xp.cross(a, b, axisa=dim, axisb=dim, axisc=dim).astype(a.dtype, copy=False))


CROSS = OpDef(
    "LinalgCrossBackward0",
    _cross_fwd,
    ("self", "other"),
    {  # derivatives.yaml: linalg_cross(other, grad, dim), linalg_cross(grad, self, dim)
        "self": D("other dim", lambda g, c: linalg_cross(c.other, g, dim=c.dim)),
        "other": D("self dim", lambda g, c: linalg_cross(g, c.self, dim=c.dim)),
    },
)
CROSS_WARNING = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim explicitly "
    "or simply use torch.linalg.cross.\nThe default value of dim will change to agree with that of "
    "linalg.cross in a future release. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)"
)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """torch.linalg.cross: the cross product along ``dim`` (of length 3 in both) of two tensors of
    one rank and dtype, broadcast against each other."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(linalg_cross, {"input": input, "other": other, "dim": dim})
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        sizes = f"{input.shape[d]} and {other.shape[d]}"
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {sizes}")
    _broadcast(list(input.shape), list(other.shape))
    if input.dtype is not other.dtype:
        found = dtypes.scalar_type(other.dtype)
        raise RuntimeError(f"expected scalar type {dtypes.scalar_type(input.dtype)} but found {found}")
    if input.dtype is dtypes.bool_:
        raise dtypes.kernel_missing("cross", input.dtype)
    return apply(CROSS, input, other, dim=d)


@api.variants("cross", out=EXACT.named("linalg_cross"))
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """torch.cross: linalg.cross along ``dim``; without it (deprecated, torch warns once) along the
    first dim of length 3."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(cross, {"input": input, "other": other, "dim": dim})
    if dim is None:
        warn_once("cross", CROSS_WARNING)
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


# -- dist --------------------------------------------------------------------------------------
class _DistCtx:
    """What norms' _norm_grad reads, for the norm of all of ``self - other``."""

    dim, keepdim = None, False

    def __init__(self, c: Any) -> None:
        self.ord, self.self, self.result = c.p, c.self - c.other, c.result

    def shape(self) -> tuple:
        return ()


def _dist_grad(g: Any, c: Any) -> Any:
    return _norm_grad(g, _DistCtx(c))


DIST = OpDef(
    "DistBackward0",
    lambda xp, a, b, p: _vector_norm_fwd(xp, a - b, p, None, False, a.dtype),
    ("self", "other"),
    {
        "self": D("self other p result", _dist_grad),
        "other": D("self other p result", lambda g, c: _negated(_dist_grad(g, c))),
    },
    promote="common",
)


def _negated(t: Any) -> Any:
    """derivatives.yaml's ``-norm_backward(...)``: negating p = 0's undefined gradient raises."""
    if t is None:
        raise RuntimeError(
            "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'self'"
        )
    return -t


@api.variants("dist")
def dist(input: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast, in the promoted floating dtype)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(dist, {"input": input, "other": other, "p": p})
    check_bool_subtraction(input, other)  # ATen's norm(input - other): sub's check first
    error = broadcast_mismatch([tuple(input.shape), tuple(other.shape)])
    if error:
        raise RuntimeError(error)
    result = dtypes.promote_types(input.dtype, other.dtype)
    if not result.is_floating_point:
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{dtypes.scalar_type(result)} instead."
        )
    return apply(DIST, input, other, p=float(p))


# -- kron --------------------------------------------------------------------------------------
@api.variants("kron", out=Out(aten="mul"))
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: both operands viewed with interleaved unit dims, multiplied (in the
    promoted dtype), the product viewed back (torch's KronImpl)."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(kron, {"input": input, "other": other})
    ndim = max(input.dim(), other.dim())
    a_shape, b_shape, result = [], [], []
    for i in range(ndim):
        a = input.shape[i - ndim + input.dim()] if i >= ndim - input.dim() else 1
        b = other.shape[i - ndim + other.dim()] if i >= ndim - other.dim() else 1
        a_shape += [a, 1]
        b_shape += [1, b]
        result.append(a * b)
    return _unsafe_view(_unsafe_view(input, a_shape) * _unsafe_view(other, b_shape), result)


# -- tensordot ---------------------------------------------------------------------------------
def _tensordot_dims(a: Tensor, b: Tensor, dims: Any) -> tuple[list, list]:
    """torch.functional.tensordot's reading of ``dims``: an int (the last of a with the first of
    b), a pair of dim lists, or a tensor of either."""
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.shape[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.shape[0]}")
            return dims[0].tolist(), dims[1].tolist()
        count = int(dims.item())
        if count < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(-count, 0)), list(range(count))
    if isinstance(dims, (tuple, list)):
        first, second = dims
        for position, value in ((3, first), (4, second)):
            if not isinstance(value, (list, tuple)):
                name = "dims_self" if position == 3 else "dims_other"
                raise TypeError(
                    f"tensordot(): argument '{name}' (position {position}) must be tuple of ints, "
                    f"not {type(value).__name__}"
                )
        return list(first), list(second)
    if isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    raise RuntimeError(
        "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing "
        f"two lists, but got dims={dims}"
    )


def _dim_set(dims: list, ndim: int) -> set[int]:
    """ATen's dim_list_to_bitset: the wrapped dims, each at most once."""
    seen: set[int] = set()
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return seen


# tensordot_out: the result computed, then copied into out of its very dtype (recorded as a
# CopyBackwards where an input requires grad: impl refuses that case as the structured kernels do)
TENSORDOT_OUT = Out(
    "same",
    "tensordot: Expected the output tensor to have dtype {result}, but got an output tensor with dtype {out}",
)


@api.function("tensordot", out=TENSORDOT_OUT)
@_autocast.policy("lower")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """a and b contracted over ``dims``: dims of size 1 on one side summed first, then both
    permuted (free dims, contracted dims), reshaped to matrices, mm, reshaped (ATen's tensordot)."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise invalid_call(tensordot, {"a": a, "b": b, "dims": dims})
    dims1, dims2 = _tensordot_dims(a, b, dims)
    if len(dims1) != len(dims2):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, csize = a, b, 1
    for d1, d2 in zip(dims1, dims2, strict=True):
        s1, s2 = a.shape[_wrap_dim(d1, a.dim())], b.shape[_wrap_dim(d2, b.dim())]
        if s2 == 1:  # broadcast dims are summed right away
            t1 = t1.sum(d1, True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = t2.sum(d2, True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(
                    f"contracted dimensions need to match, but first has size {s1} in dim {d1} and second "
                    f"has size {s2} in dim {d2}"
                )
            csize *= s1
    c1, c2 = _dim_set(dims1, a.dim()), _dim_set(dims2, b.dim())
    free1 = [i for i in range(a.dim()) if i not in c1]
    free2 = [i for i in range(b.dim()) if i not in c2]
    sizes = [t1.shape[i] for i in free1] + [t2.shape[i] for i in free2]
    if not free1 and not free2:  # every dim contracted: ATen's dot of two vectors where views allow
        v1, v2 = t1.permute(dims1), t2.permute(dims2)
        if v1.is_contiguous() and v2.is_contiguous():
            v1, v2 = (v if v.dim() == 1 else v.reshape(csize) for v in (v1, v2))
            return v1.dot(v2).reshape(sizes)
    m1 = t1.permute(free1 + dims1).reshape(math.prod(t1.shape[i] for i in free1), csize)
    m2 = t2.permute(dims2 + free2).reshape(csize, math.prod(t2.shape[i] for i in free2))
    return m1.mm(m2).reshape(sizes)


@api.variants("inner", tensor="other", out=TENSORDOT_OUT.named("inner"))
def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dims (tensordot over them); a 0-d operand multiplies."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise invalid_call(inner, {"input": input, "other": other})
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    return tensordot(input, other, ([-1], [-1]))


# -- take_along_dim ----------------------------------------------------------------------------
@api.variants("take_along_dim", out=EXACT.named("gather"))
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """gather along ``dim`` of input and indices broadcast against each other off ``dim``; without
    ``dim``, of both flattened."""
    if not (isinstance(input, Tensor) and isinstance(indices, Tensor)):
        raise invalid_call(take_along_dim, {"input": input, "indices": indices, "dim": dim})
    if dim is None:
        return input.view(-1).gather(0, indices.view(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{input.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    if indices.dtype is not dtypes.int64:
        found = dtypes.scalar_type(indices.dtype)
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {found}")
    d = _wrap_dim(dim, input.dim())
    if input.dim() == 0:  # ATen's indices.size(dim)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    sizes = list(input.shape)
    sizes[d] = indices.shape[d]
    indices = indices.broadcast_to(_broadcast(sizes, list(indices.shape)))
    sizes = list(indices.shape)
    sizes[d] = input.shape[d]
    return input.broadcast_to(_broadcast(sizes, list(input.shape))).gather(d, indices)


def _broadcast(a: list, b: list) -> list:
    """ATen's infer_size: the broadcast shape of ``a`` and ``b``, or torch's error."""
    error = broadcast_mismatch([tuple(a), tuple(b)])
    if error:
        raise RuntimeError(error)
    ndim = max(len(a), len(b))
    a, b = [1] * (ndim - len(a)) + a, [1] * (ndim - len(b)) + b
    return [y if x == 1 else x for x, y in zip(a, b, strict=True)]


# -- diagflat ----------------------------------------------------------------------------------
@api.variants("diagflat")
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input on diagonal ``offset`` of a square matrix (``contiguous().view(-1)``,
    then diag)."""
    if not isinstance(input, Tensor):
        raise invalid_call(diagflat, {"input": input, "offset": offset})
    return input.contiguous().view(-1).diag(offset)


# -- cartesian_prod ----------------------------------------------------------------------------
@api.function("cartesian_prod")
def cartesian_prod(*tensors: Any) -> Tensor:
    """The rows of every combination of the 1-d inputs' elements (meshgrid 'ij', each grid
    flattened, stacked along dim 1); one input comes back as itself."""
    tensors = tuple(tensor_list("cartesian_prod", list(tensors)))
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape [{', '.join(map(str, t.shape))}]")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], 1)


# -- combinations ------------------------------------------------------------------------------
@api.function("combinations")
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The r-element combinations of 1-d input's elements (in order; with repeats when
    ``with_replacement``) as rows: r grids of input masked to increasing indices, stacked."""
    if not isinstance(input, Tensor):
        raise invalid_call(combinations, {"input": input, "r": r, "with_replacement": with_replacement})
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape [{', '.join(map(str, input.shape))}]")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype)
    n = input.numel()
    index = [np.arange(n)] * r
    grids = np.meshgrid(*index, indexing="ij")
    mask = np.ones(grids[0].shape, dtype=bool)
    for a, b in zip(grids[:-1], grids[1:], strict=True):
        mask &= a <= b if with_replacement else a < b
    selected = tensor(mask, device=input.device)
    return stack([g.masked_select(selected) for g in meshgrid(*[input] * r, indexing="ij")], 1)


# -- trapezoid, trapz, cumulative_trapezoid ----------------------------------------------------
def _sample_spacing(name: str, y: Tensor, x: Tensor, dim: int) -> Tensor:
    """The differences of ``x`` along ``dim`` (a 1-d x viewed along ``dim``, a lower-rank one
    padded in front), to broadcast against y's pairs."""
    if y.dtype is dtypes.bool_ or x.dtype is dtypes.bool_:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        x = x.view(sizes)
    elif x.dim() < y.dim():
        x = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    return _slice(x, dim, 1, None, 1) - _slice(x, dim, 0, -1, 1)


def _spacing_number(name: str, y: Tensor, dx: Any) -> float:
    if y.dtype is dtypes.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)) or not isinstance(dx, (int, float)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _pairs(y: Tensor, dim: int) -> Tensor:
    """``y[..., :-1] + y[..., 1:]`` along ``dim`` (ATen's slices: SliceBackward0 even when whole)."""
    if y.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    return _slice(y, dim, 0, -1, 1) + _slice(y, dim, 1, None, 1)


def _times(t: Tensor, number: float) -> Tensor:
    """ATen's ``t * number`` (mul.Scalar, MulBackward1; an integer ``t`` promoted as ``t * number``)."""
    return mul_scalar(t, number) if t.dtype.is_floating_point else t * number


def _halved(t: Tensor) -> Tensor:
    """ATen's ``t / 2.`` (div.Scalar, DivBackward1)."""
    return div_scalar(t, 2.0) if t.dtype.is_floating_point else t / 2.0


def _integrate(name: str, y: Tensor, x: Any, dx: Any, dim: int) -> Tensor:
    if not isinstance(y, Tensor) or (x is not None and not isinstance(x, Tensor)):
        raise invalid_call(trapezoid, {"y": y, "x": x, "dx": dx, "dim": dim})
    if y.dim() == 0:  # ATen's y.size(dim), of dim wrapped where x is given
        named = dim if x is None else _wrap_dim(dim, 0)
        raise IndexError(f"Dimension specified as {named} but tensor has no dimensions")
    d = _wrap_dim(dim, y.dim())
    if y.shape[d] == 0:
        return zeros([n for i, n in enumerate(y.shape) if i != d], dtype=y.dtype)
    if x is not None:
        return _halved((_pairs(y, d) * _sample_spacing(name, y, x, d)).sum(d))
    step = _spacing_number(name, y, 1 if dx is None else dx) if name else float(dx)
    return _times(y.sum(d) - _times(y.select(d, 0) + y.select(d, -1), 0.5), step)


@api.function("trapezoid")
def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule's integral of y along ``dim``, at samples ``x`` or spaced ``dx``."""
    return _integrate("trapezoid", y, x, dx, dim)


@api.function("trapz")
def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """trapezoid's old name (its ``dx`` a float: True passes as 1.0)."""
    return _integrate("trapezoid" if dx is None else "", y, x, dx, dim)


@api.function("cumulative_trapezoid")
def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule's running integral of y along ``dim`` (one element fewer)."""
    if not isinstance(y, Tensor) or (x is not None and not isinstance(x, Tensor)):
        raise invalid_call(cumulative_trapezoid, {"y": y, "x": x, "dx": dx, "dim": dim})
    d = _wrap_dim(dim, y.dim())
    if x is not None:
        return _halved((_pairs(y, d) * _sample_spacing("cumulative_trapezoid", y, x, d)).cumsum(d))
    step = _spacing_number("cumulative_trapezoid", y, 1 if dx is None else dx)
    return _times(_pairs(y, d), step / 2.0).cumsum(d)


# -- linalg.vecdot, linalg.diagonal ------------------------------------------------------------
@_autocast.policy("lower")
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """torch.linalg.vecdot: ``(x * y).sum(dim)`` of two floating tensors of one dtype."""
    if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
        raise invalid_call(vecdot, {"x": x, "y": y, "dim": dim})
    check_floating(x, "linalg.vecdot")
    if x.dtype is not y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{dtypes.scalar_type(x.dtype)} and y of type {dtypes.scalar_type(y.dtype)} instead"
        )
    return (x * y).sum(dim)


def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.linalg.diagonal: ``A.diagonal(offset, dim1, dim2)``, of the last two dims by default."""
    if not isinstance(A, Tensor):
        raise invalid_call(linalg_diagonal, {"A": A, "offset": offset, "dim1": dim1, "dim2": dim2})
    return A.diagonal(offset, dim1, dim2)


# -- cov, corrcoef -----------------------------------------------------------------------------
DOF_WARNING = (
    "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
    "observations. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)"
)


def _weights(name: str, w: Tensor, kind: str, fits: bool, observations: int) -> None:
    """cov's checks of ``fweights``/``aweights`` ``w``: rank, dtype (``fits``), count, sign."""
    expected = f"cov(): expected {name} to have"
    if w.dim() > 1:
        raise RuntimeError(f"{expected} one or fewer dimensions but got {name} with {w.dim()} dimensions")
    if not fits:
        raise RuntimeError(f"{expected} {kind} dtype but got {name} with {dtypes.scalar_type(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the input but got "
            f"{w.numel()} != {observations}"
        )
    if observations and not bool(w.min().ge(0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@api.variants("cov")
def cov(
    input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None
) -> Tensor:
    """The covariance matrix of the variables in input's rows (observations in its columns), with
    frequency and importance weights: ATen's composite, step by step."""
    if not isinstance(input, Tensor):
        raise invalid_call(cov, {"input": input, "correction": correction, "fweights": fweights,
                                 "aweights": aweights})
    if input.dim() > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.dim()} dimensions"
        )
    if input.dtype is dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        integral = not (fweights.dtype.is_floating_point or fweights.dtype is dtypes.bool_)
        _weights("fweights", fweights, "integral", integral, n)
        w = fweights
    if aweights is not None:
        _weights("aweights", aweights, "floating point", aweights.dtype.is_floating_point, n)
        w = aweights if w is None else w * aweights
    w_sum = tensor(n, dtype=dtypes.int64) if w is None else w.sum()
    if w is not None and not bool(w_sum.ne(0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is None:
        norm = tensor(n - correction, dtype=dtypes.int64)
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm = tensor(0, dtype=dtypes.int64)
    else:
        norm = w_sum - _times((w * aweights).sum(), correction) / w_sum
    if bool(norm.le(0)):
        warnings.warn(DOF_WARNING, UserWarning, stacklevel=2)
        norm.zero_()
    if n == 1 and (fweights is None) != (aweights is None):
        x.zero_()
        if not x.dtype.is_floating_point:
            x = x.to(dtypes.float32)
    else:
        x = x - avg.unsqueeze(1)
    return (x.mm((x if w is None else x * w).t()) / norm).squeeze()


@api.variants("corrcoef")
def corrcoef(input: Tensor) -> Tensor:
    """cov normalised by the standard deviations (c / c of a single variable), clipped to [-1, 1]."""
    if not isinstance(input, Tensor):
        raise invalid_call(corrcoef, {"input": input})
    if input.dim() > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{input.dim()} dimensions"
        )
    c = cov(input)
    if c.dim() == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


# -- vander, linalg.vander ---------------------------------------------------------------------
@api.function("vander")
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The powers of 1-d ``x`` (0 .. N-1, decreasing unless ``increasing``) in the columns: ones
    written, x copied into columns 1.., their cumprod copied back (CopySlices twice), flipped
    (integers in int64, as cumprod promotes them)."""
    if not isinstance(x, Tensor):
        raise invalid_call(vander, {"x": x, "N": N, "increasing": increasing})
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    result = empty(x.shape[0], n, dtype=dtypes.promote_types(x.dtype, dtypes.int64))
    if n > 0:
        result.fill_(1)
        if n > 1:
            _slice(result, 1, 1, None, 1).copy_(x.unsqueeze(1))
            _slice(result, 1, 1, None, 1).copy_(_slice(result, 1, 1, None, 1).cumprod(1))
    return result if increasing else result.flip([1])


def linalg_vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """torch.linalg.vander: the increasing powers of x's last dim (batched): a column of ones
    catenated to the cumprod of x expanded N - 1 times."""
    if not isinstance(x, Tensor):
        raise invalid_call(linalg_vander, {"x": x, "N": N})
    floating = x.dtype.is_floating_point or x.dtype is dtypes.bool_
    if floating and x.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{dtypes.scalar_type(x.dtype)}"
        )
    x = x.unsqueeze(-1) if x.dim() == 0 else x
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cat_([powers.new_ones((*x.shape, 1)), powers], -1)


# -- linalg.multi_dot --------------------------------------------------------------------------
def _chain_order(sizes: list[int]) -> list[list[int]]:
    """The matrix-chain split points (ATen's matrix_chain_order: the cheapest parenthesisation, the
    first split among equally cheap ones)."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] == -1 or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(tensors: list, split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return tensors[i]
    k = split[i][j]
    return _chain(tensors, split, i, k).mm(_chain(tensors, split, k + 1, j))


CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
    "parameters. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:1102.)"
)


@api.function("chain_matmul", out=EXACT)
def chain_matmul(*matrices: Tensor) -> Tensor:
    """The deprecated torch.chain_matmul (warned once): multi_dot of matrices only; of one, a clone."""
    warn_once("chain_matmul", CHAIN_MATMUL_DEPRECATED)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    return _chained(matrices)


def _chained(matrices: tuple) -> Tensor:
    """chain_matmul's product: of one matrix a clone."""
    return matrices[0].clone() if len(matrices) == 1 else multi_dot(list(matrices))


@_autocast.policy("lower")
def multi_dot(tensors: Any) -> Tensor:
    """torch.linalg.multi_dot: the product of 2-d tensors (the first and last may be 1-d), in the
    cheapest order, by mm."""
    tensors = tensor_list("linalg_multi_dot", tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    shape, parts = [], list(tensors)
    for position, index, axis in (("first", 0, 0), ("last", n - 1, -1)):
        t = tensors[index]
        if t.dim() not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {position} tensor must be 1D or 2D but got {t.dim()}D")
        parts[index] = t.unsqueeze(axis) if t.dim() == 1 else t
        if t.dim() == 2:
            shape.append(t.shape[axis])
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in range(1, n):
        if parts[i].dtype is not parts[0].dtype:
            first, other = (TYPE_META_NAMES[t.dtype.name] for t in (parts[0], parts[i]))
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{first} and tensor {i} {other}"
            )
        if parts[i - 1].shape[-1] != parts[i].shape[0]:
            shapes = f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)}"
            pair = f"tensors {i - 1} and {i}"
            raise RuntimeError(f"multi_dot(): {pair} with shapes {shapes} cannot be multiplied")
    if n == 2:
        return parts[0].mm(parts[1]).view(shape)
    if n == 3:  # ATen's shortcut: (AB)C unless A(BC) is strictly cheaper
        (a, b), (c, d) = parts[0].shape, parts[2].shape
        first, second, third = parts
        if a * c * (b + d) > b * d * (a + c):
            return first.mm(second.mm(third)).view(shape)
        return first.mm(second).mm(third).view(shape)
    sizes = [parts[0].shape[0]] + [t.shape[1] for t in parts]
    return _chain(parts, _chain_order(sizes), 0, n - 1).view(shape)


# -- block_diag --------------------------------------------------------------------------------
def _matrix_shape(shape: tuple) -> tuple[int, int]:
    """A block_diag input's block: a 0-d tensor (1, 1), a 1-d one a row (1, n), a matrix itself."""
    return (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def _block_diag_fwd(xp: Any, *arrays: Any, shapes: tuple) -> Any:
    blocks = [_matrix_shape(s) for s in shapes]
    out = xp.zeros((sum(b[0] for b in blocks), sum(b[1] for b in blocks)), dtype=arrays[0].dtype)
    row = col = 0
    for a, (rows, cols) in zip(arrays, blocks, strict=True):
        out[row : row + rows, col : col + cols] = a.reshape(rows, cols)
        row, col = row + rows, col + cols
    return out


def _block_diag_grad(i: int) -> Any:
    def grad(g: Any, c: Any) -> Any:
        # torch's block_diag_backward skips an empty 1-d input without moving past its row
        blocks = [(0, 0) if s == (0,) else _matrix_shape(s) for s in c.shapes]
        row, col = sum(b[0] for b in blocks[:i]), sum(b[1] for b in blocks[:i])
        rows, cols = blocks[i]
        return g[row : row + rows, col : col + cols].reshape(c.shapes[i])

    return grad


block_diag_op = _per_arity("BlockDiagBackward0", _block_diag_fwd, "shapes", _block_diag_grad)


@api.function("block_diag")
def block_diag(*tensors: Any) -> Tensor:
    """The tensors (0-d ones as 1 x 1 blocks, 1-d ones as rows) on the diagonal of a matrix of their
    promoted dtype, zeros elsewhere; no tensor gives a 1 x 0 matrix."""
    tensors = tuple(tensor_list("block_diag", list(tensors)))
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                f"Input {i} has {t.dim()} dimensions"
            )
    if not tensors:
        return zeros(1, 0)
    return apply(block_diag_op(len(tensors)), *tensors, shapes=tuple(tuple(t.shape) for t in tensors))
