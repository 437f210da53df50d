"""benchmarks/gpu_check.sh, the script a session lent a GPU runs first, run here in its stand-in mode
(``GPU_CHECK_STANDIN=1``: the cupy stand-in as cupy in every process, torch on cpu as the reference
and as torch CUDA's stand-in in the benchmarks, a small selection per part), so that its first real
run does not fail on a typo: every part runs and leaves its results, the summary is printed last,
and a part that overruns its time limit leaves the others' results and makes the exit status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import torch

from tests.helpers import ROOT

SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"
PARTS = ["facts", "device tests", "conformance", "bench_gpu"]


def gpu_check(out: Path, **env: str) -> subprocess.CompletedProcess:
    variables = {**os.environ, "GPU_CHECK_STANDIN": "1", "OUT": str(out), "PYTHON": sys.executable, **env}
    for name in ("PYTHONPATH", "PYTEST_XDIST_WORKER"):  # the script sets its own; run as on the machine
        variables.pop(name, None)
    return subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=variables, capture_output=True, text=True,
                          timeout=300)


def test_standin_mode_runs_every_part(tmp_path: Path) -> None:
    done = gpu_check(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "benchmarks.json", "gpu_check.tar.gz", "results.json", "summary.json", "summary.txt"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [p["part"] for p in summary["parts"]] == PARTS and summary["every_part_ran"]
    assert all(p["status"] == "passed" for p in summary["parts"]), summary["parts"]
    assert summary["facts"]["mode"] == "standin" and summary["facts"]["cupy"].startswith("stand-in")
    assert summary["device_tests"]["tests"] > 50 and summary["device_tests"]["failures"] == 0
    conformance = summary["conformance"]
    release = torch.__version__.split("+")[0]
    assert conformance["device"] == "cuda" and conformance["reference"]["accepted"] == release
    assert conformance["tests"]["tests"] > 0 and conformance["programs"] > 0
    assert conformance["version_only"] == {}  # the pinned release: the rule is off
    workloads = {row["name"].split()[0] for row in summary["bench"] if row["ratio"] is not None}
    assert workloads == {"W1", "W2", "W3"}
    text = (tmp_path / "summary.txt").read_text()
    assert done.stdout.rstrip().endswith(text.rstrip())  # the table is printed last
    for line in ("gpu_check (standin mode)", "divergences set aside (rule off", "W1 chain N=1e3"):
        assert line in text
    with tarfile.open(tmp_path / "gpu_check.tar.gz") as tar:
        names = {Path(name).name for name in tar.getnames()}
    assert {"facts.json", "parts.jsonl", "device.log", "device.xml", "conformance.log", "results.json",
            "bench.log", "benchmarks.json"} <= names


def test_a_part_that_leaves_no_results_did_not_run(tmp_path: Path) -> None:
    """Benchmarks that measured nothing on 'cuda' (here: HIPS autograd's, which skip there) are no
    bench part that ran, though pytest exited with 0."""
    done = gpu_check(tmp_path, GPU_CHECK_LIMITS="60 1 1 120", GPU_CHECK_BENCH_ARGS="-k autograd")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert done.returncode == 1 and summary["parts"][3]["status"] == "passed, no results"


def test_a_part_over_its_limit_is_reported_and_fails_the_run(tmp_path: Path) -> None:
    done = gpu_check(tmp_path, GPU_CHECK_LIMITS="1 1 1 1")
    assert done.returncode == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [p["status"] for p in summary["parts"]] == ["timeout"] * 4 and not summary["every_part_ran"]
    assert done.stdout.rstrip().endswith("NOT every part ran; logs and results: gpu_check.tar.gz")
