"""torch.distributions.Laplace: loc and scale; rsample inverts the CDF of a uniform_(eps - 1, 1) draw."""

from __future__ import annotations

from typing import Any

from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.distribution import Distribution
from impl.distributions.utils import EMPTY, torch

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace distribution of ``loc`` and ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self._init_params(("loc", "scale"), (loc, scale), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return self._expand_params(Laplace, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        eps = torch.finfo(self.loc.dtype).eps
        u = self.loc.new(self._extended_shape(sample_shape)).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        return 0.5 - 0.5 * diff.sign() * torch.expm1(-diff.abs() / self.scale)

    def icdf(self, value: Any) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + torch.log(2 * self.scale)
