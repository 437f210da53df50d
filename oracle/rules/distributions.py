"""Rules of the family "probability distributions" (conformance/test_distributions.py): seeded
scripts build torch.distributions objects, draw from them, score, differentiate and validate, and
print what they get; each runs on torch and on the backend and must print the same."""

from oracle.rules import Rule

FAMILY = "probability distributions"
_DOCS = "https://pytorch.org/docs/stable/distributions.html"

RULES = [
    Rule(
        "DIST-001",
        FAMILY,
        "After the same seed, sample and rsample (with a sample_shape, after expand too) of Normal, "
        "Laplace, Uniform, Exponential, Cauchy (Tensor.cauchy_), Gamma, Chi2, StudentT, Beta and "
        "Dirichlet (torch._standard_gamma's and torch._sample_dirichlet's draws, their reparameterised "
        "gradients), the TransformedDistributions LogNormal, Gumbel, HalfNormal, HalfCauchy and a Normal "
        "through Exp, Affine, Tanh and Sigmoid transforms, RelaxedBernoulli and RelaxedOneHotCategorical "
        "(their temperature's gradient too), Bernoulli, Geometric and NegativeBinomial "
        "(probs or logits), Poisson, Categorical and OneHotCategorical (probs or logits) "
        "and Independent draw torch's values, with torch's batch_shape, event_shape and printed form; "
        "log_prob, entropy, mean, mode, variance, stddev, cdf (Gamma's by igamma) and icdf give "
        "torch's values, grad_fn and NotImplementedErrors, and the gradients of the parameters "
        "through rsample, log_prob, entropy and cdf are torch's.",
        _DOCS,
    ),
    Rule(
        "DIST-002",
        FAMILY,
        "kl_divergence gives torch's values and gradients for the registered pairs (among them Cauchy, "
        "Poisson, Geometric, HalfNormal, Gumbel with Exponential, Gamma, Normal and Uniform, "
        "Bernoulli with Poisson, and TransformedDistributions of equal transforms) and raises torch's "
        "NotImplementedError for the others; with validation on, invalid parameters and values "
        "outside the support or of the wrong shape raise torch's ValueError, and "
        "validate_args=False or set_default_validate_args(False) turns the checks off.",
        f"{_DOCS}#module-torch.distributions.kl",
    ),
]
