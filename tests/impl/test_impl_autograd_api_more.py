"""More of torch's autograd-facing API on impl against torch (issue 21): is_inference, the
constants, set_warn_always, Tensor.new and new_*, output_nr, the in-place view methods (t_,
transpose_, squeeze_, unsqueeze_, swapdims_, swapaxes_, as_strided_), attribute deletion and
assignment, the legacy tensor types, and grad-mode decorators on generators.

Each test runs one program on torch and on impl (``tests/helpers/parity.py``) and compares what it
prints: results, dtypes, flags, grad_fn names and graphs, versions, errors with their messages.
``show`` prints an expression's result (a tensor as its facts) or its error, and the warnings
it gave."""

from __future__ import annotations

import warnings

import torch

import impl
from tests.helpers.parity import run

PRELUDE = '''
import warnings
def facts(t):
    fn = t.grad_fn
    return (type(t).__name__, str(t.dtype), tuple(t.shape), t.stride(), t.storage_offset(), t.requires_grad,
            t.is_leaf, None if fn is None else fn.name(), t._version, t._base is not None)
def show(text, values=True):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = eval(text)
        shown = facts(r) + ((r.tolist(),) if values else ()) if isinstance(r, torch.Tensor) else repr(r)
        print(text, "->", shown, [(w.category.__name__, str(w.message)) for w in caught])
    except Exception as e:
        print(text, "->", type(e).__name__, str(e))
def graph(fn, depth=6):
    if fn is None or depth == 0:
        return None
    return (fn.name(), [graph(f, depth - 1) for f, _ in fn.next_functions])
'''


def same(program: str, texts: str = "") -> str:
    """The output of ``program`` on impl, checked equal to torch's; ``texts`` (one expression a
    line) is the program's list ``TEXTS``."""
    lines = [line.strip() for line in texts.strip().splitlines() if line.strip()]
    source = PRELUDE + f"TEXTS = {lines!r}\n" + program
    expected = run(source, torch)
    got = run(source, impl)
    assert got == expected
    return got


def test_constants_is_inference_and_warn_always() -> None:
    out = same(
        """
import math
print(torch.inf, torch.nan, torch.pi, torch.e, type(torch.inf), torch.pi == math.pi, torch.e == math.e)
print(torch.is_warn_always_enabled())
for value in [True, 1, "x", None, 1.0]:
    show(f"torch.set_warn_always({value!r})")
    torch.set_warn_always(False)
x = torch.ones(2)
with torch.inference_mode():
    y = torch.ones(2)
    print(torch.is_inference(x * 2), torch.is_inference(x[0]), torch.is_inference(y[0]))
print(torch.is_inference(x), x.is_inference(), torch.is_inference(y), torch.is_inference(input=y))
print(torch.is_inference(y.detach()), torch.is_inference(y.clone()))
for text in TEXTS:
    show(text)
z = torch.ones(3)
torch.set_warn_always(True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    z.T, z.T, torch.ones(()).H, torch.ones(()).H
print(torch.is_warn_always_enabled(), len(caught))
torch.set_warn_always(False)
print(torch.is_warn_always_enabled())
""",
        """
        torch.is_inference([1])
        torch.is_inference(None)
        torch.is_inference()
        x.is_inference(1)
        torch.is_warn_always_enabled(1)
        torch.set_warn_always()
        torch.set_warn_always(b=True)
        """,
    )
    assert "True 4" in out and "RuntimeError setWarnOnlyOnce expects a bool, but got int" in out


def test_legacy_new() -> None:
    out = same(
        """
x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
y = torch.ones(2, dtype=torch.int32)
sized = ("x.new(2", "x.new(1", "x.new(0", "x.new(size", "x.new(torch.Size")
for text in TEXTS:  # sizes alone give uninitialised memory: not its values
    show(text, values=not text.startswith(sized))
""",
        """
        x.new()
        x.new(2, 3)
        x.new((2, 3))
        x.new([2, 3])
        x.new(torch.Size([2, 3]))
        x.new([[1, 2], [3, 4]])
        x.new(())
        x.new(0)
        x.new(1, 2, 3)
        x.new(x.detach())
        x.new(x)
        x.new(torch.tensor([1, 2]))
        x.new(2, dtype=torch.float32)
        x.new(2, requires_grad=True)
        x.new(3, 4, dtype=torch.int64)
        x.new(2.5)
        x.new(-1)
        x.new(2, 3.0)
        x.new('a')
        x.new(None)
        x.new(2, device='cpu')
        x.new(x, device='cpu')
        x.new(data=[1])
        x.new(size=(2,))
        x.new(other=x)
        x.new(storage=3)
        x.new([1], data=[2])
        y.new([1.5, 2.5])
        y.new([2**40])
        x.new([[1, 2], [3]])
        x.new([1, None])
        y.new([1, 'a'])
        x.new([x.detach(), x.detach()])
        """,
    )
    assert "AliasBackward0" in out and "invalid combination" in out


