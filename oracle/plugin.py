"""The pytest plugin of the conformance suite: backend options, fixtures, results.json, summary.

Loaded by the repository's root ``conftest.py`` (``pytest_plugins = ("oracle.plugin",)``) or with
``-p oracle.plugin`` from elsewhere.

Options (``pytest --help`` lists them all, under "PyTorch conformance oracle"):
  ``--backend SPEC``  the backend under test, any spec ``oracle.backends.load_backend`` takes
                      (default ``impl``), run in a worker process of its own (``oracle.runner``)
                      unless ``--isolation none``; ``--backend-timeout`` and ``--backend-memory``
                      bound what one program may take there; ``--backend-python PYTHON`` runs it
                      in another environment (an engine's own virtualenv: ``oracle.engines``)
  ``--device D``      any device the backend accepts (default ``cpu``); the backend's own API
                      places tensors on it; a backend that refuses it skips the conformance tests
                      with its error. impl's ``cuda`` is cupy's: without cupy and a CUDA device,
                      conformance tests are skipped with the reason (``@pytest.mark.gpu`` tests always)
  ``--ignore-classes CLASSES``  divergence classes not counted (``oracle.compare.CLASSES``), e.g.
                      ``messages,warnings`` for an engine that does not aim at message parity
  ``--reference-version V``  accept torch V as the reference instead of the pin (``oracle.reference``)
  ``--results PATH``  where results.json goes (default ``reports/results.json`` under the rootdir);
                      written only when conformance tests ran
  ``--report``        also render the HTML report next to results.json (``oracle.report``)
  ``--test-failures N``, ``--rule-budget S``  the triage profile's caps: failing programs collected
                      per test, seconds of checking per rule (in each worker process)
  ``--record-corpus PATH``  store every program the conformance tests compared, with its rule and the
                      reference's traces, as a corpus ``python -m oracle replay`` checks a backend
                      against without torch (``oracle.corpus``; ``.gz``: compressed; with xdist each
                      worker's part is merged by the controller)

A *conformance test* is one marked ``@pytest.mark.rule("ID")`` or living in a ``conformance``
directory. For each, the plugin opens a ``oracle.differential.recording`` log while it runs and
records its outcome, rule, duration, the programs it checked (``oracle.stats``) and what they
showed: program outcomes, divergences by class, the names the backend lacks, the values the
error-aware judgement accepted that the fixed tolerance rejected (the first
``ERROR_AWARE_EXAMPLES`` of each rule kept with their numbers and repro) and, when it failed, the
structured divergence (any exception with a ``to_dict()``, normally
``oracle.differential.DivergenceError``). A test none of whose programs failed but some of which
needed a name the backend lacks is skipped with an "unsupported: ..." reason, and counted as
unsupported, not skipped. In the ``triage`` hypothesis profile, failing programs are collected
(``--test-failures`` per test) rather than raised and shrunk, and a rule's tests stop after
``--rule-budget`` seconds; the report says which were cut short. The record travels inside the
test report's ``user_properties``, so it is built where the test runs (an xdist worker) and
merged where results are written (the controller).
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from oracle import profiles, stats
from oracle import reference as reference_module
from oracle import rules as rule_catalogue
from oracle.backends import DEFAULT_BACKEND, REFERENCE, Backend, BackendError, load_backend
from oracle.compare import CLASSES, class_names
from oracle.corpus import CorpusRecorder
from oracle.coverage import Targets
from oracle.differential import Policy, TestLog, default_reference, recording
from oracle.reference import VERSION_VARIABLE, ReferenceError, reference_info
from oracle.results import (
    ERROR_AWARE_EXAMPLES,
    UNSUPPORTED,
    ConformanceResult,
    build_results,
    cut,
    dump,
    run_meta,
    write_summary,
)
from oracle.runner import Isolated, default_memory_limit, isolation_options

DEFAULT_RESULTS = Path("reports") / "results.json"
PROPERTY = "oracle"  # the user_properties key carrying a test's oracle record
TEST_FAILURES = 3  # triage: failing programs collected per test
# triage: seconds of checking per rule and worker process; 100 rules in 15 minutes even if one
# worker runs a part of every rule
RULE_BUDGET_S = 8.0

_programs_run = pytest.StashKey[int]()
_log = pytest.StashKey[TestLog]()
_ignore = pytest.StashKey[frozenset]()
_rule_spent = pytest.StashKey[dict]()  # triage: rule -> seconds its tests spent checking
_facts = pytest.StashKey[dict]()  # the backend's info and probe, sent once per process


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
        "--device", default="cpu", metavar="D",
        help="device programs run on, any the backend accepts (default cpu; impl's cuda is cupy's)",
    )
    isolation_options(group.addoption)
    group.addoption(
        "--backend-memory", type=float, default=None, metavar="GIB",
        help="memory an isolated backend's process may allocate, in GiB (default half of this "
        "machine's; 0: no limit)",
    )
    group.addoption(
        "--ignore-classes", action="append", default=[], metavar="CLASSES",
        help=f"divergence classes not counted, separated by commas: {', '.join(CLASSES)} (a plural "
        "works too: messages,warnings)",
    )
    group.addoption(
        "--reference-version", default=None, metavar="V",
        help="accept torch V as the reference instead of the pinned version (the report says so)",
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
    group.addoption(
        "--test-failures", type=int, default=TEST_FAILURES, metavar="N",
        help=f"triage profile: failing programs collected per test (default {TEST_FAILURES})",
    )
    group.addoption(
        "--rule-budget", type=float, default=RULE_BUDGET_S, metavar="S",
        help=f"triage profile: seconds of checking per rule (default {RULE_BUDGET_S:g})",
    )
    group.addoption(
        "--record-corpus", default=None, metavar="PATH",
        help="store the programs the conformance tests compare, with their rules and the reference's "
        "traces, as a corpus for python -m oracle replay (gzip-compressed when PATH ends in .gz)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(rule_id): the catalogue rule a conformance test checks")
    config.addinivalue_line("markers", "gpu: needs cupy and a CUDA device (skipped cleanly without one)")
    profiles.register()  # before hypothesis applies --hypothesis-profile (this hook runs first)
    try:
        config.stash[_ignore] = class_names(config.getoption("ignore_classes"))
    except ValueError as exc:  # pytest's own --ignore skips paths, hence the longer name
        raise pytest.UsageError(f"--ignore-classes: {exc}") from None
    config.stash[_rule_spent] = {}
    config.stash[_facts] = {}
    version = config.getoption("reference_version")
    if version:
        os.environ[VERSION_VARIABLE] = version  # read by every process that loads the reference
    if not hasattr(config, "workerinput"):  # the xdist controller, or a run without xdist
        config.pluginmanager.register(ResultsCollector(config), "oracle-results")
    if config.getoption("record_corpus"):
        config.pluginmanager.register(CorpusWriter(config), "oracle-corpus")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Verify the reference before anything runs (``oracle.reference``), where torch is installed."""
    if hasattr(session.config, "workerinput") or importlib.util.find_spec(REFERENCE) is None:
        return
    try:
        reference_module.reference()
    except ReferenceError as exc:
        raise pytest.UsageError(f"the reference is not the pinned PyTorch: {exc}") from None


