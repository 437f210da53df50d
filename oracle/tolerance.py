"""Dtype-aware numeric tolerances: the one place the oracle decides that two numbers agree.

The defaults are those of ``torch.testing.assert_close``; they are never loosened to hide a
divergence (a known divergence is a strict xfail instead).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

# dtype name -> (rtol, atol)
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}
EXACT = (0.0, 0.0)


def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for values of a dtype (given by torch's name, with or without ``torch.``)."""
    return TOLERANCES.get(dtype.removeprefix("torch."), EXACT)


def close(a: float, b: float, dtype: str) -> bool:
    """Whether two scalars agree for ``dtype``; NaN equals NaN, infinities must match exactly."""
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, float | int):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    rtol, atol = tolerance(dtype)
    return abs(a - b) <= atol + rtol * abs(b)


def all_close(a: Iterable, b: Iterable, dtype: str) -> bool:
    """Element-wise ``close`` over two flat sequences of equal length."""
    a, b = list(a), list(b)
    return len(a) == len(b) and all(close(x, y, dtype) for x, y in zip(a, b, strict=True))
