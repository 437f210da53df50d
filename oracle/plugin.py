"""The pytest plugin of the conformance suite: backend options, fixtures, results.json, summary.

Loaded by the repository's root ``conftest.py`` (``pytest_plugins = ("oracle.plugin",)``) or with
``-p oracle.plugin`` from elsewhere.

Options:
  ``--backend SPEC``  the backend under test, any spec ``oracle.backends.load_backend`` takes
                      (default ``impl``)
  ``--device D``      ``cpu`` (default) or ``cuda``; without cupy and a CUDA device, conformance
                      tests are skipped with the reason (and ``@pytest.mark.gpu`` tests always are)
  ``--results PATH``  where results.json goes (default ``reports/results.json`` under the rootdir);
                      written only when conformance tests ran
  ``--report``        also render the HTML report next to results.json (``oracle.report``)

A *conformance test* is one marked ``@pytest.mark.rule("ID")`` or living in a ``conformance``
directory. For each, the plugin records its outcome, rule, duration, the number of programs it
checked (``oracle.stats``), how many values the error-aware judgement accepted that the fixed
tolerance rejected (``oracle.differential.recording_acceptances``: counted per test, rule and in
total, the first ``ERROR_AWARE_EXAMPLES`` of each rule kept with their numbers and repro) and,
when it failed, the structured divergence (any exception with a ``to_dict()``, normally
``oracle.differential.DivergenceError``). The record travels inside the
test report's ``user_properties``, so it is built where the test runs (an xdist worker) and merged
where results are written (the controller).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import platform
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from oracle import rules as rule_catalogue
from oracle import stats
from oracle.backends import DEFAULT_BACKEND, REFERENCE, Backend, BackendError, load_backend
from oracle.differential import AcceptanceLog, default_reference, recording_acceptances

SCHEMA_VERSION = 1
DEFAULT_RESULTS = Path("reports") / "results.json"
PROPERTY = "oracle"  # the user_properties key carrying a test's oracle record
MAX_TEXT = 20_000  # failure texts are cut to this many characters in results.json
ERROR_AWARE_EXAMPLES = 3  # values accepted by the error-aware judgement kept per test and per rule

# Test outcomes; for a rule, the first of these among its tests is its status ("worst first").
# A skipped test only decides a rule's status when all its tests were skipped.
STATUS_ORDER = ("failed", "xpassed", "xfailed", "passed", "skipped")
UNCHECKED = "unchecked"
UNCATALOGUED = "uncatalogued"

_programs_run = pytest.StashKey[int]()
_accepted = pytest.StashKey[AcceptanceLog]()


# --------------------------------------------------------------------------- options & fixtures


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("oracle", "PyTorch conformance oracle")
    group.addoption(
        "--backend",
        default=DEFAULT_BACKEND,
        metavar="SPEC",
        help="backend under test: torch, impl, fault:NAME or an importable torch-like module "
        f"(default {DEFAULT_BACKEND})",
    )
    group.addoption(
        "--device", default="cpu", choices=("cpu", "cuda"), help="device programs run on (default cpu)"
    )
    group.addoption(
        "--results",
        default=None,
        metavar="PATH",
        help=f"where to write results.json (default {DEFAULT_RESULTS} under the rootdir)",
    )
    group.addoption(
        "--report", action="store_true", default=False, help="also render index.html next to results.json"
    )
    group.addoption(
        "--rule",
        action="append",
        default=[],
        metavar="ID",
        help="run only the conformance tests of these catalogue rules (repeat the option, or give "
        "IDs separated by commas); other tests are deselected",
    )
    group.addoption(
        "--until-caught",
        action="store_true",
        default=False,
        help="skip the remaining tests of a rule once one of them failed (a planted-fault run: "
        "the first failure of each rule is its evidence)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(rule_id): the catalogue rule a conformance test checks")
    config.addinivalue_line("markers", "gpu: needs cupy and a CUDA device (skipped cleanly without one)")
    _ensure_hypothesis_profile(config)
    if not hasattr(config, "workerinput"):  # the xdist controller, or a run without xdist
        config.pluginmanager.register(ResultsCollector(config), "oracle-results")


@pytest.fixture(scope="session")
def backend(pytestconfig: pytest.Config) -> Backend:
    """The backend under test (``--backend``, ``--device``)."""
    try:
        return load_backend(pytestconfig.getoption("backend"), pytestconfig.getoption("device"))
    except BackendError as exc:
        pytest.fail(f"--backend: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def reference(pytestconfig: pytest.Config) -> Backend:
    """The reference backend (real PyTorch) on ``--device`` when torch can use it, else on cpu.

    The reference wheel pinned by this project is the CPU build, so with ``--device cuda`` the
    reference normally runs on cpu while the backend under test runs on the GPU.
    """
    return default_reference(pytestconfig.getoption("device"))


def pytest_report_header(config: pytest.Config) -> str:
    return f"oracle: backend {config.getoption('backend')} on {config.getoption('device')}"


def gpu_unavailable_reason() -> str | None:
    """None when cupy can use a CUDA device, else why not (shown as the skip reason)."""
    try:
        import cupy
    except ImportError as exc:
        return f"cupy is not installed ({exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy raises its own CUDARuntimeError types without a driver
        return f"cupy cannot reach a CUDA device ({type(exc).__name__}: {exc})"
    return None if count > 0 else "cupy sees no CUDA device"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep only the tests of the ``--rule`` rules when given, mark impl's known divergences, then
    skip GPU tests without a GPU (and conformance tests when ``--device cuda`` cannot be
    honoured)."""
    select_rules(config, items)
    mark_known_divergences(config.getoption("backend"), items)
    wants_cuda = config.getoption("device") == "cuda"
    if not wants_cuda and not any(item.get_closest_marker("gpu") for item in items):
        return
    reason = gpu_unavailable_reason()
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(pytest.mark.skip(reason=f"needs cupy and a CUDA device: {reason}"))
        elif wants_cuda and (is_conformance(item) or _uses_backend(item)):
            item.add_marker(pytest.mark.skip(reason=f"--device cuda asked but {reason}"))


