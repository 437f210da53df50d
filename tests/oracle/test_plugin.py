"""The oracle's pytest plugin, run in-process on small generated test files (pytester).

The catalogue is replaced by a fixed one so the expected per-rule statuses do not depend on the
rules other families declare.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import hypothesis  # noqa: F401  (imported before pytester snapshots sys.modules, see below)
import pytest
import torch  # noqa: F401  (a C extension cannot be imported twice: keep it out of pytester's cleanup)

import oracle.rules
from oracle.plugin import gpu_unavailable_reason
from oracle.results import ERROR_AWARE_EXAMPLES
from oracle.rules import Rule
from tests.oracle.test_tolerance import R32, R64, A, B

pytest_plugins = "pytester"

CATALOGUE = {
    rule.id: rule
    for rule in (
        Rule("AAA-001", "family a", "a rule whose test passes", "seed 001"),
        Rule("AAA-002", "family a", "a rule with one passing and one diverging test", "seed 002"),
        Rule("BBB-001", "family b", "a rule with a known divergence", "https://pytorch.org/docs"),
        Rule("BBB-002", "family b", "a rule whose test is skipped", "seed 003"),
        Rule("BBB-003", "family b", "a rule no test checks", "seed 004"),
    )
}

SUITE = '''
import pytest
from oracle import stats


class FakeDivergence(AssertionError):
    """Stands for oracle.differential.DivergenceError: an AssertionError with to_dict()."""

    def to_dict(self):
        return {"divergence": {"index": 3, "reason": "is_leaf differs"}, "script": "import torch"}


def check(n):
    for _ in range(n):
        stats.count_program()


@pytest.mark.rule("AAA-001")
def test_passes():
    check(5)


@pytest.mark.rule("AAA-002")
def test_also_passes():
    check(2)


@pytest.mark.rule("AAA-002")
def test_diverges():
    check(3)
    raise FakeDivergence("first divergence at event 3")


@pytest.mark.rule("BBB-001")
@pytest.mark.xfail(reason="impl does not model it yet", strict=True)
def test_known_divergence():
    check(4)
    raise AssertionError("diverges")


@pytest.mark.rule("BBB-002")
@pytest.mark.skip(reason="needs something absent")
def test_skipped():
    check(1)


def test_not_conformance():
    check(7)
'''


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makeini("[pytest]\nxfail_strict = true\n")
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest("-p", "oracle.plugin", "--backend", "torch", *args)
    return result, json.loads((pytester.path / "reports" / "results.json").read_text())


def by_id(entries: list[dict], key: str = "id") -> dict[str, dict]:
    return {entry[key]: entry for entry in entries}


def check_suite_results(results: dict) -> None:
    """What SUITE must produce, whichever way it was run."""
    rules = by_id(results["rules"])
    assert {rid: rule["status"] for rid, rule in rules.items()} == {
        "AAA-001": "passed",
        "AAA-002": "failed",
        "BBB-001": "xfailed",
        "BBB-002": "skipped",
        "BBB-003": "unchecked",
    }
    assert {rid: rule["programs"] for rid, rule in rules.items()} == {
        "AAA-001": 5, "AAA-002": 5, "BBB-001": 4, "BBB-002": 0, "BBB-003": 0,
    }
    assert rules["BBB-001"]["known_divergences"] == ["impl does not model it yet"]
    assert rules["AAA-002"]["sentence"] == CATALOGUE["AAA-002"].sentence

    tests = by_id(results["tests"], "nodeid")
    assert set(tests) == {f"test_suite.py::test_{name}" for name in
                          ("passes", "also_passes", "diverges", "known_divergence", "skipped")}
    known = tests["test_suite.py::test_known_divergence"]
    assert (known["outcome"], known["known_divergence"], known["reason"]) == (
        "xfailed", True, "impl does not model it yet")
    skipped = tests["test_suite.py::test_skipped"]
    assert (skipped["outcome"], skipped["reason"]) == ("skipped", "needs something absent")

    [divergence] = results["divergences"]
    assert divergence["nodeid"] == "test_suite.py::test_diverges"
    assert divergence["rule"] == "AAA-002"
    assert divergence["details"] == {"divergence": {"index": 3, "reason": "is_leaf differs"},
                                     "script": "import torch"}
    assert "first divergence at event 3" in divergence["message"]
    assert rules["AAA-002"]["divergences"] == [0]

    totals = results["totals"]
    assert (totals["tests"], totals["passed"], totals["failed"], totals["xfailed"], totals["skipped"]) == (
        5, 2, 1, 1, 1)
    assert totals["programs"] == 14
    assert totals["known_divergences"] == 1
    families = by_id(results["families"], "family")
    assert families["family a"]["tests"]["failed"] == 1 and families["family a"]["programs"] == 10
    assert families["family b"]["rules"]["unchecked"] == 1


def test_results_per_rule(suite: pytest.Pytester) -> None:
    result, results = run(suite)
    result.assert_outcomes(passed=3, failed=1, xfailed=1, skipped=1)
    check_suite_results(results)
    # no test used the backend fixture: its worker never started, so nothing says what it is
    assert results["backend"]["name"] == "torch" and results["backend"]["version"] == "unknown"
    reference = results["reference"]
    assert reference["version"].startswith("2.13.0")
    assert reference["pinned"] == reference["accepted"] == "2.13.0"
    assert reference["file"].endswith("torch/__init__.py")
    assert results["schema"] == 2 and results["device"] == "cpu" and results["isolation"] == "process"
    for key in ("numpy", "python", "platform", "date", "hypothesis_profile"):
        assert results[key], key


def test_results_with_xdist(suite: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    result, results = run(suite, "-p", "xdist", "-n", "2", "-p", "no:benchmark")
    result.assert_outcomes(passed=3, failed=1, xfailed=1, skipped=1)
    check_suite_results(results)


def test_terminal_summary(suite: pytest.Pytester) -> None:
    result, _ = run(suite)
    result.stdout.re_match_lines([
        r"=+ conformance: torch .* vs torch 2\.13\.0.* \(cpu, hypothesis profile .*\) =+",
        r"family +passed +failed +unsupported +xfailed +xpassed +skipped +programs",
        r"family a +2 +1 +0 +0 +0 +0 +10",
        r"family b +0 +0 +0 +1 +0 +1 +4",
        r"total +2 +1 +0 +1 +0 +1 +14",
        r"1 catalogue rule\(s\) unchecked: none of their tests ran",
        r"results: .*results\.json",
    ])


def test_rule_option_selects_the_tests_of_those_rules(suite: pytest.Pytester) -> None:
    result, results = run(suite, "--rule", "AAA-002", "--rule", "BBB-001,BBB-002")
    result.assert_outcomes(passed=1, failed=1, xfailed=1, skipped=1)
    assert {t["nodeid"].split("::")[1] for t in results["tests"]} == {
        "test_also_passes", "test_diverges", "test_known_divergence", "test_skipped"}
    result.stdout.fnmatch_lines(["*2 deselected*"])  # AAA-001's test and the unmarked one


def test_until_caught_skips_the_rest_of_a_rule_that_failed(suite: pytest.Pytester) -> None:
    """A planted-fault run stops checking a rule at its first failure; other rules run on."""
    suite.makepyfile(test_more=(
        "import pytest\n\n"
        "@pytest.mark.rule('AAA-002')\ndef test_later_of_a_failed_rule():\n    raise AssertionError\n\n"
        "@pytest.mark.rule('AAA-001')\ndef test_other_rule():\n    pass\n"
    ))
    result, results = run(suite, "--until-caught", "-p", "no:randomly", "test_suite.py", "test_more.py")
    result.assert_outcomes(passed=4, failed=1, xfailed=1, skipped=2)
    outcomes = {t["nodeid"].split("::")[1]: t["outcome"] for t in results["tests"]}
    assert outcomes["test_diverges"] == "failed" and outcomes["test_later_of_a_failed_rule"] == "skipped"
    result, _ = run(suite, "-p", "no:randomly", "test_suite.py", "test_more.py")
    result.assert_outcomes(passed=4, failed=2, xfailed=1, skipped=1)


def test_rule_option_refuses_an_unknown_rule(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "oracle.plugin", "--backend", "torch", "--rule", "AAA-001,AAA-01")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rule: not in the catalogue (oracle/rules/): AAA-01"])


def test_results_path_option(suite: pytest.Pytester) -> None:
    suite.runpytest("-p", "oracle.plugin", "--results", "out/r.json")
    assert json.loads((suite.path / "out" / "r.json").read_text())["backend"]["name"] == "impl"
    assert not (suite.path / "reports").exists()


def test_no_results_without_conformance_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    pytester.runpytest("-p", "oracle.plugin").assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()


def test_xpass_outcomes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-strict xfail that passes is xpassed; a strict one fails, as pytest counts them."""
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_xpass='''
import pytest

@pytest.mark.rule("AAA-001")
@pytest.mark.xfail(reason="was broken", strict=False)
def test_loose():
    pass

@pytest.mark.rule("BBB-001")
@pytest.mark.xfail(reason="was broken too", strict=True)
def test_strict():
    pass
''')
    _, results = run(pytester)
    rules = by_id(results["rules"])
    assert rules["AAA-001"]["status"] == "xpassed"
    assert rules["BBB-001"]["status"] == "failed"
    assert "XPASS(strict)" in results["divergences"][0]["message"]


