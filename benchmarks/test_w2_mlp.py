"""W2 MLP training step (forward, cross-entropy, backward, SGD): 784-512-512-10 at batch 256 on
CPU, width 4096 at batch 4096 on GPU; impl, torch, and HIPS autograd on CPU."""

from __future__ import annotations

import pytest

from benchmarks import autograd_peer, workloads
from benchmarks.conftest import DEVICES, Recorder, engine_or_skip

ROUNDS = {"cpu": 30, "cuda": 30}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("engine_name", ["impl", "torch", "autograd"])
def test_w2_mlp_step(recorder: Recorder, engine_name: str, device: str) -> None:
    engine = engine_or_skip(engine_name, device)
    shape = workloads.MLP_CPU if device == "cpu" else workloads.MLP_GPU
    build = autograd_peer.mlp_step if engine_name == "autograd" else workloads.mlp_step
    sizes = "-".join(map(str, shape["sizes"]))
    recorder.time(f"W2 MLP step {sizes} b{shape['batch']}", engine_name, device,
                  lambda: build(engine, **shape), {"workload": "W2", **shape}, ROUNDS[device])
