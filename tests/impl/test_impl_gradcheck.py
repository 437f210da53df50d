"""torch.autograd.gradcheck, gradgradcheck and graph.register_multi_grad_hook on impl against torch
2.13. Each program prints what it sees (results, exceptions with their whole message, warnings,
the global RNG after); impl must print what torch prints. A fast-mode mismatch prints its first
line only: its scalar ``v^T J u`` is a dot product, whose last digits numpy's BLAS and torch's
may round differently."""

from __future__ import annotations

import pytest
import torch

import impl
from tests.helpers.parity import run

PRELUDE = """
import sys, warnings
Function = torch.autograd.Function
G = sys.modules[torch.__name__ + ".autograd.gradcheck"]
def attempt(name, f, first_line=False):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            print(name, f())
        except Exception as e:
            print(name, type(e).__name__, str(e).splitlines()[0] if first_line else e)
        for x in w:
            print(name, x.category.__name__, x.message)
torch.manual_seed(0)
x = torch.rand(3, dtype=torch.float64, requires_grad=True)
y = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
class Wrong(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a
    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * a * 2.1
class NotMul(Function):
    @staticmethod
    def forward(ctx, a):
        return a.clone()
    @staticmethod
    def backward(ctx, g):
        return g + 0.01
class NonDet(Function):
    @staticmethod
    def forward(ctx, a):
        return a.clone()
    @staticmethod
    def backward(ctx, g):
        return g * (1 + torch.rand_like(g) * 1e-6)
def undefined(a):
    b = a.clone()
    def hook(g):
        if g is None:
            raise RuntimeError("g is undefined")
    b.register_hook(hook)
    return b
one = torch.ones(1, dtype=torch.float64, requires_grad=True)
"""

_CHECKS = """
attempt("mul", lambda: check(lambda a: a * 5, (x,)))
attempt("two", lambda: check(lambda a, b: (a * b, a.sin() + b.exp()), (x, y)))
attempt("wrong", lambda: check(Wrong.apply, (x,)), FIRST)
attempt("not multiplied", lambda: check(NotMul.apply, (x,)), FIRST)
attempt("no raise", lambda: check(NotMul.apply, (x,), raise_exception=False))
attempt("nondet", lambda: check(NonDet.apply, (x,)))
attempt("nondet tol", lambda: check(NonDet.apply, (x,), nondet_tol=1e-5))
attempt("undefined", lambda: check(undefined, (x,)))
attempt("undefined off", lambda: check(undefined, (x,), check_undefined_grad=False))
attempt("no outputs", lambda: check(lambda a: (), (x,)))
attempt("no diff outputs", lambda: check(lambda a: a.detach() * 2, (x,)))
attempt("float32", lambda: check(lambda a: a * 2, (torch.ones(2, requires_grad=True),), atol=1e-1))
attempt("stride 0", lambda: check(lambda a: a, (one.expand(2, 2),), raise_exception=False))
attempt("none requires grad", lambda: check(lambda a: a, (torch.ones(2),), raise_exception=False))
attempt("shape", lambda: check(lambda a: torch.cat([a, a]) if bool((a >= 1).all()) else a, (one,)))
attempt("dtype", lambda: check(lambda a: a.float() if bool((a >= 1).all()) else a, (one,)))
attempt("batched", lambda: check(lambda a, b: a.unsqueeze(0) * b, (x, y), check_batched_grad=True))
attempt("number input", lambda: check(lambda a, n: a * n, (x, 3)))
attempt("unused input", lambda: check(lambda a, b: a * 2, (x, y)))
attempt("no AD", lambda: check(lambda a: a, (x,), check_backward_ad=False))
attempt("gradgrad", lambda: torch.autograd.gradgradcheck(lambda a: a.sin() * a, (x,), fast_mode=FAST))
attempt("gradgrad wrong", lambda: torch.autograd.gradgradcheck(Wrong.apply, (x,), fast_mode=FAST))
attempt("gradgrad given", lambda: torch.autograd.gradgradcheck(
    lambda a: a ** 3, (x,), (torch.ones(3, dtype=torch.float64, requires_grad=True),), fast_mode=FAST))
attempt("gradgrad batched", lambda: torch.autograd.gradgradcheck(
    lambda a, b: (a * b).exp(), (x, y), fast_mode=FAST, check_batched_grad=True))
print(torch.rand(3))
"""

