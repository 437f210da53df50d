"""The public names impl declares (impl/_api.py): torch's names, each declared once."""

import pytest
import torch

import impl
from impl import _api


def test_every_public_name_is_torch_s():
    assert [name for name in impl.__all__ if not hasattr(torch, name)] == []
    assert sorted(impl.__all__) == impl.__all__  # generated, not a hand-kept list


def test_every_method_is_torch_s():
    assert [name for name in _api.METHODS if not hasattr(torch.Tensor, name)] == []


def test_every_name_in_all_is_bound():
    assert [name for name in impl.__all__ if getattr(impl, name) is not _api.FUNCTIONS[name]] == []


def test_a_name_declared_twice_is_refused():
    first = _api.METHODS["add"]
    with pytest.raises(RuntimeError, match="'add' is declared twice"):
        _api.method("add")(lambda self: None)
    assert _api.METHODS["add"] is first
    _api.method("add")(first)  # the same object again is no second declaration
