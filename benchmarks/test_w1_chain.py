"""W1 engine overhead: a chain of N small elementwise ops then backward, N = 1e3, 1e4, 1e5, on
impl, torch and HIPS autograd. Time should grow linearly with N (1e5 no more than 12x 1e4)."""

from __future__ import annotations

import pytest

from benchmarks import autograd_peer, workloads
from benchmarks.conftest import DEVICES, Recorder, engine_or_skip

# Fewer rounds for the long chains keep `nox -s bench` within minutes on 2 cores.
ROUNDS = {1_000: 30, 10_000: 15, 100_000: 5}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", sorted(ROUNDS))
@pytest.mark.parametrize("engine_name", ["impl", "torch", "autograd"])
def test_w1_chain(recorder: Recorder, engine_name: str, n: int, device: str) -> None:
    engine = engine_or_skip(engine_name, device)
    build = autograd_peer.chain if engine_name == "autograd" else workloads.chain
    recorder.time(f"W1 chain N={n:.0e}".replace("+0", ""), engine_name, device, lambda: build(engine, n),
                  {"workload": "W1", "n": n, "size": workloads.CHAIN_SIZE}, ROUNDS[n])
