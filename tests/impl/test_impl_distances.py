"""torch.cdist (each p, both compute paths, batches), torch.cosine_similarity and
F.pairwise_distance against torch: values (within float tolerance: torch's kernels sum in their
own order), dtypes, shapes, grad_fn graphs, gradients and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import impl

A = "torch.randn(3, 5, requires_grad=True)"
B = "torch.randn(4, 5, requires_grad=True)"
CALLS = [
    f"torch.cdist({A}, {B})",
    *(f"torch.cdist({A}, {B}, p={p})" for p in (1, 0, "inf", 3, 0.5, 1.5)),
    f"torch.cdist({A}, {B}, compute_mode='use_mm_for_euclid_dist')",
    f"torch.cdist({A}, {B}, compute_mode='donot_use_mm_for_euclid_dist')",
    f"torch.cdist({A}[:, :1], {B}[:, :1], p=0.5)",
    "torch.cdist(torch.randn(30, 5, requires_grad=True), torch.randn(4, 5, requires_grad=True))",
    "torch.cdist(torch.randn(2, 30, 5, requires_grad=True), torch.randn(4, 5, requires_grad=True))",
    "torch.cdist(torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True), "
    "torch.randn(1, 4, 5, dtype=torch.float64))",
    "torch.cdist(torch.randn(2, 30, 17), torch.randn(2, 4, 17), compute_mode='donot_use_mm_for_euclid_dist')",
    "torch.cdist(torch.ones(3, 2, requires_grad=True), torch.ones(2, 2))",
    "torch.cdist(torch.ones(3), torch.ones(2, 3))",
    "torch.cdist(torch.ones(2, 3), torch.ones(2, 4))",
    "torch.cdist(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3))",
    "torch.cdist(torch.ones(2, 3), torch.ones(2, 3, dtype=torch.float64))",
    "torch.cdist(torch.ones(2, 3), torch.ones(2, 3), p=-1)",
    "torch.cdist(torch.ones(2, 3), torch.ones(2, 3), compute_mode='x')",
    "torch.cdist(torch.ones(2, 2, 3), torch.ones(3, 2, 3))",
    "torch.cdist(torch.ones(0, 3), torch.ones(2, 3))",
    "torch.cdist(torch.ones(2, 0), torch.ones(2, 0))",
    "torch.cdist(torch.ones(2, 3, dtype=torch.float16), torch.ones(2, 3, dtype=torch.float16))",
    f"torch.cosine_similarity({A}, {A})",
    f"F.cosine_similarity({A}, torch.randn(5), dim=-1)",
    f"torch.cosine_similarity({A}, {A}, dim=0, eps=0.5)",
    "torch.cosine_similarity(torch.zeros(2, 3, requires_grad=True), torch.ones(2, 3))",
    "torch.cosine_similarity(torch.tensor([1, 2]), torch.tensor([2, 3]), dim=0)",
    "torch.cosine_similarity(torch.tensor([1, 2]), torch.tensor([2., 3]), dim=0)",
    "torch.cosine_similarity(torch.ones(2, 3), torch.ones(3, 3))",
    "torch.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3), dim=2)",
    f"F.pairwise_distance({A}, {A})",
    f"F.pairwise_distance({A}, torch.randn(5), p=1, keepdim=True)",
    f"torch.pairwise_distance({A}, {B})",
    "F.pairwise_distance(torch.randn(5, requires_grad=True), torch.randn(5))",
    "F.pairwise_distance(torch.tensor(1., requires_grad=True), torch.tensor(3.))",
    f"F.pairwise_distance({A}, torch.randn(3, 5), p=inf, eps=0)",
]


def _graph(fn):
    names, stack = [], [fn]
    while stack:
        node = stack.pop()
        if node is not None:
            names.append(node.name())
            stack.extend(n for n, _ in reversed(node.next_functions))
    return names


def _outcome(mod, call):
    mod.manual_seed(0)
    env = {"torch": mod, "F": mod.nn.functional, "inf": math.inf}
    try:
        out = eval(call, env)
    except Exception as e:  # noqa: BLE001  (the error is the outcome compared)
        return (type(e).__name__, str(e)), None, None
    leaves = [t for t in out.grad_fn.next_functions] if out.grad_fn else []
    grads = None
    if out.requires_grad and out.numel():
        inputs = [n.variable for n, _ in leaves if n is not None and hasattr(n, "variable")]
        grads = [g.tolist() for g in mod.autograd.grad(out.sum(), inputs)] if inputs else None
    return (str(out.dtype), tuple(out.shape), _graph(out.grad_fn)), out.detach().double().tolist(), grads


def _close(got, want):
    assert (got is None) == (want is None)
    if want is not None:
        np.testing.assert_allclose(np.array(got, float), np.array(want, float), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("call", CALLS)
def test_distances_as_torch(call):
    (meta, value, grads), (torch_meta, torch_value, torch_grads) = _outcome(impl, call), _outcome(torch, call)
    assert meta == torch_meta
    _close(value, torch_value)
    assert (grads is None) == (torch_grads is None)
    for grad, torch_grad in zip(grads or [], torch_grads or [], strict=True):
        _close(grad, torch_grad)
