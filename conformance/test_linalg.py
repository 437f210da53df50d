"""Linear algebra (oracle/rules/linalg.py): torch.linalg's solves, determinants and decompositions
and torch's older spellings, on drawn square, rectangular and batched matrices whose spectra are
spread apart (so that the gradients of SVD and eigh are finite), then the errors torch raises."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_ops import OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import Op, Program, Ref

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

SQUARE = ("linalg.inv", "inverse", "linalg.det", "det", "logdet", "linalg.matrix_exp", "matrix_exp",
          "linalg.matrix_power", "matrix_power")
SQUARE_PAIRS = ("linalg.eigh", "linalg.inv_ex", "linalg.slogdet", "slogdet", "linalg.eigvalsh")
SOLVES = ("linalg.solve", "linalg.solve_ex")
ANY_SHAPE = ("linalg.qr", "qr", "linalg.svd", "svd", "linalg.svdvals", "linalg.pinv", "pinverse",
             "linalg.matrix_rank", "linalg.lstsq")
DRIVERS = (None, "gelsd", "gels", "gelss")  # (gelsy's default solution differs where A lacks full rank)
LINALG_OPS = (*SQUARE_PAIRS, *SQUARE, *SOLVES, *ANY_SHAPE)
SPECTRUM = (1.5, 3.0, 4.5)  # the diagonal's sizes: singular values and eigenvalues stay apart
NOISE = (-0.5, -0.25, 0.0, 0.25, 0.5)
SKEW = 0.125
POWERS = (-3, -2, -1, 0, 1, 2, 3, 5)
TOLERANCES = ({}, {"atol": 0.1}, {"rtol": 0.5}, {"atol": 2.0, "rtol": 0.1})
VECTORS = {"linalg.svd": (0, 2), "svd": (0, 2), "linalg.eigh": (1,)}  # whose signs LAPACK picks
LINALG_WEIGHT = 0.02  # two programs per op in ci: the first a 2 by 2 matrix requiring grad
ERROR_WEIGHT = 0.1


def matrix_data(draw: Any, shape: tuple[int, ...]) -> list:
    """A matrix (or batch) of ``shape``: small noise plus a diagonal of SPECTRUM's sizes, each of a
    drawn sign (a negative determinant now and then), and a small skew part (never symmetric, so
    that a gradient missing a transpose shows)."""
    rows, columns = np.indices(shape[-2:])
    data = np.array(noise(draw, shape)) + SKEW * (columns - rows)
    for i in range(min(shape[-2:])):
        data[..., i, i] += SPECTRUM[i] * draw(st.sampled_from((1, 1, -1)))
    return data.tolist()


def noise(draw: Any, shape: tuple[int, ...]) -> list:
    size = int(np.prod(shape))
    values = draw(st.lists(st.sampled_from(NOISE), min_size=size, max_size=size))
    return np.array(values).reshape(shape).tolist()


def op_call(draw: Any, p: OpProgram, op: str, x: str, shape: tuple[int, ...], dtype: str) -> list[str]:
    """``op`` on the leaf ``x``: the differentiable tensors whose gradients are compared (the
    others, info and rank, observed only)."""
    n = shape[-1]
    if op in ("linalg.matrix_power", "matrix_power"):
        return [p.op(op, Ref(x), draw(st.sampled_from(POWERS)))]
    if op in SOLVES:
        left = draw(st.booleans())
        rhs = draw(st.sampled_from(((n,), (n, 2), (3, 1, n, 1)) if left else ((2, n), (3, 1, 1, n))))
        b = p.given(noise(draw, rhs), dtype, grad=draw(st.booleans()))
        kwargs = draw(st.sampled_from(({}, {"left": True}))) if left else {"left": False}
        return items(draw, p, p.op(op, Ref(x), Ref(b), **kwargs), 1 + (op == "linalg.solve_ex"), (0,))
    if op == "linalg.lstsq":  # B: a batch of vectors now and then (A's dims less one)
        rhs = draw(st.sampled_from(((shape[-2], 2), shape[:-1], (3, *shape[:-2], shape[-2], 1))))
        b = p.given(noise(draw, rhs), dtype, grad=draw(st.booleans()))
        driver = draw(st.sampled_from(DRIVERS))
        return items(draw, p, p.op(op, Ref(x), Ref(b), **({} if driver is None else {"driver": driver})),
                     4, (0, 1))
    if op in ("linalg.qr", "qr"):
        key, modes = ("some", (True, False)) if op == "qr" else ("mode", ("reduced", "complete", "r"))
        return items(draw, p, p.op(op, Ref(x), **{key: draw(st.sampled_from(modes))}), 2, (0, 1))
    if op in ("linalg.svd", "svd"):
        kwargs = {"full_matrices" if op == "linalg.svd" else "some": draw(st.booleans())}
        if op == "svd" and draw(st.integers(0, 3)) == 0:
            return items(draw, p, p.op(op, Ref(x), compute_uv=False, **kwargs), 3, (1,))
        return items(draw, p, p.op(op, Ref(x), **kwargs), 3, (0, 1, 2), vectors=(0, 2))
    if op in ("linalg.pinv", "linalg.matrix_rank"):
        kwargs = dict(draw(st.sampled_from(TOLERANCES)))
        if shape[-1] == shape[-2] and draw(st.booleans()):
            kwargs["hermitian"] = True
        result = p.op(op, Ref(x), **kwargs)
        return [] if op == "linalg.matrix_rank" else [result]
    if op == "pinverse":
        return [p.op(op, Ref(x), **draw(st.sampled_from(({}, {"rcond": 0.5}))))]
    if op in ("linalg.eigh", "linalg.eigvalsh"):
        call = p.op(op, Ref(x), **draw(st.sampled_from(({}, {"UPLO": "U"}, {"UPLO": "L"}))))
        return [call] if op == "linalg.eigvalsh" else items(draw, p, call, 2, (0, 1), vectors=(1,))
    if op == "linalg.inv_ex":
        return items(draw, p, p.op(op, Ref(x)), 2, (0,))
    if op in ("linalg.slogdet", "slogdet"):
        return items(draw, p, p.op(op, Ref(x)), 2, (0, 1))
    return [p.op(op, Ref(x))]


def items(
    draw: Any, p: OpProgram, result: str, size: int, differentiable: tuple[int, ...], vectors: tuple = ()
) -> list[str]:
    """The ``size`` items of the tuple ``result``, all observed (those in ``vectors`` through abs);
    returned: the sum of the sums of a drawn nonempty set of the ``differentiable`` ones (each
    alone leaves the others' gradients undefined)."""
    p.names.remove(result)
    got = [p.op("__getitem__", Ref(result), i) for i in range(size)]
    for i in vectors:
        p.names.remove(got[i])
        got[i] = p.op("abs", Ref(got[i]))
    chosen = draw(st.lists(st.sampled_from(differentiable), min_size=1, max_size=3, unique=True))
    sums = [p.op("sum", Ref(got[i])) for i in sorted(chosen)]
    total = sums[0]
    for other in sums[1:]:
        total = p.op("add", Ref(total), Ref(other))
    return [total]


@st.composite
def linalg_programs(draw: Any, op: str) -> Program:
    """``op`` on a float32 or float64 leaf (mostly requiring grad) of a drawn shape: square for the
    square ops, batched now and then; its results' values and gradients."""
    p = OpProgram(draw)
    m = draw(st.sampled_from((2, 3, 1)))  # the first program: eigh of a 2 by 2 matrix
    n = m if op not in ANY_SHAPE else draw(st.sampled_from((2, 3, 1)))
    shape = (*draw(st.sampled_from(((), (), (2,)))), m, n)
    dtype = draw(st.sampled_from(("float32", "float64")))
    x = p.given(matrix_data(draw, shape), dtype, grad=draw(st.integers(0, 4)) < 4)
    return p.end(*op_call(draw, p, op, x, shape, dtype))


@pytest.mark.rule("LINALG-001")
@pytest.mark.parametrize("op", LINALG_OPS)
@examples(LINALG_WEIGHT)
@given(data=st.data())
def test_linalg(op: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(linalg_programs(op), label="program"), backend, reference)


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
# (op, A, B or None, kwargs): calls torch refuses
ERRORS: tuple[tuple[str, Any, Any, dict], ...] = (
    *((op, SINGULAR, None, {}) for op in ("linalg.inv", "inverse")),
    ("linalg.inv", [[[1.0, 0.0], [0.0, 1.0]], SINGULAR], None, {}),
    ("linalg.inv", [[0.0, 0.0], [0.0, 0.0]], None, {}),
    ("linalg.inv_ex", SINGULAR, None, {"check_errors": True}),
    ("linalg.matrix_power", SINGULAR, -1, {}),
    ("linalg.solve", SINGULAR, [1.0, 1.0], {}),
    ("linalg.solve", [SINGULAR, SINGULAR], [1.0, 1.0], {}),
    ("linalg.solve_ex", SINGULAR, [1.0, 1.0], {"check_errors": True}),
    ("linalg.solve", [[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0, 1.0], {}),
    ("linalg.solve", [[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0], {"left": False}),
    ("linalg.qr", SINGULAR, None, {"mode": "full"}),
    ("linalg.eigh", SINGULAR, None, {"UPLO": "X"}),
    *((op, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], None, {}) for op in (*SQUARE[:-2], *SQUARE_PAIRS)),
    *((op, [1.0, 2.0], None, {}) for op in LINALG_OPS if op not in (*SQUARE[-2:], *SOLVES, "linalg.lstsq")),
    ("linalg.lstsq", [[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], [1.0, 1.0], {}),
    ("linalg.lstsq", [[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], [[1.0], [1.0], [1.0]], {"driver": "gelsx"}),
)
BAD_DTYPES = ("int64", "float16")


@st.composite
def linalg_errors(draw: Any) -> Program:
    """Three calls torch refuses: singular matrices (LinAlgError), shapes or arguments that do not
    fit, and an op of LINALG_OPS on an integer or float16 matrix or on a solve's other dtype."""
    p = OpProgram(draw)
    for index in draw(st.lists(st.integers(0, len(ERRORS) - 1), min_size=2, max_size=2, unique=True)):
        op, a, b, kwargs = ERRORS[index]
        args: list = [Ref(p.given(a, "float32"))]
        if b is not None:
            args.append(Ref(p.given(b, "float32")) if isinstance(b, list) else b)
        p.steps.append(Op(p.fresh("t"), op, args, kwargs))
    op = draw(st.sampled_from(LINALG_OPS))
    dtype = draw(st.sampled_from(BAD_DTYPES))
    args = [Ref(p.given([[2, 1], [1, 3]], dtype))]
    if op in (*SOLVES, "linalg.lstsq"):
        args.append(Ref(p.given([1.0, 1.0], "float64" if dtype == "int64" else dtype)))
    elif op.endswith("matrix_power"):
        args.append(draw(st.sampled_from((2, -1))))
    p.steps.append(Op(p.fresh("t"), op, args, {}))
    return p.observed()


@pytest.mark.rule("LINALG-002")
@examples(ERROR_WEIGHT)
@given(program=linalg_errors())
def test_linalg_errors(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
