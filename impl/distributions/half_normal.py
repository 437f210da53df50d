"""torch.distributions.HalfNormal: |X| of a Normal of loc 0 (a TransformedDistribution through
AbsTransform, its density doubled on [0, inf)); _Folded, what it shares with HalfCauchy."""

from __future__ import annotations

import math
from typing import Any

from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.normal import Normal
from impl.distributions.transformed_distribution import TransformedDistribution
from impl.distributions.transforms import AbsTransform
from impl.distributions.utils import torch

__all__ = ["HalfNormal"]


class _Folded(TransformedDistribution):
    """|X| of a base distribution symmetric about 0 (its ``scale``)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return torch.zeros_like(self.scale)

    def _folded_log_prob(self, value: Any) -> Tensor:
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """|X| for X ~ Normal(0, scale)."""

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._folded_log_prob(value)