@pytest.fixture(scope="session")
def backend(pytestconfig: pytest.Config) -> Backend:
    """The backend under test (``--backend``, ``--device``), isolated in a worker process unless
    ``--isolation none``. A backend that cannot be loaded fails the tests that use it; one that
    cannot place a tensor on ``--device`` skips them."""
    spec, device = pytestconfig.getoption("backend"), pytestconfig.getoption("device")
    failure = None
    try:
        runner = _runner(pytestconfig, spec, device)
        facts = {"backend_info": runner.info(), "probe": runner.call("oracle.capabilities:probe")}
    except BackendError as exc:
        failure = f"--backend: {exc}"
    if failure is not None:  # outside the except block: the error alone, not the chain behind it
        pytest.fail(failure, pytrace=False)
    pytestconfig.stash[_facts] = facts
    if facts["probe"]["device_error"]:
        runner.close()
        why = facts["probe"]["device_error"]
        pytest.skip(f"--device {device}: the backend cannot place a tensor there ({why})")
    yield runner
    runner.close()


def _runner(config: pytest.Config, spec: str, device: str) -> Backend:
    python = config.getoption("backend_python")
    if config.getoption("isolation") == "none":
        if python:
            raise BackendError("--backend-python runs the backend in a worker: it needs --isolation process")
        return load_backend(spec, device)
    memory = config.getoption("backend_memory")
    limit = default_memory_limit() if memory is None else int(memory * 2**30)
    return Isolated(spec, device, config.getoption("backend_timeout"), limit, python=python)


