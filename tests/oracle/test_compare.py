"""Self-tests of trace comparison: exact on structure and messages, dtype-aware on numbers, and
every value only the error-aware judgement accepts recorded with its numbers."""

from __future__ import annotations

import copy
import json

import pytest

from oracle.compare import CLASSES, FLOAT64, NUDGED, Acceptance, Divergence, compare, divergences
from oracle.trace import Trace


def tensor(data: list, dtype: str = "float32", **flags: object) -> dict:
    desc = {
        "dtype": dtype,
        "shape": [len(data)],
        "data": data,
        "is_leaf": True,
        "requires_grad": False,
        "grad_fn": None,
    }
    desc.update(flags)
    return desc


def trace_of(*events: dict) -> Trace:
    return Trace(list(events), backend="test")


HOOK_A = {"kind": "hook", "step": 3, "hook": "a", "on": "tensor", "target": "y"}
HOOK_A["received"] = {"grad": [tensor([1.0])]}
HOOK_B = {**HOOK_A, "hook": "b"}
VALUE = {"kind": "value", "step": 4, "name": "y"}
VALUE["value"] = tensor([1.0, 2.0], is_leaf=False, grad_fn="MulBackward0")
ERROR = {"kind": "error", "step": 5, "type": "RuntimeError", "message": "Trying to backward twice"}
WARNING = {"kind": "warning", "step": 6, "category": "UserWarning", "message": "non-leaf .grad"}
REF = trace_of(HOOK_A, HOOK_B, VALUE, ERROR, WARNING)


