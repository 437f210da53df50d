"""W3 small CNN training step: Conv2d-ReLU-Conv2d(stride 2)-ReLU-Flatten-Linear on 28x28 images."""

from __future__ import annotations

import pytest

from benchmarks import workloads
from benchmarks.conftest import DEVICES, Recorder, engine_or_skip

ROUNDS = {"cpu": 30, "cuda": 30}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("engine_name", ["impl", "torch"])
def test_w3_cnn_step(recorder: Recorder, engine_name: str, device: str) -> None:
    engine = engine_or_skip(engine_name, device)
    recorder.time(f"W3 CNN step b{workloads.CNN['batch']}", engine_name, device,
                  lambda: workloads.cnn_step(engine), {"workload": "W3", **workloads.CNN}, ROUNDS[device])
