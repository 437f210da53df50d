"""torch.distributions.Bernoulli: probs or logits (the other derived on demand); sample is
torch.bernoulli of the expanded probs; log_prob and entropy are binary cross entropies with logits."""

from __future__ import annotations

import math
from typing import Any

from impl import _grad_mode
from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.binary import BinaryProbs, one_given
from impl.distributions.exp_family import ExponentialFamily
from impl.distributions.utils import (
    EMPTY,
    NUMBERS,
    broadcast_all,
    torch,
)
from impl.nn import functional as F

__all__ = ["Bernoulli"]


class Bernoulli(BinaryProbs, ExponentialFamily):
    """The Bernoulli distribution of ``probs`` (or ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        one_given(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        self.__dict__["probs" if probs is not None else "logits"] = param
        self._param = param
        super().__init__(Size() if isinstance(given, NUMBERS) else param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        params = self._expanded_probs(batch_shape)
        params["_param"] = params["logits" if "logits" in params else "probs"]
        return self._expanded(Bernoulli, batch_shape, params, _instance)

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with _grad_mode.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = torch.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return torch.log1p(torch.exp(x))