def test_new_methods() -> None:
    same(
        """
x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
y = torch.ones(2, dtype=torch.int32)
for text in TEXTS:
    show(text, values="new_empty" not in text)
""",
        """
        x.new_tensor([1, 2])
        x.new_tensor([1, 2], dtype=torch.int32)
        x.new_tensor(3.5)
        y.new_tensor(2.9)
        x.new_tensor([1., 2.], requires_grad=True)
        x.new_tensor(x)
        y.new_tensor(x)
        x.new_tensor()
        x.new_tensor([1], layout=None)
        x.new_tensor([1], [2])
        x.new_tensor(data=[1])
        x.new_tensor('a')
        x.new_tensor(None)
        y.new_tensor([1e10])
        x.new_tensor([1], requires_grad=1)
        x.new_zeros(2, 3)
        x.new_zeros((2, 3))
        x.new_zeros([2, 3])
        x.new_zeros(torch.Size([2]))
        x.new_zeros(2, dtype=torch.int32)
        x.new_zeros(2, requires_grad=True)
        x.new_zeros()
        x.new_zeros(())
        x.new_zeros(-1)
        x.new_zeros(2.0)
        x.new_zeros((2,), (3,))
        x.new_zeros(size=(2, 3))
        x.new_zeros(2, dtype=torch.int64, requires_grad=True)
        x.new_zeros(2, 3.0)
        x.new_zeros(None)
        x.new_zeros(True)
        x.new_zeros((2,), dtype=3)
        x.new_zeros(2, foo=1)
        x.new_zeros(2, size=3)
        x.new_ones(2)
        x.new_ones(2, 3, dtype=torch.bool)
        x.new_ones(size=[1])
        y.new_ones(2, requires_grad=True)
        x.new_full((2,), 7)
        x.new_full([2, 2], 1.5)
        x.new_full(2, 3)
        x.new_full((2,), 7.5, dtype=torch.int64)
        x.new_full((2,), True)
        x.new_full(size=(2,), fill_value=3)
        x.new_full((2,))
        x.new_full()
        x.new_full(fill_value=1)
        x.new_full((2,), None)
        x.new_full((2,), torch.tensor(3.))
        x.new_full((2,), x)
        x.new_full((2,), 300, dtype=torch.uint8)
        x.new_full((2,), 1, 2)
        y.new_full((1,), 2.7)
        x.new_empty(2)
        x.new_empty((2, 3))
        x.new_empty(2, dtype=torch.int32)
        x.new_empty(2, requires_grad=True)
        x.new_empty()
        x.new_empty(-2)
        x.new_empty(2.5)
        torch.ones(2, 3).t().new_zeros((2, 3))
        torch.ones(2, 3).t().new_tensor([[1, 2]])
        """,
    )


def test_output_nr() -> None:
    same(
        """
x = torch.ones(4, 2, requires_grad=True)
for text in TEXTS:
    show(text)
try:
    x.output_nr = 1
except AttributeError as e:
    print(e)
""",
        """
        x.output_nr
        (x * 2).output_nr
        [t.output_nr for t in x.unbind()]
        [t.output_nr for t in x.split(1)]
        [t.output_nr for t in torch.ones(3).unbind()]
        x.max(0)[0].output_nr
        x.max(0)[1].output_nr
        x.detach().output_nr
        """,
    )


