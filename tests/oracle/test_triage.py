"""The triage profile on a weak backend (tests/helpers/engines/weak.py): failing programs are collected,
not raised and shrunk, up to ``--test-failures`` per test, and a rule's tests stop after
``--rule-budget`` seconds; results.json says which tests were cut short and why.

The whole conformance suite on the weak engine in the triage profile took 2 min 51 s (-n 2, on the
2-core development machine shared with other runs); here, a few tests of two rules.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import Phase, settings

from tests.helpers import ROOT, forked_pytest
from tests.helpers.engines.weak import SORT_SECONDS

CAP, BUDGET = 2, 1.0
# OPS-001: exp is wrong on the weak engine from its first program; OPS-008: sort takes 0.2 s a call
# (its tests' second failing program comes after the 1 s budget)
UNARY = [f"conformance/test_ops.py::test_unary_ops[{op}]" for op in ("exp", "log", "sqrt")]
SORTING = [f"conformance/test_ops.py::test_sorting_ops[{op}]" for op in ("sort", "argsort", "msort")]


def test_triage_does_not_shrink() -> None:
    assert Phase.shrink not in settings.get_profile("triage").phases


def triage(tests: list[str], budget: float, tmp_path: Path) -> tuple[dict, dict, str]:
    """Run ``tests`` on the weak engine in triage with the cap CAP and a rule budget of ``budget``
    seconds: results.json, its tests by name, and the output."""
    results_path = tmp_path / "results.json"
    args = ["--backend", "tests.helpers.engines.weak", "--hypothesis-profile=triage",
            "--test-failures", str(CAP), "--rule-budget", str(budget), "--results", str(results_path),
            "-p", "no:randomly", "-p", "no:cacheprovider"]
    output = forked_pytest.run([*tests, *args], ROOT, 300)
    assert results_path.exists(), output[-3000:]
    results = json.loads(results_path.read_text())
    assert results["hypothesis_profile"] == "triage"
    assert results["triage"] == {"test_failures": CAP, "rule_budget": budget}
    return results, {test["nodeid"].split("::")[1]: test for test in results["tests"]}, output


def test_triage_collects_failures_up_to_the_cap(tmp_path: Path) -> None:
    """exp's test collects CAP failing programs, each checked once (none shrunk); the rule's other
    tests run on (each op's test tells whether that op is right). The budget is ample here: a
    loaded machine must not turn the cap into a cut for time."""
    results, tests, output = triage(UNARY, 120.0, tmp_path)
    exp = tests["test_unary_ops[exp]"]
    assert (exp["outcome"], exp["program_outcomes"], exp["programs"]) == ("failed", {"failed": CAP}, CAP)
    assert exp["cut_short"] == f"{CAP} failing programs collected (the cap) after {CAP} programs"
    exp_divergence = next(d for d in results["divergences"] if d["nodeid"].endswith("[exp]"))
    assert len(exp_divergence["details"]["other_programs"]) == CAP - 1
    for op in ("log", "sqrt"):
        other = tests[f"test_unary_ops[{op}]"]
        assert other["outcome"] in ("passed", "failed") and other["programs"] > 0
        assert other["program_outcomes"].get("failed", 0) <= CAP
    ops_cut_short = sum(1 for op in ("exp", "log", "sqrt") if tests[f"test_unary_ops[{op}]"]["cut_short"])
    assert [(rule["id"], rule["status"], rule["cut_short"]) for rule in results["rules"]
            if rule["status"] != "unchecked"] == [("OPS-001", "failed", ops_cut_short)]
    cut_short = [t["nodeid"] for t in results["tests"] if t["cut_short"]]
    assert results["totals"]["cut_short"] == len(cut_short) >= 1
    assert f"{len(cut_short)} test(s) cut short by the triage profile's caps" in output


def test_triage_stops_a_rule_at_its_budget(tmp_path: Path) -> None:
    """sort's test (its first program, an edge program requiring grad, reaches the weak sum; the
    others pass, slowly) is stopped when the rule's budget is spent, before the cap; the rule's
    other tests are skipped. Its first program is checked however slowly the test starts."""
    results, tests, output = triage(SORTING, BUDGET, tmp_path)
    sort = tests["test_sorting_ops[sort]"]
    outcomes = sort["program_outcomes"]
    assert outcomes["failed"] == 1 == sort["programs"] - outcomes.get("passed", 0)
    assert 0 < sort["programs"] <= BUDGET / SORT_SECONDS + 1
    assert sort["cut_short"] == f"time budget of {BUDGET:g} s spent after {sort['programs']} programs"
    for op in ("argsort", "msort"):
        skipped = tests[f"test_sorting_ops[{op}]"]
        assert skipped["outcome"] == "skipped"
        assert skipped["reason"] == f"triage: this rule spent its budget of {BUDGET:g} s (--rule-budget)"
    assert [(rule["id"], rule["status"], rule["cut_short"]) for rule in results["rules"]
            if rule["status"] != "unchecked"] == [("OPS-008", "failed", 1)]
    assert results["totals"]["cut_short"] == 1
    assert "1 test(s) cut short by the triage profile's caps" in output
