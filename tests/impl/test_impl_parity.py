# ruff: noqa: E501  (the programs below are torch scripts kept verbatim, one statement a line)
"""impl against torch on small programs: values, dtypes, flags, grad_fn names, graph structure,
hook order, warnings and exact error messages. Each program runs on both; outputs must match."""

from __future__ import annotations

import pytest

from tests.helpers.parity import run

PRELUDE = '''
import warnings
def attempt(f):
    try:
        print("ok", f())
    except Exception as e:
        print(type(e).__name__, str(e).split(" (Triggered internally")[0])
def graph(t):
    fn = t.grad_fn
    print(fn.name() if fn else None, [(n.name() if n else None, i) for n, i in (fn.next_functions if fn else ())])
def flags(t):
    print(t.dtype, tuple(t.shape), t.requires_grad, t.is_leaf, type(t.grad_fn).__name__ if t.grad_fn else None)
'''

PROGRAMS = {
    "dtype_inference_and_promotion": '''
import numpy as np
for v in (1, 2.0, True, [1, 2], [1.0, 2], np.float64(1.5), np.array([1, 2], dtype=np.int32)):
    print(torch.tensor(v).dtype)
i = torch.tensor([1, 2]); f = torch.tensor([1.0]); h = torch.tensor([1.0], dtype=torch.float16)
b = torch.tensor([True]); u8 = torch.tensor([1], dtype=torch.uint8); i8 = torch.tensor([1], dtype=torch.int8)
for a, c in ((i, f), (i, 2.5), (h, 2.5), (i, True), (b, 1), (u8, i8), (h, torch.tensor(2.0, dtype=torch.float64)),
             (i, torch.tensor(1.5)), (torch.tensor(1, dtype=torch.int32), torch.tensor(2)), (b, b)):
    print((a * c).dtype, (a + c).dtype)
print((i / i).dtype, (i / 2).dtype, torch.sqrt(i).dtype, i.sum().dtype, b.sum().dtype, (i > 1).dtype)
print(torch.float is torch.float32, torch.double is torch.float64, torch.long is torch.int64, torch.float)
print(torch.tensor([1.000001, 2], dtype=torch.float64).tolist(), torch.tensor(0.1, dtype=torch.double).item())
attempt(lambda: i.mean())
attempt(lambda: torch.tensor([1, 2], requires_grad=True))
attempt(lambda: torch.tensor([1, 2]).requires_grad_())
''',
    "creation": '''
print(torch.zeros(2, 3), torch.ones(2, dtype=torch.int32), torch.full((2,), 7), torch.full((2,), 1.5))
print(torch.arange(5), torch.arange(1, 4, 0.5), torch.arange(0, 1, 0.25, dtype=torch.float64))
print(torch.linspace(0, 1, 5), torch.eye(2, 3), torch.empty(2, 0).shape)
x = torch.tensor([[1., 2.], [3., 4.]])
print(torch.zeros_like(x), torch.ones_like(x, dtype=torch.long), torch.full_like(x, 3))
print(torch.Tensor(2, 3).shape, torch.Tensor([1, 2]), torch.FloatTensor([1, 2]), torch.IntTensor([1, 2]),
      torch.LongTensor([1]), torch.BoolTensor([1, 0]), torch.Tensor())
print(torch.randint(0, 10, (3,)).dtype, torch.rand(2, 3).shape, torch.randn(4).dtype)
print(x.numpy().dtype, x.tolist(), x[0, 1].item(), type(x.item) is not None, x.clone(), x.type(), x.int().type())
print(x.to(torch.float64).dtype, x.double().dtype, x.long(), x.bool(), x.type_as(torch.tensor([1])))
print(x.data_ptr() == x.data.data_ptr(), x.data_ptr() == x.clone().data_ptr())
''',
    "from_numpy_shares_memory": '''
import numpy as np
a = np.arange(4.0)
t = torch.from_numpy(a)
t[0] = 10
a[1] = 20
print(a, t, t.dtype)
u = torch.as_tensor(a)
u.add_(1)
print(a)
n = torch.ones(2).numpy()
print(n, n.dtype)
attempt(lambda: torch.ones(2, requires_grad=True).numpy())
''',
    "views_strides_and_versions": '''
x = torch.arange(12.).view(3, 4)
for v in (x.t(), x.transpose(0, 1), x[1], x[:, 1], x[::2, 1:], x.unsqueeze(1), x.view(2, 6), x.reshape(4, 3),
          x.permute(1, 0), x[None, ..., None], x.flatten(), x.expand(2, 3, 4), x[0:1].squeeze()):
    print(tuple(v.shape), v.stride(), v.is_contiguous(), v.storage_offset(), v._base is x)
print(x.T.is_contiguous(), x.t().contiguous().is_contiguous(), x.t().contiguous().stride())
attempt(lambda: x.t().view(12))
attempt(lambda: x.view(5, -1))
attempt(lambda: x.view(-1, -1))
v = x[1]
v[0] = 100
print(x, x._version, v._version)
x.mul_(2)
print(v, v._version)
print(torch.Size([2, 3]), x.size(), x.size(1), x.dim(), x.numel(), x.shape[0], len(x))
''',
    "repr_formats": '''
for v in ([1e-5, 1.], [1e9, 1.], [100000., 1.], [float('nan'), 1.5, float('inf')], [0.1, 0.25], [1., -2.],
          [123.456, 0.001], [-0.0, 0.0], [1e-10], [1e10, 1e-10], [3.0], [[1.5, 2.0], [-3.25, 4.0]]):
    print(torch.tensor(v))
print(torch.tensor([1, -20, 300]), torch.tensor([True, False]), torch.tensor(5), torch.tensor(2.5))
print(torch.tensor([1.5], dtype=torch.float64), torch.tensor([1], dtype=torch.int8), torch.tensor([1.5], dtype=torch.half))
print(torch.arange(2000.), torch.arange(30.))
print(torch.zeros(0), torch.zeros(2, 0), torch.zeros(0, dtype=torch.int64))
x = torch.tensor([1., 2.], requires_grad=True)
print(x, x * 2, (x * 2).sum(), torch.arange(40., requires_grad=True) * 1)
print(torch.ones(2, 3, 4))
print(torch.arange(2000.).view(40, 50), torch.arange(3000).view(10, 10, 30), torch.arange(1001) * -1)
print(torch.tensor([[1e-3, 2e5], [-3.5, 4e-6]]), torch.tensor([1e8, 1.0]), torch.tensor([123456789.0]))
print(torch.linspace(-1, 1, 30) * 1000, torch.tensor([0.1] * 30, requires_grad=True), torch.tensor([[True] * 30]))
print(torch.zeros(3, 0, 2), torch.tensor([], dtype=torch.int32), torch.ones(2, requires_grad=True).double())
''',
    "grad_fn_names_and_graph": '''
x = torch.tensor([1., 2.], requires_grad=True)
m = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
for f in (lambda: x + 1, lambda: 1 + x, lambda: x - 1, lambda: 1 - x, lambda: x * 2, lambda: 2 * x, lambda: x / 2,
          lambda: 1 / x, lambda: -x, lambda: x ** 2, lambda: 2 ** x, lambda: x ** x, lambda: x.exp(), lambda: x.log(),
          lambda: x.sqrt(), lambda: x.sin(), lambda: x.cos(), lambda: x.tanh(), lambda: x.sigmoid(),
          lambda: x.relu(), lambda: x.abs(), lambda: x.clamp(min=0), lambda: x.clamp(0, 1),
          lambda: torch.where(x > 1, x, x * 2), lambda: torch.maximum(x, x * 2), lambda: torch.minimum(x, 2 * x),
          lambda: x.sum(), lambda: x.sum(0), lambda: m.sum(1, keepdim=True), lambda: x.mean(), lambda: m.mean(0),
          lambda: x.max(), lambda: x.min(), lambda: m.max(1)[0], lambda: m.min(dim=0).values, lambda: x.prod(),
          lambda: x.var(), lambda: x.std(), lambda: m.var(1), lambda: x.softmax(0), lambda: x.log_softmax(0),
          lambda: m @ m, lambda: m.mm(m), lambda: x @ x, lambda: m @ x, lambda: x @ m, lambda: torch.trace(m),
          lambda: torch.addmm(x, m, m), lambda: m.unsqueeze(0).bmm(m.unsqueeze(0)), lambda: torch.cat([x, x]),
          lambda: torch.stack([x, x], 1), lambda: m.gather(1, torch.tensor([[0], [1]])),
          lambda: m.index_select(0, torch.tensor([1])), lambda: x.masked_fill(x > 1, 0), lambda: x[[0, 1]],
          lambda: x[x > 1], lambda: m[0], lambda: m[:, 1:], lambda: m[..., 0], lambda: m[None], lambda: m.t(),
          lambda: m.T, lambda: m.view(4), lambda: m.reshape(4), lambda: m.t().reshape(4), lambda: m.flatten(),
          lambda: m.permute(1, 0), lambda: x.expand(2, 2), lambda: x.unsqueeze(1).squeeze(), lambda: m.clone(),
          lambda: m.double(), lambda: m.to(torch.float64), lambda: m.t().contiguous(), lambda: x.detach() * 1):
    graph(f())
''',
    "retain_graph_follows_saved_tensors": '''
x = torch.tensor([1., 2.], requires_grad=True)
for f in (lambda: (x + 1).sum(), lambda: (x * 2).sum(), lambda: (x - x).sum(), lambda: x.exp().sum(),
          lambda: x.sum() * 1, lambda: x.view(2, 1).sum(), lambda: (x ** 2).sum(), lambda: x.mean(),
          lambda: x.t().sum(), lambda: x[0] + x[1], lambda: x.relu().sum(), lambda: torch.cat([x, x]).sum(),
          lambda: x.max(), lambda: x.clone().sum(), lambda: x.abs().sum(), lambda: x.tanh().sum()):
    y = f()
    y.backward()
    attempt(lambda: y.backward())
y = (x * x).sum()
y.backward(retain_graph=True)
y.backward()
print(x.grad)
attempt(lambda: y.backward())
''',
    "leaf_rules_and_grad_warning": '''
a = torch.tensor([1., 2.])
w = torch.tensor([3., 4.], requires_grad=True)
b = a * 2
y = w * a
flags(a); flags(b); flags(y); flags(w); flags(y.detach())
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    print(y.grad)
    print([(x.category.__name__, str(x.message)) for x in ws])
y.retain_grad()
print(y.retains_grad, w.retains_grad)
y.sum().backward()
print(w.grad, y.grad, a.grad)
attempt(lambda: y.requires_grad_(False))
attempt(lambda: setattr(y, "requires_grad", False))
attempt(lambda: w.add_(1))
attempt(lambda: w[0].mul_(2))
attempt(lambda: torch.tensor([1, 2]).register_hook(lambda g: g))
attempt(lambda: torch.tensor([1.]).sum().backward())
attempt(lambda: (w * 2).backward())
attempt(lambda: (w * 2).backward(torch.ones(3)))
d = y.detach(); d.requires_grad_(); flags(d)
z = w * 2
z.detach_()
flags(z)
with torch.no_grad():
    n = w * 2
flags(n)
w.requires_grad = False
flags(w)
v = torch.tensor(2., requires_grad=True)
u = -v
v.requires_grad_(False)
u.backward()
print(v.grad, u.grad_fn.next_functions[0][0].name())
''',
    "accumulation_and_backward_options": '''
x = torch.tensor([1., 2.], requires_grad=True)
g0 = None
for _ in range(3):
    (x * x).sum().backward()
    if g0 is None:
        g0 = x.grad
print(x.grad, g0 is x.grad)
x.grad = None
y = x * 3
y.backward(gradient=torch.tensor([1., 0.5]))
print(x.grad)
x.grad.zero_()
a = torch.tensor(2., requires_grad=True)
b = torch.tensor(3., requires_grad=True)
(a * b).backward(inputs=[a])
print(a.grad, b.grad)
c = a * b
d = c * a
d.backward(inputs=[c])
print(c.grad, a.grad)
torch.autograd.backward([a * 2, b * 3], grad_tensors=[torch.tensor(1.), torch.tensor(2.)])
print(a.grad, b.grad)
attempt(lambda: (a * 1).backward(inputs=[]))
p = torch.tensor(1.5, requires_grad=True)
q = p ** 3
q.backward(create_graph=True)
print(p.grad, p.grad.requires_grad, type(p.grad.grad_fn).__name__)
''',
    "autograd_grad_options": '''
x = torch.tensor([1., 2.], requires_grad=True)
z = torch.tensor([1.], requires_grad=True)
y = (x ** 3).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
print(g, g.requires_grad)
g2, = torch.autograd.grad(g.sum(), x)
print(g2, x.grad)
y = (x * 2).sum()
attempt(lambda: torch.autograd.grad(y, [x, z]))
y = (x * 2).sum()
print(torch.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True))
print(torch.autograd.grad(y, [x, z], materialize_grads=True))
attempt(lambda: torch.autograd.grad((x * 2).sum(), [z], allow_unused=False, materialize_grads=True))
attempt(lambda: torch.autograd.grad((x * 2).sum(), torch.tensor([1.])))
v = x * 2
print(torch.autograd.grad(v, x, grad_outputs=torch.tensor([1., 3.])))
h = x * 1
k = (h * h).sum()
print(torch.autograd.grad(k, [h, x]))
print(x.grad)
''',
    "hooks_order_and_results": '''
log = []
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
z = y * y
y.retain_grad()
y.register_hook(lambda g: log.append(("t1", g.tolist())))
y.register_hook(lambda g: g * 10)
y.register_hook(lambda g: log.append(("t3", g.tolist())))
y.grad_fn.register_prehook(lambda gs: log.append(("pre", gs[0].tolist())))
y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].tolist(), go[0].tolist())))
x.register_hook(lambda g: log.append(("leaf", g.tolist())))
x.register_post_accumulate_grad_hook(lambda t: log.append(("acc", t.grad.tolist())))
h = z.grad_fn.register_prehook(lambda gs: log.append(("zpre",)))
h.remove()
z.sum().backward()
print(log)
print(y.grad, x.grad)
q = x * 2
q.register_hook(lambda g: torch.ones(3))
attempt(lambda: q.sum().backward())
q = x * 2
q.register_hook(lambda g: g.double())
attempt(lambda: q.sum().backward())
attempt(lambda: (x * 2).register_post_accumulate_grad_hook(lambda t: None))
attempt(lambda: torch.tensor([1.]).register_post_accumulate_grad_hook(lambda t: None))
''',
    "hook_order_across_branches": '''
log = []
x = torch.tensor(3.0, requires_grad=True)
a = x + 1
b = x * 2
c = x.exp()
for name, t in (("a", a), ("b", b), ("c", c)):
    t.register_hook(lambda g, name=name: log.append(name))
(a * b * c).backward()
print(log)
''',
    "saved_tensor_modified_in_place": '''
x = torch.tensor([1., 2., 3.], requires_grad=True)
z = x.exp(); w = z.sum()
with torch.no_grad():
    z.mul_(2)
attempt(lambda: w.backward())
a = x * 1; b = a * a; a.add_(1)
attempt(lambda: b.sum().backward())
c = torch.tensor([1., 2.], requires_grad=True); d = c.sin()
with torch.no_grad():
    c.add_(1)
attempt(lambda: d.sum().backward())
e = x * 1
f = e * 2
e.add_(1)
f.sum().backward()
print(x.grad, e._version, e.grad_fn.name())
y = x * 1
y.exp_()
y.add_(1)
attempt(lambda: y.sum().backward())
''',
    "in_place_and_setitem_graphs": '''
x = torch.tensor([1., 2.], requires_grad=True)
for f in (lambda y: y.fill_(1), lambda y: y.zero_(), lambda y: y.copy_(x), lambda y: y.clamp_(0),
          lambda y: y.relu_(), lambda y: y.add_(1), lambda y: y.mul_(x), lambda y: y.sub_(x), lambda y: y.div_(2),
          lambda y: y.masked_fill_(y > 1, 0), lambda y: y.__setitem__(y > 1, 0), lambda y: y.__setitem__(0, x[1]),
          lambda y: y.__setitem__(0, 5)):
    y = x * 1
    f(y)
    graph(y)
    y.sum().backward()
    print(x.grad, y._version)
    x.grad = None
a = torch.ones(2, requires_grad=True)
b = a * 2
v = b[0]
v.mul_(3)
graph(v); graph(b)
b.sum().backward()
print(a.grad)
attempt(lambda: torch.ones(3).add_(torch.tensor([1.5]).long()).long().add_(1.5))
attempt(lambda: torch.ones(3, dtype=torch.long).add_(1.5))
''',
    "grad_modes": '''
x = torch.tensor([1.], requires_grad=True)
with torch.no_grad():
    print(torch.is_grad_enabled(), (x * 2).requires_grad)
    with torch.enable_grad():
        print((x * 2).requires_grad)
@torch.no_grad()
def f(t):
    return t * 2
print(f(x).requires_grad, torch.is_grad_enabled())
with torch.set_grad_enabled(False):
    print((x * 2).requires_grad)
torch.set_grad_enabled(False)
print(torch.is_grad_enabled())
torch.set_grad_enabled(True)
with torch.inference_mode():
    print((x * 2).requires_grad)
print(torch.is_grad_enabled())
with torch.inference_mode():
    a = torch.ones(2)
    b = a * 2
    c = x * 2
print(a.is_inference(), b.is_inference(), torch.ones(1).is_inference(), b.requires_grad, c.requires_grad, c.is_leaf)
w = torch.ones(2, requires_grad=True)
for f in (lambda: w * b, lambda: b.add_(1), lambda: b.requires_grad_(), lambda: (w + b).sum()):
    attempt(f)
''',
    "custom_function": '''
from torch.autograd.function import once_differentiable
class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, y):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * k, y.clone()
    @staticmethod
    def backward(ctx, a, b):
        x, = ctx.saved_tensors
        print("needs", ctx.needs_input_grad, a, b)
        return a * ctx.k * x, None, b
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3.], requires_grad=True)
o, p = F.apply(x, 2, y)
print(type(o.grad_fn).__name__, o.grad_fn.name(), p.grad_fn is o.grad_fn, o.requires_grad)
graph(o)
o.sum().backward()
print(x.grad, y.grad)
attempt(lambda: o.sum().backward())
class G(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x
    @staticmethod
    def backward(ctx, g):
        return g, g
z = G.apply(x)
print(z is x, type(z.grad_fn).__name__)
attempt(lambda: z.sum().backward())
class H(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
attempt(lambda: H.apply(x))
w = x * 1
r = H.apply(w)
print(r is w, type(w.grad_fn).__name__, w._version)
class M(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        a = x * 2
        b = (x > 0).float()
        ctx.mark_non_differentiable(b)
        return a, b
    @staticmethod
    def backward(ctx, g, h):
        print("M back", g, h)
        return g
a, b = M.apply(x)
print(b.requires_grad, b.grad_fn, type(a.grad_fn).__name__)
a.sum().backward()
class O(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
q = O.apply(x).sum()
gq, = torch.autograd.grad(q, x, create_graph=True)
print(gq, gq.grad_fn)
class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
s = Sq.apply(x).sum()
g1, = torch.autograd.grad(s, x, create_graph=True)
g2, = torch.autograd.grad(g1.sum(), x)
print(g1, g2)
''',
    "indexing_reads_and_writes": '''
x = torch.arange(12.).view(3, 4).requires_grad_()
y = x * 1
parts = [y[1], y[:, 2], y[1:, ::2], y[[0, 2]], y[y > 5], y[torch.tensor([0, 1]), torch.tensor([1, 2])],
         y[..., -1], y[None, 0]]
for p in parts:
    print(p)
sum(p.sum() for p in parts).backward()
print(x.grad)
attempt(lambda: y[3])
attempt(lambda: y[0, 0, 0])
attempt(lambda: y[torch.tensor([0.5])])
z = torch.zeros(3, 4)
z[1] = 5
z[:, 0] = torch.tensor([1., 2., 3.])
z[z > 4] = -1
z[0, 1:3] = torch.tensor([[7., 8.]])
print(z)
''',
    "reductions_values": '''
m = torch.tensor([[1., 5., 3.], [4., 2., 6.]], requires_grad=True)
vals = [m.sum(), m.sum(0), m.sum((0, 1)), m.mean(1, keepdim=True), m.max(), m.max(1), m.min(0), m.prod(1),
        m.var(), m.std(1), m.var(0, unbiased=False), m.std(correction=0), m.softmax(1), m.log_softmax(0),
        m.argmax(), m.argmax(1), torch.max(m, torch.ones(2, 3) * 3)]
for v in vals:
    print(v)
loss = sum(v.sum() for v in vals if not isinstance(v, tuple) and v.dtype.is_floating_point)
loss.backward()
print(m.grad)
t = torch.tensor([[2., 2.], [1., 0.]], requires_grad=True)
(t.max() + t.prod() + t.prod(1).sum()).backward()
print(t.grad)
z = torch.tensor([[2., 0., 3.], [1., 4., 0.5], [0., 0., 2.]], requires_grad=True)
(z.prod() + z.prod(1).sum() + z.prod(0).sum()).backward()
print(z.grad)
''',
    "matmul_family": '''
a = torch.arange(6.).view(2, 3).requires_grad_()
b = torch.arange(12.).view(3, 4).requires_grad_()
v = torch.tensor([1., -1., 2.], requires_grad=True)
c = torch.arange(24.).view(2, 3, 4).requires_grad_()
outs = [a @ b, a.mm(b), a @ v, v @ b, v @ v, torch.matmul(c, b.t()), a @ c, torch.matmul(c.transpose(1, 2), a.t()),
        torch.ones(2, 1, 2, 3) @ c, c @ c.transpose(1, 2), torch.ones(4) @ c.transpose(1, 2), c.transpose(1, 2) @ v,
        torch.addmm(torch.ones(4), a, b), torch.addmm(torch.ones(2, 4), a, b, beta=2, alpha=0.5), torch.trace(a @ a.t())]
for o in outs:
    print(o.shape, o.grad_fn.name())
sum(o.sum() for o in outs).backward()
print(a.grad, b.grad, v.grad, c.grad.sum())
attempt(lambda: a @ a)
attempt(lambda: a.mm(v))
attempt(lambda: v @ torch.ones(4))
attempt(lambda: torch.tensor(1.) @ v)
''',
    "joining_and_gathering": '''
x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
outs = [torch.cat([x, x * 2], 1), torch.stack([x, x], 0), x.gather(1, torch.tensor([[1, 1], [0, 1]])),
        x.index_select(1, torch.tensor([1, 1, 0])), x.masked_fill(x > 2, -1.), torch.where(x > 2, x, torch.zeros(2, 2))]
for o in outs:
    print(o)
sum((o * o).sum() for o in outs).backward()
print(x.grad)
attempt(lambda: torch.cat([x, torch.ones(3, 3)]))
attempt(lambda: torch.stack([x, torch.ones(3)]))
''',
    "std_backward_where_std_is_zero": '''
for dt in (torch.float16, torch.float32, torch.float64):
    for data in ([-2.0, -2.0, -2.0], [1.0, 2.0, 4.5], [3.0]):
        x = torch.tensor(data, dtype=dt, requires_grad=True)
        torch.std(x).backward()
        print(dt, x.grad)
''',
    "set_grad_enabled_as_decorator": '''
print(torch.is_grad_enabled())
@torch.set_grad_enabled(False)
def f(x):
    return torch.is_grad_enabled(), (x * 2).requires_grad
print(torch.is_grad_enabled(), f(torch.ones(1, requires_grad=True)), torch.is_grad_enabled())
with torch.no_grad():
    print(f(torch.ones(1, requires_grad=True)), torch.set_grad_enabled(True)(torch.is_grad_enabled)())
    print(torch.is_grad_enabled())
@torch.inference_mode
def g(x):
    return torch.is_inference_mode_enabled(), torch.is_grad_enabled(), (x * 2).requires_grad
print(g(torch.ones(1, requires_grad=True)), torch.is_inference_mode_enabled())
''',
    "long_chain_no_recursion": '''
x = torch.tensor([1.0], requires_grad=True)
y = x
for _ in range(100000):
    y = y * 1.0
y.sum().backward()
print(x.grad)
del y
''',
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch(name: str) -> None:
    import torch

    import impl

    program = PRELUDE + PROGRAMS[name]
    assert run(program, impl) == run(program, torch)


MORE_PROGRAMS = {
    "double_backward_graphs_use_scalar_overloads": '''
def chain(t):
    names, todo, seen = [], [t.grad_fn], set()
    while todo:
        fn = todo.pop(0)
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.append(fn.name())
        todo += [n for n, _ in fn.next_functions]
    return names
ops = {
    "sqrt": lambda x, w: x.sqrt(), "tanh": lambda x, w: x.tanh(), "sigmoid": lambda x, w: x.sigmoid(),
    "relu": lambda x, w: x.relu(), "abs": lambda x, w: x.abs(), "pow": lambda x, w: x ** 3, "rpow": lambda x, w: 2 ** x,
    "powt": lambda x, w: x ** w, "mean": lambda x, w: x.mean() * x, "var": lambda x, w: x.var(),
    "vardim": lambda x, w: x.view(2, 2).var(0, correction=2).sum(), "std": lambda x, w: x.std(),
    "where": lambda x, w: torch.where(x > 0.5, x * x, w), "sign": lambda x, w: x.sign() * x, "floor": lambda x, w: x.floor() * x,
    "sum0d": lambda x, w: x.sum() * x,
}
for name, f in ops.items():
    x = torch.tensor([0.3, 0.7, 0.2, 0.9], requires_grad=True)
    w = torch.tensor([0.5, 0.4, 0.6, 0.1], requires_grad=True)
    g, = torch.autograd.grad(f(x, w).sum(), x, create_graph=True)
    gg, = torch.autograd.grad((g * g).sum(), x, create_graph=True, allow_unused=True)
    # abs: gg is an efficient zero tensor, which refuses tolist() (see the test of it below)
    values = None if gg is None or name == "abs" else [round(v, 4) for v in gg.tolist()]
    print(name, chain(g), None if gg is None else chain(gg), values)
''',
    "pow_kernels_and_integer_powers": '''
x = torch.tensor([float("-inf"), -2.5, -0.0, 0.0, 0.3, 1.7, 7.1, float("inf"), float("nan")])
for dt in (torch.float16, torch.float32, torch.float64):
    for e in (2, 3, 0.5, -0.5, -1, -2, 0, 1, 1.5):
        print(dt, e, (x.to(dt) ** e).tolist())
i = torch.tensor([-3, -2, -1, 0, 1, 2, 3])
print(i ** torch.tensor([-1, -2, -3, -1, -2, -1, -2]), (-1) ** i, 2 ** i, 0.5 ** i, i ** 2)
attempt(lambda: i ** -1)
''',
    "matmul_folds_a_batch_of_one_that_requires_grad": '''
for sa, sb in (((1, 2, 3), (2, 3, 2)), ((2, 2, 3), (1, 3, 2)), ((3,), (2, 3, 2)), ((1, 2, 3), (1, 3, 2))):
    for ga, gb in ((True, True), (True, False), (False, True)):
        a, b = torch.ones(sa, requires_grad=ga), torch.ones(sb, requires_grad=gb)
        y = a @ b
        graph(y)
        print(y.stride())
attempt(lambda: torch.ones(3, 2, 3) @ torch.ones(2, 3, 2))
''',
    "indexing_saves_indices_and_slices_first": '''
x = torch.ones(3, 2, requires_grad=True)
for key in ([0, 2], torch.tensor([0, 1]), torch.tensor([True, False, True]), (0, [1, 0]), (slice(1, None), [0]), torch.tensor(1)):
    y = x[key]
    graph(y)
    y.sum().backward()
    attempt(lambda: y.sum().backward())
t = x * 2
t[0] = 5.0
s = t.sum()
s.backward()
attempt(lambda: s.backward())
e = torch.zeros(4).expand(3, 4)
attempt(lambda: e.add_(1))
attempt(lambda: e.zero_())
print(torch.ones(2, 3)[:, 1].unsqueeze(1).stride())
''',
    "post_accumulate_hook_rules": '''
x = torch.tensor([1., 2.], requires_grad=True)
h = x.register_post_accumulate_grad_hook(lambda t: 5)
attempt(lambda: (x * 2).sum().backward())
h.remove()
h = x.register_post_accumulate_grad_hook(lambda t: t.grad * 2)
attempt(lambda: (x * 2).sum().backward())
h.remove()
seen = []
x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
(x * 3).sum().backward()
print(seen, x.grad)
''',
    "detach_data_versions": '''
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
d = y.detach()
dd = y.data
d.add_(1)
print(y._version, d._version, dd._version, y)
dd.add_(1)
print(y._version, y)
v = y[0]
attempt(lambda: v.detach_())
a = torch.ones(2)
b = a[0]
attempt(lambda: b.detach_())
x.data = torch.tensor([5., 6.])
print(x, x.is_leaf)
attempt(lambda: setattr(x, "grad", torch.ones(3)))
attempt(lambda: setattr(x, "grad", torch.ones(2, dtype=torch.float64)))
x.grad = torch.ones(2)
print(x.grad)
import copy
c = copy.deepcopy(x)
print(c, c.grad, c is x)
attempt(lambda: copy.deepcopy(x * 2))
''',
    "view_grad_fn_after_base_in_place": '''
a = torch.ones(3, requires_grad=True)
b = a * 2
v = b[:2]
w = b[1:]
v.mul_(3)
graph(v); graph(b)
print(w.grad_fn.name(), w)
b.sum().backward()
print(a.grad)
a.grad = None
b = a * 2
v = b[0]
b.add_(1)
print(v, v.grad_fn.name())
''',
    "higher_order_gradients": '''
x = torch.tensor([0.5, 1.5], requires_grad=True)
y = torch.tensor([2.0, -1.0], requires_grad=True)
fs = [lambda: (x.tanh() * y).sum(), lambda: (x.sigmoid() ** 2).sum(), lambda: (x.exp() / y).sum(),
      lambda: (x.log() * x).sum(), lambda: (x ** 3 * y).sum(), lambda: (x ** y).sum(), lambda: x.softmax(0)[0] * 3,
      lambda: (x.unsqueeze(1) @ y.unsqueeze(0)).pow(2).sum(), lambda: x.sin().cos().sum(), lambda: x.std() * x.sum(),
      lambda: x.log_softmax(0)[1], lambda: (x * y).prod(), lambda: x.sqrt().sum(), lambda: torch.maximum(x, y).pow(2).sum()]
for f in fs:
    out = f()
    g = torch.autograd.grad(out, [x, y], create_graph=True, allow_unused=True)
    gg = [torch.autograd.grad(gi.sum(), [x, y], retain_graph=True, allow_unused=True) if gi is not None else None for gi in g]
    print([None if gi is None else [round(v, 4) + 0.0 for v in gi.tolist()] for gi in g])
    print([[None if t is None else [round(v, 4) + 0.0 for v in t.tolist()] for t in row] for row in gg if row is not None])
''',
    "boundary_gradients": '''
x = torch.tensor([-1., 0., 0., 2.], requires_grad=True)
outs = [x.relu(), x.abs(), x.clamp(0, 2), x.clamp(min=0), x.max().expand(4), x.min().expand(4),
        x.view(2, 2).max(1)[0].sum().expand(4),
        torch.maximum(x, torch.zeros(4)), torch.where(x > 0, x, x * 0)]
for o in outs:
    x.grad = None
    o.sum().backward()
    print(x.grad)
''',
    "grad_mode_decorators": '''
x = torch.tensor([1.], requires_grad=True)
@torch.no_grad
def f(t):
    return t * 2
print(f(x).requires_grad)
@torch.enable_grad()
def g(t):
    return t * 2
with torch.no_grad():
    print(g(x).requires_grad)
@torch.inference_mode()
def h(t):
    return t * 2
print(h(x).requires_grad)
''',
    "warnings_from_torch": '''
x = torch.tensor([1., 2.], requires_grad=True)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    torch.tensor(x)
    (x * 2).grad
    print([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in ws])
''',
    "sum_mean_options": '''
m = torch.arange(6.).view(2, 3).requires_grad_()
i = torch.arange(6).view(2, 3)
print(m.sum(dtype=torch.float64), i.sum(1), i.sum(dtype=torch.float32), m.mean((0, 1)), m.mean(-1, True))
print(torch.sum(m, [0]), m.sum(()), i.float().mean(), i.prod(), torch.tensor([True, True]).sum())
attempt(lambda: i.std())
attempt(lambda: m.sum(2))
attempt(lambda: m.max(2))
attempt(lambda: torch.zeros(0).max())
''',
    "multi_output_views": '''
x = torch.arange(8.).view(4, 2).requires_grad_()
y = x * 1
parts = [y.split(1, 1), y.split([1, 1], 1), y.chunk(2), y.unbind(1), y.split(3)]
for ps in parts:
    print([(p.grad_fn.name(), p.shape, p.is_contiguous(), p._base is y, p.grad_fn is ps[0].grad_fn) for p in ps])
graph(parts[0][1])
(parts[0][1] * 2).sum().backward(retain_graph=True)
print(x.grad)
(parts[3][0].sum() + parts[4][1].sum() * 3).backward()
print(x.grad)
a, b = (x * 1).chunk(2)
attempt(lambda: a.mul_(2))
attempt(lambda: (x * 1).unbind(0)[1].add_(1))
z = x * 1
with torch.no_grad():
    v = z.chunk(2)[0]
    w = z[0]
attempt(lambda: v.mul_(2))
attempt(lambda: w.mul_(2))
''',
    "hooks_across_in_place": '''
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.register_hook(lambda g: print("before", g))
y.retain_grad()
y.add_(1)
y.register_hook(lambda g: print("after", g))
(y * y).sum().backward()
print(y.grad, x.grad)
z = x * 1
v = z[0]
v.register_hook(lambda g: print("view hook", g))
z.mul_(2)
(v * 3).backward()
print(x.grad)
''',
    "backward_argument_checks": '''
x = torch.tensor([1., 2.], requires_grad=True)
attempt(lambda: (x * 2).backward(torch.tensor([1., 1.], dtype=torch.float64)))
print(x.grad)
attempt(lambda: (x * 2).backward(torch.tensor([1, 1])))
attempt(lambda: torch.autograd.grad(x * 2, x, grad_outputs=torch.ones(3)))
attempt(lambda: torch.autograd.grad([x * 2, x * 3], x, grad_outputs=[torch.ones(2)]))
attempt(lambda: torch.autograd.grad(x * 2, x))
attempt(lambda: (x * 2).sum().backward(inputs=[torch.ones(2)]))
attempt(lambda: x.retain_grad())
attempt(lambda: torch.ones(2).retain_grad())
attempt(lambda: (x.sum() * 2).backward(torch.tensor(2.)))
print(x.grad)
y = x * 2
y.backward(torch.ones(2), retain_graph=True)
attempt(lambda: y.grad_fn(torch.ones(2)))
attempt(lambda: y.grad_fn.next_functions[0][0].variable is x)
''',
    "custom_function_setup_context_and_saving": '''
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * ctx.k, None
x = torch.tensor([1., 2.], requires_grad=True)
y = Mul.apply(x, 3.0)
print(y, type(y.grad_fn).__name__)
y.sum().backward()
print(x.grad)
attempt(lambda: y.grad_fn.saved_tensors)
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g
attempt(lambda: Bad.apply(x))
class Keep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
k = Keep.apply(x)
print(len(k.grad_fn.saved_tensors), k.grad_fn.needs_input_grad)
k.sum().backward()
attempt(lambda: k.grad_fn.saved_tensors)
''',
    "random_stream_matches_torch": '''
for seed in (0, 7, 2024):
    torch.manual_seed(seed)
    print(torch.rand(3), torch.rand(2, 2, dtype=torch.float64), torch.randn(5), torch.randn(3, dtype=torch.float64))
    print(torch.randint(0, 10, (6,)), torch.randint(5, (2, 2)), torch.randn(20, dtype=torch.float64))
    print(torch.randn(4, 6), torch.rand(17))
    w = torch.empty(3, 4)
    print(w.uniform_(-0.5, 0.5), w.normal_(1.0, 2.0), torch.initial_seed())
''',
    "bfloat16": '''
b = torch.tensor([1.5, 2.25, -3.0], dtype=torch.bfloat16)
h = torch.tensor([1.0], dtype=torch.float16)
print(b, b * 2, (b * 2.5).dtype, (b + h).dtype, (b + torch.tensor([1.0])).dtype, b.float(), b.sum())
x = torch.tensor([0.5, 1.0], dtype=torch.bfloat16, requires_grad=True)
(x * x).sum().backward()
print(x.grad)
''',
    "double_backward_graph_names": '''
x = torch.tensor([0.5, -1.5, 2.0], requires_grad=True)
y = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
for f in (lambda: x.tanh(), lambda: x.sigmoid(), lambda: x.relu(), lambda: x.softmax(0), lambda: x.log_softmax(0),
          lambda: x / y, lambda: x.exp(), lambda: x.log(), lambda: x * y, lambda: x ** 3, lambda: x.sqrt(),
          lambda: x.sin(), lambda: x.sum(), lambda: x.mean(), lambda: x.clamp(0, 1)):
    out = f()
    g, = torch.autograd.grad((out * torch.tensor([1.0, 2.0, 3.0])).sum(), x, create_graph=True)
    print(type(g.grad_fn).__name__ if g.grad_fn else None, g)
    attempt(lambda: [None if t is None else [round(v, 3) + 0.0 for v in t.tolist()]
                     for t in torch.autograd.grad(g.sum(), [x, y], allow_unused=True)])
''',
    "gradient_stealing_and_aliasing": '''
x1 = torch.tensor(-2.0, requires_grad=True)
t2 = torch.sum(x1)
x4 = torch.tensor(-2.0)
t2.backward(gradient=x4, inputs=[x1], retain_graph=True)
t2.backward()
print(x1.grad, x4)
x = torch.tensor([1., 2.], requires_grad=True)
g = torch.tensor([3., 4.])
(x * 1).backward(g)
print(x.grad is g, x.grad.data_ptr() == g.data_ptr())
(x * 1).backward(g)
print(g, x.grad)
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([1., 2.], requires_grad=True)
gg = torch.ones(2)
(a + b).backward(gg)
a.grad.add_(1)
print(gg, a.grad, b.grad)
''',
    # AccumulateGrad keeps the gradient itself when nothing else holds it (torch's use_count): a
    # hook's fresh result is kept, one a hook also stored is copied, so is one another buffer holds
    "gradient_stealing_by_use_count": '''
seen = {}
def record(name):
    def hook(g):
        seen[name] = g.data_ptr()
    return hook
def fresh(g):
    r = g * 2
    seen["fresh"] = r.data_ptr()
    return r
kept = []
def held(g):
    r = g * 2
    kept.append(r)
    return r
for hook in (fresh, held):
    x = torch.tensor([1., 2.], requires_grad=True)
    x.register_hook(hook)
    (x * 3).sum().backward()
    print(hook.__name__, x.grad.data_ptr() == (seen["fresh"] if hook is fresh else kept[0].data_ptr()))
# one gradient routed to two leaves (AddBackward0 passes it on to both)
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([1., 2.], requires_grad=True)
y = a + b
y.register_hook(record("y"))
(y * 3).sum().backward()
print("shared", a.grad.data_ptr() == seen["y"], b.grad.data_ptr() == seen["y"])
# a gradient passed through to a leaf and kept by a tensor hook upstream
x = torch.tensor([1., 2.], requires_grad=True)
z = x + 0
keep = []
z.register_hook(lambda g: keep.append(g))
(z * 3).sum().backward()
print("kept upstream", x.grad.data_ptr() == keep[0].data_ptr())
class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        ctx.g = torch.full_like(t, 7.0)
        return t * 2
    @staticmethod
    def backward(ctx, g):
        return ctx.g
x = torch.tensor([1., 2.], requires_grad=True)
Twice.apply(x).sum().backward()
print("function keeps it", x.grad.tolist())
class Fresh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t * 2
    @staticmethod
    def backward(ctx, g):
        r = g * 2
        seen["fn"] = r.data_ptr()
        return r
x = torch.tensor([1., 2.], requires_grad=True)
Fresh.apply(x).sum().backward()
print("function fresh", x.grad.data_ptr() == seen["fn"])
x = torch.tensor([1., 2.], requires_grad=True)
x.grad_fn  # None
(x * 1).sum().backward(create_graph=True)
print("create_graph", x.grad.grad_fn is not None)
def pre(grads):
    r = grads[0] * 2
    seen["pre"] = r.data_ptr()
    return (r,)
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.grad_fn.next_functions[0][0].register_prehook(pre)
y.sum().backward()
print("node pre-hook result kept", x.grad.data_ptr() == seen["pre"])
''',
    "node_hook_result_checks": '''
x = torch.tensor([1., 2.], requires_grad=True)
def wrong_size(gi, go):
    return (torch.zeros(3),)
def wrong_count(go):
    return (go[0], go[0])
def wrong_dtype(gi, go):
    return (gi[0].double(),)
for hook, kind in ((wrong_size, "post"), (wrong_count, "pre"), (wrong_dtype, "post")):
    y = x * 2
    (y.grad_fn.register_hook if kind == "post" else y.grad_fn.register_prehook)(hook)
    attempt(lambda: y.sum().backward())
''',
    "gradient_layouts_follow_torch": '''
lin = torch.nn.Linear(4, 3)
lin(torch.ones(5, 4)).sum().backward()
print(lin.weight.grad.stride(), lin.bias.grad.stride())
a = torch.ones(4, 3, requires_grad=True); w = torch.ones(5, 3, requires_grad=True); wt = w.t()
print([g.stride() for g in torch.autograd.grad((a @ wt).sum(), (a, w, wt))])
at = torch.ones(3, 4, requires_grad=True)
print([g.stride() for g in torch.autograd.grad((at.t() @ torch.ones(3, 2)).sum(), (at,))])
print([g.stride() for g in torch.autograd.grad(torch.addmm(torch.ones(2), at.t(), torch.ones(3, 2), alpha=2).sum(), (at,))])
y = torch.nn.Conv2d(2, 4, 3, groups=2)(torch.ones(2, 2, 5, 5))
print(y.stride(), torch.nn.Flatten()(y).grad_fn.name())
''',
    "transposes_by_rank": '''
for shape in ((2, 3), (2, 3, 4), (3,), ()):
    x = torch.ones(shape, requires_grad=True) * 2
    attempt(lambda: (tuple(x.T.shape), x.T.grad_fn.name()))
    attempt(lambda: (tuple(x.H.shape), x.H.grad_fn.name()))
leaf = torch.ones((), requires_grad=True)
print(leaf.H is leaf, leaf.T is leaf)
''',
    "broadcast_errors_and_inference_mode": '''
for a, b in (((2, 2, 3), (13,)), ((3,), (2,)), ((4, 1, 3), (2, 5)), ((2, 3), (3, 2))):
    attempt(lambda: torch.ones(a) + torch.ones(b))
    attempt(lambda: torch.ones(a, requires_grad=True) * torch.ones(b))
attempt(lambda: torch.ones(2, 3) @ torch.ones(2, 3))
x = torch.ones(2, requires_grad=True)
with torch.inference_mode():
    with torch.enable_grad():
        y = x * 2
        print(torch.is_grad_enabled(), torch.is_inference_mode_enabled(), y.requires_grad, y.grad_fn)
    with torch.inference_mode(False):
        print(torch.is_grad_enabled(), torch.is_inference_mode_enabled(), (x * 2).grad_fn.name())
with torch.no_grad():
    with torch.inference_mode(False):
        print(torch.is_grad_enabled(), (x * 2).grad_fn.name())
''',
    "module_hook_names_in_errors": '''
x = torch.ones(1, 3, requires_grad=True)
def myhook(m, gi, go):
    return (gi[0],)
lin = torch.nn.Linear(3, 2); lin.register_backward_hook(myhook)
attempt(lambda: lin(x).sum().backward())
lin = torch.nn.Linear(3, 2); lin.register_full_backward_pre_hook(lambda m, go: (torch.ones(5),))
attempt(lambda: lin(x).sum().backward())
lin = torch.nn.Linear(3, 2); lin.register_full_backward_hook(lambda m, gi, go: (torch.ones(5),))
attempt(lambda: lin(x).sum().backward())
''',
    "add_sub_with_alpha_round_once": '''
for dtype in (torch.float16, torch.float32, torch.float64):
    for n in (1, 7, 100, 1000):
        a = torch.tensor([(i * 0.6180339887) % 4 - 2 for i in range(n)], dtype=dtype)
        b = torch.tensor([(i * 0.4142135623) % 3 - 1.5 for i in range(n)], dtype=dtype)
        for alpha in (0.3, -1.7, 3, 2.5):
            c = a.clone(); c.add_(b, alpha=alpha)
            d = a.clone(); d.sub_(b, alpha=alpha)
            outs = (torch.add(a, b, alpha=alpha), torch.sub(a, b, alpha=alpha), c, d)
            print(dtype, n, alpha, [o.double().tolist() for o in outs])  # every bit, as float64
''',
    "cumsum_cumprod_flip_and_prod_with_zeros": '''
i = torch.tensor([1, 2, 3]); b = torch.tensor([True, False]); h = torch.tensor([1.1, 2.3, 0.7], dtype=torch.float16)
print(torch.cumsum(i, 0), torch.cumprod(i, 0), torch.cumsum(b, 0), torch.cumprod(b, 0), torch.cumsum(h, 0), torch.cumprod(h, 0))
print(torch.cumprod(i, 0, dtype=torch.float32), torch.cumsum(torch.tensor(3.), 0), torch.cumprod(torch.tensor(3.), -1), torch.flip(torch.tensor(3.), [0]))
m = torch.arange(6).view(2, 3)
print(m.flip(1, 0), m.flip(dims=[1]), m.flip([0]), torch.flip(m, []), m.flip(1).stride(), m.float().cumsum(-1), m.float().cumprod(dim=0))
attempt(lambda: torch.cumsum(i, 1))
attempt(lambda: torch.cumprod(i, -2))
attempt(lambda: torch.flip(i, [1]))
attempt(lambda: torch.flip(torch.zeros(2, 2), (0, -2)))
attempt(lambda: torch.flip(i, 0))
attempt(lambda: torch.cumprod(torch.tensor([1.], requires_grad=True), 0, dtype=torch.int64))
def deep(fn, depth=0):
    if fn is None or depth > 9:
        return None
    return (fn.name(), [deep(n, depth + 1) for n, _ in fn.next_functions])
for data in ([[0.]], [[2., 0., 3.], [1., 4., 0.]], [[0.], [2.]], [[2., 0., 3., 0.]], [[1.5, 2., -1.]], [[0., 0.]], [[3.]]):
    for f in (lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.prod(0, keepdim=True), lambda x: x.cumprod(1),
              lambda x: x.cumsum(1) * x, lambda x: x.flip([1]) * x, lambda x: torch.cumsum(x, 1, dtype=torch.float64)):
        x = torch.tensor(data, requires_grad=True)
        y = f(x)
        print(y, deep(y.grad_fn))
        g, = torch.autograd.grad(y.sum(), x, create_graph=True)
        print(g, deep(g.grad_fn))
        if g.requires_grad:
            g2, = torch.autograd.grad(g.sum(), x, create_graph=True, allow_unused=True, materialize_grads=True)
            print(g2, deep(g2.grad_fn))
            if g2.requires_grad:
                g3, = torch.autograd.grad(g2.sum(), x, allow_unused=True, materialize_grads=True)
                print([round(v, 4) + 0.0 for v in g3.flatten().tolist()])  # third order: rounding apart
''',
    "efficient_zero_tensor_of_sgn": '''
x = torch.tensor([0.5, -1.5], requires_grad=True)
g, = torch.autograd.grad(x.abs().sum(), x, create_graph=True)
r = torch.autograd.grad(g.sum(), x)[0]
t = torch.tensor([1., float('inf')], requires_grad=True)
print(r, r._is_zerotensor(), r.shape, r.dtype, r.requires_grad, r.is_leaf)
for f in (lambda: r * t, lambda: t * r, lambda: r / t, lambda: t / r, lambda: r + t, lambda: r - t, lambda: r * 2, lambda: r.sum(), lambda: r.detach(), lambda: r.expand(3, 2)):
    o = f()
    print(o, o._is_zerotensor())
attempt(lambda: r.tolist())
attempt(lambda: r.numpy())
attempt(lambda: r.numpy(force=True))
x = torch.tensor([0.5, -1.5], requires_grad=True)
g, = torch.autograd.grad(x.abs().sum(), x, create_graph=True)
g.sum().backward()
print(x.grad, x.grad._is_zerotensor())
x = torch.tensor([0.0, 2.0], requires_grad=True)
g, = torch.autograd.grad(x.log().abs().sum(), x, create_graph=True)
print(g, torch.autograd.grad(g.sum(), x))
x = torch.tensor([0.5, -1.5], requires_grad=True)
g, = torch.autograd.grad((x.abs() * x).sum(), x, create_graph=True)
print(g, torch.autograd.grad(g.sum(), x)[0]._is_zerotensor())
g, = torch.autograd.grad(x.sgn().sum(), x); print(g._is_zerotensor())
g, = torch.autograd.grad(x.sign().sum(), x); print(g._is_zerotensor(), g.tolist())
''',
    "empty_tensor_strides": '''
for t in (torch.ones(1).expand(0), torch.ones(2, 1).expand(2, 0), torch.ones(0, 2), torch.ones(3)[3:],
          torch.ones(2, 3)[:, 3:].t(), torch.ones(0, 2, 3).view(0, 6), torch.ones(0, 2) + 1,
          torch.ones(0, 3) @ torch.ones(3, 2), torch.ones(0, 2, 3).sum(1), torch.ones(0, 2, 3).permute(2, 0, 1),
          torch.ones(0, 2).unsqueeze(1), torch.cat([torch.ones(0, 2), torch.ones(0, 2)]),
          torch.ones(0, 2).t().contiguous()):
    print(tuple(t.shape), t.stride(), t.is_contiguous())
''',
    "inplace_result_keeps_the_shape_of_self": '''
for op in ("add_", "sub_", "mul_", "div_", "pow_"):
    attempt(lambda: getattr(torch.tensor(1.0), op)(torch.ones(2)))
    attempt(lambda: getattr(torch.ones(3), op)(torch.ones(2, 3)))
    attempt(lambda: getattr(torch.ones(1, 3), op)(torch.ones(2, 3)))
    attempt(lambda: getattr(torch.ones(2, 3), op)(torch.ones(4)))
    attempt(lambda: getattr(torch.ones(2, 3), op)(torch.ones(3)).shape)
attempt(lambda: torch.tensor(1.0).clamp_(min=torch.ones(2)))
attempt(lambda: torch.tensor(1.0).copy_(torch.ones(2)))
attempt(lambda: torch.ones(1).copy_(torch.ones(2)))
attempt(lambda: torch.tensor(1.0).masked_fill_(torch.ones(2, dtype=torch.bool), 0))
x = torch.ones(2, requires_grad=True).clone()
attempt(lambda: x.mul_(torch.ones(3, 2)))
print(x._version, x.grad_fn.name())
''',
    "operands_that_are_neither_tensors_nor_numbers": '''
x = torch.ones(2)
for bad in (None, [1.0, 2.0], "a"):
    attempt(lambda: x + bad)
    attempt(lambda: bad + x)
    attempt(lambda: x * bad)
    attempt(lambda: x - bad)
    attempt(lambda: x / bad)
    attempt(lambda: x ** bad)
    attempt(lambda: x < bad)
    print(x == bad, x != bad)
    attempt(lambda: torch.div(bad, x))
    attempt(lambda: torch.mul(x, bad))
    attempt(lambda: torch.exp(bad))
    attempt(lambda: torch.sigmoid(bad))
''',
    "matrix_products_check_dtypes_as_torch": '''
lin = torch.nn.Linear(2, 2)
for shape in ((2,), (3, 2), (4, 3, 2)):
    for dtype in (torch.float64, torch.int64):
        attempt(lambda: lin(torch.ones(shape, dtype=dtype)))
lin.bias = None
for shape in ((2,), (3, 2), (4, 3, 2)):
    attempt(lambda: lin(torch.ones(shape, dtype=torch.float64)))
d, h = torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2, dtype=torch.float16)
for other in (torch.ones(2, 2), torch.ones(2, 2, dtype=torch.int8), torch.ones(2, 2, dtype=torch.bool)):
    attempt(lambda: torch.addmm(torch.ones(2), d, other))
    attempt(lambda: torch.mm(h, other))
    attempt(lambda: d @ other)
    attempt(lambda: torch.ones(2, dtype=torch.int32) @ other)
    attempt(lambda: other @ torch.ones(2, dtype=torch.int16))
    attempt(lambda: torch.mv(d, other[0]))
    attempt(lambda: torch.mv(d, torch.ones(3, dtype=other.dtype)))
    attempt(lambda: torch.bmm(d[None], other[None]))
    attempt(lambda: torch.ones(3, 2, 2, dtype=torch.uint8) @ other)
    attempt(lambda: torch.ones(3, 2, 2, dtype=torch.uint8) @ other.expand(3, 2, 2))
    attempt(lambda: torch.dot(torch.ones(3), other[0]))
    attempt(lambda: torch.matmul(torch.tensor([-2.0, -2.0, -2.0]), other[0]))
''',
    "setitem_mixed_keys_write_through_views": '''
def deep(fn, depth=0):
    if fn is None or depth > 3:
        return None
    return (fn.name(), [deep(n, depth + 1) for n, _ in fn.next_functions])
keys = [(0, [1, 2]), (slice(None), [0, 2]), ([0, 1], slice(1, None)), (Ellipsis, [0]), ([0, 1], [1, 2]), (None, 0, [0, 1]),
        (torch.tensor([True, False, True]), 0), (1,), (slice(0, 1),), Ellipsis, None, True, False, [0, 2], (0, torch.tensor([1, 3])),
        (slice(None, None, 2), torch.tensor([True, False, True, True])), ([[0], [1]], slice(1, 3)), (0, None, [1]), (0, [5]), (0, 1.5)]
values = [lambda: torch.tensor(7., requires_grad=True), lambda: torch.tensor([7., 8.], requires_grad=True),
          lambda: torch.tensor([[[7.]]], requires_grad=True), lambda: 3, lambda: torch.tensor([1., 2., 3., 4.], requires_grad=True),
          lambda: torch.tensor([1, 2]), lambda: torch.tensor([1.], dtype=torch.float64)]
for key in keys:
    for make in values:
        x = torch.arange(12.).reshape(3, 4).requires_grad_()
        y = x * 1
        v = make()
        try:
            y[key] = v
        except Exception as e:
            print(key, type(e).__name__, e)
            continue
        print(key, y._version, y.detach().tolist(), deep(y.grad_fn))
        (y * torch.arange(12.).reshape(3, 4)).sum().backward()
        print(x.grad.tolist(), v.grad if isinstance(v, torch.Tensor) else None)
for shape, key in (((2, 0), ([5],)), ((2, 0), (slice(None), [])), ((0, 2), ([0],)), ((0, 2), ([],)), ((0, 2), (slice(None), [5])),
                   ((3, 4), (slice(2, 0), [5])), ((2, 0), ([2, 0],)), ((3, 4), (slice(None), [0, 5])), ((3, 4), ([[0, 1]], [[-5, 2]]))):
    x = torch.zeros(shape)
    attempt(lambda: x.__setitem__(key, 1.))
    attempt(lambda: tuple(x[key].shape))
    print(x.tolist(), x._version)
''',
    "vector_matrix_product_is_squeezed_in_place": '''
x = torch.ones(3, requires_grad=True)
w = torch.arange(12.).reshape(3, 4).requires_grad_()
o = x @ w
print(o._is_view(), o._base is None, o._version, o.grad_fn.name(), o.grad_fn.next_functions[0][0].name())
o.retain_grad()
o.mul_(2)
o.sum().backward()
print(o.grad, x.grad, w.grad.tolist(), o.grad_fn.name(), o.grad_fn.next_functions[0][0].name(), o._version)
o = x @ w
seen = []
o.register_hook(lambda g: seen.append(g.tolist()))
torch.nn.functional.leaky_relu(o - 20, 0.5, inplace=True)
o.sum().backward()
print(seen)
o = torch.nn.functional.linear(x, w.t())
v = o[1:3]
o.add_(1)
print(v.grad_fn.name(), v._version, o._version, v._base is o)
v.mul_(2)
print(o.grad_fn.name(), o._version, o.tolist())
o.sum().backward()
print(x.grad)
with torch.no_grad():
    o = x @ w
print(o._is_view(), o._version, o.requires_grad)
o.add_(x[0])
print(o.grad_fn.name(), o._version)
y = x @ w
z = y * y
y.add_(1)
attempt(lambda: z.sum().backward())
''',
}


@pytest.mark.parametrize("name", sorted(MORE_PROGRAMS))
def test_more_programs_match_torch(name: str) -> None:
    import torch

    import impl

    program = PRELUDE + MORE_PROGRAMS[name]
    assert run(program, impl) == run(program, torch)


def test_second_derivative_through_abs_is_an_unallocated_zero_tensor() -> None:
    import torch

    import impl

    program = PRELUDE + """
x = torch.tensor([0.5, -1.5], requires_grad=True)
g, = torch.autograd.grad(x.abs().sum(), x, create_graph=True)
attempt(lambda: torch.autograd.grad(g.sum(), x)[0].tolist())
"""
    assert run(program, impl) == run(program, torch)


T_WARNINGS = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    for shape in ((2, 3, 4), (3,), (), (2, 3), (), (4, 1, 1), ()):
        torch.ones(shape).T
    torch.ones(()).H
    torch.ones(()).H
print([(w.category.__name__, str(w.message).split(" (Triggered")[0], w.filename) for w in seen])
"""


@pytest.mark.parametrize("module", ["impl"])
def test_transpose_deprecation_warnings_once_per_process_like_torch(module: str) -> None:
    """x.T off 2-D and x.H on 0-d warn once per process, attributed to the caller (fresh processes:
    torch's warnings are TORCH_WARN_ONCE)."""
    import subprocess
    import sys

    def warnings_of(name: str) -> str:
        code = f"import {name} as torch\n" + T_WARNINGS
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout

    expected = warnings_of("torch")
    assert "is deprecated" in expected
    assert warnings_of(module) == expected
