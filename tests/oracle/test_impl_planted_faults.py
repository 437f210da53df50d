"""Every rule of the catalogue is shown to fail: planted faults in impl are caught by the suite.

Each fault of the catalogue package ``impl_faults`` (``--faults-module``) names the rules whose
conformance tests must catch it and, per rule, a phrase its divergence's description must contain
(what kind of difference the fault makes). For each fault, one pytest session runs the tests of
those rules (``--rule``) on impl with the fault planted for the whole run (``--plant NAME``), in
the ``planted`` hypothesis profile (``ci``'s programs, not shrunk: the first failing program is the
evidence). Every rule named must fail with the oracle's divergence (read from the run's
results.json). Without a fault the same tests pass, apart from strict xfails (impl's known
divergences): the conformance suite checks those very programs in the same test command, so a
failure under a fault is the fault's doing. Each session is a process of its
own: a fault monkeypatches impl for a whole session, which must not leak into this process; they
are forked from a server that has imported torch and impl once (tests/helpers/forked_pytest.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from impl_faults import FAULTS
from oracle.rules import catalogue
from tests.helpers import ROOT, forked_pytest

# the conformance run: impl, ci's programs unshrunk, in file order (every selected test runs); impl in
# the session's process, where the fault is planted (what isolation guards against is not what a
# planted impl fault tests, and a worker per session would cost ~0.6 s of each of ~300 sessions)
PLANTED_RUN = "conformance --backend impl --isolation none -q -p no:randomly -p no:cacheprovider".split()
TIMEOUT = 300  # seconds per conformance run; each should take well under a minute
# what a conformance test raises on a divergence (each with a description and a repro)
DIVERGENCES = tuple(f"oracle.{name}" for name in (
    "differential.DivergenceError", "script.ScriptDivergenceError", "numeric.GradientMismatchError"))
NAMED_RULES = sorted({rule for f in FAULTS.values() for rule in f.catches})  # the rules some fault names


def run_conformance(rules: list[str], results: Path, plant: str | None = None) -> dict:
    """Run the tests of ``rules`` on impl (one fresh process) and return its results.json."""
    args = [*PLANTED_RUN, "--hypothesis-profile=planted", "--rule", ",".join(rules)]
    args += ["--results", str(results)]
    if plant is not None:  # the first failure of each rule is the evidence read below
        args += ["--plant", plant, "--until-caught"]
    output = forked_pytest.run(args, ROOT, TIMEOUT)
    assert results.exists(), f"no results.json from pytest {' '.join(args)}:\n{output[-6000:]}"
    return json.loads(results.read_text(encoding="utf-8"))


def test_every_rule_is_shown_to_catch_a_planted_fault() -> None:
    """A rule no planted fault makes fail could be a check that cannot fail."""
    assert sorted(set(catalogue()) - set(NAMED_RULES)) == []
    assert sorted(set(NAMED_RULES) - set(catalogue())) == []


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault_is_caught(fault: str, tmp_path: Path) -> None:
    catches = FAULTS[fault].catches
    results = run_conformance(sorted(catches), tmp_path / "results.json", plant=fault)
    masked = [t["nodeid"] for t in results["tests"] if t["outcome"] == "xfailed"]
    assert not masked, f"{fault}: a strict xfail of impl (a known divergence) masks the fault in {masked}"
    failed: dict[str, dict[str, Any]] = {}
    for test in results["tests"]:
        if test["outcome"] == "failed":
            failed.setdefault(test["rule"], test)
    missed = sorted(set(catches) - set(failed))
    assert not missed, f"{fault} went unnoticed by the tests of {missed} (failed: {sorted(failed)})"
    for rule, phrase in catches.items():
        test = failed[rule]
        index = test.get("divergence")
        divergence = results["divergences"][index] if index is not None else None
        message = (divergence or test).get("message", "")[:500]
        assert divergence and message.startswith(DIVERGENCES), f"{fault} in {rule}, no divergence: {message}"
        details = divergence["details"]
        assert details and "repro" in details, f"no structured divergence for {fault} in {rule}: {message}"
        assert phrase in details["description"], f"{fault} in {rule}: {details['description']}"


def test_planted_runs_draw_the_programs_the_conformance_run_passes() -> None:
    """Without a fault the selected tests pass: the conformance suite of the same test command
    runs every rule on impl in the ``ci`` profile, and ``planted`` draws ``ci``'s very programs
    (derandomized, the same examples and settings), only without shrinking. So a failure under a
    fault is the fault's doing; rerunning each rule's tests unfaulted here would check the same
    programs a second time (about two minutes of CI)."""
    from hypothesis import Phase, settings

    ci, planted = settings.get_profile("ci"), settings.get_profile("planted")
    assert ci.derandomize and ci.database is None
    drawn = ("max_examples", "derandomize", "database", "deadline", "suppress_health_check")
    assert {name: getattr(planted, name) for name in drawn} == {name: getattr(ci, name) for name in drawn}
    assert set(ci.phases) - set(planted.phases) == {Phase.shrink, Phase.explain}


def _impl_state() -> dict[tuple[str, ...], int]:
    """Identity of every attribute of impl's modules, and of the classes and other impl objects
    they hold (an OpDef's forward, a class's methods, an OpDef's node class's methods): what a
    fault may patch."""
    state: dict[tuple[str, ...], int] = {}
    for module_name, module in sorted(sys.modules.items()):
        if module is None or not (module_name == "impl" or module_name.startswith("impl.")):
            continue
        for name, value in list(vars(module).items()):
            state[(module_name, name)] = id(value)
            owner = value if isinstance(value, type) else type(value)
            if owner.__module__.startswith("impl") and hasattr(value, "__dict__"):
                for attr, inner in list(vars(value).items()):
                    state[(module_name, name, attr)] = id(inner)
                    if isinstance(inner, type) and inner.__module__.startswith("impl"):  # OpDef.node_class
                        for method, function in list(vars(inner).items()):
                            state[(module_name, name, attr, method)] = id(function)
    return state


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_faults_restore_impl(fault: str) -> None:
    """Each fault changes impl while active and leaves it as it was afterwards."""
    import impl  # noqa: F401

    with FAULTS[fault].plant():  # once first: it imports the impl modules it patches
        pass
    before = _impl_state()
    with ExitStack() as stack:
        stack.enter_context(FAULTS[fault].plant())
        during = _impl_state()
        assert during != before, f"{fault} changed nothing in impl"
    assert _impl_state() == before, f"{fault} left impl changed"


def usage_error(*options: str) -> str:
    """What pytest with ``options`` prints to stderr, asserting that it refuses them as a usage error."""
    done = subprocess.run([sys.executable, "-m", "pytest", *options, "--collect-only", "-q", __file__],
                          cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    return done.stderr


def test_an_unknown_plant_is_a_usage_error() -> None:
    stderr = usage_error("--plant", "no_such_fault")
    assert "unknown impl fault 'no_such_fault'" in stderr
    assert "sigmoid_grad_off" in stderr


def test_an_unimportable_faults_module_is_a_usage_error() -> None:
    stderr = usage_error("--plant", "grad_off", "--faults-module", "no_such_catalogue")
    assert "cannot import the planted-fault catalogue 'no_such_catalogue'" in stderr