def test_uncatalogued_rule_is_reported(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_typo='import pytest\n\n@pytest.mark.rule("AAA-01")\ndef test_t():\n    pass\n')
    result, results = run(pytester)
    assert by_id(results["rules"])["AAA-01"]["family"] == "uncatalogued"
    result.stdout.fnmatch_lines(["rule ids not in the catalogue (oracle/rules/): AAA-01"])


def test_backend_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fixtures='''
def test_backend(backend, reference):
    assert backend.name == "fault:grad_off" and backend.info()["name"] == "torch"
    assert reference.is_reference and reference.device == "cpu"
''')
    pytester.runpytest("-p", "oracle.plugin", "--backend", "fault:grad_off").assert_outcomes(passed=1)


def test_unknown_backend_fails_clearly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fixtures="def test_backend(backend):\n    pass\n")
    result = pytester.runpytest("-p", "oracle.plugin", "--backend", "fault:no_such_fault")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown planted fault 'no_such_fault'*"])


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is present: nothing to skip")
def test_cuda_without_gpu_skips_conformance(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_cuda='''
import pytest

@pytest.mark.rule("AAA-001")
def test_rule(backend):
    pass

def test_self():
    pass

@pytest.mark.gpu
def test_gpu_only():
    pass
''')
    result = pytester.runpytest("-p", "oracle.plugin", "-rs", "--device", "cuda")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*--device cuda asked but cupy is not installed*",
                                 "*needs cupy and a CUDA device*"])


