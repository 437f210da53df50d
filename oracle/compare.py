"""Compare two traces: every divergence of the backend under test from the reference, classified.

Events are paired step by step (each event names the program step it happened in), so that one
difference does not shift the rest: within a step, hook calls pair in order, observations by what
they observe (``value`` of ``y``, ``grad`` of ``x``, ...), warnings in order. Everything is exact
(hook order, flags, dtypes, shapes, ``grad_fn`` names, exception types and messages, warning
categories and messages) except tensor values, which agree within the dtype's tolerance from
``oracle.tolerance``. Given ways to rerun the reference program (``Rerun``: in float64, on nudged
inputs), a float32/float16/bfloat16 value the fixed tolerance rejects is judged again, error-aware
(``oracle.tolerance.error_allowance``); the reruns are made only then, once per compare, and a
failure message names the judgement that rejected the value. A value accepted only by the
error-aware judgement is no silent pass: given a list (``accepted``), compare appends an
``Acceptance`` with the numbers that justified it, for reports to show.

Each divergence has a class (``CLASSES``), so that a report can count them and a user can set
aside what they do not aim at (``--ignore-classes messages,warnings``). What follows from a
divergence is not compared again: what a step that raised on one side only did besides the hook
calls both sides made before the error, and the steps that could not run because an earlier step
left a name unbound (``skipped``). After a
step the backend could not run for a name it lacks, later divergences are kept but marked
(``follows``): the program did not run as written there. A backend process that died (``crash``)
is one divergence: its events are lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from oracle.tolerance import LOW_PRECISION, close, error_allowance, error_aware_close, tolerance
from oracle.trace import Trace, format_event, marker

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


# The classes of divergences, with what each covers (the report's and ``--ignore``'s names).
CLASSES: dict[str, str] = {
    "value": "a tensor's values",
    "gradient": "a gradient's values, or whether there is one (.grad, autograd.grad)",
    "dtype": "a dtype or a shape",
    "flag": "is_leaf, requires_grad or the grad mode",
    "graph": "grad_fn names and the graph behind them",
    "hook": "which hooks ran, in what order, with what arguments",
    "error": "whether a step raised, and the exception's type",
    "message": "an exception's message",
    "warning": "a warning, its category or message",
    "layout": "strides, storage offset, contiguity, version counter",
    "module": "a module's parameters, state_dict keys, training flags or printed form",
    "unsupported": "the backend lacks a name, keyword or submodule of torch's API",
    "crash": "the backend's process died or timed out",
}


def class_names(options: list[str]) -> frozenset[str]:
    """The divergence classes that ``options`` name, each option a comma-separated list (plurals
    allowed: ``messages,warnings``), as the plugin's ``--ignore-classes`` and ``python -m oracle
    replay --ignore`` take them; ``ValueError`` naming an unknown class and the known ones."""
    names = {name.strip() for option in options for name in option.split(",")} - {""}
    classes = {name if name in CLASSES else name.removesuffix("s") for name in names}
    unknown = sorted(name for name in classes if name not in CLASSES)
    if unknown:
        raise ValueError(f"unknown class {', '.join(unknown)}; known: {', '.join(CLASSES)}")
    return frozenset(classes)


# facet of a tensor description -> class (values and grads; a hook's arguments are all "hook")
_FACETS = {"dtype": "dtype", "shape": "dtype", "is_leaf": "flag", "requires_grad": "flag", "grad_fn": "graph"}
# field of an event -> class, where the field is not a tensor description
_FIELDS = {"graph": "graph", "enabled": "flag", "inference": "flag", "category": "warning", "type": "error",
           "message": "message"}
_FIELDS.update(dict.fromkeys(("stride", "offset", "contiguous", "version"), "layout"))
_FIELDS.update(dict.fromkeys(("parameters", "state_dict", "training", "repr"), "module"))
_FIELDS.update(dict.fromkeys(("keys", "metadata", "missing", "unexpected", "result"), "module"))
_FIELDS["repr"] = "module"  # a module's printed form (observe_repr)
_FIELDS.update(dict.fromkeys(("hook", "on", "target", "arguments"), "hook"))
_FIELDS["nesting"] = "dtype"  # how a result's tensors are nested in tuples
_FIELDS.update({"names": "graph", "values": "value"})  # what a grad_fn saved (observe_saved)
_FIELDS["freed"] = "graph"  # whether a grad_fn was freed by reference counting (observe_freed)
_UNCOMPARED = ("kind", "step", "name", "value", "received", "unsupported", "gradient", "once")


@dataclass
class Divergence:
    """One difference between a reference trace and a test trace."""

    index: int  # position of the reference's event in its compared events (the backend's if none)
    ref_event: dict | None  # None: the reference has no such event
    test_event: dict | None  # None: the backend has no such event
    reason: str
    kind: str = "value"  # its class, a key of CLASSES
    lacks: str | None = None  # for "unsupported": the name the backend lacks
    follows: int | None = None  # the earlier step that lacked a name, whose effects this may be
    version: bool = False  # set aside as a difference of torch versions (oracle.differential.version_only)

    @property
    def step(self) -> int | None:
        return (self.ref_event or self.test_event or {}).get("step")

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """Human account: where, what class, why, and both sides of the differing event."""
        return (
            f"divergence at event {self.index} (step {self.step}, {self.kind}): {self.reason}\n"
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


def divergences(
    ref: Trace,
    test: Trace,
    reruns: dict[str, Callable[[], Trace]] | None = None,
    accepted: list[Acceptance] | None = None,
) -> list[Divergence]:
    """Every divergence of ``test`` from ``ref``, in the order of the steps (empty when they agree).
    Warnings marked ``once`` (emitted once per process, see ``oracle.trace.ONCE_PER_PROCESS``) are
    left out on both sides; ``Divergence.index`` counts the compared events. ``reruns`` (name ->
    how to rerun the reference program, see ``Rerun``) give the error-aware judgement of
    low-precision values the fixed tolerance rejects; each value it accepts is appended to
    ``accepted`` when given."""
    ref_events, test_events = ref.reproducible_events(), test.reproducible_events()
    for index, event in enumerate(test_events):
        if event["kind"] == "crash":
            return [Divergence(index, None, event, event["reason"], "crash")]
    comparer = _Comparer([Rerun(name, ref, make) for name, make in (reruns or {}).items()], accepted)
    ref_steps, test_steps = _by_step(ref_events), _by_step(test_events)
    found: list[Divergence] = []
    lacking: int | None = None  # the first step that could not run on the backend for a name it lacks
    for step in sorted(ref_steps.keys() | test_steps.keys()):
        for divergence in comparer.step(ref_steps.get(step, []), test_steps.get(step, [])):
            divergence.follows = lacking
            found.append(divergence)
            lacked_step = divergence.kind == "unsupported" and divergence.test_event["kind"] == "error"
            if lacking is None and lacked_step:
                lacking = step
    return found


def compare(
    ref: Trace,
    test: Trace,
    reruns: dict[str, Callable[[], Trace]] | None = None,
    accepted: list[Acceptance] | None = None,
) -> Divergence | None:
    """The first of ``divergences(ref, test, reruns, accepted)``, or None if the traces agree."""
    found = divergences(ref, test, reruns, accepted)
    return found[0] if found else None


Indexed = tuple[int, dict]  # an event and its position in the compared events
Found = tuple[str, str, str | None]  # (class, reason, the name lacked for "unsupported")
OBSERVATION_CLASS = {"value": "value", "grad": "gradient", "graph": "graph", "layout": "layout",
                     "module": "module", "array": "value", "grad_mode": "flag", "hook": "hook",
                     "state_dict": "module", "load_state_dict": "module", "result": "dtype",
                     "saved": "graph", "backward_hooks": "hook",
                     "scheduler": "value",
                     "gradcheck": "value",
                     "repr": "module"}
OBSERVATION_CLASS["defaults"] = "dtype"  # the default dtype and device (API-003)
OBSERVATION_CLASS["plain"] = "value"  # a result that is no tensor, as it prints (issue 22)
OBSERVATION_CLASS["autocast"] = "flag"  # the autocast state (API-008)
OBSERVATION_CLASS["freed"] = "graph"  # whether a grad_fn was freed (observe_freed, SAVED-002)


def _by_step(events: list[dict]) -> dict[int, list[Indexed]]:
    steps: dict[int, list[Indexed]] = {}
    for index, event in enumerate(events):
        steps.setdefault(event.get("step", -1), []).append((index, event))
    return steps


class _Comparer:
    """Compares the events of one step at a time (see the module doc)."""

    def __init__(self, reruns: list[Rerun], accepted: list[Acceptance] | None) -> None:
        self.reruns = reruns
        self.accepted = accepted

    def step(self, ref: list[Indexed], test: list[Indexed]) -> list[Divergence]:
        if any(event["kind"] == "skipped" for _, event in ref + test):
            return []  # it reads a name an earlier divergence left unbound on one side
        errors = _of_kind(ref, ("error",)), _of_kind(test, ("error",))
        types = [[event["type"] for _, event in side] for side in errors]
        hooks = _of_kind(ref, ("hook",)), _of_kind(test, ("hook",))
        if types[0] != types[1]:
            # one side raised, or both but differently: the hook calls both sides made before it
            # are compared (the cause may be there), whatever else the step did follows from it
            both = min(map(len, hooks))
            error = self._error(errors[0][0] if errors[0] else None, errors[1][0] if errors[1] else None)
            return [*self._hooks(hooks[0][:both], hooks[1][:both]), error]
        found = [self._divergence(pair, d) for pair in zip(*errors, strict=True) for d in self._fields(*pair)]
        found += self._hooks(*hooks)
        observed = tuple(OBSERVATION_CLASS.keys() - {"hook"})
        found += self._observations(_of_kind(ref, observed), _of_kind(test, observed))
        found += self._warnings(_of_kind(ref, ("warning",)), _of_kind(test, ("warning",)))
        return sorted(found, key=lambda divergence: divergence.index)

    # -- pairing -------------------------------------------------------------------------------
    def _error(self, ref: Indexed | None, test: Indexed | None) -> Divergence:
        a, b = (None if side is None else side[1] for side in (ref, test))
        index = ref[0] if ref is not None else test[0]
        lacks = b.get("unsupported") if b is not None else None
        if lacks is not None:
            also = "" if a is None else f"; the reference raised {a['type']}: {a['message']}"
            return Divergence(index, a, b, f"the backend lacks {lacks} ({b['type']}: {b['message']}){also}",
                              "unsupported", lacks)
        if a is None:
            reason = f"got error {b['type']}: {b['message']}; the reference raised none"
        elif b is None:
            reason = f"expected error {a['type']}: {a['message']}; the backend raised none"
        else:
            reason = f"type differs: expected {a['type']!r}, got {b['type']!r}"
        return Divergence(index, a, b, reason, "error")

    def _hooks(self, ref: list[Indexed], test: list[Indexed]) -> list[Divergence]:
        """Hook calls in order; a different sequence is one divergence, then the calls of the same
        hook are compared with each other."""
        names = [[event["hook"] for _, event in side] for side in (ref, test)]
        if names[0] == names[1]:
            return self._pairs(list(zip(ref, test, strict=True)))
        unequal = (i for i, (x, y) in enumerate(zip(*names, strict=False)) if x != y)
        at = next(unequal, min(map(len, names)))  # the first difference, or where one side ended
        expected, got = (side[at] if at < len(side) else None for side in names)
        calls = f"hooks called: expected {names[0]}, got {names[1]}"
        if expected is not None and got is not None:
            reason = f"hook differs: expected {expected!r}, got {got!r}; {calls}"
        elif got is None:
            reason = f"expected hook {expected!r}, got no more hooks; {calls}"
        else:
            reason = f"got hook {got!r} the reference did not call; {calls}"
        a = ref[at] if at < len(ref) else None
        b = test[at] if at < len(test) else None
        order = Divergence(a[0] if a else b[0], a and a[1], b and b[1], reason, "hook")
        pairs, _, _ = _matched(ref, test, lambda e: e["hook"])
        return [order, *self._pairs(pairs)]

    def _observations(self, ref: list[Indexed], test: list[Indexed]) -> list[Divergence]:
        """Values, grads, graphs, layouts, modules, arrays and grad modes, by what they observe."""
        pairs, missing, extra = _matched(ref, test, lambda e: (e["kind"], e.get("name")))
        found = self._pairs(pairs)
        for index, event in missing:
            what = _observation(event)
            found.append(Divergence(index, event, None, f"the backend has no {what}", _class_of(event)))
        for index, event in extra:
            what = _observation(event)
            found.append(Divergence(index, None, event, f"the backend has an extra {what}", _class_of(event)))
        return found

    def _warnings(self, ref: list[Indexed], test: list[Indexed]) -> list[Divergence]:
        found = self._pairs(list(zip(ref, test, strict=False)))
        for index, event in ref[len(test):]:
            reason = f"expected warning {event['category']}: {event['message']}; the backend gave none"
            found.append(Divergence(index, event, None, reason, "warning"))
        for index, event in test[len(ref):]:
            reason = f"got warning {event['category']}: {event['message']}; the reference gave none"
            found.append(Divergence(index, None, event, reason, "warning"))
        return found

    def _pairs(self, pairs: list[tuple[Indexed, Indexed]]) -> list[Divergence]:
        return [self._divergence(pair, found) for pair in pairs for found in self._fields(*pair)]

    @staticmethod
    def _divergence(pair: tuple[Indexed, Indexed], found: Found) -> Divergence:
        (index, a), (_, b) = pair
        kind, reason, lacks = found
        return Divergence(index, a, b, reason, kind, lacks)

    # -- one pair of events --------------------------------------------------------------------
    def _fields(self, ref: Indexed, test: Indexed) -> list[Found]:
        """The differences of two events of the same kind (and observation): field by field, the
        tensor descriptions facet by facet, the values within tolerance."""
        (index, a), (_, b) = ref, test
        found = []
        for key in dict.fromkeys([*a, *b]):
            if key in _UNCOMPARED:
                continue
            kind = "warning" if a["kind"] == "warning" else _FIELDS.get(key, _class_of(a))
            difference = _differ(kind, key, a.get(key), b.get(key))
            if difference is not None:
                found.append(difference)
        variants, accept = self._variants(index), self._accept(index, a)
        if "value" in a or "value" in b:
            value_class = "gradient" if a["kind"] == "grad" or a.get("gradient") else "value"
            found += _tensor(_label(a), a.get("value"), b.get("value"), value_class,
                             lambda facet: _FACETS.get(facet, value_class), _part(variants, "value"), accept)
        if "received" in a or "received" in b:
            found += _received(a.get("received"), b.get("received"), _part(variants, "received"), accept)
        return found

    def _variants(self, index: int) -> Counterparts | None:
        if not self.reruns:
            return None
        return lambda: {rerun.name: rerun.event(index) for rerun in self.reruns}

    def _accept(self, index: int, event: dict) -> Accept | None:
        if not self.reruns or self.accepted is None:
            return None
        accepted = self.accepted

        def accept(**value: Any) -> None:
            accepted.append(Acceptance(index, event["kind"], event.get("step"), **value))

        return accept


def _of_kind(events: list[Indexed], kinds: tuple[str, ...]) -> list[Indexed]:
    return [(index, event) for index, event in events if event["kind"] in kinds]


def _matched(
    ref: list[Indexed], test: list[Indexed], key: Callable[[dict], Any]
) -> tuple[list[tuple[Indexed, Indexed]], list[Indexed], list[Indexed]]:
    """Pairs of events with the same key (the n-th of a key with the n-th), the reference's
    events without a partner, and the backend's."""
    waiting: dict[Any, list[Indexed]] = {}
    for item in test:
        waiting.setdefault(key(item[1]), []).append(item)
    pairs, missing = [], []
    for item in ref:
        partners = waiting.get(key(item[1]))
        if partners:
            pairs.append((item, partners.pop(0)))
        else:
            missing.append(item)
    extra = sorted((item for partners in waiting.values() for item in partners), key=lambda item: item[0])
    return pairs, missing, extra


