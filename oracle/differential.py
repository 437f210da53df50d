"""The differential check: run a program on the reference and on a backend, and fail with every
divergence of the program, classified, the first highlighted with a runnable torch repro.

What each program showed goes to every open ``recording()`` log (the pytest plugin opens one
around each test, for results.json and the report): its outcome (passed, failed, unsupported),
its divergences by class, the names the backend lacks, and the values accepted only by the
error-aware judgement (``oracle.compare.Acceptance``), which are never passed silently. A log
opened with a corpus (``pytest --record-corpus``) also hands it each program compared, with the
log's rule and the reference that ran it (``oracle.corpus.CorpusRecorder``). A log opened with
its rule's coverage targets (``oracle.coverage.Targets``) collects the items each program
exercised, measured on the program and what the reference run's calls received."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from oracle.backends import Backend, InProcess, reference_supports
from oracle.compare import FLOAT64, NUDGED, Acceptance, Divergence, divergences
from oracle.coverage import Targets
from oracle.program import Program
from oracle.reference import accepts_other_version, reference
from oracle.render import render
from oracle.results import UNSUPPORTED
from oracle.stats import count_program
from oracle.trace import Trace


class DivergenceError(AssertionError):
    """A backend behaved differently from the reference on a program: every divergence of the
    program (``divergences``), the first that fails it highlighted (``divergence``)."""

    def __init__(
        self,
        divergences: list[Divergence],
        program: Program,
        ref_trace: Trace,
        test_trace: Trace,
        device: str = "cpu",
        accepted: list[Acceptance] | None = None,
    ) -> None:
        self.divergences = divergences
        self.divergence = next(d for d in divergences if d.kind != "unsupported" and d.follows is None)
        self.device = device
        self.accepted = accepted or []  # values the error-aware judgement accepted in the program
        self.program = program
        self.ref_trace = ref_trace
        self.test_trace = test_trace
        self.also: list[DivergenceError] = []  # other failing programs of the test (triage)
        super().__init__(f"{self._text()}\n\nRepro (torch script):\n{render(program, device)}")

    def _text(self) -> str:
        others = [d for d in self.divergences if d is not self.divergence]
        if not others:
            return self.divergence.describe()
        lines = [f"  - step {d.step}, {d.kind}{_after(d)}: {d.reason}" for d in others[:MAX_LISTED]]
        if len(others) > MAX_LISTED:
            lines.append(f"  ... and {len(others) - MAX_LISTED} more")
        head = f"{self.divergence.describe()}\n\n{len(others)} more divergence(s) in this program:"
        return "\n".join([head, *lines])

    def classes(self) -> dict[str, int]:
        """How many divergences of each class the program has."""
        return dict(Counter(d.kind for d in self.divergences))

    def to_dict(self) -> dict:
        """JSON-able account for reports: the highlighted divergence, all of them with their
        classes, the program, both traces and, if any, the values the error-aware judgement
        accepted (and, in triage, the test's other failing programs)."""
        account = {
            "divergence": self.divergence.to_dict(),
            "description": self.divergence.describe(),
            "divergences": [_summary(d) for d in self.divergences],
            "classes": self.classes(),
            "program": self.program.to_dict(),
            "ref_trace": self.ref_trace.to_dict(),
            "test_trace": self.test_trace.to_dict(),
            "repro": render(self.program, self.device),
        }
        if self.accepted:
            account["error_aware_accepted"] = [acceptance.to_dict() for acceptance in self.accepted]
        if self.also:
            account["other_programs"] = [
                {
                    "description": other.divergence.describe(),
                    "divergences": [_summary(d) for d in other.divergences],
                    "classes": other.classes(),
                    "repro": render(other.program, other.device),
                }
                for other in self.also
            ]
        return account


MAX_LISTED = 20  # divergences listed in a failure's message after the highlighted one


def _after(divergence: Divergence) -> str:
    follows = divergence.follows
    return "" if follows is None else f" (after step {follows}, which the backend could not run)"


def _summary(divergence: Divergence) -> dict:
    """A divergence without its events (they are in the traces): where, what class, why."""
    found = {"index": divergence.index, "step": divergence.step, "kind": divergence.kind,
             "reason": divergence.reason}
    if divergence.lacks:
        found["lacks"] = divergence.lacks
    if divergence.follows is not None:
        found["follows"] = divergence.follows
    return found


def default_reference(device: str) -> InProcess:
    """Torch on ``device`` when torch can use it, else on cpu (the pinned reference is the CPU
    wheel; traces do not record devices, so a cpu reference checks a backend on any device)."""
    return reference(device if reference_supports(device) else "cpu")


def reruns(program: Program, reference: Backend) -> dict[str, Callable[[], Trace]]:
    """The reruns of ``program`` on the reference that the error-aware judgement of low-precision
    values compares with (``oracle.tolerance``), by what they vary; each runs only when called."""
    return {
        FLOAT64: lambda: reference.trace(program, float64=True),
        NUDGED: lambda: reference.trace(program, nudge=True),
    }


# -- version-only differences -----------------------------------------------------------------
# A run may accept another torch than the pin as its reference (``--reference-version``: a GPU
# machine's CUDA torch is what it is). impl follows the pinned torch, and CI shows it agrees with
# it on cpu; the other release may word a message or a warning differently. Such a difference is
# not the device's: the same program shows it between the backend on cpu and that torch on cpu.
# So, where a backend on another device than cpu diverges in these classes, the program is rerun
# on cpu on both sides, and a divergence found there too, identical (class, step, both events),
# is set aside as version-only (``Divergence.version``), counted apart and not failing the
# program. A divergence only the device shows, or one of another class, still counts; in a run at
# the pinned version nothing is set aside (a divergence on cpu too is then the backend's own).
VERSION_CLASSES = frozenset({"message", "warning"})


def version_only(
    program: Program, backend: Backend, reference: Backend, found: list[Divergence]
) -> list[Divergence]:
    """The divergences of ``found`` (``program`` on ``backend`` against ``reference``) that are
    differences of torch versions, by the rule above; empty outside a run that accepted another
    reference version, on cpu, or for a backend that cannot be moved to cpu."""
    candidates = [d for d in found if d.kind in VERSION_CLASSES and d.follows is None]
    if not candidates or backend.device == "cpu" or not accepts_other_version():
        return []
    try:
        cpu_backend, cpu_reference = backend.on("cpu"), reference.on("cpu")
    except NotImplementedError:
        return []
    finish = cpu_backend.start(program)
    on_cpu = divergences(cpu_reference.trace(program), finish())
    return [d for d in candidates if any(_same(d, other) for other in on_cpu)]


def _same(a: Divergence, b: Divergence) -> bool:
    return (a.kind, a.step, a.ref_event, a.test_event) == (b.kind, b.step, b.ref_event, b.test_event)


@dataclass(frozen=True)
class Policy:
    """How a test treats its failing programs: the divergence classes not counted (``ignore``);
    and, in triage, failing programs collected instead of raised at once (``collect``, the test
    stops after that many) and a time budget in seconds (``budget``) after which it checks no
    more programs. ``collect`` 0: the first failing program raises (hypothesis then shrinks it)."""

    ignore: frozenset[str] = frozenset()
    collect: int = 0
    budget: float | None = None


class Corpus(Protocol):
    """Where a log hands the programs it sees (``oracle.corpus.CorpusRecorder``)."""

    def add(self, program: Program, rule: str | None, ref_trace: Trace, reference: Backend) -> None: ...


class TestLog:
    """What the programs a test checked showed, while the test runs (the pytest plugin opens one
    per test with ``recording``): outcomes per program (passed, failed, unsupported), divergences
    per class, the names the backend lacks with how many programs needed each, the values the
    error-aware judgement accepted (how many, the first ``keep`` with their numbers and repro),
    the failing programs collected in triage, and why the test stopped early, if it did. The
    test's ``rule``, a ``corpus`` to hand its programs to and the coverage ``targets`` whose
    exercised items it collects (``covered``) are optional."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(
        self, policy: Policy = Policy(), keep: int = 3, rule: str | None = None, corpus: Corpus | None = None,
        targets: Targets | None = None,
    ) -> None:
        self.policy = policy
        self.keep = keep
        self.rule = rule
        self.corpus = corpus
        self.targets = targets
        self.covered: set[str] = set()
        self.outcomes: Counter[str] = Counter()
        self.classes: Counter[str] = Counter()
        self.ignored: Counter[str] = Counter()
        self.version_only: Counter[str] = Counter()  # divergences set aside by ``version_only``
        self.lacks: Counter[str] = Counter()
        self.accepted = 0
        self.accepted_examples: list[dict] = []
        self.failures: list[DivergenceError] = []
        self.cut_short: str | None = None
        self.started = time.monotonic()

    def add(
        self, program: Program, device: str, accepted: list[Acceptance], found: list[Divergence],
        kept: list[Divergence],
    ) -> None:
        """Record one program's comparison: ``found`` its divergences, ``kept`` those counted (the
        others were ignored, or set aside as version-only: ``Divergence.version``)."""
        self.accepted += len(accepted)
        room = self.keep - len(self.accepted_examples)
        if room > 0 and accepted:
            repro = render(program, device)
            self.accepted_examples += [{**a.to_dict(), "repro": repro} for a in accepted[:room]]
        self.ignored.update(d.kind for d in found if d not in kept and not d.version)
        self.version_only.update(d.kind for d in found if d.version)
        self.classes.update(d.kind for d in kept if d.follows is None)
        self.lacks.update({d.lacks for d in kept if d.lacks})
        self.outcomes[outcome(kept)] += 1

    def note(self, result: str, lacks: str | None = None) -> None:
        """Record a program checked without traces (``oracle.numeric``): its outcome and, for an
        unsupported one, the name the backend lacks."""
        self.outcomes[result] += 1
        if lacks is not None:
            self.classes["unsupported"] += 1
            self.lacks[lacks] += 1

    def stopped(self) -> bool:
        """In triage: whether the test has collected its failures or spent its budget."""
        if self.cut_short is None and self.policy.budget is not None:
            spent = time.monotonic() - self.started
            if spent > self.policy.budget:
                budget = self.policy.budget
                self.cut_short = f"time budget of {budget:g} s spent after {self.checked} programs"
        return self.cut_short is not None

    @property
    def checked(self) -> int:
        return sum(self.outcomes.values())

    def collect(self, error: DivergenceError) -> None:
        """Keep a failing program (triage); stop once ``policy.collect`` are kept."""
        self.failures.append(error)
        if len(self.failures) >= self.policy.collect:
            collected = len(self.failures)
            self.cut_short = f"{collected} failing programs collected (the cap) after {self.checked} programs"

    def failure(self) -> DivergenceError | None:
        """The collected failing programs as one error (the first, with the others attached)."""
        if not self.failures:
            return None
        first = self.failures[0]
        first.also = self.failures[1:]
        return first

    def unsupported(self) -> str | None:
        """Why the test is unsupported when some of its programs were (``oracle.results``'s
        reason: "unsupported: N of M programs need NAME (n), ..."), else None."""
        if not self.outcomes["unsupported"]:
            return None
        lacks = ", ".join(f"{name} ({n})" for name, n in self.lacks.most_common())
        return f"{UNSUPPORTED}{self.outcomes['unsupported']} of {self.checked} programs need {lacks}"

    def record(self) -> dict:
        """What the log saw, as ``oracle.results.ConformanceResult.merge`` reads it."""
        record: dict = {
            "program_outcomes": dict(self.outcomes),
            "classes": dict(self.classes),
            "ignored": dict(self.ignored),
            "lacks": dict(self.lacks),
            "cut_short": self.cut_short,
        }
        if self.version_only:
            record["version_only"] = dict(self.version_only)
        if self.accepted:
            record["error_aware"] = {"accepted": self.accepted, "examples": self.accepted_examples}
        if self.targets is not None:
            record["covered"] = sorted(self.covered)
        return record


def outcome(kept: list[Divergence]) -> str:
    """A program's outcome from its counted divergences: "passed" without any; "unsupported" when
    each is a name the backend lacks or follows a step that lacked one (the program could not run
    as written); else "failed"."""
    if not kept:
        return "passed"
    return "unsupported" if all(d.kind == "unsupported" or d.follows is not None for d in kept) else "failed"


_open_logs: list[TestLog] = []


@contextmanager
def recording(
    policy: Policy = Policy(), keep: int = 3, rule: str | None = None, corpus: Corpus | None = None,
    targets: Targets | None = None,
) -> Iterator[TestLog]:
    """A ``TestLog`` of every program ``check`` compares while the block runs, under ``policy``
    (logs may nest: each open one records; the innermost one's policy, rule and corpus apply;
    each one's coverage ``targets``)."""
    log = TestLog(policy, keep, rule, corpus, targets)
    _open_logs.append(log)
    try:
        yield log
    finally:
        _open_logs.remove(log)


def note(result: str, lacks: str | None = None) -> None:
    """Count a program a test checked without traces (``oracle.numeric``'s gradient checks), and
    record its outcome in the open logs (see ``TestLog.note``)."""
    count_program()
    for log in _open_logs:
        log.note(result, lacks)


def check(program: Program, backend: Backend, reference: Backend | None = None) -> None:
    """Compare ``program`` on ``backend`` with the reference (default: ``default_reference``);
    count it for the report and record it in the open ``recording`` logs. A program with a
    divergence that is neither ignored nor unsupported raises ``DivergenceError`` (in triage it
    is collected instead, see ``Policy``); a program whose only divergences are names the backend
    lacks is "unsupported" and does not raise. Only where a low-precision value fails the fixed
    tolerance is the program rerun on the reference, in float64 and on nudged inputs, for the
    error-aware judgement (``oracle.tolerance``)."""
    innermost = _open_logs[-1] if _open_logs else TestLog()
    policy = innermost.policy
    if innermost.stopped():
        return
    reference = reference or default_reference(backend.device)
    finish = backend.start(program)  # an isolated backend runs it while the reference does
    measured = [log for log in _open_logs if log.targets is not None]
    if measured and isinstance(reference, InProcess):
        seen: dict = {}  # what the reference's calls received: the argument coverage's values
        ref_trace = reference.trace(program, seen=seen)
        refused = {event["step"] for event in ref_trace.events if event["kind"] == "error"}
        for log in measured:
            log.covered |= log.targets.exercised(program, seen, refused)
    else:
        ref_trace = reference.trace(program)
    test_trace = finish()
    count_program()
    if innermost.corpus is not None:
        innermost.corpus.add(program, innermost.rule, ref_trace, reference)
    accepted: list[Acceptance] = []
    found = divergences(ref_trace, test_trace, reruns(program, reference), accepted)
    kept = [d for d in found if d.kind not in policy.ignore]
    if outcome(kept) == "failed":
        for divergence in version_only(program, backend, reference, kept):
            divergence.version = True
        kept = [d for d in kept if not d.version]
    for log in _open_logs:
        log.add(program, backend.device, accepted, found, kept)
    if outcome(kept) == "failed":
        error = DivergenceError(kept, program, ref_trace, test_trace, backend.device, accepted)
        if policy.collect and _open_logs:
            _open_logs[-1].collect(error)
            return
        raise error
