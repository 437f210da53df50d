"""Modules and losses (oracle/rules/modules.py, family "modules and losses"): random module trees,
the nn.Module API seen through a trace, zero_grad, Dropout modes and every loss with every
reduction agree with torch."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    RECURRENT,
    Backward,
    CallModule,
    Grad,
    Leaf,
    ManualSeed,
    Module,
    ModuleMode,
    ModuleZeroGrad,
    Observe,
    ObserveGraph,
    ObserveModule,
    ObserveRepr,
    Op,
    Program,
    Ref,
    StateDict,
    parameter_names,
)
from oracle.strategies import (
    ACTIVATION_LAYERS,
    ACTIVATION_OPTIONS,
    ACTIVATIONS,
    EMBEDDING_OPTIONS,
    EMBEDDING_VALUES,
    LOSSES,
    MORE_ACTIVATION_LAYERS,
    SPLIT_AT_NAN,
    TREE_INPUTS,
    ModuleBuilder,
    backprop_twice,
)

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}


def _nn(*classes: str) -> list[str]:
    return [f"nn.{cls}" for cls in classes]


def _indices(call: coverage.Call) -> bool:
    """The loss's target holds class indices."""
    target = call.tensor("target")
    return target is not None and not np.issubdtype(target.dtype, np.floating)


def _ignored(call: coverage.Call) -> np.ndarray:
    """Which class-index targets the loss ignores (its ignore_index, -100 by default)."""
    if not _indices(call):
        return np.zeros(0)
    return call.tensor("target") == call.arguments.get("ignore_index", -100)


def _weighted(call: coverage.Call) -> bool:
    return call.arguments.get("weight") is not None


def _smoothing(call: coverage.Call) -> bool:
    return bool(call.arguments.get("label_smoothing", 0.0))


def _activation_at(name: str, default: float, scale: str | None = None) -> coverage.Callable:
    """A test: the activation's input at its bound ``name`` (``default`` when not given; times
    the argument ``scale`` when given, e.g. Softplus's beta)."""
    return coverage.somewhere(
        lambda x, call: x * call.arguments.get(scale, 1.0) == call.arguments.get(name, default)
    )


_HALF_RANGE = SPLIT_AT_NAN  # NaN's gradient differs among torch's own loops there
EDGE_EVERY = 4  # one program in EDGE_EVERY (the first drawn) runs every form at every edge value
# MOD-007's edge values: zeros, infinities, NaN, the bounds of Hardtanh's and ReLU6's options and
# Softplus's thresholds (threshold / beta of each of its option sets)
ACTIVATION_EDGES = (
    0.0, -0.0, -math.inf, math.inf, math.nan, -1.0, 1.0, -2.0, 0.5, 2.0, 2.5, 5.0, 6.0, 10.0, 20.0
)
HARD_BOUNDS = (-3.0, 3.0)  # where Hardswish and Hardsigmoid change pieces (MOD-018's edges)
# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage): the
# modules' keyword arguments, and the classes that need context: ignored targets, edge values.
COVERAGE: dict[str, coverage.Targets] = {
    "MOD-001": coverage.Targets(coverage.keywords(*_nn("Linear", "Flatten", *ACTIVATIONS))),
    "MOD-003": coverage.Targets(coverage.keywords("Module.zero_grad")),
    "MOD-004": coverage.Targets(
        coverage.keywords(*_nn(*LOSSES)),
        coverage.clause(_nn("CrossEntropyLoss", "NLLLoss"), "ignore_index", {
            "an ignored target": lambda call: bool(_ignored(call).any()),
            "all targets ignored": lambda call: bool(_ignored(call).size and _ignored(call).all()),
        }),
        coverage.clause("nn.CrossEntropyLoss", "target", {
            "class indices": _indices, "probabilities": lambda call: not _indices(call),
        }),
        coverage.clause("nn.CrossEntropyLoss", "label_smoothing", {
            "with class indices": lambda call: _smoothing(call) and _indices(call),
            "with probabilities": lambda call: _smoothing(call) and not _indices(call),
        }),
        coverage.clause("nn.CrossEntropyLoss", "weight", {
            "with probabilities": lambda call: _weighted(call) and not _indices(call),
            "with an ignored target": lambda call: _weighted(call) and bool(_ignored(call).any()),
        }),
        coverage.edges("nn.BCELoss", "input", "0", "1"),
        coverage.clause("nn.L1Loss", "input", {"equal to the target": coverage.ties("input", "target")}),
    ),
    "MOD-005": coverage.Targets(coverage.keywords("nn.Dropout")),
    "MOD-006": coverage.Targets(coverage.keywords(*_nn("Conv2d", "ReLU", "LeakyReLU"))),
    "MOD-007": coverage.Targets(
        coverage.keywords(*_nn(*ACTIVATION_LAYERS)),
        coverage.edges(_nn(*ACTIVATION_LAYERS), "input", "0", "-0.0", "-inf"),
        coverage.edges(_nn(*(c for c in ACTIVATION_LAYERS if c != "GELU")), "input", "inf"),
        coverage.edges(_nn(*(c for c in ACTIVATION_LAYERS if c not in _HALF_RANGE)), "input", "NaN"),
        coverage.clause("nn.Hardtanh", "input", {
            "at min_val": _activation_at("min_val", -1.0), "at max_val": _activation_at("max_val", 1.0),
        }),
        coverage.clause("nn.ReLU6", "input", {"at 6": coverage.somewhere(lambda x, call: x == 6)}),
        coverage.clause("nn.Softplus", "input", {
            "at the threshold": _activation_at("threshold", 20.0, scale="beta"),
            "above the threshold": coverage.somewhere(
                lambda x, call: x * call.arguments.get("beta", 1.0) > call.arguments.get("threshold", 20.0)),
        }),
    ),
    "MOD-018": coverage.Targets(
        coverage.keywords(*_nn(*MORE_ACTIVATION_LAYERS)),
        coverage.edges(_nn(*MORE_ACTIVATION_LAYERS), "input", "0", "-0.0", "-inf", "inf"),
        coverage.edges(_nn(*(c for c in MORE_ACTIVATION_LAYERS if c not in _HALF_RANGE)), "input", "NaN"),
        coverage.clause(_nn("Hardshrink", "Softshrink"), "input", {"at lambd": _activation_at("lambd", 0.5)}),
        coverage.clause(_nn("Hardswish", "Hardsigmoid"), "input", {
            "at -3": coverage.somewhere(lambda x, call: x == -3),
            "at 3": coverage.somewhere(lambda x, call: x == 3),
        }),
    ),
    "MOD-008": coverage.Targets(
        coverage.keywords("nn.Embedding"),
        coverage.clause("nn.Embedding", "padding_idx", {
            "looked up": lambda call: call.arguments.get("padding_idx") is not None and bool(
                (call.tensor("input") % call.arguments["num_embeddings"] == call.arguments["padding_idx"]
                 % call.arguments["num_embeddings"]).any()),
        }),
        coverage.clause("nn.Embedding", "scale_grad_by_freq", {
            "with repeated indices": lambda call: bool(call.arguments.get("scale_grad_by_freq"))
            and len(np.unique(call.tensor("input"))) < call.tensor("input").size,
        }),
    ),
    "MOD-019": coverage.Targets(coverage.keywords(
        *_nn("CosineEmbeddingLoss", "MultiMarginLoss", "MultiLabelSoftMarginLoss"),
        "nn.TripletMarginWithDistanceLoss",
        only=("p", "margin", "weight", "swap"),
    )),
}


