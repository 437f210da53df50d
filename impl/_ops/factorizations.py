"""Cholesky factorisation and triangular solves (torch.linalg.cholesky, cholesky_ex,
solve_triangular) of real matrices, with torch's grad_fn names, derivatives and errors.

The kernels are LAPACK's unblocked algorithms (potf2, trsv) over the batch: a factorisation that
fails stops where LAPACK stops, leaving what it leaves, and a zero pivot of a solve gives inf or
nan, as torch's does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impl import _api as api
from impl import dtypes, return_types
from impl._ops.table import D, OpDef, apply
from impl._signatures import Out
from impl._tensor import Tensor


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): a factorisation could not be completed."""

    __module__ = "torch._C"


return_types.linalg_cholesky_ex = return_types._structseq("linalg_cholesky_ex", ("L", "info"))


def _potf2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lower Cholesky factor of each matrix of ``a`` (its upper triangle zeroed) and LAPACK's
    info: 0, or the order of the first leading minor that is not positive-definite, where the
    factorisation stopped (that pivot holds what it computed, the columns after it ``a``'s)."""
    n = a.shape[-1]
    flat = np.array(a.reshape(-1, n, n), copy=True)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for m, x in enumerate(flat):
        for j in range(n):
            pivot = x[j, j] - x[j, :j] @ x[j, :j]
            if not pivot > 0:  # nan too
                x[j, j] = pivot
                info[m] = j + 1
                break
            x[j, j] = np.sqrt(pivot)
            x[j + 1 :, j] = (x[j + 1 :, j] - x[j + 1 :, :j] @ x[j, :j]) / x[j, j]
    return np.tril(flat).reshape(a.shape), info.reshape(a.shape[:-2])


def _cholesky_fwd(xp: Any, a: Any, upper: bool) -> tuple[Any, Any]:
    lower, info = _potf2(np.asarray(a))
    factor = np.swapaxes(lower, -1, -2).conj() if upper else lower
    return xp.asarray(np.ascontiguousarray(factor)), xp.asarray(info)


def _trsv(a: np.ndarray, b: np.ndarray, upper: bool, unitriangular: bool) -> np.ndarray:
    """X with A X = B, A triangular (broadcast batches), by substitution row by row."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype=a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in reversed(range(n)) if upper else range(n):
            done = slice(i + 1, n) if upper else slice(0, i)
            row = b[..., i, :] - np.einsum("...k,...kj->...j", a[..., i, done], x[..., done, :])
            x[..., i, :] = row if unitriangular else row / a[..., i, i, None]
    return x


def _solve_triangular_fwd(xp: Any, a: Any, b: Any, upper: bool, left: bool, unitriangular: bool) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    if left:
        return xp.asarray(_trsv(a, b, upper, unitriangular))
    # X A = B is A^T X^T = B^T
    transposed = _trsv(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, unitriangular)
    return xp.asarray(np.ascontiguousarray(np.swapaxes(transposed, -1, -2)))


def cholesky_backward(g: Tensor, upper: bool, L: Tensor) -> Tensor:
    """torch's cholesky_backward: Phi(L^H gL) symmetrised, then L^-H (.) L^-1 by two solves."""
    if upper:
        L, g = L.mT, g.mT
    gA = L.mT.matmul(g).tril()
    gA = 0.5 * (gA + gA.tril(-1).mT)
    gA = solve_triangular(L.mT, gA, upper=True, left=True)
    return solve_triangular(L, gA, upper=False, left=False)


def solve_triangular_backward(g: Tensor, c: Any, which: str) -> Tensor:
    """torch's linalg_solve_triangular_backward: gB solves the transposed system; gA is
    -gB X^H (left) or -X^H gB, kept to A's triangle."""
    gB = solve_triangular(c.self.mT, g, upper=not c.upper, left=c.left, unitriangular=c.unitriangular)
    if which == "B":
        return gB
    gA = -gB.matmul(c.result.mT) if c.left else -c.result.mT.matmul(gB)
    return gA.triu(int(c.unitriangular)) if c.upper else gA.tril(-int(c.unitriangular))


def _cholesky_inverse_fwd(xp: Any, a: Any, upper: bool) -> Any:
    """(L L^T)^-1 of the lower triangle L of ``a`` (or (U^T U)^-1 of its upper one), as LAPACK's
    potri: the triangle's inverse, then its product with its transpose."""
    a = np.asarray(a)
    t = np.triu(a) if upper else np.tril(a)
    inverse = _trsv(t, np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape), upper, False)
    transposed = np.swapaxes(inverse, -1, -2)
    return xp.asarray(inverse @ transposed if upper else transposed @ inverse)


