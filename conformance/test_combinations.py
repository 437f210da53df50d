"""Combinations (oracle/rules/combinations.py, family "combinations"): programs that combine what
real training code combines. The options of backward and autograd.grad, zero_grad's kinds, the
optimisers' options and module calls are combined pairwise, guaranteed: each test is parametrized
by the rows of a pairwise covering array (``oracle.pairwise``), hypothesis drawing the rest (the
tree, the values). Module trees tie parameters and share submodules; a module is called several
times with hooks; a graph is retained across an optimiser step."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.pairwise import covering_rows
from oracle.program import (
    AssignAttr,
    Backward,
    Grad,
    Leaf,
    Module,
    ModuleMode,
    ModuleRequiresGrad,
    ModuleZeroGrad,
    Observe,
    ObserveLayout,
    ObserveModule,
    Op,
    Optimizer,
    OptimizerStep,
    OptimizerZeroGrad,
    Program,
    Ref,
    ZeroGrad,
    module_nodes,
)
from oracle.strategies import ModuleBuilder

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# the options each rule combines, which its programs must all exercise (oracle.coverage)
ZERO_GRAD_TARGETS = coverage.keywords("Module.zero_grad", "Optimizer.zero_grad")
COVERAGE: dict[str, coverage.Targets] = {
    "COMB-001": coverage.Targets(
        coverage.keywords("Tensor.backward", only=("retain_graph", "create_graph", "inputs", "gradient")),
        ZERO_GRAD_TARGETS,
    ),
    "COMB-002": coverage.Targets(
        coverage.keywords("autograd.grad", only=(
            "retain_graph", "create_graph", "grad_outputs", "allow_unused", "materialize_grads")),
        ZERO_GRAD_TARGETS,
    ),
}

# zero_grad's kinds: (what zeroes, set_to_none): each parameter's ``.grad`` (``p.grad = None`` or
# ``p.grad.zero_()``), ``module.zero_grad(set_to_none=)``, ``optimizer.zero_grad(set_to_none=)``
ZERO_GRADS = tuple((kind, flag) for kind in ("tensor", "module", "optimizer") for flag in (True, False))
# optimisers with options that change their update, several at once; learning rates and eps that keep
# a few steps of float32 arithmetic well conditioned (see conformance/test_optim.py)
OPTIMIZER_CONFIGS: tuple[tuple[str, dict], ...] = (
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.01, "momentum": 0.5, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.01, "maximize": True}),
    ("Adam", {"lr": 0.1, "eps": 0.1, "betas": (0.8, 0.5), "amsgrad": True}),
    ("Adam", {"lr": 0.01, "eps": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.1, "eps": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "eps": 0.5, "weight_decay": 0.1, "betas": (0.8, 0.5)}),
)
# small values for gradients and grad_outputs
SEEDS = (-1.0, -0.5, 0.5, 1.0, 2.0)

# the factors of a training step differentiated by backward, and by autograd.grad: options, then
# zero_grad's kind, the optimiser, and whether the module is called once or twice per step
BACKWARD_FACTORS: dict[str, tuple] = {
    "retain_graph": (None, True, False),
    "create_graph": (False, True),
    "inputs": (False, True),
    "gradient": (False, True),
    "zero_grad": ZERO_GRADS,
    "optimizer": OPTIMIZER_CONFIGS,
    "calls": (1, 2),
}
GRAD_FACTORS: dict[str, tuple] = {
    "retain_graph": (None, True, False),
    "create_graph": (False, True),
    "grad_outputs": (False, True),
    "allow_unused": (None, True, False),
    "materialize_grads": (False, True),
    "unused": (False, True),
    "zero_grad": ZERO_GRADS,
    "optimizer": OPTIMIZER_CONFIGS,
    "calls": (1, 2),
}
BACKWARD_ROWS = covering_rows(BACKWARD_FACTORS)
GRAD_ROWS = covering_rows(GRAD_FACTORS)


def row_id(row: dict[str, Any]) -> str:
    """A readable test id: the options set, zero_grad's kind, the optimiser and its options."""
    parts = []
    for key, value in row.items():
        if key == "zero_grad":
            parts.append(f"{value[0]}_zero_grad{'' if value[1] else '(False)'}")
        elif key == "optimizer":
            parts.append(value[0] + "(" + ",".join(k for k in value[1] if k not in ("lr", "eps")) + ")")
        elif key == "calls":
            parts.append(f"{value}call{'s' if value > 1 else ''}")
        elif value is True:
            parts.append(key)
        elif value is False and None in BACKWARD_FACTORS.get(key, GRAD_FACTORS.get(key, ())):
            parts.append(f"{key}=False")  # given, not left at its default (None)
    return "-".join(parts)