@st.composite
def trees(draw: Any) -> Program:
    """A random module tree called once to three times on inputs that may require grad, the graph
    of the last output observed, then backward and an observation of every tensor."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    net, out_shape = b.tree(shape, depth=draw(st.integers(1, 3)))
    for _ in range(draw(st.integers(1, 3))):
        b.call(net, [b.input(shape)], out_shape)
    if draw(st.integers(0, EDGE_EVERY - 1)) == 0:  # and every layer in every form (TREE_LAYER_FORMS)
        b.layer_forms()
    b.finish()
    return b.program()


@st.composite
def bilinear_layers(draw: Any) -> Program:
    """nn.Bilinear (1 to 3 features each, bias or not) with drawn parameter values, observed
    (parameters, printed form), called on two inputs of a drawn batch shape (none, 1-d, 2-d), then
    torch.bilinear or F.bilinear on them and its parameters (bias or not); graphs observed,
    backward from a weighted sum; then a call torch refuses (input2 of the wrong size, or batch)."""
    b = ModuleBuilder(draw)
    n1, n2, features = b.pick((1, 2, 3)), b.pick((2, 1, 3)), b.pick((3, 1, 2))
    bias = b.pick((True, True, False))
    name = b.fresh("m")
    params = {"weight": b.weights((features, n1, n2)), **({"bias": b.weights((features,))} if bias else {})}
    b.add_module(Module(name, "Bilinear", [n1, n2, features], params, {} if bias else {"bias": False}))
    b.steps.append(ObserveModule(name))
    batch = b.pick(((2,), (), (2, 3)))
    x1, x2, shape = b.input((*batch, n1)), b.input((*batch, n2)), (*batch, features)
    parts = [b.call(name, [x1, x2], shape)]
    args = [Ref(x1), Ref(x2), Ref(f"{name}.weight"), *([Ref(f"{name}.bias")] if bias and b.coin() else [])]
    out, function = b.fresh("t"), b.pick(("bilinear", "nn.functional.bilinear"))
    parts.append(b.bind(out, shape, Op(out, function, args), tracked=True))
    b.steps.append(ObserveGraph(parts[0]))
    _backward_observed(b, parts)
    wrong = (*batch, n2 + 1) if b.coin() else (*batch[:-1], 1 + batch[-1], n2) if batch else (1, n2)
    b.steps.append(Op(b.fresh("t"), "bilinear", [Ref(x1), Ref(b.input(wrong)), Ref(f"{name}.weight")]))
    return b.program()


@pytest.mark.rule("MOD-001")
@examples(0.05)  # 5 programs in ci
@given(data=st.data())
def test_bilinear_layers(data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(bilinear_layers(), label="program"), backend, reference)


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


# each loss class with the kind of target it takes (CrossEntropyLoss: class indices or
# probabilities) and its options, one test each: a weight (and BCEWithLogitsLoss's pos_weight) as a
# tensor of the classes' size; an ignore_index and targets it ignores ("some": the first; "all":
# every one, where a mean divides by a total weight of 0); label smoothing; of L1Loss, targets equal
# to the input ("tied", where its gradient's sign is 0); of BCELoss, inputs saturated to exactly 0
# and 1 ("saturated", where its log is clamped at -100)
LOSS_CASES: tuple[tuple[str, bool | None, dict], ...] = (
    ("HuberLoss", None, {}),  # first: its planted fault's session stops at the first test that fails
    ("HuberLoss", None, {"delta": 0.3}),
    ("SmoothL1Loss", None, {"beta": 0.5}),  # early: its planted fault's session stops here
    ("MSELoss", None, {}),
    ("L1Loss", None, {}),
    ("L1Loss", None, {"tied": True}),
    ("CrossEntropyLoss", False, {}),
    ("CrossEntropyLoss", False, {"weight": True}),
    ("CrossEntropyLoss", False, {"ignored": "some"}),
    ("CrossEntropyLoss", False, {"ignore_index": 1, "ignored": "all"}),
    ("CrossEntropyLoss", False, {"weight": True, "ignore_index": 0, "ignored": "some",
                                 "label_smoothing": 0.2}),
    ("CrossEntropyLoss", False, {"weight": True, "ignored": "all", "label_smoothing": 0.1}),
    ("CrossEntropyLoss", True, {}),
    ("CrossEntropyLoss", True, {"weight": True, "label_smoothing": 0.3, "ignore_index": -1}),
    ("CrossEntropyLoss", True, {"ignore_index": 0}),  # refused for probabilities (a negative one is not)
    ("NLLLoss", None, {}),
    ("NLLLoss", None, {"weight": True, "ignored": "some"}),
    ("NLLLoss", None, {"ignore_index": 2, "ignored": "all"}),
    ("NLLLoss", None, {"weight": True, "ignore_index": 0, "ignored": "all"}),
    ("BCELoss", None, {}),
    ("BCELoss", None, {"weight": True, "saturated": True}),
    ("BCEWithLogitsLoss", None, {}),
    ("BCEWithLogitsLoss", None, {"weight": True}),
    ("BCEWithLogitsLoss", None, {"pos_weight": True}),
    ("BCEWithLogitsLoss", None, {"weight": True, "pos_weight": True}),
    ("SmoothL1Loss", None, {}),
    ("KLDivLoss", None, {}),
    ("KLDivLoss", None, {"log_target": True}),
)
LOSS_IDS = ["-".join([cls, *{True: ["probabilities"], False: ["indices"]}.get(soft, []), *options])
            for cls, soft, options in LOSS_CASES]
WEIGHT_VALUES = (0.5, 1.0, 2.0, 0.0)  # a class weight of 0 too
SATURATED = (-120.0, 120.0)  # sigmoid is exactly 0 and 1 in float32 there


def combine(b: ModuleBuilder, op: str, inputs: list[str], shape: tuple[int, ...]) -> str:
    """``op`` of the tensors named ``inputs``, bound to a fresh name of ``shape``."""
    out = b.fresh("t")
    return b.bind(out, shape, Op(out, op, [Ref(name) for name in inputs]), tracked=True)


@st.composite
def losses(draw: Any, cls: str, soft: bool | None, options: dict) -> Program:
    """A loss ``cls`` (a CrossEntropyLoss taking probabilities if ``soft``) with ``options``
    (LOSS_CASES), with every reduction on one prediction (a leaf, or a Linear layer's output) and
    a target of the kind it takes (sometimes requiring grad); backward from the sum of the three
    values, the unreduced one weighted per element first, so each element's gradient flows back
    with its own incoming gradient."""
    b = ModuleBuilder(draw)
    shape = b.pick(((3,), (2, 3), (4, 2)))
    prediction = b.input(shape, requires_grad=b.draw(st.integers(0, 3)) > 0)
    leaf = b.steps[-1]
    if options.get("saturated"):  # the first element of each row at -120 or 120
        leaf.data = np.array(leaf.data, dtype=float)
        leaf.data[..., 0] = draw(st.sampled_from(SATURATED))
        leaf.data = leaf.data.tolist()
    elif not options.get("tied") and b.coin():
        net, out_shape = b.tree(shape, depth=0)
        if len(out_shape) == len(shape) and out_shape[-1] > 1:
            prediction = b.call(net, [prediction], out_shape)
    kwargs = {k: options[k] for k in ("ignore_index", "label_smoothing", "delta", "beta", "log_target")
              if k in options}
    classes = b.shapes[prediction][-1]
    for name in ("weight", "pos_weight"):
        if options.get(name):
            kwargs[name] = Ref(b.input((classes,), requires_grad=False))
            b.steps[-1].data = [b.pick(WEIGHT_VALUES) for _ in range(classes)]
    ignored = (options["ignored"], options.get("ignore_index", -100)) if "ignored" in options else None
    values = leaf.data if options.get("tied") else None
    prediction, target = b.loss_inputs(prediction, cls, soft, b.draw(st.integers(0, 3)) == 0, ignored, values)
    mean, total, none = (b.apply_loss(cls, prediction, target, r, kwargs) for r in ("mean", "sum", "none"))
    return backprop_reductions(b, mean, total, none)


def backprop_reductions(b: ModuleBuilder, mean: str, total: str, none: str) -> Program:
    """The program ending in backward from ``total + sum(none * w) + mean`` (``w`` a leaf weighting
    each unreduced element): each element's gradient flows back with its own incoming gradient."""
    weights = b.input(b.shapes[none], requires_grad=False)
    none = combine(b, "mul", [none, weights], b.shapes[none])
    for term in (combine(b, "sum", [none], ()), mean):
        total = combine(b, "add", [total, term], ())
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-004")
@pytest.mark.parametrize("case", LOSS_CASES, ids=LOSS_IDS)
@examples(0.05)  # each case: 5 programs in ci
@given(data=st.data())
def test_losses_with_every_reduction(
    case: tuple[str, bool | None, dict], data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(losses(*case), label="program"), backend, reference)


# the margin and embedding losses of issue 22, with their options: CosineEmbeddingLoss's margin
# (targets 1, -1 and 0, int or float), MultiMarginLoss's p, margin and class weight,
# MultiLabelMarginLoss's targets cut by -1, MultiLabelSoftMarginLoss's weight,
# TripletMarginWithDistanceLoss's margin and swap. Inputs are multiples of 0.5, so hinge terms
# land exactly on 0, where torch's kernels count them out.
MARGIN_CASES: tuple[tuple[str, dict], ...] = (  # an option's tuple: drawn from, None its default
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": True}),  # first: its fault's session stops here
    ("MultiLabelMarginLoss", {}),
    ("CosineEmbeddingLoss", {"margin": (0.5, None)}),
    ("MultiMarginLoss", {}),
    ("MultiLabelSoftMarginLoss", {"weight": (True, None)}),
    ("TripletMarginWithDistanceLoss", {"margin": (0.5, None), "swap": (True, None)}),
)
MARGIN_IDS = ["-".join([cls, *options]) for cls, options in MARGIN_CASES]


def _margin_targets(b: ModuleBuilder, cls: str, shape: tuple[int, ...]) -> list[str]:
    """The tensors a margin loss ``cls`` takes after its input of ``shape``: a second input and
    +-1 (or 0) targets per row; class indices; class lists cut by -1; probabilities; or a positive
    and a negative input."""
    rows, classes = shape[:-1], shape[-1]
    count = rows[0] if rows else 1

    def leaf(data: Any, dtype: str, target_shape: tuple[int, ...]) -> str:
        name = b.fresh("y")
        return b.bind(name, target_shape, Leaf(name, data if rows else data[0], dtype))

    if cls == "CosineEmbeddingLoss":
        signs = [b.pick((1, -1, -1, 0)) for _ in range(count)]
        dtype = b.pick(("int64", "float32"))
        return [b.input(shape), leaf([float(v) for v in signs] if dtype == "float32" else signs, dtype, rows)]
    if cls == "TripletMarginWithDistanceLoss":
        return [b.input(shape), b.input(shape)]
    if cls == "MultiMarginLoss":
        return [leaf([b.draw(st.integers(0, classes - 1)) for _ in range(count)], "int64", rows)]
    if cls == "MultiLabelMarginLoss":
        lists = []
        for _ in range(count):
            labels = b.draw(st.lists(st.integers(0, classes - 1), max_size=classes))
            fill = [b.draw(st.integers(-1, classes - 1)) for _ in range(classes)]
            lists.append((labels + [-1] + fill)[:classes])
        return [leaf(lists, "int64", shape)]
    name = b.fresh("y")
    return [b.bind(name, shape, Leaf(name, b.probabilities(shape), "float32"))]


@st.composite
def margin_losses(draw: Any, cls: str, options: dict) -> Program:
    """A margin or embedding loss ``cls`` with ``options`` (MARGIN_CASES; a class weight drawn)
    with every reduction on one input and the targets it takes; backward from the sum of the
    three values, the unreduced one weighted per row first (as ``losses``)."""
    b = ModuleBuilder(draw)
    shape = b.pick(((3,), (2, 3), (4, 2)))
    x = b.input(shape, requires_grad=True)
    others = _margin_targets(b, cls, shape)
    options = {k: b.pick(v) if isinstance(v, tuple) else v for k, v in options.items()}
    kwargs = {k: v for k, v in options.items() if k != "weight" and v is not None}
    if options.get("weight"):
        kwargs["weight"] = Ref(b.input((shape[-1],), requires_grad=False))
        b.steps[-1].data = [b.pick(WEIGHT_VALUES) for _ in range(shape[-1])]
    values = {}
    for reduction in ("mean", "sum", "none"):
        name = b.fresh("m")
        b.add_module(Module(name, cls, kwargs={"reduction": reduction, **kwargs}))
        values[reduction] = b.call(name, [x, *others], () if reduction != "none" else shape[:-1])
    return backprop_reductions(b, values["mean"], values["sum"], values["none"])


@pytest.mark.rule("MOD-019")
@pytest.mark.parametrize("case", MARGIN_CASES, ids=MARGIN_IDS)
@examples(0.05)  # each case: 5 programs in ci
@given(data=st.data())
def test_margin_losses_with_every_reduction(
    case: tuple[str, dict], data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(margin_losses(*case), label="program"), backend, reference)


@st.composite
def dropouts(draw: Any) -> Program:
    """Dropout with p=0 or p=1 in train mode, any p in eval mode, switched back and forth."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    x = b.input(shape)
    name = b.fresh("m")
    p = b.pick((0.0, 1.0, 0.5))
    inplace = b.coin()  # then on a clone: an in-place layer may not write a leaf
    b.add_module(Module(name, "Dropout", kwargs={"p": p, **({"inplace": True} if inplace else {})}))
    train = p != 0.5 and b.coin()
    for _ in range(draw(st.integers(1, 3))):
        b.steps.append(ModuleMode(name, train))
        b.call(name, [combine(b, "clone", [x], shape) if inplace else x], shape)
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
def conv_layers(draw: Any, mode: str | None = None, same: bool | None = None, cls: str = "Conv2d") -> Program:
    """One Conv2d with padding_mode ``mode``, padding 'same' (``same``) or else one of ints, pairs
    and 'valid' (each drawn when not given), and the other options drawn at random
    (``ModuleBuilder.conv2d``: kernel, stride, dilation, groups, bias), sometimes followed by a ReLU
    or LeakyReLU, maybe in place, called once or twice on batched or unbatched images. Inputs and
    weights are small multiples of 0.5, so float32 arithmetic is exact and any difference is a
    rule, not rounding."""
    b = ModuleBuilder(draw)
    batch = b.pick(((), (1,), (2,)))
    if cls == "Conv2d":
        shape = (*batch, b.pick((1, 2, 2, 4)), b.pick((3, 4, 5)), b.pick((3, 4, 5)))
        conv, out = b.conv2d(shape, mode=mode, same=same)
    else:  # Conv1d, Conv3d, ConvTranspose1d/2d/3d (``ModuleBuilder.conv``), printed too
        sizes = [b.pick((2, 3) if cls.endswith("3d") else (2, 3, 5)) for _ in range(int(cls[-2]))]
        shape = (*batch, b.pick((1, 2, 2, 4)), *sizes)
        conv, out = b.conv(shape, cls)
    layers = [conv]
    activation = b.pick((None, "ReLU", "LeakyReLU"))
    if activation:
        layers.append({"cls": activation, "kwargs": b.inplace_flag(activation)})
    name = b.fresh("m")
    b.add_module(Module(name, "Sequential", [], {}, {}, layers))
    if cls != "Conv2d":
        b.steps.append(ObserveRepr(name))
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


# the other convolution layers, with every option drawn (``ModuleBuilder.conv``)
CONVS = ("Conv1d", "ConvTranspose1d", "ConvTranspose2d")


@pytest.mark.rule("MOD-006")
@pytest.mark.parametrize("cls", CONVS, ids=["conv1d", "conv_transpose1d", "conv_transpose2d"])
@examples(0.15)  # each layer: 15 programs in ci
@given(data=st.data())
def test_conv_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(conv_layers(cls=cls), label="program"), backend, reference)


@pytest.mark.rule("MOD-006")
@pytest.mark.parametrize("cls", ("Conv3d", "ConvTranspose3d"), ids=["conv3d", "conv_transpose3d"])
@examples(0.06)  # each layer: 6 programs in ci (the 1-D and 2-D ones share their code)
@given(data=st.data())
def test_conv3d_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(conv_layers(cls=cls), label="program"), backend, reference)


@st.composite
def activation_layers(draw: Any, cls: str) -> Program:
    """The activation layer ``cls`` with its options drawn (``ModuleBuilder.activation_options``:
    in place or not, alpha, beta and threshold, bounds, approximate) on float32 values at its
    edges (``activation_values``), through a clone (an in-place layer may not write a leaf), called
    once or twice; the forward graph observed, the gradient taken with create_graph=True (torch's
    backward ops: GeluBackwardBackward0, EluBackwardBackward0 ..., or SiLU's and Mish's composite
    formulas), then backward through it twice (the second raises where a node saved a tensor)."""
    b = ModuleBuilder(draw)
    edges = draw(st.integers(0, EDGE_EVERY - 1)) == 0  # every edge value, every option set
    values = activation_edges(cls) if edges else None
    shape = (len(values),) if values else b.pick(((), (3,), (2, 3), (2, 4)))
    x = b.fresh("x")
    b.bind(x, shape, Leaf(x, values or b.activation_values(cls, shape), "float32", True), tracked=True)
    total: str | None = None
    for options in edge_forms(cls) if edges else [b.activation_options(cls)]:
        name = b.fresh("m")
        b.add_module(Module(name, cls, kwargs=dict(options)))
        for _ in range(1 if edges else draw(st.integers(1, 2))):
            out = b.call(name, [combine(b, "clone", [x], shape)], shape)
            b.steps.append(ObserveGraph(out))
            term = combine(b, "sum", [out], ())
            total = term if total is None else combine(b, "add", [total, term], ())
    g = b.fresh("g")
    b.steps.append(Grad([g], [total], [x], retain_graph=True, create_graph=True))
    b.shapes[g] = shape
    backprop_twice(b.steps, g, shape, "g_sum")
    for options in refused_forms(cls) if edges else []:  # each with a gradient of its own, refused
        name = b.fresh("m")
        b.add_module(Module(name, cls, kwargs=dict(options)))
        term = combine(b, "sum", [b.call(name, [combine(b, "clone", [x], shape)], shape)], ())
        b.steps.append(Grad([b.fresh("g")], [term], [x], retain_graph=True))
    b.steps.extend(Observe(n) for n in [*b.shapes, "g_sum"] if n != "g_sum" or shape != ())
    return b.program()


def refused(options: dict) -> bool:
    """Whether torch refuses the backward of an activation layer of ``options`` (an in-place ELU
    of a negative alpha)."""
    return bool(options.get("inplace")) and options.get("alpha", 1.0) < 0


def edge_forms(cls: str) -> list[dict]:
    """ACTIVATION_OPTIONS of ``cls`` whose backward torch computes (a refused one's error would
    stop the edge program's whole gradient: ``refused_forms`` get one each)."""
    return [f for f in ACTIVATION_OPTIONS.get(cls, ({},)) if not refused(f)]


def refused_forms(cls: str) -> list[dict]:
    return [f for f in ACTIVATION_OPTIONS.get(cls, ({},)) if refused(f)]


def activation_edges(cls: str) -> list[float]:
    """ACTIVATION_EDGES, but for the values where torch's own loops disagree (see
    ``ModuleBuilder.activation_values``): NaN of SPLIT_AT_NAN's layers, +inf of GELU; with
    HARD_BOUNDS for MOD-018's layers."""
    edges = ACTIVATION_EDGES + (HARD_BOUNDS if cls in MORE_ACTIVATION_LAYERS else ())
    return [v for v in edges
            if not (math.isnan(v) and cls in _HALF_RANGE or v == math.inf and cls == "GELU")]


@pytest.mark.rule("MOD-007")
@pytest.mark.parametrize("cls", ACTIVATION_LAYERS)
@examples(0.3)  # each layer: 30 programs in ci (cheap: one layer, small tensors)
@given(data=st.data())
def test_activation_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(activation_layers(cls), label="program"), backend, reference)


@pytest.mark.rule("MOD-018")
@pytest.mark.parametrize("cls", MORE_ACTIVATION_LAYERS)
@examples(0.15)  # each layer: 15 programs in ci
@given(data=st.data())
def test_more_activation_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
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


@st.composite
def embedding_bags(draw: Any) -> Program:
    """EmbeddingBag(5, 3) with drawn weight values and options (mode, padding_idx, max_norm,
    include_last_offset), on int64 indices with offsets (empty bags, repeats) or a 2-D input, with
    per_sample_weights requiring grad in mode 'sum'; output, graph and gradients observed."""
    b = ModuleBuilder(draw)
    name = b.fresh("m")
    mode = b.pick(("sum", "mean", "max"))
    extra = b.pick(({}, {"padding_idx": 2}, {"max_norm": 1.5}, {"include_last_offset": True}))
    options = {"mode": mode, **extra}
    weight = [[b.pick(EMBEDDING_VALUES) for _ in range(3)] for _ in range(5)]
    b.add_module(Module(name, "EmbeddingBag", [5, 3], {"weight": weight}, options))
    data = draw(st.lists(st.integers(0, 4), min_size=4, max_size=6))
    i = b.fresh("i")
    if b.coin() and not options.get("include_last_offset"):
        data = data[:4]
        b.bind(i, (2, 2), Leaf(i, [data[:2], data[2:]], "int64"))
        inputs, bags = [i], 2
    else:
        b.bind(i, (len(data),), Leaf(i, data, "int64"))
        cuts = sorted(draw(st.lists(st.integers(0, len(data)), min_size=2, max_size=3)))
        cuts = [0, *cuts[1:]] + ([len(data)] if options.get("include_last_offset") else [])
        o = b.fresh("o")
        b.bind(o, (len(cuts),), Leaf(o, cuts, "int64"))
        inputs, bags = [i, o], len(cuts) - (1 if options.get("include_last_offset") else 0)
    kwargs = {}
    if mode == "sum" and b.coin():
        kwargs["per_sample_weights"] = b.input(b.shapes[i], requires_grad=True)
    out = b.fresh("t")
    b.bind(out, (bags, 3), CallModule(out, name, inputs, kwargs), tracked=True)
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-008")
@examples(0.05)  # 5 programs in ci; first of the rule's tests, so that its fault's session stops early
@given(data=st.data())
def test_embedding_bag(data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(embedding_bags(), label="program"), backend, reference)


@pytest.mark.rule("MOD-008")
@pytest.mark.parametrize("options", EMBEDDING_OPTIONS, ids=str)
@examples(0.2)  # each option set: 20 programs in ci (one small lookup table)
@given(data=st.data())
def test_embedding(options: dict, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(embedding_layers(options), label="program"), backend, reference)


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """torch's pooling output length (the last window starts inside the input or left padding)."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return out - 1 if ceil_mode and (out - 1) * s >= size + p else out


POOLS = ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
         "AdaptiveMaxPool2d", "AdaptiveMaxPool1d")
POOLS_3D = ("MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d")  # issue 22


def pool_layer(b: ModuleBuilder, cls: str, size: tuple[int, ...]) -> tuple[list, dict, tuple[int, ...]]:
    """Constructor arguments and keywords of a pooling layer ``cls`` on planes of ``size`` (one
    or two dims), drawn within torch's constraints, and the output's plane size."""
    if cls.startswith("Adaptive"):
        out = tuple(b.pick((1, 2, 3)) for _ in size)
        if len(size) > 1 and b.coin():
            return [[None, *out[1:]]], {}, (size[0], *out[1:])
        return [out[0] if len(out) == 1 or b.coin() and len(set(out)) == 1 else list(out)], {}, out
    n = len(size)
    kernel = tuple(b.pick((1, 2, 3)) for _ in range(n))
    stride = tuple(b.pick((1, 2)) for _ in range(n))
    dilation = tuple(b.pick((1, 2)) for _ in range(n)) if cls.startswith("Max") else (1,) * n
    padding = tuple(b.pick(range(k // 2 + 1)) for k in kernel)
    ceil_mode = b.coin()
    out = tuple(_pool_out(*a, ceil_mode) for a in zip(size, kernel, stride, padding, dilation, strict=True))
    if min(out) < 1:
        kernel = stride = dilation = (1,) * n
        padding, out = (0,) * n, size
    one = (lambda v: v[0]) if n == 1 else list
    kwargs: dict[str, Any] = {"padding": one(padding), "ceil_mode": ceil_mode}
    if b.coin():
        kwargs["stride"] = one(stride)
    else:
        out = tuple(
            _pool_out(*a, ceil_mode) for a in zip(size, kernel, kernel, padding, dilation, strict=True)
        )
        if min(out) < 1:
            kwargs["stride"], out = one(stride), tuple(
                _pool_out(*a, ceil_mode) for a in zip(size, kernel, stride, padding, dilation, strict=True))
    if cls.startswith("Max"):
        kwargs["dilation"] = one(dilation)
    else:
        kwargs["count_include_pad"] = b.coin()
        if cls in ("AvgPool2d", "AvgPool3d") and b.coin():
            kwargs["divisor_override"] = b.pick((1, 3))
    return [one(kernel)], kwargs, out


@st.composite
def pooling_layers(draw: Any, cls: str) -> Program:
    """The pooling layer ``cls`` with its options drawn (``pool_layer``) on batched or unbatched
    inputs of small multiples of 0.5 (tied maxima; float32 sums exact), called once or twice, then
    backward and every tensor observed (values, MaxPool2DWithIndicesBackward0 ... and gradients)."""
    b = ModuleBuilder(draw)
    dims = int(cls[-2])
    size = tuple(b.pick((1, 2, 3) if dims == 3 else (1, 2, 3, 5)) for _ in range(dims))
    if cls.startswith("Adaptive"):
        size = tuple(max(n, 2) for n in size)
    batch = b.pick(((), (2,)))
    shape = (*batch, b.pick((1, 2)), *size)
    args, kwargs, out = pool_layer(b, cls, size)
    name = b.fresh("m")
    b.add_module(Module(name, cls, args, {}, kwargs))
    for _ in range(draw(st.integers(1, 2))):
        b.call(name, [b.input(shape)], (*shape[:-len(size)], *out))
    b.finish()
    return b.program()


# snake-case ids: a planted fault named after one (max_pool2d_...) runs that test first
POOL_IDS = [re.sub(r"(?<!^)(?=[A-Z])", "_", cls).lower() for cls in POOLS]


@pytest.mark.rule("MOD-009")
@pytest.mark.parametrize("cls", POOLS, ids=POOL_IDS)
@examples(0.2)  # each layer: 20 programs in ci (one small layer)
@given(data=st.data())
def test_pooling_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(pooling_layers(cls), label="program"), backend, reference)


@pytest.mark.rule("MOD-009")
@pytest.mark.parametrize("cls", POOLS_3D, ids=[re.sub(r"(?<!^)(?=[A-Z])", "_", c).lower() for c in POOLS_3D])
@examples(0.08)  # each layer: 8 programs in ci (the 2-D ones share their kernels)
@given(data=st.data())
def test_pooling3d_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(pooling_layers(cls), label="program"), backend, reference)


NORMS = ("BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm")
MORE_NORMS = ("InstanceNorm1d", "RMSNorm", "InstanceNorm2d", "BatchNorm3d", "InstanceNorm3d",  # issue 22
              "LocalResponseNorm", "CrossMapLRN2d")


def norm_layer(b: ModuleBuilder, cls: str) -> tuple[list, dict, tuple[int, ...]]:
    """Constructor arguments and keywords of a normalisation layer ``cls``, options drawn, and the
    shape of an input it takes."""
    kwargs: dict[str, Any] = {}
    if b.coin():
        kwargs["eps"] = b.pick((1e-3, 0.5))
    if cls.startswith("BatchNorm"):
        c = b.pick((1, 2, 3))
        kwargs.update(b.pick(({}, {"momentum": None}, {"momentum": 0.5}, {"affine": False},
                              {"bias": False}, {"track_running_stats": False})))
        if cls == "BatchNorm3d":
            spatial: tuple = (b.pick((1, 2)), 2, b.pick((1, 2)))
        else:
            spatial = (b.pick((1, 2)), 2) if cls == "BatchNorm2d" else b.pick(((), (3,)))
        shape = (b.pick((2, 3)), c, *spatial)
        return [c], kwargs, shape
    if cls == "LayerNorm":
        normalized = b.pick(((3,), (2, 3)))
        kwargs.update(b.pick(({}, {"elementwise_affine": False}, {"bias": False})))
        return [list(normalized) if len(normalized) > 1 or b.coin() else normalized[0]], kwargs, (
            *b.pick(((), (2,), (2, 2))), *normalized)
    if cls == "RMSNorm":  # eps left at None (the dtype's epsilon) or drawn above
        normalized = b.pick(((3,), (2, 3)))
        kwargs.update(b.pick(({}, {"elementwise_affine": False})))
        return [list(normalized) if len(normalized) > 1 else normalized[0]], kwargs, (
            *b.pick(((), (2,), (2, 2))), *normalized)
    if cls.startswith("InstanceNorm"):  # affine given either way: its default is False
        c = b.pick((1, 2, 3))
        kwargs["affine"] = b.coin()
        tracked = {"track_running_stats": True}
        kwargs.update(b.pick(({}, tracked, {**tracked, "momentum": None}, {**tracked, "momentum": 0.5})))
        spatial = b.pick({"InstanceNorm2d": ((2, 2), (1, 3)), "InstanceNorm3d": ((2, 1, 2), (1, 3, 1))}.get(
            cls, ((3,), (2,))))
        return [c], kwargs, (*b.pick(((), (2,))), c, *spatial)
    if cls in ("LocalResponseNorm", "CrossMapLRN2d"):  # (no eps: their options instead; 4-D for the latter)
        kwargs = b.pick(({}, {"alpha": 0.5, "beta": 0.5, "k": 2.0}, {"alpha": 1.0, "beta": 1.0}))
        spatial = (2, 2) if cls == "CrossMapLRN2d" else b.pick(((3,), (2, 2), (1, 2, 2)))
        return [b.pick((2, 3, 5) if cls == "CrossMapLRN2d" else (1, 2, 3, 5))], kwargs, (
            2, b.pick((1, 3, 4)), *spatial)
    groups, c = b.pick(((1, 2), (2, 4), (3, 3), (2, 2)))
    kwargs.update(b.pick(({}, {"affine": False}, {"bias": False})))
    return [groups, c], kwargs, (2, c, *b.pick(((), (3,), (2, 2))))


@st.composite
def norm_layers(draw: Any, cls: str) -> Program:
    """The normalisation layer ``cls`` (``norm_layer``), its weight and bias drawn, switched between
    train and eval mode (several calls each), its state_dict (running statistics,
    num_batches_tracked) observed after each call, then backward and every tensor observed."""
    b = ModuleBuilder(draw)
    args, kwargs, shape = norm_layer(b, cls)
    name = b.fresh("m")
    affine = (args[1] if cls == "GroupNorm" else (args[0],) if isinstance(args[0], int) else tuple(args[0]))
    affine = (affine,) if isinstance(affine, int) else affine
    params = {p: b.weights(affine) for p in ("weight", "bias")}
    step = Module(name, cls, args, {}, kwargs)
    step.params = {p: params[p] for p in module_nodes_params(step)}
    b.add_module(step)
    for _ in range(draw(st.integers(1, 3))):
        b.steps.append(ModuleMode(name, b.coin()))
        b.call(name, [b.input(shape)], shape)
        sd = b.fresh("sd")
        b.steps.append(StateDict(sd, name))
    b.finish()
    return b.program()


def module_nodes_params(step: Module) -> tuple[str, ...]:
    return parameter_names(step.cls, step.kwargs)


@pytest.mark.rule("MOD-010")
@pytest.mark.parametrize("cls", MORE_NORMS)
@examples(0.05)  # each layer: 5 programs in ci; first of the rule's, so that its faults' sessions stop early
@given(data=st.data())
def test_rms_and_instance_norm_layers(
    cls: str, data: st.DataObject, backend: Backend, reference: Backend
) -> None:
    check(data.draw(norm_layers(cls), label="program"), backend, reference)


@pytest.mark.rule("MOD-010")
@pytest.mark.parametrize("cls", NORMS)
@examples(0.2)  # each layer: 20 programs in ci (one small layer)
@given(data=st.data())
def test_normalization_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(norm_layers(cls), label="program"), backend, reference)
def _recurrent_options(b: ModuleBuilder, cls: str, hidden: int) -> dict:
    """Constructor keyword arguments of a recurrent layer ``cls``, each drawn: the sequence layers'
    num_layers, bidirectional, batch_first, bias, dropout (p=1 between layers in train mode, which
    zeroes, or p=0.5 in eval mode, which keeps; see ``recurrent_layers``) and LSTM's proj_size;
    RNN's and RNNCell's nonlinearity."""
    kwargs: dict[str, Any] = {} if b.pick((True, True, False)) else {"bias": False}
    if cls in ("RNN", "RNNCell") and b.coin():
        kwargs["nonlinearity"] = "relu"
    if cls.endswith("Cell"):
        return kwargs
    for option, values in (("num_layers", (1, 2)), ("bidirectional", (False, True)),
                           ("batch_first", (False, True))):
        value = b.pick(values)
        if value != values[0]:
            kwargs[option] = value
    if kwargs.get("num_layers", 1) > 1 and b.coin():
        kwargs["dropout"] = b.pick((1.0, 0.5))
    if cls == "LSTM" and hidden > 1 and b.draw(st.integers(0, 2)) == 0:
        kwargs["proj_size"] = 1
    return kwargs


def _item(b: ModuleBuilder, source: str, index: int, shape: tuple[int, ...]) -> str:
    """``source[index]`` of a tuple (a layer's result), bound to a fresh name of ``shape``."""
    out = b.fresh("t")
    return b.bind(out, shape, Op(out, "__getitem__", [Ref(source), index]), tracked=True)


@st.composite
def recurrent_layers(draw: Any, cls: str) -> Program:
    """One recurrent layer ``cls`` with drawn sizes, options (``_recurrent_options``) and parameter
    values, observed (parameter names, state_dict keys, printed form), called on a batched or
    unbatched input (sequence first, or batch first), with or without an initial state (h0 and
    c0 given as ``broadcast_tensors(h0, c0)``: a tuple of the tensors themselves); each part of the
    result taken out, the output's graph observed, backward from a weighted sum of them all."""
    b = ModuleBuilder(draw)
    name, size, hidden, kwargs = _recurrent_module(b, cls)
    batch = b.pick(((), (1,), (2,)))
    out_size = kwargs.get("proj_size") or hidden
    if cls.endswith("Cell"):
        shape, states = (*batch, size), [(*batch, hidden)] * (2 if cls == "LSTMCell" else 1)
        outs = states
    else:
        steps, directions = b.pick((1, 2, 3)), 2 if kwargs.get("bidirectional") else 1
        first = kwargs.get("batch_first") and batch
        shape = (*batch, steps, size) if first else (steps, *batch, size)
        out_shape = (*shape[:-1], directions * out_size)
        layers = (directions * kwargs.get("num_layers", 1),)
        states = [(*layers, *batch, out_size)] + ([(*layers, *batch, hidden)] if cls == "LSTM" else [])
        outs = [out_shape, *states]
    x = b.input(shape)
    inputs = [x]
    inputs += _given_states(b, states, kwargs)
    result = b.fresh("t")
    b.steps.append(CallModule(result, name, inputs))
    if cls in ("RNNCell", "GRUCell"):  # a tensor, not a tuple
        b.shapes[result] = outs[0]
        b.tracked.add(result)
        parts = [result]
    elif cls == "LSTMCell":
        parts = [_item(b, result, k, s) for k, s in enumerate(outs)]
    else:
        parts = [_item(b, result, 0, outs[0])]
        if cls == "LSTM":  # (output, (h_n, c_n))
            pair = b.fresh("t")
            b.steps.append(Op(pair, "__getitem__", [Ref(result), 1]))
            parts += [_item(b, pair, k, s) for k, s in enumerate(outs[1:])]
        else:
            parts.append(_item(b, result, 1, outs[1]))
    b.steps.append(ObserveGraph(parts[0]))
    _backward_observed(b, parts)
    return b.program()


def _given_states(b: ModuleBuilder, states: list[tuple[int, ...]], kwargs: dict) -> list[str]:
    """Drawn: no initial state (always, with proj_size), or h0 of ``states[0]`` (and c0, the pair
    given as ``broadcast_tensors(h0, c0)``: a tuple of the tensors themselves)."""
    if not (b.coin() and not kwargs.get("proj_size")):
        return []
    given = [b.input(s) for s in states]
    if len(given) == 2:
        pair = b.fresh("t")
        b.steps.append(Op(pair, "broadcast_tensors", [Ref(given[0]), Ref(given[1])]))
        given = [pair]
    return given


def _recurrent_module(b: ModuleBuilder, cls: str) -> tuple[str, int, int, dict]:
    """A recurrent layer ``cls`` with drawn sizes, options and parameter values, observed (and in
    eval mode for dropout 0.5): its name, input size, hidden size and options."""
    size, hidden = b.pick((1, 2, 3)), b.pick((1, 2, 3))
    kwargs = _recurrent_options(b, cls, hidden)
    name = b.fresh("m")
    names = parameter_names(cls, kwargs)
    shapes = _recurrent_shapes(cls, size, hidden, kwargs)
    params = {p: b.weights(s) for p, s in zip(names, shapes, strict=True)}
    b.add_module(Module(name, cls, [size, hidden], params, kwargs))
    b.steps.append(ObserveModule(name))
    if kwargs.get("dropout") == 0.5:
        b.steps.append(ModuleMode(name, False))
    return name, size, hidden, kwargs


def _backward_observed(b: ModuleBuilder, parts: list[str]) -> None:
    """Backward from a weighted sum of ``parts``; then every tensor observed."""
    weighted = [combine(b, "mul", [p, b.input(b.shapes[p], requires_grad=False)], b.shapes[p]) for p in parts]
    b.steps.append(Backward(b.summed(weighted)))
    b.steps.extend(Observe(n) for n in b.shapes)


def _recurrent_shapes(cls: str, size: int, hidden: int, kwargs: dict) -> list[tuple[int, ...]]:
    """The shapes of ``parameter_names(cls, kwargs)``, in that order."""
    gates = hidden * {"LSTM": 4, "GRU": 3}.get(cls.removesuffix("Cell"), 1)
    bias = kwargs.get("bias", True)
    if cls.endswith("Cell"):
        return [(gates, size), (gates, hidden), *([(gates,)] * 2 * bias)]
    proj = kwargs.get("proj_size", 0)
    directions = 2 if kwargs.get("bidirectional") else 1
    shapes = []
    for layer in range(kwargs.get("num_layers", 1)):
        for _ in range(directions):
            into = size if layer == 0 else (proj or hidden) * directions
            shapes += [(gates, into), (gates, proj or hidden), *([(gates,)] * 2 * bias)]
            shapes += [(proj, hidden)] if proj else []
    return shapes


# calls of the packing functions torch refuses: (function, lengths or None, keyword arguments)
PACKING_ERRORS = ("unsorted", "zero length", "count", "total_length")


@st.composite
def packed_recurrent_layers(draw: Any, cls: str) -> Program:
    """A recurrent layer (``_recurrent_module``) on a PackedSequence: a padded float32 batch of one
    to three sequences of lengths 1 to 3 (time or batch first) packed by pack_padded_sequence
    (lengths sorted, or not with enforce_sorted=False), the layer called with or without h0/c0 (in
    the batch's order: torch permutes them), its output unpacked by pad_packed_sequence (drawn
    batch_first, padding_value, total_length); the packed data, indices, padded output, lengths
    and final states observed, graphs of the output and h_n, backward from a weighted sum; then a
    packing call torch refuses (PACKING_ERRORS)."""
    b = ModuleBuilder(draw)
    name, size, hidden, kwargs = _recurrent_module(b, cls)
    count = b.pick((2, 3, 1))
    lengths = [b.pick((1, 2, 3)) for _ in range(count)]
    enforce_sorted = b.coin()
    if enforce_sorted:
        lengths.sort(reverse=True)
    steps, first = max(lengths), b.coin()
    x = b.input((count, steps, size) if first else (steps, count, size))
    packed = b.fresh("p")
    b.steps.append(Op(packed, "nn.utils.rnn.pack_padded_sequence", [Ref(x), lengths],
                      {"batch_first": first, "enforce_sorted": enforce_sorted}))
    _item(b, packed, 0, (sum(lengths), size))
    for k in (1,) if enforce_sorted else (1, 2, 3):
        _item(b, packed, k, (count,) if k > 1 else (steps,))
    directions = 2 if kwargs.get("bidirectional") else 1
    out_size = kwargs.get("proj_size") or hidden
    layers = (directions * kwargs.get("num_layers", 1),)
    states = [(*layers, count, out_size)] + ([(*layers, count, hidden)] if cls == "LSTM" else [])
    inputs = [packed]
    inputs += _given_states(b, states, kwargs)
    result, out = b.fresh("t"), b.fresh("p")
    b.steps.append(CallModule(result, name, inputs))
    b.steps.append(Op(out, "__getitem__", [Ref(result), 0]))
    unpack: dict[str, Any] = {"batch_first": b.coin()}
    if b.coin():
        unpack["padding_value"] = -1.5
    total = steps + b.pick((0, 1)) if b.coin() else None
    if total is not None:
        unpack["total_length"] = total
    padded = b.fresh("t")
    b.steps.append(Op(padded, "nn.utils.rnn.pad_packed_sequence", [Ref(out)], unpack))
    length = total or steps
    parts = [_item(b, padded, 0, (count, length, directions * out_size) if unpack["batch_first"]
                   else (length, count, directions * out_size))]
    _item(b, padded, 1, (count,))
    if cls == "LSTM":  # (output, (h_n, c_n))
        pair = b.fresh("t")
        b.steps.append(Op(pair, "__getitem__", [Ref(result), 1]))
        parts += [_item(b, pair, k, s) for k, s in enumerate(states)]
    else:
        parts.append(_item(b, result, 1, states[0]))
    b.steps.extend([ObserveGraph(parts[0]), ObserveGraph(parts[1])])
    _backward_observed(b, parts)
    _refused_packing(b, x, out, count, steps)
    return b.program()


def _refused_packing(b: ModuleBuilder, x: str, packed: str, count: int, steps: int) -> None:
    """One call of PACKING_ERRORS (unsorted lengths with enforce_sorted, a zero length, one length
    too many, pad_packed_sequence's total_length below the longest sequence)."""
    error = b.pick(PACKING_ERRORS if count > 1 else PACKING_ERRORS[1:])
    if error == "total_length":
        b.steps.append(Op(b.fresh("t"), "nn.utils.rnn.pad_packed_sequence", [Ref(packed)],
                          {"total_length": steps - 1}))
        return
    lengths = {"unsorted": [1] * (count - 1) + [steps + 1], "zero length": [steps] * (count - 1) + [0],
               "count": [steps] * (count + 1)}[error]
    b.steps.append(Op(b.fresh("t"), "nn.utils.rnn.pack_padded_sequence", [Ref(x), lengths]))


@pytest.mark.rule("MOD-011")
@pytest.mark.parametrize("cls", ("GRU", "LSTM", "RNN"))
@examples(0.05)  # each layer: 5 programs in ci
@given(data=st.data())
def test_packed_recurrent_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(packed_recurrent_layers(cls), label="program"), backend, reference)


@pytest.mark.rule("MOD-011")
@pytest.mark.parametrize("cls", RECURRENT)
@examples(0.2)  # each layer: 20 programs in ci (short sequences, sizes up to 3)
@given(data=st.data())
def test_recurrent_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(recurrent_layers(cls), label="program"), backend, reference)


