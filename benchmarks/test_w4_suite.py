"""W4 suite throughput: generated programs per second, interpreted on impl alone, on torch alone,
and checked differentially: ``both`` (torch and impl executed in this process, traces compared,
as ``--isolation none``) and ``isolated`` (the same check with impl in a worker process of its own,
``oracle.runner.Isolated``, as a conformance run by default). The row's ``baseline_ratios`` give
each over ``both``: ``isolated`` there is what isolation costs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks import suite
from benchmarks.conftest import Recorder, ready_or_skip
from oracle.backends import load_backend
from oracle.reference import reference
from oracle.runner import Isolated

PROGRAMS = 200
ROUNDS = 5


@pytest.fixture(scope="module")
def batch() -> dict[str, Any]:
    """The programs, and how many of them impl currently diverges on (part of the row's params)."""
    programs = suite.generate(PROGRAMS)
    divergent: list[int] = []  # filled by the one check below, which ready_or_skip runs as its warm-up
    ready_or_skip("impl", "W4", lambda: lambda: divergent.append(
        suite.check_all(programs, load_backend("impl"), reference())))
    return {"programs": programs, "divergent": divergent[0]}


@pytest.fixture(scope="module")
def isolated() -> Iterator[Isolated]:
    """impl in a worker process, started by the warm-up round (not timed), stopped afterwards."""
    runner = Isolated("impl")
    yield runner
    runner.close()


@pytest.mark.parametrize("label", ["impl", "torch", "both", "isolated"])
def test_w4_suite_throughput(recorder: Recorder, batch: dict[str, Any], label: str, request: Any) -> None:
    programs = batch["programs"]
    impl, torch = load_backend("impl"), reference()
    runner = request.getfixturevalue("isolated") if label == "isolated" else None
    timed = {
        "impl": lambda: suite.run_all(programs, impl),
        "torch": lambda: suite.run_all(programs, torch),
        "both": lambda: suite.check_all(programs, impl, torch),
        "isolated": lambda: suite.check_all(programs, runner, torch),
    }[label]
    params = {"workload": "W4", "items": len(programs), "divergent": batch["divergent"], "baseline": "both"}
    recorder.time(f"W4 suite, {len(programs)} programs", label, "cpu", lambda: timed, params, ROUNDS)
