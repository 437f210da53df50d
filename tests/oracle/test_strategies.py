"""Self-tests of the program strategies: the layers ``ModuleBuilder`` draws are ones torch builds
and accepts, with the output shapes the builder declares (its trees bind shapes on them), and with
bounded gain where asked for."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from oracle.strategies import TREE_INPUTS, ModuleBuilder

IMAGES = st.tuples(
    st.sampled_from(((), (1,), (2,))), st.integers(1, 4), st.integers(1, 5), st.integers(1, 5)
).map(lambda t: (*t[0], *t[1:]))


@st.composite
def conv_layers(draw: Any) -> tuple[tuple[int, ...], bool, dict, tuple[int, ...]]:
    """An image shape, ``keep``, and the Conv2d spec and output shape ``ModuleBuilder`` draws."""
    shape, keep = draw(IMAGES), draw(st.booleans())
    spec, out = ModuleBuilder(draw).conv2d(shape, keep)
    return shape, keep, spec, out


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths:UserWarning")  # torch's
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(layer=conv_layers())
def test_drawn_conv2d_layers_build_and_have_the_declared_shape(layer: tuple) -> None:
    shape, keep, spec, out = layer
    conv = torch.nn.Conv2d(*spec["args"], **spec["kwargs"])
    assert conv.weight.shape == torch.Size(torch.tensor(spec["params"]["weight"]).shape)
    assert ("bias" in spec["params"]) == (conv.bias is not None)
    assert tuple(conv(torch.zeros(shape)).shape) == out
    if keep:
        assert out == shape


SEARCH = settings(max_examples=500, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
OPTIONS = {
    "groups": lambda kw: kw["groups"] > 1,
    "dilation": lambda kw: max(kw["dilation"]) > 1,
    "stride": lambda kw: max(kw["stride"]) > 1,
    "same": lambda kw: kw["padding"] == "same",
    "valid": lambda kw: kw["padding"] == "valid",
    "pair": lambda kw: isinstance(kw["padding"], list),
    "no bias": lambda kw: kw.get("bias") is False,
}
for _mode in ("reflect", "replicate", "circular"):
    OPTIONS[_mode] = lambda kw, mode=_mode: kw.get("padding_mode") == mode


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_every_conv2d_option_is_drawn(option: str) -> None:
    find(conv_layers(), lambda layer: OPTIONS[option](layer[2]["kwargs"]), settings=SEARCH)


@pytest.mark.parametrize("cls", ["ReLU", "LeakyReLU"])
def test_in_place_activations_are_drawn(cls: str) -> None:
    @st.composite
    def activations(draw: Any) -> dict:
        return ModuleBuilder(draw).activation((2, 3))

    find(activations(), lambda spec: spec["cls"] == cls and spec["kwargs"].get("inplace"), settings=SEARCH)


@st.composite
def bounded_gain_layers(draw: Any) -> dict:
    """A layer spec ``ModuleBuilder(bounded_gain=True)`` draws on a tree input or image shape."""
    shape = draw(st.sampled_from(TREE_INPUTS) | IMAGES)
    return ModuleBuilder(draw, bounded_gain=True).layer(shape, draw(st.booleans()))[0]


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(spec=bounded_gain_layers())
def test_bounded_gain_layers_output_no_more_than_their_largest_input(spec: dict) -> None:
    """The training loops' layers (conformance/test_optim.py): each output's weights add up to at
    most 1 in absolute value, so an output exceeds no input in size but for its bias."""
    weight = spec.get("params", {}).get("weight")
    if weight is not None:
        rows = torch.tensor(weight).flatten(1)
        assert rows.abs().sum(1).max() <= 1.0
