"""Self-tests of the error-aware judgement of low-precision values (``oracle.tolerance``): a float32
result whose summed terms cancel is accepted from an engine as accurate as torch, judged against
the reference's reruns (in float64, on inputs nudged by an ulp); planted faults are still
rejected, and nothing is loosened where torch is accurate. The cancellation is torch's own: a
float32 dot product whose rounding error exceeds the fixed tolerance."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import torch

from oracle.backends import Backend, InProcess, load_backend
from oracle.compare import FLOAT64, NUDGED, compare
from oracle.differential import DivergenceError, check, recording, reruns
from oracle.interpreter import run
from oracle.program import Backward, DType, Leaf, Module, Observe, Op, Program, Ref
from oracle.reference import reference
from oracle.render import render
from oracle.tolerance import ERROR_FACTOR, NUDGE_CAP, close, error_allowance, error_aware_close
from oracle.trace import Trace
from tests.helpers import HELPERS

TORCH = reference()
# programs the conformance suite generated where the fixed tolerance rejected impl's float32 value
CASES = json.loads((HELPERS / "error_aware_cases.json").read_text(encoding="utf-8"))


def cancelling_terms() -> tuple[list[float], list[float]]:
    """Two float32 vectors whose dot product, computed by torch in float32, is further from the
    float64 result than the fixed float32 tolerance allows (the first such pair of a fixed random
    sequence: a property of torch alone, found afresh on every machine)."""
    for seed in range(20_000):
        rng = np.random.default_rng(seed)
        a, b = (rng.uniform(-9, 9, 16).astype(np.float32).tolist() for _ in range(2))
        if not close(_dot(a, b, torch.float32), _dot(a, b, torch.float64), "float32"):
            return a, b
    raise AssertionError("no float32 dot product of 16 terms cancels beyond the fixed tolerance")


def _dot(a: list[float], b: list[float], dtype: torch.dtype) -> float:
    return float(torch.tensor(a, dtype=dtype) @ torch.tensor(b, dtype=dtype))


A, B = cancelling_terms()
DOT = Program([Leaf("a", A), Leaf("b", B), Op("y", "matmul", [Ref("a"), Ref("b")]), Observe("y")])
R32, R64 = _dot(A, B, torch.float32), _dot(A, B, torch.float64)


def observed(trace: Trace, name: str = "y") -> float:
    return next(e for e in trace.events if e["kind"] == "value" and e["name"] == name)["value"]["data"][0]


def variation(program: Program) -> float:
    """The reference's largest distance from its reruns' values of ``y`` (at least its own error)."""
    r32 = observed(run(program, TORCH))
    return max(abs(r32 - observed(make())) for make in reruns(program, TORCH).values())


def with_value(trace: Trace, value: float) -> Trace:
    """``trace`` with the observed value of ``y`` replaced (a backend's answer)."""
    edited = copy.deepcopy(trace)
    event = next(e for e in edited.events if e["kind"] == "value" and e["name"] == "y")
    event["value"]["data"] = [value]
    return edited


def judged(program: Program, value: float) -> str | None:
    """The divergence reason when a backend answers ``value`` for ``y``, or None if accepted."""
    ref = run(program, TORCH)
    divergence = compare(ref, with_value(ref, value), reruns(program, TORCH))
    return None if divergence is None else divergence.reason


def test_the_cancellation_defeats_the_fixed_tolerance() -> None:
    correctly_rounded = float(np.float32(R64))
    assert not close(correctly_rounded, R32, "float32")
    ref = run(DOT, TORCH)
    reason = compare(ref, with_value(ref, correctly_rounded)).reason  # no reruns given
    assert "value 0 differs" in reason and "error-aware" not in reason


def test_an_engine_as_accurate_as_torch_is_accepted() -> None:
    """The correctly rounded float32 result, and one as far from float64 as torch's on the other
    side, are right to float32 accuracy: the error-aware judgement accepts both."""
    assert judged(DOT, float(np.float32(R64))) is None
    assert judged(DOT, float(np.float32(2 * R64 - R32))) is None


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(lambda r32, spread: r32 + 10 * spread, id="off-by-10x-torch-own-error"),
        pytest.param(lambda r32, spread: -r32, id="wrong-sign"),
        pytest.param(lambda r32, spread: r32 * (1 + 1e-3), id="off-by-1e-3-relative"),
    ],
)
def test_planted_faults_are_still_rejected(fault: Callable[[float, float], float]) -> None:
    reason = judged(DOT, float(np.float32(fault(R32, variation(DOT)))))
    assert reason is not None and "value 0 differs" in reason
    assert "error-aware: the reference gives" in reason  # the message names the judgement
    assert "in float64" in reason and "on inputs nudged by an ulp" in reason


