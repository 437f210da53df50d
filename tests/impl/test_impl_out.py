"""impl against torch on ``out=``: the value written, out's dtype, shape, strides and version, the
result being out itself, torch's resize warning, and its dtype and autograd errors."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import impl

# (out as made, the call); ``r`` is out
CASES = [
    ("empty(0)", "add(a, a, out=r)"),
    ("empty(3)", "add(a, a, out=r)"),
    ("empty(2, 2)", "add(a, a, out=r)"),
    ("empty(2, 2, dtype=torch.long)", "add(a, a, out=r)"),
    ("empty(2, 2, dtype=torch.float64)", "add(a, a, out=r)"),
    ("empty(2, dtype=torch.float64)", "add(i, i, out=r)"),
    ("empty(2, dtype=torch.bool)", "add(i, i, out=r)"),
    ("empty(0)", "add(b, a, out=r)"),
    ("empty(0, requires_grad=True)", "add(a, a, out=r)"),
    ("empty(0)", "sum(a, 0, out=r)"),
    ("empty(0, dtype=torch.long)", "sum(a, axis=0, out=r)"),
    ("empty(0)", "sum(i, 0, out=r)"),
    ("empty(0)", "mean(a, out=r)"),
    ("empty(0, dtype=torch.long)", "mean(a, 0, out=r)"),
    ("empty(0, dtype=torch.long)", "exp(i, out=r)"),
    ("empty(0, dtype=torch.float16)", "exp(a, out=r)"),
    ("empty(0)", "eq(a, a, out=r)"),
    ("empty(3, dtype=torch.double)", "mul(a, 2, out=r)"),
    ("empty(3)", "add(i, i, out=r)"),
    ("empty(3, dtype=torch.double)", "mean(a, 0, out=r)"),
    ("empty(0, dtype=torch.double)", "mm(a, a, out=r)"),
    ("empty(5)", "mm(a, a, out=r)"),
    ("empty(0, dtype=torch.double)", "matmul(a, a, out=r)"),
    ("empty(0, dtype=torch.double)", "dot(v, v, out=r)"),
    ("empty(0, dtype=torch.double)", "softmax(a, 0, out=r)"),
    ("empty(0, dtype=torch.double)", "cat([a, a], out=r)"),
    ("empty(0, dtype=torch.long)", "cat([a, a], out=r)"),
    ("empty(0)", "stack([a, a], out=r)"),
    ("empty(0, dtype=torch.long)", "cumsum(a, 0, out=r)"),
    ("empty(0)", "mul(a, 2, out=r)"),
    ("empty(0)", "sub(a, a, alpha=2, out=r)"),
    ("empty(6)[::2]", "add(v, v, out=r)"),
    ("empty(2, 2).t()", "add(a, a, out=r)"),
    ("empty(0)", "add(a, a, out=None)"),
]


def _observe(module: Any, made: str, call: str) -> tuple:
    env: dict[str, Any] = {"torch": module}
    env["a"] = module.tensor([[1.0, 2.0], [3.0, 4.0]])
    env["b"] = env["a"].clone().requires_grad_()
    env["i"], env["v"] = module.tensor([1, 2]), module.tensor([1.0, 2.0])
    env["r"] = eval(f"torch.{made}", env)  # noqa: S307 - the cases above
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(f"torch.{call}", env)  # noqa: S307
        except (RuntimeError, TypeError) as error:
            return type(error).__name__, str(error)
    r = env["r"]
    seen = (result is r, r.tolist(), str(r.dtype), tuple(r.shape), r.stride(), r._version)
    return seen, [(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught]


@pytest.mark.parametrize(("made", "call"), CASES)
def test_out_as_torch(made: str, call: str) -> None:
    assert _observe(impl, made, call) == _observe(torch, made, call)
