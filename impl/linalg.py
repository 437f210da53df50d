"""torch.linalg's subset impl has: the norms (impl/_ops/norms.py), cholesky and triangular solves
(impl/_ops/factorizations.py), LU solves, determinants, QR, SVD, eigh (impl/_ops/decompositions.py),
cross, vecdot, diagonal, vander and multi_dot (impl/_ops/structure.py)."""

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
from impl._ops.structure import linalg_cross as cross
from impl._ops.structure import linalg_diagonal as diagonal
from impl._ops.structure import linalg_vander as vander
from impl._ops.structure import multi_dot, vecdot

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
    "lstsq", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "vander", "vecdot", "vector_norm",
]
