"""results.json: what a conformance run found, per test, rule and family, and its summary table.

The pytest plugin (``oracle.plugin``) merges each conformance test's phase reports into a
``ConformanceResult`` and writes ``build_results(...)``; ``python -m oracle replay`` writes the same
document for a recorded corpus. Nothing here imports pytest.

Statuses, worst first (a rule's status is the worst of its tests'): failed (a divergence that
counts), xpassed (a known divergence no longer there), unsupported (every divergence of a program
was a name of torch's API the backend lacks, and no program failed: what could be compared agreed,
but not all of the rule could be), xfailed (a known divergence, strict xfail), passed, skipped;
a rule none of whose tests ran is unchecked.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from oracle import rules as rule_catalogue
from oracle.compare import CLASSES

SCHEMA_VERSION = 2
MAX_TEXT = 20_000  # failure texts are cut to this many characters in results.json
ERROR_AWARE_EXAMPLES = 3  # values accepted by the error-aware judgement kept per test and per rule
STATUS_ORDER = ("failed", "xpassed", "unsupported", "xfailed", "passed", "skipped")
UNCHECKED = "unchecked"
UNCATALOGUED = "uncatalogued"
UNSUPPORTED = "unsupported: "  # the skip reason's prefix of a test whose programs the backend lacks API for
PROGRAM_OUTCOMES = ("passed", "failed", "unsupported")


@dataclass
class ConformanceResult:
    """What happened to one conformance test, merged from its setup/call/teardown reports (pytest's
    ``TestReport``, or anything with the same attributes) and the oracle's record of each."""

    nodeid: str
    rule: str | None = None
    outcome: str = "passed"
    reason: str = ""  # skip, xfail or unsupported reason
    known_divergence: bool = False  # a strict xfail: a divergence the backend is known to have
    phase: str = ""  # the phase that failed
    duration: float = 0.0
    programs: int = 0
    program_outcomes: dict[str, int] = field(default_factory=dict)  # passed / failed / unsupported
    classes: dict[str, int] = field(default_factory=dict)  # divergences by class (oracle.compare)
    ignored: dict[str, int] = field(default_factory=dict)  # divergences of --ignore'd classes
    version_only: dict[str, int] = field(default_factory=dict)  # set aside: torch versions differ
    lacks: dict[str, int] = field(default_factory=dict)  # names the backend lacks -> programs needing them
    cut_short: str | None = None  # why triage stopped the test early
    message: str = ""  # failure text
    divergence: int | None = None  # index into the divergences list of results.json
    error_aware_accepted: int = 0  # values the fixed tolerance rejected and the error-aware one accepted
    _divergence: dict | None = field(default=None, repr=False)
    _error_aware_examples: list[dict] = field(default_factory=list, repr=False)
    _coverage_targets: set[str] = field(default_factory=set, repr=False)  # the rule's (oracle.coverage)
    _covered: set[str] = field(default_factory=set, repr=False)  # the target items its programs exercised
    _coverage_excluded: dict[str, str] = field(default_factory=dict, repr=False)  # item -> why no target

    def merge(self, report: Any, record: dict) -> None:
        self.rule = self.rule or record.get("rule")
        self.duration += report.duration
        self.programs += int(record.get("programs", 0))
        for name in ("program_outcomes", "classes", "ignored", "lacks"):
            setattr(self, name, _add(getattr(self, name), record.get(name, {})))
        self.version_only = _add(self.version_only, record.get("version_only", {}))
        self.cut_short = self.cut_short or record.get("cut_short")
        error_aware = record.get("error_aware", {})
        self.error_aware_accepted += int(error_aware.get("accepted", 0))
        self._error_aware_examples += error_aware.get("examples", [])
        self._coverage_targets.update(record.get("coverage_targets", ()))
        self._covered.update(record.get("covered", ()))
        self._coverage_excluded.update(record.get("coverage_excluded", {}))
        if report.failed:
            if self.outcome != "failed":
                self.outcome, self.phase = "failed", report.when
                self.message = record.get("message") or cut(report.longreprtext)
                self._divergence = record.get("divergence")
        elif report.skipped:
            if hasattr(report, "wasxfail"):
                self.outcome, self.reason = "xfailed", report.wasxfail
                self.known_divergence = bool(record.get("strict"))
            else:
                reason = _skip_reason(report)
                self.outcome = "unsupported" if record.get("unsupported") else "skipped"
                self.reason = reason
        elif report.when == "call" and hasattr(report, "wasxfail"):
            self.outcome, self.reason = "xpassed", report.wasxfail

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_")}