def test_attribute_deletion_and_assignment() -> None:
    same(
        """
x = torch.ones(2, requires_grad=True)
x.sum().backward()
del x.grad
print(x.grad)
del x.grad
print(x.grad)
y = x * 2
del y.grad
for code in TEXTS:
    try:
        exec(code, {"x": x, "y": y, "torch": torch})
        print(code, "ok")
    except Exception as e:
        print(code, type(e).__name__, e)
z = torch.ones(2, requires_grad=True)
z.grad = torch.ones(2)
z.data = torch.ones(2, dtype=torch.float64)
print(z.dtype, z.requires_grad, z.grad.dtype, z._version)
w = torch.ones(2)
w.data = torch.ones(3, dtype=torch.int64)
print(w.dtype, w.shape)
p = torch.ones(2, requires_grad=True)
q = p * 2
p.data = torch.full((2,), 3.0)
q.sum().backward()
print(p.grad, p)
print(torch.autograd.Variable(torch.ones(2), requires_grad=1).requires_grad)
""",
        """
        del x.data
        x.data = [1, 2]
        x.data = None
        x.data = torch.ones(2, dtype=torch.int64)
        x.requires_grad = 1
        x.requires_grad = None
        del x.requires_grad
        x.requires_grad_(1)
        x.grad_fn = None
        del x.grad_fn
        x.is_leaf = True
        x.shape = (2,)
        x.dtype = torch.float64
        x.grad = 3
        del x.is_leaf
        del x._version
        x.retains_grad = True
        x.output_nr = 0
        """,
    )


def test_legacy_tensor_types() -> None:
    out = same(
        """
x = torch.ones(2)
xg = torch.ones(2, requires_grad=True)
names = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
         "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]
casts = ["float", "double", "half", "bfloat16", "byte", "char", "short", "int", "long", "bool"]
for name, cast in zip(names, casts):
    kind = getattr(torch, name)
    print(name, [isinstance(getattr(x, c)(), kind) for c in casts], repr(kind), kind.__name__, kind.dtype,
          kind.is_cuda, getattr(x, cast)().type())
print(type(torch.FloatTensor), isinstance(torch.nn.Parameter(x), torch.FloatTensor),
      isinstance(3, torch.FloatTensor), issubclass(torch.FloatTensor, torch.Tensor),
      issubclass(torch.Tensor, torch.FloatTensor),
      isinstance(x, torch.cuda.FloatTensor), repr(torch.cuda.FloatTensor), torch.cuda.FloatTensor.is_cuda)
print(torch.FloatTensor.add is torch.Tensor.add)
for text in TEXTS:
    show(text, values=not text.startswith("torch.FloatTensor(torch.Size"))
""",
        """
        torch.FloatTensor([1, 2])
        torch.FloatTensor()
        torch.FloatTensor((1, 2))
        torch.FloatTensor(torch.Size([2]))
        torch.FloatTensor(x)
        torch.FloatTensor(x.double())
        torch.FloatTensor(xg)
        torch.Tensor(xg * 2)
        torch.Tensor(x.long())
        torch.LongTensor(x)
        torch.FloatTensor(2.5)
        torch.FloatTensor([1], dtype=torch.float64)
        torch.FloatTensor([1], device='cpu')
        torch.FloatTensor([1], requires_grad=True)
        torch.LongTensor([1.7, -2.2])
        torch.BoolTensor([0, 2])
        torch.ByteTensor([-1])
        torch.ByteTensor([-0.5])
        torch.CharTensor([1, -0.5])
        torch.ByteTensor([[1, 256.0]])
        torch.IntTensor([2**40])
        torch.BFloat16Tensor([1.5])
        torch.CharTensor([300])
        torch.FloatTensor(-1)
        torch.FloatTensor('a')
        torch.FloatTensor(None)
        torch.FloatTensor([[1], [2, 3]])
        torch.FloatTensor([1, 'a'])
        torch.LongTensor([1, None])
        torch.LongTensor([[1, 2], 3])
        torch.FloatTensor([xg, xg])
        torch.FloatTensor([xg[0], xg[1]])
        torch.Tensor(2, None)
        torch.Tensor(2.5, 3)
        torch.Tensor(True, 3)
        torch.Tensor([1], [2])
        torch.Tensor(2, device='cuda')
        torch.Tensor(data=[1])
        torch.FloatTensor.ones
        torch.cuda.FloatTensor([1])
        x.type(torch.DoubleTensor)
        x.type('torch.IntTensor')
        x.type(torch.float16)
        x.type(torch.FloatTensor) is x
        x.type('torch.FloatTensor') is x
        x.type('float')
        x.type(torch.Tensor)
        x.double().type(torch.Tensor)
        x.type(3)
        x.type(dtype=torch.int64)
        x.type(int)
        x.type(torch.nn.Parameter)
        x.type(torch.Size)
        x.type(torch.float32, foo=1)
        xg.type(torch.DoubleTensor)
        torch.Tensor.type(x)
        x.type_as(x.long())
        """,
    )
    assert "<class 'torch.FloatTensor'>" in out and "TensorOptions(dtype=float" in out


