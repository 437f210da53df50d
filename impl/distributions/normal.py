"""torch.distributions.Normal: loc and scale; rsample is loc + scale * a standard normal draw."""

from __future__ import annotations

import math
from typing import Any

from impl import _grad_mode
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.exp_family import ExponentialFamily
from impl.distributions.utils import EMPTY, NUMBERS, _standard_normal, torch

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal distribution N(loc, scale**2)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self._init_params(("loc", "scale"), (loc, scale), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        return self._expand_params(Normal, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with _grad_mode.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_scale = math.log(self.scale) if isinstance(self.scale, NUMBERS) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * self.scale**2) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + torch.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Any) -> Tensor:
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)