def _add(counts: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    return dict(Counter(counts) + Counter(more))


def _skip_reason(report: Any) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n... ({len(text) - MAX_TEXT} more characters)"


def dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def cupy_version() -> str | None:
    """The installed cupy's version (wheels are named cupy-cuda12x etc.), without importing it."""
    for dist in importlib.metadata.packages_distributions().get("cupy", []):
        version = dist_version(dist)
        if version:
            return version
    return None


def run_meta(
    backend: str, info: dict, device: str, isolation: str, ignore: frozenset[str], reference: dict,
    hypothesis_profile: str | None,
) -> dict:
    """The metadata of a run: the backend (its spec, and ``info``: what its process imported, from
    ``Backend.info``), the device, isolation, ignored classes, the reference (``verify``'s account),
    the hypothesis profile and this machine; versions are read from the modules imported, never
    from package metadata alone."""
    return {
        "backend": {"name": backend, "version": info.get("version", "unknown"), "module": info.get("name"),
                    "file": info.get("file"), "imports_torch": info.get("torch_loaded")},
        "device": device,
        "isolation": isolation,
        "ignore": sorted(ignore),
        "reference": reference,
        "numpy": dist_version("numpy"),
        "cupy": cupy_version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "hypothesis_profile": hypothesis_profile,
    }


# --------------------------------------------------------------------------- the document


def build_results(tests: list[ConformanceResult], meta: dict, probe: dict | None = None) -> dict:
    """The results.json document: metadata, totals, per-family and per-rule aggregation, the
    capability table (``probe``: what the backend lacks of the API the suite uses, from
    ``oracle.capabilities.probe``; per family, the names the run's programs needed), the tests
    and their divergences."""
    divergences = []
    for test in tests:
        if test.outcome == "failed":
            test.divergence = len(divergences)
            divergences.append(
                {"nodeid": test.nodeid, "rule": test.rule, "phase": test.phase,
                 "message": test.message, "details": test._divergence}
            )
    rules = _rules(tests)
    families = _families(tests, rules)
    return {
        "schema": SCHEMA_VERSION,
        **meta,
        "totals": _totals(tests, rules),
        "families": families,
        "capabilities": {
            "probe": probe,
            "families": [{"family": f["family"], "lacks": f["lacks"]} for f in families if f["lacks"]],
        },
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
            **_sums(its_tests),
            "cut_short": sum(t.cut_short is not None for t in its_tests),
            "divergences": [t.divergence for t in its_tests if t.divergence is not None],
            "known_divergences": [t.reason for t in its_tests if t.known_divergence],
            "error_aware_accepted": sum(t.error_aware_accepted for t in its_tests),
            "error_aware_examples": _error_aware_examples(its_tests),
            "coverage": rule_coverage(its_tests),
        })
    return entries


def _sums(tests: list[ConformanceResult]) -> dict:
    """Program outcomes, divergence classes (counted and ignored) and lacked names, summed."""
    sums = {name: Counter() for name in ("program_outcomes", "classes", "ignored", "lacks")}
    for test in tests:
        for name, counter in sums.items():
            counter.update(getattr(test, name))
    return {name: dict(counter.most_common()) for name, counter in sums.items()}


def _error_aware_examples(tests: list[ConformanceResult]) -> list[dict]:
    """The first ``ERROR_AWARE_EXAMPLES`` values the error-aware judgement accepted in ``tests``,
    each with the test that checked it."""
    examples = [{"nodeid": t.nodeid, **example} for t in tests for example in t._error_aware_examples]
    return examples[:ERROR_AWARE_EXAMPLES]


