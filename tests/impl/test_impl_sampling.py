"""torch.normal (its four overloads), torch.bernoulli, Tensor.bernoulli_ / normal_ and torch.poisson
against torch, each call after the same seed: values, dtypes, shapes, grad_fn names, errors, and
the zero gradients of their nodes."""

from __future__ import annotations

import pytest
import torch

import impl

M = "torch.zeros(3, requires_grad=True)"
S = "torch.ones(3, requires_grad=True)"
CALLS = [
    f"torch.normal({M}, 2.)",
    f"torch.normal(0., {S})",
    f"torch.normal({M}, {S})",
    f"torch.normal({M})",
    "torch.normal(1., 2., (2,))",
    "torch.normal(2, 3, size=(1, 4))",
    "torch.normal(1., 2., size=(2,), dtype=torch.float64)",
    "torch.normal(3., 0.5, (5, 4), requires_grad=True)",
    "torch.normal(mean=torch.arange(1., 6.))",
    "torch.normal(torch.arange(20.), 0.7)",
    "torch.normal(torch.arange(37.).reshape(37, 1), torch.ones(37, 2))",
    "torch.normal(torch.arange(20, dtype=torch.float64), torch.ones(20, dtype=torch.float64) * 3)",
    "torch.normal(torch.zeros(3), torch.ones(1, 3))",
    "torch.normal(torch.zeros(3), torch.ones(3, dtype=torch.float64))",
    "torch.normal(torch.zeros(3, dtype=torch.float64), torch.ones(3))",
    "torch.normal(0., torch.ones(3, dtype=torch.float16))",
    "torch.normal(0.5, torch.ones(20, dtype=torch.float16) * 0.3)",
    "torch.normal(torch.arange(37, dtype=torch.bfloat16), 2.)",
    "torch.empty(64, dtype=torch.float16).normal_(1., 3.)",
    "torch.normal(torch.zeros(2), 1., generator=torch.Generator().manual_seed(1))",
    "torch.normal(torch.zeros(0), 1.)",
    "torch.normal(torch.zeros(3), -1.)",
    "torch.normal(0., -torch.ones(2))",
    "torch.normal(torch.zeros(3, dtype=torch.long), 1.)",
    "torch.normal(0, torch.ones(3, dtype=torch.long))",
    "torch.normal(torch.zeros(3), torch.ones(2))",
    "torch.normal(1, 2)",
    "torch.normal(torch.zeros(3), 'a')",
    "torch.bernoulli(torch.full((3,), 0.5, requires_grad=True))",
    "torch.bernoulli(torch.full((3,), 0.5), 0.3)",
    "torch.bernoulli(torch.full((3,), 0.5, requires_grad=True), 0.3)",
    "torch.bernoulli(torch.full((3,), 0.5), p=0.3)",
    "torch.bernoulli(torch.full((3,), 0.5, dtype=torch.float64))",
    "torch.bernoulli(torch.full((20,), 0.5, dtype=torch.float16))",
    "torch.rand(4, 5).bernoulli()",
    "torch.bernoulli(torch.tensor([2., -1]))",
    "torch.bernoulli(torch.tensor([1, 0]))",
    "torch.bernoulli(torch.full((3,), 0.5), 1.5)",
    "torch.bernoulli(torch.full((3,), 0.5), torch.full((3,), 0.5))",
    "torch.zeros(3).bernoulli_(torch.full((3,), 0.5))",
    "torch.zeros(2, 3).bernoulli_(torch.full((3,), 0.5))",
    "torch.zeros(3, dtype=torch.long).bernoulli_(torch.full((3,), 0.5))",
    "torch.zeros(3).bernoulli_(torch.full((3,), 0.5, dtype=torch.float64))",
    "torch.zeros(3).bernoulli_(torch.full((2, 3), 0.5))",
    "torch.zeros(3).bernoulli_(1.5)",
    "torch.zeros(3).bernoulli_('a')",
    "torch.zeros(3, requires_grad=True).clone().bernoulli_(0.5)",
    "torch.zeros(3, requires_grad=True).clone().bernoulli_(torch.full((3,), 0.5, requires_grad=True))",
    "torch.zeros(3).bernoulli_(torch.full((3,), 0.5, requires_grad=True))",
    "torch.zeros(3, requires_grad=True).bernoulli_(0.5)",
    "torch.zeros(3, requires_grad=True).clone().normal_()",
    "torch.zeros(20, requires_grad=True).clone().normal_(2., 3.)",
    "torch.zeros(3, dtype=torch.long).normal_()",
    "torch.zeros(3).normal_(0, -1)",
    "torch.poisson(torch.tensor([1., 4.], requires_grad=True))",
    "torch.poisson(torch.tensor([0., 0.5, 3., 9.99, 10., 25., 100., 1000.]))",
    "torch.poisson(torch.full((2, 3), 50., dtype=torch.float64))",
    "torch.poisson(torch.tensor([1, 4]))",
    "torch.poisson(torch.tensor([-1.]))",
    "torch.poisson(1.)",
]


def _outcome(mod, call):
    mod.manual_seed(0)
    try:
        r = eval(call, {"torch": mod})
    except Exception as e:  # noqa: BLE001  (the error is the outcome compared)
        return type(e).__name__, str(e)
    return str(r.dtype), tuple(r.shape), r.grad_fn and r.grad_fn.name(), r.requires_grad, r.tolist()


@pytest.mark.parametrize("call", CALLS)
def test_sampling_as_torch(call):
    assert _outcome(impl, call) == _outcome(torch, call)


@pytest.mark.parametrize("call", [c for c in CALLS if "requires_grad=True)" in c and "'" not in c])
def test_the_nodes_give_torchs_gradients(call):
    results = []
    for mod in (impl, torch):
        mod.manual_seed(0)
        env = {"torch": mod}
        try:
            out = eval(call, env)
            leaves = [t for t in out.grad_fn.next_functions if t[0] is not None] if out.grad_fn else []
            (out * 2).sum().backward()
            results.append([type(node).__name__ for node, _ in leaves])
        except Exception as e:  # noqa: BLE001
            results.append(f"{type(e).__name__}: {e}")
    assert results[0] == results[1]