def test_nothing_is_loosened_where_torch_is_accurate() -> None:
    """An exact, well-conditioned float32 sum (float32, float64 and nudged inputs agree to an ulp):
    a value just outside the fixed tolerance is rejected by the error-aware judgement too."""
    exact = Program([Leaf("a", [0.5, 1.5]), Op("y", "sum", [Ref("a")]), Observe("y")])
    assert variation(exact) <= 2 * np.spacing(np.float32(2.0))
    reason = judged(exact, 2.0 + 2e-5)
    assert reason is not None and "error-aware" in reason
    assert judged(exact, 2.0 + 5e-6) is None  # within the fixed tolerance, as before


def test_the_allowance_formula() -> None:
    tol = 1e-5 + 1.3e-6
    assert error_allowance(1.0, 1.0 + 1e-4, None, "float32") == pytest.approx(tol + ERROR_FACTOR * 1e-4)
    assert error_allowance(1.0, 1.0 + 1e-4, 1.0 - 3e-4, "float32") == pytest.approx(tol + ERROR_FACTOR * 3e-4)
    capped = error_allowance(1.0, 1.0 + 1e-6, 1.5, "float32")  # a nudge past the cap: a discrete flip
    assert capped == pytest.approx(tol + ERROR_FACTOR * NUDGE_CAP * 1e-6)
    assert error_allowance(1.0, 1.0, 1.5, "float32") == pytest.approx(tol)  # torch exact: nothing more
    assert error_aware_close(1.0 + 2e-4, 1.0, 1.0 + 1e-4, None, "float32")
    assert not error_aware_close(1.0 + 3e-4, 1.0, 1.0 + 1e-4, None, "float32")
    assert not error_aware_close(1.0 + 2e-4, 1.0, 1.0 + 1e-4, None, "float64")  # float64 stays fixed
    assert not error_aware_close(math.nan, 1.0, 1.0 + 1e-4, None, "float32")
    assert error_allowance(1.0, math.inf, None, "float32") is None
    assert error_allowance(1.0, 1.1, None, "int64") is None


def test_a_tie_broken_by_the_nudge_loosens_nothing() -> None:
    """maximum(a * b, c) with a * b == c exactly: torch splits the gradient 0.5/0.5. The nudged
    rerun breaks the tie (1.0 and 2.0 move independently) and moves c.grad by 0.5, but torch is
    exact there (float64 agrees), so a backend giving c all or none of the gradient is rejected."""
    program = Program(
        [
            *(Leaf(n, [v], requires_grad=True) for n, v in (("a", 1.0), ("b", 2.0), ("c", 2.0))),
            Op("ab", "mul", [Ref("a"), Ref("b")]),
            Op("m", "maximum", [Ref("ab"), Ref("c")]),
            Op("s", "sum", [Ref("m")]),
            Backward("s"),
            Observe("c"),
        ]
    )
    ref = run(program, TORCH)
    nudged = run(program, TORCH, nudge=True)
    grads = [next(e for e in t.events if e["kind"] == "grad")["value"]["data"][0] for t in (ref, nudged)]
    assert grads[0] == 0.5 and grads[1] in (0.0, 1.0)  # the nudge did break the tie
    for wrong in (0.0, 1.0):
        bad = copy.deepcopy(ref)
        next(e for e in bad.events if e["kind"] == "grad")["value"]["data"] = [wrong]
        divergence = compare(ref, bad, reruns(program, TORCH))
        assert divergence is not None and "c.grad: value 0 differs" in divergence.reason


def test_the_reruns_happen_only_on_a_mismatch() -> None:
    def no_rerun() -> Trace:
        raise AssertionError("a rerun ran although the values agree")

    ref = run(DOT, TORCH)
    assert compare(ref, copy.deepcopy(ref), {FLOAT64: no_rerun, NUDGED: no_rerun}) is None


