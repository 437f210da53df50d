"""impl against torch on the argument parser's TypeError, in the function form and in the Tensor
method form, whose message differs: the method's leaves self out of "got (...)", counts positions
from the first argument after self, lists the method's signatures (no ``Tensor input``, no
``out``) and is named for the method (``clip``, ``lerp_``). Each case runs the same call on torch
and on impl and compares the whole message."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import impl

# calls torch refuses with its parser's TypeError: the method form, then the function form
METHOD_CASES = [
    *(f"x.{op}({bad})" for op in ("tensor_split", "hsplit", "vsplit", "dsplit") for bad in ("'a'", "1.5")),
    *(f"x.{op}({bad})" for op in ("hsplit", "vsplit", "dsplit") for bad in ("None",)),
    *(f"x.{op}({bad})" for op in ("var", "std") for bad in ("'a'", "1.5", "[1.5]", "x, 'a'")),
    *(f"x.{op}({bad})" for op in ("max", "min") for bad in ("None", "'a'", "1.5", "[1.5]", "(0, 'a')")),
    *(f"x.{op}({bad})" for op in ("clamp", "clip") for bad in ("'a'", "[1.5]", "(0, 'a')", "x, 'a'")),
    *(f"x.{op}({bad})" for op in ("bitwise_and", "bitwise_or", "bitwise_xor") for bad in ("None", "[1.5]")),
    "x.addmm(0, None)",
    "m.addmm(None, m)",
    "x.where(0, None)",
    "x.where(None, x)",
    "x.where(b, None)",
    "x.masked_fill(0, None)",
    "x.masked_fill(x, 'a')",
    "x.scatter(0, None)",
    "x.scatter(0, i, None)",
    "x.scatter(0, i, 'a')",
    "x.scatter(x, x, x, x)",
    "x.scatter(0, i, src=1.0)",
    "x.scatter(0, i, value=x)",
    "x.scatter(0, i, x, reduce=1)",
    "x.scatter_(0, i, src=1.0)",
    "x.scatter_add(0, i, None)",
    "x.index_add(0, i, None)",
    "x.index_add(0, i, x, alpha='a')",
    "x.index_add_(0, i, None)",
    "x.index_copy(0, i, 'a')",
    "x.index_fill(0, i, None)",
    "x.lerp(0, None)",
    "x.lerp(x, 'a')",
    "x.lerp_(x, 'a')",
    "x.pow(None)",
    "x.pow_(None)",
    "x.heaviside(None)",
    "x.float_power(None)",
    "x.round(decimals='a')",
    "x.round_(decimals='a')",
]
FUNCTION_CASES = [
    "torch.tensor_split(x, 'a')",
    "torch.var(x, 'a')",
    "torch.max(x, None)",
    "torch.clamp(x, 'a')",
    "torch.bitwise_and(x, None)",
    "torch.where(None, x, x)",
    "torch.masked_fill(x, x, 'a')",
    "torch.scatter(x, 0, i, None)",
    "torch.scatter(x, 0, i, src=1.0)",
    "torch.index_add(x, 0, i, None)",
    "torch.index_fill(x, 0, i, None)",
    "torch.lerp(x, x, 'a')",
    "torch.pow(x, None)",
    "torch.round(x, decimals='a')",
    "torch.addmm(m, None, m)",
]


def message(lib: Any, call: str) -> tuple[str, str]:
    """The error (type, message) that ``call`` raises on ``lib``."""
    names = {"torch": lib, "x": lib.zeros(3), "i": lib.tensor([0]), "m": lib.zeros(2, 2)}
    names["b"] = lib.tensor([True, False, True])
    with pytest.raises(Exception) as caught:  # noqa: PT011 - the error is what is compared
        eval(call, names)  # noqa: S307 - the cases above, nothing else
    return type(caught.value).__name__, str(caught.value)


@pytest.mark.parametrize("call", METHOD_CASES + FUNCTION_CASES)
def test_parser_message(call: str) -> None:
    assert message(impl, call) == message(torch, call)


def test_an_error_of_another_call_is_kept() -> None:
    """A method's recasting touches only the error of its own call with self as input: a
    function the method calls on another tensor keeps the function form's message."""
    from impl._methods import _parsed_as_method

    def method(self: Any, other: Any) -> Any:
        return impl.clamp(other, "a")

    x, y = impl.zeros(3), impl.zeros(2)
    expected = message(torch, "torch.clamp(x, 'a')")[1]
    with pytest.raises(TypeError) as caught:
        _parsed_as_method("clamp", method)(x, y)
    assert str(caught.value) == expected
