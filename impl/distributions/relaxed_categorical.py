"""torch.distributions.RelaxedOneHotCategorical (Gumbel-softmax): the exp of an
ExpRelaxedCategorical, whose rsample is a softmax of logits plus Gumbel noise from a torch.rand draw."""

from __future__ import annotations

from typing import Any

from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.categorical import Categorical
from impl.distributions.distribution import Distribution
from impl.distributions.relaxed_bernoulli import _Relaxed
from impl.distributions.transforms import ExpTransform
from impl.distributions.utils import EMPTY, broadcast_all, clamp_probs, torch

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical of ``temperature`` and ``probs`` (or ``logits``)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # (the true support is a submanifold of it)
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        Distribution.__init__(self, self._categorical.batch_shape, self._categorical.param_shape[-1:],
                              validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        params = {"temperature": self.temperature, "_categorical": self._categorical.expand(batch_shape)}
        return self._expanded(ExpRelaxedCategorical, batch_shape, params, _instance)

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(torch.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Any) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = torch.full_like(self.temperature, float(k)).lgamma()
        log_scale = log_scale - self.temperature.log().mul(-(k - 1))
        score = logits - value.mul(self.temperature)
        return (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """The exp of an ExpRelaxedCategorical: values in the simplex."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex

    def __init__(self, temperature: Tensor, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
