"""NumPy-style and in-place aliases tutorials call (greater, less_equal, not_equal, multiply_,
subtract_, divide_, true_divide_, negative_, clip_, absolute_, fliplr/flipud as methods) and the
words of a method that takes no argument: against torch, values, grad_fn graphs and errors."""

from __future__ import annotations

import torch

import impl
from tests.impl.test_impl_tutorial_functions import shown

A = "torch.tensor([1., 2, 3], requires_grad=True)"
B = "torch.tensor([2., 2, .5])"
I = "torch.tensor([1, 2, 3])"  # noqa: E741
M = "torch.arange(6.).reshape(2, 3).requires_grad_()"
CALLS = [
    *(call.format(name=name)
      for name in ("greater", "greater_equal", "less", "less_equal", "not_equal")
      for call in (f"torch.{{name}}({A}, 1.5)", f"{A}.{{name}}({B})", f"torch.{{name}}({A}, 'x')",
                   f"{A}.{{name}}('x')", f"torch.{{name}}({A}, {B}, out=torch.empty(3, dtype=torch.bool))",
                   f"torch.{{name}}({I}, 2)", "torch.{name}(None, 1)")),
    *(call.format(name=name)
      for name in ("multiply_", "subtract_", "divide_", "true_divide_")
      for call in (f"{A}.clone().{{name}}(2)", f"{A}.clone().{{name}}({B})", f"{A}.clone().{{name}}('x')",
                   f"{I}.{{name}}(2)", f"{A}.{{name}}(2)")),
    f"{A}.clone().subtract_({B}, alpha=2)",
    f"{A}.clone().divide_({B}, rounding_mode='floor')",
    f"{A}.clone().true_divide_({B}, rounding_mode='floor')",
    f"{A}.clone().negative_()", f"{I}.negative_()",
    f"{A}.clone().clip_(0, 1)", f"{A}.clone().clip_(min={B})", f"{I}.clip_(0.5)",
    f"{A}.absolute()", f"{A}.clone().absolute_()", "torch.tensor([True]).absolute_()", f"{I}.absolute()",
    f"{M}.fliplr()", f"{M}.flipud()", f"{A}.fliplr()", "torch.tensor(1.).flipud()", f"{M}.flipud(0)",
    f"{M}.flipud(dim=0)", f"{A}.abs(x=1)", f"{A}.t(1, 2)", f"{A}.clone().exp_(1)",
    f"{A}.clone().sigmoid_(x=1)", f"{A}.clone().zero_(1)", f"{A}.neg(1)",
]  # fmt: skip


def test_aliases_as_torch() -> None:
    differing = {call: shown(impl, call) for call in CALLS if shown(impl, call) != shown(torch, call)}
    assert differing == {call: shown(torch, call) for call in differing}
