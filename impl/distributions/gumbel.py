"""torch.distributions.Gumbel: loc - scale * log(-log(U)) of a Uniform(tiny, 1 - eps), a
TransformedDistribution through two inverse ExpTransforms and AffineTransforms."""

from __future__ import annotations

import math
from typing import Any

from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.transformed_distribution import TransformedDistribution
from impl.distributions.transforms import AffineTransform, ExpTransform
from impl.distributions.uniform import Uniform
from impl.distributions.utils import NUMBERS, broadcast_all, euler_constant, torch

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """The Gumbel distribution of ``loc`` and ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = torch.finfo(self.loc.dtype)
        if isinstance(loc, NUMBERS) and isinstance(scale, NUMBERS):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            low, high = torch.full_like(self.loc, finfo.tiny), torch.full_like(self.loc, 1 - finfo.eps)
            base_dist = Uniform(low, high, validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + euler_constant)
