"""The differential check: run a program on the reference and on a backend, fail on the first
difference with a readable account and a runnable torch repro.

Values accepted only by the error-aware judgement (``oracle.compare.Acceptance``) are never passed
silently: ``check`` hands them to every open ``recording_acceptances()`` (the pytest plugin opens
one around each test, for results.json and the report) and a ``DivergenceError`` carries those
of its program."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from oracle.backends import Backend
from oracle.backends import reference as reference_backend
from oracle.compare import FLOAT64, NUDGED, Acceptance, Divergence, compare
from oracle.interpreter import run
from oracle.program import Program
from oracle.render import render
from oracle.stats import count_program
from oracle.trace import Trace


class DivergenceError(AssertionError):
    """A backend behaved differently from the reference on a program."""

    def __init__(
        self,
        divergence: Divergence,
        program: Program,
        ref_trace: Trace,
        test_trace: Trace,
        device: str = "cpu",
        accepted: list[Acceptance] | None = None,
    ) -> None:
        self.divergence = divergence
        self.device = device
        self.accepted = accepted or []  # values before the divergence the error-aware judgement accepted
        self.program = program
        self.ref_trace = ref_trace
        self.test_trace = test_trace
        super().__init__(f"{divergence.describe()}\n\nRepro (torch script):\n{render(program, device)}")

    def to_dict(self) -> dict:
        """JSON-able account for reports: the divergence, the program, both traces and, if any,
        the values before the divergence that the error-aware judgement accepted."""
        account = {
            "divergence": self.divergence.to_dict(),
            "description": self.divergence.describe(),
            "program": self.program.to_dict(),
            "ref_trace": self.ref_trace.to_dict(),
            "test_trace": self.test_trace.to_dict(),
            "repro": render(self.program, self.device),
        }
        if self.accepted:
            account["error_aware_accepted"] = [acceptance.to_dict() for acceptance in self.accepted]
        return account


def default_reference(device: str) -> Backend:
    """Torch on ``device`` when torch can use it, else on cpu (the pinned reference is the CPU
    wheel; traces do not record devices, so a cpu reference checks a cuda backend)."""
    ref = reference_backend("cpu")
    if device != "cpu" and ref.module.cuda.is_available():
        ref = reference_backend(device)
    return ref


def reruns(program: Program, reference: Backend) -> dict[str, Callable[[], Trace]]:
    """The reruns of ``program`` on the reference that the error-aware judgement of low-precision
    values compares with (``oracle.tolerance``), by what they vary; each runs only when called."""
    return {
        FLOAT64: lambda: run(program, reference, float64=True),
        NUDGED: lambda: run(program, reference, nudge=True),
    }


class AcceptanceLog:
    """The values the error-aware judgement accepted while the log was open: how many, and the
    first ``keep`` of them as JSON-able examples (the numbers and the program's repro script),
    so that a long run keeps its record small."""

    def __init__(self, keep: int = 3) -> None:
        self.keep = keep
        self.count = 0
        self.examples: list[dict] = []

    def add(self, accepted: list[Acceptance], program: Program, device: str) -> None:
        self.count += len(accepted)
        room = self.keep - len(self.examples)
        if room > 0:
            repro = render(program, device)
            self.examples += [{**acceptance.to_dict(), "repro": repro} for acceptance in accepted[:room]]


_open_logs: list[AcceptanceLog] = []


@contextmanager
def recording_acceptances(keep: int = 3) -> Iterator[AcceptanceLog]:
    """An ``AcceptanceLog`` of every value the error-aware judgement accepts in ``check`` while
    the block runs (logs may nest: each open one records)."""
    log = AcceptanceLog(keep)
    _open_logs.append(log)
    try:
        yield log
    finally:
        _open_logs.remove(log)


def check(program: Program, backend: Backend, reference: Backend | None = None) -> None:
    """Raise ``DivergenceError`` if ``backend`` and the reference (default: ``default_reference``)
    disagree on ``program``; count the program for the report either way. Only where a
    low-precision value fails the fixed tolerance is the program rerun on the reference, in float64
    and on nudged inputs, for the error-aware judgement (``oracle.tolerance``); the values it
    accepts go to the open ``recording_acceptances`` logs, diverging program or not."""
    reference = reference or default_reference(backend.device)
    ref_trace = run(program, reference)
    test_trace = run(program, backend)
    count_program()
    accepted: list[Acceptance] = []
    divergence = compare(ref_trace, test_trace, reruns(program, reference), accepted)
    if accepted:
        for log in _open_logs:
            log.add(accepted, program, backend.device)
    if divergence is not None:
        raise DivergenceError(divergence, program, ref_trace, test_trace, backend.device, accepted)
