"""torch.distributions.Poisson: rate; sample is torch.poisson of the expanded rate."""

from __future__ import annotations

from typing import Any

from impl import _grad_mode
from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.exp_family import ExponentialFamily
from impl.distributions.utils import EMPTY, broadcast_all, torch

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution of ``rate``."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self._init_params(("rate",), (rate,), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expand_params(Poisson, ("rate",), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        with _grad_mode.no_grad():
            return torch.poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (torch.log(self.rate),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return torch.exp(x)
