"""The gamma family, erfinv, the Bessel functions i0/i1 and torch.special (impl/_ops/gamma.py,
impl/special.py) against torch, in one loop each: values on every floating dtype at the edges
(poles, signed zeros, infinities, NaN, the switch points of the kernels' series), gradients and
their create_graph nodes, integer promotion, in-place forms and torch's errors."""

from __future__ import annotations

import math

import numpy as np
import torch

import impl
from tests.helpers import parity

NAN, INF = float("nan"), float("inf")
POINTS = [0.5, 1.5, -2.5, 0.0, -0.0, -1.0, INF, -INF, NAN, 3.0, 12.0, 1e-8, -1e-8, 0.25, -0.75, 7.9, 8.0,
          8.1, 30.0, -30.5, 100.0, 1e10, -3.3, 1.0, 2.0, 10.0, 9.99, 1.4616, -100.25, 88.0, 0.999, -0.7]
# oracle.tolerance's
TOLERANCES = {
    "float64": (1e-7, 1e-7), "float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)
}


def _ops(t):
    """name -> fn(module, x) of every elementwise function compared."""
    ops = {name: (lambda m, x, name=name: getattr(m, name)(x)) for name in ("lgamma", "digamma", "i0")}
    ops["erfinv"] = lambda m, x: m.erfinv(x.clamp(-1, 1).sin())  # a sine: inside (-1, 1), and +-1
    ops.update({f"polygamma{n}": (lambda m, x, n=n: m.polygamma(n, x)) for n in range(5)})
    ops.update({f"mvlgamma{p}": (lambda m, x, p=p: m.mvlgamma(x, p)) for p in (1, 2, 3)})
    special = ("i1", "ndtr", "psi")
    ops.update({name: (lambda m, x, name=name: getattr(m.special, name)(x)) for name in special})
    return ops


def _mismatches(name, dtype, got, expected):
    rtol, atol = TOLERANCES[str(expected.dtype).removeprefix("torch.")]
    a = np.asarray(expected.detach().double().tolist())
    b = np.asarray(got.detach().double().tolist())
    ok = (a == b) | np.isclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
    if str(got.dtype).replace("impl", "torch") != str(expected.dtype) or not ok.all():
        return [(name, dtype, str(got.dtype), b[~ok][:4].tolist(), a[~ok][:4].tolist())]
    return []


def test_values_and_gradients_match_torch() -> None:
    """Every op on every floating dtype at POINTS, on integer and bool inputs (float32 results), and
    the gradients (create_graph: the graph's node names) on the finite points."""
    bad = []
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        for name, op in _ops(torch).items():
            x = torch.tensor(POINTS, dtype=getattr(torch, dtype))
            y = impl.tensor(POINTS, dtype=getattr(impl, dtype))
            bad += _mismatches(name, dtype, op(impl, y), op(torch, x))
    for dtype in ("int64", "uint8", "bool"):
        for name, op in _ops(torch).items():
            if dtype == "bool" and name.startswith("mvlgamma"):  # refused (ERRORS)
                continue
            x, y = (m.tensor([0, 1, 2, 3]).to(getattr(m, dtype)) for m in (torch, impl))
            bad += _mismatches(name, dtype, op(impl, y), op(torch, x))
    finite = [v for v in POINTS if math.isfinite(v) and abs(v) < 50]
    for dtype in ("float64", "float32"):
        for name, op in _ops(torch).items():
            results = []
            for m in (torch, impl):
                x = m.tensor(finite, dtype=getattr(m, dtype), requires_grad=True)
                (g,) = m.autograd.grad(op(m, x).sum(), x, create_graph=True)
                (gg,) = m.autograd.grad(g.sum(), x, allow_unused=True)
                results.append((g, g.grad_fn.name(), gg))
            (g0, node0, gg0), (g1, node1, gg1) = results
            bad += _mismatches(name + ".grad", dtype, g1, g0)
            bad += [] if node0 == node1 else [(name, "node", node1, node0)]
            if dtype == "float64" and not name.startswith("polygamma4"):  # polygamma(5) is exercised here
                bad += _mismatches(name + ".grad2", dtype, gg1, gg0)
    assert not bad, bad


