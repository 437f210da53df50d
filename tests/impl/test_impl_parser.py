"""torch's argument parser in impl: calls no signature takes refused before running, with torch's
TypeError, and the hidden deprecated signatures run with torch's warning (conformance rule API-005
draws the rest; its checks leave out this once-per-process warning, shown here with warn_always)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import impl

CALLS = [
    "torch.add(x, 2.0, y)", "torch.sub(x, 2.0, 1)", "x.add(2.0, y)", "x.clone().add_(-0.5, y)",
    "x.clone().sub_(2, y)", "torch.addcmul(x, 0.5, x, y)", "x.clone().addcdiv_(0.5, x, y)",
    "torch.add(x, 2.0, y, out=torch.empty(2))", "x.addcmul(0.5, x, y)",
    "torch.add()", "torch.sub(x)", "torch.addcmul(x, other=y)", "torch.add(1, 2, 3, 4, 5)",
    "torch.add(x, other='a')", "torch.subtract(x, 'a')", "torch.multiply()", "torch.add(1.5, x)",
    "torch.round(x, y, 'a')", "x.round('a')", "torch.tril(x, 'a')", "torch.zeros()", "torch.randn()",
    "torch.ones_like(x, foo=1)", "torch.diagonal(x, 0, 0, None)", "x.mul_(1, 2)", "x.add_()",
    "x.eq(y, other=1)", "x.transpose('a')", "torch.sum(x, None)", "torch.sort(x, stable=None, dim=0)",
]  # fmt: skip


def _outcome(module: Any, call: str) -> tuple[Any, ...]:
    x, y = module.tensor([1.0, -2.0]), module.tensor([0.5, 4.0])
    module.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result: Any = repr(eval(call, {"torch": module, "x": x, "y": y}))
            except TypeError as error:
                result = f"TypeError: {error}"
        return result, [str(w.message) for w in caught]
    finally:
        module.set_warn_always(False)


@pytest.mark.parametrize("call", CALLS)
def test_parsed_as_torch(call: str) -> None:
    assert _outcome(impl, call) == _outcome(torch, call)