def select_rules(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--rule ID``: deselect every test that does not check one of the given rules. An ID the
    catalogue does not have is a usage error (a typo would otherwise select nothing)."""
    wanted = {rule.strip() for option in config.getoption("rule") for rule in option.split(",")} - {""}
    if not wanted:
        return
    unknown = sorted(wanted - set(rule_catalogue.catalogue()))
    if unknown:
        raise pytest.UsageError(f"--rule: not in the catalogue (oracle/rules/): {', '.join(unknown)}")
    kept, dropped = [], []
    for item in items:
        marker = item.get_closest_marker("rule")
        (kept if marker is not None and marker.args[0] in wanted else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


KNOWN_DIVERGENCES_NAME = "KNOWN_IMPL_DIVERGENCES"
KNOWN_DIVERGENCES_BACKEND = "impl"


def mark_known_divergences(backend_name: str, items: list[pytest.Item]) -> None:
    """Known divergences of impl are strict xfails, on the impl backend only.

    A conformance module lists them as ``KNOWN_IMPL_DIVERGENCES = {"RULE-ID": "what impl does
    differently"}``; each test checking such a rule becomes a strict xfail whose reason names the
    rule, so it shows in the report and fails loudly (XPASS) once impl is fixed.
    """
    if backend_name != KNOWN_DIVERGENCES_BACKEND:
        return
    for item in items:
        known = getattr(getattr(item, "module", None), KNOWN_DIVERGENCES_NAME, {})
        marker = item.get_closest_marker("rule")
        if marker and marker.args[0] in known:
            rule = marker.args[0]
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"{rule}: impl {known[rule]}"))


def is_conformance(item: pytest.Item) -> bool:
    """A conformance test: it names a rule, or it lives in a ``conformance`` directory."""
    return item.get_closest_marker("rule") is not None or "conformance" in item.path.parent.parts


def _uses_backend(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    return "backend" in names or "reference" in names


def _ensure_hypothesis_profile(config: pytest.Config) -> None:
    """Make ``--hypothesis-profile ci|dev|thorough`` work even when conformance/ is not collected.

    The profiles are registered by ``conformance/conftest.py``; pytest loads it before hypothesis
    applies the option only when conformance/ is among the paths run. Otherwise import it here.
    """
    name = config.getoption("hypothesis_profile", default=None)
    if not name:
        return
    from hypothesis import settings
    from hypothesis.errors import InvalidArgument

    try:
        settings.get_profile(name)
    except InvalidArgument:
        try:
            importlib.import_module("conformance.conftest")
        except ImportError:
            pass  # hypothesis then reports the unknown profile itself


# --------------------------------------------------------------------------- per-test records


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Count the programs checked, and log the values the error-aware judgement accepted, while
    the test body runs (hypothesis runs all examples here)."""
    before = stats.programs_checked()
    try:
        with recording_acceptances(ERROR_AWARE_EXAMPLES) as log:
            item.stash[_accepted] = log
            return (yield)
    finally:
        item.stash[_programs_run] = stats.programs_checked() - before


_caught = pytest.StashKey[set]()  # --until-caught: the rules a test of which failed


def pytest_runtest_setup(item: pytest.Item) -> None:
    """With ``--until-caught``, a test of a rule that already failed is skipped."""
    if item.config.getoption("until_caught") and _rule_of(item) in item.config.stash.get(_caught, set()):
        pytest.skip("--until-caught: a test of this rule failed already")


def _rule_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("rule")
    return str(marker.args[0]) if marker and marker.args else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Attach the oracle record of a conformance test to each of its phase reports."""
    report = yield
    if not is_conformance(item):
        return report
    record: dict[str, Any] = {"rule": _rule_of(item)}
    if report.failed:
        item.config.stash.setdefault(_caught, set()).add(record["rule"])
    xfail = item.get_closest_marker("xfail")
    if xfail is not None:
        record["strict"] = bool(xfail.kwargs.get("strict", item.config.getini("xfail_strict")))
    if call.when == "call":
        record["programs"] = item.stash.get(_programs_run, 0)
        accepted = item.stash.get(_accepted, None)
        if accepted is not None and accepted.count:
            record["error_aware"] = {"accepted": accepted.count, "examples": accepted.examples}
        fixture = getattr(item, "funcargs", {}).get("backend")
        if isinstance(fixture, Backend):
            record["backend_version"] = fixture.version
    if call.excinfo is not None and report.failed:
        record["message"] = _cut(call.excinfo.exconly())
        divergence = _divergence_of(call.excinfo.value)
        if divergence is not None:
            record["divergence"] = divergence
    report.user_properties.append((PROPERTY, record))
    return report


def _divergence_of(exc: BaseException) -> dict | None:
    """The JSON-able ``to_dict()`` of the exception, or of the first one in a group that has it."""
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop(0)
        to_dict = getattr(current, "to_dict", None)
        if callable(to_dict):
            try:
                return json.loads(json.dumps(to_dict(), default=str))
            except Exception as err:  # a broken to_dict must not hide the test failure
                return {"error": f"to_dict() failed: {type(err).__name__}: {err}"}
        pending.extend(getattr(current, "exceptions", ()))
    return None


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n... ({len(text) - MAX_TEXT} more characters)"


@dataclass
class ConformanceResult:
    """What happened to one conformance test, merged from its setup/call/teardown reports."""

    nodeid: str
    rule: str | None = None
    outcome: str = "passed"
    reason: str = ""  # skip or xfail reason
    known_divergence: bool = False  # a strict xfail: a divergence the backend is known to have
    phase: str = ""  # the phase that failed
    duration: float = 0.0
    programs: int = 0
    message: str = ""  # failure text
    divergence: int | None = None  # index into the divergences list of results.json
    error_aware_accepted: int = 0  # values the fixed tolerance rejected and the error-aware one accepted
    _divergence: dict | None = field(default=None, repr=False)
    _error_aware_examples: list[dict] = field(default_factory=list, repr=False)

    def merge(self, report: pytest.TestReport, record: dict) -> None:
        self.rule = self.rule or record.get("rule")
        self.duration += report.duration
        self.programs += int(record.get("programs", 0))
        error_aware = record.get("error_aware", {})
        self.error_aware_accepted += int(error_aware.get("accepted", 0))
        self._error_aware_examples += error_aware.get("examples", [])
        if report.failed:
            if self.outcome != "failed":
                self.outcome, self.phase = "failed", report.when
                self.message = record.get("message") or _cut(report.longreprtext)
                self._divergence = record.get("divergence")
        elif report.skipped:
            if hasattr(report, "wasxfail"):
                self.outcome, self.reason = "xfailed", report.wasxfail
                self.known_divergence = bool(record.get("strict"))
            else:
                self.outcome, self.reason = "skipped", _skip_reason(report)
        elif report.when == "call" and hasattr(report, "wasxfail"):
            self.outcome, self.reason = "xpassed", report.wasxfail

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_")}


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


# --------------------------------------------------------------------------- collecting & writing


class ResultsCollector:
    """Merges the oracle records of the session (on the xdist controller) and writes results.json."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.tests: dict[str, ConformanceResult] = {}
        self.backend_version: str | None = None
        self.results: dict | None = None
        self.results_path: Path | None = None
        self.report_path: Path | None = None
        self.report_error: str | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = dict(report.user_properties).get(PROPERTY)
        if record is None:
            return
        self.backend_version = self.backend_version or record.get("backend_version")
        self.tests.setdefault(report.nodeid, ConformanceResult(report.nodeid)).merge(report, record)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.tests:
            return
        self.results = build_results(list(self.tests.values()), self._meta())
        self.results_path = self._results_path()
        self.results_path.parent.mkdir(parents=True, exist_ok=True)
        self.results_path.write_text(json.dumps(self.results, indent=1) + "\n", encoding="utf-8")
        if self.config.getoption("report"):
            try:
                from oracle.report import write_report
            except ImportError as exc:  # jinja2 is an optional dependency (the "report" extra)
                self.report_error = f"--report needs the report extra (pip install -e '.[report]'): {exc}"
            else:
                self.report_path = write_report(self.results_path, self.results_path.parent)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.results is not None:
            write_summary(terminalreporter, self.results, self.results_path, self.report_path)
        if self.report_error:
            terminalreporter.write_line(self.report_error, red=True)

    def _results_path(self) -> Path:
        given = self.config.getoption("results")
        if given is None:
            return self.config.rootpath / DEFAULT_RESULTS
        return self.config.invocation_params.dir / given

    def _meta(self) -> dict:
        spec = self.config.getoption("backend")
        version = self.backend_version
        if version is None:  # no test instantiated it; importing it is the only way to know
            try:
                version = load_backend(spec).version
            except BackendError:
                version = "unknown"
        return {
            "backend": {"name": spec, "version": version},
            "device": self.config.getoption("device"),
            "reference": {"name": REFERENCE, "version": _dist_version("torch")},
            "numpy": _dist_version("numpy"),
            "cupy": _cupy_version(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "hypothesis_profile": _hypothesis_profile(),
        }


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cupy_version() -> str | None:
    """The installed cupy's version (wheels are named cupy-cuda12x etc.), without importing it."""
    for dist in importlib.metadata.packages_distributions().get("cupy", []):
        version = _dist_version(dist)
        if version:
            return version
    return None


def _hypothesis_profile() -> str | None:
    try:
        from hypothesis import settings
    except ImportError:
        return None

    return settings.get_current_profile_name()


def build_results(tests: list[ConformanceResult], meta: dict) -> dict:
    """The results.json document: metadata, totals, per-family and per-rule aggregation, tests."""
    divergences = []
    for test in tests:
        if test.outcome == "failed":
            test.divergence = len(divergences)
            divergences.append(
                {"nodeid": test.nodeid, "rule": test.rule, "phase": test.phase,
                 "message": test.message, "details": test._divergence}
            )
    rules = _rules(tests)
    return {
        "schema": SCHEMA_VERSION,
        **meta,
        "totals": _totals(tests, rules),
        "families": _families(tests, rules),
        "rules": rules,
        "tests": [test.to_dict() for test in tests],
        "divergences": divergences,
    }


def _rules(tests: list[ConformanceResult]) -> list[dict]:
    """One entry per catalogue rule (unchecked when no test names it), then uncatalogued IDs."""
    by_rule: dict[str, list[ConformanceResult]] = {}
    for test in tests:
        if test.rule is not None:
            by_rule.setdefault(test.rule, []).append(test)
    entries = []
    catalogue = rule_catalogue.catalogue()
    known = [rule.to_dict() for rule in catalogue.values()]
    unknown = [
        {"id": rid, "family": UNCATALOGUED, "sentence": "", "source": ""}
        for rid in by_rule if rid not in catalogue
    ]
    for rule in known + unknown:
        its_tests = by_rule.get(rule["id"], [])
        outcomes = {t.outcome for t in its_tests}
        status = next((s for s in STATUS_ORDER if s in outcomes), UNCHECKED)
        entries.append({
            **rule,
            "status": status,
            "tests": [t.nodeid for t in its_tests],
            "programs": sum(t.programs for t in its_tests),
            "divergences": [t.divergence for t in its_tests if t.divergence is not None],
            "known_divergences": [t.reason for t in its_tests if t.known_divergence],
            "error_aware_accepted": sum(t.error_aware_accepted for t in its_tests),
            "error_aware_examples": _error_aware_examples(its_tests),
        })
    return entries


def _error_aware_examples(tests: list[ConformanceResult]) -> list[dict]:
    """The first ``ERROR_AWARE_EXAMPLES`` values the error-aware judgement accepted in ``tests``,
    each with the test that checked it."""
    examples = [{"nodeid": t.nodeid, **example} for t in tests for example in t._error_aware_examples]
    return examples[:ERROR_AWARE_EXAMPLES]


def _count(values: list[str], keys: tuple[str, ...]) -> dict[str, int]:
    return {key: values.count(key) for key in keys}


def _totals(tests: list[ConformanceResult], rules: list[dict]) -> dict:
    return {
        "tests": len(tests),
        **_count([t.outcome for t in tests], STATUS_ORDER),
        "known_divergences": sum(t.known_divergence for t in tests),
        "error_aware_accepted": sum(t.error_aware_accepted for t in tests),
        "programs": sum(t.programs for t in tests),
        "duration": round(sum(t.duration for t in tests), 3),
        "rules": len(rules),
        "rule_status": _count([r["status"] for r in rules], (*STATUS_ORDER, UNCHECKED)),
    }


def _families(tests: list[ConformanceResult], rules: list[dict]) -> list[dict]:
    """Per family: rule statuses, test outcomes and programs (tests without a rule: "no rule")."""
    family_of = {rule["id"]: rule["family"] for rule in rules}
    names = list(dict.fromkeys(rule["family"] for rule in rules))
    tests_of: dict[str, list[ConformanceResult]] = {}
    for test in tests:
        tests_of.setdefault(family_of.get(test.rule, "no rule"), []).append(test)
    names += [name for name in tests_of if name not in names]
    return [
        {
            "family": name,
            "rules": _count([r["status"] for r in rules if r["family"] == name], (*STATUS_ORDER, UNCHECKED)),
            "tests": _count([t.outcome for t in tests_of.get(name, [])], STATUS_ORDER),
            "programs": sum(t.programs for t in tests_of.get(name, [])),
        }
        for name in names
    ]


def write_summary(terminal: Any, results: dict, results_path: Path | None, report_path: Path | None) -> None:
    """Per family: test outcomes and programs run; then where results and report went."""
    backend, ref = results["backend"], results["reference"]
    terminal.write_sep(
        "=",
        f"conformance: {backend['name']} {backend['version']} vs torch {ref['version']} "
        f"({results['device']}, hypothesis profile {results['hypothesis_profile']})",
    )
    columns = ("passed", "failed", "xfailed", "xpassed", "skipped")
    width = max([len("family")] + [len(f["family"]) for f in results["families"]])
    rows = [("family", {c: c for c in columns}, "programs")]
    ran = [family for family in results["families"] if sum(family["tests"].values())]
    rows += [(family["family"], family["tests"], family["programs"]) for family in ran]
    rows.append(("total", results["totals"], results["totals"]["programs"]))
    for name, counts, programs in rows:
        cells = " ".join(f"{counts[c]:>7}" for c in columns)
        terminal.write_line(f"{name:<{width}}  {cells} {programs:>9}")
    accepted = [f"{rule['id']} {rule['error_aware_accepted']}"
                for rule in results["rules"] if rule["error_aware_accepted"]]
    if accepted:
        terminal.write_line(
            f"{results['totals']['error_aware_accepted']} value(s) outside the fixed tolerance accepted "
            f"by the error-aware judgement ({', '.join(accepted)})",
            yellow=True,
        )
    unchecked = results["totals"]["rule_status"][UNCHECKED]
    if unchecked:
        terminal.write_line(f"{unchecked} catalogue rule(s) unchecked: none of their tests ran")
    unknown = [r["id"] for r in results["rules"] if r["family"] == UNCATALOGUED]
    if unknown:
        terminal.write_line(f"rule ids not in the catalogue (oracle/rules/): {', '.join(unknown)}", red=True)
    if results_path is not None:
        terminal.write_line(f"results: {results_path}")
    if report_path is not None:
        terminal.write_line(f"report: {report_path}")