PROGRAMS = [
    "x = torch.tensor([0.1, -0.5, 2.9], requires_grad=True) * 1\n"
    "print(x.lgamma_(), x.digamma_(), x.polygamma_(2), x.grad_fn.name())",
    "x = torch.tensor([2.1, 3.5, 2.9], requires_grad=True) * 1\n"
    "print(x.mvlgamma_(2), x.erfinv_().grad_fn.name(), x.i0_().grad_fn.name())",
    "x = torch.tensor([2, 3])\nprint(x.polygamma(1), x.mvlgamma(2), torch.special.multigammaln(x, 2))",
    "x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)\ny = torch.special.ndtr(x)\n"
    "print(y.grad_fn.name(), torch.autograd.grad(y.sum(), x))",
    "x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)\n"
    "print(torch.special.expit(x), torch.special.round(x), torch.special.softmax(x, 0), "
    "torch.special.log_softmax(x, 0, dtype=torch.float64), torch.special.logsumexp(x, 0), "
    "torch.special.gammaln(x), torch.special.xlogy(x, 2.0), torch.special.sinc(x), torch.special.exp2(x), "
    "torch.special.logit(x, eps=0.1), torch.special.erfc(x), torch.special.expm1(x), torch.special.log1p(x))",
    "o = torch.zeros(2, dtype=torch.float64)\ntorch.polygamma(1, torch.ones(2), out=o)\n"
    "print(o, torch.lgamma(torch.ones(2), out=torch.zeros(2)), torch.erfinv(torch.tensor([1.0, -1.0, 1.5])))",
    "print(torch.lgamma(torch.tensor(2.5)), torch.i0(torch.tensor(3)),\n"
    "      torch.polygamma(2, torch.tensor(0.5)))",
]
ERRORS = [
    "torch.tensor([2, 3]).lgamma_()", "torch.tensor([2, 3]).i0_()", "torch.tensor([2, 3]).mvlgamma_(1)",
    "torch.tensor([2, 3]).polygamma_(1)", "torch.polygamma(-1, torch.ones(2))",
    "torch.ones(2).polygamma_(-2)", "torch.polygamma(1.5, torch.ones(2))", "torch.ones(2).polygamma(True)",
    "torch.mvlgamma(torch.ones(2), 0)",
    "torch.mvlgamma(torch.ones(2) > 0, 1)", "torch.mvlgamma(torch.ones(2), p=2.0)", "torch.lgamma(1.0)",
    "torch.special.gammaln(1.0)", "torch.special.polygamma(1, 1.0)", "torch.special.i1(2)",
    "torch.special.ndtr([1.0])", "torch.digamma(torch.ones(2), out=torch.zeros(2, dtype=torch.int64))",
]


def test_forms_and_errors_match_torch() -> None:
    """In-place forms and their nodes, integer inputs, torch.special's names, out=, and the errors
    (type and message) of bad calls."""
    caught = "try:\n    {}\nexcept Exception as e:\n    print(type(e).__name__, e)"
    programs = PROGRAMS + [caught.format(e) for e in ERRORS]
    bad = [(p, parity.run(p, impl), parity.run(p, torch)) for p in programs
           if parity.run(p, impl) != parity.run(p, torch)]
    assert not bad, bad


SAMPLING = """
torch.manual_seed(11)
a = torch.tensor([0.05, 0.3, 1.0, 2.5, 7.9, 9.0, 40.0, 400.0], requires_grad=True)
s = torch._standard_gamma(a)
print(s, torch.autograd.grad(s.sum(), a))
b = torch.tensor([[0.2, 0.5, 3.0], [7.5, 9.0, 0.4], [30.0, 40.0, 2.0], [0.1, 0.1, 0.1]], dtype=torch.float64,
                 requires_grad=True)
x = torch.distributions.Dirichlet(b).rsample((2,))
print(x, x.grad_fn.name(), torch.autograd.grad((x * torch.arange(3.0, dtype=torch.float64)).sum(), b))
print(torch._dirichlet_grad(*(torch.tensor(v, dtype=torch.float64) for v in (
    [0.001, 0.3, 0.5, 0.7, 0.999, 0.45, 0.55, 0.2, 0.9], [0.5, 7.0, 9.0, 2.0, 3.0, 30.0, 8.0, 1.5, 40.0],
    [1.5, 15.0, 18.0, 3.0, 4.5, 60.0, 15.0, 9.0, 45.0]))))
print(torch.rand(3))
for bad in ("torch._standard_gamma(torch.ones(2, dtype=torch.float16))",
            "torch._sample_dirichlet(torch.ones(2).int())",
            "torch.autograd.grad(torch._standard_gamma_grad(a, s.detach()).sum(), a)"):
    try:
        eval(bad)
    except Exception as e:
        print(type(e).__name__, e)
"""


def test_gamma_and_dirichlet_draws_match_torch() -> None:
    """Seeded _standard_gamma and Dirichlet draws (concentrations in every branch of the samplers and
    of the gradients: below 1, above 8, lanes near 0 and 1, large pairs) with their reparameterised
    gradients, the stream after them, and the kernels' refusals."""
    assert parity.run(SAMPLING, impl) == parity.run(SAMPLING, torch)
