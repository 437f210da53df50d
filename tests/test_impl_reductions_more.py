"""Corner cases of the reductions and scans of impl/_ops/reductions_more.py that generated
programs rarely reach, each compared with torch directly: empty dim lists, result dtypes, errors,
-0.0, NaN among ties, and the gradients' graphs."""

from __future__ import annotations

import pytest
import torch

import impl


def both(fn):
    """``fn`` on torch and on impl: (result, None) or (None, (type name, message))."""
    out = []
    for lib in (torch, impl):
        try:
            out.append((fn(lib), None))
        except Exception as e:  # noqa: BLE001 - compared between the two
            out.append((None, (type(e).__name__, str(e).split("\n")[0])))
    return out


def described(r):
    """What is compared of a result: type, and per tensor its dtype, shape and values (-0.0 shown)."""
    tensors = r if isinstance(r, tuple) else (r,)
    return type(r).__name__, [(str(t.dtype), tuple(t.shape), repr(t.tolist())) for t in tensors]


NAN, INF = float("nan"), float("inf")
CASES = {
    "logsumexp_empty": lambda t: t.logsumexp(t.zeros(0), 0),
    "logsumexp_empty_dim_of_rows": lambda t: t.logsumexp(t.zeros(2, 0), 1),
    "logsumexp_infinities": lambda t: t.logsumexp(t.tensor([[INF, INF], [-INF, -INF], [INF, NAN]]), 1),
    "logsumexp_int_default_dtype": lambda t: t.logsumexp(t.tensor([[1, 2], [3, 4]], dtype=t.int8), 0),
    "logsumexp_bool": lambda t: t.logsumexp(t.tensor([True, False]), 0),
    "logsumexp_no_dims_keepdim": lambda t: t.logsumexp(t.tensor([[1.0, 2.0]]), (), keepdim=True),
    "logsumexp_no_dims_refused": lambda t: t.logsumexp(t.tensor([[1.0, 2.0]]), ()),
    "logsumexp_no_dims_0d": lambda t: t.logsumexp(t.tensor(2.0), ()),
    "logsumexp_dim_missing": lambda t: t.logsumexp(t.tensor([1.0])),
    "logsumexp_dim_none": lambda t: t.logsumexp(t.tensor([1.0]), None),
    "logsumexp_method_dim_none": lambda t: t.tensor([1.0]).logsumexp(None),
    "logsumexp_repeated_dim": lambda t: t.logsumexp(t.ones(2, 2), (1, -1)),
    "logsumexp_half_steps": lambda t: t.logsumexp(t.tensor([4.62, -0.88, -6.53, 3.1], dtype=t.float16), 0),
    "nansum_int_to_int64": lambda t: t.nansum(t.tensor([[100, 100]], dtype=t.int8), 1),
    "nansum_bool": lambda t: t.nansum(t.tensor([True, True])),
    "nansum_into_half": lambda t: t.nansum(t.tensor([1e30, -1e30, NAN], dtype=t.float64), dtype=t.float16),
    "nansum_bfloat16_float32_accumulation": lambda t: t.nansum(
        t.tensor([7.5, -3.25, 0.01, -4.2, 1.9, NAN], dtype=t.bfloat16)
    ),
    "nansum_no_dims": lambda t: t.nansum(t.tensor([[NAN, 1.0], [2.0, 3.0]]), ()),
    "nanmean_all_nan": lambda t: t.nanmean(t.tensor([[NAN, NAN], [NAN, 1.0]]), 1),
    "nanmean_int": lambda t: t.nanmean(t.tensor([1, 2])),
    "nanmean_int_dtype": lambda t: t.nanmean(t.tensor([1.0, 2.0]), dtype=t.int64),
    "nanmean_empty": lambda t: t.nanmean(t.zeros(0)),
    "nanmean_repeated_dim": lambda t: t.nanmean(t.ones(2, 2), (0, 0)),
    "all_uint8": lambda t: t.all(t.tensor([[3, 0], [1, 2]], dtype=t.uint8), 1),
    "any_empty_dims_elementwise": lambda t: t.any(t.tensor([[0.0, NAN], [2.0, -0.0]]), []),
    "all_empty": lambda t: t.all(t.zeros(0, dtype=t.int16)),
    "any_dim_none_keepdim": lambda t: t.any(t.zeros(2, 3), None, keepdim=True),
    "count_nonzero_tuple": lambda t: t.count_nonzero(t.tensor([[0.0, NAN], [-0.0, 1.0]]), (0, 1)),
    "count_nonzero_repeated": lambda t: t.count_nonzero(t.ones(2, 2), (0, -2)),
    "cummax_ties_last_index": lambda t: t.cummax(t.tensor([2, 2, 1, 2]), 0),
    "cummax_nan_then_nan": lambda t: t.cummax(t.tensor([1.0, NAN, 5.0, NAN, 0.0]), 0),
    "cummin_negative_zero": lambda t: t.cummin(t.tensor([0.0, -0.0, 0.0]), 0),
    "cummax_bool": lambda t: t.cummax(t.tensor([[False, True], [True, False]]), 1),
    "cummax_0d_bad_dim": lambda t: t.cummax(t.tensor(1.0), 1),
    "cummin_empty_any_dim": lambda t: t.cummin(t.zeros(2, 0), 5),
    "cummax_missing_dim": lambda t: t.cummax(t.tensor([1.0])),
    "logcumsumexp_first_negative_zero": lambda t: t.logcumsumexp(t.tensor([-0.0, -INF, INF, 2.0, NAN]), 0),
    "logcumsumexp_0d_negative_zero": lambda t: t.logcumsumexp(t.tensor(-0.0), 0),
    "logcumsumexp_int": lambda t: t.logcumsumexp(t.tensor([1, 2]), 0),
    "logcumsumexp_0d_int": lambda t: t.logcumsumexp(t.tensor(1), 0),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name: str) -> None:
    (expected, expected_error), (got, got_error) = both(CASES[name])
    assert got_error == expected_error
    if expected_error is None:
        assert described(got) == described(expected)


def graph(fn) -> str:
    """The names of the graph behind ``fn``, depth first."""
    if fn is None:
        return "None"
    return fn.name() + "(" + ", ".join(graph(n) for n, _ in fn.next_functions) + ")"


GRADIENTS = {
    "logsumexp": lambda t, x: t.logsumexp(x, (0, 1)),
    "logsumexp_keepdim": lambda t, x: t.logsumexp(x, 1, keepdim=True),
    "nansum": lambda t, x: t.nansum(x, 0),
    "nanmean": lambda t, x: t.nanmean(x, 1),
    "cummax": lambda t, x: t.cummax(x, 1).values,
    "cummin_0d": lambda t, x: t.cummin(x[0, 0], 0).values,
    "logcumsumexp": lambda t, x: t.logcumsumexp(x, 0),
}


@pytest.mark.parametrize("name", GRADIENTS)
def test_gradient_and_second_order_graph(name: str) -> None:
    """The gradient of ``sum(op(x) * w)`` (w requiring grad: the backward's own graph is built) and
    the names of its graph, with NaN and ties among the values."""
    got = []
    for lib in (torch, impl):
        x = lib.tensor([[1.0, NAN, 1.0], [-2.0, 3.0, 3.0]], dtype=lib.float64, requires_grad=True)
        y = GRADIENTS[name](lib, x)
        w = lib.full(y.shape, 0.5, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
        got.append((y.grad_fn.name(), repr(g.tolist()), graph(g.grad_fn)))
    assert got[1] == got[0]
