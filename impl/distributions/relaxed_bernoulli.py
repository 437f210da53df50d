"""torch.distributions.RelaxedBernoulli (Concrete): the sigmoid of a LogitRelaxedBernoulli, whose
rsample is reparameterised through a torch.rand draw; _Relaxed, what the relaxed distributions share."""

from __future__ import annotations

from typing import Any

from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.binary import BinaryProbs, one_given
from impl.distributions.distribution import Distribution
from impl.distributions.transformed_distribution import TransformedDistribution
from impl.distributions.transforms import SigmoidTransform
from impl.distributions.utils import EMPTY, NUMBERS, broadcast_all, clamp_probs, torch

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryProbs, Distribution):
    """The logit of a RelaxedBernoulli of ``temperature`` and ``probs`` (or ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Tensor, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        one_given(probs, logits)
        given = probs if probs is not None else logits
        (self._param,) = broadcast_all(given)
        self.__dict__["probs" if probs is not None else "logits"] = self._param
        shape = Size() if isinstance(given, NUMBERS) else self._param.size()
        Distribution.__init__(self, shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        params = self._expanded_probs(batch_shape)
        params["_param"] = params["logits" if "logits" in params else "probs"]
        params["temperature"] = self.temperature
        return self._expanded(LogitRelaxedBernoulli, batch_shape, params, _instance)

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(torch.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _Relaxed(TransformedDistribution):
    """A relaxed distribution: its base's temperature, logits and probs."""

    has_rsample = True

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class RelaxedBernoulli(_Relaxed):
    """The sigmoid of a LogitRelaxedBernoulli: values in the unit interval."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval

    def __init__(self, temperature: Tensor, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
