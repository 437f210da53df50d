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
    Module,
    ModuleMode,
    ModuleZeroGrad,
    Observe,
    ObserveModule,
    Op,
    Program,
    Ref,
)
from oracle.strategies import LOSSES, TREE_INPUTS, ModuleBuilder

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
    (set_to_none or not) between some of them, parameters' .grad observed each time (seed 001)."""
    b = ModuleBuilder(draw)
    shape = b.pick(TREE_INPUTS)
    x = b.input(shape)
    net, out_shape = b.tree(shape)
    for _ in range(draw(st.integers(2, 3))):
        if b.coin():
            b.steps.append(ModuleZeroGrad(net, b.coin()))
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


@st.composite
def losses(draw: Any) -> Program:
    """A loss of every class and reduction on a prediction (a leaf, or a Linear layer's output)
    and a target of the kind it takes; backward from the loss (summed when not reduced)."""
    b = ModuleBuilder(draw)
    shape = b.pick(((3,), (2, 3), (4, 2)))
    prediction = b.input(shape, requires_grad=b.draw(st.integers(0, 3)) > 0)
    if b.coin():
        net, out_shape = b.tree(shape, depth=0)
        if len(out_shape) == len(shape) and out_shape[-1] > 1:
            prediction = b.call(net, [prediction], out_shape)
    b.loss(prediction, b.pick(LOSSES))
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-004")
@settings(deadline=None)
@given(program=losses())
def test_losses_with_every_reduction(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


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


def _conv_out(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


@st.composite
def conv_layers(draw: Any) -> Program:
    """One Conv2d with torch's options drawn at random (stride, padding as ints, pairs, 'valid' or
    'same', dilation, groups, bias, padding_mode), sometimes followed by an in-place ReLU or
    LeakyReLU, called once or twice on batched or unbatched images. Inputs and weights are small
    multiples of 0.5, so float32 arithmetic is exact and any difference is a rule, not rounding."""
    b = ModuleBuilder(draw)
    groups = b.pick((1, 1, 2))
    c_in, c_out = groups * b.pick((1, 2)), groups * b.pick((1, 2))
    kernel = (b.pick((1, 2, 3)), b.pick((1, 2, 3)))
    size = (b.pick((3, 4, 5)), b.pick((3, 4, 5)))
    stride = (b.pick((1, 1, 2)), b.pick((1, 1, 2)))
    dilation = (b.pick((1, 1, 2)), b.pick((1, 1, 2)))
    mode = b.pick(("zeros", "zeros", "reflect", "replicate", "circular"))
    paddings: list[Any] = [0, 1, (1, 0), (0, 2), "valid"] + (["same"] if stride == (1, 1) else [])
    padding = b.pick(paddings)
    if padding == "same":  # torch pads (dilation * (kernel - 1)) in total, more on the right
        pads = tuple(d * (k - 1) for d, k in zip(dilation, kernel, strict=True))
        out = size
    else:
        pads = (0, 0) if padding == "valid" else (padding, padding) if isinstance(padding, int) else padding
        out = tuple(_conv_out(*dims) for dims in zip(size, kernel, stride, pads, dilation, strict=True))
    limit = {"reflect": lambda p, n: p < n, "circular": lambda p, n: p <= n}.get(mode, lambda p, n: True)
    if min(out) < 1 or not all(limit(p, n) for p, n in zip(pads, size, strict=True)):
        mode, padding, pads = "zeros", 0, (0, 0)
        out = tuple(_conv_out(*dims) for dims in zip(size, kernel, stride, pads, dilation, strict=True))
    if min(out) < 1:
        stride, dilation, kernel = (1, 1), (1, 1), (1, 1)
        out = size
    bias = b.coin()
    kwargs: dict[str, Any] = {"stride": list(stride), "dilation": list(dilation), "groups": groups}
    kwargs["padding"] = list(padding) if isinstance(padding, tuple) else padding
    if mode != "zeros":
        kwargs["padding_mode"] = mode
    if not bias:
        kwargs["bias"] = False
    params = {"weight": b.weights((c_out, c_in // groups, *kernel))}
    if bias:
        params["bias"] = b.weights((c_out,))
    layers = [{"cls": "Conv2d", "args": [c_in, c_out, list(kernel)], "kwargs": kwargs, "params": params}]
    activation = b.pick((None, "ReLU", "LeakyReLU"))
    if activation:
        slope = {"negative_slope": 0.25} if activation == "LeakyReLU" else {}
        layers.append({"cls": activation, "kwargs": {**slope, "inplace": b.coin()}})
    name = b.fresh("m")
    b.add_module(Module(name, "Sequential", [], {}, {}, layers))
    batch = b.pick(((), (1,), (2,)))
    for _ in range(draw(st.integers(1, 2))):
        b.call(name, [b.input((*batch, c_in, *size))], (*batch, c_out, *out))
    b.finish()
    return b.program()


@pytest.mark.rule("MOD-006")
@examples(2)
@given(program=conv_layers())
def test_conv2d_options_and_inplace_activations(
    program: Program, backend: Backend, reference: Backend
) -> None:
    check(program, backend, reference)
