"""LU-based solves and determinants, QR, SVD, the symmetric eigendecomposition, pseudo-inverses,
least squares and the matrix exponential of real matrices (torch.linalg.inv_ex, det, slogdet,
solve_ex, qr, svd, eigh, pinv, matrix_rank, lstsq, matrix_exp, matrix_power and torch's older
spellings), with torch's grad_fn names, derivatives (FunctionsManual.cpp's) and errors.

The LU kernel is LAPACK's unblocked getf2 (partial pivoting, the first largest pivot), so a singular
matrix reports the zero diagonal element LAPACK reports; QR, SVD, eigh and least squares are
numpy's LAPACK (geqrf, gesdd, syevd, gelsd), whose vectors' signs may differ from those of torch's
MKL. Known differences: lstsq's default gelsy solution of a rank-deficient A (gelsd's minimum-norm
one here); float16 matrix_exp (computed in float64 here); det's gradient under create_graph for a
singular A (torch switches to an SVD formula there).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from impl import _api as api
from impl import _autocast, dtypes, return_types
from impl._creation import eye, from_numpy
from impl._grad_mode import is_grad_enabled
from impl._ops.factorizations import SUPPORTED, _check_matrices, _LinAlgError, _trsv, solve_triangular
from impl._ops.indexing import cat
from impl._ops.pointwise_ternary import where
from impl._ops.products import matmul
from impl._ops.table import D, OpDef, apply, broadcast_mismatch
from impl._signatures import EXACT, Out
from impl._tensor import Tensor
from impl._warn import warn_once

_struct = return_types._structseq
return_types.linalg_inv_ex = _struct("linalg_inv_ex", ("inverse", "info"))
return_types.linalg_solve_ex = _struct("linalg_solve_ex", ("result", "info"))
return_types.linalg_slogdet = _struct("linalg_slogdet", ("sign", "logabsdet"))
return_types.slogdet = _struct("slogdet", ("sign", "logabsdet"))
return_types.linalg_qr = _struct("linalg_qr", ("Q", "R"))
return_types.qr = _struct("qr", ("Q", "R"))
return_types.linalg_svd = _struct("linalg_svd", ("U", "S", "Vh"))
return_types.svd = _struct("svd", ("U", "S", "V"))
return_types.linalg_eigh = _struct("linalg_eigh", ("eigenvalues", "eigenvectors"))


def check_square(name: str, A: Tensor, low_precision: bool = False) -> None:
    """torch's squareCheckInputs and checkFloatingOrComplex: a batch of square floating matrices
    (float16 and bfloat16 refused unless ``low_precision``)."""
    _check_matrices(name, "A", A)
    _check_floating(name, A)
    if not low_precision and A.dtype in (dtypes.float16, dtypes.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {dtypes.scalar_type(A.dtype)}")


def _check_floating(name: str, A: Tensor) -> None:
    """torch's checkFloatingOrComplex."""
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {dtypes.scalar_type(A.dtype)}"
        )


def check_floating(name: str, A: Tensor, kernel: str) -> None:
    """torch's checkFloatingOrComplex, then its dispatch: float32 or float64 A (LAPACK's)."""
    _check_floating(name, A)
    if A.dtype not in SUPPORTED:
        raise dtypes.kernel_missing(kernel, A.dtype)


def _getf2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's getf2 over the batch: the packed LU factors, the (1-based) pivots and info (0, or
    the first zero diagonal element of U)."""
    n = a.shape[-1]
    lu = np.array(a.reshape(-1, n, n), copy=True)
    rows = np.arange(lu.shape[0])
    piv = np.zeros(lu.shape[:2], dtype=np.int32)
    info = np.zeros(lu.shape[0], dtype=np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(n):
            p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
            piv[:, j] = p + 1
            lu[rows, j], lu[rows, p] = lu[rows, p], lu[rows, j].copy()
            pivot = lu[:, j, j]
            info[(info == 0) & (pivot == 0)] = j + 1
            scaled = lu[:, j + 1 :, j] / pivot[:, None]
            lu[:, j + 1 :, j] = np.where(pivot[:, None] == 0, lu[:, j + 1 :, j], scaled)
            lu[:, j + 1 :, j + 1 :] -= lu[:, j + 1 :, j, None] * lu[:, j, None, j + 1 :]
    batch = a.shape[:-2]
    return lu.reshape(a.shape), piv.reshape(batch + (n,)), info.reshape(batch)


def _lu_solve(lu: np.ndarray, piv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B from A's getf2 factors (getrs): B's rows swapped, then the two triangles."""
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape(-1, piv.shape[-1])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=lu.dtype).reshape((-1,) + b.shape[-2:])
    rows = np.arange(x.shape[0])
    for j in range(piv.shape[-1]):
        p = piv[:, j] - 1
        x[rows, j], x[rows, p] = x[rows, p], x[rows, j].copy()
    x = x.reshape(batch + b.shape[-2:])
    return _trsv(np.triu(lu), _trsv(np.tril(lu, -1), x, False, True), True, False)