def desynchronise(draw: Any, salt: int) -> None:
    """``salt`` draws to throw away. The ci profile derives a test's examples from the test function,
    the same for every parametrized row, so that each row would draw the very same trees and values
    (apart from what the row sets): throwing away a number of draws that differs from row to row
    (its index) makes rows draw different ones."""
    draw(st.lists(st.booleans(), min_size=salt, max_size=salt))


# -- training steps ---------------------------------------------------------------------------------
class Training:
    """A training loop under construction: a Sequential root (a Linear(3, 3) then a random subtree
    of bounded gain and no kinks) on (2, 3) inputs, an MSE loss against a fixed target, an optimiser
    of the row's config over the root's ``parameters()``; ``zero_grad`` of the row's kind."""

    def __init__(self, draw: Any, row: dict[str, Any], salt: int) -> None:
        self.b = b = ModuleBuilder(draw, bounded_gain=True, smooth=True)
        self.row = row
        desynchronise(draw, salt)
        first = {"cls": "Linear", "args": [3, 3],
                 "params": {"weight": b.weights((3, 3), fan_in=3), "bias": b.weights((3,))}}
        sub, self.out_shape = b.subtree((2, 3), depth=1)
        self.net = b.fresh("m")
        step = Module(self.net, "Sequential", children=[first, sub])
        b.add_module(step)
        if any(n.cls == "Dropout" and n.kwargs.get("p") == 0.5 for n in module_nodes(step)):
            b.steps.append(ModuleMode(self.net, False))
        self.params = list(b.params)
        self.inputs = [b.input((2, 3)) for _ in range(row["calls"])]
        cls, kwargs = row["optimizer"]
        self.optimizer = b.fresh("opt")
        b.steps.append(Optimizer(self.optimizer, cls, [], dict(kwargs), module=self.net))

    def loss(self, reduction: str) -> str:
        """The root called on each input (the outputs added), then MSELoss with ``reduction``."""
        b = self.b
        outs = [b.call(self.net, [x], self.out_shape) for x in self.inputs]
        out = outs[0]
        for other in outs[1:]:
            total = b.fresh("t")
            out = b.bind(total, self.out_shape, Op(total, "add", [Ref(out), Ref(other)]), tracked=True)
        prediction, target = b.loss_inputs(out, "MSELoss")
        return b.apply_loss("MSELoss", prediction, target, reduction)

    def seed(self, shape: tuple[int, ...]) -> str:
        """A leaf of ``shape`` to seed a backward pass with (``gradient``, ``grad_outputs``)."""
        name = self.b.fresh("s")

        def values(shape: tuple[int, ...]) -> Any:
            return self.b.pick(SEEDS) if not shape else [values(shape[1:]) for _ in range(shape[0])]

        return self.b.bind(name, shape, Leaf(name, values(shape)))

    def step(self, again: Backward | None = None) -> None:
        """The end of a training step, every parameter observed after each part: the optimiser's
        step, the backward ``again`` (if any), zero_grad of the row's kind."""
        steps, params = self.b.steps, self.params
        steps.extend(Observe(p) for p in params)
        steps.append(OptimizerStep(self.optimizer))
        steps.extend(Observe(p) for p in params)
        if again is not None:
            steps.append(again)
            steps.extend(Observe(p) for p in params)
        kind, set_to_none = self.row["zero_grad"]
        if kind == "tensor":
            steps.extend(ZeroGrad(p, set_to_none) for p in params)
        elif kind == "module":
            steps.append(ModuleZeroGrad(self.net, set_to_none))
        else:
            steps.append(OptimizerZeroGrad(self.optimizer, set_to_none))
        steps.extend(Observe(p) for p in params)


