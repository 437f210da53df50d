"""Program corpora: reference traces recorded once on torch, replayed later on any backend.

A corpus holds programs, each with the reference's trace and its reruns in float64 and on nudged
inputs (what the error-aware judgement of low-precision values compares with, see
``oracle.tolerance``), the account of the verified reference that ran them (``oracle.reference``)
and, for a program a conformance test drew, the test's catalogue ``rule``. ``CorpusRecorder``
collects them: ``record_corpus`` (``python -m oracle record``) from programs drawn
deterministically from ``oracle.strategies.programs()`` (no rule), the pytest plugin's
``--record-corpus`` from every program the suite's tests compare. ``replay_corpus`` checks a
backend against a corpus without importing torch (``oracle.differential.check`` against the
recorded reference), one ``oracle.results.ConformanceResult`` per rule, so that an engine can be
tested, with the suite's results.json and report, on a machine where torch is not installed.

A corpus is a JSON file, gzip-compressed when its name ends in ``.gz`` (its traces shrink some
thirty times: the ci suite's corpus is 131 MB of JSON, 3.8 MB compressed). Format 2
(``CORPUS_FORMAT``); a format-1 corpus (no rules, reruns or reference account, only
``torch_version``) still replays: its low-precision values are judged by the fixed tolerance.
"""

from __future__ import annotations

import gzip
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from oracle.backends import REFERENCE, Backend
from oracle.differential import DivergenceError, Policy, check, recording
from oracle.program import Program
from oracle.results import ERROR_AWARE_EXAMPLES, ConformanceResult, cut
from oracle.trace import Trace

CORPUS_FORMAT = 2
READABLE_FORMATS = (1, CORPUS_FORMAT)
RERUNS = {"float64": {"float64": True}, "nudged": {"nudge": True}}  # stored rerun -> trace() options
NO_RULE = "(no rule)"  # the nodeid part of a replay's result for the programs without a rule


class CorpusError(ValueError):
    """A file that is not a corpus this version can replay."""


def generate_programs(count: int, seed: int) -> list:
    """``count`` distinct programs drawn from ``oracle.strategies.programs()``, the same ones for
    the same seed (and the same hypothesis and strategy code): hypothesis runs derandomized, its
    random stream keyed by the seed, without its example database."""
    from hypothesis import HealthCheck, Phase, given, settings

    from oracle.strategies import programs

    found: dict[str, object] = {}
    for attempt in range(100):

        def collect(program) -> None:
            if len(found) < count:
                found.setdefault(program.to_json(), program)

        # hypothesis derives a derandomized run's random stream from the test's digest, to which
        # this attribute is added (it is how hypothesis tells parametrized cases apart).
        collect._hypothesis_internal_add_digest = f"oracle record {seed} {attempt}".encode()
        run_settings = settings(
            max_examples=count,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        run_settings(given(programs())(collect))()
        if len(found) == count:
            return list(found.values())
    raise RuntimeError(f"the strategy yielded only {len(found)} distinct programs")


# --------------------------------------------------------------------------- recording


class CorpusRecorder:
    """Programs with their rule and the reference's traces, each (rule, program) once."""

    def __init__(self) -> None:
        self.reference: dict = {}  # what verify found of the reference that ran the programs
        self.device: str | None = None  # the device the reference ran them on
        self._entries: dict[tuple[str, str], dict] = {}

    def add(self, program: Program, rule: str | None, ref_trace: Trace, reference: Backend) -> None:
        """Store ``program`` (drawn for ``rule``) with ``ref_trace``, the trace ``reference`` gave,
        and its reruns there; the reference's account comes from the first program."""
        from oracle.reference import reference_info

        key = _key(rule, program.to_dict())
        if key in self._entries:
            return
        entry = {"rule": rule} if rule is not None else {}
        entry |= {"program": program.to_dict(), "trace": _reproducible(ref_trace), "reruns": {}}
        for name, options in RERUNS.items():
            try:
                entry["reruns"][name] = _reproducible(reference.trace(program, **options))
            except Exception:  # noqa: BLE001 - a replay then says this rerun is missing
                continue
        self._entries[key] = entry
        if not self.reference:
            self.reference, self.device = reference_info() or reference.info(), reference.device

    def part(self) -> dict:
        """What was recorded here, for ``merge`` elsewhere (an xdist worker's part)."""
        return {"reference": self.reference, "device": self.device, "programs": list(self._entries.values())}

    def merge(self, part: dict) -> None:
        """Add the programs of another recorder's ``part``."""
        self.reference = self.reference or part["reference"]
        self.device = self.device or part["device"]
        for entry in part["programs"]:
            self._entries.setdefault(_key(entry.get("rule"), entry["program"]), entry)

    def document(self, **about: object) -> dict:
        """The corpus: format, reference, device, ``about`` (how the programs were drawn) and the
        programs, ordered by rule and program (the same programs give the same document)."""
        entries = [self._entries[key] for key in sorted(self._entries)]
        return {"format": CORPUS_FORMAT, "reference": self.reference, "device": self.device or "cpu",
                **about, "count": len(entries), "programs": entries}

    def write(self, path: Path, **about: object) -> dict:
        """Write ``document(**about)`` to ``path`` (``write_corpus``); returns it."""
        corpus = self.document(**about)
        write_corpus(corpus, path)
        return corpus


def write_corpus(corpus: dict, path: Path) -> None:
    """Write a corpus as JSON, gzip-compressed (reproducibly: no time stamp) if ``path`` ends in .gz."""
    data = json.dumps(corpus, allow_nan=False).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def read_corpus(path: Path) -> dict:
    """The JSON document of a corpus file (gzip-compressed if its name ends in .gz)."""
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data)