def is_vector_rhs(a_shape: tuple, b_shape: tuple) -> bool:
    """torch's linalg_solve_is_vector_rhs: B is a vector, or a batch of them of A's batch shape."""
    return len(b_shape) == 1 or len(b_shape) == len(a_shape) - 1 and tuple(b_shape) == tuple(a_shape[:-1])


def _solve_fwd(xp: Any, a: Any, b: Any, left: bool) -> tuple[Any, Any]:
    a, b = np.asarray(a), np.asarray(b)
    if is_vector_rhs(a.shape, b.shape):
        x, info = _solve_fwd(xp, a, b[..., None], left)
        return x[..., 0], info
    lu, piv, info = _getf2(a if left else np.swapaxes(a, -1, -2))
    x = _lu_solve(lu, piv, b if left else np.swapaxes(b, -1, -2))
    x = x if left else np.swapaxes(x, -1, -2)  # info: one per matrix of A, not of the broadcast
    return xp.asarray(np.array(x, order="C")), xp.asarray(np.array(info))


def _inv_fwd(xp: Any, a: Any) -> tuple[Any, Any]:
    a = np.asarray(a)
    return _solve_fwd(xp, a, np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape), True)


def _det_parts(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sign of the row permutation of A's getf2 and U's diagonal."""
    lu, piv, _ = _getf2(a)
    swaps = np.count_nonzero(piv != np.arange(1, a.shape[-1] + 1), axis=-1)
    return np.where(swaps % 2, -1, 1).astype(a.dtype), np.diagonal(lu, 0, -2, -1)


def _det_fwd(xp: Any, a: Any) -> Any:
    sign, diagonal = _det_parts(np.asarray(a))
    return xp.asarray(sign * np.prod(diagonal, axis=-1))


def _slogdet_fwd(xp: Any, a: Any) -> tuple[Any, Any]:
    sign, diagonal = _det_parts(np.asarray(a))
    with np.errstate(divide="ignore"):
        logabsdet = np.sum(np.log(np.abs(diagonal)), axis=-1)
    return xp.asarray(sign * np.prod(np.sign(diagonal), axis=-1)), xp.asarray(logabsdet.astype(sign.dtype))


def _adjoint_solve(A: Tensor, G: Tensor) -> Tensor:
    """A^{-H} G, as torch's formulas get it (linalg_solve(A.mH(), G))."""
    return solve(A.mT, G)


def _scaled_identity(A: Tensor, d: Tensor) -> Tensor:
    """d (one number per matrix) times the identity, of A's shape."""
    return d.unsqueeze(-1).expand(*A.shape[:-1]).diag_embed()


def det_backward(g: Tensor, c: Any) -> Tensor:
    """torch's linalg_det_backward: (g det) A^{-H}; without create_graph from A's LU, a zero pivot
    replaced by eps (det is 0 there, and so is the gradient)."""
    d = _scaled_identity(c.A, g * c.result)
    if is_grad_enabled():
        return _adjoint_solve(c.A, d)
    lu, piv, _ = _getf2(np.swapaxes(c.A.detach().numpy(), -1, -2))
    diagonal = np.einsum("...ii->...i", lu)
    diagonal[diagonal == 0] = np.finfo(lu.dtype).eps
    return from_numpy(np.ascontiguousarray(_lu_solve(lu, piv, d.detach().numpy())))


def slogdet_backward(grads: tuple, c: Any) -> Tensor | None:
    """torch's slogdet_backward for real A: g_logabsdet A^{-H} (the sign has no gradient)."""
    g = grads[1]
    return None if g is None else _adjoint_solve(c.A, _scaled_identity(c.A, g))


def solve_backward(g: Tensor, c: Any, which: str) -> Tensor:
    """torch's linalg_solve_backward: gB solves the adjoint system, gA = -gB X^H (X^H gB if not
    left); a vector right-hand side as a column."""
    vector = is_vector_rhs(c.A.shape, c.B.shape)
    gB = solve(c.A.mT, g, left=c.left)
    if which == "B":
        return gB
    gB, X = (gB.unsqueeze(-1), c.result.unsqueeze(-1)) if vector else (gB, c.result)
    return -gB.matmul(X.mT) if c.left else -X.mT.matmul(gB)


LINALG_INV_EX = OpDef(
    "LinalgInvExBackward0",
    _inv_fwd,
    outputs=("inverse", "info"),
    derivatives={"A": D("inverse", lambda g, c: -c.inverse.mT.matmul(g.matmul(c.inverse.mT)))},
    inputs=("A",),
)
LINALG_SOLVE_EX = OpDef(
    "LinalgSolveExBackward0",
    _solve_fwd,
    ("A", "B"),
    {
        "A": D("A B result left", lambda g, c: solve_backward(g, c, "A")),
        "B": D("A B result left", lambda g, c: solve_backward(g, c, "B")),
    },
    outputs=("result", "info"),
)
LINALG_DET = OpDef("LinalgDetBackward0", _det_fwd, ("A",), {"A": D("A result", det_backward)})
LINALG_SLOGDET = OpDef(
    "LinalgSlogdetBackward0",
    _slogdet_fwd,
    ("A",),
    {"A": D("A sign", slogdet_backward)},
    outputs=("sign", "logabsdet"),
    differentiable_outputs=2,
)


def _raise_singular(info: Tensor, message: str) -> None:
    flat = info.numpy().reshape(-1)
    failed = np.flatnonzero(flat)
    if failed.size:
        batch = f"(Batch element {failed[0]}): " if info.dim() else ""
        head, _, tail = message.partition(": ")
        raise _LinAlgError(f"{head}: {batch}{tail.format(flat[failed[0]])}")


SINGULAR_INV = (
    "{}: The diagonal element {{}} is zero, the inversion could not be completed because the input "
    "matrix is singular."
)
SINGULAR_SOLVE = "torch.{}: The solver failed because the input matrix is singular."


def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """torch.linalg.inv_ex: A's inverse and LAPACK's info (the first zero pivot, where singular)."""
    check_square("linalg.inv", A)
    inverse, info = apply(LINALG_INV_EX, A)
    if check_errors:
        _raise_singular(info, SINGULAR_INV.format("linalg.inv_ex"))
    return return_types.linalg_inv_ex((inverse, info))


def inv(A: Tensor) -> Tensor:
    """torch.linalg.inv: A's inverse, or torch's LinAlgError where A is singular."""
    check_square("linalg.inv", A)
    inverse, info = apply(LINALG_INV_EX, A)
    _raise_singular(info, SINGULAR_INV.format("linalg.inv"))
    return inverse


@api.variants("inverse", out=dataclasses.replace(EXACT, aten="linalg_inv_ex"))
@_autocast.policy("fp32")
def inverse(input: Tensor) -> Tensor:
    """torch.inverse: linalg.inv."""
    return inv(input)


def det(A: Tensor) -> Tensor:
    """torch.linalg.det: the product of U's diagonal of A's LU, signed by its permutation."""
    check_square("linalg.det", A, low_precision=True)
    if A.dtype not in SUPPORTED:
        raise dtypes.kernel_missing("lu_cpu", A.dtype)
    return apply(LINALG_DET, A)


api.variants("det")(lambda input: det(input))


def slogdet(A: Tensor) -> Any:
    """torch.linalg.slogdet: det's sign (0 where singular) and log |det|."""
    check_square("linalg.slogdet", A)
    return return_types.linalg_slogdet(apply(LINALG_SLOGDET, A))


@api.variants("slogdet", out=Out(parts=(EXACT, EXACT), aten="_linalg_slogdet"))
def _slogdet(input: Tensor) -> Any:
    """torch.slogdet: linalg.slogdet, in its own return type."""
    return return_types.slogdet(slogdet(input))


@api.variants("logdet")
def logdet(input: Tensor) -> Tensor:
    """torch.logdet: log |det|, nan where det is negative."""
    check_square("logdet", input)
    sign, logabsdet = slogdet(input)
    return where(sign == -1, float("nan"), logabsdet)


def _check_solve(A: Tensor, B: Tensor, left: bool) -> None:
    """torch's errors, in its order, where A and B do not fit (a vector right-hand side taken as a
    column)."""
    name = "linalg.solve"
    _check_floating(name, A)
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected A and B to have the same dtype, but found A of type "
            f"{dtypes.scalar_type(A.dtype)} and B of type {dtypes.scalar_type(B.dtype)} instead"
        )
    check_square(name, A, low_precision=True)
    if B.dim() == 0:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    shape = (*B.shape, 1) if is_vector_rhs(A.shape, B.shape) else B.shape
    n = A.shape[-1]
    if (shape[-2] if left else shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{name}: Incompatible shapes of A and B for the equation {equation} "
            f"({n}x{n} and {shape[-2]}x{shape[-1]})"
        )
    if not left and len(shape) > B.dim():
        raise RuntimeError(
            f"{name}: Vector broadcasting of the left hand side is not supported for left=False. In this "
            "case linalg.solve is equivalent to B / A.squeeze(-1)"
        )
    if A.dtype not in SUPPORTED:
        raise dtypes.kernel_missing("lu_cpu", A.dtype)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """torch.linalg.solve_ex: X with A X = B (X A = B if not left) and LAPACK's info."""
    _check_solve(A, B, left)
    result, info = apply(LINALG_SOLVE_EX, A, B, left=bool(left))
    if check_errors:
        _raise_singular(info, SINGULAR_SOLVE.format("linalg.solve_ex"))
    return return_types.linalg_solve_ex((result, info))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """torch.linalg.solve: X with A X = B (X A = B if not left), or LinAlgError where A is singular."""
    result, info = solve_ex(A, B, left=left)
    _raise_singular(info, SINGULAR_SOLVE.format("linalg.solve"))
    return result


