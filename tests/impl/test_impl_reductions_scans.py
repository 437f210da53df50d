"""Corner cases of the reductions and scans of impl/_ops/reductions.py and impl/_ops/scans.py that generated
programs rarely reach, each compared with torch directly: empty dim lists, result dtypes, errors,
-0.0, NaN among ties, and the gradients' graphs."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import impl
from tests.helpers.parity import both


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


# -- var_mean, std_mean, aminmax: nodes with two differentiable outputs ---------------------------
TWO_OUTPUT_CASES = {
    "var_mean_tuple": lambda t: t.var_mean(t.tensor([[1.0, 3.0, 3.0], [0.0, 0.0, 2.0]]), 1, keepdim=True),
    "std_mean_correction": lambda t: t.std_mean(t.tensor([1.0, 2.0, 4.0]), correction=0),
    "var_mean_inf_before_last": lambda t: t.var_mean(t.tensor([[INF, 1.0], [1.0, INF]]), 1),
    "var_mean_half": lambda t: t.var_mean(t.tensor([1.0, 2.0, 5.0], dtype=t.float16)),
    "var_mean_int": lambda t: t.var_mean(t.tensor([1, 2])),
    "std_mean_repeated_dim": lambda t: t.std_mean(t.ones(2, 3), [1, 1]),
    "aminmax": lambda t: t.aminmax(t.tensor([[1, 5, 2], [7, 0, 7]], dtype=t.int16), dim=1),
    "aminmax_bool_keepdim": lambda t: t.aminmax(t.tensor([[True, False]]), keepdim=True),
    "aminmax_nan": lambda t: t.aminmax(t.tensor([1.0, NAN, 2.0])),
    "aminmax_0d_dim": lambda t: t.aminmax(t.tensor(2.0), dim=-1),
    "aminmax_empty": lambda t: t.aminmax(t.zeros(0)),
    "aminmax_empty_dim": lambda t: t.aminmax(t.zeros(0, 3), dim=0),
    "aminmax_empty_other_dim": lambda t: t.aminmax(t.zeros(3, 0), dim=0),
    "aminmax_positional_dim": lambda t: t.aminmax(t.ones(2), 0),
    "aminmax_method_positional_dim": lambda t: t.ones(2).aminmax(0),
    "aminmax_bool_dim": lambda t: t.aminmax(t.ones(2), dim=True),
}


def assert_values_close(got, expected) -> None:
    """Type, dtypes and shapes equal; values within torch.testing's default tolerances (NaN equal)."""
    assert type(got).__name__ == type(expected).__name__
    for g, e in zip(got, expected, strict=True):
        assert (str(g.dtype), tuple(g.shape)) == (str(e.dtype), tuple(e.shape))
        torch.testing.assert_close(torch.tensor(g.tolist(), dtype=e.dtype), e, equal_nan=True)


@pytest.mark.parametrize("name", TWO_OUTPUT_CASES)
def test_two_outputs_match_torch(name: str) -> None:
    (expected, expected_error), (got, got_error) = both(TWO_OUTPUT_CASES[name])
    assert got_error == expected_error
    if expected_error is None:
        assert_values_close(got, expected)


TWO_OUTPUT_GRADIENTS = {
    "var_mean": lambda t, x: t.var_mean(x, 1),
    "var_mean_all": lambda t, x: t.var_mean(x, correction=0),
    "std_mean_keepdim": lambda t, x: t.std_mean(x, 0, keepdim=True),
    "aminmax": lambda t, x: t.aminmax(x, dim=1),
    "aminmax_all": lambda t, x: t.aminmax(x),
}


