"""Self-tests of the command line ``python -m oracle``: diff-script's verdicts and exit statuses,
record/replay (replay with torch made unimportable; results.json per rule as the suite writes it),
the report subcommand, and each command without the optional packages it does not need (pytest,
and torch for replay) or with a missing one it needs (a usage error naming what to install)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import oracle.report
from oracle.cli import main
from oracle.corpus import CorpusRecorder, generate_programs
from oracle.reference import reference
from tests.helpers import ROOT

SEEDS = ROOT / "examples" / "seeds"
LEAF_SCRIPT = SEEDS / "seed002_leaf_grad_fn.py"


# ------------------------------------------------------------------ diff-script


def test_diff_script_identical(capsys: pytest.CaptureFixture) -> None:
    assert main(["diff-script", str(LEAF_SCRIPT), "--backend", "torch"]) == 0
    assert capsys.readouterr().out.strip() == f"{LEAF_SCRIPT}: identical on torch and torch"


def test_diff_script_divergent_names_the_first_differing_line(capsys: pytest.CaptureFixture) -> None:
    assert main(["diff-script", str(LEAF_SCRIPT), "--backend", "fault:is_leaf_inverted"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{LEAF_SCRIPT}: divergent on fault:is_leaf_inverted (stdout line 3)"
    assert out[1].split() == ["torch:", "'True'"]
    assert out[2].split() == ["fault:is_leaf_inverted:", "'False'"]


def test_diff_script_json(capsys: pytest.CaptureFixture) -> None:
    assert main(["diff-script", str(LEAF_SCRIPT), "--backend", "fault:warning_dropped", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["identical"], result["channel"], result["line"]) == (False, "warnings", 1)
    assert result["reference"].startswith("<script>:10: UserWarning: The .grad attribute of a Tensor")
    assert result["test"] is None
    assert result["test_run"]["stdout"] == result["reference_run"]["stdout"]


def test_diff_script_of_several_counts_the_identical(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Files and folders (their *.py): each verdict, then a count naming the divergent ones."""
    folder = tmp_path / "scripts"
    folder.mkdir()
    for name in ("a_leaf.py", "b_leaf.py"):
        (folder / name).write_text(LEAF_SCRIPT.read_text())
    (folder / "notes.txt").write_text("not a script")
    assert main(["diff-script", str(folder), str(LEAF_SCRIPT), "--backend", "fault:is_leaf_inverted"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("0 of 3 scripts identical on fault:is_leaf_inverted; divergent: a_leaf.py (stdout "
                       "line 3), b_leaf.py (stdout line 3), seed002_leaf_grad_fn.py (stdout line 3)")
    assert main(["diff-script", str(folder), "--backend", "torch", "--json"]) == 0
    assert [Path(d["path"]).name for d in json.loads(capsys.readouterr().out)] == ["a_leaf.py", "b_leaf.py"]
    assert main(["diff-script", str(folder / "a_leaf.py"), str(LEAF_SCRIPT), "--backend", "torch"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 of 2 scripts identical on torch"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["diff-script", "no_such_script.py"], "no such script"),
        (["diff-script", str(ROOT / "docs")], "no scripts in"),
        (["diff-script", str(LEAF_SCRIPT), "--backend", "fault:nope"], "unknown planted fault"),
        (["diff-script", str(LEAF_SCRIPT), "--backend", "no_such_module_xyz"], "cannot import backend"),
        (["replay", "no_such_corpus.json"], "cannot read corpus"),
        (["record", "--out", "x.json", "--count", "0"], "--count must be at least 1"),
        (["report", "--results", "no_such_results.json"], "no results file"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_argparse_usage_errors_exit_2() -> None:
    for argv in ([], ["diff-script"], ["no-such-command"], ["record"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2


def test_diff_script_refuses_a_shadowing_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The reference run verifies the reference in its subprocess: a package named torch that is
    not the installed PyTorch makes diff-script a usage error naming what was found where."""
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("__version__ = '2.13.0'\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(shadow.parent), str(ROOT)]))
    script = tmp_path / "script.py"  # not a script whose reference run this process cached
    script.write_text(LEAF_SCRIPT.read_text())
    assert main(["diff-script", str(script), "--backend", "impl"]) == 2
    err = capsys.readouterr().err
    assert "the reference is not the pinned PyTorch" in err
    assert f"'import torch' gave {shadow / '__init__.py'}" in err and "shadows it" in err


def test_python_dash_m_oracle_entry_point() -> None:
    script = str(SEEDS / "seed003_hook_order.py")
    argv = [sys.executable, "-m", "oracle", "diff-script", script, "--backend", "fault:grad_off"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    assert "divergent on fault:grad_off (stdout line 3)" in done.stdout
    assert "'loss.grad: tensor(1.)'" in done.stdout and "'loss.grad: tensor(1.0010)'" in done.stdout


# ------------------------------------------------------------------ record / replay


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.json"
    assert main(["record", "--out", str(path), "--count", "12", "--seed", "5"]) == 0
    return path


def test_record_stores_programs_traces_reruns_and_the_reference(corpus: Path) -> None:
    import torch

    data = json.loads(corpus.read_text())
    assert (data["format"], data["count"], data["seed"], data["device"]) == (2, 12, 5, "cpu")
    assert data["reference"]["version"] == torch.__version__
    assert data["reference"]["file"] == str(Path(torch.__file__).resolve())
    assert data["reference"]["pinned"] == data["reference"]["accepted"] == "2.13.0"
    assert len(data["programs"]) == 12
    assert len({json.dumps(entry["program"]) for entry in data["programs"]}) == 12
    assert all(entry["trace"]["events"] for entry in data["programs"])
    assert all(set(entry["reruns"]) == {"float64", "nudged"} for entry in data["programs"])
    assert not any("rule" in entry for entry in data["programs"])  # generic programs: no rule


def test_record_is_deterministic(corpus: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    assert main(["record", "--out", str(again), "--count", "12", "--seed", "5"]) == 0
    assert again.read_bytes() == corpus.read_bytes()


def test_generated_programs_depend_on_the_seed() -> None:
    assert [p.to_json() for p in generate_programs(5, 1)] != [p.to_json() for p in generate_programs(5, 2)]


def replay(corpus: Path, tmp_path: Path, *options: str) -> tuple[int, dict]:
    """``python -m oracle replay CORPUS OPTIONS``: its exit status and the results.json it wrote."""
    results = tmp_path / "out" / "results.json"
    status = main(["replay", str(corpus), "--results", str(results), *options])
    return status, json.loads(results.read_text())


def test_replay_on_torch_passes(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status, results = replay(corpus, tmp_path, "--backend", "torch")
    assert status == 0
    [test] = results["tests"]
    assert (test["nodeid"], test["rule"], test["outcome"]) == ("corpus.json::(no rule)", None, "passed")
    assert (test["programs"], test["program_outcomes"]) == (12, {"passed": 12})
    assert results["reference"] == json.loads(corpus.read_text())["reference"]
    assert results["corpus"] == {"path": str(corpus), "format": 2, "programs": 12}
    assert results["backend"]["name"] == "torch" and results["isolation"] == "process"
    out = capsys.readouterr().out
    assert f"conformance: torch 2.13.0+cpu vs torch 2.13.0+cpu (cpu, corpus {corpus})" in out
    assert re.search(r"^total +1 +0 +0 +0 +0 +0 +12$", out, re.M), out
    assert f"results: {tmp_path / 'out' / 'results.json'}" in out


def test_replay_report(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("jinja2")
    status, _ = replay(corpus, tmp_path, "--backend", "fault:grad_off", "--report")
    html = tmp_path / "out" / "index.html"
    assert status == 1 and f"report: {html}" in capsys.readouterr().out
    page = html.read_text()
    assert f'<dd id="corpus">{corpus}: 12 recorded programs replayed' in page and 'id="div-0"' in page


def test_replay_catches_a_planted_fault(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status, results = replay(corpus, tmp_path, "--backend", "fault:grad_off", "--json", "--isolation", "none")
    assert status == 1
    assert json.loads(capsys.readouterr().out) == results  # --json prints the results document
    [test] = results["tests"]
    outcomes = test["program_outcomes"]
    assert test["outcome"] == "failed" and outcomes["failed"] >= 1 and sum(outcomes.values()) == 12
    assert set(test["classes"]) == {"gradient"} and results["totals"]["classes"]["gradient"] >= 1
    assert test["message"].startswith("oracle.differential.DivergenceError: divergence at event")
    [divergence] = results["divergences"]
    details = divergence["details"]  # the first failing program's account, as DivergenceError.to_dict()
    account = {"description", "divergences", "classes", "program", "ref_trace", "test_trace", "repro"}
    assert account <= set(details)
    assert details["classes"] == {"gradient": len(details["divergences"])}
    assert "import torch" in details["repro"] and "differs" in details["description"]


def test_replay_fails_a_crash_or_hang_and_goes_on(tmp_path: Path) -> None:
    """The backend runs in a worker process: a program that kills it or hangs is a crash
    divergence at its step, the next program runs on a fresh worker, the replay ends normally."""
    from oracle.program import Leaf, Observe, Op, Program, Ref

    ref, recorder = reference(), CorpusRecorder()
    for rule, op in (("OPS-001", "exp"), ("OPS-002", "sin"), ("OPS-003", "neg")):  # segfault, hang, fine
        program = Program([Leaf("a", [0.5, 1.0]), Op("y", op, [Ref("a")]), Observe("y")])
        recorder.add(program, rule, ref.trace(program), ref)
    recorder.write(tmp_path / "fragile.json")
    options = ("--backend", "tests.helpers.engines.fragile", "--backend-timeout", "2")
    status, results = replay(tmp_path / "fragile.json", tmp_path, *options)
    assert status == 1
    tests = {test["rule"]: test for test in results["tests"]}
    assert {rule: (test["outcome"], test["classes"]) for rule, test in tests.items()} == {
        "OPS-001": ("failed", {"crash": 1}), "OPS-002": ("failed", {"crash": 1}), "OPS-003": ("passed", {})}
    died, hung = (results["divergences"][tests[rule]["divergence"]]["details"]["description"]
                  for rule in ("OPS-001", "OPS-002"))
    assert "backend process died (SIGSEGV) at step 1" in died
    assert "backend process timed out after 2 s at step 1" in hung


def test_replay_ignores_classes(corpus: Path, tmp_path: Path) -> None:
    status, results = replay(corpus, tmp_path, "--backend", "fault:grad_off", "--ignore", "gradients")
    assert status == 0 and results["ignore"] == ["gradient"]
    [test] = results["tests"]
    assert test["outcome"] == "passed" and test["program_outcomes"] == {"passed": 12}
    assert test["ignored"]["gradient"] >= 1 and not test["classes"]


@pytest.mark.parametrize(
    "options, message",
    [
        (["--ignore", "values,nope"], "--ignore: unknown class nope; known: value, gradient"),
        (["--backend", "no_such_module_xyz"], "cannot import backend module 'no_such_module_xyz'"),
    ],
)
def test_replay_usage_errors(
    corpus: Path, tmp_path: Path, options: list[str], message: str, capsys: pytest.CaptureFixture
) -> None:
    assert main(["replay", str(corpus), "--results", str(tmp_path / "r.json"), *options]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_replay_refuses_a_file_that_is_not_a_corpus(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"format": 9, "programs": []}))
    assert main(["replay", str(path)]) == 2
    assert "not a corpus of format 1 or 2 (format 9)" in capsys.readouterr().err


def test_replay_groups_the_programs_by_rule(tmp_path: Path) -> None:
    """One result per rule (nodeid CORPUS::RULE), the programs without a rule as one more; the
    rules' statuses in results.json as the suite gives them."""
    ref = reference()
    recorder = CorpusRecorder()
    programs = generate_programs(6, 3)
    rules = ["LEAF-001", "LEAF-001", "HOOK-001", None, None, "LEAF-001"]
    for rule, program in zip(rules, programs, strict=True):
        recorder.add(program, rule, ref.trace(program), ref)
    recorder.add(programs[0], "LEAF-001", ref.trace(programs[0]), ref)  # again: stored once
    path = tmp_path / "rules.json"
    recorder.write(path)
    status, results = replay(path, tmp_path, "--backend", "torch")
    assert status == 0
    tests = {test["nodeid"]: test for test in results["tests"]}
    assert {nodeid: test["programs"] for nodeid, test in tests.items()} == {
        "rules.json::HOOK-001": 1, "rules.json::LEAF-001": 3, "rules.json::(no rule)": 2}
    assert [test["rule"] for test in results["tests"]] == ["HOOK-001", "LEAF-001", None]
    rules = {rule["id"]: rule for rule in results["rules"]}
    assert rules["LEAF-001"]["status"] == "passed" and rules["LEAF-001"]["tests"] == ["rules.json::LEAF-001"]
    assert rules["LEAF-002"]["status"] == "unchecked"
    status, results = replay(path, tmp_path, "--backend", "fault:is_leaf_inverted")
    assert status == 1
    assert {rule["id"]: rule["status"] for rule in results["rules"] if rule["tests"]} == {
        "HOOK-001": "failed", "LEAF-001": "failed"}


ACCURATE = """
import torch as _torch

__version__ = "accurate"


def matmul(a, b):  # rounds once: torch's float32 dot product of the test's terms cancels
    return _torch.matmul(a.double(), b.double()).to(a.dtype)


def __getattr__(name):
    return getattr(_torch, name)
"""


def test_replay_judges_low_precision_values_with_the_recorded_reruns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A float32 value outside the fixed tolerance, as accurate as torch's by the error-aware
    judgement, passes as in the suite: the corpus holds the reference's reruns. A format-1 corpus
    (no reruns) still replays; there the value fails, saying the rerun is missing."""
    from tests.oracle.test_tolerance import DOT

    (tmp_path / "accurate_torch.py").write_text(ACCURATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    ref, recorder = reference(), CorpusRecorder()
    recorder.add(DOT, "OPS-001", ref.trace(DOT), ref)
    corpus = recorder.write(tmp_path / "dot.json")
    status, results = replay(tmp_path / "dot.json", tmp_path, "--backend", "accurate_torch")
    assert status == 0, results["divergences"]
    [test] = results["tests"]
    assert (test["outcome"], test["error_aware_accepted"]) == ("passed", 1)
    old = {"format": 1, "torch_version": corpus["reference"]["version"],
           "programs": [{"program": e["program"], "trace": e["trace"]} for e in corpus["programs"]]}
    (tmp_path / "format1.json").write_text(json.dumps(old))
    status, results = replay(tmp_path / "format1.json", tmp_path, "--backend", "accurate_torch")
    assert status == 1
    assert results["reference"] == {"name": "torch", "version": corpus["reference"]["version"]}
    [test] = results["tests"]
    assert test["nodeid"] == "format1.json::(no rule)" and test["classes"] == {"value": 1}
    assert "the corpus holds no rerun of this program (float64)" in test["message"]


# ------------------------------------------------------------------ without optional packages

BLOCKING = """
import sys

blocked = sys.argv[1].split(",")
for name in blocked:
    sys.modules[name] = None
from oracle.cli import main

status = main(sys.argv[2:])
loaded = {m.split(".")[0] for m, module in list(sys.modules.items()) if module is not None}
print("loaded of the blocked:", sorted(loaded & set(blocked)))
sys.exit(status)
"""


def run_without(modules: list[str], argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """``python -m oracle ARGV`` in a subprocess where ``modules`` cannot be imported: None in its
    ``sys.modules``, and shadowed by modules that raise ImportError in the processes it starts (a
    script's runs, a backend's worker)."""
    shadows = tmp_path / "blocked"
    shadows.mkdir(exist_ok=True)
    for name in modules:
        (shadows / f"{name}.py").write_text(f"raise ImportError('{name} is blocked in this test')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadows), str(ROOT)])}
    argv = [sys.executable, "-c", BLOCKING, ",".join(modules), *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)


def test_replay_needs_no_torch_pytest_or_hypothesis(corpus: Path, tmp_path: Path) -> None:
    """Replay on impl (in its worker process) where torch, pytest and hypothesis cannot be imported."""
    argv = ["replay", str(corpus), "--backend", "impl"]
    done = run_without(["torch", "pytest", "hypothesis"], argv, tmp_path)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "loaded of the blocked: []" in done.stdout
    assert re.search(r"conformance: impl \S+ vs torch 2\.13\.0\S* \(cpu, corpus ", done.stdout), done.stdout
    results = json.loads((tmp_path / "reports" / "results.json").read_text())
    [test] = results["tests"]
    assert test["programs"] == 12 and results["backend"]["imports_torch"] is False
    assert (done.returncode == 0) == (test["outcome"] == "passed")


def test_record_and_diff_script_need_no_pytest(tmp_path: Path) -> None:
    done = run_without(["pytest"], ["record", "--out", "c.json", "--count", "3"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "recorded 3 programs on torch 2.13.0" in done.stdout and "loaded of the blocked: []" in done.stdout
    argv = ["diff-script", str(LEAF_SCRIPT), "--backend", "fault:is_leaf_inverted"]
    done = run_without(["pytest"], argv, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "divergent on fault:is_leaf_inverted (stdout line 3)" in done.stdout
    assert "loaded of the blocked: []" in done.stdout


@pytest.mark.parametrize(
    "module, argv, message",
    [
        ("hypothesis", ["record", "--out", "c.json"], "record needs hypothesis: pip install hypothesis"),
        ("jinja2", ["report", "--results", "results.json"], "report needs jinja2: pip install jinja2"),
        ("jinja2", ["replay", "CORPUS", "--report"], "replay --report needs jinja2: pip install jinja2"),
    ],
)
def test_a_missing_optional_dependency_is_a_usage_error(
    module: str, argv: list[str], message: str, corpus: Path, tmp_path: Path
) -> None:
    (tmp_path / "results.json").write_text("{}")
    done = run_without([module], [str(corpus) if arg == "CORPUS" else arg for arg in argv], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"python -m oracle {argv[0]}: error: {message}" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "reports").exists()


# ------------------------------------------------------------------ report


def test_report_calls_write_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    results = tmp_path / "results.json"
    results.write_text("{}")
    calls = []

    def fake_write_report(results_path: Path, out_dir: Path) -> Path:
        calls.append((results_path, out_dir))
        return out_dir / "index.html"

    monkeypatch.setattr(oracle.report, "write_report", fake_write_report)
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    assert calls == [(results, tmp_path / "out")]
    assert capsys.readouterr().out.strip() == str(tmp_path / "out" / "index.html")