def _key(rule: str | None, program: dict) -> tuple[str, str]:
    return rule or "", json.dumps(program, sort_keys=True, allow_nan=False)


def _reproducible(trace: Trace) -> dict:
    """A trace without the warnings torch emits once per process: a corpus must not depend on
    what ran before in the recording process."""
    return {"backend": trace.backend, "events": trace.reproducible_events()}


def record_corpus(count: int, seed: int, device: str = "cpu") -> dict:
    """Generate ``count`` programs (deterministically from ``seed``), run them on the verified
    reference, and return the corpus (programs without a rule)."""
    import hypothesis

    from oracle.reference import reference

    ref = reference(device)
    recorder = CorpusRecorder()
    for program in generate_programs(count, seed):
        recorder.add(program, None, ref.trace(program), ref)
    return recorder.document(hypothesis_version=hypothesis.__version__, seed=seed)


# --------------------------------------------------------------------------- replaying


class Recorded(Backend):
    """The reference as a corpus recorded it for one program: its trace, and its reruns for the
    error-aware judgement (``trace(program, float64=True)`` / ``nudge=True``)."""

    def __init__(self, entry: dict, device: str, info: dict) -> None:
        self.name, self.device = REFERENCE, device
        self._entry, self._info = entry, info

    def trace(self, program: Program, float64: bool = False, nudge: bool = False) -> Trace:
        if not (float64 or nudge):
            return Trace.from_dict(self._entry["trace"])
        name = "float64" if float64 else "nudged"
        stored = self._entry.get("reruns", {}).get(name)
        if stored is None:
            raise CorpusError(f"the corpus holds no rerun of this program ({name})")
        return Trace.from_dict(stored)

    def info(self) -> dict:
        return self._info


def reference_of(corpus: dict) -> dict:
    """The account of the reference that recorded ``corpus``; ``CorpusError`` if it is not a
    corpus of a format this version replays."""
    if not isinstance(corpus, dict) or corpus.get("format") not in READABLE_FORMATS:
        found = corpus.get("format") if isinstance(corpus, dict) else None
        raise CorpusError(
            f"not a corpus of format {' or '.join(map(str, READABLE_FORMATS))} (format {found!r}); "
            "corpora are made by python -m oracle record or pytest --record-corpus"
        )
    if corpus["format"] == 1:
        return {"name": REFERENCE, "version": corpus["torch_version"]}
    return corpus["reference"]


def replay_corpus(
    corpus: dict, backend: Backend, name: str = "corpus", ignore: frozenset[str] = frozenset(),
    progress: Callable[[int, int, ConformanceResult], None] | None = None,
) -> list[ConformanceResult]:
    """Check ``backend`` against every program of ``corpus`` with ``oracle.differential.check``,
    the classes in ``ignore`` not counted: one result per rule (nodeid ``NAME::RULE``), the
    programs without a rule as one result without a rule (``NAME::(no rule)``); ``progress`` is
    called after each rule with (rules done, rules in all, its result). Imports nothing of torch
    (unless the backend does)."""
    info = reference_of(corpus)
    by_rule: dict[str | None, list[dict]] = {}
    for entry in corpus["programs"]:
        by_rule.setdefault(entry.get("rule"), []).append(entry)
    device = corpus.get("device", "cpu")
    results = []
    for rule in sorted(by_rule, key=lambda rule: (rule is None, rule or "")):
        nodeid = f"{name}::{rule or NO_RULE}"
        results.append(_replay_rule(nodeid, rule, by_rule[rule], backend, Policy(ignore), device, info))
        if progress is not None:
            progress(len(results), len(by_rule), results[-1])
    return results


def _replay_rule(
    nodeid: str, rule: str | None, entries: list[dict], backend: Backend, policy: Policy, device: str,
    info: dict,
) -> ConformanceResult:
    """The result of one rule's programs, as the plugin records a test: program outcomes, classes,
    lacked names, the first failing program's divergence account."""
    started = time.monotonic()
    first: DivergenceError | None = None
    with recording(policy, ERROR_AWARE_EXAMPLES, rule) as log:
        for entry in entries:
            try:
                check(Program.from_dict(entry["program"]), backend, Recorded(entry, device, info))
            except DivergenceError as error:
                first = first or error
    call = _Call(time.monotonic() - started)
    record = {"rule": rule, "programs": log.checked, **log.record()}
    if first is not None:
        call.outcome = "failed"
        record["message"] = cut("".join(traceback.format_exception_only(first)).strip())
        record["divergence"] = first.to_dict()
    elif log.unsupported():
        call.outcome, call.longrepr, record["unsupported"] = "skipped", log.unsupported(), True
    result = ConformanceResult(nodeid)
    result.merge(call, record)
    return result


@dataclass
class _Call:
    """A replayed rule, as ``ConformanceResult.merge`` reads a test's call report."""

    duration: float
    outcome: str = "passed"  # or failed, skipped
    longrepr: str = ""
    when: str = "call"

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"

    @property
    def skipped(self) -> bool:
        return self.outcome == "skipped"

    @property
    def longreprtext(self) -> str:
        return self.longrepr
