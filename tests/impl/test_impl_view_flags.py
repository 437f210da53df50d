"""impl against torch on a view's autograd flags and on inference mode: a view whose base comes
to require grad after the view was made (torch's DifferentiableViewMeta: a view requires grad
when its base does), a view whose base joins a graph in place after the view was made (its
grad_fn regenerated onto the base's new history), and inference mode combined with the grad
modes. Each scenario runs the same code on torch and on impl and compares what it observes."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import impl


class Log:
    """What a scenario observed, line by line: flags of tensors, values, errors and warnings."""

    def __init__(self, m: Any) -> None:
        self.m = m
        self.lines: list[str] = []

    def flags(self, name: str, t: Any) -> None:
        fn = t.grad_fn
        self.lines.append(
            f"{name}: is_leaf={t.is_leaf} requires_grad={t.requires_grad} grad_fn={graph(fn)} "
            f"is_inference={t.is_inference()}"
        )

    def value(self, name: str, v: Any) -> None:
        if hasattr(v, "tolist"):
            v = (v.tolist(), str(v.dtype).removeprefix("torch."), v.requires_grad)
        self.lines.append(f"{name}: {v}")

    def grad(self, name: str, t: Any) -> None:
        """``t.grad`` with the warnings reading it gives."""
        self.run(f"{name}.grad", lambda: t.grad)

    def run(self, name: str, call: Callable[[], Any]) -> Any:
        """Run ``call``, logging its result's value (or flags), its error and its warnings."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = call()
            except Exception as e:  # noqa: BLE001 - the error is what is compared
                self.lines.append(f"{name} raised {type(e).__name__}: {e}")
                result = None
            else:
                if hasattr(result, "grad_fn"):
                    self.flags(name, result)
                    self.value(f"{name} data", result.detach())
                else:
                    self.value(name, result)
        for w in caught:
            self.lines.append(f"{name} warned {w.category.__name__}: {str(w.message)[:60]}")
        return result


def graph(fn: Any, depth: int = 4) -> str:
    """A node's name and, recursively, its next_functions (None for no node)."""
    if fn is None:
        return "None"
    if depth == 0:
        return fn.name()
    nexts = ", ".join(f"{graph(f, depth - 1)}:{nr}" for f, nr in fn.next_functions)
    return f"{fn.name()}[{nexts}]"


# -- 1. a view requires grad when its base does, whenever the base came to ---------------------
def base_requires_grad_after_the_view(m: Any, log: Log) -> None:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.requires_grad_(False)
    v = x.view(2)
    x.requires_grad_(True)
    log.flags("v", v)
    y = log.run("v * 2", lambda: v * 2)
    log.run("backward", lambda: y.sum().backward())
    log.grad("x", x)
    log.grad("v", v)
    log.run("v.retain_grad", lambda: v.retain_grad())
    log.value("v.retains_grad", v.retains_grad)
    log.run("v.register_hook", lambda: type(v.register_hook(lambda g: None)).__name__)
    log.run("v.add_", lambda: v.add_(1))
    log.run("v.detach", lambda: v.detach())
    log.run("v.numpy", lambda: v.numpy())
    log.run("v.view(1, 2)", lambda: v.view(1, 2))
    log.run("v + x", lambda: v + x)


def gradients_asked_of_such_a_view(m: Any, log: Log) -> None:
    """Its gradient goes nowhere (its own flag is off and it has no grad_fn): torch's unreachable
    input."""
    x = m.tensor([1.0, 2.0])
    v = x.view(2)
    x.requires_grad_(True)
    log.run("grad of v * 2 wrt v", lambda: m.autograd.grad((v * 2).sum(), v, allow_unused=True))
    log.run("grad of x * 2 wrt v", lambda: m.autograd.grad((x * 2).sum(), v, allow_unused=True))
    log.run("grad of v * 2 wrt x", lambda: m.autograd.grad((v * 2).sum(), x, allow_unused=True))
    log.run("v.sum().backward()", lambda: v.sum().backward())
    log.run("v.backward(ones)", lambda: v.backward(m.ones(2)))
    log.run("deepcopy", lambda: copy.deepcopy(v))
    log.run("clone", lambda: v.clone())


def backward_to_such_a_view(m: Any, log: Log) -> None:
    x = m.tensor([1.0, 2.0])
    v = x.view(2)
    x.requires_grad_(True)
    log.run("backward(inputs=[v])", lambda: (v * 2).sum().backward(inputs=[v]))
    log.grad("v", v)