@st.composite
def padded_sequences(draw: Any, batch_first: bool) -> Program:
    """nn.utils.rnn.pad_sequence of one to three float32 sequences of lengths 0 to 3 (the first
    one's trailing shape, the others maybe broadcast to it), padded at a drawn side with a drawn
    value, its graph observed (a chain of CopySlices) and a weighted sum backpropagated; then a
    call torch refuses (no sequences, an unknown side)."""
    b = ModuleBuilder(draw)
    trailing = b.pick(((), (2,), (1, 2)))
    count = b.pick((2, 3, 1))
    leaves = [b.input((b.pick((2, 0, 1, 3)), *(trailing[1:] if i and b.coin() else trailing)))
              for i in range(count)]
    length = max(b.shapes[x][0] for x in leaves)
    shape = (count, length, *trailing) if batch_first else (length, count, *trailing)
    kwargs = {"batch_first": batch_first, "padding_value": b.pick((0.0, -1.5))}
    if b.coin():
        kwargs["padding_side"] = b.pick(("left", "right"))
    out = b.fresh("t")
    b.bind(out, shape, Op(out, "nn.utils.rnn.pad_sequence", [[Ref(x) for x in leaves]], kwargs), tracked=True)
    b.steps.append(ObserveGraph(out))
    weights = b.input(shape, requires_grad=False)
    b.steps.append(Backward(b.summed([combine(b, "mul", [out, weights], shape)])))
    bad = b.pick(([[]], [[Ref(leaves[0])]], ))
    kwargs = {} if bad == [[]] else {"padding_side": "middle"}
    b.steps.append(Op(b.fresh("t"), "nn.utils.rnn.pad_sequence", bad, kwargs))
    b.steps.extend(Observe(n) for n in b.shapes)
    return b.program()