def matrix_power(A: Tensor, n: int) -> Tensor:
    """torch.linalg.matrix_power: A^n by repeated squaring as torch does (an inverse first for n < 0;
    the identity, copied into a clone of A, for n = 0)."""
    _check_matrices("linalg.matrix_power", "A", A)
    if n == 0:
        return A.clone().copy_(eye(A.shape[-1], dtype=A.dtype).expand(*A.shape))
    if n == 1:
        return A.clone()
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return A
    if n in (2, 3):
        return matmul(A, A) if n == 2 else matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@api.variants("matrix_power", out=dataclasses.replace(EXACT, aten="matmul"))
def _matrix_power(input: Tensor, n: int) -> Tensor:
    """torch.matrix_power: linalg.matrix_power."""
    return matrix_power(input, n)


def _qr_fwd(xp: Any, a: Any, mode: str) -> tuple[Any, Any]:
    a = np.asarray(a)
    if mode == "r":
        return xp.asarray(np.zeros((0,), a.dtype)), xp.asarray(np.linalg.qr(a, mode="r"))
    q, r = np.linalg.qr(a, mode=mode)
    return xp.asarray(q), xp.asarray(r)


def qr_backward(grads: tuple, c: Any) -> Tensor | None:
    """The gradient of A = QR: for m >= n (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q; for
    m < n, that of A's first m columns (gQ taking in Y gR_Y^H) beside Q gR_Y for the others."""
    gQ, gR = grads
    if c.mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
            "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
        )
    Q, R = c.Q, c.R
    m, n = Q.shape[-2], R.shape[-1]
    if c.mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    if m < n:
        gY = c.A[..., m:].new_zeros(c.A[..., m:].shape) if gR is None else Q.matmul(gR[..., m:])
        if gR is not None and gQ is not None:
            gQ = gQ + c.A[..., m:].matmul(gR[..., m:].mT)
        elif gR is not None:
            gQ = c.A[..., m:].matmul(gR[..., m:].mT)
        gX = _square_qr_backward(gQ, None if gR is None else gR[..., :m], Q, R[..., :m])
        return cat([gX, gY], -1)
    return _square_qr_backward(gQ, gR, Q, R)