PROGRAMS = {
    "gradcheck slow": "FAST, FIRST = False, False\ncheck = torch.autograd.gradcheck\n" + _CHECKS,
    "gradcheck fast": "FAST, FIRST = True, True\n"
    "check = lambda *a, **k: torch.autograd.gradcheck(*a, fast_mode=True, **k)\n" + _CHECKS,
    "deprecated jacobians": """
a = torch.rand(2, 2, requires_grad=True, dtype=torch.float64)
b = torch.rand(2, 2, requires_grad=True, dtype=torch.float64)
fn = lambda inputs: (2 * inputs[0] + inputs[1], inputs[0] + 2 * inputs[1])
attempt("numerical target", lambda: G.get_numerical_jacobian(fn, (a, b), target=a, eps=1e-6))
attempt("numerical", lambda: G.get_numerical_jacobian(fn, (a, b), eps=1e-6))
attempt("numerical grad_out", lambda: G.get_numerical_jacobian(fn, (a, b), grad_out=2.0))
attempt("analytical", lambda: G.get_analytical_jacobian((a, b), 2 * a + b))
attempt("analytical nondet", lambda: G.get_analytical_jacobian((x,), NonDet.apply(x)))
attempt("analytical grad_out", lambda: G.get_analytical_jacobian((a,), a * 2, grad_out=2.0))
print(issubclass(G.GradcheckError, RuntimeError), torch.autograd.gradcheck.__name__)
""",
    "argument checks": """
attempt("neither", lambda: torch.autograd.gradcheck(lambda a: a, (x,), check_backward_ad=False))
attempt("batched without backward", lambda: torch.autograd.gradcheck(
    lambda a: a, (x,), check_backward_ad=False, check_forward_ad=True, check_batched_grad=True))
attempt("batched forward", lambda: torch.autograd.gradcheck(
    lambda a: a, (x,), check_batched_forward_grad=True))
attempt("gradgrad neither", lambda: torch.autograd.gradgradcheck(lambda a: a, (x,), check_rev_over_rev=False))
attempt("gradgrad undefined", lambda: torch.autograd.gradgradcheck(
    lambda a: a, (x,), check_rev_over_rev=False, check_fwd_over_rev=True))
""",
    "multi-grad hook all": """
a = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
b = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
c = a * b
d = a * b
def fn(grads):
    print([None if g is None else round(g.sum().item(), 5) for g in grads])
h = torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
print(type(h).__name__, isinstance(h, torch.utils.hooks.RemovableHandle))
c.sum().backward(retain_graph=True)
c.sum().backward(inputs=(a,), retain_graph=True)
(c + d).sum().backward(inputs=(c,), retain_graph=True)
attempt("grad of a leaf", lambda: torch.autograd.grad(c.sum(), (a,), retain_graph=True))
attempt("grad of c", lambda: torch.autograd.grad((c * 2).sum(), (c,), retain_graph=True))
(c * d).sum().backward(retain_graph=True)
h.remove()
c.sum().backward(retain_graph=True)
print("removed")
attempt("mode", lambda: torch.autograd.graph.register_multi_grad_hook((a,), fn, mode="some"))
attempt("no grad", lambda: torch.autograd.graph.register_multi_grad_hook((torch.ones(2),), fn))
""",
    "multi-grad hook any": """
a = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
b = torch.rand(2, 3, dtype=torch.float64, requires_grad=True)
c = a * b
h = torch.autograd.graph.register_multi_grad_hook(
    (a, b, c, torch.ones(2)), lambda g: print("first", g.shape, round(g.sum().item(), 5)), mode="any")
(c * 2).sum().backward(retain_graph=True)
b.sum().backward()
torch.autograd.grad((a * 3).sum(), (a,))
def reentrant(g):
    print("outer sees", round(g.sum().item(), 5))
    with torch.enable_grad():
        (a * 4).sum().backward()
h2 = torch.autograd.graph.register_multi_grad_hook((c,), lambda g: reentrant(g[0]))
(c * 5).sum().backward(retain_graph=True)
h.remove(); h2.remove()
print(round(a.grad.sum().item(), 4), round(b.grad.sum().item(), 4))
""",
    # torch's engine starts a backward from one root edge at the root's node, which is then no node
    # of the graph it records: a hook in mode "all" on the root alone never fires, on the root and
    # another tensor it fires twice
    "multi-grad hook on the root": """
a = torch.rand(2, dtype=torch.float64, requires_grad=True)
c = a * 2
s = c.sum()
for ts in ((a,), (c,), (s,), (s, a)):
    torch.autograd.graph.register_multi_grad_hook(ts, lambda g, n=len(ts): print(n, [x is None for x in g]))
s.backward(retain_graph=True)
c.backward(torch.ones(2), retain_graph=True)
a.backward(torch.ones(2))
torch.autograd.grad(s, (c,), retain_graph=True)
torch.autograd.backward([s, c.sum()])
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradcheck_and_multi_grad_hooks_as_torch(name: str) -> None:
    program = PRELUDE + PROGRAMS[name]
    assert run(program, impl) == run(program, torch)
