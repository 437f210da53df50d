"""Compare two traces: the first event where the backend under test differs from the reference.

Everything is exact (event order and kinds, steps, names, flags, dtypes, shapes, ``grad_fn`` names,
exception types and messages, warning categories and messages) except tensor values, which agree
within the dtype's tolerance from ``oracle.tolerance``. Given ways to rerun the reference program
(``Rerun``: in float64, on nudged inputs), a float32/float16/bfloat16 value the fixed tolerance
rejects is judged again, error-aware (``oracle.tolerance.error_allowance``); the reruns are made
only then, once per compare, and a failure message names the judgement that rejected the value.
A value accepted only by the error-aware judgement is no silent pass: given a list (``accepted``),
compare appends an ``Acceptance`` with the numbers that justified it, for reports to show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from oracle.tolerance import LOW_PRECISION, close, error_allowance, error_aware_close, tolerance
from oracle.trace import Trace, format_event

_FLAGS = ("dtype", "shape", "is_leaf", "requires_grad", "grad_fn")
# The reruns the error-aware judgement reads (``oracle.differential.reruns`` makes them).
FLOAT64 = "in float64"
NUDGED = "on inputs nudged by an ulp"
# The counterparts of an event or of a part of it in the reference's reruns, by rerun (each a
# description, or why there is none), fetched only when a value needs them (see ``Rerun``).
Counterparts = Callable[[], dict[str, Any]]
# Records a value the error-aware judgement accepted (keywords: the ``Acceptance`` fields below the
# event's); compare binds the event and hands it down only when asked to collect acceptances.
Accept = Callable[..., None]


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


@dataclass(frozen=True)
class Acceptance:
    """A value the fixed tolerance rejected and the error-aware judgement accepted, with the
    numbers that decided it: ``|test - ref| <= allowance``, the allowance computed from ``ref64``
    and ``nudged`` (the reference's value in its reruns, as the trace encodes them; ``nudged``
    None without that rerun) by ``oracle.tolerance.error_allowance``."""

    index: int  # position of the event in the compared event lists
    kind: str  # the event's kind ("value", "grad", "hook", ...)
    step: int | None  # the program step that produced the event
    name: str  # what holds the value, as failure messages name it ("y", "x.grad", "hook grad[0]")
    value: int  # position of the value in the tensor's flattened data
    dtype: str
    test: float  # the backend's value
    ref: float  # the reference's value
    ref64: float
    nudged: float | str | None
    allowance: float

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """One line: where, both values, the reruns' values and the allowance used."""
        nudged = "" if self.nudged is None else f", {self.nudged!r} {NUDGED}"
        return (
            f"event {self.index} (step {self.step}) {self.name}: value {self.value} accepted by the "
            f"error-aware judgement: got {self.test!r}, expected {self.ref!r} ({self.dtype}); the "
            f"reference gives {self.ref64!r} {FLOAT64}{nudged}; |got - expected| = "
            f"{abs(self.test - self.ref):.3g} <= {self.allowance:.3g}"
        )


class Rerun:
    """A rerun of the reference program (``make``, called at most once, on first use), named for
    what it varies (e.g. "in float64"), paired event by event with the reference trace ``ref``.

    The pairing is trusted up to an event only where both runs agree on everything but dtypes and
    values (``_skeleton``: kinds, steps, names, shapes, flags, graphs, error types); past a
    disagreement the rerun is no evidence and no value is judged against it."""

    def __init__(self, name: str, ref: Trace, make: Callable[[], Trace]) -> None:
        self.name = name
        self._ref = ref.reproducible_events()
        self._make = make
        self._events: list[dict] | None = None
        self._faithful = 0  # how many leading events both runs agree on (skeletons)
        self._why = ""  # why events from the ``_faithful``-th on have no counterpart

    def event(self, index: int) -> dict | str:
        """The counterpart of the reference's event ``index``, or why there is none."""
        if self._events is None:
            self._pair()
        return self._events[index] if index < self._faithful else self._why

    def _pair(self) -> None:
        try:
            self._events = self._make().reproducible_events()
        except Exception as exc:  # reported in the divergence, never hiding one
            self._events, self._why = [], f"the rerun {self.name} raised {type(exc).__name__}: {exc}"
            return
        pairs = enumerate(zip(self._ref, self._events, strict=False))
        default = min(len(self._ref), len(self._events))
        self._faithful = next((i for i, (a, b) in pairs if _skeleton(a) != _skeleton(b)), default)
        self._why = f"the rerun {self.name} departs from the program's run at event {self._faithful}"


