"""Self-tests of the error-aware judgement of low-precision values (``oracle.tolerance``): a float32
result whose summed terms cancel is accepted from an engine as accurate as torch, judged against
torch's own float64 rerun; planted faults are still rejected, and nothing is loosened where torch
is accurate. The cancellation is torch's own: a float32 dot product whose rounding error exceeds
the fixed tolerance."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import torch

from oracle.backends import Backend, load_backend, reference
from oracle.compare import compare
from oracle.differential import DivergenceError, check
from oracle.interpreter import run
from oracle.program import DType, Leaf, Module, Observe, Op, Program, Ref
from oracle.tolerance import ERROR_FACTOR, close, error_allowance, error_aware_close
from oracle.trace import Trace

TORCH = reference()


def cancelling_terms() -> tuple[list[float], list[float]]:
    """Two float32 vectors whose dot product, computed by torch in float32, is further from the
    float64 result than the fixed float32 tolerance allows (the first such pair of a fixed random
    sequence: a property of torch alone, found afresh on every machine)."""
    for seed in range(20_000):
        rng = np.random.default_rng(seed)
        a, b = (rng.uniform(-9, 9, 16).astype(np.float32).tolist() for _ in range(2))
        r32, r64 = _dot(a, b, torch.float32), _dot(a, b, torch.float64)
        if not close(r32, r64, "float32"):
            return a, b
    raise AssertionError("no float32 dot product of 16 terms cancels beyond the fixed tolerance")


def _dot(a: list[float], b: list[float], dtype: torch.dtype) -> float:
    return float(torch.tensor(a, dtype=dtype) @ torch.tensor(b, dtype=dtype))


A, B = cancelling_terms()
DOT = Program([Leaf("a", A), Leaf("b", B), Op("y", "matmul", [Ref("a"), Ref("b")]), Observe("y")])


def with_value(trace: Trace, value: float) -> Trace:
    """``trace`` with the observed value of ``y`` replaced (a backend's answer)."""
    edited = copy.deepcopy(trace)
    event = next(e for e in edited.events if e["kind"] == "value" and e["name"] == "y")
    event["value"]["data"] = [value]
    return edited


def judged(program: Program, value: float) -> str | None:
    """The divergence reason when a backend answers ``value`` for ``y``, or None if accepted."""
    ref = run(program, TORCH)
    divergence = compare(ref, with_value(ref, value), float64=lambda: run(program, TORCH, float64=True))
    return None if divergence is None else divergence.reason


def test_the_cancellation_defeats_the_fixed_tolerance() -> None:
    r32, r64 = _dot(A, B, torch.float32), _dot(A, B, torch.float64)
    correctly_rounded = float(np.float32(r64))
    assert not close(correctly_rounded, r32, "float32")
    ref = run(DOT, TORCH)
    reason = compare(ref, with_value(ref, correctly_rounded)).reason  # no float64 rerun given
    assert "value 0 differs" in reason and "error-aware" not in reason


def test_an_engine_as_accurate_as_torch_is_accepted() -> None:
    """The correctly rounded float32 result, and one as far from float64 as torch's on the other
    side, are right to float32 accuracy: the error-aware judgement accepts both."""
    r32, r64 = _dot(A, B, torch.float32), _dot(A, B, torch.float64)
    assert judged(DOT, float(np.float32(r64))) is None
    assert judged(DOT, float(np.float32(2 * r64 - r32))) is None


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(lambda r32, r64: r32 + 10 * (r32 - r64), id="off-by-10x-torch-error"),
        pytest.param(lambda r32, r64: -r32, id="wrong-sign"),
        pytest.param(lambda r32, r64: r32 * (1 + 1e-3), id="off-by-1e-3-relative"),
    ],
)
def test_planted_faults_are_still_rejected(fault: Callable[[float, float], float]) -> None:
    r32, r64 = _dot(A, B, torch.float32), _dot(A, B, torch.float64)
    reason = judged(DOT, float(np.float32(fault(r32, r64))))
    assert reason is not None and "value 0 differs" in reason
    assert "error-aware: the float64 rerun gives" in reason  # the message names the judgement