def test_in_place_view_methods() -> None:
    """Each method on a leaf, a non-leaf, a plain tensor, a leaf in no_grad, a view (made in
    no_grad or not), a detached alias and a view of a leaf: result, graph, version, errors."""
    out = same(
        """
OPS = {text: eval("lambda a: a." + text) for text in TEXTS}
def leaf():
    return torch.tensor([[0., 1, 2], [3, 4, 5]], requires_grad=True)
def in_no_grad(op):
    a = leaf()
    with torch.no_grad():
        return op(a)
def of_view(op):
    a = leaf().clone()
    return op(a[0:1])
def of_view_in_no_grad(op):
    a = leaf().clone()
    v = a[0:1]
    with torch.no_grad():
        op(v)
    return v
for name, op in OPS.items():
    makers = [("leaf", lambda: op(leaf())), ("clone", lambda: op(leaf().clone())),
              ("plain", lambda: op(torch.tensor([[0., 1, 2], [3, 4, 5]]))),
              ("leaf in no_grad", lambda: in_no_grad(op)),
              ("view", lambda: of_view(op)), ("view in no_grad", lambda: of_view_in_no_grad(op)),
              ("detached", lambda: op(leaf().detach())), ("view of leaf", lambda: op(leaf()[0:1]))]
    for kind, make in makers:
        try:
            t = make()
            print(name, kind, facts(t), t.tolist(), graph(t.grad_fn))
        except Exception as e:
            print(name, kind, type(e).__name__, e)
""",
        """
        t_()
        transpose_(0, 1)
        transpose_(-1, 0)
        transpose_(0, 2)
        squeeze_()
        squeeze_(0)
        squeeze_((0, 1))
        squeeze_(dim=0)
        unsqueeze_(0)
        unsqueeze_(-1)
        unsqueeze_(5)
        swapdims_(0, 1)
        swapaxes_(0, 1)
        as_strided_((3, 2), (1, 3))
        as_strided_((2,), (1,), 1)
        as_strided_((2,), (1,), 10)
        """,
    )
    names = ["TBackward1", "TransposeBackward1", "SqueezeBackward3", "SqueezeBackward4", "SqueezeBackward5"]
    names += ["UnsqueezeBackward1", "AsStridedBackward1", "a leaf Variable that requires grad"]
    assert all(name in out for name in names)


