"""torch.set_printoptions (precision, threshold, edgeitems, linewidth, sci_mode, the 'default',
'short' and 'full' profiles): impl prints every tensor as torch prints it under the same options."""

from __future__ import annotations

import pytest
import torch

import impl
from impl import _repr

OPTIONS = [
    {},
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"threshold": 5},
    {"edgeitems": 1, "threshold": 5},
    {"edgeitems": 0, "threshold": 5},
    {"linewidth": 30},
    {"linewidth": 5},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "default"},
    {"profile": "short", "precision": 6},
    {"profile": "bogus"},
    {"threshold": 0},
    {"threshold": 10, "edgeitems": 2, "linewidth": 40, "sci_mode": True},
]
VALUES = [
    "torch.tensor([1.12345, 2.5, -3.0])",
    "torch.arange(10)",
    "torch.arange(2000.)",
    "torch.tensor([1e-5, 1.0])",
    "torch.tensor([1e10, 1.])",
    "torch.tensor([1., 2., 3.])",
    "torch.randn(4, 5, 6)",
    "torch.tensor(3.14159)",
    "torch.tensor([])",
    "torch.zeros(2, 0)",
    "torch.arange(30).reshape(5, 6)",
    "torch.tensor([True, False] * 4)",
    "torch.randn(3, 3, dtype=torch.float64, requires_grad=True) * 2",
    "torch.tensor([float('nan'), float('inf'), 1.5])",
    "torch.arange(12, dtype=torch.float16).reshape(3, 4) / 7",
    "torch.nn.Parameter(torch.ones(8) / 3)",
]


@pytest.fixture(autouse=True)
def _default_options():
    yield
    impl.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def _printed(mod, options):
    mod.set_printoptions(**options)
    mod.manual_seed(0)
    return [repr(eval(v, {"torch": mod})) for v in VALUES]


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_printed_as_torch(options):
    assert _printed(impl, options) == _printed(torch, options)
    assert _repr.get_printoptions() == torch._tensor_str.get_printoptions()


def test_options_persist_until_reset():
    for mod in (impl, torch):
        mod.set_printoptions(precision=1)
        mod.set_printoptions(linewidth=20)  # precision stays; sci_mode is reset to None by every call
    assert _repr.get_printoptions() == torch._tensor_str.get_printoptions()
    assert repr(impl.arange(8) / 3) == repr(torch.arange(8) / 3)
