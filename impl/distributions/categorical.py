"""torch.distributions.Categorical: normalised probs or logits over the last dim; sample draws
torch.multinomial (with replacement) of the flattened probs."""

from __future__ import annotations

import math
from typing import Any

from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.binary import one_given
from impl.distributions.distribution import Distribution
from impl.distributions.utils import EMPTY, lazy_property, logits_to_probs, probs_to_logits, torch

__all__ = ["Categorical"]


class Categorical(Distribution):
    """The categorical distribution over ``probs.size(-1)`` classes."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        one_given(probs, logits)
        name = "probs" if probs is not None else "logits"
        given = probs if probs is not None else logits
        if given.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if probs is not None:
            param = probs / probs.sum(-1, keepdim=True)
        else:
            param = logits - logits.logsumexp(dim=-1, keepdim=True)
        self.__dict__[name] = self._param = param
        self._num_events = param.size()[-1]
        batch_shape = param.size()[:-1] if param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        shape = tuple(batch_shape) + (self._num_events,)
        params = {k: self.__dict__[k].expand(shape) for k in ("probs", "logits") if k in self.__dict__}
        params["_param"] = params["logits" if "logits" in params else "probs"]
        params["_num_events"] = self._num_events
        return self._expanded(Categorical, batch_shape, params, _instance)

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        drawn = torch.multinomial(probs_2d, sample_shape.numel(), True).T
        return drawn.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, log_pmf = torch.broadcast_tensors(value.long().unsqueeze(-1), self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = torch.clamp(self.logits, min=torch.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = torch.arange(self._num_events, dtype=torch.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
