"""Planted faults that break torch.distributions (rules DIST-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import derivative_replaced, fault, patched


@fault({"DIST-001": "stdout line"})
def exponential_rsample_times_rate() -> Iterator[None]:
    """Exponential's rsample multiplies the exponential_() draw by rate instead of dividing."""
    from impl.distributions import Exponential

    def make(_original: Callable) -> Callable:
        def rsample(self: Any, sample_shape: Any = ()) -> Any:
            return self.rate.new(self._extended_shape(sample_shape)).exponential_() * self.rate

        return rsample

    with patched(Exponential, "rsample", make):
        yield


@fault({"DIST-001": "stdout line"})
def solve_triangular_grad_of_b_untransposed() -> Iterator[None]:
    """solve_triangular's gradient for B solves with A^T as if it kept A's triangle (lower stays
    lower): MultivariateNormal's log_prob gradients go wrong."""
    from impl._ops import factorizations

    def make(_original: Callable) -> Callable:
        def grad_b(g: Any, c: Any) -> Any:
            return factorizations.solve_triangular(c.self.mT, g, upper=c.upper, left=c.left,
                                                   unitriangular=c.unitriangular)

        return grad_b

    with derivative_replaced(factorizations.LINALG_SOLVE_TRIANGULAR, "B", make):
        yield


@fault({"DIST-002": "stdout line"})
def kl_normal_normal_without_half() -> Iterator[None]:
    """The KL divergence of two Normals is twice torch's (the factor 0.5 is left out)."""
    from impl.distributions import Normal, kl

    def make(_original: Callable) -> Callable:
        def kl_normal_normal(p: Any, q: Any) -> Any:
            var_ratio = (p.scale / q.scale).pow(2)
            return var_ratio + ((p.loc - q.loc) / q.scale).pow(2) - 1 - var_ratio.log()

        return kl_normal_normal

    with patched(kl._KL_REGISTRY, (Normal, Normal), make), patched(kl, "_KL_MEMOIZE", lambda _m: {}):
        yield


@fault({"DIST-002": "stdout line"})
def log_prob_value_outside_support_accepted() -> Iterator[None]:
    """Validation checks a scored value's shape but not that it lies in the support."""
    from impl.distributions import Distribution, constraints

    def make(original: Callable) -> Callable:
        def validate_sample(self: Any, value: Any) -> Any:
            with patched(type(self), "support", lambda _support: constraints.real):
                return original(self, value)

        return validate_sample

    with patched(Distribution, "_validate_sample", make):
        yield


@fault({"DIST-001": "stdout line"})
def standard_gamma_without_boost() -> Iterator[None]:
    """_standard_gamma draws a concentration below 1 by Marsaglia-Tsang directly (which needs one of
    at least 1) instead of boosting it to alpha + 1 and scaling by a uniform's power."""
    from impl._ops import distributions

    def make(original: Callable) -> Callable:
        def gamma_one(alpha: float, single: bool, g: Any) -> float:
            return original(max(alpha, 1.0), single, g) * min(alpha, 1.0)

        return gamma_one

    with patched(distributions, "_gamma_one", make):
        yield


@fault({"DIST-002": "stdout line"})
def kl_gamma_gamma_without_digamma_term() -> Iterator[None]:
    """KL(Gamma || Gamma) leaves out ``(p.concentration - q.concentration) * digamma(p.concentration)``."""
    from impl.distributions import Gamma, kl

    def make(_original: Callable) -> Callable:
        def kl_gamma_gamma(p: Any, q: Any) -> Any:
            t1 = q.concentration * (p.rate / q.rate).log()
            t2 = q.concentration.lgamma() - p.concentration.lgamma()
            return t1 + t2 + (q.rate - p.rate) * (p.concentration / p.rate)

        return kl_gamma_gamma

    with patched(kl._KL_REGISTRY, (Gamma, Gamma), make), patched(kl, "_KL_MEMOIZE", lambda _m: {}):
        yield


@fault({"DIST-001": "stdout line"})
def dirichlet_grad_unprojected() -> Iterator[None]:
    """Dirichlet's rsample backward returns ``_dirichlet_grad * grad_output``, leaving out the
    projection ``- (x * grad_output).sum(-1)`` onto the simplex."""
    from impl.distributions import dirichlet

    def make(_original: Callable) -> Callable:
        def backward(x: Any, concentration: Any, grad_output: Any) -> Any:
            total = concentration.sum(-1, True).expand_as(concentration)
            return dirichlet.torch._dirichlet_grad(x, concentration, total) * grad_output

        return backward

    with patched(dirichlet, "_Dirichlet_backward", make):
        yield


@fault({"DIST-001": "stdout line"})
def transformed_log_prob_adds_jacobian() -> Iterator[None]:
    """TransformedDistribution's log_prob adds each transform's log-abs-det-Jacobian instead of
    subtracting it (LogNormal's and the transformed Normals' scores)."""
    from impl.distributions import transforms

    def make(original: Callable) -> Callable:
        def log_abs_det_jacobian(self: Any, x: Any, y: Any) -> Any:
            return -original(self, x, y)

        return log_abs_det_jacobian

    with patched(transforms.ExpTransform, "log_abs_det_jacobian", make):
        yield


@fault({"DIST-002": "stdout line"})
def kl_gumbel_gumbel_without_euler_term() -> Iterator[None]:
    """KL(Gumbel || Gumbel) leaves out ``p.scale / q.scale * euler_constant``."""
    from impl.distributions import Gumbel, kl

    def make(original: Callable) -> Callable:
        def kl_gumbel_gumbel(p: Any, q: Any) -> Any:
            return original(p, q) - p.scale / q.scale * kl.euler_constant

        return kl_gumbel_gumbel

    with patched(kl._KL_REGISTRY, (Gumbel, Gumbel), make), patched(kl, "_KL_MEMOIZE", lambda _m: {}):
        yield


@fault({"OPS-002": ": value"})
def igamma_prefactor_over_gamma_of_a_plus_one() -> Iterator[None]:
    """The incomplete gamma's prefactor x**a exp(-x) / Gamma(a) divides by Gamma(a + 1): igamma and
    igammac (and Gamma's cdf, which DIST-001 prints) go wrong."""
    import math

    from impl._ops import igamma

    def make(_original: Callable) -> Callable:
        return lambda a, x: math.exp(a * math.log(x) - x - math.lgamma(a + 1))

    with patched(igamma, "_prefactor", make):
        yield
