"""torch.distributions.Geometric: the number of failures before the first success of ``probs``;
sample is floor(log(u) / log1p(-probs)) of a uniform_(tiny, 1) draw."""

from __future__ import annotations

from typing import Any

from impl import _grad_mode
from impl._size import Size
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.binary import BinaryProbs, one_given
from impl.distributions.distribution import Distribution
from impl.distributions.utils import EMPTY, NUMBERS, broadcast_all, torch
from impl.nn import functional as F

__all__ = ["Geometric"]


class Geometric(BinaryProbs, Distribution):
    """The geometric distribution of success probability ``probs`` (or ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        one_given(probs, logits)
        given = probs if probs is not None else logits
        (self.__dict__["probs" if probs is not None else "logits"],) = broadcast_all(given)
        shape = Size() if isinstance(given, NUMBERS) else given.size()
        Distribution.__init__(self, shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to be positive but found invalid values:\n{value.data[~valid]}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return self._expanded(Geometric, batch_shape, self._expanded_probs(batch_shape), _instance)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return torch.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with _grad_mode.no_grad():
            u = self.probs.new(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()  # torch: contiguous_format (of expanded parameters)
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
