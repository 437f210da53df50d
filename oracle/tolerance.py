"""Dtype-aware numeric tolerances: the one place the oracle decides that two numbers agree.

Two judgements, the second used only where the first rejects a value:

- **fixed**: ``|test - ref| <= atol + rtol * |ref|`` with the defaults of
  ``torch.testing.assert_close`` for the dtype (``close``). They are never loosened to hide a
  divergence (a known divergence is a strict xfail instead).
- **error-aware**, for float32, float16 and bfloat16 only (``LOW_PRECISION``): the reference
  program is rerun twice, in float64 and on its inputs nudged by an ulp
  (``oracle.interpreter.run``), and the value is accepted when
  ``|test - ref| <= atol + rtol * |ref| + ERROR_FACTOR * max(|ref - variant|)``
  (``error_allowance``). A sum whose terms cancel carries a rounding error far above
  ``rtol * |result|``, in torch as in any engine. The reference's distance from its float64
  result is its own rounding error there, as torch's OpInfo tests judge low-precision results
  against a higher-precision reference; but that is one sample of the rounding, which may be small
  by luck where a second engine's is not. The nudged rerun measures the result's sensitivity to a
  one-ulp change of its inputs (its condition times the dtype's eps: what any backward-stable
  float32 computation may be off by). Where torch is accurate and the result well conditioned,
  nothing is loosened; ``ERROR_FACTOR`` is 2 because two engines each within that of the truth
  differ by at most twice it. The reruns are made only on a mismatch, and their values count only
  where they pair event by event with the reference run (``oracle.compare.Rerun``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

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


def error_allowance(ref: float, variants: Sequence[float], dtype: str) -> float | None:
    """The largest ``|test - ref|`` the error-aware judgement accepts, given the reference's value
    ``ref`` in ``dtype`` and its ``variants``: the reference's values for the same program in reruns
    an engine as accurate as torch cannot be told from (in float64; on inputs nudged by an ulp).
    None where the judgement does not apply: a dtype not in ``LOW_PRECISION``, no variant, or a
    non-finite value."""
    if dtype.removeprefix("torch.") not in LOW_PRECISION or not variants:
        return None
    if not all(map(_finite, (ref, *variants))):
        return None
    rtol, atol = tolerance(dtype)
    return atol + rtol * abs(ref) + ERROR_FACTOR * max(abs(ref - v) for v in variants)


def error_aware_close(test: float, ref: float, variants: Sequence[float], dtype: str) -> bool:
    """Whether ``test`` agrees with ``ref`` by the fixed judgement (``close``) or, failing that, by
    the error-aware one: within ``error_allowance(ref, variants, dtype)`` of ``ref``."""
    if close(test, ref, dtype):
        return True
    allowance = error_allowance(ref, variants, dtype)
    return allowance is not None and _finite(test) and abs(test - ref) <= allowance


def _finite(value: object) -> bool:
    return isinstance(value, float | int) and not isinstance(value, bool) and math.isfinite(value)


def all_close(a: Iterable, b: Iterable, dtype: str) -> bool:
    """Element-wise ``close`` over two flat sequences of equal length."""
    a, b = list(a), list(b)
    return len(a) == len(b) and all(close(x, y, dtype) for x, y in zip(a, b, strict=True))
