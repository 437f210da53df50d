"""Dtype-aware numeric tolerances: the one place the oracle decides that two numbers agree.

Two judgements, the second used only where the first rejects a value:

- **fixed**: ``|test - ref| <= atol + rtol * |ref|`` with the defaults of
  ``torch.testing.assert_close`` for the dtype (``close``). They are never loosened to hide a
  divergence (a known divergence is a strict xfail instead).
- **error-aware**, for float32, float16 and bfloat16 only (``LOW_PRECISION``): the reference
  program is rerun in float64 and on its inputs nudged by an ulp (``oracle.interpreter.run``).
  A sum whose terms cancel carries a rounding error far above ``rtol * |result|``, in torch as in
  any engine. The reference's distance from its float64 result, ``e64 = |ref - ref64|``, is its
  own rounding error there (torch's OpInfo tests likewise judge low-precision results against a
  higher-precision reference), but one sample of it, which may be small by luck where a second
  engine's is not. The nudged rerun measures the scale: the result's sensitivity to one-ulp
  changes of its inputs (condition times eps, what any backward-stable computation may be off
  by), believed only up to ``NUDGE_CAP * e64``: a nudge moving the result further than that has
  flipped a discrete decision (a tie among computed values broken, a comparison turned), which
  says nothing about rounding; and where torch is exact (``e64 == 0``) nothing is loosened. The
  value is accepted when ``|test - ref| <= atol + rtol * |ref| + ERROR_FACTOR * e`` with
  ``e = max(e64, min(|ref - nudged|, NUDGE_CAP * e64))`` (``error_allowance``); ``ERROR_FACTOR``
  is 2 because two engines each within ``e`` of the truth differ by at most twice it. The reruns
  are made only on a mismatch, and their values count only where they pair event by event with
  the reference run (``oracle.compare.Rerun``). No value passes this way unseen: each is recorded
  with these numbers (``oracle.compare.Acceptance``) and counted per test and rule in results.json
  and the report.
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
NUDGE_CAP = 100.0


def error_allowance(ref: float, ref64: float, nudged: float | None, dtype: str) -> float | None:
    """The largest ``|test - ref|`` the error-aware judgement accepts, given the reference's value
    ``ref`` in ``dtype``, ``ref64`` from its float64 rerun and ``nudged`` from its rerun on inputs
    nudged by an ulp (None: no such rerun). None where the judgement does not apply: a dtype not in
    ``LOW_PRECISION``, or a non-finite value."""
    if dtype.removeprefix("torch.") not in LOW_PRECISION or not all(map(_finite, (ref, ref64))):
        return None
    error = abs(ref - ref64)
    if nudged is not None and _finite(nudged):
        error = max(error, min(abs(ref - nudged), NUDGE_CAP * error))
    rtol, atol = tolerance(dtype)
    return atol + rtol * abs(ref) + ERROR_FACTOR * error


def error_aware_close(test: float, ref: float, ref64: float, nudged: float | None, dtype: str) -> bool:
    """Whether ``test`` agrees with ``ref`` by the fixed judgement (``close``) or, failing that, by
    the error-aware one: within ``error_allowance(ref, ref64, nudged, dtype)`` of ``ref``."""
    if close(test, ref, dtype):
        return True
    allowance = error_allowance(ref, ref64, nudged, dtype)
    return allowance is not None and _finite(test) and abs(test - ref) <= allowance


def _finite(value: object) -> bool:
    return isinstance(value, float | int) and not isinstance(value, bool) and math.isfinite(value)


def all_close(a: Iterable, b: Iterable, dtype: str) -> bool:
    """Element-wise ``close`` over two flat sequences of equal length."""
    a, b = list(a), list(b)
    return len(a) == len(b) and all(close(x, y, dtype) for x, y in zip(a, b, strict=True))
