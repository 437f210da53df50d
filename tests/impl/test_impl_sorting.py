"""Corner cases of sorting and selection (impl/_ops/sorting.py) that generated programs rarely
reach, each compared with torch directly: ties beyond three elements, empty inputs, errors."""

from __future__ import annotations

import pytest
import torch

import impl
from tests.helpers.parity import both


def as_lists(r):
    return [t.tolist() for t in r] if isinstance(r, tuple) else r.tolist()


NAN = float("nan")
CASES = {
    "kthvalue_quickselect_ties": lambda t: t.kthvalue(t.tensor([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0]), 2),
    "kthvalue_nan_ties": lambda t: t.kthvalue(t.tensor([NAN, 1.0, NAN, 1.0, 0.0]), 4),
    "median_first_nan": lambda t: t.median(t.tensor([[1.0, NAN, 0.0, NAN]]), 1),
    "median_lower_middle": lambda t: t.median(t.tensor([4.0, 1.0, 3.0, 2.0])),
    "median_empty_int64": lambda t: t.median(t.zeros(0, dtype=t.int64)),
    "median_empty_bool": lambda t: t.median(t.zeros(0, dtype=t.bool)),
    "median_bool": lambda t: t.median(t.tensor([True, False])),
    "median_dim_bool": lambda t: t.median(t.tensor([True, False]), 0),
    "median_empty_dim": lambda t: t.median(t.zeros(2, 0), 1),
    "sort_descending_nan_first": lambda t: t.sort(t.tensor([1.0, NAN, 2.0, NAN, 1.0]), descending=True),
    "sort_stable_16": lambda t: t.sort(t.tensor([1.0, 0.0] * 8)),
    "sort_uint8": lambda t: t.sort(t.tensor([200, 3, 200, 0], dtype=t.uint8), descending=True),
    "topk_k_out_of_range_bool": lambda t: t.topk(t.tensor([True]), 2),
    "topk_bool": lambda t: t.topk(t.tensor([True, False]), 1),
    "topk_missing_k": lambda t: t.topk(t.tensor([1.0])),
    "kthvalue_k_zero": lambda t: t.kthvalue(t.tensor([[1.0, 2.0]]), 0),
    "kthvalue_0d_bool": lambda t: t.kthvalue(t.tensor(True), 1),
    "msort_dim0": lambda t: t.msort(t.tensor([[3.0, 1.0], [2.0, NAN]])),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name: str) -> None:
    (expected, expected_error), (got, got_error) = both(CASES[name])
    assert got_error == expected_error
    if expected_error is None:
        assert type(got).__name__ == type(expected).__name__
        assert str(as_lists(got)) == str(as_lists(expected))


def test_sort_stable_overload_grad_fn() -> None:
    for lib in (torch, impl):
        x = lib.ones(3, requires_grad=True)
        assert type(x.sort(stable=None).values.grad_fn).__name__ == "SortBackward1"
        assert type(x.sort(0).values.grad_fn).__name__ == "SortBackward0"


def test_topk_gradient_scatters_back() -> None:
    grads = []
    for lib in (torch, impl):
        x = lib.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
        v = x.topk(2).values
        (g,) = lib.autograd.grad((v * v).sum(), x, create_graph=True)
        grads.append((g.tolist(), type(g.grad_fn).__name__))
    assert grads[0] == grads[1]