@pytest.fixture(scope="session")
def reference(pytestconfig: pytest.Config) -> Backend:
    """The reference backend (real PyTorch, verified) on ``--device`` when torch can use it, else
    on cpu: the pinned reference wheel is the CPU build, so with ``--device cuda`` the reference
    normally runs on cpu while the backend under test runs on the GPU."""
    try:
        return default_reference(pytestconfig.getoption("device"))
    except ReferenceError as exc:
        pytest.fail(f"the reference is not the pinned PyTorch: {exc}", pytrace=False)


def pytest_report_header(config: pytest.Config) -> str:
    isolation = "isolated" if config.getoption("isolation") == "process" else "in process"
    return f"oracle: backend {config.getoption('backend')} on {config.getoption('device')} ({isolation})"


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
    skip GPU tests without a GPU (and conformance tests when impl's ``--device cuda`` cannot be
    honoured)."""
    select_rules(config, items)
    mark_known_divergences(config.getoption("backend"), items)
    # impl's cuda is cupy's; any other backend says itself whether it can use the device (probe)
    wants_cuda = config.getoption("device") == "cuda" and config.getoption("backend") == "impl"
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


# --------------------------------------------------------------------------- per-test records


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Record what the test's programs show while its body runs (hypothesis runs all examples
    here); then fail with the failing programs triage collected, or mark the test unsupported.
    Other tests (the oracle's own) run as they are: their programs count, nothing else."""
    if not is_conformance(item):
        return (yield)
    before = stats.programs_checked()
    started = time.monotonic()
    policy = _policy(item)
    writer = item.config.pluginmanager.get_plugin("oracle-corpus")
    corpus = writer.recorder if writer is not None else None
    try:
        with recording(policy, ERROR_AWARE_EXAMPLES, _rule_of(item), corpus, coverage_targets(item)) as log:
            item.stash[_log] = log
            result = yield
        failure = log.failure()
        if failure is not None:
            raise failure
        unsupported = log.unsupported()
        if unsupported:
            pytest.skip(unsupported)
        return result
    finally:
        item.stash[_programs_run] = stats.programs_checked() - before
        _charge(item, time.monotonic() - started)


def _policy(item: pytest.Item) -> Policy:
    """The test's ``Policy``: the ignored classes and, in triage, its cap of failing programs and
    what is left of its rule's time budget (a test per op of a rule still tells which ops fail)."""
    config = item.config
    ignore = config.stash[_ignore]
    if _profile() != profiles.TRIAGE:
        return Policy(ignore)
    spent = config.stash[_rule_spent].get(_rule_of(item), 0.0)
    budget = config.getoption("rule_budget")
    if spent >= budget:
        pytest.skip(f"triage: this rule spent its budget of {budget:g} s (--rule-budget)")
    return Policy(ignore, collect=config.getoption("test_failures"), budget=budget - spent)


def _charge(item: pytest.Item, seconds: float) -> None:
    """Triage: add the test's time to its rule's account."""
    spent = item.config.stash[_rule_spent]
    spent[_rule_of(item)] = spent.get(_rule_of(item), 0.0) + seconds


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
        log = item.stash.get(_log, None)
        if log is not None:
            record.update(log.record())
            record.update(coverage_record(item))
            record["unsupported"] = bool(report.skipped and _skip_text(report).startswith(UNSUPPORTED))
        facts = item.config.stash[_facts]
        if facts:  # once per process: what the backend is and lacks
            record.update(facts)
            item.config.stash[_facts] = {}
    if call.excinfo is not None and report.failed:
        record["message"] = cut(call.excinfo.exconly())
        divergence = _divergence_of(call.excinfo.value)
        if divergence is not None:
            record["divergence"] = divergence
    report.user_properties.append((PROPERTY, record))
    return report


