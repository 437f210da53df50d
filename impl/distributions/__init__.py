"""torch.distributions: Distribution and the distributions tutorials use (Normal, Bernoulli,
Categorical, OneHotCategorical, Uniform, Exponential, Laplace, Independent, MultivariateNormal) and
the Gamma family's (Gamma, Chi2, StudentT, Beta, Dirichlet), their constraints and kl_divergence,
drawing torch's samples from torch's random stream."""

from impl.distributions import constraints
from impl.distributions.bernoulli import Bernoulli
from impl.distributions.categorical import Categorical
from impl.distributions.dirichlet import Beta, Dirichlet
from impl.distributions.distribution import Distribution
from impl.distributions.exp_family import ExponentialFamily
from impl.distributions.exponential import Exponential
from impl.distributions.gamma import Chi2, Gamma
from impl.distributions.independent import Independent
from impl.distributions.kl import kl_divergence, register_kl
from impl.distributions.laplace import Laplace
from impl.distributions.multivariate_normal import MultivariateNormal
from impl.distributions.normal import Normal
from impl.distributions.one_hot_categorical import OneHotCategorical
from impl.distributions.studentT import StudentT
from impl.distributions.uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Chi2", "Dirichlet", "Distribution", "Exponential",
    "ExponentialFamily", "Gamma", "Independent", "Laplace", "MultivariateNormal", "Normal",
    "OneHotCategorical", "StudentT", "Uniform", "constraints", "kl_divergence", "register_kl",
]