def test_nothing_is_loosened_where_torch_is_accurate() -> None:
    """An exact float32 sum (torch's float32 and float64 results equal): a value just outside the
    fixed tolerance is rejected by the error-aware judgement too."""
    exact = Program([Leaf("a", [0.5, 1.5]), Op("y", "sum", [Ref("a")]), Observe("y")])
    assert error_allowance(2.0, 2.0, "float32") == pytest.approx(1e-5 + 1.3e-6 * 2.0)
    reason = judged(exact, 2.0 + 2e-5)
    assert reason is not None and "reference's own float32 error is 0" in reason
    assert judged(exact, 2.0 + 5e-6) is None  # within the fixed tolerance, as before


def test_the_allowance_formula() -> None:
    assert error_allowance(1.0, 1.0 + 1e-4, "float32") == pytest.approx(1e-5 + 1.3e-6 + ERROR_FACTOR * 1e-4)
    assert error_aware_close(1.0 + 2e-4, 1.0, 1.0 + 1e-4, "float32")
    assert not error_aware_close(1.0 + 3e-4, 1.0, 1.0 + 1e-4, "float32")
    assert not error_aware_close(1.0 + 2e-4, 1.0, 1.0 + 1e-4, "float64")  # float64 stays fixed
    assert not error_aware_close(float("nan"), 1.0, 1.0 + 1e-4, "float32")
    assert error_allowance(1.0, float("inf"), "float32") is None
    assert error_allowance(1.0, 1.1, "int64") is None


def test_the_rerun_happens_only_on_a_mismatch() -> None:
    def no_rerun() -> Trace:
        raise AssertionError("the float64 rerun ran although the values agree")

    ref = run(DOT, TORCH)
    assert compare(ref, copy.deepcopy(ref), float64=no_rerun) is None


def test_a_rerun_that_departs_from_the_program_judges_nothing() -> None:
    """A float64 rerun whose events do not pair with the reference's (here: an extra error first)
    is no evidence: the value is judged by the fixed tolerance and the message says why."""
    ref = run(DOT, TORCH)
    wide = run(DOT, TORCH, float64=True)
    wide.events.insert(0, {"kind": "error", "step": 0, "type": "RuntimeError", "message": "?"})
    r64 = _dot(A, B, torch.float64)
    divergence = compare(ref, with_value(ref, float(np.float32(r64))), float64=lambda: wide)
    assert "no error-aware judgement: the float64 rerun departs from the program's run at event 0" in (
        divergence.reason
    )


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
    assert [e["value"]["dtype"] for e in run(program, TORCH).events if e["kind"] == "value"] == [
        "float16",
        "int64",
        "float32",
    ]


def matmul_backend(name: str, result: Callable[..., torch.Tensor]) -> Backend:
    """torch with ``torch.matmul(a, b)`` answering ``result(matmul, a, b)`` while programs run on it."""

    @contextmanager
    def patch() -> Iterator[None]:
        original = torch.matmul
        torch.matmul = lambda a, b: result(original, a, b)
        try:
            yield
        finally:
            torch.matmul = original

    return Backend(name, torch, patch=patch)


def test_check_accepts_a_more_accurate_engine_and_rejects_a_planted_fault() -> None:
    """End to end through ``check``: a matmul computed in float64 and rounded once (an engine more
    accurate than torch's float32 kernels, which the fixed tolerance rejects, see the first test)
    passes; one off by 1e-3 relative fails, and the message names the error-aware judgement."""
    accurate = matmul_backend("accurate", lambda mm, a, b: mm(a.double(), b.double()).to(a.dtype))
    check(DOT, accurate, TORCH)
    planted = matmul_backend("planted", lambda mm, a, b: mm(a, b) * 1.001)
    with pytest.raises(DivergenceError, match="error-aware: the float64 rerun gives"):
        check(DOT, planted, TORCH)


