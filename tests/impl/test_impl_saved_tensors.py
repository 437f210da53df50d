"""Saved tensors on impl against torch 2.13: torch.autograd.graph.saved_tensors_hooks (pack at save
time, unpack at each use, nesting, errors), save_on_cpu, disable_saved_tensors_hooks, and what a
node saved as ``grad_fn._saved_<name>`` / ``_raw_saved_<name>`` (torch's names, values, the error
once freed, hooks registered on a raw saved tensor). Each program prints what it sees; impl must
print what torch prints."""

from __future__ import annotations

import pytest
import torch

import impl
from tests.helpers.parity import run

PRELUDE = """
G = torch.autograd.graph
log = []
def show(*xs):
    print(*[tuple(x.tolist()) if isinstance(x, torch.Tensor) else x for x in xs])
def attempt(f):
    try:
        r = f()
        print("ok", r.tolist() if isinstance(r, torch.Tensor) else r)
    except Exception as e:
        print(type(e).__name__, e)
def pack(t):
    log.append(("pack", t.tolist(), t.requires_grad, t.grad_fn is not None, torch.is_grad_enabled()))
    return t.detach() * 1
def unpack(p):
    log.append(("unpack", p.tolist(), torch.is_grad_enabled()))
    return p
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, -4.0], requires_grad=True)
"""

PROGRAMS = {
    "pack-at-save-unpack-at-use": """
with G.saved_tensors_hooks(pack, unpack):
    y = a * b
    z = y.exp()
    w = a * 2.0
    u = (a / b).sum()
print(log); log.clear()
z.sum().backward(retain_graph=True); print(log, a.grad.tolist()); log.clear()
show(z.grad_fn._saved_result, y.grad_fn._saved_self, y.grad_fn._saved_other); print(log); log.clear()
s = y.grad_fn._saved_self
print(s.requires_grad, s.is_leaf, z.grad_fn._saved_result.grad_fn is z.grad_fn)
z.sum().backward(); print(log); log.clear()
attempt(lambda: z.grad_fn._saved_result)
attempt(lambda: z.sum().backward())
""",
    "nested-innermost-only": """
def inner(t):
    log.append("inner")
    return t
with G.saved_tensors_hooks(pack, unpack):
    with G.saved_tensors_hooks(inner, lambda p: p):
        y = a * b
    x = a * b
print(log)
""",
    "double-backward-through-unpacked": """
with G.saved_tensors_hooks(lambda t: t.detach(), lambda p: p * 1):
    y = (a * a * b).sum()
g, = torch.autograd.grad(y, a, create_graph=True)
g.sum().backward()
show(g, a.grad, b.grad)
""",
    "errors": """
with G.saved_tensors_hooks(lambda t: t, lambda p: 5):
    y = a * b
attempt(lambda: y.sum().backward())
def inplace(t):
    return t.mul_(2)
with G.saved_tensors_hooks(inplace, lambda p: p):
    attempt(lambda: a.detach().clone().requires_grad_() * b)
def boom(t):
    raise ValueError("pack boom")
with G.saved_tensors_hooks(boom, lambda p: p):
    attempt(lambda: a * b)
    attempt(lambda: a + b)
x = a.clone()
with G.saved_tensors_hooks(lambda t: t, lambda p: p):
    y = x * x
x.mul_(2)
attempt(lambda: y.sum().backward())
""",
    "disabled": """
with G.disable_saved_tensors_hooks("no hooks here"):
    attempt(lambda: G.saved_tensors_hooks(pack, unpack).__enter__())
    with G.disable_saved_tensors_hooks("inner"):
        attempt(lambda: G.save_on_cpu().__enter__())
    attempt(lambda: G.save_on_cpu().__enter__())
with G.saved_tensors_hooks(pack, unpack):
    def disable():
        with G.disable_saved_tensors_hooks("not while hooks are on"):
            pass
    attempt(disable)
with G.saved_tensors_hooks(pack, unpack):
    y = a * b
print(len(log))
""",
    "save-on-cpu": """
with G.save_on_cpu():
    y = (a * b).exp()
show(y.grad_fn._saved_result, y.grad_fn.next_functions[0][0]._saved_self)
y.sum().backward()
show(a.grad, b.grad)
""",
    "custom-function": """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
with G.saved_tensors_hooks(pack, unpack):
    y = Square.apply(a)
print(log); log.clear()
y.sum().backward(); print(log, a.grad.tolist())
""",
    "saved-attributes": """
def names(fn):
    return sorted(n for n in dir(fn) if n.startswith(("_saved_", "_raw_saved_")))
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
for r in (a * b, a * 2.0, a.exp(), a.pow(2), 2 ** a, a.sum(), m.sum(0, keepdim=True), m.mean(1),
          m @ m, m.view(4), m[0], torch.cat([a, b]), a.clamp(min=0.5), m.softmax(1), m.amax(0),
          torch.where(a > 1, a, b), a + b, torch.add(a, b, alpha=2), a.flip(0), a.cumsum(0)):
    fn = r.grad_fn
    print(fn.name(), names(fn))
    for n in names(fn):
        v = getattr(fn, n)
        if n.startswith("_saved_"):
            print(" ", n, v.tolist() if isinstance(v, torch.Tensor) else v)
attempt(lambda: (a * b).grad_fn._saved_nothing)
""",
    "raw-saved": """
y = a * b
raw = y.grad_fn._raw_saved_self
raw.register_hooks(pack, unpack)
print(log)
attempt(lambda: raw.register_hooks(pack, unpack))
attempt(lambda: (a * 2.0).grad_fn._raw_saved_self.register_hooks(pack, unpack))
show(y.grad_fn._saved_self); print(log); log.clear()
y.sum().backward(); print(log)
attempt(lambda: y.grad_fn._raw_saved_other.register_hooks(pack, unpack))
attempt(lambda: y.grad_fn._saved_other)
attempt(lambda: a.sum().grad_fn._raw_saved_self_sym_sizes)
""",
    "output-numbers": """
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        p, q = x * 2, x.exp()
        ctx.save_for_backward(p, q)
        return p, q
    @staticmethod
    def backward(ctx, gp, gq):
        log.append((gp.tolist(), gq.tolist()))
        p, q = ctx.saved_tensors
        return gp * 2 + gq * q
for hooks in (False, True):
    with G.saved_tensors_hooks(pack, unpack) if hooks else G.disable_saved_tensors_hooks("off"):
        p, q = Two.apply(a)
    (g,) = torch.autograd.grad((p + q).sum(), a, create_graph=True)
    g.sum().backward()
    print([e for e in log if isinstance(e[0], list)], a.grad); log.clear(); a.grad = None
p, q = Two.apply(a)
with torch.no_grad():
    q.add_(1)
attempt(lambda: q.sum().backward())
v, i = torch.stack([a, b]).max(0)
i.add_(0)
attempt(lambda: v.sum().backward())
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_saved_tensors_as_torch(name: str) -> None:
    program = PRELUDE + PROGRAMS[name]
    assert run(program, impl) == run(program, torch)
