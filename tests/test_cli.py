"""Self-tests of the command line ``python -m oracle``: diff-script's verdicts and exit statuses,
record/replay (replay with torch made unimportable), and the report subcommand."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import oracle.report
from oracle.cli import main
from oracle.corpus import generate_programs

ROOT = Path(__file__).resolve().parent.parent
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


@pytest.mark.parametrize(
    "argv, message",
    [
        (["diff-script", "no_such_script.py"], "no such script"),
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


def test_record_stores_programs_traces_and_versions(corpus: Path) -> None:
    import torch

    data = json.loads(corpus.read_text())
    assert (data["format"], data["count"], data["seed"], data["device"]) == (1, 12, 5, "cpu")
    assert data["torch_version"] == torch.__version__
    assert len(data["programs"]) == 12
    assert len({json.dumps(entry["program"]) for entry in data["programs"]}) == 12
    assert all(entry["trace"]["events"] for entry in data["programs"])


def test_record_is_deterministic(corpus: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.json"
    assert main(["record", "--out", str(again), "--count", "12", "--seed", "5"]) == 0
    assert again.read_bytes() == corpus.read_bytes()


def test_generated_programs_depend_on_the_seed() -> None:
    assert [p.to_json() for p in generate_programs(5, 1)] != [p.to_json() for p in generate_programs(5, 2)]


def test_replay_on_torch_passes(corpus: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["replay", str(corpus), "--backend", "torch"]) == 0
    assert "12 passed, 0 failed" in capsys.readouterr().out


def test_replay_catches_a_planted_fault(corpus: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["replay", str(corpus), "--backend", "fault:grad_off", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] >= 1 and result["passed"] + result["failed"] == 12
    assert all("divergence at event" in f["divergence"] for f in result["failures"])
    assert any("differs" in f["divergence"] for f in result["failures"])


def test_replay_needs_no_torch(corpus: Path, tmp_path: Path) -> None:
    """Replay on impl in a process where importing torch fails."""
    runner = tmp_path / "replay_without_torch.py"
    runner.write_text(
        textwrap.dedent(
            f"""
            import sys

            class BlockTorch:
                def find_spec(self, name, path=None, target=None):
                    if name == "torch" or name.startswith("torch."):
                        raise ImportError("torch is blocked in this test")

            sys.meta_path.insert(0, BlockTorch())
            from oracle.cli import main
            status = main(["replay", {str(corpus)!r}, "--backend", "impl"])
            print("torch imported:", any(m.split(".")[0] == "torch" for m in sys.modules))
            sys.exit(status)
            """
        )
    )
    done = subprocess.run([sys.executable, str(runner)], capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    counts = re.search(r"replay on impl against torch \S+: (\d+) passed, (\d+) failed", done.stdout)
    assert counts, done.stdout + done.stderr
    assert int(counts[1]) + int(counts[2]) == 12
    assert (done.returncode == 0) == (counts[2] == "0")
    assert "torch imported: False" in done.stdout


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
