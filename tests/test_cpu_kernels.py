"""impl's softmax backward rounds as torch's CPU kernel does (impl/_ops/cpu_kernels.py).

Each case runs ``torch._softmax_backward_data`` and impl's kernel on the same float16/float32
inputs and asks for equal bits, under every CPU capability torch can dispatch to here (the
capability is fixed per process, so the other ones run in a subprocess with
``ATEN_CPU_CAPABILITY``). Gradients of 81 and 80 through a softmax are the case the suite found:
a plain ``sum`` gives 8.00003 where torch's fused chain gives 8.0 after the cancellation (the
baseline build has no fused multiply-add: there torch's chain is the plain sum).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from impl._ops import cpu_kernels  # noqa: E402

SHAPES = [(2, 2, 2), (5, 7), (3, 16), (3, 40), (2, 17), (4, 100), (2, 1), (4, 33, 5), (7,), (3, 1, 1)]


def mismatches(trials: int = 12, seed: int = 0) -> list[str]:
    """Cases where impl's bits differ from torch's, over shapes, every dim, float16 and float32."""
    rng = np.random.default_rng(seed)
    bad = []
    for shape in SHAPES:
        for dim in range(len(shape)):
            for dtype in (torch.float16, torch.float32):
                for trial in range(trials):
                    x = torch.tensor(rng.standard_normal(shape) * rng.choice([1, 10, 50])).to(dtype)
                    out = torch.softmax(x, dim)
                    grad = torch.tensor(rng.standard_normal(shape) * rng.choice([1, 10, 80]))
                    grad = (grad.round() if trial % 2 else grad).to(dtype)
                    expected = torch._softmax_backward_data(grad, out, dim, dtype).numpy()
                    got = cpu_kernels.softmax_backward(np, grad.numpy(), out.numpy(), dim)
                    if got.dtype != expected.dtype or not np.array_equal(got, expected):
                        bad.append(f"{shape} dim={dim} {dtype} trial={trial}")
    return bad


def test_the_cancellation_the_suite_found() -> None:
    out = torch.softmax(torch.tensor([[-41.0], [-40.5]]), 0)  # not the last dim: a fused chain
    grad = torch.tensor([[81.0], [80.0]])
    expected = torch._softmax_backward_data(grad, out, 0, torch.float32).numpy()
    got = cpu_kernels.softmax_backward(np, grad.numpy(), out.numpy(), 0)
    assert np.array_equal(got, expected)
    naive = out.numpy() * (grad.numpy() - (grad.numpy() * out.numpy()).sum(0))
    # the fused multiply-add is what makes the case show: the baseline build's chain is the plain sum
    fused = cpu_kernels.cpu_capability() != "default"
    assert np.array_equal(naive, expected) is not fused, f"the case should show the cancellation iff {fused=}"


def test_softmax_backward_has_torchs_bits_on_this_cpu() -> None:
    assert cpu_kernels.cpu_capability() == torch.backends.cpu.get_cpu_capability().lower()
    assert mismatches() == []


@pytest.mark.parametrize("capability", ["avx2", "default"])
def test_softmax_backward_has_torchs_bits_under_other_capabilities(capability: str) -> None:
    if capability == "avx2" and cpu_kernels.cpu_capability() == "default":
        pytest.skip("this CPU has no AVX2: torch cannot dispatch to its AVX2 kernels here")
    code = (
        "import torch, tests.test_cpu_kernels as t, impl._ops.cpu_kernels as k;"
        "assert k.cpu_capability() == torch.backends.cpu.get_cpu_capability().lower();"
        "print(t.mismatches(trials=6))"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

