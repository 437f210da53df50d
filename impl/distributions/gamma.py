"""torch.distributions.Gamma (concentration, rate) and Chi2 (df: Gamma(df / 2, 1 / 2)); rsample is
torch._standard_gamma of the concentration (its reparameterised gradient StandardGammaBackward0)
divided by rate, clamped in place to the dtype's smallest normal outside the graph."""

from __future__ import annotations

from typing import Any

from impl._tensor import Tensor
from impl.distributions import constraints
from impl.distributions.exp_family import ExponentialFamily
from impl.distributions.utils import EMPTY, torch

__all__ = ["Chi2", "Gamma"]


class Gamma(ExponentialFamily):
    """The Gamma distribution of shape ``concentration`` and ``rate`` (1 / scale)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self._init_params(("concentration", "rate"), (concentration, rate), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expand_params(Gamma, ("concentration", "rate"), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)  # not recorded
        return value

    def log_prob(self, value: Any) -> Tensor:
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate) + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return torch.igamma(self.concentration, self.rate * value)  # torch.special.gammainc

    def entropy(self) -> Tensor:
        return (self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration)
                + (1.0 - self.concentration) * torch.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())


class Chi2(Gamma):
    """The chi-squared distribution of ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
