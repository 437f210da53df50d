"""Probability distributions (oracle/rules/distributions.py): generated scripts build
torch.distributions objects from drawn parameters (leaves that require grad), draw, score,
differentiate and validate, and print everything; each runs on torch and on the backend
(``oracle.script.check_script``) and must print the same.

Scripts run in subprocesses (about a second each): each test runs few examples, each a script with a
case of every kind. Standard normals of float32 stay below 16 elements (larger ones are float64):
torch's 16-at-a-time float32 Box-Muller is only within an ulp of impl's (conformance/test_data.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle.backends import Backend
from oracle.script import check_script

_SETTINGS = settings(
    max_examples=1, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PRELUDE = "import torch\nfrom torch.distributions import *\n\n"

seeds = st.integers(0, 2**32 - 1)
batch_shapes = st.sampled_from([(), (2,), (2, 3)])
sample_shapes = st.sampled_from(["()", "(3,)", "(2, 2)", "torch.Size([2])"])  # at most 4 draws
# exact quarters: values every backend writes alike
reals = st.integers(-12, 12).map(lambda n: n / 4)
positives = st.integers(1, 12).map(lambda n: n / 4)
probabilities = st.integers(1, 9).map(lambda n: n / 10)
signs = st.sampled_from([1, -1])

# the continuous distributions: their parameters, in order, and how each is drawn
CONTINUOUS = {
    "Normal": (("loc", reals), ("scale", positives)),
    "Laplace": (("loc", reals), ("scale", positives)),
    "Exponential": (("rate", positives),),
    "Uniform": (("low", reals), ("high", positives)),  # high = low + drawn width
    "Gamma": (("concentration", positives), ("rate", positives)),
    "Chi2": (("df", positives),),
    "StudentT": (("df", positives), ("loc", reals), ("scale", positives)),
    "Beta": (("concentration1", positives), ("concentration0", positives)),
    "Cauchy": (("loc", reals), ("scale", positives)),
    "LogNormal": (("loc", reals), ("scale", positives)),
    "Gumbel": (("loc", reals), ("scale", positives)),
    "HalfNormal": (("scale", positives),),
    "HalfCauchy": (("scale", positives),),
}
COUNTS = {"Poisson": (("rate", positives),)}  # drawn as the continuous ones, sampled without rsample
PARAMETERS = CONTINUOUS | COUNTS
# of a success probability (probs or logits), NegativeBinomial with a total_count first
BINARY = ("Bernoulli", "Geometric", "NegativeBinomial", "RelaxedBernoulli")
RELAXED = ("RelaxedBernoulli", "RelaxedOneHotCategorical")  # a temperature (a 0-d tensor) first
DISCRETE = (*BINARY, "Categorical", "OneHotCategorical", *COUNTS)
# what TransformedDistribution pushes a Normal through (one or two, in order; p: its parameters)
TRANSFORMS = ("ExpTransform()", "AffineTransform(0.5, -2.0)", "TanhTransform()", "SigmoidTransform()",
              "AffineTransform({p}0, {p}1)")
KINDS = (*CONTINUOUS, *DISCRETE, *RELAXED, "Independent", "MultivariateNormal", "Dirichlet",
         "TransformedDistribution")


def _check(source: str, tmp_path: Path, backend: Backend) -> None:
    path = tmp_path / "program.py"
    path.write_text(PRELUDE + source, encoding="utf-8")
    check_script(path, backend.name, backend.device, getattr(backend, "python", None))


# the gradients of ``loss`` for the parameters p0, p1 that are tensors, then p0 and p1 unset
GRADIENTS = """params = [p for p in (p0, p1) if isinstance(p, torch.Tensor)]
if params and loss.requires_grad:
    print(torch.autograd.grad(loss, params, allow_unused=True))
