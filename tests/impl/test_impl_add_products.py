"""The in-place add-products (addmv_, addr_, addbmm_), their edge cases and out= forms against
torch: printed results with grad_fn names, or errors."""

from __future__ import annotations

import torch

import impl
from tests.impl.test_impl_tutorial_functions import shown

V = "torch.tensor([1., 2.])"
M = "torch.tensor([[1., 2., 3.], [4., 5., 6.]])"
L, B = "dtype=torch.long", "dtype=torch.bool"
F64 = "dtype=torch.float64"
CALLS = [
    f"torch.ones(2).addmv_({M}, torch.tensor([1., 0., -1.]), beta=2, alpha=0.5)",
    f"torch.ones(1).addmv_({M}, torch.ones(3))",
    f"torch.ones(2).addmv_({M}, torch.ones(4))",
    f"torch.ones(2, 3).addr_({V}, torch.ones(3), alpha=-1)",
    f"torch.ones(3).addr_({V}, torch.ones(3))",
    f"torch.ones(2, 3, dtype=torch.long).addr_({V}, torch.ones(3))",
    "torch.ones(2, 3).addbmm_(torch.ones(2, 2, 4), torch.ones(2, 4, 3), beta=0.5, alpha=2)",
    f"torch.ones(2, 3, requires_grad=True).clone().addr_({V}, torch.ones(3))",
    "torch.addmv(torch.tensor([nan, inf]), torch.ones(2, 3), torch.ones(3), beta=0)",
    "torch.addr(torch.full((2, 3), nan), torch.ones(2), torch.ones(3), beta=0)",
    "torch.addbmm(torch.full((2, 3), inf), torch.ones(2, 2, 4), torch.ones(2, 4, 3), beta=0)",
    f"torch.addr(torch.ones(2, 3, {L}), torch.ones(2, {L}), torch.ones(3, {L}), beta=True)",
    f"torch.addr(torch.ones(2, 3, {B}), torch.ones(2, {B}), torch.zeros(3, {B}), beta=False)",
    "torch.addmv(torch.ones(2), torch.ones(2, 3), torch.ones(3), out=torch.ones(2, dtype=torch.float64))",
    "torch.addr(torch.ones(2, 3), torch.ones(2), torch.ones(3), out=torch.ones(2, 3, dtype=torch.float64))",
    f"torch.addbmm(torch.ones(2, 3), torch.ones(2, 2, 4), torch.ones(2, 4, 3), out=torch.ones(2, 3, {F64}))",
    "torch.addbmm(torch.ones(2, 3), torch.ones(2, 2, 4), torch.ones(3, 4, 3))",
    "torch.addbmm(torch.ones(2, 3), torch.ones(2, 2, 4), torch.ones(2, 5, 3))",
    "torch.vdot(torch.ones(3), torch.ones(3), out=torch.ones(()))",
    "torch.inner(torch.ones(2, 3), torch.ones(2, 4))",
]


def test_as_torch() -> None:
    for call in CALLS:
        assert shown(impl, call) == shown(torch, call), call
