"""Rules of the family "linear algebra": torch.linalg's solves, determinants and decompositions
and torch's older spellings of them (conformance/test_linalg.py)."""

from oracle.rules import Rule

FAMILY = "linear algebra"
_DOCS = "https://pytorch.org/docs/stable/linalg.html"

RULES = [
    Rule(
        "LINALG-001",
        FAMILY,
        "torch.linalg's inv, inv_ex, det, slogdet, solve and solve_ex (left or right, vector and "
        "broadcast right-hand sides), qr (modes reduced, complete, r), svd (full_matrices) and svdvals, "
        "eigh and eigvalsh (UPLO), pinv (atol, rtol, hermitian), matrix_rank, matrix_power, matrix_exp "
        "and lstsq (drivers gels, gelsy, gelsd, gelss: residuals, rank and singular values as each fills "
        "them; full-rank A), and torch's inverse, det, logdet, slogdet, pinverse, matrix_power, "
        "matrix_exp, svd (some, compute_uv; V, not Vh) and qr (some), on square, rectangular and batched "
        "float32 and float64 matrices, give torch's values, dtypes, gradients and grad_fn graphs "
        "(LinalgInvExBackward0, LinalgDetBackward0, LinalgSlogdetBackward0, LinalgSolveExBackward0, "
        "LinalgQrBackward0, LinalgSvdBackward0, LinalgEighBackward0, LinalgPinvBackward0, "
        "LinalgLstsqBackward0, LinalgMatrixExpBackward0, matmul's nodes for matrix_power); info and rank "
        "are int32 and int64 tensors without gradient; the singular and eigen vectors, whose signs LAPACK "
        "chooses, are compared through their absolute values; a gradient of qr with mode='r', or with "
        "mode='complete' of a tall matrix, raises torch's RuntimeError.",
        _DOCS,
    ),
    Rule(
        "LINALG-002",
        FAMILY,
        "They raise torch's errors, worded as torch words them for each op: an input of fewer than 2 "
        "dimensions, a non-square matrix where a square one is needed, an integer or float16 input, "
        "A and B of different dtypes or of shapes that do not fit, an unknown qr mode or UPLO; inv, "
        "solve, matrix_power with a negative exponent and the _ex forms with check_errors=True raise "
        "torch.linalg.LinAlgError on a singular matrix, naming the first zero pivot of LAPACK's LU "
        "(and the batch element).",
        _DOCS,
    ),
]