def test_hypothesis_profiles() -> None:
    from hypothesis import Phase, settings

    ci, dev, thorough = (settings.get_profile(name) for name in ("ci", "dev", "thorough"))
    assert ci.derandomize and ci.deadline is None and ci.database is None and ci.print_blob
    assert dev.max_examples < ci.max_examples
    assert thorough.max_examples >= 10 * ci.max_examples and not thorough.derandomize
    assert thorough.database is not None
    planted = settings.get_profile("planted")  # ci's programs, not shrunk
    assert (planted.max_examples, planted.derandomize) == (ci.max_examples, ci.derandomize)
    assert Phase.shrink in ci.phases and Phase.shrink not in planted.phases


def test_profile_is_recorded(suite: pytest.Pytester) -> None:
    from hypothesis import settings

    before = settings.get_current_profile_name()
    try:
        _, results = run(suite, "--hypothesis-profile", "ci")
    finally:
        settings.load_profile(before)
    assert results["hypothesis_profile"] == "ci"


def test_report_flag_renders_html(suite: pytest.Pytester) -> None:
    pytest.importorskip("jinja2")
    result, _ = run(suite, "--report")
    html = Path(suite.path / "reports" / "index.html")
    assert html.exists(), result.stdout.str()
    result.stdout.fnmatch_lines(["report: *index.html"])


