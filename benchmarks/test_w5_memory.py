"""W5 memory: peak of one forward + backward of the W2 MLP, and growth over 1,000 training steps,
each measured in a fresh process per engine (see ``benchmarks.memory``). Growth is reported,
never asserted: a benchmark does not fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import memory, workloads
from benchmarks.conftest import UNDER_CONSTRUCTION, Recorder
from benchmarks.results import Measurement

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 600


def measure(kind: str, engine: str) -> dict[str, Any]:
    """Run ``python -m benchmarks.memory KIND ENGINE`` in a fresh process; its JSON result."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-m", "benchmarks.memory", kind, engine], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        message = f"{engine} cannot run W5 {kind} yet: {tail[0]}"
        if engine in UNDER_CONSTRUCTION:
            pytest.skip(message)
        pytest.fail(message + "\n" + done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("engine", ["impl", "torch"])
def test_w5_peak_forward_backward(values: Recorder, engine: str) -> None:
    result = measure("peak", engine)
    params = {"workload": "W5", **workloads.MLP_CPU, "measure": "resident peak above baseline"}
    sizes = "-".join(map(str, workloads.MLP_CPU["sizes"]))
    values.value(Measurement(f"W5 peak fwd+bwd {sizes} b{workloads.MLP_CPU['batch']} (MiB)", "cpu", engine,
                             result["peak_rss_mib"], "MiB", params))
    if "peak_traced_mib" in result:
        traced = {"workload": "W5", **workloads.MLP_CPU, "measure": "tracemalloc peak"}
        values.value(Measurement("W5 peak fwd+bwd, tracemalloc (MiB)", "cpu", engine,
                                 result["peak_traced_mib"], "MiB", traced))


@pytest.mark.parametrize("engine", ["impl", "torch"])
def test_w5_growth_over_training(values: Recorder, engine: str) -> None:
    result = measure("growth", engine)
    steps = result["steps"]
    base = {"workload": "W5", **memory.GROWTH_MLP, "steps": steps}

    def record(name: str, key: str, unit: str, measure: str) -> None:
        if key in result:
            values.value(Measurement(name, "cpu", engine, result[key], unit, {**base, "measure": measure},
                                     comparable=False))

    record(f"W5 growth over {steps} steps (KiB)", "rss_growth_kib", "KiB", "resident growth")
    record(f"W5 growth over {steps} steps, tracemalloc (KiB)", "traced_growth_kib", "KiB",
           "tracemalloc growth")
    record("W5 objects left to the cycle collector per step", "cyclic_garbage_per_step", "objects",
           "gc.collect() after one step")
