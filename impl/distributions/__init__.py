"""torch.distributions: Distribution and the distributions tutorials use (Normal, Bernoulli,
Categorical, OneHotCategorical, Uniform, Exponential, Laplace, Cauchy, Independent, MultivariateNormal),
the Gamma family's (Gamma, Chi2, StudentT, Beta, Dirichlet), the counts (Poisson, Geometric,
NegativeBinomial), TransformedDistribution and its transforms with those built on it (LogNormal,
Gumbel, HalfNormal, HalfCauchy, the relaxed Bernoulli and one-hot categorical), their constraints
and kl_divergence, drawing torch's samples from torch's random stream."""

from impl.distributions import constraints, transforms
from impl.distributions.bernoulli import Bernoulli
from impl.distributions.categorical import Categorical
from impl.distributions.cauchy import Cauchy
from impl.distributions.dirichlet import Beta, Dirichlet
from impl.distributions.distribution import Distribution
from impl.distributions.exp_family import ExponentialFamily
from impl.distributions.exponential import Exponential
from impl.distributions.gamma import Chi2, Gamma
from impl.distributions.geometric import Geometric
from impl.distributions.gumbel import Gumbel
from impl.distributions.half_cauchy import HalfCauchy
from impl.distributions.half_normal import HalfNormal
from impl.distributions.independent import Independent
from impl.distributions.kl import kl_divergence, register_kl
from impl.distributions.laplace import Laplace
from impl.distributions.log_normal import LogNormal
from impl.distributions.multivariate_normal import MultivariateNormal
from impl.distributions.negative_binomial import NegativeBinomial
from impl.distributions.normal import Normal
from impl.distributions.one_hot_categorical import OneHotCategorical
from impl.distributions.poisson import Poisson
from impl.distributions.relaxed_bernoulli import RelaxedBernoulli
from impl.distributions.relaxed_categorical import RelaxedOneHotCategorical
from impl.distributions.studentT import StudentT
from impl.distributions.transformed_distribution import TransformedDistribution
from impl.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
)
from impl.distributions.uniform import Uniform

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Categorical", "Cauchy", "Chi2",
    "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform",
    "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
    "Independent", "Laplace", "LogNormal", "MultivariateNormal",
    "NegativeBinomial", "Normal", "OneHotCategorical", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "SigmoidTransform", "StudentT", "TanhTransform", "Transform",
    "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
]