@pytest.mark.rule("MOD-011")
@pytest.mark.parametrize("batch_first", (False, True), ids=("pad_sequence", "batch_first"))
@examples(0.05)  # each: 5 programs in ci
@given(data=st.data())
def test_pad_sequence(batch_first: bool, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(padded_sequences(batch_first), label="program"), backend, reference)


DROPOUTS = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "RReLU")
# input shapes each dropout layer is drawn on: those it takes, and those torch warns about and
# still drops (Dropout2d on 2-D and 3-D inputs, Dropout3d on 3-D ones)
DROPOUT_SHAPES: dict[str, tuple[tuple[int, ...], ...]] = {
    "Dropout": ((3,), (2, 3), (2, 2, 3)),
    "Dropout1d": ((2, 3), (2, 3, 2)),
    "Dropout2d": ((2, 3, 2, 2), (3, 2, 2), (2, 3)),
    "Dropout3d": ((2, 2, 2, 1, 2), (3, 2, 1, 2), (3, 2, 2)),
    "AlphaDropout": ((3,), (2, 3, 2)),
    "FeatureAlphaDropout": ((2, 3), (2, 3, 2, 2)),
    "RReLU": ((5,), (2, 3), (2, 2, 3)),  # (issue 22: a slope drawn per element at or below zero)
}
# the functional and native forms of each layer (torch.<native>(input, p, train))
DROPOUT_FUNCTIONS = {
    "Dropout": ("nn.functional.dropout", "dropout"),
    "Dropout1d": ("nn.functional.dropout1d", None),
    "Dropout2d": ("nn.functional.dropout2d", "feature_dropout"),
    "Dropout3d": ("nn.functional.dropout3d", None),
    "AlphaDropout": ("nn.functional.alpha_dropout", "alpha_dropout"),
    "FeatureAlphaDropout": ("nn.functional.feature_alpha_dropout", "feature_alpha_dropout"),
    "RReLU": ("nn.functional.rrelu", "rrelu"),  # torch.rrelu(input, lower, upper, training)
}
# RReLU's bounds: the defaults, others, equal ones, a negative lower bound
RRELU_BOUNDS = ({}, {"lower": 0.2, "upper": 0.6}, {"lower": 0.3, "upper": 0.3},
                {"lower": -0.5, "upper": 0.25})