def test_in_place_view_methods_with_autograd() -> None:
    """Views of a modified base, in-place writes after them, saved tensors, hooks and retain_grad,
    multi-output and custom-Function views, inference tensors, second order; argument errors."""
    same(
        """
x = torch.tensor([[0., 1, 2], [3, 4, 5]], requires_grad=True)
def attempt(label, f):
    try:
        print(label, f())
    except Exception as e:
        print(label, type(e).__name__, e)
def base_written():
    a = x.clone(); v = a[0:1]; v.t_(); a.mul_(2)
    return graph(v.grad_fn), v.shape, v.stride()
def view_written():
    a = x.clone(); v = a[0:1]; v.t_(); v.mul_(2); a.sum().backward()
    return graph(v.grad_fn), graph(a.grad_fn), x.grad.tolist()
def saved(op):
    def f():
        y = x.clone(); z = y * y; op(y); z.sum().backward()
    return f
def chained():
    y = x.clone(); y.t_(); y.unsqueeze_(0); y.squeeze_()
    (y * torch.arange(6.).reshape(3, 2)).sum().backward()
    return x.grad.tolist(), graph(y.grad_fn)
def hooked():
    a = x.clone(); a.retain_grad(); a.register_hook(lambda g: print("hook", g.shape))
    a.t_(); a.sum().backward()
    return a.grad.shape, a.retains_grad
def retained_after():
    a = x.clone(); a.t_(); a.retain_grad(); a.sum().backward(); return a.grad.shape
def inference_outside():
    with torch.inference_mode():
        t = torch.ones(2, 3)
    t.t_()
def inference_inside():
    with torch.inference_mode():
        t = torch.ones(2, 3); t.t_(); return t.shape, t.is_inference()
def nonleaf_in_no_grad():
    a = x.clone()
    with torch.no_grad():
        a.t_()
    return graph(a.grad_fn), a.requires_grad, a._version
class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a
    @staticmethod
    def backward(ctx, g):
        return g
def second_order():
    y = x * x; y.t_(); y.unsqueeze_(1)
    g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    return g.tolist(), graph(g.grad_fn, 4), torch.autograd.grad(g.sum(), x)[0].tolist()
attempt("base written", base_written)
x.grad = None
attempt("view written", view_written)
x.grad = None
for name in ["t_()", "transpose_(0, 1)", "squeeze_()", "squeeze_(0)", "squeeze_((0,))", "unsqueeze_(0)",
             "swapdims_(0, 1)", "as_strided_((3,), (1,))", "t_().mul_(2)"]:
    attempt("saved " + name, saved(eval("lambda y: y." + name)))
attempt("chained", chained)
x.grad = None
attempt("hooked", hooked)
attempt("retained after", retained_after)
attempt("unbind", lambda: x.clone().unbind()[0].unsqueeze_(0))
attempt("split", lambda: x.clone().split(1)[0].transpose_(0, 1))
attempt("custom", lambda: Identity.apply(x.clone()).t_())
attempt("inference outside", inference_outside)
attempt("inference inside", inference_inside)
attempt("nonleaf in no_grad", nonleaf_in_no_grad)
attempt("second order", second_order)
for text in TEXTS:
    show(text)
""",
        """
        torch.ones(2, 3, 4).t_()
        torch.ones(3).t_().shape
        torch.ones(()).t_().shape
        torch.ones(2, 1, 1).squeeze_(dim=(1, 2)).shape
        torch.ones(2, 1).squeeze_((0, 0))
        torch.ones(2, 1).squeeze_(0.5)
        torch.ones(2, 1).squeeze_(None)
        torch.ones(2, 1).squeeze_(dim=None)
        torch.ones(2, 1).unsqueeze_()
        torch.ones(2).transpose_(0)
        torch.ones(()).unsqueeze_(0).shape
        torch.ones(()).squeeze_(0).shape
        torch.ones(()).transpose_(0, -1).shape
        torch.ones(6).as_strided_([2], [2], storage_offset=1).storage_offset()
        torch.ones(6).as_strided_((2,), (1,), -1)
        torch.ones(6).as_strided_((2,), (-1,))
        torch.ones(6).as_strided_((2, 3))
        torch.ones(6).as_strided_((2, 3), (1,))
        torch.ones(6).as_strided_((2,), (1,), 1.5)
        torch.ones(6)[2:].as_strided_((2,), (1,)).storage_offset()
        torch.arange(6.).as_strided_((2,), (1,), 4).as_strided_((6,), (1,), 0).tolist()
        torch.ones(2, 3).transpose_(dim0=0, dim1=1).shape
        torch.ones(2, 3).swapaxes_(axis0=0, axis1=1).shape
        torch.ones(2, 1).unsqueeze_(0.5)
        torch.ones(2, 1).transpose_(0, 'a')
        torch.ones(2, 1).swapaxes_(0)
        torch.ones(2, 3).t_(0)
        torch.ones(2, 1).squeeze(0.5)
        torch.ones(2, 1).unsqueeze()
        torch.ones(2, 3).t(0)
        torch.ones(6).as_strided((2,), (1,), 10)
        torch.ones(6).as_strided((-2, 3), (1, 1))
        torch.ones(6).as_strided((2.5,), (1,))
        torch.ones(6)[2:].as_strided((5,), (1,))
        torch.arange(6.)[2:].as_strided((3,), (1,), 0).tolist()
        torch.ones(2, 3).t().as_strided((6,), (1,)).tolist()
        torch.ones(3, 2, 1, 1).transpose(0, 1).squeeze((0, -1)).stride()
        """,
    )