@st.composite
def backward_loops(draw: Any, row: dict[str, Any], salt: int = 0) -> Program:
    """Two training steps: forward, backward with the row's options (``gradient``: from the
    unreduced loss; ``inputs``: a drawn subset of the parameters), the optimiser's step, backward
    again through the same graph (it raises unless the graph was retained, and then where the step
    modified a tensor a node saved), zero_grad of the row's kind; parameters and their ``.grad``
    observed after each."""
    t = Training(draw, row, salt)
    b = t.b
    inputs = None
    if row["inputs"]:
        inputs = draw(st.lists(st.sampled_from(t.params), min_size=1, max_size=2, unique=True))
    for _ in range(2):
        loss = t.loss("none" if row["gradient"] else b.pick(("mean", "sum")))
        gradient = t.seed(b.shapes[loss]) if row["gradient"] else None
        b.steps.append(Backward(loss, gradient, row["retain_graph"], row["create_graph"], inputs))
        t.step(again=Backward(loss, gradient, inputs=inputs))
    return b.program()


@pytest.mark.rule("COMB-001")
@pytest.mark.parametrize("row", BACKWARD_ROWS, ids=row_id)
@examples(0.02)  # each row: 2 programs in ci
@given(data=st.data())
def test_backward_options_in_pairs(
    row: dict[str, Any], data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    program = data.draw(backward_loops(row, BACKWARD_ROWS.index(row)), label="program")
    check(program, backend, reference)


def grad_fails(row: dict[str, Any]) -> bool:
    """Whether autograd.grad with the row's options raises: materialize_grads with
    allow_unused=False, or an unused input that is not allowed."""
    allow_unused = row["materialize_grads"] if row["allow_unused"] is None else row["allow_unused"]
    return (row["materialize_grads"] and row["allow_unused"] is False) or (row["unused"] and not allow_unused)


@st.composite
def grad_loops(draw: Any, row: dict[str, Any], salt: int = 0) -> Program:
    """Two training steps whose loss adds a gradient penalty: forward, autograd.grad of the loss
    with the row's options (``grad_outputs``: for the unreduced loss; ``unused``: an input the
    loss does not use, whose gradient is None, zeros or an error) with respect to the first layer's
    parameters (and maybe another), then backward from the loss plus the squared norm of the first
    gradient through the same graph (which needs it retained; with create_graph, through the
    gradients too; where it was not retained, the step backpropagates a new forward), the
    optimiser's step and zero_grad of the row's kind."""
    t = Training(draw, row, salt)
    b = t.b
    unused = None
    if row["unused"]:
        unused = b.fresh("u")
        b.bind(unused, (3,), Leaf(unused, b.data((3,)), "float32", True), tracked=True)
    wrt = draw(st.lists(st.sampled_from(t.params[2:]), max_size=1)) if len(t.params) > 2 else []
    wrt = [*t.params[:2], *wrt, *([unused] if unused else [])]
    kept = row["retain_graph"] or (row["retain_graph"] is None and row["create_graph"])
    for _ in range(2):
        loss = t.loss("none" if row["grad_outputs"] else b.pick(("mean", "sum")))
        grad_outputs = [t.seed(b.shapes[loss])] if row["grad_outputs"] else None
        outs = [b.fresh("g") for _ in wrt]
        b.steps.append(Grad(outs, [loss], list(wrt), grad_outputs, row["retain_graph"], row["create_graph"],
                            row["allow_unused"], row["materialize_grads"]))
        if b.shapes[loss]:
            total = b.fresh("t")
            loss = b.bind(total, (), Op(total, "sum", [Ref(loss)]), tracked=True)
        if not grad_fails(row):
            square, norm, scaled, total = (b.fresh("t") for _ in range(4))
            b.steps.append(Op(square, "mul", [Ref(outs[0]), Ref(outs[0])]))
            b.steps.append(Op(norm, "sum", [Ref(square)]))
            b.steps.append(Op(scaled, "mul", [Ref(norm), 0.5]))
            loss = b.bind(total, (), Op(total, "add", [Ref(loss), Ref(scaled)]), tracked=True)
        b.steps.append(Backward(loss))
        if not kept:  # that backward raised: the training step backpropagates a forward of its own
            b.steps.append(Backward(t.loss(b.pick(("mean", "sum")))))
        t.step()
    return b.program()


@pytest.mark.rule("COMB-002")
@pytest.mark.parametrize("row", GRAD_ROWS, ids=row_id)
@examples(0.02)  # each row: 2 programs in ci
@given(data=st.data())
def test_grad_options_in_pairs(
    row: dict[str, Any], data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(grad_loops(row, GRAD_ROWS.index(row)), label="program"), backend, reference)


# -- tied parameters and shared submodules ------------------------------------------------------
TIES = ("embedding-head", "head-embedding", "linear-linear", "two-branch")
SHARES = ("sequential", "module-list", "two-branch")


def linear(b: ModuleBuilder, n: int = 3, k: int = 3) -> dict:
    """A Linear(n, k) spec with a bias and weights of bounded gain."""
    return {"cls": "Linear", "args": [n, k], "params": {"weight": b.weights((k, n), fan_in=n),
                                                         "bias": b.weights((k,))}}


def shared_tree(b: ModuleBuilder, layout: str, tie: bool) -> tuple[str, list[str], str]:
    """Bind a module tree of ``layout`` whose parameter (``tie``) or submodule is held at two
    places, made so by ``assign_attr`` steps; returns its name, the names of its parameters in
    place order with repeats (as ``named_parameters(remove_duplicate=False)`` lists them) and the
    kind of input it takes ("indices" or "values")."""
    m = b.fresh("m")
    if layout in ("embedding-head", "head-embedding"):
        embedding = {"cls": "Embedding", "args": [5, 3], "params": {"weight": b.weights((5, 3))}}
        b.add_module(Module(m, "Sequential", children=[embedding, linear(b, 3, 5)]))
        src, dst = (f"{m}_0", f"{m}_1") if layout == "embedding-head" else (f"{m}_1", f"{m}_0")
        b.steps.append(AssignAttr(dst, "weight", f"{src}.weight"))
        return m, [f"{m}_0.weight", f"{m}_1.weight", f"{m}_1.bias"], "indices"
    activation = {"cls": b.pick(("Tanh", "Sigmoid"))}
    if layout == "two-branch":
        b.add_module(Module(m, "TwoBranch", children={"left": linear(b), "right": linear(b)}))
        first, second = f"{m}_left", f"{m}_right"
        if not tie:
            b.steps.append(AssignAttr(m, "right", first))
    elif layout == "module-list":
        layers = {"cls": "ModuleList", "children": [linear(b), activation, linear(b)]}
        b.add_module(Module(m, "Stack", children={"layers": layers}))
        first, second = f"{m}_layers_0", f"{m}_layers_2"
        b.steps.append(AssignAttr(f"{m}_layers", "2", first))
    else:
        b.add_module(Module(m, "Sequential", children=[linear(b), activation, linear(b)]))
        first, second = f"{m}_0", f"{m}_2"
        if not tie:
            b.steps.append(AssignAttr(m, "2", first))
    if not tie:
        return m, [f"{first}.weight", f"{first}.bias"] * 2, "values"
    tied = ["weight", "bias"] if b.coin() else ["weight"]
    b.steps.extend(AssignAttr(second, name, f"{first}.{name}") for name in tied)
    return m, [f"{first}.weight", f"{first}.bias", f"{second}.weight", f"{second}.bias"], "values"


def zero_grad(b: ModuleBuilder, module: str, optimizer: str, set_to_none: bool) -> None:
    """``module.zero_grad(set_to_none=)`` or ``optimizer.zero_grad(set_to_none=)``, drawn."""
    if b.coin():
        b.steps.append(ModuleZeroGrad(module, set_to_none))
    else:
        b.steps.append(OptimizerZeroGrad(optimizer, set_to_none))


@st.composite
def shared_trees(draw: Any, layout: str, tie: bool) -> Program:
    """A tree of ``layout`` with a tied parameter (``tie``) or a shared submodule, observed
    (named_parameters, state_dict keys, named_modules), an optimiser of a drawn config over its
    ``parameters()`` or over its parameters listed place by place (the shared ones twice), then two
    training steps: forward on indices (Embedding first, cross-entropy against class targets) or
    values (MSE), backward, the step, zero_grad of the module or the optimiser; every parameter
    (under each of its names) observed after backward and after the step."""
    b = ModuleBuilder(draw, bounded_gain=True, smooth=True)
    desynchronise(draw, (TIES if tie else SHARES).index(layout))
    net, places, takes = shared_tree(b, layout, tie)
    b.steps.append(ObserveModule(net))
    cls, kwargs = b.pick(OPTIMIZER_CONFIGS)
    optimizer = b.fresh("opt")
    if b.coin():
        b.steps.append(Optimizer(optimizer, cls, [], dict(kwargs), module=net))
    else:
        b.steps.append(Optimizer(optimizer, cls, places, dict(kwargs)))
    names = list(dict.fromkeys(places))
    for _ in range(2):
        if takes == "indices":
            x, y = b.fresh("i"), b.fresh("y")
            b.bind(x, (4,), Leaf(x, draw(st.lists(st.integers(0, 4), min_size=4, max_size=4)), "int64"))
            b.bind(y, (4,), Leaf(y, draw(st.lists(st.integers(0, 4), min_size=4, max_size=4)), "int64"))
            out = b.call(net, [x], (4, 5))
            loss = b.apply_loss("CrossEntropyLoss", out, y, b.pick(("mean", "sum")))
        else:
            out = b.call(net, [b.input((2, 3))], (2, 3))
            loss = b.loss(out, "MSELoss")
            if b.shapes[loss]:
                total = b.fresh("t")
                loss = b.bind(total, (), Op(total, "sum", [Ref(loss)]), tracked=True)
        b.steps.append(Backward(loss))
        b.steps.extend(Observe(n) for n in names)
        b.steps.append(OptimizerStep(optimizer))
        b.steps.extend(Observe(n) for n in names)
        zero_grad(b, net, optimizer, b.coin())
    return b.program()


@pytest.mark.rule("COMB-003")
@pytest.mark.parametrize("layout", TIES)
@examples(0.1)  # each layout: 10 programs in ci
@given(data=st.data())
def test_tied_parameters(layout: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(shared_trees(layout, True), label="program"), backend, reference)


@pytest.mark.rule("COMB-004")
@pytest.mark.parametrize("layout", SHARES)
@examples(0.1)  # each layout: 10 programs in ci
@given(data=st.data())
def test_shared_submodules(layout: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(shared_trees(layout, False), label="program"), backend, reference)


# -- a module called several times, with hooks ------------------------------------------------
REUSES = ("separate", "chained", "shared", "tree-and-direct")
HOOK_KINDS = ("forward_pre", "forward", "full_backward_pre", "full_backward")


@st.composite
def reused_modules(draw: Any, how: str) -> Program:
    """A Linear(3, 3) with forward (pre-)hooks and full backward (pre-)hooks (logging, or scaling
    what they receive), called several times: on separate inputs, on its own output, at two places
    of a Sequential (``assign_attr``), or inside a tree and directly; backward from the sum of the
    outputs (retaining the graph or not), maybe a second backward; every tensor observed."""
    b = ModuleBuilder(draw)
    desynchronise(draw, REUSES.index(how))
    shape = b.pick(((3,), (2, 3)))
    m = b.fresh("m")
    if how in ("separate", "chained"):
        b.add_module(Module(m, "Linear", [3, 3], linear(b)["params"]))
        hooked, root = m, m
    elif how == "shared":
        b.add_module(Module(m, "Sequential", children=[linear(b), {"cls": "Tanh"}, linear(b)]))
        b.steps.append(AssignAttr(m, "2", f"{m}_0"))
        hooked, root = f"{m}_0", m
    else:
        b.add_module(Module(m, "Sequential", children=[linear(b), {"cls": "Sigmoid"}]))
        hooked, root = f"{m}_0", m
    kinds = draw(st.lists(st.sampled_from(HOOK_KINDS), min_size=2, max_size=5))
    for on in kinds:
        target = root if root != hooked and draw(st.integers(0, 3)) == 0 else hooked
        b.module_hook(target, on, ("log", "log", "scale"))
    outs: list[str] = []
    if how == "chained":
        out = b.input(shape)
        for _ in range(draw(st.integers(2, 3))):
            out = b.call(m, [out], shape)
        outs.append(out)
    else:
        for _ in range(draw(st.integers(1 if how != "separate" else 2, 3))):
            x = b.input(shape)
            outs.append(b.call(root, [x], shape))
            if how == "tree-and-direct":
                outs.append(b.call(hooked, [x], shape))
    total = b.summed(outs)
    retain = b.coin()
    b.steps.append(Backward(total, retain_graph=retain or None))
    if retain and b.coin():
        b.steps.append(Backward(total))
    b.steps.extend(Observe(n) for n in b.shapes)
    return b.program()


@pytest.mark.rule("COMB-005")
@pytest.mark.parametrize("how", REUSES)
@examples(0.1)  # each way: 10 programs in ci
@given(data=st.data())
def test_module_called_several_times_with_hooks(
    how: str, data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(reused_modules(how), label="program"), backend, reference)


# -- a graph retained across an optimiser step --------------------------------------------------
# first-layer: one Linear on an input that needs no grad (its weight is not saved);
# input-requires-grad: one Linear whose input requires grad (its weight is saved);
# deep: Linear, activation, Linear (the second Linear's weight is saved);
# no-gradients: deep, zero_grad before the step (set_to_none: the step changes nothing);
# frozen: deep with the second Linear frozen (saved, but the step does not touch it)
RETAINED = ("first-layer", "input-requires-grad", "deep", "no-gradients", "frozen")


@st.composite
def retained_across_steps(draw: Any, layout: str) -> Program:
    """A network of ``layout`` and an MSE loss, backward with retain_graph=True, an optimiser step
    of a drawn config (parameters and their versions observed), maybe zero_grad, then backward
    again through the retained graph (retaining it or not), maybe another step and backward."""
    b = ModuleBuilder(draw, bounded_gain=True, smooth=True)
    desynchronise(draw, RETAINED.index(layout))
    m = b.fresh("m")
    if layout in ("first-layer", "input-requires-grad"):
        b.add_module(Module(m, "Linear", [3, 3], linear(b)["params"]))
    else:
        activation = {"cls": b.pick(("Tanh", "Sigmoid"))}
        b.add_module(Module(m, "Sequential", children=[linear(b), activation, linear(b)]))
    if layout == "frozen":
        b.steps.append(ModuleRequiresGrad(f"{m}_2", False))
    x = b.input((2, 3), requires_grad=layout == "input-requires-grad")
    cls, kwargs = b.pick(OPTIMIZER_CONFIGS)
    optimizer = b.fresh("opt")
    b.steps.append(Optimizer(optimizer, cls, [], dict(kwargs), module=m))
    loss = b.loss(b.call(m, [x], (2, 3)), "MSELoss")
    gradient = None
    if b.shapes[loss]:
        gradient = b.fresh("s")
        b.bind(gradient, (2, 3), Leaf(gradient, b.data((2, 3))))

    def observe() -> None:
        b.steps.extend(Observe(p) for p in b.params)

    b.steps.append(Backward(loss, gradient, retain_graph=True))
    observe()
    if layout == "no-gradients":
        zero_grad(b, m, optimizer, draw(st.integers(0, 3)) > 0)
    for _ in range(draw(st.integers(1, 2))):
        b.steps.append(OptimizerStep(optimizer))
        b.steps.extend(ObserveLayout(p) for p in b.params)
        if b.coin():
            zero_grad(b, m, optimizer, b.coin())
        b.steps.append(Backward(loss, gradient, retain_graph=b.coin() or None))
        observe()
    return b.program()


@pytest.mark.rule("COMB-006")
@pytest.mark.parametrize("layout", RETAINED)
@examples(0.1)  # each layout: 10 programs in ci
@given(data=st.data())
def test_retain_graph_across_an_optimizer_step(
    layout: str, data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(retained_across_steps(layout), label="program"), backend, reference)