DROPOUT_P = (0.5, 0.25, 0.8, 0.0, 1.0)


@st.composite
def seeded_dropouts(draw: Any, cls: str) -> Program:
    """The dropout layer ``cls`` (p drawn, in place or not; RReLU: its bounds) after
    ``torch.manual_seed``, switched
    between train and eval mode and called on inputs of the shapes it takes or warns about (through
    a clone when in place), then its functional and native forms on the same input; all outputs
    summed, backward, every tensor observed: torch's masks, scales, grad_fn and gradients."""
    b = ModuleBuilder(draw)
    b.steps.append(ManualSeed(draw(st.integers(0, 2**32 - 1))))
    shape = b.pick(DROPOUT_SHAPES[cls])
    x = b.input(shape, requires_grad=True)
    name = b.fresh("m")
    options = b.pick(RRELU_BOUNDS) if cls == "RReLU" else {"p": b.pick(DROPOUT_P)}
    inplace = b.coin()
    b.add_module(Module(name, cls, kwargs={**options, **({"inplace": True} if inplace else {})}))
    outs = []
    for _ in range(draw(st.integers(1, 3))):
        b.steps.append(ModuleMode(name, b.draw(st.integers(0, 3)) > 0))
        outs.append(b.call(name, [combine(b, "clone", [x], shape) if inplace else x], shape))
    functional, native = DROPOUT_FUNCTIONS[cls]
    training, inplace = b.coin(), b.coin()
    out = b.fresh("t")
    source = combine(b, "clone", [x], shape) if inplace else x
    kwargs = {**options, "training": training, **({"inplace": True} if inplace else {})}
    outs.append(b.bind(out, shape, Op(out, functional, [Ref(source)], kwargs), tracked=True))
    if native is not None and len(shape) >= 2:
        out = b.fresh("t")
        native_args = [options.get("lower", 1 / 8), options.get("upper", 1 / 3)] if cls == "RReLU" else [
            options["p"]]
        outs.append(b.bind(out, shape, Op(out, native, [Ref(x), *native_args, True]), tracked=True))
    b.summed(outs)
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-012")
@pytest.mark.parametrize("cls", DROPOUTS, ids=[re.sub(r"(?<!^)(?=[A-Z])", "_", c).lower() for c in DROPOUTS])
@examples(0.1)  # each layer: 10 programs in ci (one small layer)
@given(data=st.data())
def test_seeded_dropout_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(seeded_dropouts(cls), label="program"), backend, reference)