def test_in_place_view_chains_backward() -> None:
    """Random chains of in-place view ops (and an in-place write) on a tensor, a view of it and
    a transposed view: geometry, versions and grad_fn after each, gradients to second order."""
    same(
        """
import random
OPS = [(text, eval("lambda t: t." + text)) for text in TEXTS]
rng = random.Random(0)
for trial in range(120):
    seq = [rng.randrange(len(OPS)) for _ in range(rng.randrange(1, 4))]
    start = rng.choice(["clone", "view", "transposed"])
    x = torch.tensor([[1., 2, 3], [4, 5, 6]], requires_grad=True)
    log = [start, [OPS[i][0] for i in seq]]
    a = x * x
    t = {"clone": a, "view": a[:, 1:], "transposed": a.t()}[start]
    for i in seq:
        OPS[i][1](t)
        log.append((tuple(t.shape), t.stride(), t.storage_offset(), t._version, t.grad_fn.name()))
    w = torch.arange(t.numel(), dtype=torch.float32).reshape(t.shape) + 1
    g, = torch.autograd.grad((t * w).sum(), x, create_graph=True)
    log += [g.tolist(), graph(t.grad_fn), graph(a.grad_fn), torch.autograd.grad(g.sum(), x)[0].tolist()]
    print(log)
""",
        """
        transpose_(0, 1)
        transpose_(0, -1)
        swapdims_(-1, 0)
        swapaxes_(0, 0)
        squeeze_()
        squeeze_(0)
        squeeze_((0, -1))
        unsqueeze_(0)
        unsqueeze_(-1)
        as_strided_((2, 2), (1, 2), t.storage_offset())
        mul_(2)
        """,
    )


def test_grad_mode_decorators_on_generators() -> None:
    out = same("""
import asyncio
log = []
def mode(tag):
    log.append((tag, torch.is_grad_enabled()))
@torch.no_grad()
def gen(n):
    mode("start")
    for i in range(n):
        got = yield i
        mode(f"resumed {got}")
    mode("end")
    return "done"
g = gen(2)
mode("before")
print(next(g)); mode("between")
print(g.send("a")); mode("between2")
try:
    g.send("b")
except StopIteration as e:
    print("stop", e.value)
@torch.enable_grad()
def egen():
    mode("e-start")
    try:
        yield 1
    except ValueError as err:
        mode(f"e-caught {err}")
        yield 2
    finally:
        mode("e-finally")
with torch.no_grad():
    g = egen()
    print(next(g)); mode("nb")
    print(g.throw(ValueError("boom"))); mode("nb2")
    g.close(); mode("after close")
@torch.no_grad
def gen2():
    try:
        yield torch.is_grad_enabled()
    except GeneratorExit:
        mode("gen2 exit")
        raise
g = gen2(); print(next(g)); g.close(); mode("closed")
@torch.no_grad()
def gen3():
    yield 1
    raise KeyError("inner")
g = gen3(); next(g)
try:
    next(g)
except KeyError as e:
    print("KeyError", e); mode("after raise")
@torch.no_grad()
def gen4():
    try:
        yield 1
    except ValueError:
        return "swallowed"
g = gen4(); next(g)
try:
    g.throw(ValueError("x"))
except StopIteration as e:
    print("stopped", e.value)
@torch.no_grad()
def gen5():
    try:
        yield 1
    finally:
        mode("gen5 finally")
        yield 99
g = gen5(); next(g)
try:
    g.close()
except RuntimeError as e:
    print("RuntimeError", e)
@torch.set_grad_enabled(False)
def sgen():
    mode("s in"); yield 1; mode("s in2")
g = sgen(); mode("s made"); next(g); mode("s out"); list(g); mode("s done")
@torch.inference_mode()
def igen():
    log.append(("i", torch.is_inference_mode_enabled(), torch.is_grad_enabled())); yield torch.ones(1)
t = next(igen()); print(t.is_inference(), torch.is_inference_mode_enabled())
@torch.inference_mode(False)
def igen2():
    log.append(("i2", torch.is_inference_mode_enabled())); yield 1
with torch.inference_mode():
    next(igen2()); log.append(("i2 out", torch.is_inference_mode_enabled()))
@torch.no_grad()
async def coro():
    return torch.is_grad_enabled()
print("coro", asyncio.run(coro()))
@torch.no_grad()
class C:
    def __init__(self):
        self.m = torch.is_grad_enabled()
print(type(C).__name__, C().m)
@torch.no_grad()
def outer():
    r = yield from gen(1)
    mode(f"outer got {r}")
    yield "o"
print(list(outer()), gen.__name__, sgen.__name__)
for entry in log:
    print(entry)
""")
    assert "('start', False)" in out and "('between', True)" in out


