"""Ops tutorials and textbooks call that impl gained (einsum, ...): values, dtypes, grad_fn graphs,
gradients and errors against torch, at the corners the conformance programs draw rarely."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import impl
from tests.impl.test_impl_tutorial_functions import shown

A = "torch.tensor([[1., 2, 4], [4, 5, 9]], requires_grad=True)"
S = "torch.tensor([[1., 2, 4], [4, 5, 9], [0, -1, 3]], requires_grad=True)"
CALLS = [
    f"torch.einsum('ij,jk->ik', {A}, {S})",
    f"torch.einsum('ij,kj', {A}, {A})",  # implicit output: the subscripts seen once, sorted
    f"torch.einsum('ii', {S})",
    f"torch.einsum('ii->i', [{S}])",
    f"torch.einsum('...j,j', {A}, torch.ones(3))",
    f"torch.einsum('bij,bjk->bik', {A}.unsqueeze(0), {S}.unsqueeze(0))",
    "torch.einsum('i,j->ij', torch.arange(3), torch.arange(2))",
    "torch.einsum('ij->', torch.zeros(0, 3))",
    "torch.einsum('ij,jk', torch.ones(2, 0), torch.ones(0, 2))",
    f"torch.einsum('ij,jk', {A}, {A})",
    f"torch.einsum('ij,jk', {A}, torch.ones(3, 2, dtype=torch.float64))",
    f"torch.einsum('ij->k', {A})",
    f"torch.einsum('ijk', {A})",
    f"torch.einsum('ij', {A}, {A})",
    f"torch.einsum('ij,jk', {A})",
    f"torch.einsum('i1', {A})",
    "torch.einsum('ij')",
]


@pytest.mark.parametrize("call", CALLS)
def test_as_torch(call: str) -> None:
    assert shown(impl, call) == shown(torch, call)


@pytest.mark.parametrize("equation", ["ij,jk->ik", "ij,kj", "ij,ij->i", "ii->", "ij,kl->jk", "...ij,...jk"])
def test_einsum_gradients(equation: str) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 3)).tolist(), rng.standard_normal((3, 3)).tolist()
    grads = []
    for module in (torch, impl):
        x, y = (module.tensor(v, dtype=module.float64, requires_grad=True) for v in (a, b))
        operands = (x,) if "," not in equation.split("->")[0] else (x, y)
        module.einsum(equation, *operands).pow(2).sum().backward()
        grads.append([np.round(np.array(t.grad.tolist()), 10).tolist() for t in operands])
    assert grads[0] == grads[1]
