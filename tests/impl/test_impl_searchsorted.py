"""torch.searchsorted and torch.bucketize on impl against torch 2.13: ties on both sides, NaN and
signed zeros, numbers and tensors of other dtypes (compared in the result type, a number as a 0-d
tensor: 300 in uint8 boundaries wraps), 2-d sequences lane by lane, sorters, side and right,
out_int32, empty boundaries, and torch's errors, value by value and message by message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.parity import both

NAN = float("nan")
CASES = {
    "ties and NaN, left": lambda L: L.searchsorted(
        L.tensor([1.0, 2.0, 2.0, 3.0, NAN]), L.tensor([2.0, 0.0, 5.0, NAN])
    ),
    "ties and NaN, right": lambda L: L.searchsorted(
        L.tensor([1.0, 2.0, 2.0, 3.0, NAN]), L.tensor([2.0, 0.0, 5.0, NAN]), right=True
    ),
    "a float": lambda L: L.searchsorted(L.tensor([1.0, 2.0, 2.0, 3.0]), 2.0),
    "an int": lambda L: L.searchsorted(L.tensor([1.0, 2.0, 2.0, 3.0]), 2),
    "a bool": lambda L: L.searchsorted(L.tensor([1.0, 2.0, 2.0, 3.0]), True),
    "a number wrapping in uint8": lambda L: L.searchsorted(L.tensor([1, 50, 100], dtype=L.uint8), 300),
    "an int64 tensor into uint8": lambda L: L.searchsorted(
        L.tensor([1, 50, 100], dtype=L.uint8), L.tensor([300])
    ),
    "a float into ints": lambda L: L.searchsorted(L.tensor([1, 2, 3]), 2.5),
    "lanes": lambda L: L.searchsorted(L.tensor([[1.0, 2, 3], [4, 5, 6]]), L.tensor([[2.0, 9.0], [7.0, 4.0]])),
    "lanes, side right, int32": lambda L: L.searchsorted(
        L.tensor([[1.0, 2, 3], [4, 5, 6]]), L.tensor([[2.0, 9.0], [7.0, 4.0]]), side="right", out_int32=True
    ),
    "a number into lanes": lambda L: L.searchsorted(L.tensor([[1.0, 2, 3], [4, 5, 6]]), 2.0),
    "lanes that differ": lambda L: L.searchsorted(L.tensor([[1.0, 2, 3], [4, 5, 6]]), L.ones(3, 2)),
    "0-d boundaries": lambda L: L.searchsorted(L.tensor(1.0), L.ones(2)),
    "side and right opposite": lambda L: L.searchsorted(
        L.tensor([1.0, 2]), L.tensor([2.0]), side="left", right=True
    ),
    "an unknown side": lambda L: L.searchsorted(L.tensor([1.0, 2]), L.tensor([2.0]), side="middle"),
    "a sorter": lambda L: L.searchsorted(
        L.tensor([3.0, 1.0, 2.0]), L.tensor([2.0, 0.5, 3.5]), sorter=L.tensor([1, 2, 0])
    ),
    "sorters of lanes": lambda L: L.searchsorted(
        L.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 1.0]]),
        L.tensor([[2.0], [1.0]]),
        sorter=L.tensor([[1, 2, 0], [0, 2, 1]]),
        right=True,
    ),
    "a sorter out of range": lambda L: L.searchsorted(
        L.tensor([3.0, 1.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([1, 2, 5])
    ),
    "a float sorter": lambda L: L.searchsorted(
        L.tensor([3.0, 1.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([1.0, 2, 0])
    ),
    "a sorter too short": lambda L: L.searchsorted(
        L.tensor([3.0, 1.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([1, 2])
    ),
    "bools": lambda L: L.searchsorted(L.tensor([True, False]), L.tensor([True])),
    "empty boundaries": lambda L: L.searchsorted(L.tensor([], dtype=L.float32), L.tensor([2.0])),
    "empty lanes": lambda L: L.searchsorted(L.zeros(2, 0), L.zeros(2, 3)),
    "inputs requiring grad": lambda L: L.searchsorted(
        L.tensor([1.0, 2.0], requires_grad=True), L.tensor([2.0], requires_grad=True)
    ),
    "bfloat16": lambda L: L.searchsorted(L.tensor([1.0, 2.0]).bfloat16(), L.tensor([[1.5, 2.5]]).bfloat16()),
    "a 0-d value": lambda L: L.searchsorted(L.tensor([1.0, 2.0]), L.tensor(1.5)),
    "signed zeros": lambda L: L.searchsorted(L.tensor([-0.0, 0.0, 1.0]), L.tensor([0.0, -0.0])),
    "bucketize": lambda L: L.bucketize(L.tensor([[2.0], [7.0]]), L.tensor([1.0, 3, 5])),
    "bucketize a number": lambda L: L.bucketize(2.0, L.tensor([1.0, 3])),
    "bucketize into lanes": lambda L: L.bucketize(L.tensor([2.0]), L.tensor([[1.0, 3]])),
    "bucketize right, int32": lambda L: L.bucketize(
        L.tensor([2.0]), L.tensor([1.0, 3]), out_int32=True, right=True
    ),
    "bucketize bools": lambda L: L.bucketize(L.tensor([True]), L.tensor([True])),
    "a list": lambda L: L.searchsorted([1.0, 2], L.tensor([2.0])),
    "bucketize a list": lambda L: L.bucketize([1.0], L.tensor([1.0])),
}


def describe(result: Any) -> Any:
    return list(result.shape), str(result.dtype), result.tolist(), result.requires_grad, result.grad_fn


@pytest.mark.parametrize("name", list(CASES))
def test_searches_match_torch(name: str) -> None:
    (expected, expected_error), (got, got_error) = both(CASES[name], describe)
    assert got_error == expected_error
    assert got == expected
