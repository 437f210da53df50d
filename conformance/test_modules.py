"""Modules and losses (oracle/rules/modules.py, family "modules and losses"): random module trees,
the nn.Module API seen through a trace, zero_grad, Dropout modes and every loss with every
reduction agree with torch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    Backward,
    Grad,
    Leaf,
    Module,
    ModuleMode,
    ModuleZeroGrad,
    Observe,
    ObserveGraph,
    ObserveModule,
    Op,
    Program,
    Ref,
)
from oracle.strategies import (
    ACTIVATION_LAYERS,
    EMBEDDING_OPTIONS,
    EMBEDDING_VALUES,
    TREE_INPUTS,
    ModuleBuilder,
    backprop_twice,
)

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}


@st.composite
def trees(draw: Any) -> Program:
    """A random module tree called once to three times on inputs that may require grad, the graph
    of the last output observed, then backward and an observation of every tensor."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    net, out_shape = b.tree(shape, depth=draw(st.integers(1, 3)))
    for _ in range(draw(st.integers(1, 3))):
        b.call(net, [b.input(shape)], out_shape)
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-001")
@settings(deadline=None)
@given(program=trees())
def test_module_trees_compute_like_torch(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def module_api(draw: Any) -> Program:
    """A tree observed (parameters, state_dict keys, training flags) before and after train()/eval()
    of the root or of a submodule."""
    b = ModuleBuilder(draw)
    net, _ = b.tree(b.pick(TREE_INPUTS), depth=3)
    b.steps.append(ObserveModule(net))
    for _ in range(draw(st.integers(1, 3))):
        b.steps.append(ModuleMode(b.pick(b.modules_of[net]), b.coin()))
        b.steps.append(ObserveModule(b.pick(b.modules_of[net])))
    return b.program()


@pytest.mark.rule("MOD-002")
@settings(deadline=None)
@given(program=module_api())
def test_parameters_state_dict_and_training_flags(
    program: Program, backend: Backend, reference: Backend
) -> None:
    check(program, backend, reference)


@st.composite
def accumulated(draw: Any) -> Program:
    """A tree trained by hand: forward and backward two or three times, with module zero_grad
    (set_to_none or not) between some of them, parameters' .grad observed after each (None or
    zeros) and after each backward (seed 001)."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    x = b.input(shape)
    net, out_shape = b.tree(shape)
    for _ in range(draw(st.integers(2, 3))):
        if b.coin():
            b.steps.append(ModuleZeroGrad(net, b.coin()))
            b.steps.extend(Observe(p) for p in b.params)
        out = b.call(net, [x], out_shape)
        total = b.fresh("t")
        b.bind(total, (), Op(total, "sum", [Ref(out)]))
        b.steps.append(Backward(total))
        b.steps.extend(Observe(p) for p in b.params)
    return b.program()


@pytest.mark.rule("MOD-003")
@settings(deadline=None)
@given(program=accumulated())
def test_zero_grad_stops_accumulation(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# each loss class with the kind of target it takes (CrossEntropyLoss: class indices or probabilities)
LOSS_KINDS = (
    ("MSELoss", None), ("L1Loss", None), ("CrossEntropyLoss", False), ("CrossEntropyLoss", True),
    ("NLLLoss", None), ("BCELoss", None), ("BCEWithLogitsLoss", None),
)
LOSS_IDS = [cls + {True: "-probabilities", False: "-indices"}.get(soft, "") for cls, soft in LOSS_KINDS]


def combine(b: ModuleBuilder, op: str, inputs: list[str], shape: tuple[int, ...]) -> str:
    """``op`` of the tensors named ``inputs``, bound to a fresh name of ``shape``."""
    out = b.fresh("t")
    return b.bind(out, shape, Op(out, op, [Ref(name) for name in inputs]), tracked=True)


@st.composite
def losses(draw: Any, kind: tuple[str, bool | None] | None = None) -> Program:
    """A loss of ``kind`` (or one drawn), its class and whether a CrossEntropyLoss takes
    probabilities (``LOSS_KINDS``), with every reduction
    on one prediction (a leaf, or a Linear layer's output) and a target of the kind it takes
    (sometimes requiring grad); backward from the sum of the three values, the unreduced one
    weighted per element first, so each element's gradient flows back with its own incoming
    gradient."""
    cls, soft = kind or draw(st.sampled_from(LOSS_KINDS))
    b = ModuleBuilder(draw)
    shape = b.pick(((3,), (2, 3), (4, 2)))
    prediction = b.input(shape, requires_grad=b.draw(st.integers(0, 3)) > 0)
    if b.coin():
        net, out_shape = b.tree(shape, depth=0)
        if len(out_shape) == len(shape) and out_shape[-1] > 1:
            prediction = b.call(net, [prediction], out_shape)
    prediction, target = b.loss_inputs(prediction, cls, soft, target_grad=b.draw(st.integers(0, 3)) == 0)
    mean, total, none = (b.apply_loss(cls, prediction, target, r) for r in ("mean", "sum", "none"))
    weights = b.input(b.shapes[none], requires_grad=False)
    none = combine(b, "mul", [none, weights], b.shapes[none])
    for term in (combine(b, "sum", [none], ()), mean):
        total = combine(b, "add", [total, term], ())
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-004")
@pytest.mark.parametrize("kind", LOSS_KINDS, ids=LOSS_IDS)
@examples(0.15)  # each kind: about 1/7 of the examples
@given(data=st.data())
def test_losses_with_every_reduction(
    kind: tuple[str, bool | None], data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(losses(kind), label="program"), backend, reference)


@st.composite
def dropouts(draw: Any) -> Program:
    """Dropout with p=0 or p=1 in train mode, any p in eval mode, switched back and forth."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    x = b.input(shape)
    name = b.fresh("m")
    p = b.pick((0.0, 1.0, 0.5))
    b.add_module(Module(name, "Dropout", kwargs={"p": p}))
    train = p != 0.5 and b.coin()
    for _ in range(draw(st.integers(1, 3))):
        b.steps.append(ModuleMode(name, train))
        b.call(name, [x], shape)
        train = p != 0.5 and not train
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-005")
@settings(deadline=None)
@given(program=dropouts())
def test_dropout_modes(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


@st.composite
def conv_layers(draw: Any, mode: str | None = None, same: bool | None = None) -> Program:
    """One Conv2d with padding_mode ``mode``, padding 'same' (``same``) or else one of ints, pairs
    and 'valid' (each drawn when not given), and the other options drawn at random
    (``ModuleBuilder.conv2d``: kernel, stride, dilation, groups, bias), sometimes followed by a ReLU
    or LeakyReLU, maybe in place, called once or twice on batched or unbatched images. Inputs and
    weights are small multiples of 0.5, so float32 arithmetic is exact and any difference is a
    rule, not rounding."""
    b = ModuleBuilder(draw)
    batch = b.pick(((), (1,), (2,)))
    shape = (*batch, b.pick((1, 2, 2, 4)), b.pick((3, 4, 5)), b.pick((3, 4, 5)))
    conv, out = b.conv2d(shape, mode=mode, same=same)
    layers = [conv]
    activation = b.pick((None, "ReLU", "LeakyReLU"))
    if activation:
        layers.append({"cls": activation, "kwargs": b.inplace_flag(activation)})
    name = b.fresh("m")
    b.add_module(Module(name, "Sequential", [], {}, {}, layers))
    for _ in range(draw(st.integers(1, 2))):
        b.call(name, [b.input(shape)], out)
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-006")
@pytest.mark.parametrize("same", (False, True), ids=("numbers-or-valid", "same"))
@pytest.mark.parametrize("mode", PADDING_MODES)
@examples(0.25)  # each padding mode, with padding 'same' or not: a quarter of the examples
@given(data=st.data())
def test_conv2d_options_and_inplace_activations(
    mode: str, same: bool, data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(conv_layers(mode, same), label="program"), backend, reference)


@st.composite
def activation_layers(draw: Any, cls: str) -> Program:
    """The activation layer ``cls`` with its options drawn (``ModuleBuilder.activation_options``:
    in place or not, alpha, beta and threshold, bounds, approximate) on float32 values at its
    edges (``activation_values``), through a clone (an in-place layer may not write a leaf), called
    once or twice; the forward graph observed, the gradient taken with create_graph=True (torch's
    backward ops: GeluBackwardBackward0, EluBackwardBackward0 ..., or SiLU's and Mish's composite
    formulas), then backward through it twice (the second raises where a node saved a tensor)."""
    b = ModuleBuilder(draw)
    shape = b.pick(((), (3,), (2, 3), (2, 4)))
    x = b.fresh("x")
    b.bind(x, shape, Leaf(x, b.activation_values(cls, shape), "float32", True), tracked=True)
    name = b.fresh("m")
    b.add_module(Module(name, cls, kwargs=b.activation_options(cls)))
    total: str | None = None
    for _ in range(draw(st.integers(1, 2))):
        out = b.call(name, [combine(b, "clone", [x], shape)], shape)
        b.steps.append(ObserveGraph(out))
        term = combine(b, "sum", [out], ())
        total = term if total is None else combine(b, "add", [total, term], ())
    g = b.fresh("g")
    b.steps.append(Grad([g], [total], [x], retain_graph=True, create_graph=True))
    b.shapes[g] = shape
    backprop_twice(b.steps, g, shape, "g_sum")
    b.steps.extend(Observe(n) for n in [*b.shapes, "g_sum"] if n != "g_sum" or shape != ())
    return b.program()


@pytest.mark.rule("MOD-007")
@pytest.mark.parametrize("cls", ACTIVATION_LAYERS)
@examples(0.3)  # each layer: 30 programs in ci (cheap: one layer, small tensors)
@given(data=st.data())
def test_activation_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(activation_layers(cls), label="program"), backend, reference)


@st.composite
def embedding_layers(draw: Any, options: dict) -> Program:
    """Embedding(5, 3, **options) with drawn weight values, looked up once or twice with int64
    (or int32) indices of shape (), (4,) or (2, 3) drawn with repeats and padding_idx; the weight
    observed after the lookups (max_norm renormalises it in place), the gradient of
    ``sum(out * (out + v))`` taken with create_graph=True (EmbeddingDenseBackwardBackward0), then
    backward through it twice (``v.grad``: the double backward's rows, zero at padding_idx)."""
    b = ModuleBuilder(draw)
    name = b.fresh("m")
    weight = [[b.pick(EMBEDDING_VALUES) for _ in range(3)] for _ in range(5)]
    b.add_module(Module(name, "Embedding", [5, 3], {"weight": weight}, options))
    total: str | None = None
    for _ in range(draw(st.integers(1, 2))):
        shape = b.pick(((), (4,), (2, 3)))
        i = b.fresh("i")
        rows = [draw(st.lists(st.integers(0, 4), min_size=3, max_size=4)) for _ in range(2)]
        data = {(): rows[0][0], (4,): (rows[0] * 2)[:4], (2, 3): [r[:3] for r in rows]}[shape]
        b.bind(i, shape, Leaf(i, data, b.pick(("int64", "int32"))))
        out = b.call(name, [i], (*shape, 3))
        b.steps.append(ObserveGraph(out))
        v = b.fresh("v")  # a seed requiring grad: the double backward's rows reach it directly
        b.bind(v, (*shape, 3), Leaf(v, b.weights((*shape, 3)), "float32", True), tracked=True)
        both = combine(b, "add", [out, v], (*shape, 3))
        term = combine(b, "sum", [combine(b, "mul", [out, both], (*shape, 3))], ())
        total = term if total is None else combine(b, "add", [total, term], ())
    weight_name = f"{name}.weight"
    g = b.fresh("g")
    b.steps.append(Grad([g], [total], [weight_name], retain_graph=True, create_graph=True))
    b.shapes[g] = (5, 3)
    backprop_twice(b.steps, g, (5, 3), "g_sum")
    b.steps.extend(Observe(n) for n in [*b.shapes, "g_sum"])
    return b.program()


@pytest.mark.rule("MOD-008")
@pytest.mark.parametrize("options", EMBEDDING_OPTIONS, ids=str)
@examples(0.2)  # each option set: 20 programs in ci (one small lookup table)
@given(data=st.data())
def test_embedding(options: dict, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(embedding_layers(options), label="program"), backend, reference)
