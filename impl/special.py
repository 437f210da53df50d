"""torch.special's subset impl has: the gamma family and Bessel functions of impl/_ops/gamma.py,
ndtr, and torch's own functions under their special names (expit is sigmoid, gammaln lgamma,
psi digamma, multigammaln mvlgamma ...). A call torch's parser refuses names ``special_<name>``
as torch's does."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from impl import _api as api
from impl._ops import gamma
from impl._ops.elementwise import add_scalar, mul_scalar
from impl._tensor import Tensor
from impl.dtypes import get_default_dtype

_FUNCTIONS = api.FUNCTIONS


def _special(fn: Callable, name: str) -> Callable:
    """``fn`` as ``torch.special.<name>``: the TypeErrors of its parser name ``special_<name>``."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError as error:
            text = str(error)
            head = text.split("(", 1)[0]
            if head.isidentifier() and text[len(head):].startswith("()"):
                raise TypeError(f"special_{name}{text[len(head):]}") from None
            raise

    call.__name__ = call.__qualname__ = name
    return call


def _i1(input: Tensor) -> Tensor:
    return gamma.i1(input)


def _ndtr(input: Tensor) -> Tensor:
    """The standard normal's distribution function, ``(1 + erf(x / sqrt(2))) / 2`` as torch
    composes it."""
    if not isinstance(input, Tensor):
        raise TypeError(f"ndtr(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.is_floating_point():  # promoted as torch's ``x * M_SQRT1_2`` (no gradient to keep)
        input = input.to(get_default_dtype())
    return mul_scalar(add_scalar(_FUNCTIONS["erf"](mul_scalar(input, math.sqrt(0.5))), 1), 0.5)


def _round(input: Tensor, *, decimals: int = 0) -> Tensor:
    return _FUNCTIONS["round"](input, decimals=decimals)


def _softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return _FUNCTIONS["softmax"](input, dim, dtype=dtype)


def _log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return _FUNCTIONS["log_softmax"](input, dim, dtype=dtype)


# torch.special's name -> the function (torch's public one where the name is a string)
_TABLE: dict[str, Any] = {
    "gammaln": "lgamma", "digamma": "digamma", "psi": "digamma", "polygamma": "polygamma",
    "multigammaln": "mvlgamma", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "i0": "i0", "i1": _i1,
    "expit": "sigmoid", "logit": "logit", "exp2": "exp2", "expm1": "expm1", "log1p": "log1p", "sinc": "sinc",
    "round": _round, "xlogy": "xlogy", "logsumexp": "logsumexp", "softmax": _softmax,
    "log_softmax": _log_softmax, "ndtr": _ndtr, "gammainc": "igamma", "gammaincc": "igammac",
}


def _public(name: str) -> Callable:
    """``torch.<name>`` as the registry holds it when called (after ``bind`` has given it ``out=``)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return _FUNCTIONS[name](*args, **kwargs)

    return call


globals().update(
    {name: _special(_public(fn) if isinstance(fn, str) else fn, name) for name, fn in _TABLE.items()}
)
__all__ = sorted(_TABLE)