def saved_by_nodes_of_such_a_view(m: Any, log: Log) -> None:
    """A node recorded for a view whose gradient goes nowhere saves what torch's codegen saves
    whatever the edges (a unary op's result, a value both derivatives use) and guards the rest
    by the edge of the input whose derivative uses it. Each case: an op of the view ``v`` and a
    non-leaf ``t``, then one of them (or the result) written in place."""
    cases: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
        "exp, result written": (lambda v, t: m.exp(v), "out"),
        "v * t, t written": (lambda v, t: v * t, "t"),
        "v * t, v written": (lambda v, t: v * t, "v"),
        "v / t, t written": (lambda v, t: v / t, "t"),
        "maximum, t written": (lambda v, t: m.maximum(v, t), "t"),
    }
    for name, (make, written) in cases.items():
        x = m.tensor([1.0, 2.0])
        v = x.view(2)
        x.requires_grad_(True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        t = w * 1
        out = make(v, t)
        with m.no_grad():
            {"out": out, "t": t, "v": x}[written].add_(1)
        log.run(f"{name}: backward", lambda out=out: out.sum().backward())
        log.grad(f"{name}: w", w)


def saved_tensors_checked_without_a_gradient(m: Any, log: Log) -> None:
    """torch's generated apply unpacks what its node saved before looking at the gradients: a
    node reached with no gradient (a custom Function's backward returned None) still raises for a
    saved tensor written in place; a node autograd.grad does not need is not run at all."""

    class NoGrad(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 1

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return None

    x = m.ones(2, requires_grad=True)
    y = m.exp(x)
    out = NoGrad.apply(y)
    with m.no_grad():
        y.add_(1)
    log.run("backward through a None gradient", lambda: out.sum().backward())
    log.grad("x", x)
    w = m.ones(2, requires_grad=True)
    y = m.exp(x)
    total = (y + w).sum()
    with m.no_grad():
        y.add_(1)
    log.run("grad wrt w only", lambda: m.autograd.grad(total, w))


def nested_views_follow_the_base(m: Any, log: Log) -> None:
    a = m.tensor([1.0, 2.0, 3.0, 4.0])
    v1 = a.view(2, 2)
    v2 = v1[0]
    dv = a.detach().view(4)
    a.requires_grad_(True)
    for name, t in [("v1", v1), ("v2", v2), ("dv", dv)]:
        log.flags(name, t)
    log.run("v2 * v1", lambda: (v2 * v1).sum().backward())
    log.grad("a", a)
    a.requires_grad_(False)
    log.flags("v1 after the base stops", v1)


def requires_grad_set_on_such_a_view(m: Any, log: Log) -> None:
    x = m.tensor([1.0, 2.0])
    v = x.view(2)
    x.requires_grad_(True)
    log.run("v.requires_grad_(False)", lambda: v.requires_grad_(False))
    log.run("v.requires_grad_(True)", lambda: v.requires_grad_(True))
    x.requires_grad_(False)
    log.flags("v after the base stops", v)
    log.run("(v * 3).sum().backward", lambda: (v * 3).sum().backward())
    log.grad("v", v)
    log.grad("x", x)


def view_made_in_no_grad(m: Any, log: Log) -> None:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with m.no_grad():
        v = x.view(2)
    log.flags("v", v)
    log.run("v * 2", lambda: v * 2)
    log.run("v.add_", lambda: v.add_(1))
    w = m.tensor([1.0, 2.0])
    with m.no_grad():
        wv = w[:1]
    w.requires_grad_(True)
    log.flags("wv", wv)
    log.run("wv.mul_", lambda: wv.mul_(2))


def base_written_in_no_grad_after_requiring_grad(m: Any, log: Log) -> None:
    x = m.tensor([1.0, 2.0])
    v = x[1:]
    x.requires_grad_(True)
    with m.no_grad():
        x.mul_(2)
    log.flags("v", v)
    log.run("(v * 3).sum().backward", lambda: (v * 3).sum().backward())
    log.grad("x", x)


# -- 2. a view whose base joins a graph in place after the view was made -----------------------
def base_joins_a_graph(m: Any, log: Log) -> None:
    x2 = m.tensor([-2.0], requires_grad=True)
    x3 = m.tensor([-2.0])
    t4 = x3.view(1)
    before = t4 * 2
    x3.add_(x2)
    log.flags("t4", t4)
    log.flags("before", before)
    log.flags("x3", x3)
    log.run("(t4 * 2).sum().backward", lambda: (t4 * 2).sum().backward())
    log.grad("x2", x2)
    log.grad("t4", t4)


def views_of_a_2d_base_joining_a_graph(m: Any, log: Log) -> None:
    b = m.zeros(2, 3)
    s, st, sl, e = b[1], b.t(), b[:, 1:], b[0:1].expand(3, 3)
    w = m.arange(6.0).reshape(2, 3).requires_grad_()
    b.add_(w)
    for name, t in [("select", s), ("t", st), ("slice", sl), ("expand", e)]:
        log.flags(name, t)
        log.value(f"{name} data", t.detach())
    total = s.sum() * 1 + st.sum() * 2 + sl.sum() * 3 + e.sum() * 4
    log.run("backward", lambda: total.backward())
    log.grad("w", w)
    log.run("s.retain_grad", lambda: s.retain_grad())
    log.value("s.retains_grad", s.retains_grad)


def base_joins_through_another_view(m: Any, log: Log) -> None:
    b = m.zeros(4)
    v1, v2 = b[:2], b[2:]
    w = m.ones(2, requires_grad=True)
    v1.mul_(w)
    log.flags("v2", v2)
    log.flags("b", b)
    v1.add_(w)
    log.flags("v2 again", v2)
    log.run("(v2 * 2).sum().backward", lambda: (v2 * 2).sum().backward())
    log.grad("w", w)


def no_grad_view_of_a_base_joining_a_graph(m: Any, log: Log) -> None:
    x = m.zeros(2)
    with m.no_grad():
        v = x[:1]
    x.add_(m.ones(2, requires_grad=True))
    log.run("v.grad_fn", lambda: graph(v.grad_fn))
    log.run("v.requires_grad", lambda: v.requires_grad)
    log.run("v.is_leaf", lambda: v.is_leaf)


def unbound_views_of_a_base_joining_a_graph(m: Any, log: Log) -> None:
    x = m.zeros(2, 2)
    a, b = x.unbind(0)
    x.add_(m.ones(2, 2, requires_grad=True))
    log.run("a.grad_fn", lambda: graph(a.grad_fn))
    log.run("b.requires_grad", lambda: b.requires_grad)
    c, _ = m.zeros(4).split(2)
    log.run("c.add_ of a tensor requiring grad", lambda: c.add_(m.ones(2, requires_grad=True)))
    with m.no_grad():
        d, _ = m.ones(4, requires_grad=True).chunk(2)
    log.run("no_grad chunk add_", lambda: d.add_(1))


def base_joins_in_no_grad(m: Any, log: Log) -> None:
    x = m.zeros(2)
    v = x[:1]
    y = m.ones(2, requires_grad=True)
    with m.no_grad():
        x.add_(y)
    log.flags("v", v)


def inplace_checks_on_views(m: Any, log: Log) -> None:
    x = m.ones(2, 2, requires_grad=True).clone()
    a, _ = x.unbind()
    log.run("unbound view add_", lambda: a.add_(1))
    leaf = m.ones(2, requires_grad=True)
    with m.no_grad():
        v = leaf.view(2)
    w = v.view(2)
    log.flags("view of a no_grad view", w)
    log.run("view of a no_grad view add_", lambda: w.add_(1))
    y = m.ones(2, requires_grad=True).clone()
    with m.inference_mode():
        iv = y[:1]
    iw = iv.view(1)
    log.run("inference view add_", lambda: iv.add_(1))
    log.run("view of an inference view add_", lambda: iw.add_(1))
    y.add_(1)
    log.run("inference view grad_fn", lambda: graph(iv.grad_fn))
    log.run("view of an inference view grad_fn", lambda: graph(iw.grad_fn))
    b0 = m.zeros(2)
    own = b0[:1].requires_grad_(True)
    log.run("view requiring grad itself add_", lambda: own.add_(1))
    b1 = m.zeros(2)
    with m.no_grad():
        nv = b1[:1]
    log.run("no_grad view add_ of a tensor requiring grad", lambda: nv.add_(m.ones(1, requires_grad=True)))
    b2 = m.zeros(2)
    gv = b2[:1]
    log.run("view add_ of a tensor requiring grad", lambda: gv.add_(m.ones(1, requires_grad=True)))
    log.flags("its base", b2)


def stale_view_grad_fn(m: Any, log: Log) -> None:
    """torch's C++ checks read a view's grad_fn as it is (a leaf until something asks for its
    grad_fn), Python's grad_fn and is_leaf regenerate it first."""
    for touched in (False, True):
        x = m.zeros(2)
        v = x[:1]
        x.add_(m.ones(2, requires_grad=True))
        if touched:
            log.value("is_leaf", v.is_leaf)
        log.run(f"touched={touched} .grad", lambda v=v: v.grad)
        log.run(f"touched={touched} retain_grad", v.retain_grad)
        log.value(f"touched={touched} retains_grad", v.retains_grad)
        log.run(f"touched={touched} add_", lambda v=v: v.add_(1))
        log.run(f"touched={touched} requires_grad_(False)", lambda v=v: v.requires_grad_(False))


def requires_grad_of_a_non_leaf(m: Any, log: Log) -> None:
    z = m.ones(2, requires_grad=True) * 2
    log.run("z.requires_grad = True", lambda: setattr(z, "requires_grad", True))
    log.run("z.requires_grad = False", lambda: setattr(z, "requires_grad", False))
    log.run("z.requires_grad_(True)", lambda: z.requires_grad_(True))
    log.run("z.requires_grad_(False)", lambda: z.requires_grad_(False))
    x = m.zeros(2)
    v = x[:1]
    x.add_(m.ones(2, requires_grad=True))
    log.run("regenerated view requires_grad_(False)", lambda: v.requires_grad_(False))


def hooks_of_a_regenerated_view(m: Any, log: Log) -> None:
    """torch's update_tensor_hooks_on_new_gradfn: the retain_grad hook moves to the new grad_fn,
    the tensor's other hooks stay on the old one."""
    x = m.ones(3, requires_grad=True)
    y = x * 1
    v = y[:2]
    v.retain_grad()
    v.register_hook(lambda g: log.value("hook before the write", g))
    y.mul_(2)
    log.flags("v", v)
    v.register_hook(lambda g: log.value("hook after the write", g))
    log.run("backward", lambda: (v * 3).sum().backward())
    log.grad("v", v)
    log.grad("x", x)
    b = m.zeros(3)
    u = b[1:]
    b.add_(x)
    log.flags("u", u)  # torch 2.13 crashes (segfault) when register_hook is what regenerates it
    u.register_hook(lambda g: log.value("hook on a regenerated view", g))
    log.run("backward through b", lambda: (u * 5).sum().backward())
    log.grad("x", x)


# -- 3. inference mode with the grad modes ----------------------------------------------------
def inference_mode_under_enable_grad(m: Any, log: Log) -> None:
    x0 = m.tensor([-2.0, -2.0], requires_grad=True)
    with m.inference_mode():
        log.value("grad enabled", m.is_grad_enabled())
        t2 = log.run("x0 * 2", lambda: m.mul(x0, 2.0))
        with m.enable_grad():
            log.value("grad enabled inside", m.is_grad_enabled())
            log.value("inference inside", m.is_inference_mode_enabled())
            t3 = log.run("x0.add_", lambda: x0.add_(2.0))
            t4 = log.run("sum", lambda: m.sum(t3))
            log.run("backward", lambda: t4.backward())
            log.run("x0 * x0", lambda: x0 * x0)
        log.run("x0.sub_ in inference", lambda: x0.sub_(1.0))
    log.flags("x0", x0)
    log.grad("x0", x0)
    log.flags("t2", t2)
    log.run("t2 * x0", lambda: t2 * x0)
    log.run("x0 * t2 backward", lambda: (x0 * t2).sum().backward())
    log.run("t2.add_ outside", lambda: t2.add_(1))


def grad_modes_around_inference_mode(m: Any, log: Log) -> None:
    x = m.ones(2, requires_grad=True)
    contexts = {
        "no_grad > inference_mode": lambda: (m.no_grad(), m.inference_mode()),
        "inference_mode > no_grad": lambda: (m.inference_mode(), m.no_grad()),
        "inference_mode > set_grad_enabled(True)": lambda: (m.inference_mode(), m.set_grad_enabled(True)),
        "inference_mode > inference_mode(False)": lambda: (m.inference_mode(), m.inference_mode(False)),
        "inference_mode(False) > enable_grad": lambda: (m.inference_mode(False), m.enable_grad()),
        "no_grad > inference_mode(False)": lambda: (m.no_grad(), m.inference_mode(False)),
    }
    for name, make in contexts.items():
        outer, inner = make()
        with outer, inner:
            log.value(f"{name}: grad", m.is_grad_enabled())
            log.value(f"{name}: inference", m.is_inference_mode_enabled())
            log.run(f"{name}: x * 2", lambda: x * 2)
        log.value(f"{name}: grad after", m.is_grad_enabled())


def views_in_inference_mode(m: Any, log: Log) -> None:
    x = m.ones(3, requires_grad=True)
    n = m.ones(3)
    with m.inference_mode():
        v = x[:2]
        nv = n[1:]
        fresh = m.ones(2)
        fv = fresh.view(2)
        log.run("n[1:].add_ inside", lambda: nv.add_(1))
        log.run("requires_grad_ inside", lambda: m.ones(2).requires_grad_())
    for name, t in [("x[:2]", v), ("n[1:]", nv), ("fresh", fresh), ("fresh.view", fv)]:
        log.flags(name, t)
    log.run("n[1:].add_ outside", lambda: nv.add_(1))
    log.run("n._version", lambda: n._version)
    log.run("x[:2] * 2", lambda: v * 2)


def inference_tensors_outside(m: Any, log: Log) -> None:
    with m.inference_mode():
        i = m.ones(2)
        iv = i[:1]
        log.run("requires_grad_ inside", lambda: m.ones(2).requires_grad_().requires_grad)
        made = m.ones(2, requires_grad=True)
        log.flags("made requiring grad inside", made)
        log.run("made * 2 inside", lambda: made * 2)
    log.flags("view of an inference tensor", iv)
    w = m.ones(2, requires_grad=True)
    log.run("i.requires_grad_() outside", lambda: i.requires_grad_())
    log.run("w * i", lambda: w * i)
    log.run("w + i", lambda: w + i)
    log.run("i.add_(1) outside", lambda: i.add_(1))
    log.run("i._version", lambda: i._version)
    with m.no_grad():
        log.run("i.add_(1) in no_grad", lambda: i.add_(1))
    n = m.ones(2)
    log.run("n.add_(i)", lambda: n.add_(i))
    log.run("w.clone().mul_(i)", lambda: w.clone().mul_(i))
    log.run("made * 3 outside", lambda: (made * 3).sum().backward())
    log.grad("made", made)
    log.run("i.clone()", lambda: i.clone())
    log.run("i.detach()", lambda: i.detach())
    log.run("i.view(2)", lambda: i.view(2))
    log.run("i.data", lambda: i.data)
    log.run("Variable(i)", lambda: m.autograd.Variable(i))
    with m.inference_mode():
        log.run("n.detach() inside", lambda: n.detach())
        log.run("n.data inside", lambda: n.data)
        log.run("n.clone() inside", lambda: n.clone())


def inference_mode_decorated(m: Any, log: Log) -> None:
    x = m.ones(2, requires_grad=True)

    @m.inference_mode()
    def double(t: Any) -> Any:
        return t * 2, m.is_inference_mode_enabled(), m.is_grad_enabled()

    @m.inference_mode(False)
    def triple(t: Any) -> Any:
        return t * 3, m.is_inference_mode_enabled(), m.is_grad_enabled()

    log.run("decorated", lambda: double(x)[1:])
    log.run("decorated result", lambda: double(x)[0])
    with m.inference_mode():
        log.run("inference_mode(False) inside", lambda: triple(x)[1:])
        log.run("its result", lambda: triple(x)[0])
    log.value("after", (m.is_inference_mode_enabled(), m.is_grad_enabled()))


SCENARIOS: dict[str, Callable[[Any, Log], None]] = {
    f.__name__: f
    for f in [
        base_requires_grad_after_the_view,
        gradients_asked_of_such_a_view,
        backward_to_such_a_view,
        saved_by_nodes_of_such_a_view,
        saved_tensors_checked_without_a_gradient,
        nested_views_follow_the_base,
        requires_grad_set_on_such_a_view,
        view_made_in_no_grad,
        base_written_in_no_grad_after_requiring_grad,
        base_joins_a_graph,
        views_of_a_2d_base_joining_a_graph,
        base_joins_through_another_view,
        no_grad_view_of_a_base_joining_a_graph,
        unbound_views_of_a_base_joining_a_graph,
        base_joins_in_no_grad,
        inplace_checks_on_views,
        stale_view_grad_fn,
        hooks_of_a_regenerated_view,
        requires_grad_of_a_non_leaf,
        inference_mode_under_enable_grad,
        grad_modes_around_inference_mode,
        views_in_inference_mode,
        inference_tensors_outside,
        inference_mode_decorated,
    ]
}


def observed(m: Any, scenario: str) -> list[str]:
    log = Log(m)
    SCENARIOS[scenario](m, log)
    return log.lines


# scenarios impl does not match yet: strict xfails naming the reason
DIVERGENCES: dict[str, str] = {}


def _scenario_param(name: str) -> Any:
    """A scenario, a strict xfail giving the reason when it is a known divergence."""
    reason = DIVERGENCES.get(name)
    return pytest.param(name, marks=[pytest.mark.xfail(strict=True, reason=reason)] if reason else [])


@pytest.mark.parametrize("scenario", [_scenario_param(name) for name in SCENARIOS])
def test_view_flags_and_inference_mode_match_torch(scenario: str) -> None:
    assert observed(impl, scenario) == observed(torch, scenario)