def test_real_divergence_end_to_end(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted fault caught by oracle.differential.check lands in results.json and the report."""
    pytest.importorskip("jinja2")
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_fault='''
import pytest
from hypothesis import given, settings
from oracle.differential import check
from oracle.strategies import programs

@pytest.mark.rule("AAA-001")
@settings(max_examples=30, database=None, deadline=None)
@given(programs())
def test_leaf_flags(backend, program):
    check(program, backend)
''')
    result, results = run(pytester, "--backend", "fault:is_leaf_inverted", "--report")
    result.assert_outcomes(failed=1)
    [divergence] = results["divergences"]
    details = divergence["details"]
    assert "is_leaf" in json.dumps(details["divergence"])
    assert "import torch" in details["repro"]
    assert by_id(results["rules"])["AAA-001"]["programs"] >= 1
    html = (pytester.path / "reports" / "index.html").read_text()
    assert 'id="div-0"' in html and '<button class="copy"' in html


ACCEPTING = f'''
from contextlib import contextmanager

import pytest
import torch

from oracle.backends import InProcess, load_backend
from oracle.differential import check
from oracle.program import Leaf, Observe, Op, Program, Ref

# torch's float32 dot product of these cancels beyond the fixed tolerance (tests/oracle/test_tolerance.py)
DOT = Program([Leaf("a", {A!r}), Leaf("b", {B!r}), Op("y", "matmul", [Ref("a"), Ref("b")]), Observe("y")])


@contextmanager
def float64_matmul():
    original = torch.matmul
    torch.matmul = lambda a, b: original(a.double(), b.double()).to(a.dtype)
    try:
        yield
    finally:
        torch.matmul = original


ACCURATE = InProcess("accurate", torch, patch=float64_matmul)  # rounds once: error-aware judgement passes it


@pytest.mark.rule("AAA-001")
def test_accepted_twice(reference):
    check(DOT, ACCURATE, reference)
    check(DOT, ACCURATE, reference)


@pytest.mark.rule("AAA-002")
def test_accepted_four_times(reference):
    for _ in range(4):
        check(DOT, ACCURATE, reference)


@pytest.mark.rule("AAA-002")
def test_accepted_then_fails(reference):
    check(DOT, ACCURATE, reference)
    raise AssertionError("a later divergence")


@pytest.mark.rule("BBB-001")
def test_within_the_fixed_tolerance(reference):
    check(DOT, load_backend("torch"), reference)
'''


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2", "-p", "no:benchmark"]], ids=["", "xdist"])
def test_error_aware_acceptances_are_counted_per_test_rule_and_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    """Each value the error-aware judgement accepted in a test is counted (passing or failing),
    per test, per rule and in total, the first few of each rule kept with their numbers; values
    within the fixed tolerance count nothing. Shown in the terminal summary and the report."""
    pytest.importorskip("jinja2")
    if workers:
        pytest.importorskip("xdist")
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_accepting=ACCEPTING)
    result, results = run(pytester, *workers, "--report")
    result.assert_outcomes(passed=3, failed=1)
    tests = {nodeid.split("::")[1]: test["error_aware_accepted"]
             for nodeid, test in by_id(results["tests"], "nodeid").items()}
    assert tests == {"test_accepted_twice": 2, "test_accepted_four_times": 4, "test_accepted_then_fails": 1,
                     "test_within_the_fixed_tolerance": 0}
    rules = by_id(results["rules"])
    counts = {rid: (rule["error_aware_accepted"], len(rule["error_aware_examples"])) for rid, rule in
              rules.items()}
    assert counts == {"AAA-001": (2, 2), "AAA-002": (5, ERROR_AWARE_EXAMPLES), "BBB-001": (0, 0),
                      "BBB-002": (0, 0), "BBB-003": (0, 0)}
    assert results["totals"]["error_aware_accepted"] == 7
    example = rules["AAA-002"]["error_aware_examples"][0]
    assert example["nodeid"] in rules["AAA-002"]["tests"]  # whichever finished first (xdist)
    assert (example["name"], example["kind"], example["dtype"]) == ("y", "value", "float32")
    assert (example["ref"], example["ref64"]) == (R32, R64) and abs(example["test"] - R32) > 1e-5
    assert abs(example["test"] - example["ref"]) <= example["allowance"]
    assert "torch.matmul" in example["repro"]
    result.stdout.fnmatch_lines(["7 value(s) outside the fixed tolerance accepted by the error-aware "
                                 "judgement (AAA-001 2, AAA-002 5)"])
    html = (pytester.path / "reports" / "index.html").read_text()
    assert '<b id="error-aware-accepted" class="accepted-count">7</b>' in html


KNOWN = '''
import pytest

KNOWN_IMPL_DIVERGENCES = {"AAA-001": "rounds differently"}


@pytest.mark.rule("AAA-001")
def test_listed():
    raise AssertionError("diverges")


@pytest.mark.rule("AAA-002")
def test_not_listed():
    pass
'''


@pytest.mark.parametrize(("backend", "outcomes"), [("impl", {"xfailed": 1, "passed": 1}),
                                                   ("torch", {"failed": 1, "passed": 1})])
def test_known_impl_divergences_are_strict_xfails_on_impl_only(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, backend: str, outcomes: dict
) -> None:
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_known=KNOWN)
    result = pytester.runpytest("-p", "oracle.plugin", "--backend", backend, "-rx")
    result.assert_outcomes(**outcomes)
    if backend == "impl":
        result.stdout.fnmatch_lines(["*AAA-001: impl rounds differently*"])
        results = json.loads((pytester.path / "reports" / "results.json").read_text())
        assert by_id(results["rules"])["AAA-001"]["known_divergences"] == ["AAA-001: impl rounds differently"]


def test_a_fixed_known_divergence_fails_as_xpass(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_known=KNOWN.replace('raise AssertionError("diverges")', "pass"))
    pytester.runpytest("-p", "oracle.plugin", "--backend", "impl").assert_outcomes(failed=1, passed=1)


@pytest.mark.parametrize("profile", ["ci", "dev", "thorough"])
def test_examples_weight_multiplies_the_active_profile(profile: str) -> None:
    """``@examples(weight)`` runs ``weight`` times the chosen profile's examples, without deadline."""
    from hypothesis import settings

    from oracle.profiles import examples

    before = settings.get_current_profile_name()
    settings.load_profile(profile)
    try:
        chosen = settings.get_profile(profile).max_examples
        assert examples(3).max_examples == 3 * chosen
        assert examples(1.5).max_examples == round(1.5 * chosen)
        assert examples(3).deadline is None
    finally:
        settings.load_profile(before)


CORPUS_SUITE = '''
import pytest
from hypothesis import given, settings
from oracle.differential import check
from oracle.program import Leaf, Observe, Program
from oracle.strategies import programs

@pytest.mark.rule("AAA-001")
@settings(max_examples=8, database=None, deadline=None, derandomize=True)
@given(programs())
def test_first(backend, program):
    check(program, backend)

@pytest.mark.rule("AAA-002")
@settings(max_examples=5, database=None, deadline=None, derandomize=True)
@given(programs())
def test_second(backend, reference, program):
    check(program, backend, reference)
    check(program, backend, reference)  # the same program again: stored once

def test_not_conformance(backend):  # no rule, not in conformance/: its program is not stored
    check(Program([Leaf("x", [1.0, 2.0]), Observe("x")]), backend)
'''
XDIST = ["-p", "xdist", "-n", "2", "-p", "no:benchmark"]


def test_record_corpus_stores_the_suites_programs_with_their_rules(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--record-corpus``: each program a conformance test compared, once per rule, with the
    reference's traces and account; the same corpus with xdist (each worker's part merged)."""
    pytest.importorskip("xdist")
    from oracle.corpus import read_corpus

    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_corpus=CORPUS_SUITE)
    result, results = run(pytester, "--isolation", "none", "--record-corpus", "corpus.json.gz")
    result.assert_outcomes(passed=3)
    written = (pytester.path / "corpus.json.gz").read_bytes()
    corpus = read_corpus(pytester.path / "corpus.json.gz")
    rules = Counter(entry.get("rule") for entry in corpus["programs"])
    checked = {rid: rule["programs"] for rid, rule in by_id(results["rules"]).items()}
    assert set(rules) == {"AAA-001", "AAA-002"} and corpus["count"] == sum(rules.values())
    assert 0 < rules["AAA-001"] <= checked["AAA-001"] and 0 < rules["AAA-002"] <= checked["AAA-002"] // 2
    assert corpus["format"] == 2 and corpus["reference"] == results["reference"]
    assert all(set(entry["reruns"]) == {"float64", "nudged"} for entry in corpus["programs"])
    result, _ = run(pytester, "--isolation", "none", "--record-corpus", "corpus.json.gz", *XDIST)
    result.assert_outcomes(passed=3)
    assert (pytester.path / "corpus.json.gz").read_bytes() == written


def test_replaying_a_recorded_suite_agrees_with_the_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Replayed on the backend the suite ran on, the corpus gives each rule the suite's status and
    program counts (per rule: what the suite checked, less repeats), the failing rule its account."""
    from oracle.cli import main

    monkeypatch.setattr(oracle.rules, "catalogue", lambda: CATALOGUE)
    pytester.makepyfile(test_corpus=CORPUS_SUITE)
    fault = "fault:is_leaf_inverted"
    _, suite = run(pytester, "--backend", fault, "--isolation", "none", "--record-corpus", "corpus.json")
    path, replayed = pytester.path / "corpus.json", pytester.path / "replay" / "results.json"
    status = main(["replay", str(path), "--backend", fault, "--results", str(replayed)])
    results = json.loads(replayed.read_text())
    statuses = {rule["id"]: rule["status"] for rule in results["rules"]}
    assert statuses == {rule["id"]: rule["status"] for rule in suite["rules"]}
    assert statuses["AAA-001"] == "failed" and status == 1
    assert [test["nodeid"] for test in results["tests"]] == ["corpus.json::AAA-001", "corpus.json::AAA-002"]
    corpus = Counter(entry["rule"] for entry in json.loads(path.read_text())["programs"])
    assert {test["rule"]: test["programs"] for test in results["tests"]} == corpus
    details = results["divergences"][0]["details"]
    assert "is_leaf" in details["description"] and "import torch" in details["repro"]
    assert "FAILED corpus.json::AAA-001 - oracle.differential.DivergenceError" in capsys.readouterr().out