def edited(index: int, path: tuple, value: object) -> Trace:
    """REF with one field of one event replaced."""
    events = copy.deepcopy(REF.events)
    target = events[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return trace_of(*events)


def test_identical_traces_agree() -> None:
    assert compare(REF, copy.deepcopy(REF)) is None


def test_hook_order_is_exact() -> None:
    divergence = compare(REF, trace_of(HOOK_B, HOOK_A, VALUE, ERROR, WARNING))
    assert divergence is not None and divergence.index == 0 and divergence.kind == "hook"
    calls = "hooks called: expected ['a', 'b'], got ['b', 'a']"
    assert f"hook differs: expected 'a', got 'b'; {calls}" in divergence.reason


@pytest.mark.parametrize(
    "index,path,value,words,kind",
    [
        (2, ("value", "is_leaf"), True, "is_leaf", "flag"),
        (2, ("value", "requires_grad"), True, "requires_grad", "flag"),
        (2, ("value", "grad_fn"), "AddBackward0", "grad_fn", "graph"),
        (2, ("value", "dtype"), "float64", "dtype", "dtype"),
        (2, ("value", "shape"), [2, 1], "shape", "dtype"),
        (2, ("value",), None, "expected a tensor, got None", "value"),
        (2, ("name",), "z", "the backend has no value event for y", "value"),
        (3, ("type",), "ValueError", "type differs: expected 'RuntimeError', got 'ValueError'", "error"),
        (3, ("message",), "Trying to backward thrice", "message", "message"),
        (4, ("category",), "DeprecationWarning", "category", "warning"),
        (4, ("message",), "non-leaf .grad!", "message", "warning"),
        (0, ("received", "grad", 0, "requires_grad"), True, "hook grad[0]: requires_grad", "hook"),
        (0, ("received", "grad"), [None], "hook grad[0]: expected a tensor, got None", "hook"),
        (1, ("step",), 4, "expected hook 'b', got no more hooks", "hook"),
    ],
)
def test_flags_names_types_and_messages_are_exact(
    index: int, path: tuple, value: object, words: str, kind: str
) -> None:
    divergence = compare(REF, edited(index, path, value))
    assert divergence is not None, words
    assert divergence.index == index
    assert words in divergence.reason and divergence.kind == kind


def test_missing_and_extra_events_are_paired_step_by_step() -> None:
    missing = compare(REF, trace_of(HOOK_A, HOOK_B, VALUE, WARNING))
    assert missing is not None and missing.index == 3 and missing.test_event is None
    assert missing.reason == "expected error RuntimeError: Trying to backward twice; the backend raised none"
    extra = divergences(REF, trace_of(*REF.events, {**ERROR, "step": 7}))
    assert [(d.index, d.ref_event, d.kind) for d in extra] == [(5, None, "error")]
    assert extra[0].reason == "got error RuntimeError: Trying to backward twice; the reference raised none"
    # an extra warning at step 4 shifts nothing: the value, the error and the warning still pair
    warned = divergences(REF, trace_of(HOOK_A, HOOK_B, {**WARNING, "step": 4}, VALUE, ERROR, WARNING))
    assert [(d.kind, d.step) for d in warned] == [("warning", 4)]
    assert warned[0].reason == "got warning UserWarning: non-leaf .grad; the reference gave none"


def test_every_divergence_of_a_trace_is_kept_with_its_class() -> None:
    test = edited(2, ("value", "is_leaf"), True)
    test.events[2]["value"]["data"] = [1.0, 2.5]
    test.events[3]["message"] = "something else"
    test.events[0]["received"]["grad"][0]["data"] = [2.0]  # both hooks' (the events share it)
    found = divergences(REF, test)
    kinds = [(0, "hook"), (1, "hook"), (2, "flag"), (2, "value"), (3, "message")]
    assert [(d.index, d.kind) for d in found] == kinds
    assert set(d.kind for d in found) <= set(CLASSES)
    assert compare(REF, test) == found[0]  # compare is the first of them


def test_a_step_that_raised_on_one_side_only_compares_only_the_hook_calls_before() -> None:
    """The hook calls both sides made before the error may hold its cause: they are compared;
    whatever else the step did follows from the error and is not."""
    ref = trace_of(HOOK_A, HOOK_B, {**VALUE, "step": 3}, {**WARNING, "step": 3})
    test = trace_of({**ERROR, "step": 3})
    [divergence] = divergences(ref, test)
    assert divergence.kind == "error" and divergence.reason.startswith("got error RuntimeError")
    received = copy.deepcopy(HOOK_A)
    received["received"]["grad"][0]["data"] = [2.0]
    found = divergences(ref, trace_of(received, {**ERROR, "step": 3}))
    expected = [("hook", "hook grad[0]"), ("error", "got error RuntimeError")]
    assert [(d.kind, d.reason.split(":")[0]) for d in found] == expected


def test_steps_skipped_for_an_unbound_name_are_not_compared() -> None:
    ref = trace_of({**ERROR, "step": 1}, {"kind": "skipped", "step": 2, "name": "y"}, VALUE)
    test = trace_of({**VALUE, "step": 2, "name": "z"}, VALUE)
    [divergence] = divergences(ref, test)
    assert divergence.step == 1 and divergence.kind == "error"


def test_what_the_backend_lacks_is_unsupported_and_the_rest_is_still_compared() -> None:
    test = edited(2, ("value", "grad_fn"), {"unsupported": "Tensor.grad_fn"})
    test.events[2]["value"]["data"] = [1.0, 2.5]
    found = divergences(REF, test)
    assert [(d.kind, d.lacks) for d in found] == [("unsupported", "Tensor.grad_fn"), ("value", None)]
    assert found[0].reason == "y: grad_fn: the backend lacks Tensor.grad_fn"
    assert all(d.follows is None for d in found)  # an observation it cannot read changes nothing


def test_divergences_after_a_step_the_backend_could_not_run_are_marked() -> None:
    lacked = {"kind": "error", "step": 3, "type": "AttributeError", "unsupported": "Tensor.register_hook",
              "message": "'Tensor' object has no attribute 'register_hook'"}
    test = trace_of(lacked, {**VALUE, "value": {**VALUE["value"], "data": [1.0, 3.0]}}, ERROR, WARNING)
    found = divergences(REF, test)
    assert [(d.kind, d.step, d.follows) for d in found] == [("unsupported", 3, None), ("value", 4, 3)]
    assert found[0].reason.startswith("the backend lacks Tensor.register_hook (AttributeError:")


def test_a_crashed_backend_is_one_divergence() -> None:
    crash = {"kind": "crash", "step": 4, "reason": "backend process died (SIGSEGV) at step 4"}
    [divergence] = divergences(REF, trace_of(HOOK_A, crash))
    assert (divergence.kind, divergence.step, divergence.reason) == ("crash", 4, crash["reason"])


@pytest.mark.parametrize(
    "dtype,within,beyond",
    [
        ("float16", 5e-4, 5e-3),
        ("float32", 1e-7, 1e-5),
        ("float64", 1e-9, 1e-6),
        ("bfloat16", 5e-3, 5e-2),
    ],
)
def test_numbers_agree_within_the_dtype_tolerance_only(dtype: str, within: float, beyond: float) -> None:
    def grad_event(values: list) -> Trace:
        return trace_of({"kind": "grad", "step": 1, "name": "x", "value": tensor(values, dtype)})

    ref = grad_event([1.0, -3.0])
    for rel, agrees in ((within, True), (beyond, False)):
        divergence = compare(ref, grad_event([1.0, -3.0 * (1 + rel)]))
        assert (divergence is None) == agrees, (dtype, rel, divergence)
    assert "x.grad: value 1 differs" in divergence.reason and dtype in divergence.reason


def test_integer_and_bool_values_are_exact() -> None:
    ref = trace_of({"kind": "value", "step": 0, "name": "i", "value": tensor([3, 4], "int64")})
    assert compare(ref, trace_of({"kind": "value", "step": 0, "name": "i", "value": tensor([3, 5], "int64")}))
    ref = trace_of({"kind": "value", "step": 0, "name": "b", "value": tensor([True], "bool")})
    assert compare(ref, trace_of({"kind": "value", "step": 0, "name": "b", "value": tensor([False], "bool")}))


def test_non_finite_values_must_match_exactly() -> None:
    ref = trace_of({"kind": "value", "step": 0, "name": "x", "value": tensor(["nan", "inf", 1.0])})
    assert compare(ref, copy.deepcopy(ref)) is None
    for other in (["nan", "-inf", 1.0], [0.0, "inf", 1.0], ["nan", 1e38, 1.0]):
        assert compare(ref, trace_of({"kind": "value", "step": 0, "name": "x", "value": tensor(other)}))


def test_divergence_describes_both_sides_and_serialises() -> None:
    divergence = compare(REF, edited(3, ("message",), "something else"))
    assert isinstance(divergence, Divergence)
    text = divergence.describe()
    assert "step 5" in text
    assert "reference: step 5 raised RuntimeError: Trying to backward twice" in text
    assert "backend:   step 5 raised RuntimeError: something else" in text
    assert json.loads(json.dumps(divergence.to_dict()))["index"] == 3


def test_warnings_torch_emits_once_per_process_are_not_compared() -> None:
    once = {"kind": "warning", "step": 2, "category": "UserWarning", "message": "cycle", "once": True}
    with_once = trace_of(HOOK_A, once, VALUE)
    assert compare(with_once, trace_of(HOOK_A, VALUE)) is None
    assert compare(trace_of(HOOK_A, VALUE), with_once) is None
    divergence = compare(with_once, trace_of(HOOK_A, HOOK_B))
    assert divergence is not None and divergence.index == 1 and divergence.ref_event is None


def valued(hook: float, y: float, dtype: str = "float32") -> Trace:
    """REF's hooks and value with hook a receiving ``[hook]`` and y holding ``[1.0, y]``."""
    events = [copy.deepcopy(event) for event in (HOOK_A, HOOK_B, VALUE)]  # the hooks share REF's dict
    events[0]["received"]["grad"][0].update(data=[hook], dtype=dtype)
    events[1]["received"]["grad"][0]["dtype"] = dtype
    events[2]["value"].update(data=[1.0, y], dtype=dtype)
    return trace_of(*events)


# A planted cancellation: torch's float32 results (hook 1.0, y 2.0) are 1e-4 from its float64
# rerun, and its y moves by 1.5e-4 when the inputs are nudged (its hook value does not).
CANCELLING = valued(1.0, 2.0)
RERUNS = {
    FLOAT64: lambda: valued(1.0 + 1e-4, 2.0 + 1e-4, "float64"),
    NUDGED: lambda: valued(1.0, 2.0 - 1.5e-4),
}
RTOL, ATOL = 1.3e-6, 1e-5  # torch.testing's float32 defaults


def test_a_value_only_the_error_aware_judgement_accepts_is_recorded() -> None:
    accepted: list[Acceptance] = []
    assert compare(CANCELLING, valued(1.0, 2.0 + 3e-4), RERUNS, accepted) is None
    [acceptance] = accepted
    allowance = ATOL + RTOL * 2.0 + 2 * 1.5e-4  # the nudge measured torch's error above float64's
    assert acceptance.to_dict() == {
        "index": 2, "kind": "value", "step": 4, "name": "y", "value": 1, "dtype": "float32",
        "test": 2.0 + 3e-4, "ref": 2.0, "ref64": 2.0 + 1e-4, "nudged": 2.0 - 1.5e-4,
        "allowance": pytest.approx(allowance),
    }
    text = acceptance.describe()
    assert "event 2 (step 4) y: value 1 accepted by the error-aware judgement" in text
    assert f"|got - expected| = 0.0003 <= {allowance:.3g}" in text
    assert compare(CANCELLING, valued(1.0, 2.0 + 3e-4), RERUNS) is None  # collecting is optional


def test_values_within_the_fixed_tolerance_record_nothing_and_rerun_nothing() -> None:
    def no_rerun() -> Trace:
        raise AssertionError("a rerun ran although the values agree")

    accepted: list[Acceptance] = []
    within = valued(1.0 + 1e-6, 2.0 - 1e-6)
    assert compare(CANCELLING, within, {FLOAT64: no_rerun, NUDGED: no_rerun}, accepted) is None
    assert accepted == []


def test_a_rejected_value_is_a_divergence_and_earlier_acceptances_are_kept() -> None:
    """Hook a's value is within torch's own error (1e-4 from float64, none from the nudge), y is
    beyond it: the divergence is y's, the hook's value the one acceptance before it."""
    accepted: list[Acceptance] = []
    divergence = compare(CANCELLING, valued(1.0 + 2e-4, 2.0 + 4e-4), RERUNS, accepted)
    assert divergence is not None and divergence.index == 2
    assert "y: value 1 differs" in divergence.reason and "error-aware" in divergence.reason
    [hook] = accepted
    assert (hook.index, hook.kind, hook.step, hook.name, hook.value) == (0, "hook", 3, "hook grad[0]", 0)
    assert (hook.test, hook.ref, hook.ref64, hook.nudged) == (1.0 + 2e-4, 1.0, 1.0 + 1e-4, 1.0)
    assert hook.allowance == pytest.approx(ATOL + RTOL * 1.0 + 2 * 1e-4)
    accepted.clear()
    assert compare(CANCELLING, valued(1.0 + 3e-4, 2.0), RERUNS, accepted) is not None  # beyond: rejected
    assert accepted == []