def printed_layer(b: ModuleBuilder) -> dict:
    """A layer spec with options drawn that its printed form shows (extra_repr): Linear, Conv2d,
    Flatten, Unflatten, the dropout layers, activations, pooling, normalisation and Embedding."""
    kind = b.pick(("Linear", "Conv2d", "Flatten", "Unflatten", "dropout", "activation", "pool", "norm",
                   "Embedding", "Identity"))
    if kind == "Linear":
        n, k, bias = b.pick((1, 3)), b.pick((2, 4)), b.coin()
        params = {"weight": b.weights((k, n)), **({"bias": b.weights((k,))} if bias else {})}
        return {"cls": "Linear", "args": [n, k], "kwargs": {} if bias else {"bias": False}, "params": params}
    if kind == "Conv2d":
        return b.conv2d((b.pick((1, 2)), 4, 4))[0]
    if kind == "Flatten":
        return {"cls": "Flatten", "kwargs": b.pick(({}, {"start_dim": 0}, {"start_dim": 2, "end_dim": -2}))}
    if kind == "Unflatten":
        return {"cls": "Unflatten", "args": [b.pick((1, -1)), b.pick(([2, 3], [-1, 2], [6]))]}
    if kind == "dropout":
        return {"cls": b.pick(DROPOUTS), "kwargs": b.pick(({}, {"p": 0.25}, {"p": 1.0, "inplace": True}))}
    if kind == "activation":
        cls = b.pick(("ReLU", "LeakyReLU", "Softmax", *ACTIVATION_LAYERS))
        options = {"Softmax": ({}, {"dim": 1}), "LeakyReLU": ({}, {"negative_slope": 0.2, "inplace": True})}
        return {"cls": cls, "kwargs": dict(b.pick(options.get(cls) or ACTIVATION_OPTIONS.get(cls, ({},))))}
    if kind == "pool":
        cls = b.pick(POOLS)
        if cls.startswith("Adaptive"):
            return {"cls": cls, "args": [b.pick((2, [2, 1]) if cls.endswith("2d") else (2, 3))]}
        args, kwargs, _ = pool_layer(b, cls, (5, 5) if cls.endswith("2d") else (5,))
        return {"cls": cls, "args": args, "kwargs": kwargs}
    if kind == "norm":
        cls = b.pick(NORMS)
        args, kwargs, _ = norm_layer(b, cls)
        first = tuple(args[0]) if isinstance(args[0], list) else (args[0],)
        shape = (args[1],) if cls == "GroupNorm" else first
        params = {p: b.weights(shape) for p in parameter_names(cls, kwargs)}
        return {"cls": cls, "args": args, "kwargs": kwargs, "params": params}
    if kind == "Embedding":
        kwargs = b.pick(({}, {"padding_idx": 1}, {"max_norm": 1.0}, {"scale_grad_by_freq": True}))
        return {"cls": "Embedding", "args": [4, 2], "kwargs": kwargs, "params": {"weight": b.weights((4, 2))}}
    return {"cls": "Identity"}


@st.composite
def printed_trees(draw: Any) -> Program:
    """A nested tree (Sequential, ModuleList, ModuleDict) of layers with printed options
    (``printed_layer``), its printed form and a child's observed (``print(model)``); then a
    Sequential that unflattens a (2, 6) input, drops (in eval mode) and flattens it back, called."""
    b = ModuleBuilder(draw)

    def node(depth: int) -> dict:
        if depth == 0 or b.draw(st.integers(0, 2)) == 0:
            return printed_layer(b)
        cls = b.pick(("Sequential", "Sequential", "ModuleList", "ModuleDict"))
        children = [node(depth - 1) for _ in range(b.draw(st.integers(1, 3)))]
        if cls == "ModuleDict":
            return {"cls": cls, "children": {f"{b.pick('abc')}{i}": c for i, c in enumerate(children)}}
        return {"cls": cls, "children": children}

    name = b.fresh("m")
    children = [node(2) for _ in range(b.draw(st.integers(1, 3)))]
    b.add_module(Module(name, "Sequential", children=children))
    b.steps.append(ObserveRepr(name))
    b.steps.append(ObserveRepr(b.pick(b.modules_of[name])))
    dim, sizes = b.pick(((1, [2, 3]), (-1, [3, -1]), (1, [6]), (1, [1, 2, 3])))
    out = (2, 6) if b.coin() else (12,)
    flatten = {"start_dim": 1} if out == (2, 6) else {"start_dim": 0, "end_dim": -1}
    layers = [{"cls": "Unflatten", "args": [dim, sizes]}, {"cls": b.pick(DROPOUTS)}, {"cls": "Flatten",
                                                                                      "kwargs": flatten}]
    chain = b.fresh("m")
    b.add_module(Module(chain, "Sequential", children=layers))
    b.steps.append(ModuleMode(chain, False))
    b.steps.append(ObserveRepr(chain))
    b.call(chain, [b.input((2, 6))], out)
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-013")
@examples(0.4)  # 40 programs in ci (no call but the small chain's)
@given(program=printed_trees())
def test_printed_forms(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


LAZY = ("LazyLinear", "LazyConv2d", "LazyConv1d")
LAZY_NORMS = ("LazyBatchNorm1d", "LazyBatchNorm2d")
# the lazy batch norms' options: affine, running statistics, a cumulative average
LAZY_NORM_OPTIONS = ({}, {"affine": False}, {"track_running_stats": False}, {"momentum": None, "eps": 1e-3})


@st.composite
def lazy_layers(draw: Any, cls: str) -> Program:
    """A lazy layer ``cls`` (options drawn) after ``torch.manual_seed``: its printed form, parameters
    (torch's error for the shape of an uninitialized one) and state_dict keys observed before the
    first call; then called once or twice (the first call materializes and initialises the
    parameters from the random stream and turns it into Linear or Conv2d), observed again, its
    state_dict's values (torch's initial weights) and, after backward, their gradients."""
    b = ModuleBuilder(draw)
    b.steps.append(ManualSeed(draw(st.integers(0, 2**32 - 1))))
    name = b.fresh("m")
    bias = b.draw(st.integers(0, 3)) > 0
    if cls == "LazyLinear":
        out = b.pick((1, 3))
        args, kwargs = [out], {} if bias else {"bias": False}
        shape = (*b.pick(((), (2,), (2, 2))), b.pick((1, 4)))
        out_shape = (*shape[:-1], out)
    elif cls.startswith("LazyBatchNorm"):  # no weights drawn: num_features from dim 1 of the input
        args, kwargs = [], dict(b.pick(LAZY_NORM_OPTIONS))
        shape = b.pick(((2, 3), (3, 2, 4))) if cls == "LazyBatchNorm1d" else (2, b.pick((1, 3)), 2, 2)
        out_shape = shape
    else:
        size = (4, 4) if cls == "LazyConv2d" else (5,)
        shape = (*b.pick(((), (2,))), b.pick((1, 2)), *size)
        spec, out_shape = b.conv2d(shape) if cls == "LazyConv2d" else b.conv(shape, "Conv1d")
        args, kwargs = [spec["args"][1], *spec["args"][2:]], {k: v for k, v in spec["kwargs"].items()}
        if bias and "bias" in kwargs:
            del kwargs["bias"]
    b.add_module(Module(name, cls, args, {}, kwargs))
    b.steps += [ObserveRepr(name), ObserveModule(name), StateDict(b.fresh("sd"), name)]
    for _ in range(draw(st.integers(1, 2))):
        b.call(name, [b.input(shape)], out_shape)
        b.steps += [ObserveRepr(name), ObserveModule(name)]
    b.finish()
    b.steps.append(StateDict(b.fresh("sd"), name, keep_vars=True))
    return b.program()


@pytest.mark.rule("MOD-014")
@pytest.mark.parametrize("cls", LAZY, ids=["lazy_linear", "lazy_conv2d", "lazy_conv1d"])
@examples(0.15)  # each layer: 15 programs in ci
@given(data=st.data())
def test_lazy_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(lazy_layers(cls), label="program"), backend, reference)


def _attention_mask(b: ModuleBuilder, lead: tuple[int, ...], length: int, source: int) -> dict:
    """is_causal, no mask, or an attn_mask drawn for queries of batch dims ``lead``: a bool one
    (``lt`` of a float tensor, 2-D or of the inputs' rank with ones to broadcast) or a float one,
    maybe requiring grad (which turns the flash kernel into the math path)."""
    kind = b.pick(("causal", "bool", "float", "none", "bool", "causal"))
    if kind in ("causal", "none"):
        return {"is_causal": True} if kind == "causal" else {}
    shape = b.pick(((length, source), (*(b.pick((1, n)) for n in lead), length, source)))
    x = b.input(shape, requires_grad=kind == "float" and b.coin())
    if kind == "float":
        return {"attn_mask": Ref(x)}
    mask = b.fresh("t")
    b.bind(mask, shape, Op(mask, "lt", [Ref(x), 0.0]))
    return {"attn_mask": Ref(mask)}