def compare(
    ref: Trace,
    test: Trace,
    reruns: dict[str, Callable[[], Trace]] | None = None,
    accepted: list[Acceptance] | None = None,
) -> Divergence | None:
    """The first divergence of ``test`` from ``ref``, or None if they agree. Warnings marked
    ``once`` (emitted once per process, see ``oracle.trace.ONCE_PER_PROCESS``) are left out on
    both sides; ``Divergence.index`` counts the compared events. ``reruns`` (name -> how to rerun
    the reference program, see ``Rerun``) give the error-aware judgement of low-precision values
    the fixed tolerance rejects; each value it accepts (before the divergence, if any) is appended
    to ``accepted`` when given."""
    ref_events, test_events = ref.reproducible_events(), test.reproducible_events()
    paired = [Rerun(name, ref, make) for name, make in (reruns or {}).items()]
    accept: Accept | None = None
    if paired and accepted is not None:

        def accept(**value: Any) -> None:
            # called only while the reference's event ``a`` (position ``index``) is compared: it
            # reads the loop's current values, so the loop pays nothing for collecting
            accepted.append(Acceptance(index, a["kind"], a.get("step"), **value))

    for index in range(max(len(ref_events), len(test_events))):
        a = ref_events[index] if index < len(ref_events) else None
        b = test_events[index] if index < len(test_events) else None
        variants = (lambda index=index: {r.name: r.event(index) for r in paired}) if paired else None
        reason = event_difference(a, b, variants, accept)
        if reason is not None:
            return Divergence(index, a, b, reason)
    return None


def event_difference(
    ref: dict | None, test: dict | None, variants: Counterparts | None = None, accept: Accept | None = None
) -> str | None:
    """Why two events differ, or None if they agree. ``variants`` gives the reference event's
    counterparts in reruns, for the error-aware judgement of low-precision values; ``accept``
    records each value that judgement accepts."""
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
        return _tensor_difference(_label(ref), ref["value"], test["value"], _part(variants, "value"), accept)
    if "received" in ref:
        return _received_difference(ref["received"], test["received"], _part(variants, "received"), accept)
    return None


def _part(whole: Counterparts | None, *path: str | int) -> Counterparts | None:
    """The counterparts of a part (``path`` of keys and indices) of what ``whole`` gives."""
    if whole is None:
        return None

    def follow(value: Any) -> Any:
        for key in path:
            if isinstance(value, str):
                return value
            value = value[key]
        return value

    return lambda: {name: follow(value) for name, value in whole().items()}


def _label(event: dict) -> str:
    return f"{event['name']}.grad" if event["kind"] == "grad" else event["name"]


def _received_difference(
    ref: dict, test: dict, variants: Counterparts | None, accept: Accept | None
) -> str | None:
    if list(ref) != list(test):
        return f"hook received {list(test)} instead of {list(ref)}"
    for group in ref:
        if len(ref[group]) != len(test[group]):
            return f"hook {group}: {len(test[group])} values instead of {len(ref[group])}"
        for i, (a, b) in enumerate(zip(ref[group], test[group], strict=True)):
            reason = _tensor_difference(f"hook {group}[{i}]", a, b, _part(variants, group, i), accept)
            if reason is not None:
                return reason
    return None