def test_decorating_a_class_warns() -> None:
    def caught(lib: object) -> list:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")

            class C:
                pass

            lib.no_grad()(C)
        return [(w.category.__name__, str(w.message)) for w in seen]

    assert caught(impl) == caught(torch) != []


def test_backward_hooks_attribute() -> None:
    """``_backward_hooks``: None until a hook, the hooks' OrderedDict (retain_grad adds none), None
    after an in-place op; assigned, kept as given, and a leaf's assigned dict runs as its hooks."""
    same(
        """
from collections import OrderedDict
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 2
print(a._backward_hooks, b._backward_hooks)
h = b.register_hook(lambda g: g * 3)
b.retain_grad()
print(type(b._backward_hooks).__name__, len(b._backward_hooks))
h.remove()
print(len(b._backward_hooks))
b.mul_(2)
print(b._backward_hooks)
c = torch.ones(2)
c._backward_hooks = OrderedDict([("k", lambda g: 1 / 0)])
print(list(c._backward_hooks), (c + a).sum().backward(), a.grad)
a._backward_hooks = OrderedDict([("x", lambda g: g * 10)])
(a * 1).sum().backward()
print(a.grad)
a._backward_hooks = None
(a * 1).sum().backward()
print(a.grad, a._backward_hooks)
d = a * 1
d._backward_hooks = [1]
print(d._backward_hooks)
try:
    del d._backward_hooks
except RuntimeError as e:
    print(e)
"""
    )


def test_inference_copies_and_spread_correction() -> None:
    """detach()/.data of an inference tensor outside inference mode: an inference tensor with a
    version counter of its own; clone(): a normal tensor at version 1 (CopyBackwards where it
    requires grad); var/std's saved correction by the overload a call takes."""
    same(
        """
with torch.inference_mode():
    t = torch.ones(3, requires_grad=True)
    inside = t.detach()
for text in ["t.detach()", "t.data", "t.detach().add_(1)", "t.data.mul_(2)", "t.detach()[0:2]", "inside",
             "t.clone()", "torch.clone(t)", "t.detach().detach()", "t.detach().unsqueeze_(0)",
             "t.detach().__setitem__(0, 5.0)"]:
    show(text)
(t.clone() * 2).sum().backward()
print(t.grad, graph(t.clone().grad_fn))
with torch.no_grad():
    show("t.clone()")
x = torch.ones(3, 2, requires_grad=True)
for call in ["x.var()", "x.var(0)", "x.var(None)", "x.std(unbiased=False)", "x.var(correction=None)",
             "torch.var_mean(x)[0]", "torch.std_mean(x, 1, correction=0)[0]", "x.var(True)"]:
    print(call, eval(call).grad_fn._saved_correction)
"""
    )


def test_autograd_odds_and_ends() -> None:
    """increment_version, InplaceFunction, ctx.saved_variables's deprecation, the create_graph
    warning of backward (warned every time under set_warn_always), a saved output unpacked into a
    new tensor, and saved-tensor hooks entered during backward not outliving it."""
    same(
        """
from torch.autograd.function import InplaceFunction
a = torch.zeros(2)
torch.autograd.graph.increment_version(a)
torch.autograd.graph.increment_version([a, a])
print(a._version)
show("torch.autograd.graph.increment_version(3)")
show("torch.autograd.graph.increment_version([a, 3])")
print(InplaceFunction.__mro__[1].__name__, InplaceFunction(True).inplace, InplaceFunction().inplace)

class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (x,) = ctx.saved_variables
        print([(w.category.__name__, str(w.message)) for w in caught])
        return g * x

x = torch.ones(2, requires_grad=True)
F.apply(x).sum().backward()
torch.set_warn_always(True)
show("(x * x).sum().backward(create_graph=True)")
show("torch.autograd.grad((x * x).sum(), x, create_graph=True)")
torch.set_warn_always(False)
y = x.exp()
saved = y.grad_fn._saved_result
print(saved is y, saved.grad_fn is y.grad_fn, x.sin().grad_fn._saved_self is x)
calls = []
context = torch.autograd.graph.saved_tensors_hooks(lambda t: calls.append("leaked") or t, lambda t: t)

def unpack(t):
    context.__enter__()
    return t

with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
    z = x.sin()
z.sum().backward()
x.sin()
print(calls)
"""
    )
