"""impl against torch on the spellings torch's argument parser takes besides a parameter's own
name (NumPy's ``axis``, ``keepdims``, ``x``/``a``/``x1``, ``x2``; ``size=`` of the creation
functions): the same call on both, compared by value or by the whole TypeError."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import impl
from impl import _signatures

CALLS = [
    "torch.sum(x, axis=0)",
    "x.sum(axis=1, keepdims=True)",
    "torch.mean(x, axis=(0, 1), keepdims=True)",
    "x.mean(axis=0, keepdims=True)",
    "torch.cumsum(x, axis=0)",
    "x.cumsum(axis=1)",
    "torch.softmax(x, axis=0)",
    "x.log_softmax(axis=1)",
    "torch.max(x, axis=0, keepdims=True)[0]",
    "x.max(axis=1)[1]",
    "torch.argmax(x, axis=0)",
    "torch.std(x, axis=0)",
    "torch.var(x, axis=0, keepdims=True)",
    "torch.logsumexp(x, axis=1)",
    "torch.cat([x, x], axis=1)",
    "torch.stack([x, x], axis=1)",
    "torch.unsqueeze(x, axis=0)",
    "torch.gather(x, axis=0, index=torch.zeros(1, 2, dtype=torch.long))",
    "torch.sum(a=x, axis=0)",
    "torch.exp(x=x)",
    "torch.exp(x1=x)",
    "torch.add(x1=x, x2=x)",
    "torch.add(x, x2=x)",
    "x.add(x2=x)",
    "torch.where(x > 1, x=x, x2=x)",
    "torch.zeros(size=(2, 3))",
    "torch.ones(size=[2])",
    "torch.empty(size=(1,)).shape",
    "torch.full(size=(2,), fill_value=1.5)",
    "torch.randn(size=(2, 3)).shape",
    "torch.rand(size=[2]).shape",
    "torch.arange(end=3)",
]

REFUSED = [
    "torch.sum(x, 0, axis=1)",
    "torch.sum(x, dim=0, axis=1)",
    "torch.sum(x, axis=0, keepdim=True, keepdims=False)",
    "x.sum(0, axis=1)",
    "x.sum(dim=0, axis=1)",
    "torch.exp(x, bogus=1)",
    "torch.exp(x, x=x)",
    "torch.exp(input=x, x=x)",
    "torch.exp(a=x, x=x)",
    "torch.cumsum(x, 0, axis=0)",
    "torch.cumsum(x, dim=0, axis=0)",
    "torch.nn.functional.softmax(x, axis=0)",
    "torch.split(x, 1, axis=0)",
    "torch.norm(x, axis=0)",
    "torch.mul(x, other=2, x2=3)",
    "torch.zeros((2, 3), size=(2, 3))",
    "torch.zeros(2, size=(2,))",
]


def _run(module: Any, call: str) -> Any:
    x = module.tensor([[1.0, 2.0], [3.0, 4.0]])
    return eval(call, {"torch": module, "x": x})  # noqa: S307 - the cases above


@pytest.mark.parametrize("call", CALLS)
def test_taken_as_torch_takes_it(call: str) -> None:
    expected, got = _run(torch, call), _run(impl, call)
    if isinstance(expected, torch.Tensor):
        assert got.dtype == getattr(impl, str(expected.dtype).split(".")[1])
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    else:
        assert tuple(got) == tuple(expected)


def _error(module: Any, call: str) -> tuple[str, str]:
    with pytest.raises(Exception) as caught:
        _run(module, call)
    return type(caught.value).__name__, str(caught.value)


@pytest.mark.parametrize("call", REFUSED)
def test_refused_as_torch_refuses_it(call: str) -> None:
    assert _error(impl, call) == _error(torch, call)


def test_the_table_is_torchs() -> None:
    """impl's table of NumPy spellings is torch's, and the names it leaves out are those torch
    defines in Python (no C parser reads their arguments)."""
    import inspect

    assert _signatures.NUMPY_NAMES["dim"] == ("axis",)
    for name in _signatures.PYTHON_DEFINED:
        owner = torch if hasattr(torch, name) and name != "unflatten" else torch.Tensor
        assert inspect.isfunction(getattr(owner, name)), name
