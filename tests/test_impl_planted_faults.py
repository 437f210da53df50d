"""Planted faults in impl are caught by the conformance suite (issue 5).

Each fault of ``tests/impl_faults.py`` is planted for a whole pytest run (``--plant NAME``) of
the conformance tests that should catch it, in the ``ci`` hypothesis profile, against
``--backend impl``. Every expected rule must fail with a ``DivergenceError`` (read from the run's
results.json). The same selections without a fault must pass, apart from
strict xfails (impl's known divergences), so a failure under a fault is the fault's doing.

Each run is one subprocess: the faults monkeypatch impl for the whole session, which must not
leak into this process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.impl_faults import IMPL_FAULTS

ROOT = Path(__file__).resolve().parent.parent
# the conformance run: impl in the ci profile, in file order (every selected test runs)
CI_RUN = "--backend impl --hypothesis-profile ci -q -p no:randomly -p no:cacheprovider".split()
TIMEOUT = 300  # seconds per conformance run; each should take well under a minute


@dataclass(frozen=True)
class Catch:
    """Which conformance tests should catch a fault and, per rule they check (each must fail), a
    phrase its divergence's description must contain (what kind of difference the fault makes)."""

    tests: tuple[str, ...]
    phrases: dict[str, str]


def _ids(module: str, *names: str) -> tuple[str, ...]:
    return tuple(f"conformance/{module}.py::{name}" for name in names)


CATCHES: dict[str, Catch] = {
    # the reversed queue shows where two nodes are ready at once: in HOOK-002's branching graphs,
    # hooks on sibling branches fire in the other order; in HOOK-004, torch runs a leaf's
    # AccumulateGrad (the latest sequence number) before a sibling branch whose hook raises, so
    # the leaf keeps its .grad; reversed, the error comes first
    "engine_order_reversed": Catch(
        _ids("test_hook_order", "test_hooks_fire_from_the_output_back",
             "test_wrong_gradient_from_a_hook_raises"),
        {"HOOK-002": "hook differs", "HOOK-004": "expected a tensor, got None"},
    ),
    "retain_grad_hook_first": Catch(
        _ids("test_hook_order", "test_hook_kinds_fire_in_documented_order"),
        {"HOOK-006": ".grad: value"},
    ),
    "saved_tensors_never_freed": Catch(
        _ids("test_retain_graph", "test_second_backward_needs_retain_graph"),
        {"RG-001": "expected error, got value"},
    ),
    "sigmoid_grad_off": Catch(
        _ids("test_hook_order", "test_hooks_fire_from_the_output_back"),
        {"HOOK-002": ".grad: value"},
    ),
    "accumulate_grad_replaces": Catch(
        _ids("test_accumulation", "test_repeated_backward_accumulates"),
        {"ACC-001": ".grad: value"},
    ),
    "full_backward_hook_gets_outputs": Catch(
        _ids("test_module_hooks", "test_full_backward_hooks_receive_and_replace_gradients"),
        {"MHOOK-004": "grad_input"},
    ),
}


def run_conformance(tests: tuple[str, ...], results: Path, plant: str | None = None) -> dict:
    """Run ``tests`` on impl in the ci profile (one subprocess) and return its results.json."""
    command = [sys.executable, "-m", "pytest", *tests, *CI_RUN, "--results", str(results)]
    if plant is not None:
        command += ["--plant", plant]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    output = f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
    assert results.exists(), f"no results.json from {' '.join(command)}:\n{output}"
    return json.loads(results.read_text(encoding="utf-8"))


def test_every_fault_has_a_catch() -> None:
    assert set(CATCHES) == set(IMPL_FAULTS)


@pytest.mark.parametrize("fault", sorted(CATCHES))
def test_planted_fault_is_caught(fault: str, tmp_path: Path) -> None:
    catch = CATCHES[fault]
    results = run_conformance(catch.tests, tmp_path / "results.json", plant=fault)
    masked = [t["nodeid"] for t in results["tests"] if t["outcome"] == "xfailed"]
    assert not masked, f"{fault}: a strict xfail of impl (a known divergence) masks the fault in {masked}"
    failed = {t["rule"]: t for t in results["tests"] if t["outcome"] == "failed"}
    assert failed, f"{fault} went unnoticed by {catch.tests}: {results['totals']}"
    missed = sorted(set(catch.phrases) - set(failed))
    assert not missed, f"{fault} failed rules {sorted(failed)}, not {missed}"
    for rule, phrase in catch.phrases.items():
        divergence = results["divergences"][failed[rule]["divergence"]]
        message = divergence["message"][:500]
        assert message.startswith("oracle.differential.DivergenceError"), message
        details = divergence["details"]
        assert details and "repro" in details, f"no structured divergence for {fault} in {rule}: {message}"
        assert phrase in details["description"], details["description"]


def test_unfaulted_impl_passes_the_selections(tmp_path: Path) -> None:
    """Without a fault the same selections pass (strict xfails, impl's known divergences, aside)."""
    selection = tuple(dict.fromkeys(test for catch in CATCHES.values() for test in catch.tests))
    results = run_conformance(selection, tmp_path / "results.json")
    outcomes = {t["nodeid"]: t["outcome"] for t in results["tests"]}
    assert set(outcomes) == set(selection), f"ran {sorted(outcomes)}"
    bad = {nodeid: outcome for nodeid, outcome in outcomes.items() if outcome not in ("passed", "xfailed")}
    assert not bad, f"unfaulted impl does not pass: {bad}"
    assert all(t["known_divergence"] for t in results["tests"] if t["outcome"] == "xfailed")
    assert all(t["programs"] > 0 for t in results["tests"] if t["outcome"] == "passed")


@pytest.mark.parametrize("fault", sorted(IMPL_FAULTS))
def test_faults_restore_impl(fault: str) -> None:
    """Each fault changes impl while active and leaves it as it was afterwards."""
    from impl._ops.backward_ops import SIGMOID_BACKWARD
    from impl.autograd import engine, graph
    from impl.nn.modules._backward_hook import BackwardHook

    watched = {
        "heapq": lambda: engine.heapq,
        "pre_hooks": lambda: engine.call_tensor_pre_hooks,
        "release": lambda: graph.SavedTensor.release,
        "sigmoid": lambda: SIGMOID_BACKWARD.forward,
        "accumulate": lambda: graph.AccumulateGrad.apply,
        "module_hook": lambda: BackwardHook.__init__,
    }
    before = {name: get() for name, get in watched.items()}
    with ExitStack() as stack:
        stack.enter_context(IMPL_FAULTS[fault]())
        during = {name: get() for name, get in watched.items()}
        assert sum(during[name] is not before[name] for name in watched) == 1
    assert {name: get() for name, get in watched.items()} == before


def test_an_unknown_plant_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--plant", "no_such_fault", "--collect-only", "-q", __file__],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "unknown impl fault 'no_such_fault'" in done.stderr
    assert "sigmoid_grad_off" in done.stderr