def test_a_rerun_that_departs_from_the_program_judges_nothing() -> None:
    """A rerun whose events do not pair with the reference's (here: an extra error first) is no
    evidence: the value is judged by the fixed tolerance and the message says why."""
    ref = run(DOT, TORCH)
    wide = run(DOT, TORCH, float64=True)
    wide.events.insert(0, {"kind": "error", "step": 0, "type": "RuntimeError", "message": "?"})
    divergence = compare(ref, with_value(ref, float(np.float32(R64))), {FLOAT64: lambda: wide})
    expected = "no error-aware judgement: the rerun in float64 departs from the program's run at event 0"
    assert expected in divergence.reason


def test_a_rerun_that_fails_is_named_in_the_divergence() -> None:
    def broken() -> Trace:
        raise RuntimeError("no float64 here")

    ref = run(DOT, TORCH)
    divergence = compare(ref, with_value(ref, R64), {FLOAT64: broken})
    expected = "no error-aware judgement: the rerun in float64 raised RuntimeError: no float64 here"
    assert expected in divergence.reason


def test_the_float64_run_widens_every_low_precision_dtype() -> None:
    """Leaves, dtype arguments and module parameters of float32/float16/bfloat16 are float64 in
    the rerun (integers untouched), and the default dtype is restored afterwards."""
    program = Program(
        [
            Leaf("a", [1.0, 2.0], "float32"),
            Leaf("i", [1, 2], "int64"),
            Op("h", "to", [Ref("a"), DType("float16")]),
            Module("m", "Linear", [2, 1], {"weight": [[0.5, 1.0]], "bias": [0.0]}),
            Observe("h"),
            Observe("i"),
            Observe("m.weight"),
        ]
    )
    default = torch.get_default_dtype()
    dtypes = [e["value"]["dtype"] for e in run(program, TORCH, float64=True).events if e["kind"] == "value"]
    assert dtypes == ["float64", "int64", "float64"]
    assert torch.get_default_dtype() is default
    dtypes = [e["value"]["dtype"] for e in run(program, TORCH).events if e["kind"] == "value"]
    assert dtypes == ["float16", "int64", "float32"]


def leaves_and_parameter(value: float) -> Program:
    return Program(
        [
            Leaf("a", [value], "float32"),
            Leaf("h", [value], "float16"),
            Module("m", "Linear", [1, 1], {"weight": [[value]], "bias": [value]}),
            *(Observe(n) for n in ("a", "h", "m.weight", "m.bias")),
        ]
    )


def values_of(trace: Trace) -> list[float]:
    return [e["value"]["data"][0] for e in trace.events if e["kind"] == "value"]


def test_the_float64_run_starts_from_the_programs_rounded_values() -> None:
    """0.1 is not a float32: the float64 rerun holds float32's 0.1 (leaf and parameter), so its
    distance from the float32 run measures rounding in the computation, not in the inputs."""
    wide = run(leaves_and_parameter(0.1), TORCH, float64=True)
    f32, f16 = float(np.float32(0.1)), float(np.float16(0.1))
    assert values_of(wide) == [f32, f16, f32, f32]


def test_the_nudged_run_moves_each_input_by_an_ulp_and_equal_values_alike() -> None:
    nudged = run(leaves_and_parameter(0.1), TORCH, nudge=True)
    assert [e["value"]["dtype"] for e in nudged.events if e["kind"] == "value"][:2] == ["float32", "float16"]
    f32, f16, got = np.float32(0.1), np.float16(0.1), values_of(nudged)
    assert 1 <= abs(got[0] - f32) / np.spacing(f32) <= 2
    assert 1 <= abs(got[1] - f16) / np.spacing(f16) <= 2
    assert got[0] == got[2] == got[3]  # the same value moves the same way: ties stay ties
    assert values_of(run(leaves_and_parameter(0.0), TORCH, nudge=True)) == [0.0] * 4
    directions = {np.sign(values_of(run(leaves_and_parameter(v), TORCH, nudge=True))[0] - v) for v in A}
    assert directions == {-1.0, 1.0}


def patched_backend(name: str, **results: Callable[..., torch.Tensor]) -> Backend:
    """torch with each ``torch.OP(*args)`` named in ``results`` answering ``results[OP](original,
    *args)`` while programs run on it."""

    @contextmanager
    def patch() -> Iterator[None]:
        originals = {op: getattr(torch, op) for op in results}
        for op, result in results.items():
            setattr(torch, op, lambda *args, op=op, result=result: result(originals[op], *args))
        try:
            yield
        finally:
            for op, original in originals.items():
                setattr(torch, op, original)

    return InProcess(name, torch, patch=patch)


