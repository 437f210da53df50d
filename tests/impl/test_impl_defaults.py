"""The default dtype and the default device (torch.set_default_dtype, set_default_device, ``with
torch.device(...)``) in impl's creation paths, against torch where its CPU build shows them, and on
impl's 'cuda' through the cupy stand-in of test_impl_device."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

import impl
import impl._xp
from tests.impl.test_impl_device import cp, cuda, outcome  # noqa: F401  (cuda: a fixture)

FLOATS = ("float32", "float64", "float16", "bfloat16")
# creation calls whose dtype follows the default dtype, or a rule of its own (int64, the input's)
CREATIONS = (
    "tensor(1.5)", "tensor([1, 2.5])", "tensor([[1, 2], [3, 4.0]])", "tensor([])", "tensor([1, 2])",
    "tensor([np.float32(1), 2.5])", "tensor([np.int32(2)])", "tensor([np.float16(1), np.int64(2)])",
    "tensor([tensor(1), 2.5])", "as_tensor([1.5])", "arange(0, 1, 0.25)", "arange(3)", "arange(0.5)",
    "linspace(0, 1, 5)", "logspace(0, 2, 3)", "logspace(0, 2, 3, base=2)", "full((2,), 1.5)",
    "full((2,), 2)", "full((2,), True)", "zeros(2)", "ones(2, 3)", "empty(0)", "eye(2)", "rand(2)",
    "randn(3)", "randint(0, 3, (2,))", "zeros_like(tensor([1, 2]))",
    "ones_like(tensor([1.0], dtype=float32))", "rand_like(tensor([1.0], dtype=float32))",
    "Tensor(2)", "Tensor([1, 2])", "nn.Linear(2, 2).weight", "tensor([1, 2]) / 2", "tensor([1, 2]) * 0.5",
)  # fmt: skip


@pytest.fixture
def default_dtype() -> Iterator[None]:
    """Both defaults restored after the test, whatever it set."""
    yield
    for module in (torch, impl):
        module.set_default_dtype(module.float32)
        module.set_default_device(None)


def both(call: str, then: str = "") -> tuple[tuple[str, str], tuple[str, str]]:
    """The outcome of ``call`` (then ``then`` of its result) on impl and on torch."""
    return tuple(outcome(lambda m=m: eval(call + then, {**vars(m), "np": np})) for m in (impl, torch))


def made(module: Any, call: str) -> tuple[str, str]:
    namespace = {**vars(module), "np": np, "nn": module.nn}
    return outcome(lambda: (eval(call, namespace).dtype, tuple(eval(call, namespace).shape)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_creation_follows_default_dtype(dtype: str, default_dtype: None) -> None:
    torch.set_default_dtype(getattr(torch, dtype))
    impl.set_default_dtype(getattr(impl, dtype))
    for call in CREATIONS:
        assert made(impl, call) == made(torch, call), call
    assert repr(impl.tensor([1.5, 2.0])) == repr(torch.tensor([1.5, 2.0]))
    assert impl.Tensor(1).type() == torch.Tensor(1).type()


@pytest.mark.parametrize("value", ["int64", "bool", "int32", "uint8", "'float32'", "3", "None"])
def test_set_default_dtype_refuses_what_torch_refuses(value: str, default_dtype: None) -> None:
    def set_default(module: Any) -> Any:
        return module.set_default_dtype(eval(value, vars(module)))

    assert outcome(lambda: set_default(impl)) == outcome(lambda: set_default(torch))
    assert impl.get_default_dtype() is impl.float32


def test_logspace_and_linspace_values(default_dtype: None) -> None:
    calls = [
        "logspace(0, 1, 5)", "logspace(0, 3, 7, dtype=float64)", "logspace(-1, 2, 4, dtype=int64)",
        "logspace(0, 1, 1)", "logspace(0, 400, 3)", "logspace(0, 1, 3, base=2, dtype=float16)",
        "linspace(0, 1, 7)", "linspace(0, 1, 7, dtype=float64)", "linspace(0, 10, 5, dtype=int64)",
        "linspace(2, 3, 1)", "linspace(0, 1, -1)", "logspace(0, 1, -1)",
    ]  # fmt: skip
    for call in calls:
        first, second = both(call, ".tolist()")
        assert first == second, call


def test_default_device_without_cuda(default_dtype: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """As torch's CPU build: 'cuda' is accepted as the default, then every factory (and
    get_default_device, which makes an empty tensor to learn the index) raises."""
    monkeypatch.setattr(impl._xp, "_cupy", None)
    for module in (torch, impl):
        assert repr(module.get_default_device()) == "device(type='cpu')"
        module.set_default_device("cpu:0")
    assert repr(impl.get_default_device()) == repr(torch.get_default_device())
    for module in (torch, impl):
        module.set_default_device("cuda")
    for call in ("zeros(1)", "get_default_device()", "tensor([1.0])", "arange(2)", "Tensor(1).device"):
        first, second = both(call)
        assert first == second, call
    assert outcome(lambda: impl.zeros_like(impl.ones(1, device="cpu")).device) == ("ok", "device(type='cpu')")


def test_device_context_nests(default_dtype: None) -> None:
    seen = []
    for module in (torch, impl):
        with module.device("cpu") as outer:
            inner = module.device("cpu:0")
            with inner:
                during = repr(module.get_default_device())
            after = repr(module.get_default_device())
        seen.append((repr(outer), during, after, repr(module.get_default_device())))
    assert seen[0] == seen[1]


@pytest.mark.usefixtures("cuda")
def test_default_device_places_factories_on_cuda(default_dtype: None) -> None:
    """On 'cuda' (the stand-in): factory functions follow the default device, ``*_like``,
    ``torch.Tensor(...)`` and from_numpy do not, an explicit device wins, and nn layers' parameters
    are made there."""
    impl.set_default_device("cuda")
    assert impl.get_default_device() == impl.device("cuda", 0)
    for call in ("zeros(2)", "tensor([1.5])", "arange(3)", "rand(2)", "linspace(0, 1, 3)", "full((1,), 2.0)"):
        assert str(eval(call, vars(impl)).device) == "cuda:0", call
    assert str(impl.nn.Linear(2, 2).weight.device) == "cuda:0"
    assert str(impl.zeros(2, device="cpu").device) == "cpu"
    assert str(impl.Tensor(2).device) == "cpu"
    assert str(impl.from_numpy(np.zeros(2)).device) == "cpu"
    assert str(impl.zeros_like(impl.zeros(2, device="cpu")).device) == "cpu"
    with impl.device("cpu"):
        assert str(impl.ones(1).device) == "cpu"
        assert str(impl.get_default_device()) == "cpu"
    assert isinstance(impl.ones(1)._data, cp.ndarray)
    impl.set_default_device(None)
    assert str(impl.ones(1).device) == "cpu"
