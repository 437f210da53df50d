"""Self-tests of the scheduler steps (conformance/test_optim.py, OPT-005): JSON round trip,
validation, rendering (the repro prints the reference trace: learning rates, state_dicts, torch's
warnings and errors), and the scheduled loops' programs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from conformance.test_optim import scheduled_loops
from oracle.interpreter import run
from oracle.program import (
    LR_LAMBDAS,
    Backward,
    Leaf,
    ObserveScheduler,
    Op,
    Optimizer,
    OptimizerStep,
    Program,
    Ref,
    Scheduler,
    SchedulerStep,
)
from oracle.reference import reference
from tests.oracle.test_render import assert_script_reproduces

TORCH = reference()

SCHEDULED = Program(
    [
        Leaf("w", [1.0, -2.0, 0.5], requires_grad=True),
        Op("p", "mul", [Ref("w"), Ref("w")]),
        Op("s", "sum", [Ref("p")]),
        Backward("s"),
        Optimizer("opt", "NAdam", ["w"], {"lr": 0.1}),
        Scheduler("cycle", "OneCycleLR", "opt", {"max_lr": 0.5, "total_steps": 3, "three_phase": True}),
        Optimizer("sgd", "SGD", ["w"], {"lr": 0.1, "momentum": 0.9}),
        Scheduler("lam", "LambdaLR", "sgd", {"lr_lambda": LR_LAMBDAS[-1]}),
        Optimizer("rms", "RMSprop", ["w"], {"lr": 0.1, "centered": True}),
        Scheduler("plateau", "ReduceLROnPlateau", "rms", {"patience": 0, "cooldown": 1, "factor": 0.5}),
        SchedulerStep("lam"),  # before its optimizer's step: torch warns
        OptimizerStep("sgd"),
        SchedulerStep("lam", epoch=4),  # the deprecated epoch: the closed form, and a warning
        ObserveScheduler("lam"),
        *(step for _ in range(4)  # one step past total_steps: torch raises
          for step in (OptimizerStep("opt"), SchedulerStep("cycle"), ObserveScheduler("cycle"))),
        *(step for metric in (1.0, 1.0, 0.5, 0.5, 0.5) for step in (
            OptimizerStep("rms"), SchedulerStep("plateau", metrics=metric), ObserveScheduler("plateau"))),
    ]
)


def test_scheduler_steps_round_trip_through_json() -> None:
    assert Program.from_json(SCHEDULED.to_json()) == SCHEDULED


@pytest.mark.parametrize(
    "make",
    [
        lambda: Scheduler("s", "SWALR", "opt"),
        lambda: Scheduler("s", "LambdaLR", "opt", {"lr_lambda": "__import__('os')"}),
        lambda: Scheduler("s", "SequentialLR", "opt", {"milestones": []}),  # no schedulers
        lambda: Scheduler("s", "StepLR", "opt", {"step_size": 1}, ["t"]),  # not a composite
    ],
)
def test_invalid_scheduler_steps_are_refused(make) -> None:
    with pytest.raises(ValueError):
        make()


def test_scheduler_steps_render_as_the_reference_trace() -> None:
    assert_script_reproduces(SCHEDULED)


@settings(max_examples=1, deadline=None, database=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(program=scheduled_loops())
def test_scheduled_loops_render_as_the_reference_trace(program: Program) -> None:
    """The first program drawn, of every scheduler form; steps after a scheduler torch refused
    (OneCycleLR cycling Adagrad's momentum, which it lacks) are skipped by the interpreter, not by
    the script, and are left out."""
    events = run(program, TORCH).events
    unbound = {e["name"] for e in events if e["kind"] == "skipped"}
    kept = [s for s in program.steps if not {*s.names_read(), *s.names_bound()} & unbound]
    assert_script_reproduces(Program(kept))