@st.composite
def attention_calls(draw: Any) -> Program:
    """F.scaled_dot_product_attention on query, key and value of 2 to 4 dims (lengths and head dims
    1 to 3, value's head dim maybe its own; 4-D maybe with half the key/value heads and
    enable_gqa), with a mask or is_causal (``_attention_mask``), a scale (negative too) or none,
    and maybe dropout after a seed; its graph observed and a weighted sum backpropagated. The first
    program drawn (hypothesis's simplest) is causal on the flash kernel."""
    b = ModuleBuilder(draw)
    lead = b.pick(((2, 2), (1, 2), (2,), ()))
    length, source, dim = b.pick((2, 3, 1)), b.pick((3, 1, 2)), b.pick((2, 3, 1))
    kwargs: dict[str, Any] = {}
    kv_lead = lead
    if len(lead) == 2 and b.coin():
        kwargs["enable_gqa"], kv_lead = True, (lead[0], lead[1] // 2)
    q = b.input((*lead, length, dim), requires_grad=True)
    k = b.input((*kv_lead, source, dim))
    v_dim = b.pick((dim, dim, 2))
    v = b.input((*kv_lead, source, v_dim))
    kwargs.update(_attention_mask(b, lead, length, source))
    if b.coin():
        kwargs["scale"] = b.pick((0.5, -1.0, 2.0))
    if b.draw(st.integers(0, 3)) == 3:
        b.steps.append(ManualSeed(draw(st.integers(0, 2**32 - 1))))
        kwargs["dropout_p"] = b.pick((0.5, 1.0))
    out, shape = b.fresh("t"), (*lead, length, v_dim)
    call = Op(out, "nn.functional.scaled_dot_product_attention", [Ref(q), Ref(k), Ref(v)], kwargs)
    b.bind(out, shape, call, tracked=True)
    b.steps.append(ObserveGraph(out))
    b.steps.append(Backward(b.summed([combine(b, "mul", [out, b.input(shape, requires_grad=False)], shape)])))
    b.steps.extend(Observe(n) for n in b.shapes)
    return b.program()


@pytest.mark.rule("MOD-015")
@examples(0.3)  # 30 programs in ci (one small call each)
@given(data=st.data())
def test_scaled_dot_product_attention(data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(attention_calls(), label="program"), backend, reference)


@st.composite
def multihead_layers(draw: Any) -> Program:
    """A MultiheadAttention made after ``torch.manual_seed`` (options drawn; its parameters torch's
    init), observed and printed, called on self-attention (one tensor as query, key and value) or
    cross-attention inputs, batched (batch first or not) or not, with a drawn attn_mask (bool from
    ``lt`` or float) and key_padding_mask; output and averaged weights taken out, the output's graph
    observed, a weighted sum of both backpropagated. The first program drawn has two heads over a
    batch of two (a head split in the wrong order changes its values)."""
    b = ModuleBuilder(draw)
    b.steps.append(ManualSeed(draw(st.integers(0, 2**32 - 1))))
    heads = b.pick((2, 1))
    embed = heads * b.pick((2, 1))
    kwargs: dict[str, Any] = {}
    options = (("bias", False), ("add_bias_kv", True), ("add_zero_attn", True), ("batch_first", True))
    for option, value in options:
        if b.draw(st.integers(0, 2)) == 2:
            kwargs[option] = value
    cross = b.coin()
    if cross and b.coin():
        kwargs["kdim"], kwargs["vdim"] = b.pick((1, 3)), b.pick((2, 3))
    if b.draw(st.integers(0, 3)) == 3:
        kwargs["dropout"] = 0.5
    name = b.fresh("m")
    b.add_module(Module(name, "MultiheadAttention", [embed, heads], {}, kwargs))
    b.steps += [ObserveModule(name), ObserveRepr(name)]
    batch = b.pick(((2,), (), (1,)))
    length, source = b.pick((2, 3, 1)), b.pick((3, 2)) if cross else None
    source = source or length

    def shape(n: int, size: int) -> tuple[int, ...]:
        return (*batch, n, size) if kwargs.get("batch_first") and batch else (n, *batch, size)

    q = b.input(shape(length, embed), requires_grad=True)
    inputs = [q, q, q] if not cross else [q, b.input(shape(source, kwargs.get("kdim", embed))),
                                          b.input(shape(source, kwargs.get("vdim", embed)))]
    masks: dict[str, str] = {}
    if b.coin():
        x = b.input((length, source), requires_grad=False)
        if b.coin():
            masks["attn_mask"] = x
        else:
            masks["attn_mask"] = b.fresh("t")
            b.bind(masks["attn_mask"], (length, source), Op(masks["attn_mask"], "lt", [Ref(x), -1.0]))
    if b.coin():
        x = b.input((*batch, source), requires_grad=False)
        padding = masks["key_padding_mask"] = b.fresh("t")
        b.bind(padding, (*batch, source), Op(padding, "lt", [Ref(x), -1.0]))
    result = b.fresh("t")
    b.steps.append(CallModule(result, name, inputs, masks))
    keys = source + kwargs.get("add_bias_kv", False) + kwargs.get("add_zero_attn", False)
    out = _item(b, result, 0, shape(length, embed))
    weights = _item(b, result, 1, (*batch, length, keys))
    b.steps.append(ObserveGraph(out))
    summed = [combine(b, "mul", [t, b.input(b.shapes[t], requires_grad=False)], b.shapes[t])
              for t in (out, weights)]
    b.steps.append(Backward(b.summed(summed)))
    b.steps.extend(Observe(n) for n in b.shapes)
    return b.program()


@pytest.mark.rule("MOD-016")
@examples(0.2)  # 20 programs in ci (one small layer each)
@given(data=st.data())
def test_multihead_attention(data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(multihead_layers(), label="program"), backend, reference)


TRANSFORMER_LAYERS = ("TransformerEncoderLayer", "TransformerDecoderLayer")


@st.composite
def transformer_layers(draw: Any, cls: str) -> Program:
    """A Transformer layer ``cls`` made after ``torch.manual_seed`` (d_model 2 or 4, one or two
    heads, a small feed-forward; norm_first, gelu, batch_first, bias and dropout drawn), observed and
    printed, called on a batched or unbatched input (and memory) with maybe a bool self-attention
    mask (``lt``) and key padding masks; its graph observed, the output's weighted sum
    backpropagated. The first program drawn is post-norm (a norm placed first changes its values)."""
    b = ModuleBuilder(draw)
    b.steps.append(ManualSeed(draw(st.integers(0, 2**32 - 1))))
    heads = b.pick((2, 1))
    d_model = heads * b.pick((2, 1))
    kwargs: dict[str, Any] = {"dim_feedforward": b.pick((3, 2)), "dropout": b.pick((0.0, 0.0, 0.5))}
    options = (("norm_first", True), ("activation", "gelu"), ("batch_first", True), ("bias", False))
    for option, value in options:
        if b.draw(st.integers(0, 2)) == 2:
            kwargs[option] = value
    name = b.fresh("m")
    b.add_module(Module(name, cls, [d_model, heads], {}, kwargs))
    b.steps += [ObserveModule(name), ObserveRepr(name)]
    batch, length, source = b.pick(((2,), (), (1,))), b.pick((2, 3, 1)), b.pick((3, 2))

    def shape(n: int) -> tuple[int, ...]:
        return (*batch, n, d_model) if kwargs.get("batch_first") and batch else (n, *batch, d_model)

    inputs = [b.input(shape(length), requires_grad=True)]
    if cls == "TransformerDecoderLayer":
        inputs.append(b.input(shape(source)))
    masks: dict[str, str] = {}
    first = "tgt" if cls == "TransformerDecoderLayer" else "src"
    mask_shapes = ((f"{first}_mask", (length, length)), (f"{first}_key_padding_mask", (*batch, length)))
    for key, mask_shape in mask_shapes:
        if b.coin():
            x = b.input(mask_shape, requires_grad=False)
            masks[key] = b.fresh("t")
            b.bind(masks[key], mask_shape, Op(masks[key], "lt", [Ref(x), -1.0]))
    out = b.fresh("t")
    b.steps.append(CallModule(out, name, inputs, masks))
    b.shapes[out] = shape(length)
    b.tracked.add(out)
    b.steps.append(ObserveGraph(out))
    weights = b.input(shape(length), requires_grad=False)
    b.steps.append(Backward(b.summed([combine(b, "mul", [out, weights], shape(length))])))
    b.steps.extend(Observe(n) for n in b.shapes)
    return b.program()


@pytest.mark.rule("MOD-017")
@pytest.mark.parametrize("cls", TRANSFORMER_LAYERS, ids=["encoder_layer", "decoder_layer"])
@examples(0.1)  # each layer: 10 programs in ci
@given(data=st.data())
def test_transformer_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(transformer_layers(cls), label="program"), backend, reference)


@pytest.mark.rule("MOD-014")
@pytest.mark.parametrize("cls", LAZY_NORMS)
@examples(0.08)  # each: 8 programs in ci (no weights drawn: fewer forms than the others')
@given(data=st.data())
def test_lazy_norms(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(lazy_layers(cls), label="program"), backend, reference)


SPATIAL = ("Unfold", "Fold", "UpsamplingNearest2d", "UpsamplingBilinear2d", "ChannelShuffle", "Pad", "LPPool",
           "MaxUnpool")
PADS = ("ZeroPad3d", "ConstantPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d",
        "CircularPad3d")
_FOLD_OPTIONS = {"dilation": (1, 2), "padding": (0, 1), "stride": (1, 2)}


def _pair_option(b: ModuleBuilder, values: tuple) -> tuple[tuple[int, int], Any]:
    """A drawn pair of ``values`` and how it is passed: an int (both equal) or a list."""
    pair = (b.pick(values), b.pick(values))
    return pair, pair[0] if pair[0] == pair[1] and b.coin() else list(pair)


def fold_layer(b: ModuleBuilder, cls: str) -> tuple[list, dict, tuple, tuple | None]:
    """Arguments and keywords of Unfold or Fold (options drawn, sometimes giving no block, which
    torch refuses), the input's shape and the output's (None where torch refuses)."""
    size, given_size = _pair_option(b, (2, 3, 5))
    (kh, kw), kernel = _pair_option(b, (1, 2, 3))
    kwargs: dict[str, Any] = {}
    options = {}
    for key, values in _FOLD_OPTIONS.items():
        options[key], given = _pair_option(b, values)
        if options[key] != (values[0],) * 2 or b.coin():
            kwargs[key] = given
    blocks = [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(
        size, (kh, kw), options["dilation"], options["padding"], options["stride"], strict=True)]
    batch, c = b.pick(((), (2,))), b.pick((1, 2))
    columns = (*batch, c * kh * kw, math.prod(blocks))
    ok = min(blocks) >= 1
    if cls == "Unfold":
        return [kernel], kwargs, (*batch, c, *size), columns if ok else None
    if not ok:  # (the block count Fold's input must have: torch refuses it)
        columns = (*columns[:-1], 1)
    return [given_size, kernel], kwargs, columns, (*batch, c, *size) if ok else None


