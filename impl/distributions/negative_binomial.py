"""torch.distributions.NegativeBinomial: failures before ``total_count`` successes of ``probs``;
sample is torch.poisson of a Gamma(total_count, exp(-logits)) draw."""

from __future__ import annotations

from typing import Any

from impl import _grad_mode
from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.binary import BinaryProbs, one_given
from impl.distributions.distribution import Distribution
from impl.distributions.gamma import Gamma
from impl.distributions.utils import EMPTY, broadcast_all, lazy_property, torch
from impl.nn import functional as F

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbs, Distribution):
    """The negative binomial distribution of ``total_count`` and ``probs`` (or ``logits``)."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        one_given(probs, logits)
        name = "probs" if probs is not None else "logits"
        total_count, param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = total_count.type_as(param)
        self.__dict__[name] = self._param = param
        Distribution.__init__(self, param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        params = self._expanded_probs(batch_shape)
        params["_param"] = params["logits" if "logits" in params else "probs"]
        params["total_count"] = self.total_count.expand(batch_shape)
        return self._expanded(NegativeBinomial, batch_shape, params, _instance)

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / torch.sigmoid(-self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        with _grad_mode.no_grad():
            return torch.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