def matmul_backend(name: str, result: Callable[..., torch.Tensor]) -> Backend:
    """torch with ``torch.matmul(a, b)`` answering ``result(matmul, a, b)`` while programs run on it."""
    return patched_backend(name, matmul=result)


def accurate_matmul(mm: Callable[..., torch.Tensor], a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A matmul computed in float64 and rounded once: more accurate than torch's float32 kernels."""
    return mm(a.double(), b.double()).to(a.dtype)


def test_check_accepts_a_more_accurate_engine_and_rejects_a_planted_fault() -> None:
    """End to end through ``check``: a matmul computed in float64 and rounded once (an engine more
    accurate than torch's float32 kernels, which the fixed tolerance rejects, see the first test)
    passes; one off by 1e-3 relative fails, and the message names the error-aware judgement."""
    accurate = matmul_backend("accurate", accurate_matmul)
    check(DOT, accurate, TORCH)
    planted = matmul_backend("planted", lambda mm, a, b: mm(a, b) * 1.001)
    with pytest.raises(DivergenceError, match="error-aware: the reference gives"):
        check(DOT, planted, TORCH)


def test_check_logs_each_value_it_accepts_with_the_numbers_that_decided_it() -> None:
    """Every acceptance by the error-aware judgement reaches the open logs: counted, the first
    ``keep`` kept with torch's values (float32, float64, nudged), the allowance and the repro."""
    accurate = matmul_backend("accurate", accurate_matmul)
    check(DOT, accurate, TORCH)  # no log open: nothing to record into, nothing fails
    with recording(keep=1) as log:
        check(DOT, accurate, TORCH)
        check(DOT, accurate, TORCH)
    assert log.accepted == 2 and len(log.accepted_examples) == 1
    events = run(DOT, TORCH).reproducible_events()
    index = next(i for i, e in enumerate(events) if e["kind"] == "value" and e["name"] == "y")
    nudged = observed(run(DOT, TORCH, nudge=True))
    error = max(abs(R32 - R64), min(abs(R32 - nudged), NUDGE_CAP * abs(R32 - R64)))
    assert log.accepted_examples == [{
        "index": index, "kind": "value", "step": 3, "name": "y", "value": 0, "dtype": "float32",
        "test": float(np.float32(R64)), "ref": R32, "ref64": R64, "nudged": nudged,
        "allowance": pytest.approx(1e-5 + 1.3e-6 * abs(R32) + ERROR_FACTOR * error), "repro": render(DOT),
    }]
    planted = matmul_backend("planted", lambda mm, a, b: mm(a, b) * 1.001)
    with recording() as log, pytest.raises(DivergenceError) as raised:
        check(DOT, planted, TORCH)
    assert log.accepted == 0 and log.accepted_examples == [] and raised.value.accepted == []
    assert "error_aware_accepted" not in raised.value.to_dict()


def test_a_diverging_program_carries_the_values_accepted_before_its_divergence() -> None:
    """y = a @ b computed accurately is accepted; z = -y off by 1e-3 relative is the divergence:
    the error names y's acceptance, and the log counts it (a widened judgement all the same)."""
    program = Program([*DOT.steps, Op("z", "neg", [Ref("y")]), Observe("z")])
    backend = patched_backend("neg-off", matmul=accurate_matmul, neg=lambda neg, x: neg(x) * 1.001)
    with recording() as log, pytest.raises(DivergenceError) as raised:
        check(program, backend, TORCH)
    assert "z: value 0 differs" in raised.value.divergence.reason
    [accepted] = raised.value.to_dict()["error_aware_accepted"]
    assert (accepted["name"], accepted["ref"], accepted["ref64"]) == ("y", R32, R64)
    assert log.accepted == 1 and log.accepted_examples[0]["name"] == "y"


@pytest.mark.parametrize("case", sorted(CASES))
def test_cancellations_the_suite_found_pass_on_impl(case: str) -> None:
    """Programs the conformance suite generated where impl's float32 value failed the fixed
    tolerance though it is as accurate as torch's (``note`` in the JSON says how)."""
    check(Program.from_dict(CASES[case]["program"]), load_backend("impl"), TORCH)
