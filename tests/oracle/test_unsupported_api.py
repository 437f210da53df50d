"""A backend that lacks part of torch's API (tests/helpers/engines/partial.py): what it lacks is
"unsupported", not a failure, and the rest of the suite still judges it.

The harness's own use of a missing name marks the step unsupported (oracle/trace.py ``lacked``);
an AttributeError raised inside the backend's code is the backend's behaviour, compared as an
error. A program whose divergences are all unsupported is "unsupported"; a test none of whose
programs failed but some unsupported is counted as unsupported in results.json, with the names and
how many programs needed each; the capability probe lists what the backend lacks beforehand.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import impl
import oracle.differential
from oracle.backends import load_backend
from oracle.capabilities import probe
from oracle.differential import DivergenceError, TestLog, check, recording
from oracle.program import Leaf, Observe, Op, Program, Ref
from oracle.reference import reference
from tests.helpers import ROOT, forked_pytest
from tests.helpers.engines import partial

pytest_plugins = "pytester"

PARTIAL = "tests.helpers.engines.partial"
MISSING = {"ops": ["torch.logaddexp", "torch.logaddexp2"], "grad modes": ["torch.inference_mode"]}  # LACKS


def binary(op: str) -> Program:
    return Program([Leaf("a", [0.5, 1.0]), Leaf("b", [2.0, -1.0]), Op("y", op, [Ref("a"), Ref("b")]),
                    Observe("y")])


@contextmanager
def own_log() -> Iterator[TestLog]:
    """A log of the checks in the block, kept from the oracle plugin's log of this test, which
    would skip the test itself as "unsupported" (as it does a conformance test) once a program is."""
    plugins_logs = oracle.differential._open_logs
    oracle.differential._open_logs = []
    try:
        with recording() as log:
            yield log
    finally:
        oracle.differential._open_logs = plugins_logs


def test_a_name_the_backend_lacks_makes_the_program_unsupported() -> None:
    with own_log() as log:
        check(binary("logaddexp"), load_backend(PARTIAL), reference())  # does not raise
    assert dict(log.outcomes) == {"unsupported": 1}
    assert dict(log.lacks) == {"torch.logaddexp": 1} and dict(log.classes) == {"unsupported": 1}


def test_an_attribute_error_inside_the_backends_code_is_its_behaviour() -> None:
    """partial.hypot exists but fails inside with an AttributeError: a failing program, not an
    unsupported one (else any backend bug raising AttributeError would pass as 'unsupported')."""
    with own_log() as log, pytest.raises(DivergenceError) as diverged:
        check(binary("hypot"), load_backend(PARTIAL), reference())
    assert dict(log.outcomes) == {"failed": 1} and not log.lacks
    assert diverged.value.divergence.kind == "error"


def test_the_probe_lists_what_the_backend_lacks() -> None:
    found = probe(load_backend(PARTIAL))
    assert found["missing"] == MISSING
    assert (found["unknown"], found["device_error"]) == ({}, None)
    assert probe(load_backend("impl"))["missing"] == {}


def test_a_backend_that_cannot_use_the_device_skips_the_tests_with_its_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_it='import pytest\n\n@pytest.mark.rule("LEAF-001")\ndef test_t(backend):\n'
                                '    pass\n')
    result = pytester.runpytest("-p", "oracle.plugin", "-rs", "--backend", PARTIAL, "--device", "xpu")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*--device xpu: the backend cannot place a tensor there (*"])


def test_a_partial_backend_through_the_suite(tmp_path: Path) -> None:
    """GM-001 (no_grad and friends) passes; GM-002 (inference_mode, which it lacks) is unsupported,
    with the programs that needed it counted; results.json's headers show the module's version."""
    results_path = tmp_path / "results.json"
    output = forked_pytest.run(["conformance", "--rule", "GM-001,GM-002", "--backend", PARTIAL,
                                "--hypothesis-profile=planted", "-p", "no:randomly", "-p", "no:cacheprovider",
                                "--results", str(results_path)], ROOT, 300)
    assert results_path.exists(), output[-3000:]
    results = json.loads(results_path.read_text())
    tests = {test["rule"]: test for test in results["tests"]}
    assert (tests["GM-001"]["outcome"], tests["GM-001"]["lacks"]) == ("passed", {})
    assert tests["GM-001"]["program_outcomes"] == {"passed": tests["GM-001"]["programs"]}
    lacking = tests["GM-002"]
    needed = lacking["lacks"]["torch.inference_mode"]
    assert lacking["outcome"] == "unsupported" and set(lacking["lacks"]) == {"torch.inference_mode"}
    assert 0 < needed < lacking["programs"] and lacking["program_outcomes"] == {
        "unsupported": needed, "passed": lacking["programs"] - needed}
    assert lacking["reason"] == (f"unsupported: {needed} of {lacking['programs']} programs need "
                                 f"torch.inference_mode ({needed})")
    rules = {rule["id"]: rule for rule in results["rules"] if rule["status"] != "unchecked"}
    assert {rid: rule["status"] for rid, rule in rules.items()} == {"GM-001": "passed",
                                                                     "GM-002": "unsupported"}
    by_rule = sum(t["lacks"]["torch.inference_mode"] for t in results["tests"] if t["rule"] == "GM-002")
    assert rules["GM-002"]["lacks"] == {"torch.inference_mode": by_rule}  # over the rule's tests
    gm002_tests = sum(t["rule"] == "GM-002" for t in results["tests"])  # each unsupported
    assert results["totals"]["unsupported"] == gm002_tests and results["totals"]["failed"] == 0
    capabilities = results["capabilities"]
    assert capabilities["probe"]["missing"] == MISSING
    assert capabilities["families"] == [{"family": "grad modes", "lacks": {"torch.inference_mode": by_rule}}]
    # the headers: read from the modules imported (no distribution has partial's version)
    assert results["backend"]["version"] == partial.__version__ != impl.__version__
    assert results["backend"]["module"] == PARTIAL and results["backend"]["imports_torch"] is False
    assert results["reference"]["version"] == __import__("torch").__version__
    assert "the backend lacks (programs needing it): torch.inference_mode" in output