def upsampling_layer(b: ModuleBuilder) -> tuple[list, dict, tuple, tuple]:
    """Keywords of an Upsampling*2d layer (size or scale_factor), the input's shape and the
    output's."""
    shape = (b.pick((1, 2)), b.pick((1, 2)), b.pick((1, 2, 3)), b.pick((2, 3)))
    if b.coin():
        out, size = _pair_option(b, (1, 3, 4, 6))
        return [], {"size": size}, shape, (*shape[:2], *out)
    factor = b.pick((2, 3, 1.5, [2, 3], [1.5, 2.0]))
    factors = factor if isinstance(factor, list) else [factor] * 2
    return [], {"scale_factor": factor}, shape, (*shape[:2], *(
        math.floor(n * f) for n, f in zip(shape[2:], factors, strict=True)))


def shuffle_or_pad_layer(b: ModuleBuilder, cls: str) -> tuple[str, list, tuple, tuple]:
    """LPPool1d/2d (norm_type finite or infinite, stride, ceil_mode), ChannelShuffle (groups
    dividing the channels), or one of ``PADS`` (an int or a padding per
    side, below the sizes; ConstantPad3d's value), batched or not: the class, its arguments, the
    input's shape and the output's."""
    if cls == "LPPool":
        cls, dims = b.pick((("LPPool1d", 1), ("LPPool2d", 2)))
        size = tuple(b.pick((2, 3, 5)) for _ in range(dims))
        kernel = tuple(b.pick((1, 2)) for _ in range(dims))
        stride = tuple(b.pick((1, 2)) for _ in range(dims))
        ceil_mode = b.coin()
        out = tuple(_pool_out(n, k, s, 0, 1, ceil_mode) for n, k, s in zip(size, kernel, stride, strict=True))
        one = (lambda v: v[0]) if dims == 1 else list
        args = [b.pick((1, 2, 3, 1.5, math.inf, -math.inf)), one(kernel), one(stride), ceil_mode]
        batch = b.pick(((), (2,)))
        return cls, args, (*batch, 2, *size), (*batch, 2, *out)
    if cls == "ChannelShuffle":
        groups, c = b.pick(((2, 4), (3, 6), (1, 2), (2, 2)))
        shape = (b.pick((1, 2)), c, *b.pick(((), (2,), (2, 3))))
        return cls, [groups], shape, shape
    cls = b.pick(PADS)
    dims = int(cls[-2])
    size = tuple(b.pick((2, 3)) for _ in range(dims))
    pads = [b.pick((0, 1)) for _ in range(2 * dims)]
    args: list = [pads[0] if len(set(pads)) == 1 and b.coin() else pads]
    if cls == "ConstantPad3d":
        args.append(b.pick((0.0, 2.5)))
    out = tuple(n + pads[2 * (dims - 1 - d)] + pads[2 * (dims - 1 - d) + 1] for d, n in enumerate(size))
    batch = b.pick(((1,), (2, 1), ())) if dims < 3 else b.pick(((1,), (2, 1)))
    return cls, args, (*batch, *size), (*batch, *out)


def _spatial_function(b: ModuleBuilder, cls: str, args: list, kwargs: dict) -> tuple[str, list, dict]:
    """The functional form of layer ``cls``: F.unfold, F.fold, or one of the deprecated
    F.upsample forms (which warn)."""
    if cls in ("Unfold", "Fold"):
        return f"nn.functional.{cls.lower()}", args, kwargs
    nearest = cls == "UpsamplingNearest2d"
    if b.coin():
        return "nn.functional.upsample_" + ("nearest" if nearest else "bilinear"), args, kwargs
    return "nn.functional.upsample", args, {
        **kwargs, **({"mode": "nearest"} if nearest else {"mode": "bilinear", "align_corners": True})}


def max_unpool_layers(b: ModuleBuilder) -> Program:
    """MaxUnpool1d, MaxUnpool2d or MaxUnpool3d (kernel_size, stride, padding drawn) printed and
    called on an input and int64 indices, distinct within each plane and inside the output; then
    backward and every tensor observed (MaxUnpool2DBackward0/3D, the input's gradient read at the
    indices)."""
    cls, dims = b.pick((("MaxUnpool1d", 1), ("MaxUnpool2d", 2), ("MaxUnpool3d", 3)))
    kernel, stride = (tuple(b.pick((1, 2, 3)) for _ in range(dims)) for _ in range(2))
    padding = tuple(b.pick(range(k // 2 + 1)) for k in kernel)
    size = tuple(b.pick((1, 2, 3)) for _ in range(dims))
    out = tuple((n - 1) * s + k - 2 * p for n, k, s, p in zip(size, kernel, stride, padding, strict=True))
    if min(out) < 1 or math.prod(out) < math.prod(size):
        padding = (0,) * dims
        out = tuple((n - 1) * s + k for n, k, s in zip(size, kernel, stride, strict=True))
    one = (lambda v: v[0]) if dims == 1 else list
    name = b.fresh("m")
    b.add_module(Module(name, cls, [one(kernel)], {}, {"stride": one(stride), "padding": one(padding)}))
    b.steps.append(ObserveRepr(name))
    batch = b.pick(((), (2,)))
    planes = math.prod((*batch, 2))
    shape = (*batch, 2, *size)
    rng = np.random.default_rng(b.draw(st.integers(0, 2**16)))  # (drawing permutations is slow)
    rows = [rng.permutation(math.prod(out))[:math.prod(size)] for _ in range(planes)]
    indices = b.fresh("i")
    b.bind(indices, shape, Leaf(indices, np.array(rows).reshape(shape), "int64"))
    b.call(name, [b.input(shape), indices], (*batch, 2, *out))
    b.finish()
    return b.program()


@st.composite
def spatial_layers(draw: Any, cls: str) -> Program:
    """The spatial layer ``cls`` (options drawn: ``fold_layer``, ``upsampling_layer``) printed and
    called once or twice, and its functional form on another input; a call torch refuses (no
    block, an input of the wrong rank or block count) observed as an error; then backward and
    every tensor observed (values, Im2ColBackward0 ..., gradients)."""
    b = ModuleBuilder(draw)
    if cls == "MaxUnpool":
        return max_unpool_layers(b)
    if cls in ("Unfold", "Fold"):
        args, kwargs, shape, out = fold_layer(b, cls)
    elif cls.startswith("Upsampling"):
        args, kwargs, shape, out = upsampling_layer(b)
    else:
        (cls, args, shape, out), kwargs = shuffle_or_pad_layer(b, cls), {}
    name = b.fresh("m")
    b.add_module(Module(name, cls, args, {}, kwargs))
    b.steps.append(ObserveRepr(name))
    for _ in range(draw(st.integers(1, 2))):
        if out is None:
            b.steps.append(CallModule(b.fresh("t"), name, [b.input(shape)]))
        else:
            b.call(name, [b.input(shape)], out)
    if cls not in SPATIAL[:4]:  # (no functional form drawn)
        b.finish()
        return b.program()
    function, f_args, f_kwargs = _spatial_function(b, cls, args, kwargs)
    y = b.fresh("t")
    step = Op(y, function, [Ref(b.input(shape)), *f_args], f_kwargs)
    if out is None:
        b.steps.append(step)
    else:
        b.bind(y, out, step, tracked=True)
    if cls in ("Unfold", "Fold") and b.coin():  # an input of another rank, or one block too many
        wrong = shape[-2:] if cls == "Unfold" else (*shape[:-1], shape[-1] + 1)
        b.steps.append(CallModule(b.fresh("t"), name, [b.input(wrong)]))
    b.finish()
    return b.program()


SPATIAL_IDS = [re.sub(r"(?<=[a-z])(?=[A-Z])", "_", cls).lower() for cls in SPATIAL]  # lppool, fold ...


@pytest.mark.rule("MOD-020")
@pytest.mark.parametrize("cls", SPATIAL, ids=SPATIAL_IDS)
@examples(0.1)  # each layer: 10 programs in ci (small inputs)
@given(data=st.data())
def test_spatial_layers(cls: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(spatial_layers(cls), label="program"), backend, reference)


# grid and affine-matrix values: exact input positions and corners (multiples of 0.25 after
# unnormalising), and others between them
GRID_VALUES = (-1.5, -1.0, -0.75, -0.5, -0.3, 0.0, 0.2, 0.5, 0.7, 1.0, 1.25)


@st.composite
def spatial_transformers(draw: Any, affine: bool) -> Program:
    """F.grid_sample (mode, padding_mode, align_corners drawn; None warns) of a 4-D or 5-D input at
    a grid that is a leaf or (``affine``) F.affine_grid of a leaf theta (its size's spatial dims
    drawn, unit ones included); sometimes a call torch refuses (batch sizes or grid width that do not match);
    then backward and every tensor observed (values, GridSampler2DBackward0 ..., gradients)."""
    b = ModuleBuilder(draw)
    k, n, c = b.pick((2, 2, 3)), b.pick((1, 2)), b.pick((1, 2))
    size, out = tuple(b.pick((1, 2, 3, 4)) for _ in range(k)), tuple(b.pick((1, 2, 3)) for _ in range(k))
    align = {} if draw(st.integers(0, 3)) == 0 else {"align_corners": b.coin()}

    def leaf(shape: tuple[int, ...]) -> str:
        name = b.fresh("x")
        values = np.array(draw(st.lists(st.sampled_from(GRID_VALUES), min_size=math.prod(shape),
                                        max_size=math.prod(shape)))).reshape(shape)
        b.bind(name, shape, Leaf(name, values, "float32", True), tracked=True)
        b.leaves.append(name)
        return name

    grid = b.fresh("t")
    if affine:
        theta = leaf((n, k, k + 1))
        b.bind(grid, (n, *out, k), Op(grid, "nn.functional.affine_grid", [Ref(theta), [n, c, *out]], align))
    else:
        grid = leaf((n, *out, k))
    x = b.input((n, c, *size))
    kwargs = {**align, "mode": b.pick(("bilinear", "nearest")),
              "padding_mode": b.pick(("zeros", "border", "reflection"))}
    y = b.fresh("t")
    b.bind(y, (n, c, *out), Op(y, "nn.functional.grid_sample", [Ref(x), Ref(grid)], kwargs), tracked=True)
    if b.coin():  # a grid of another batch size or width
        wrong = (n + 1, *out, k) if b.coin() else (n, *out, 5 - k)
        b.steps.append(Op(b.fresh("t"), "nn.functional.grid_sample", [Ref(x), Ref(b.input(wrong))], kwargs))
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-020")
@pytest.mark.parametrize("affine", [True, False], ids=["affine_grid", "grid_sample"])
@examples(0.1)  # each grid: 10 programs in ci (small grids)
@given(data=st.data())
def test_spatial_transformer(affine: bool, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(spatial_transformers(affine), label="program"), backend, reference)
