"""Program corpora: reference traces recorded once on torch, replayed later on any backend.

``record_corpus`` draws programs deterministically from ``oracle.strategies.programs()`` and
stores each with its torch trace; ``replay_corpus`` checks a backend against those traces without
importing torch, so an engine can be tested on a machine where torch is not installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CORPUS_FORMAT = 1


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


def record_corpus(count: int, seed: int, device: str = "cpu") -> dict:
    """Generate ``count`` programs (deterministically from ``seed``), run them on torch, and
    return the corpus: the programs with their reference traces and the versions that made them."""
    import hypothesis

    from oracle.interpreter import run
    from oracle.reference import reference

    ref = reference(device)
    programs = generate_programs(count, seed)
    # a corpus must not depend on the recording process: once-per-process warnings are left out
    entries = []
    for program in programs:
        trace = run(program, ref)
        trace.events = trace.reproducible_events()
        entries.append({"program": program.to_dict(), "trace": trace.to_dict()})
    return {
        "format": CORPUS_FORMAT,
        "torch_version": ref.version,
        "hypothesis_version": hypothesis.__version__,
        "seed": seed,
        "count": count,
        "device": device,
        "programs": entries,
    }


@dataclass
class ReplayResult:
    """A backend checked against a recorded corpus: counts and the failures' first divergences."""

    backend: str
    torch_version: str
    passed: int = 0
    failures: list[dict] = field(default_factory=list)  # {"index", "divergence": describe()}

    @property
    def failed(self) -> int:
        return len(self.failures)

    def describe(self) -> str:
        head = (
            f"replay on {self.backend} against torch {self.torch_version}: "
            f"{self.passed} passed, {self.failed} failed"
        )
        return "\n".join([head, *(f"program {f['index']}: {f['divergence']}" for f in self.failures)])


def replay_corpus(corpus: dict, backend_spec: str, device: str = "cpu") -> ReplayResult:
    """Run every program of a corpus on a backend and compare with the stored torch traces.
    Imports nothing of torch (unless the backend is torch)."""
    from oracle.backends import load_backend
    from oracle.compare import compare
    from oracle.interpreter import run
    from oracle.program import Program
    from oracle.trace import Trace

    if corpus.get("format") != CORPUS_FORMAT:
        raise CorpusError(f"not a corpus of format {CORPUS_FORMAT} (made by python -m oracle record)")
    backend = load_backend(backend_spec, device)
    result = ReplayResult(backend_spec, corpus["torch_version"])
    for index, entry in enumerate(corpus["programs"]):
        trace = run(Program.from_dict(entry["program"]), backend)
        divergence = compare(Trace.from_dict(entry["trace"]), trace)
        if divergence is None:
            result.passed += 1
        else:
            result.failures.append({"index": index, "divergence": divergence.describe()})
    return result
