"""torch.distributions.ExponentialFamily: distributions given by natural parameters and a log
normalizer, whose entropy and same-family KL divergence follow from the normalizer's gradient
(a Bregman divergence)."""

from __future__ import annotations

from typing import Any

from impl import autograd
from impl._tensor import Tensor
from impl.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """p(x) = h(x) exp(<theta, t(x)> - F(theta)): subclasses give theta (``_natural_params``), F
    (``_log_normalizer``) and E[log h(x)] (``_mean_carrier_measure``)."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def _normalizer_and_gradients(self) -> tuple[list[Tensor], Tensor, tuple[Tensor, ...]]:
        """Fresh leaves of the natural parameters, F at them and dF/dtheta (differentiable)."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        normalizer = self._log_normalizer(*params)
        return params, normalizer, autograd.grad(normalizer.sum(), params, create_graph=True)

    def entropy(self) -> Tensor:
        result: Any = -self._mean_carrier_measure
        params, normalizer, gradients = self._normalizer_and_gradients()
        result += normalizer
        for p, g in zip(params, gradients, strict=True):
            result -= (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
