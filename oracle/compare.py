"""Compare two traces: the first event where the backend under test differs from the reference.

Everything is exact (event order and kinds, steps, names, flags, dtypes, shapes, ``grad_fn`` names,
exception types and messages, warning categories and messages) except tensor values, which agree
within the dtype's tolerance from ``oracle.tolerance``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from oracle.tolerance import close, tolerance
from oracle.trace import Trace, format_event

_FLAGS = ("dtype", "shape", "is_leaf", "requires_grad", "grad_fn")


@dataclass
class Divergence:
    """The first difference between a reference trace and a test trace."""

    index: int  # position in the event lists
    ref_event: dict | None  # None: the reference trace ended here
    test_event: dict | None  # None: the test trace ended here
    reason: str

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """Human account: where, why, and both sides of the differing event."""
        event = self.ref_event or self.test_event or {}
        return (
            f"divergence at event {self.index} (step {event.get('step')}): {self.reason}\n"
            f"  reference: {format_event(self.ref_event)}\n"
            f"  backend:   {format_event(self.test_event)}"
        )


def compare(ref: Trace, test: Trace) -> Divergence | None:
    """The first divergence of ``test`` from ``ref``, or None if they agree. Warnings marked
    ``once`` (emitted once per process, see ``oracle.trace.ONCE_PER_PROCESS``) are left out on
    both sides; ``Divergence.index`` counts the compared events."""
    ref_events, test_events = ref.reproducible_events(), test.reproducible_events()
    for index in range(max(len(ref_events), len(test_events))):
        a = ref_events[index] if index < len(ref_events) else None
        b = test_events[index] if index < len(test_events) else None
        reason = event_difference(a, b)
        if reason is not None:
            return Divergence(index, a, b, reason)
    return None



def event_difference(ref: dict | None, test: dict | None) -> str | None:
    """Why two events differ, or None if they agree."""
    if ref is None:
        return f"the backend has an extra {test['kind']} event (the reference trace ended)"
    if test is None:
        return f"the backend has no {ref['kind']} event here (its trace ended)"
    if ref["kind"] != test["kind"]:
        return f"event kind differs: expected {ref['kind']}, got {test['kind']}"
    if set(ref) != set(test):
        return f"{ref['kind']} event fields differ: {sorted(ref)} vs {sorted(test)}"
    for key in ref:
        if key in ("value", "received"):
            continue
        if ref[key] != test[key]:
            return f"{key} differs: expected {ref[key]!r}, got {test[key]!r}"
    if "value" in ref:
        return _tensor_difference(f"{_label(ref)}", ref["value"], test["value"])
    if "received" in ref:
        return _received_difference(ref["received"], test["received"])
    return None


def _label(event: dict) -> str:
    return f"{event['name']}.grad" if event["kind"] == "grad" else event["name"]


def _received_difference(ref: dict, test: dict) -> str | None:
    if list(ref) != list(test):
        return f"hook received {list(test)} instead of {list(ref)}"
    for group in ref:
        if len(ref[group]) != len(test[group]):
            return f"hook {group}: {len(test[group])} values instead of {len(ref[group])}"
        for i, (a, b) in enumerate(zip(ref[group], test[group], strict=True)):
            reason = _tensor_difference(f"hook {group}[{i}]", a, b)
            if reason is not None:
                return reason
    return None


def _tensor_difference(label: str, ref: dict | None, test: dict | None) -> str | None:
    if ref is None or test is None:
        if ref is test:
            return None
        return f"{label}: expected {_none_or_tensor(ref)}, got {_none_or_tensor(test)}"
    for flag in _FLAGS:
        if ref[flag] != test[flag]:
            return f"{label}: {flag} differs: expected {ref[flag]!r}, got {test[flag]!r}"
    return _data_difference(label, ref["data"], test["data"], ref["dtype"])


def _data_difference(label: str, ref: list[Any], test: list[Any], dtype: str) -> str | None:
    if len(ref) != len(test):
        return f"{label}: {len(test)} values instead of {len(ref)}"
    for i, (a, b) in enumerate(zip(ref, test, strict=True)):
        if not close(_float(b), _float(a), dtype):
            rtol, atol = tolerance(dtype)
            within = f"{dtype}, rtol={rtol}, atol={atol}"
            return f"{label}: value {i} differs: expected {a!r}, got {b!r} ({within})"
    return None


def _float(value: Any) -> Any:
    """JSON-encoded non-finite floats back to floats, so that tolerance treats them as numbers."""
    return float(value) if isinstance(value, str) else value


def _none_or_tensor(desc: dict | None) -> str:
    return "None" if desc is None else "a tensor"