def cholesky_inverse_backward(g: Tensor, c: Any) -> Tensor:
    """torch's cholesky_inverse_backward: -(L or U) times inverse (g + g^T) inverse."""
    common = c.result.matmul((g + g.mT).matmul(c.result))
    return -c.self.matmul(common) if c.upper else -common.matmul(c.self)


CHOLESKY_INVERSE = OpDef(
    "CholeskyInverseBackward0",
    _cholesky_inverse_fwd,
    derivatives={"self": D("self upper result", cholesky_inverse_backward)},
)
LINALG_CHOLESKY_EX = OpDef(
    "LinalgCholeskyExBackward0",
    _cholesky_fwd,
    outputs=("L", "info"),
    derivatives={"self": D("upper L", lambda g, c: cholesky_backward(g, c.upper, c.L))},
)
LINALG_SOLVE_TRIANGULAR = OpDef(
    "LinalgSolveTriangularBackward0",
    _solve_triangular_fwd,
    ("self", "B"),
    {
        "self": D("self result upper left unitriangular", lambda g, c: solve_triangular_backward(g, c, "A")),
        "B": D("self upper left unitriangular", lambda g, c: solve_triangular_backward(g, c, "B")),
    },
)


SUPPORTED = (dtypes.float32, dtypes.float64)


def _check_matrices(name: str, what: str, t: Tensor, square: bool = True) -> None:
    if t.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if square and t.shape[-1] != t.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, "
            f"but they are {t.shape[-2]} by {t.shape[-1]} matrices"
        )


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """torch.linalg.cholesky_ex: the factor and LAPACK's info (nonzero where it failed)."""
    _check_matrices("linalg.cholesky", "A", A)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            "linalg.cholesky: Expected a floating point or complex tensor as input. "
            f"Got {dtypes.scalar_type(A.dtype)}"
        )
    if A.dtype not in SUPPORTED:  # LAPACK's: float and double (complex ones are not supported here)
        raise dtypes.kernel_missing("cholesky_cpu", A.dtype)
    L, info = apply(LINALG_CHOLESKY_EX, A, upper=bool(upper))
    if check_errors:
        _raise_failure(info, "linalg.cholesky_ex")
    return return_types.linalg_cholesky_ex((L, info))


def _raise_failure(info: Tensor, name: str = "linalg.cholesky") -> None:
    flat = info.numpy().reshape(-1)
    failed = np.flatnonzero(flat)
    if failed.size:
        batch = f"(Batch element {failed[0]}): " if info.dim() else ""
        order = int(flat[failed[0]])
        raise _LinAlgError(
            f"{name}: {batch}The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {order} is not positive-definite)."
        )


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """torch.linalg.cholesky: the factor, or torch's LinAlgError where A is not positive-definite."""
    L, info = cholesky_ex(A, upper=upper)
    _raise_failure(info)
    return L


CHOLESKY_INVERSE_CAST = (
    "cholesky_inverse: Expected result to be safely castable from {result} dtype, but got result with "
    "dtype {out}"
)


@api.variants("cholesky_inverse", out=Out(message=CHOLESKY_INVERSE_CAST))
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky_inverse: the inverse of the matrix whose Cholesky factor is ``input``."""
    _check_matrices("cholesky_inverse", "A", input)
    if input.dtype not in SUPPORTED:
        raise dtypes.kernel_missing("cholesky_inverse_out_cpu", input.dtype)
    return apply(CHOLESKY_INVERSE, input, upper=bool(upper))


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    """torch.linalg.solve_triangular: X with A X = B (X A = B if not left), A triangular."""
    name = "linalg.solve_triangular"
    _check_matrices(name, "A", A)
    _check_matrices(name, "B", B, square=False)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {equation} "
            f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})"
        )
    if A.dtype not in SUPPORTED:  # the solution has A's dtype
        raise dtypes.kernel_missing("triangular_solve_cpu", A.dtype)
    B = B.to(A.dtype)
    flags = {"upper": bool(upper), "left": bool(left), "unitriangular": bool(unitriangular)}
    return apply(LINALG_SOLVE_TRIANGULAR, A, B, **flags)
