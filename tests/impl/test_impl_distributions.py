"""torch.distributions and torch.linalg's factorisations beyond what the DIST rules' scripts draw
(cdf and icdf, enumerate_support, constraints, linalg's errors, torch.Size's sums): values,
grad_fn names and errors against torch, in one loop."""

from __future__ import annotations

import torch

import impl
from tests.impl.test_impl_tutorial_functions import shown

P = "torch.tensor([0.25, 0.5], requires_grad=True)"
A = "torch.tensor([[4., 2.], [2., 3.]], dtype=torch.float64, requires_grad=True)"
CALLS = [
    f"torch.distributions.Normal({P}, 2.).cdf(torch.tensor([0., 1.]))",
    f"torch.distributions.Normal({P}, 2.).perplexity()",
    f"torch.distributions.Laplace({P}, 2.).cdf(torch.tensor([0., 1.]))",
    f"torch.distributions.Laplace({P}, 2.).icdf(torch.tensor([0.1, 0.7]))",
    f"torch.distributions.Exponential({P}).cdf(torch.tensor([0., 1.]))",
    f"torch.distributions.Exponential({P}).icdf(torch.tensor([0.1, 0.7]))",
    f"torch.distributions.Uniform({P}, 1.).cdf(torch.tensor([0., 0.75]))",
    f"torch.distributions.Uniform({P}, 1.).icdf(torch.tensor([0.1, 0.7]))",
    f"torch.distributions.Bernoulli({P}).enumerate_support()",
    f"torch.distributions.Bernoulli({P}).enumerate_support(expand=False)",
    "torch.distributions.Categorical(torch.ones(2, 3)).enumerate_support()",
    "torch.distributions.OneHotCategorical(torch.ones(2, 3)).enumerate_support(False)",
    "torch.distributions.Independent(torch.distributions.Bernoulli(torch.ones(2) / 2), 1)"
    ".enumerate_support()",
    "torch.distributions.Independent(torch.distributions.Normal(torch.zeros(2), 1.), 1).has_rsample",
    "torch.distributions.Bernoulli(0.5).has_rsample, torch.distributions.Bernoulli(0.5).param_shape",
    "torch.distributions.Bernoulli(0.5).rsample()",
    "torch.distributions.Categorical(torch.ones(2, 3)).expand((4, 2)).param_shape",
    "torch.distributions.Distribution.set_default_validate_args(1)",
    "torch.distributions.Normal(0., 1.).expand((2,)).expand((3, 2))",
    "torch.distributions.constraints.integer_interval(0, 3).check(torch.tensor([-1., 0., 2.5, 3.]))",
    "torch.distributions.constraints.half_open_interval(0, 1).check(torch.tensor([0., 1.]))",
    "torch.distributions.constraints.lower_triangular.check(torch.tensor([[1., 0.], [2., 3.]]))",
    "torch.distributions.constraints.simplex, torch.distributions.constraints.nonnegative_integer",
    "torch.distributions.constraints.independent(torch.distributions.constraints.positive, 2)"
    ".check(torch.ones(3))",
    "torch.distributions.constraints.dependent.check(1)",
    "torch.distributions.constraints.dependent.event_dim",
    "torch.distributions.constraints.is_dependent(torch.distributions.Uniform.support)",
    "torch.distributions.constraints.positive_definite.check(torch.tensor([[2., 1.], [1., 2.]]))",
    "torch.Size([2]) + (3,), (1,) + torch.Size([2]), torch.Size([2]) + torch.Size([])",
    "torch.Size([2]) + [3]",
    "torch.bernoulli(torch.tensor(0.5)).shape",
    f"torch.linalg.cholesky({A})",
    "torch.linalg.cholesky_ex(torch.tensor([[1., 2.], [2., 1.]]))",
    "torch.linalg.cholesky(torch.tensor([[1., 2.], [2., 1.]]))",
    "torch.linalg.cholesky(torch.eye(2, dtype=torch.float16))",
    "torch.linalg.cholesky(torch.ones(2, 3))",
    f"torch.cholesky_inverse(torch.linalg.cholesky({A}))",
    f"torch.cholesky_inverse({A}, upper=True)",
    "torch.cholesky_inverse(torch.eye(2, dtype=torch.long))",
    f"torch.linalg.solve_triangular({A}, torch.ones(2, 3, dtype=torch.float64), upper=True)",
    f"torch.linalg.solve_triangular({A}, torch.ones(3, 2), upper=False, left=False, unitriangular=True)",
    f"torch.linalg.solve_triangular({A}, torch.ones(3, 2), upper=False)",
    "torch.linalg.solve_triangular(torch.ones(2), torch.ones(2, 2), upper=False)",
    "torch.linalg.solve_triangular(torch.eye(2, dtype=torch.long), torch.ones(2, 1), upper=False)",
]


def test_as_torch() -> None:
    for call in CALLS:
        assert shown(impl, call) == shown(torch, call), call