def _observation(event: dict) -> str:
    name = event.get("name")
    return f"{event['kind']} event" + ("" if name is None else f" for {name}")


def _class_of(event: dict) -> str:
    return OBSERVATION_CLASS.get(event["kind"], "value")


def _differ(kind: str, what: str, ref: Any, test: Any) -> Found | None:
    """How two observed parts differ (None if they agree); a part the backend could not read for a
    name it lacks is "unsupported". What a grad_fn saved (``values``) agrees in the Python types
    of its numbers too: a node saving the int 2 is not one saving 2.0."""
    if ref == test and (what != "values" or _typed(ref) == _typed(test)):
        return None
    if marker(test) is not None and marker(ref) is None:
        return "unsupported", f"{what}: {marker(test)}", test["unsupported"]
    return kind, f"{what} differs: expected {ref!r}, got {test!r}", None


def _tensor(
    label: str,
    ref: dict | None,
    test: dict | None,
    value_class: str,
    facet_class: Callable[[str], str],
    variants: Counterparts | None,
    accept: Accept | None,
) -> list[Found]:
    """The differences of two tensor descriptions: each facet, then the values (if shapes agree)."""
    if ref == test:
        return []
    if marker(ref) is not None or marker(test) is not None:
        return [_differ(value_class, label, ref, test)]
    if ref is None or test is None:
        return [(value_class, f"{label}: expected {_none_or_tensor(ref)}, got {_none_or_tensor(test)}", None)]
    found = [
        difference
        for facet in _FLAGS
        for difference in [_differ(facet_class(facet), f"{label}: {facet}", ref[facet], test[facet])]
        if difference is not None
    ]
    if ref["shape"] != test["shape"]:
        return found
    if marker(test["data"]) or marker(ref["data"]):
        difference = _differ(facet_class("data"), f"{label}: data", ref["data"], test["data"])
        return found + ([difference] if difference is not None else [])
    dtype = ref["dtype"] if isinstance(ref["dtype"], str) else "float64"
    reason = _data_difference(label, ref["data"], test["data"], dtype, _part(variants, "data"), accept)
    return found + ([(facet_class("data"), reason, None)] if reason is not None else [])


def _received(
    ref: dict | None, test: dict | None, variants: Counterparts | None, accept: Accept | None
) -> list[Found]:
    """What two calls of a hook received, group by group (args, grad_output, ...)."""
    if ref is None or test is None or list(ref) != list(test):
        return [("hook", f"hook received {list(test or [])} instead of {list(ref or [])}", None)]
    found: list[Found] = []
    for group in ref:
        if len(ref[group]) != len(test[group]):
            counts = f"{len(test[group])} values instead of {len(ref[group])}"
            found.append(("hook", f"hook {group}: {counts}", None))
            continue
        for i, (a, b) in enumerate(zip(ref[group], test[group], strict=True)):
            label, part = f"hook {group}[{i}]", _part(variants, group, i)
            found += _tensor(label, a, b, "hook", _hook_facet, part, accept)
    return found


def _hook_facet(_facet: str) -> str:
    return "hook"


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


def _typed(value: Any) -> str:
    """``value`` as JSON writes it (2 and 2.0, 1 and true apart), keys sorted."""
    return json.dumps(value, sort_keys=True)


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
