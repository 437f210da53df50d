"""torch.distributions.HalfCauchy: |X| of a Cauchy of loc 0 (a TransformedDistribution through
AbsTransform, its density doubled on [0, inf))."""

from __future__ import annotations

import math
from typing import Any

from impl._tensor import Tensor
from impl.distributions.cauchy import Cauchy
from impl.distributions.half_normal import _Folded
from impl.distributions.transforms import AbsTransform
from impl.distributions.utils import torch

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = torch.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        return self._folded_log_prob(value)