def _square_qr_backward(gQ: Any, gR: Any, Q: Tensor, R: Tensor) -> Tensor:
    M = 0 if gR is None else R.matmul(gR.mT)
    if gQ is not None:
        M = M - gQ.mT.matmul(Q)
    M = M.tril() + M.tril(-1).mT
    gA = Q.matmul(M) if gQ is None else gQ + Q.matmul(M)
    return solve_triangular(R.mT, gA, upper=False, left=False)


LINALG_QR = OpDef(
    "LinalgQrBackward0",
    _qr_fwd,
    ("A",),
    {"A": D("A mode Q R", qr_backward)},
    outputs=("Q", "R"),
    differentiable_outputs=2,
)
QR_MODES = ("reduced", "complete", "r")


def qr(A: Tensor, mode: str = "reduced") -> Any:
    """torch.linalg.qr: Householder QR (LAPACK's geqrf, R's diagonal signed as it leaves it); mode
    'r' gives an empty Q."""
    _check_matrices("linalg.qr", "A", A, square=False)
    check_floating("linalg.qr", A, "geqrf_cpu")
    if mode not in QR_MODES:
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
            "'complete'"
        )
    return return_types.linalg_qr(apply(LINALG_QR, A, mode=mode))


@api.variants("qr", out=Out(parts=(EXACT, EXACT), aten="linalg_qr"))
def _qr(input: Tensor, some: bool = True) -> Any:
    """torch.qr (deprecated): linalg.qr, reduced unless ``some`` is False."""
    warn_once("torch.qr", QR_DEPRECATED)
    return return_types.qr(qr(input, "reduced" if some else "complete"))


QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\n"
    "should be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete') (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2505.)"
)


def _svd_fwd(xp: Any, a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
    u, s, vh = np.linalg.svd(np.asarray(a), full_matrices=full_matrices)
    return xp.asarray(u), xp.asarray(s), xp.asarray(vh)


def svd_backward(grads: tuple, c: Any) -> Tensor | None:
    """torch's svd_backward (real matrices), U and Vh narrowed to S's size for full_matrices."""
    gU, gS, gVh = grads
    U, S, Vh = c.U, c.S, c.Vh
    k = S.shape[-1]
    if c.full_matrices:
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return U.matmul(gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)).matmul(Vh)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + _identity_of(E)
    UhgU = None if gU is None else _skew(U.mT.matmul(gU))
    VhgV = None if gVh is None else _skew(Vh.matmul(gVh.mT))
    if gU is not None and gVh is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif gVh is None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if m > n and gU is not None:
        gA = U.matmul(gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = (gA + gUSinv - U.matmul(U.mT.matmul(gUSinv))).matmul(Vh)
    elif m < n and gVh is not None:
        gA = gA.matmul(Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = U.matmul(gA + SinvgVh - SinvgVh.matmul(Vh.mT).matmul(Vh))
    else:
        gA = U.matmul(gA.matmul(Vh)) if m >= n else U.matmul(gA).matmul(Vh)
    return gA


def _skew(X: Tensor) -> Tensor:
    return X - X.mT


def _identity_of(X: Tensor) -> Tensor:
    """The identity matrix of X's (square) matrix size and dtype."""
    return eye(X.shape[-1], dtype=X.dtype)


LINALG_SVD = OpDef(
    "LinalgSvdBackward0",
    _svd_fwd,
    ("A",),
    {"A": D("full_matrices U S Vh", svd_backward)},
    outputs=("U", "S", "Vh"),
    differentiable_outputs=3,
)


def svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None) -> Any:
    """torch.linalg.svd: U, S (descending) and Vh (LAPACK's gesdd)."""
    _check_matrices("linalg.svd", "A", A, square=False)
    check_floating("linalg.svd", A, "linalg_svd_cpu")
    return return_types.linalg_svd(apply(LINALG_SVD, A, full_matrices=bool(full_matrices)))


def svdvals(A: Tensor, *, driver: Any = None) -> Tensor:
    """torch.linalg.svdvals: the singular values (the SVD's node, its vectors unused)."""
    _check_matrices("linalg.svd", "A", A, square=False)
    check_floating("linalg.svd", A, "linalg_svd_cpu")
    return apply(LINALG_SVD, A, full_matrices=False)[1]


@api.variants("svd", out=Out(parts=(EXACT, EXACT, dataclasses.replace(EXACT, writes=2)), aten="_linalg_svd"))
def _svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """torch.svd (deprecated): U, S and V (not Vh); without compute_uv, zero U and V of full size."""
    if input.dim() < 2:
        raise RuntimeError(
            f"linalg.svd: input should have at least 2 dimensions, but has {input.dim()} dimensions instead"
        )
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        S = svdvals(input)
        return return_types.svd((input.new_zeros(batch + (m, m)), S, input.new_zeros(batch + (n, n))))
    U, S, Vh = svd(input, full_matrices=not some)
    return return_types.svd((U, S, Vh.mT))


def _eigh_fwd(xp: Any, a: Any, UPLO: str) -> tuple[Any, Any]:
    w, v = np.linalg.eigh(np.asarray(a), UPLO=UPLO)
    return xp.asarray(w), xp.asarray(v)


def eigh_backward(grads: tuple, c: Any) -> Tensor | None:
    """torch's linalg_eig_backward for Hermitian A: V ((V^H gV) / E + diag(gL)) V^H, E the
    eigenvalues' differences (V diag(gL) V^H without gV)."""
    gL, gV = grads
    L, V = c.eigenvalues, c.eigenvectors
    if gV is None:
        return None if gL is None else (V * gL.unsqueeze(-2)).matmul(V.mT)
    VhgV = V.mT.matmul(gV)
    VhgV = 0.5 * (VhgV - VhgV.mT)
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    gA = VhgV / (E + _identity_of(E))
    if gL is not None:
        gA = gA + gL.diag_embed()
    return V.matmul(gA.matmul(V.mT))


LINALG_EIGH = OpDef(
    "LinalgEighBackward0",
    _eigh_fwd,
    ("A",),
    {"A": D("eigenvalues eigenvectors", eigh_backward)},
    outputs=("eigenvalues", "eigenvectors"),
    differentiable_outputs=2,
)


def _check_eigh(A: Tensor, UPLO: str) -> None:
    _check_matrices("linalg.eigh", "A", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if A.dtype not in SUPPORTED:
        raise dtypes.kernel_missing("linalg_eigh_cpu", A.dtype)


def eigh(A: Tensor, UPLO: str = "L") -> Any:
    """torch.linalg.eigh: ascending eigenvalues and orthonormal eigenvectors of the symmetric
    matrix whose ``UPLO`` triangle A holds (LAPACK's syevd)."""
    _check_eigh(A, UPLO)
    return return_types.linalg_eigh(apply(LINALG_EIGH, A, UPLO=UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """torch.linalg.eigvalsh: eigh's eigenvalues (its node)."""
    _check_eigh(A, UPLO)
    return apply(LINALG_EIGH, A, UPLO=UPLO)[0]


def _tolerances(A: Tensor, atol: Any, rtol: Any) -> tuple[float | np.ndarray, float | np.ndarray]:
    """torch's get_atol_rtol: atol 0 unless given; rtol as given, else 0 where atol > 0 and
    eps * max(m, n) otherwise."""
    def value(x: Any) -> Any:
        return x.detach().numpy() if isinstance(x, Tensor) else x

    atol, rtol = value(atol), value(rtol)
    default = np.finfo(A.detach().numpy().dtype).eps * max(A.shape[-2:])
    if rtol is None:
        rtol = default if atol is None else np.where(np.asarray(atol) > 0, 0.0, default)
    return (0.0 if atol is None else atol), rtol


def _pinv_fwd(xp: Any, a: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
    a = np.asarray(a)
    if hermitian:
        s, u = np.linalg.eigh(a)
        vh, size = np.swapaxes(u, -1, -2), np.abs(s)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        size = s
    biggest = np.max(size, axis=-1, keepdims=True, initial=0)
    tol = np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * biggest)
    with np.errstate(divide="ignore"):
        inverse = np.where(size > tol, 1 / s, 0).astype(a.dtype)
    return xp.asarray(np.swapaxes(vh, -1, -2) * inverse[..., None, :] @ np.swapaxes(u, -1, -2))


def pinv_backward(g: Tensor, c: Any) -> Tensor:
    """torch's pinv_backward: the derivative of A+ for A of constant rank, by the smaller side."""
    pinvA, A = c.result, c.self
    m, n = A.shape[-2:]
    pinvAh, gh = pinvA.mT, g.mT
    if m <= n:
        K = gh.matmul(pinvA)
        KpinvAh = K.matmul(pinvAh)
        return -pinvA.matmul(K).mT + KpinvAh - A.matmul(pinvA).matmul(KpinvAh) + pinvAh.matmul(
            pinvA
        ).matmul(gh - K.matmul(A))
    K = pinvA.matmul(gh)
    pinvAhK = pinvAh.matmul(K)
    return -K.matmul(pinvA).mT + (gh - A.matmul(K)).matmul(pinvA).matmul(pinvAh) + pinvAhK - pinvAhK.matmul(
        pinvA
    ).matmul(A)


LINALG_PINV = OpDef("LinalgPinvBackward0", _pinv_fwd, derivatives={"self": D("self result", pinv_backward)})


def pinv(
    A: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None, rtol: Any = None
) -> Tensor:
    """torch.linalg.pinv: the pseudo-inverse from the SVD (eigh if ``hermitian``), singular values
    at most max(atol, rtol * the largest) dropped; ``rcond`` is rtol (atol 0)."""
    if A.dim() < 2 or A.dtype not in SUPPORTED:
        raise RuntimeError(
            f"linalg.pinv({dtypes.scalar_type(A.dtype)}{list(A.shape)}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types".replace("[", "{[").replace("]", "]}")
        )
    if rcond is not None:
        atol, rtol = 0.0, rcond
    atol, rtol = _tolerances(A, atol, rtol)
    return apply(LINALG_PINV, A, atol=atol, rtol=rtol, hermitian=bool(hermitian))


@api.variants("pinverse")
@_autocast.policy("fp32")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: linalg.pinv with ``rcond`` as its relative tolerance."""
    return pinv(input, rcond)


def matrix_rank(
    A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None, rtol: Any = None
) -> Tensor:
    """torch.linalg.matrix_rank: how many singular values (|eigenvalues| if ``hermitian``) exceed
    max(atol, rtol * the largest); ``tol`` is atol (rtol 0)."""
    if A.dim() < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    if A.dtype not in SUPPORTED:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    a = A.detach().numpy()
    size = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    biggest = np.max(size, axis=-1, keepdims=True, initial=0)
    tol = np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * biggest)
    return from_numpy(np.array(np.count_nonzero(size > tol, axis=-1), dtype=np.int64))


return_types.linalg_lstsq = _struct("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_fwd(xp: Any, a: Any, b: Any, rcond: float, driver: str) -> tuple[Any, Any, Any, Any]:
    """Each matrix's least-squares solution (numpy's gelsd: gelsy's and gels's too where A has full
    rank), and what ``driver`` fills: residuals (gels where m > n; gelsd and gelss where also every
    matrix has rank n), rank (all but gels), singular values (gelsd and gelss)."""
    a, b = np.asarray(a), np.asarray(b)
    vector = is_vector_rhs(a.shape, b.shape)
    b = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    (m, n), k = a.shape[-2:], b.shape[-1]
    flat_a = np.broadcast_to(a, batch + (m, n)).reshape(-1, m, n)
    flat_b = np.broadcast_to(b, batch + (m, k)).reshape(-1, m, k)
    solved = [np.linalg.lstsq(x, y, rcond=rcond)[0] for x, y in zip(flat_a, flat_b, strict=True)]
    x = np.array(solved, dtype=a.dtype).reshape(batch + (n, k))
    sv = np.linalg.svd(a, compute_uv=False)  # rank and singular values: of A's matrices, unbroadcast
    rank = np.count_nonzero(sv > rcond * sv[..., :1], axis=-1).astype(np.int64)
    full = driver == "gels" or driver != "gelsy" and bool(np.all(rank == n))
    residuals = np.zeros((0,), a.dtype)
    if m > n and full:
        residuals = np.sum((np.matmul(a, x) - b) ** 2, axis=-2).astype(a.dtype)
    sv = sv if driver in ("gelsd", "gelss") else np.zeros((0,), a.dtype)
    rank = np.zeros((0,), np.int64) if driver == "gels" else rank
    x = x[..., 0] if vector else x
    residuals = residuals[..., 0] if vector and residuals.size else residuals
    x, residuals = np.ascontiguousarray(x), np.ascontiguousarray(residuals)
    return xp.asarray(x), xp.asarray(residuals), xp.asarray(rank), xp.asarray(sv)


def lstsq_backward(grads: tuple, c: Any, which: str) -> Tensor | None:
    """The gradient of X = A+ B (pinv_backward of gX B^H for A, A+^H gX for B) and of the residuals
    |A X - B|^2 (2 (A X - B) X^H g for A, -2 (A X - B) g for B: X is optimal)."""
    gX, gR = grads
    A, B, X = c.self, c.b, c.solution
    vector = is_vector_rhs(A.shape, B.shape)
    if vector:
        B, X, gX = B.unsqueeze(-1), X.unsqueeze(-1), None if gX is None else gX.unsqueeze(-1)
    grad = None
    if gX is not None:
        pinvA = pinv(A)
        grad = pinvA.mT.matmul(gX) if which == "b" else pinv_backward(gX.matmul(B.mT), _PinvCtx(pinvA, A))
    if gR is not None and gR.numel():
        gR = gR.unsqueeze(-1) if vector else gR
        error = A.matmul(X) - B
        weighted = 2 * error * gR.unsqueeze(-2)
        term = -weighted if which == "b" else weighted.matmul(X.mT)
        grad = term if grad is None else grad + term
    return grad.squeeze(-1) if vector and which == "b" and grad is not None else grad


class _PinvCtx:
    """What pinv_backward reads of a pinv node, for lstsq's gradient."""

    def __init__(self, result: Tensor, A: Tensor) -> None:
        self.result, self.self = result, A


LINALG_LSTSQ = OpDef(
    "LinalgLstsqBackward0",
    _lstsq_fwd,
    ("self", "b"),
    {
        "self": D("self b solution", lambda g, c: lstsq_backward(g, c, "self")),
        "b": D("self b solution", lambda g, c: lstsq_backward(g, c, "b")),
    },
    outputs=("solution", "residuals", "rank", "singular_values"),
    differentiable_outputs=2,
)


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Any:
    """torch.linalg.lstsq: the least-squares solutions of A X = B (a vector B where it has one
    dimension fewer than A), with what the CPU driver (default gelsy) fills of residuals, rank and
    singular values."""
    name = "torch.linalg.lstsq"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(
            f"{name}: Expected input and other to have the same dtype, but got input's dtype "
            f"{dtypes.scalar_type(A.dtype)} and other's dtype {dtypes.scalar_type(B.dtype)}"
        )
    if not 0 <= A.dim() - B.dim() <= 1:
        raise RuntimeError(
            f"{name}: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    vector = is_vector_rhs(A.shape, B.shape)
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size({-1 if vector else -2})")
    # torch broadcasts the batches as if B had one dimension fewer than A only when it is a vector
    mismatch = broadcast_mismatch([tuple(A.shape[:-2]), tuple(B.shape[: -1 if B.dim() < A.dim() else -2])])
    if mismatch:
        raise RuntimeError(mismatch)
    driver = "gelsy" if driver is None else driver
    if driver not in LSTSQ_DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.dtype not in SUPPORTED:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if rcond is None:
        rcond = float(np.finfo(A.detach().numpy().dtype).eps) * max(A.shape[-2:])
    return return_types.linalg_lstsq(apply(LINALG_LSTSQ, A, B, rcond=float(rcond), driver=driver))


PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
    10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)
THETA13 = 5.371920351148152  # the largest 1-norm for which Pade 13 is accurate in double precision


def _expm(a: np.ndarray) -> np.ndarray:
    """e^A of one matrix by scaling and squaring with Pade 13 (Higham 2005), in float64."""
    norm = np.max(np.sum(np.abs(a), axis=0), initial=0.0)
    s = max(0, int(np.ceil(np.log2(norm / THETA13)))) if norm > THETA13 else 0
    a = a / 2.0**s
    b, eye_ = PADE13, np.eye(a.shape[-1])
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye_)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye_
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _matrix_exp_fwd(xp: Any, a: Any) -> Any:
    a = np.asarray(a)
    n = a.shape[-1]
    if a.size == 0:
        return xp.asarray(a.copy())
    flat = a.reshape(-1, n, n).astype(np.float64)
    with np.errstate(all="ignore"):
        result = np.array([_expm(m) for m in flat]).reshape(a.shape)
    return xp.asarray(result.astype(a.dtype))


def matrix_exp_backward(g: Tensor, c: Any) -> Tensor:
    """torch's linalg_matrix_exp_differential (adjoint): the upper right block of the exponential
    of [[A^H, g], [0, A^H]]."""
    A = c.self
    n = A.shape[-1]
    top = cat([A.mT, g], -1)
    bottom = cat([A.new_zeros(A.shape), A.mT], -1)
    return matrix_exp(cat([top, bottom], -2))[..., :n, n:]


LINALG_MATRIX_EXP = OpDef(
    "LinalgMatrixExpBackward0", _matrix_exp_fwd, derivatives={"self": D("self", matrix_exp_backward)}
)


@api.variants("matrix_exp")
def matrix_exp(A: Tensor) -> Tensor:
    """torch.linalg.matrix_exp: e^A by scaling and squaring (float16 and bfloat16 computed in float64
    and rounded: torch 2.13's own float16 results are far off even for small matrices)."""
    check_square("linalg.matrix_exp", A, low_precision=True)
    return apply(LINALG_MATRIX_EXP, A)
