"""impl's linspace, arange and logspace against torch's CPU kernels bit for bit: float32, float64,
float16, bfloat16 and integers, increasing and decreasing ranges, short ones and ones above the
grain size (``parallel_for``'s chunks, on one thread and on two)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import impl
from impl import _creation

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32")
RANGES = [(-math.pi, math.pi), (0, 1), (-3.3, 7.1), (2, -5), (-1e3, 1e-3), (1e5, 1e5 + 3), (0.1, -0.7)]


def _bits(t) -> bytes:
    return t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()


def _same(ours, theirs) -> bool:
    return tuple(ours.shape) == tuple(theirs.shape) and np.asarray(ours.numpy()).tobytes() == _bits(theirs)


@pytest.fixture
def threads(monkeypatch):
    """Run torch and impl's emulation with a given number of threads."""
    before = torch.get_num_threads()

    def use(n: int) -> None:
        torch.set_num_threads(n)
        monkeypatch.setattr(_creation, "intraop_threads", lambda: n)

    yield use
    torch.set_num_threads(before)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linspace_is_torchs(dtype):
    """linspace(0, 1, 10) and linspace(-pi, pi, 2000) were off in float32 before (fused in torch)."""
    for steps in (1, 2, 3, 10, 33, 2000, 40001):
        for start, end in RANGES:
            if dtype == "float16" and max(abs(start), abs(end)) > 6e4:
                continue  # torch refuses the conversion
            theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
            ours = impl.linspace(start, end, steps, dtype=getattr(impl, dtype))
            assert _same(ours, theirs), (start, end, steps)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("thread_count", [1, 2])
def test_arange_is_torchs(dtype, thread_count, threads):
    """Vectors from each vector's first value, per parallel_for chunk, fused."""
    threads(thread_count)
    cases = [(0, 10, 0.1), (-3.3, 7.1, 0.01), (5, -5, -0.013), (0.1, 100.1, 0.1), (0, 7, 0.3)]
    if dtype in ("float32", "float64"):
        cases += [(0, 1e5, 1.1), (-2, 3e4, 0.3), (0.5, 33000.5, 0.5)]
    for start, end, step in cases:
        theirs = torch.arange(start, end, step, dtype=getattr(torch, dtype))
        assert _same(impl.arange(start, end, step, dtype=getattr(impl, dtype)), theirs), (start, end, step)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_logspace_is_torchs(dtype):
    for steps in (1, 2, 5, 33, 101):
        for start, end in RANGES[:4] + [(-2, 2), (1, -1)]:
            for base in (10.0, 2.0, 1.5):
                theirs = torch.logspace(start, end, steps, base, dtype=getattr(torch, dtype))
                ours = impl.logspace(start, end, steps, base, dtype=getattr(impl, dtype))
                assert _same(ours, theirs), (start, end, steps, base)
