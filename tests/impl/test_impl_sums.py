"""impl's CPU floating sums (sum, mean, nansum, and the gradients summed back to a broadcast
input) against torch bit for bit: shapes from 0-d to 4-d and long rows, contiguous and strided,
transposed, expanded, in float32, float16, bfloat16 and float64, on one thread and on two (above
the grain size torch splits the sum between threads)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import impl
from impl._ops import cascade_sum

DTYPES = ("float32", "float16", "bfloat16", "float64")


def _case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(0, 5))
    shape = [int(rng.integers(1, 9)) for _ in range(ndim)]
    if ndim == 1:
        shape = [int(rng.integers(0, 100))]
    if seed % 10 == 0:  # above the grain size: the threads' partial sums
        shape = [int(rng.integers(33000, 70000))] if ndim < 2 else [int(rng.integers(2, 40)), 3001]
        ndim = len(shape)
    values = (rng.standard_normal(shape) * rng.choice([1.0, 300.0])).astype(np.float32)
    if values.size and rng.random() < 0.2:
        values.reshape(-1)[rng.integers(0, values.size, 2)] = np.nan
    view = str(rng.choice(["plain", "transpose", "step", "expand"])) if ndim else "plain"
    view_ndim = ndim + (view == "expand")
    dims = None
    if view_ndim and rng.random() < 0.7:
        k = int(rng.integers(1, view_ndim + 1))
        chosen = rng.choice(view_ndim, k, replace=False)
        dims = [int(d) - (view_ndim if rng.random() < 0.3 else 0) for d in chosen]  # some negative
    return {
        "values": values,
        "dtype": str(rng.choice(DTYPES, p=[0.5, 0.2, 0.2, 0.1])),
        "view": view,
        "dims": dims,
        "keepdim": bool(rng.random() < 0.3),
        "op": str(rng.choice(["sum", "mean", "nansum", "sum_dtype"])),
        "threads": int(rng.choice([1, 2])),
    }


def _run(lib, case: dict):
    x = lib.tensor(case["values"]).to(getattr(lib, case["dtype"]))
    if case["view"] == "transpose" and x.dim() >= 2:
        x = x.transpose(0, -1)
    elif case["view"] == "step":
        x = x[::2] if x.dim() else x
    elif case["view"] == "expand":
        x = x.unsqueeze(1).expand(x.shape[0], 3, *x.shape[1:])
    dims, keepdim = case["dims"], case["keepdim"]
    if case["op"] == "nansum":
        return lib.nansum(x, dims, keepdim)
    if case["op"] == "sum_dtype":  # converted first, as torch's sum(dtype=)
        return x.sum(dims or [], keepdim, dtype=lib.float16 if case["dtype"] != "float16" else lib.float32)
    if dims is None:
        return getattr(x, case["op"])()
    return getattr(x, case["op"])(dims, keepdim)


def _bits(t) -> tuple:
    a = np.asarray(t.double().tolist(), dtype=np.float64)
    nan = np.isnan(a)  # (a NaN's sign is not compared)
    return a.shape, np.where(nan, 0, a).tobytes(), nan.tobytes(), (np.signbit(a) & ~nan).tobytes()


@pytest.fixture
def threads(monkeypatch):
    """Run torch and impl's emulation with a given number of threads."""
    before = torch.get_num_threads()

    def use(n: int) -> None:
        torch.set_num_threads(n)
        monkeypatch.setattr(cascade_sum, "intraop_threads", lambda: n)

    yield use
    torch.set_num_threads(before)


@pytest.mark.parametrize("seed", range(120))
def test_sums_are_torchs_bit_for_bit(seed, threads):
    case = _case(seed)
    threads(case["threads"])
    assert _bits(_run(impl, case)) == _bits(_run(torch, case)), case


@pytest.mark.parametrize("n", [7, 2000, 40000])
@pytest.mark.parametrize("thread_count", [1, 2])
def test_broadcast_gradients_and_losses_sum_as_torch(n, thread_count, threads):
    """A 0-d parameter's gradient (the broadcast gradient summed back), a bias's (addmm's), and
    MSELoss's sum and mean: the tutorials' float32 training loops."""
    threads(thread_count)
    data = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)

    def facts(lib):
        x = lib.tensor(data)
        w = lib.tensor(0.5, requires_grad=True)
        bias = lib.zeros(3, requires_grad=True)
        out = lib.nn.functional.linear(x, lib.eye(3), bias) * w
        loss = lib.nn.functional.mse_loss(out, x.flip(0), reduction="sum")
        loss.backward()
        mean = lib.nn.functional.mse_loss(out, x, reduction="mean")
        return [_bits(t) for t in (loss, w.grad, bias.grad, mean)]

    assert facts(impl) == facts(torch)
