"""W4 suite throughput: the conformance suite's own work, on a fixed batch of generated programs.

``generate`` draws programs with ``oracle.strategies.programs`` (derandomized, so every run times
the same batch); ``run_all`` interprets them on one backend; ``check_all`` is what a conformance
test does per program, ``oracle.differential.check`` (both backends executed, traces compared).
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings

from oracle.backends import Backend
from oracle.differential import DivergenceError, check
from oracle.interpreter import run
from oracle.program import Program
from oracle.strategies import programs


def generate(count: int) -> list[Program]:
    """``count`` programs (fewer if hypothesis runs out of distinct ones), the same every run."""
    found: list[Program] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(programs())
    def collect(program: Program) -> None:
        found.append(program)

    collect()
    return found


def run_all(batch: list[Program], backend: Backend) -> None:
    """Interpret every program on ``backend`` (the traces are built and dropped)."""
    for program in batch:
        run(program, backend)


def check_all(batch: list[Program], backend: Backend, reference: Backend) -> int:
    """Differentially check every program; returns how many diverged (a divergence is a result
    of the check, not an error of the benchmark)."""
    divergent = 0
    for program in batch:
        try:
            check(program, backend, reference)
        except DivergenceError:
            divergent += 1
    return divergent