@pytest.mark.parametrize("used", ["first", "second", "both"])
@pytest.mark.parametrize("name", TWO_OUTPUT_GRADIENTS)
def test_two_outputs_gradient_and_graph(name: str, used: str) -> None:
    """Backward through the first output, the second, or both (torch's formula gets an undefined
    gradient for an unused output and makes no zeros for it): the gradient, the node shared by
    both outputs with output_nr 0 and 1, and the second-order graph, with ties among the values."""
    got = []
    for lib in (torch, impl):
        x = lib.tensor([[1.0, 3.0, 3.0], [-2.0, 0.5, -2.0]], dtype=lib.float64, requires_grad=True)
        a, b = TWO_OUTPUT_GRADIENTS[name](lib, x)
        nodes = (
            a.grad_fn.name(),
            a.grad_fn is b.grad_fn,
            getattr(b, "output_nr", getattr(b, "_output_nr", None)),
        )
        y = {"first": (a * a).sum(), "second": (b * b).sum(), "both": (a * a).sum() + (b * b * 3).sum()}[used]
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        got.append((nodes, g.tolist(), graph(g.grad_fn)))
    assert (got[1][0], got[1][2]) == (got[0][0], got[0][2])
    torch.testing.assert_close(*(torch.tensor(g[1], dtype=torch.float64) for g in got))


# -- var/std/var_mean/std_mean argument checks shared by _spread -----------------------------------
SPREAD_CALLS = {
    "empty_over_nonempty_dim": lambda f, t: f(t.zeros(0, 3), 1),
    "empty_over_empty_dim_keepdim": lambda f, t: f(t.zeros(0, 3), 0, keepdim=True),
    "empty_correction_0": lambda f, t: f(t.zeros(3, 0), 0, correction=0),
    "empty_negative_correction": lambda f, t: f(t.zeros(0, 3), 1, correction=-1),
    "unbiased_and_correction": lambda f, t: f(t.ones(2, 3), 1, True, correction=1),
    "bool_dim_and_correction": lambda f, t: f(t.ones(2, 3), True, correction=1),
    "float_dim": lambda f, t: f(t.ones(2, 3), 1.5),
    "float_in_dim_list": lambda f, t: f(t.ones(2, 3), [1.0]),
    "repeated_dim": lambda f, t: f(t.ones(2, 3), [1, -1]),
    "repeated_dim_0d": lambda f, t: f(t.ones(()), [0, -1]),
    "repeated_dim_of_ints": lambda f, t: f(t.ones(2, 3, dtype=t.int64), [1, 1]),
}


@pytest.mark.parametrize("op", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("call", SPREAD_CALLS)
def test_spread_arguments_and_warning(op: str, call: str) -> None:
    """torch's "degrees of freedom is <= 0" warning (always for an empty input, whatever the dims,
    unless the correction is negative), its parser's TypeError for unbiased with correction or a
    float dim, and its error for a repeated dim (after the dtype check)."""
    import warnings

    got = []
    for lib in (torch, impl):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = SPREAD_CALLS[call](getattr(lib, op), lib)
                outcome = [
                    (tuple(r.shape), str(r.dtype))
                    for r in (result if isinstance(result, tuple) else (result,))
                ]
            except Exception as e:  # noqa: BLE001 (the error is what is compared)
                outcome = (type(e).__name__, str(e))
        got.append((outcome, sorted(str(w.message) for w in caught)))
    assert got[1] == got[0]


def _reduction_errors(lib: Any) -> list:
    """Each reduction over repeated, out-of-range and valid dims, with an integer dtype where it
    takes one (refused for an input requiring grad): its shape or its error."""
    outcomes = []
    for grad in (False, True):
        x = lib.ones(2, 3, requires_grad=grad)
        for name in ("sum", "mean", "amax", "amin", "std", "var", "logsumexp", "nanmean", "nansum", "prod"):
            for dims in ([1, 1], [5], 1, 5, [0, -1]):
                if name == "prod" and isinstance(dims, list):
                    continue
                kwargs = {"dtype": lib.int64} if name in ("sum", "nansum", "prod") else {}
                try:
                    outcomes.append(tuple(getattr(lib, name)(x, dims, **kwargs).shape))
                except Exception as e:  # noqa: BLE001 - the error is what is compared
                    outcomes.append(f"{type(e).__name__}: {e}")
    return outcomes


def test_reduction_dims_are_checked_first() -> None:
    """Found by a fuzz campaign: a repeated dim is torch's error (not numpy's), and the dims are
    checked before an integer dtype is refused for an input requiring grad."""
    assert _reduction_errors(impl) == _reduction_errors(torch)