def _skip_text(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


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


# --------------------------------------------------------------------------- argument coverage

COVERAGE_NAME = "COVERAGE"  # a conformance module's {"RULE-ID": oracle.coverage.Targets}
_targets_sent = pytest.StashKey[set]()  # the rules whose targets this process has put in a record


def coverage_targets(item: pytest.Item) -> Targets | None:
    """The coverage targets of the test's rule, as its module declares them (``COVERAGE``)."""
    declared = getattr(getattr(item, "module", None), COVERAGE_NAME, {})
    return declared.get(_rule_of(item))


def coverage_record(item: pytest.Item) -> dict:
    """The rule's target items, in the first record of a test of the rule this process sends (the
    log's record carries the items the test covered); results.json joins them per rule."""
    rule, targets = _rule_of(item), coverage_targets(item)
    sent = item.config.stash.setdefault(_targets_sent, set())
    if targets is None or rule in sent:
        return {}
    sent.add(rule)
    return {"coverage_targets": targets.items(), "coverage_excluded": targets.excluded}


# --------------------------------------------------------------------------- collecting & writing


class ResultsCollector:
    """Merges the oracle records of the session (on the xdist controller) and writes results.json."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.tests: dict[str, ConformanceResult] = {}
        self.facts: dict[str, Any] = {}
        self.results: dict | None = None
        self.results_path: Path | None = None
        self.report_path: Path | None = None
        self.report_error: str | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = dict(report.user_properties).get(PROPERTY)
        if record is None:
            return
        for name in ("backend_info", "probe"):
            if name in record:
                self.facts.setdefault(name, record[name])
        self.tests.setdefault(report.nodeid, ConformanceResult(report.nodeid)).merge(report, record)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.tests:
            return
        meta = self._meta(session, exitstatus)
        self.results = build_results(list(self.tests.values()), meta, self.facts.get("probe"))
        self.results_path = self._results_path()
        self.results_path.parent.mkdir(parents=True, exist_ok=True)
        self.results_path.write_text(dump(self.results), encoding="utf-8")
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

    def _meta(self, session: pytest.Session, exitstatus: int) -> dict:
        """The run's metadata (``oracle.results.run_meta``; the backend's info from its worker)."""
        config = self.config
        meta = run_meta(
            config.getoption("backend"), self.facts.get("backend_info") or {}, config.getoption("device"),
            config.getoption("isolation"), config.stash[_ignore], {"name": REFERENCE, **reference_info()},
            _profile(),
        )
        if _profile() == profiles.TRIAGE:
            meta["triage"] = {"test_failures": config.getoption("test_failures"),
                              "rule_budget": config.getoption("rule_budget")}
        incomplete = _incomplete(session, exitstatus)
        if incomplete:
            meta["incomplete"] = incomplete
        return meta


class CorpusWriter:
    """``--record-corpus``: the ``CorpusRecorder`` each test's log hands its programs to. An xdist
    worker sends what it recorded to the controller with its last message (``workeroutput``); the
    controller, or a run without xdist, merges the parts and writes the corpus at the end."""

    KEY = "oracle_corpus"  # the workeroutput entry carrying a worker's part

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.recorder = CorpusRecorder()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        part = getattr(node, "workeroutput", {}).get(self.KEY)
        if part is not None:
            self.recorder.merge(json.loads(part))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            self.config.workeroutput[self.KEY] = json.dumps(self.recorder.part(), allow_nan=False)
            return
        path = self.config.invocation_params.dir / self.config.getoption("record_corpus")
        self.recorder.write(path, hypothesis_profile=_profile())


def _incomplete(session: pytest.Session, exitstatus: int) -> str | None:
    """Why the run did not run everything it collected, if it did not."""
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    stop = session.shouldstop or session.shouldfail
    return str(stop) if stop else None


def _profile() -> str | None:
    try:
        from hypothesis import settings
    except ImportError:
        return None
    return settings.get_current_profile_name()