p0 = p1 = None"""
# the gradients of the cdf ``c`` for p0, p1 (none for Gamma's concentration: torch's error)
CDF_GRADIENTS = """params = [p for p in (p0, p1) if isinstance(p, torch.Tensor)]
if params and c.requires_grad:
    try:
        print(torch.autograd.grad(c.sum(), params, allow_unused=True))
    except Exception as e:
        print(type(e).__name__, e)"""


def _printed(expression: str) -> str:
    """Lines printing ``expression``, or the type and message of what it raises."""
    return f"try:\n    print({expression})\nexcept Exception as e:\n    print(type(e).__name__, e)"


def _numel(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@st.composite
def leaf(draw: Any, values: st.SearchStrategy, shape: tuple, dtype: str) -> str:
    """A leaf that requires grad (or, for a shape of (), sometimes a Python number)."""
    if not shape and draw(st.booleans()):
        return repr(draw(values))
    data = [draw(values) for _ in range(_numel(shape))]
    return f"torch.tensor({data}, dtype=torch.{dtype}).reshape({shape}).requires_grad_()"


@st.composite
def distributions(draw: Any, kind: str, dtype: str, shape: tuple, name: str = "p", same: int = 0
                  ) -> tuple[list[str], str]:
    """Lines making the parameters (p0, p1 or ``name``0 ...) of a ``kind`` distribution of batch
    ``shape`` and the expression building it; ``same`` (where > 0) fixes the drawn class count
    and reinterpreted dims (KL pairs must agree on them)."""
    if kind == "Independent":
        base = draw(distributions(draw(st.sampled_from(list(CONTINUOUS))), dtype, shape, name))
        ndims = same % (len(shape) + 1) if same else draw(st.integers(0, len(shape)))
        return base[0], f"Independent({base[1]}, {ndims})"
    if kind == "TransformedDistribution":
        lines, base = draw(distributions("Normal", dtype, shape, name))
        transforms = draw(st.lists(st.sampled_from(TRANSFORMS), min_size=1, max_size=2))
        return lines, f"TransformedDistribution({base}, [{', '.join(transforms).format(p=name)}])"
    if kind in PARAMETERS:
        params = PARAMETERS[kind]
        lines = [f"{name}{i} = {draw(leaf(values, shape, dtype))}" for i, (_, values) in enumerate(params)]
        args = [f"{name}{i}" for i in range(len(params))]
        if kind == "Uniform":  # high above low
            args[1] = f"{name}0 + {name}1"
        if draw(st.booleans()):  # by keyword
            args = [f"{key}={arg}" for (key, _), arg in zip(params, args, strict=True)]
        return lines, f"{kind}({', '.join(args)})"
    if kind == "MultivariateNormal":
        return draw(multivariate_normals(dtype, shape, name, same))
    if kind == "Dirichlet":  # a concentration per class (``same`` of them, else 2 to 4)
        shape = (*shape, same or draw(st.integers(2, 4)))
        return [f"{name}0 = {draw(leaf(positives, shape, dtype))}"], f"Dirichlet({name}0)"
    spelling = draw(st.sampled_from(["probs", "logits"]))
    values = reals if spelling == "logits" else probabilities if kind in BINARY else positives
    if kind not in BINARY:  # a class dim: unnormalised probs (Categorical divides by their sum)
        shape = (*shape, same or draw(st.integers(2, 4)))
    lines = [f"{name}0 = {draw(leaf(values, shape, dtype))}"]
    if kind == "NegativeBinomial":  # total_count first
        lines.append(f"{name}1 = {draw(leaf(positives, shape, dtype))}")
        return lines, f"{kind}({name}1, {spelling}={name}0)"
    if kind in RELAXED:
        lines.append(f"{name}1 = torch.tensor({draw(positives)}, dtype=torch.{dtype}).requires_grad_()")
        return lines, f"{kind}({name}1, {spelling}={name}0)"
    return lines, f"{kind}({spelling}={name}0)"


@st.composite
def multivariate_normals(draw: Any, dtype: str, shape: tuple, name: str, same: int) -> tuple[list[str], str]:
    """A MultivariateNormal of ``n`` dims (``same``, else drawn): a loc leaf, and its matrix from a
    lower-triangular leaf L with a positive diagonal (batched like loc or not): L as scale_tril, or
    L L^T as covariance or precision matrix."""
    n = same or draw(st.integers(2, 3))
    matrix_shape = draw(st.sampled_from([(), shape]))
    entries = [(i, j) for _ in range(_numel(matrix_shape)) for i in range(n) for j in range(n)]
    # nonzero below the diagonal: a diagonal L would hide which triangle a solve reads
    tril = [draw(positives) / (1 if i == j else 2 * draw(signs)) if j <= i else 0.0 for i, j in entries]
    made = f"torch.tensor({tril}, dtype=torch.{dtype}).reshape({(*matrix_shape, n, n)})"
    lines = [f"{name}0 = {draw(leaf(reals, (*shape, n), dtype))}", f"{name}1 = {made}.requires_grad_()"]
    matrix = draw(st.sampled_from(["scale_tril={}", "covariance_matrix={} @ {}.mT", "{} @ {}.mT",
                                   "precision_matrix={} @ {}.mT"]))
    return lines, f"MultivariateNormal({name}0, {matrix.format(f'{name}1', f'{name}1')})"


@st.composite
def case(draw: Any, kind: str) -> str:
    """One distribution of ``kind``: made, printed with its shapes, sampled (rsample where it has
    one), expanded and sampled, scored, its moments, entropy, cdf and icdf printed, then the
    gradients of the parameters of the cdf, and of the score, the entropy and the rsample."""
    sample_shape, shape = draw(sample_shapes), draw(batch_shapes)
    # float32 standard normals below 16 elements (see the module's docstring)
    events = 3 if kind == "MultivariateNormal" else 1
    dtype = "float64" if 4 * _numel(shape) * events >= 16 else draw(st.sampled_from(["float32", "float64"]))
    if kind == "TransformedDistribution":  # atanh magnifies tanh's last-ulp differences near 1
        dtype = "float64"
    lines, make = draw(distributions(kind, dtype, shape))
    draw_call = "d.sample" if kind in DISCRETE else "d.rsample"
    lines += [
        f"d = {make}",
        "print(d, d.batch_shape, d.event_shape, d.support)",
        f"s = {draw_call}({sample_shape})",
        "e = d.expand((2,) + d.batch_shape)",
        "print(s, e, e.batch_shape, e.sample())",
        "lp, h, c = d.log_prob(s.detach()), torch.zeros(()), torch.zeros(())",
        "print(lp)",
        _printed("(h := d.entropy())"),
        _printed("d.mean, d.mode, d.variance, d.stddev"),
        _printed("(c := d.cdf(s.detach()))"),
        _printed("d.icdf(torch.tensor(0.3))"),
        CDF_GRADIENTS,
        "loss = lp.sum() + h.sum() + (s.sum() if s.requires_grad else 0)",
        GRADIENTS,
    ]
    return "\n".join(lines)


@st.composite
def sampling_programs(draw: Any) -> str:
    """Seeded cases of every kind, in a drawn order, then a draw of the global stream."""
    lines = [f"torch.manual_seed({draw(seeds)})", "p0 = p1 = None"]
    lines += [draw(case(kind)) for kind in draw(st.permutations(KINDS))]
    return "\n".join([*lines, "print(torch.rand(2))"]) + "\n"


@pytest.mark.rule("DIST-001")
@_SETTINGS
@given(source=sampling_programs())
def test_sample_score_and_differentiate(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)


# -- DIST-002 ------------------------------------------------------------------------------------
# pairs torch registers a KL for (the infinite ones too), and pairs it has none for
KL_PAIRS = [
    ("Normal", "Normal"), ("Laplace", "Laplace"), ("Exponential", "Exponential"), ("Uniform", "Uniform"),
    ("Bernoulli", "Bernoulli"), ("Categorical", "Categorical"), ("OneHotCategorical", "OneHotCategorical"),
    ("Normal", "Laplace"), ("Laplace", "Normal"), ("Uniform", "Normal"), ("Exponential", "Normal"),
    ("Uniform", "Exponential"), ("Normal", "Uniform"), ("Exponential", "Uniform"), ("Laplace", "Exponential"),
    ("Independent", "Independent"), ("MultivariateNormal", "MultivariateNormal"), ("Normal", "Bernoulli"),
    ("Exponential", "Laplace"), ("Gamma", "Gamma"), ("Exponential", "Gamma"), ("Gamma", "Exponential"),
    ("Gamma", "Normal"), ("Uniform", "Gamma"), ("Gamma", "Uniform"), ("Normal", "Gamma"), ("Chi2", "Chi2"),
    ("Beta", "Beta"), ("Dirichlet", "Dirichlet"), ("Cauchy", "Cauchy"), ("Poisson", "Poisson"),
    ("Geometric", "Geometric"), ("HalfNormal", "HalfNormal"), ("HalfCauchy", "HalfCauchy"),
    ("LogNormal", "LogNormal"), ("TransformedDistribution", "TransformedDistribution"), ("Gumbel", "Gumbel"),
    ("Exponential", "Gumbel"), ("Gamma", "Gumbel"), ("Gumbel", "Normal"), ("Normal", "Gumbel"),
    ("Uniform", "Gumbel"), ("Gumbel", "Uniform"), ("Bernoulli", "Poisson"), ("Poisson", "Bernoulli"),
    ("NegativeBinomial", "NegativeBinomial"), ("Cauchy", "Normal"),
]
# what is built or called ({p}: a drawn valid parameter, {v}: where validate_args may go): each raises
# torch's error with validation on
INVALID = [
    "Normal(torch.zeros(2), -{p}{v})", "Exponential({p} - 3{v})", "Bernoulli({p} + 1{v})",
    "Uniform({p}, {p} - 1{v})", "Categorical(torch.tensor([-1.0, {p}]){v})", "Bernoulli({v})",
    "Normal(0.0, {p}{v}).log_prob(torch.tensor([float('nan')]))", "Normal(0.0, {p}{v}).log_prob(2.0)",
    "Exponential({p}{v}).log_prob(torch.tensor([-1.0]))", "Uniform(0.0, {p}{v}).log_prob(torch.tensor(5.0))",
    "Bernoulli({p} / 4{v}).log_prob(torch.tensor(0.5))", "Categorical(torch.tensor({p}){v})",
    "Categorical(torch.ones(3){v}).log_prob(torch.tensor(3))", "Independent(Normal(0.0, {p}), 1{v})",
    "Normal(torch.zeros(2), {p}{v}).log_prob(torch.zeros(3))",
    "OneHotCategorical(torch.ones(3){v}).log_prob(torch.ones(3))",
    "OneHotCategorical(torch.ones(3){v}).log_prob(torch.ones(2))",
    "Gamma({p}, -{p}{v})", "Chi2(-{p}{v})", "StudentT({p}, 0.0, -{p}{v})",
    "Gamma({p}, {p}{v}).log_prob(torch.tensor([-1.0]))", "Beta({p}, -{p}{v})",
    "Dirichlet(torch.tensor([{p}, -1.0]){v})",
    "Dirichlet(torch.ones(2){v}).log_prob(torch.tensor([0.5, 0.6]))",
    "MultivariateNormal(torch.zeros(2), torch.tensor([[1.0, 2.0], [2.0, {p}]]){v})",
    "MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[{p}, 1.0], [0.0, 1.0]]){v})",
    "Cauchy(0.0, -{p}{v})", "Poisson(-{p}{v})", "Geometric({p} + 1{v})",
    "Geometric(torch.tensor([{p}, 0.0]){v})",
    "NegativeBinomial({p}, 1.0{v})", "NegativeBinomial(-{p}, logits=0.0{v})", "HalfNormal(-{p}{v})",
    "LogNormal(0.0, -{p}{v})", "Gumbel(0.0, -{p}{v})", "HalfCauchy(-{p}{v})",
    "Poisson({p}{v}).log_prob(torch.tensor(0.5))", "Geometric(0.5{v}).log_prob(torch.tensor(-1.0))",
    "HalfNormal({p}{v}).log_prob(torch.tensor(-1.0))", "LogNormal(0.0, {p}{v}).log_prob(torch.tensor(-1.0))",
    "Gamma({p}, {p}{v}).cdf(torch.tensor([-1.0]))",
    "TransformedDistribution(Normal(0.0, {p}), [ExpTransform()]{v}).log_prob(torch.tensor(-1.0))",
    "TransformedDistribution(Normal(0.0, {p}), {p}{v})",
]


@st.composite
def kl_and_validation_programs(draw: Any) -> str:
    """KL divergences of drawn pairs (printed with their gradients), then invalid parameters and
    values with validation on, by the default, by validate_args, and off."""
    lines = ["p0 = p1 = None"]
    for kind_p, kind_q in draw(st.permutations(KL_PAIRS)):
        shape, same = draw(batch_shapes), draw(st.integers(2, 3))
        made = []
        for name, kind in (("p", kind_p), ("q", kind_q)):
            params, make = draw(distributions(kind, "float64", shape, name, same))
            lines += params
            made.append(make)
        kl = f"(k := kl_divergence({made[0]}, {made[1]}))"
        lines += ["k = torch.zeros(())", _printed(kl), "loss = k.sum()", GRADIENTS]
    for expression in draw(st.permutations(INVALID)):
        how = draw(st.sampled_from(["", ", validate_args=True", ", validate_args=False"]))
        how = how.lstrip(", ") if "({v}" in expression else how
        lines.append(_printed(expression.format(p=draw(positives), v=how)))
    switch = draw(st.booleans())
    lines += [f"Distribution.set_default_validate_args({not switch})",
              "print(Normal(0.0, -1.0).log_prob(torch.tensor([0.5])))" if switch else
              "print(Distribution._validate_args)", "Distribution.set_default_validate_args(True)"]
    return "\n".join(lines) + "\n"


@pytest.mark.rule("DIST-002")
@_SETTINGS
@given(source=kl_and_validation_programs())
def test_kl_divergence_and_validation(source: str, backend: Backend, tmp_path: Path) -> None:
    _check(source, tmp_path, backend)
