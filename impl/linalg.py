"""torch.linalg's subset impl has: the norms (impl/_ops/norms.py), cholesky and triangular solves
(impl/_ops/factorizations.py),
LU solves, determinants, QR, SVD, eigh (impl/_ops/decompositions.py)."""

from __future__ import annotations

from impl._ops.decompositions import (
    det,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    matrix_exp,
    matrix_power,
    matrix_rank,
    pinv,
    qr,
    slogdet,
    solve,
    solve_ex,
    svd,
    svdvals,
)
from impl._ops.factorizations import _LinAlgError as LinAlgError
from impl._ops.factorizations import cholesky, cholesky_ex, solve_triangular
from impl._ops.norms import linalg_norm as norm
from impl._ops.norms import matrix_norm, vector_norm

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "det", "eigh", "eigvalsh", "inv", "inv_ex", "lstsq",
    "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve",
    "solve_ex", "solve_triangular", "svd", "svdvals", "vector_norm",
]
