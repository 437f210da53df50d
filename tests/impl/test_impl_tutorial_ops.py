"""Ops tutorials and textbooks call that impl gained (einsum, unique, nonzero, bincount, meshgrid,
repeat_interleave): values, dtypes, grad_fn graphs,
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
    "torch.bincount(torch.tensor([], dtype=torch.int64), weights=torch.tensor([]), minlength=2)",
    "torch.repeat_interleave(torch.tensor([1., 2]), 2, output_size=5)",
    "torch.repeat_interleave(torch.tensor(5.), 2, dim=1)",
    "torch.repeat_interleave(torch.tensor(5.), torch.tensor([2]), dim=0)",
    'torch.unique(torch.tensor([3,1,2,3,1]),sorted=False)',
    'torch.unique(torch.tensor([3.,1,2,3,1]),return_inverse=True,return_counts=True)',
    'torch.unique(torch.tensor([[1,2],[1,2],[0,5]]),dim=0,return_inverse=True,return_counts=True)',
    'torch.unique(torch.tensor([[1,2],[1,2],[0,5]]),dim=1)',
    'torch.unique(torch.tensor([[1,2],[1,2],[0,5]]),dim=-1, return_counts=True)',
    "torch.unique(torch.tensor([1.,float('nan'),float('nan')]))",
    'torch.unique(torch.tensor(3.),return_inverse=True)',
    'torch.unique(torch.tensor([1.,2],requires_grad=True))',
    'torch.unique(torch.tensor([[1.,2]],requires_grad=True), dim=1)',
    'torch.unique(torch.tensor([1.,2],requires_grad=True), return_inverse=True)',
    'torch.unique_consecutive(torch.tensor([1,1,2,2,3,1,1,2]),return_inverse=True,return_counts=True)',
    'torch.unique_consecutive(torch.tensor([[1,2],[1,2],[0,5]]),dim=0)',
    'torch.unique_consecutive(torch.tensor([[1,2],[1,2],[0,5]]),dim=0,return_inverse=True,return_counts=True)',
    'torch.unique_consecutive(torch.tensor([1.,1],requires_grad=True))',
    'torch.unique(torch.zeros(0,3),dim=0)',
    'torch.unique(torch.zeros(2,0),dim=0,return_inverse=True)',
    'torch.unique(torch.zeros(0,0),dim=0)',
    'torch.unique(torch.zeros(0),return_inverse=True,return_counts=True)',
    'torch.unique_consecutive(torch.zeros(0),return_inverse=True,return_counts=True)',
    'torch.unique(torch.tensor(3.),dim=0)',
    'torch.unique(torch.tensor([True,False,True]),return_counts=True)',
    'torch.unique(torch.tensor([1.,-0.,0.]))',
    'torch.tensor([[2,1],[2,1]]).unique(return_inverse=True)',
    'torch.unique([1,2])',
    'torch.unique_consecutive(3)',
    'torch.unique_consecutive(torch.tensor(3.), dim=0)',
    'torch.nonzero(torch.tensor(5.))',
    'torch.nonzero(torch.tensor(0.))',
    'torch.nonzero(torch.tensor(5.),as_tuple=True)',
    'torch.nonzero(torch.tensor(0.),as_tuple=True)',
    'torch.nonzero(torch.tensor([[1,0],[0,2]]))',
    'torch.nonzero(torch.tensor([[1.,0],[0,2]], requires_grad=True),as_tuple=True)',
    'torch.argwhere(torch.tensor(3))',
    'torch.tensor([[True, False]]).argwhere()',
    "torch.nonzero(torch.tensor([float('nan'),-0.0]))",
    'torch.nonzero(torch.zeros(2, 0, 3))',
    'torch.nonzero(torch.zeros(2, 0, 3), as_tuple=True)',
    'torch.nonzero([1])',
    'torch.bincount(torch.tensor([0,1,1,3]))',
    'torch.bincount(torch.tensor([0,1,1,3]),weights=torch.tensor([.5,1,1,2]))',
    'torch.bincount(torch.tensor([0,1,1,3]),weights=torch.tensor([.5,1,1,2],dtype=torch.float64))',
    'torch.bincount(torch.tensor([0,1]),weights=torch.tensor([1,2]))',
    'torch.bincount(torch.tensor([0,1]),weights=torch.tensor([1,2], dtype=torch.float16))',
    'torch.bincount(torch.tensor([0,1]),minlength=5)',
    'torch.bincount(torch.tensor([-1,1]))',
    'torch.bincount(torch.tensor([[0,1]]))',
    'torch.bincount(torch.tensor([0.,1]))',
    'torch.bincount(torch.tensor([],dtype=torch.int64))',
    'torch.bincount(torch.tensor([],dtype=torch.int64), minlength=2)',
    'torch.bincount(torch.tensor([0,1]),minlength=-1)',
    'torch.bincount(torch.tensor([0,1]),weights=torch.tensor([1.]))',
    'torch.bincount(torch.tensor([0,1],dtype=torch.uint8))',
    'torch.bincount(torch.tensor([True,False]))',
    'torch.bincount(torch.tensor(1))',
    'torch.meshgrid(torch.tensor([1,2]),torch.tensor([3,4,5]))',
    "torch.meshgrid(torch.tensor([1,2]),torch.tensor([3,4,5]),indexing='xy')",
    "torch.meshgrid(torch.tensor([1.,2], requires_grad=True),torch.tensor([3.,4,5]),indexing='xy')",
    "torch.meshgrid([torch.tensor([1,2]),torch.tensor([3.,4,5])],indexing='ij')",
    "torch.meshgrid(torch.tensor(1),torch.tensor([3,4]),indexing='ij')",
    "torch.meshgrid(indexing='ij')",
    "torch.meshgrid(torch.tensor([1]),indexing='foo')",
    "torch.meshgrid(torch.tensor([1]), indexing='xy')",
    "torch.meshgrid(torch.tensor([1]), torch.tensor([2]), torch.tensor([3, 4]), indexing='xy')",
    'torch.repeat_interleave(torch.tensor([1,2]),2)',
    'torch.repeat_interleave(torch.tensor([[1.,2],[3,4]], requires_grad=True),2)',
    'torch.repeat_interleave(torch.tensor([[1.,2],[3,4]], requires_grad=True),2, dim=-1)',
    'torch.repeat_interleave(torch.tensor([[1.,2],[3,4]], requires_grad=True),torch.tensor([1,2]),dim=0)',
    'torch.repeat_interleave(torch.tensor([2,0,1]))',
    'torch.repeat_interleave(torch.tensor([[1,2],[3,4]]),3,dim=1,output_size=6)',
    'torch.repeat_interleave(torch.tensor([[1,2],[3,4]]),torch.tensor([1,2]),dim=0,output_size=4)',  # noqa: E501
    'torch.repeat_interleave(torch.tensor([[1,2],[3,4]]),torch.tensor([1,2]),dim=0,output_size=3)',
    'torch.repeat_interleave(torch.tensor([1,2]),torch.tensor([1,2,3]))',
    'torch.repeat_interleave(torch.tensor([1,2]),-1)',
    'torch.repeat_interleave(torch.tensor([1,2]),torch.tensor([1,-2]))',
    'torch.repeat_interleave(torch.tensor(5.),3)',
    'torch.repeat_interleave(torch.tensor([1,2]),torch.tensor(2))',
    'torch.repeat_interleave(torch.tensor([1,2]),torch.tensor([3]))',
    'torch.repeat_interleave(torch.tensor([[1,2],[3,4]]),torch.tensor([1,2]))',
    'torch.repeat_interleave(torch.tensor([1,2]),torch.tensor([1.,2]))',
    'torch.repeat_interleave(torch.tensor([1,2]),torch.tensor([[1,2]]))',
    'torch.repeat_interleave(torch.tensor([1,2]),2, dim=1)',
    'torch.repeat_interleave(torch.zeros(0, 2), 2, dim=0)',
    'torch.tensor([1., 2]).repeat_interleave(torch.tensor([0, 0]))',
    'torch.repeat_interleave(torch.tensor([], dtype=torch.int64))',
    "torch.frexp(torch.tensor([1.5, -0., inf, nan, 1e-40], dtype=torch.bfloat16))",
    "torch.ldexp(torch.tensor([1., 3.], dtype=torch.float16), torch.tensor([True, False]))",
    "torch.ldexp(torch.tensor([1., 3.], dtype=torch.float16), torch.tensor(0.5))",
    "torch.ldexp(torch.tensor([1, 3]), torch.tensor([2, -1]))",
    "torch.tensor([1, 3]).ldexp_(torch.tensor([2, -1]))",
    "torch.nextafter(torch.tensor([1., -0., 0.], dtype=torch.bfloat16), torch.tensor([2., 0., -1.]))",
    "torch.index_put(torch.zeros(3, dtype=torch.bool), (torch.tensor([0, 0]),), torch.ones(2) > 0, True)",
    "torch.index_put(torch.zeros(4), (torch.tensor([1, 0, 1, 0], dtype=torch.uint8),), torch.tensor(2.))",
    "torch.index_put(torch.zeros(2, 3), (torch.tensor([0]), torch.tensor([1])), 1.0)",
    "torch.zeros(2, 3).index_put((0,), torch.ones(3))",
    "torch.put(torch.zeros(2, 2), torch.tensor(3), torch.tensor(1.), accumulate=True)",
    "torch.zeros(3).put_(torch.tensor([1, 1]), torch.tensor([1., 2.]), accumulate=True)",
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
