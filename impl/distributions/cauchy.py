"""torch.distributions.Cauchy: loc and scale; rsample is loc + scale * a cauchy_() draw."""

from __future__ import annotations

import math
from typing import Any

from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.distribution import Distribution
from impl.distributions.utils import EMPTY, torch

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution of ``loc`` (its median) and ``scale`` (half width)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self._init_params(("loc", "scale"), (loc, scale), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return self._expand_params(Cauchy, ("loc", "scale"), batch_shape, _instance)

    def _full(self, value: float) -> Tensor:
        return torch.full(self._extended_shape(), value, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mean(self) -> Tensor:
        return self._full(math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._full(math.inf)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        eps = self.loc.new(self._extended_shape(sample_shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Tensor:
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
