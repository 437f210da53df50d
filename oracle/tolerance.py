"""Dtype-aware numeric tolerances: the one place the oracle decides that two numbers agree.

Two judgements, the second used only where the first rejects a value:

- **fixed**: ``|test - ref| <= atol + rtol * |ref|`` with the defaults of
  ``torch.testing.assert_close`` for the dtype (``close``). They are never loosened to hide a
  divergence (a known divergence is a strict xfail instead).
- **error-aware**, for float32, float16 and bfloat16 only (``LOW_PRECISION``): the reference
  program is rerun in float64 and the value is accepted when
  ``|test - ref| <= atol + rtol * |ref| + ERROR_FACTOR * |ref - ref64|`` (``error_aware_close``).
  A sum whose terms cancel carries a rounding error far above ``rtol * |result|``, in torch as in
  any engine; the reference's own distance from its float64 result measures that error, as torch's
  OpInfo tests judge low-precision results against a higher-precision reference. Where torch is
  accurate (``ref == ref64``) nothing is loosened; ``ERROR_FACTOR`` is 2 because two engines each
  as accurate as torch differ by at most twice torch's error. The rerun (``oracle.interpreter.run``
  with ``float64=True``) is made only on a mismatch, and its values count only where it pairs
  event by event with the reference run (``oracle.compare.Float64Rerun``).
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


LOW_PRECISION = ("float32", "float16", "bfloat16")
ERROR_FACTOR = 2.0


def error_allowance(ref: float, ref64: float, dtype: str) -> float | None:
    """The largest ``|test - ref|`` the error-aware judgement accepts, given the reference's value
    ``ref`` in ``dtype`` and ``ref64`` from its float64 rerun; None where the judgement does not
    apply (dtype not in ``LOW_PRECISION``, or a non-finite value)."""
    if dtype.removeprefix("torch.") not in LOW_PRECISION or not all(map(_finite, (ref, ref64))):
        return None
    rtol, atol = tolerance(dtype)
    return atol + rtol * abs(ref) + ERROR_FACTOR * abs(ref - ref64)


def error_aware_close(test: float, ref: float, ref64: float, dtype: str) -> bool:
    """Whether ``test`` agrees with ``ref`` by the fixed judgement (``close``) or, failing that, by
    the error-aware one: within ``error_allowance(ref, ref64, dtype)`` of ``ref``."""
    if close(test, ref, dtype):
        return True
    allowance = error_allowance(ref, ref64, dtype)
    return allowance is not None and _finite(test) and abs(test - ref) <= allowance


def _finite(value: object) -> bool:
    return isinstance(value, float | int) and not isinstance(value, bool) and math.isfinite(value)


def all_close(a: Iterable, b: Iterable, dtype: str) -> bool:
    """Element-wise ``close`` over two flat sequences of equal length."""
    a, b = list(a), list(b)
    return len(a) == len(b) and all(close(x, y, dtype) for x, y in zip(a, b, strict=True))