# Found by MOD-001's random trees once they drew every Conv2d option: a Linear weight gradient,
# 11.150192 in torch's float32, 11.150137 in float64 (torch's own error 5.5e-5, five times the
# fixed tolerance); impl's float32 gave 11.150154, closer to float64 than torch.
FOUND_BY_MOD_001 = Program.from_dict(json.loads(
    '{"steps":[{"kind":"module","name":"m1","cls":"Twice","args":[],"params":{},"kwargs":{},"children'
    '":{"body":{"cls":"TwoBranch","children":{"left":{"cls":"TwoBranch","children":{"left":{"cls":"Si'
    'gmoid"},"right":{"cls":"Conv2d","args":[1,1,[2,2]],"kwargs":{"stride":[1,1],"dilation":[1,1],"gr'
    'oups":1,"padding":"same","padding_mode":"replicate"},"params":{"weight":[[[[-1.0,0.5],[-1.0,0.5]'
    ']]],"bias":[0.0]}}}},"right":{"cls":"Linear","args":[3,3],"kwargs":{},"params":{"weight":[[0.0,-'
    '0.5,-1.0],[0.0,-0.5,-1.0],[0.5,0.5,-0.5]],"bias":[1.0,0.5,1.0]}}}}}},{"kind":"leaf","name":"x2",'
    '"data":[[[0.0,-1.5,1.0],[0.0,1.0,-1.5],[3.0,1.5,2.0]]],"dtype":"float32","requires_grad":false},'
    '{"kind":"call_module","out":"t3","module":"m1","inputs":["x2"],"kwargs":{}},{"kind":"op","out":"'
    't4","op":"sum","args":[{"ref":"t3"}],"kwargs":{}},{"kind":"observe_graph","tensor":"t4"},{"kind"'
    ':"backward","tensor":"t4","gradient":null,"retain_graph":null,"create_graph":false,"inputs":null'
    '},{"kind":"observe","tensor":"m1_body_left_right.weight"},{"kind":"observe","tensor":"m1_body_le'
    'ft_right.bias"},{"kind":"observe","tensor":"m1_body_right.weight"},{"kind":"observe","tensor":"m'
    '1_body_right.bias"},{"kind":"observe","tensor":"x2"},{"kind":"observe","tensor":"t3"},{"kind":"o'
    'bserve","tensor":"t4"}]}'
))


def test_the_cancellation_random_trees_found_passes_on_impl() -> None:
    check(FOUND_BY_MOD_001, load_backend("impl"), TORCH)


def test_a_rerun_that_fails_is_named_in_the_divergence() -> None:
    def broken() -> Trace:
        raise RuntimeError("no float64 here")

    ref = run(DOT, TORCH)
    divergence = compare(ref, with_value(ref, _dot(A, B, torch.float64)), float64=broken)
    assert "no error-aware judgement: the float64 rerun raised RuntimeError: no float64 here" in (
        divergence.reason
    )


def test_the_float64_run_starts_from_the_programs_rounded_values() -> None:
    """0.1 is not a float32: the float64 rerun holds float32's 0.1 (leaf and parameter), so its
    distance from the float32 run measures rounding in the computation, not in the inputs."""
    program = Program(
        [
            Leaf("a", [0.1], "float32"),
            Leaf("h", [0.1], "float16"),
            Module("m", "Linear", [1, 1], {"weight": [[0.1]], "bias": [0.1]}),
            Observe("a"),
            Observe("h"),
            Observe("m.weight"),
            Observe("m.bias"),
        ]
    )
    wide = run(program, TORCH, float64=True).events
    assert [e["value"]["dtype"] for e in wide if e["kind"] == "value"] == ["float64"] * 4
    f32, f16 = float(np.float32(0.1)), float(np.float16(0.1))
    assert [e["value"]["data"][0] for e in wide if e["kind"] == "value"] == [f32, f16, f32, f32]