def _tensor_difference(
    label: str, ref: dict | None, test: dict | None, variants: Counterparts | None, accept: Accept | None
) -> str | None:
    if ref is None or test is None:
        if ref is test:
            return None
        return f"{label}: expected {_none_or_tensor(ref)}, got {_none_or_tensor(test)}"
    for flag in _FLAGS:
        if ref[flag] != test[flag]:
            return f"{label}: {flag} differs: expected {ref[flag]!r}, got {test[flag]!r}"
    return _data_difference(label, ref["data"], test["data"], ref["dtype"], _part(variants, "data"), accept)


def _data_difference(
    label: str,
    ref: list[Any],
    test: list[Any],
    dtype: str,
    variants: Counterparts | None = None,
    accept: Accept | None = None,
) -> str | None:
    """The first value of ``test`` the fixed tolerance rejects and, for a low-precision dtype with
    counterparts in reruns, the error-aware judgement too; the reason names the judgement used.
    Values the error-aware judgement accepts go to ``accept``, named ``label``."""
    if len(ref) != len(test):
        return f"{label}: {len(test)} values instead of {len(ref)}"
    for i, (a, b) in enumerate(zip(ref, test, strict=True)):
        if close(_float(b), _float(a), dtype):
            continue
        rtol, atol = tolerance(dtype)
        judged = f"{dtype}, rtol={rtol}, atol={atol}"
        if variants is not None and dtype in LOW_PRECISION:
            reason = _error_aware_difference(_float(a), _float(b), variants(), i, dtype)
            if not isinstance(reason, str):
                if accept is not None:
                    accept(name=label, value=i, dtype=dtype, test=_float(b), ref=_float(a), **reason)
                continue
            judged += f"; {reason}"
        return f"{label}: value {i} differs: expected {a!r}, got {b!r} ({judged})"
    return None


def _error_aware_difference(
    ref: float, test: float, variants: dict[str, Any], i: int, dtype: str
) -> str | dict[str, Any]:
    """Why ``test`` fails the error-aware judgement against ``ref`` (value ``i`` of a tensor whose
    counterparts in the reruns are ``variants``: data lists, or why there are none), or, if it
    passes, the numbers that decided it (``ref64``, ``nudged``, ``allowance``)."""
    values = {name: _float(data[i]) for name, data in variants.items() if not isinstance(data, str)}
    notes = [f"the reference gives {value!r} {name}" for name, value in values.items()]
    notes += [why for why in variants.values() if isinstance(why, str)]
    if FLOAT64 not in values:
        return "no error-aware judgement: " + "; ".join(notes)
    ref64, nudged = values[FLOAT64], values.get(NUDGED)
    allowance = error_allowance(ref, ref64, nudged, dtype)
    if error_aware_close(test, ref, ref64, nudged, dtype):
        raw = {name: data[i] for name, data in variants.items() if not isinstance(data, str)}
        return {"ref64": raw[FLOAT64], "nudged": raw.get(NUDGED), "allowance": allowance}
    if allowance is None:
        return "no error-aware judgement: " + "; ".join(notes)
    return f"error-aware: {'; '.join(notes)}; so |got - expected| may be {allowance:.3g}"


def _float(value: Any) -> Any:
    """JSON-encoded non-finite floats back to floats, so that tolerance treats them as numbers."""
    return float(value) if isinstance(value, str) else value


def _skeleton(value: Any) -> Any:
    """What a rerun must share with the run it varies: an event without dtypes and values
    (tensor and array data by length only), errors and warnings by type only (their messages may
    name dtypes)."""
    if isinstance(value, list):
        return [_skeleton(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("kind") in ("error", "warning"):
        return value["kind"], value["step"], value.get("type", value.get("category"))
    return {k: len(v) if k == "data" else _skeleton(v) for k, v in value.items() if k != "dtype"}


def _none_or_tensor(desc: dict | None) -> str:
    return "None" if desc is None else "a tensor"