# --------------------------------------------------------------------------- argument coverage


def rule_coverage(tests: list[ConformanceResult]) -> dict | None:
    """A rule's argument coverage (``oracle.coverage``): its target items, how many its tests'
    programs exercised, the others by name, and the items it excludes with why; None for a rule
    that declares no targets."""
    targets = set().union(*(t._coverage_targets for t in tests)) if tests else set()
    if not targets:
        return None
    covered = set().union(*(t._covered for t in tests)) & targets
    excluded = {item: why for t in tests for item, why in sorted(t._coverage_excluded.items())}
    return {"targets": len(targets), "covered": len(covered), "uncovered": sorted(targets - covered),
            "excluded": excluded}


def coverage_totals(rules: list[dict]) -> dict:
    """Target items, covered and uncovered, summed over ``rules``, and the rules with uncovered."""
    measured = [rule for rule in rules if rule.get("coverage")]
    targets = sum(rule["coverage"]["targets"] for rule in measured)
    covered = sum(rule["coverage"]["covered"] for rule in measured)
    return {"rules": len(measured), "targets": targets, "covered": covered, "uncovered": targets - covered,
            "rules_uncovered": [rule["id"] for rule in measured if rule["coverage"]["uncovered"]]}


def _count(values: list[str], keys: tuple[str, ...]) -> dict[str, int]:
    return {key: values.count(key) for key in keys}


def _totals(tests: list[ConformanceResult], rules: list[dict]) -> dict:
    sums = _sums(tests)
    return {
        "tests": len(tests),
        **_count([t.outcome for t in tests], STATUS_ORDER),
        "known_divergences": sum(t.known_divergence for t in tests),
        "error_aware_accepted": sum(t.error_aware_accepted for t in tests),
        "programs": sum(t.programs for t in tests),
        "program_outcomes": {key: sums["program_outcomes"].get(key, 0) for key in PROGRAM_OUTCOMES},
        "classes": {key: sums["classes"].get(key, 0) for key in CLASSES},
        "ignored": sums["ignored"],
        "version_only": dict(sum((Counter(t.version_only) for t in tests), Counter()).most_common()),
        "cut_short": sum(t.cut_short is not None for t in tests),
        "duration": round(sum(t.duration for t in tests), 3),
        "rules": len(rules),
        "rule_status": _count([r["status"] for r in rules], (*STATUS_ORDER, UNCHECKED)),
        "coverage": coverage_totals(rules),
    }


def _families(tests: list[ConformanceResult], rules: list[dict]) -> list[dict]:
    """Per family: rule statuses, test outcomes, programs, divergence classes and the names the
    backend lacks (tests without a rule: "no rule")."""
    family_of = {rule["id"]: rule["family"] for rule in rules}
    names = list(dict.fromkeys(rule["family"] for rule in rules))
    tests_of: dict[str, list[ConformanceResult]] = {}
    for test in tests:
        tests_of.setdefault(family_of.get(test.rule, "no rule"), []).append(test)
    names += [name for name in tests_of if name not in names]
    families = []
    for name in names:
        its_tests = tests_of.get(name, [])
        sums = _sums(its_tests)
        families.append({
            "family": name,
            "rules": _count([r["status"] for r in rules if r["family"] == name], (*STATUS_ORDER, UNCHECKED)),
            "tests": _count([t.outcome for t in its_tests], STATUS_ORDER),
            "programs": sum(t.programs for t in its_tests),
            "classes": sums["classes"],
            "lacks": sums["lacks"],
            "coverage": coverage_totals([r for r in rules if r["family"] == name]),
        })
    return families


# --------------------------------------------------------------------------- the terminal summary


def write_summary(terminal: Any, results: dict, results_path: Any, report_path: Any) -> None:
    """Per family: test outcomes and programs run; the divergences by class, what the backend
    lacks, and where results and report went (``terminal``: pytest's terminal reporter, or
    anything with ``write_sep`` and ``write_line``)."""
    backend, ref = results["backend"], results["reference"]
    corpus = results.get("corpus")
    source = f"corpus {corpus['path']}" if corpus else f"hypothesis profile {results['hypothesis_profile']}"
    terminal.write_sep(
        "=",
        f"conformance: {backend['name']} {backend['version']} vs torch {ref.get('version')} "
        f"({results['device']}, {source})",
    )
    columns = ("passed", "failed", "unsupported", "xfailed", "xpassed", "skipped")
    width = max([len("family")] + [len(f["family"]) for f in results["families"]])
    rows = [("family", {c: c for c in columns}, "programs")]
    ran = [family for family in results["families"] if sum(family["tests"].values())]
    rows += [(family["family"], family["tests"], family["programs"]) for family in ran]
    rows.append(("total", results["totals"], results["totals"]["programs"]))
    for name, counts, programs in rows:
        cells = " ".join(f"{counts[c]:>11}" for c in columns)
        terminal.write_line(f"{name:<{width}}  {cells} {programs:>9}")
    totals = results["totals"]
    classes = {k: v for k, v in totals.get("classes", {}).items() if v}
    if classes:
        terminal.write_line("divergences by class: " + ", ".join(f"{k} {v}" for k, v in classes.items()))
    if totals.get("ignored"):
        ignored = ", ".join(f"{k} {v}" for k, v in totals["ignored"].items())
        terminal.write_line(f"ignored (--ignore): {ignored}")
    if totals.get("version_only"):
        aside = ", ".join(f"{k} {v}" for k, v in totals["version_only"].items())
        versions = f"reference torch {ref.get('version')}, pin {ref.get('pinned')}"
        terminal.write_line(f"set aside as torch version differences ({versions}): {aside}", yellow=True)
    lacks = Counter()
    for family in results["capabilities"]["families"]:
        lacks.update(family["lacks"])
    if lacks:
        shown = ", ".join(f"{name} ({n})" for name, n in lacks.most_common(12))
        more = f" and {len(lacks) - 12} more" if len(lacks) > 12 else ""
        terminal.write_line(f"the backend lacks (programs needing it): {shown}{more}", yellow=True)
    if totals.get("cut_short"):
        cut_short = totals["cut_short"]
        terminal.write_line(f"{cut_short} test(s) cut short by the triage profile's caps", yellow=True)
    if results.get("incomplete"):
        terminal.write_line(f"incomplete run: {results['incomplete']}", red=True)
    accepted = [f"{rule['id']} {rule['error_aware_accepted']}"
                for rule in results["rules"] if rule["error_aware_accepted"]]
    if accepted:
        terminal.write_line(
            f"{totals['error_aware_accepted']} value(s) outside the fixed tolerance accepted "
            f"by the error-aware judgement ({', '.join(accepted)})",
            yellow=True,
        )
    write_coverage_summary(terminal, totals.get("coverage"))
    unchecked = totals["rule_status"][UNCHECKED]
    if unchecked:
        terminal.write_line(f"{unchecked} catalogue rule(s) unchecked: none of their tests ran")
    unknown = [r["id"] for r in results["rules"] if r["family"] == UNCATALOGUED]
    if unknown:
        terminal.write_line(f"rule ids not in the catalogue (oracle/rules/): {', '.join(unknown)}", red=True)
    if results_path is not None:
        terminal.write_line(f"results: {results_path}")
    if report_path is not None:
        terminal.write_line(f"report: {report_path}")


def write_coverage_summary(terminal: Any, coverage: dict | None) -> None:
    """One line: the argument coverage's items covered, and the rules with items uncovered."""
    if not coverage or not coverage["targets"]:
        return
    line = f"argument coverage: {coverage['covered']} of {coverage['targets']} target items exercised"
    if coverage["uncovered"]:
        rules = ", ".join(coverage["rules_uncovered"])
        terminal.write_line(f"{line}; {coverage['uncovered']} uncovered, in {rules}", yellow=True)
    else:
        terminal.write_line(line)


def dump(results: dict) -> str:
    return json.dumps(results, indent=1) + "\n"
