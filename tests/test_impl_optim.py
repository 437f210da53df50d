"""impl.optim against torch: 100 steps from the same initial values, every option; state_dict."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import impl
import impl.nn
import impl.optim  # noqa: F401

CASES = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "maximize": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.5}),
]


def _train(lib, name, options, dtype_name):
    rng = np.random.default_rng(0)
    w0, x = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    dtype = getattr(lib.dtypes if lib is impl else lib, dtype_name)
    p = lib.nn.Parameter(lib.tensor(w0, dtype=dtype))
    inputs = lib.tensor(x, dtype=dtype)
    opt = getattr(lib.optim, name)([p], **options)
    for _ in range(100):
        opt.zero_grad()
        ((inputs @ p.t()).tanh() ** 2).sum().backward()
        opt.step()
    return p.detach().numpy(), opt


@pytest.mark.parametrize(("name", "options"), CASES)
@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
def test_100_steps_match_torch(name, options, dtype_name):
    ref, ref_opt = _train(torch, name, options, dtype_name)
    got, opt = _train(impl, name, options, dtype_name)
    rtol = 1e-6 if dtype_name == "float64" else 1e-4
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * 1e-2)
    assert got.dtype == ref.dtype
    ref_sd, sd = ref_opt.state_dict(), opt.state_dict()
    assert sd["param_groups"] == ref_sd["param_groups"]
    assert {k: sorted(v) for k, v in sd["state"].items()} == {
        k: sorted(v) for k, v in ref_sd["state"].items()
    }
    for key, value in ref_sd["state"].get(0, {}).items():
        np.testing.assert_allclose(sd["state"][0][key].numpy(), value.numpy(), rtol=rtol * 10, atol=1e-12)
    assert repr(opt) == repr(ref_opt)


def test_state_dict_round_trip_and_errors():
    def run(lib):
        facts = []
        a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SGD([a], lr=0.1, momentum=0.9)
        opt.add_param_group({"params": b, "lr": 0.5})
        a.grad, b.grad = lib.ones(2), lib.ones(3)
        opt.step()
        fresh = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=1.0, momentum=0.9)
        fresh.add_param_group({"params": [lib.nn.Parameter(lib.zeros(3))]})
        fresh.load_state_dict(opt.state_dict())
        facts.append([g["lr"] for g in fresh.param_groups])
        facts.append(fresh.state_dict()["state"][1]["momentum_buffer"].tolist())
        opt.zero_grad()
        facts.append((a.grad, b.grad))
        for bad in (
            lambda: lib.optim.SGD([], lr=0.1),
            lambda: lib.optim.SGD(a, lr=0.1),
            lambda: lib.optim.SGD([a * 2], lr=0.1),
            lambda: lib.optim.SGD([a], lr=-1),
            lambda: lib.optim.SGD([a], lr=0.1, nesterov=True),
            lambda: opt.add_param_group({"params": [a]}),
            lambda: lib.optim.Adam([a], betas=(1.0, 0.9)),
            lambda: lib.optim.SGD([a]).load_state_dict(opt.state_dict()),
        ):
            try:
                bad()
            except (TypeError, ValueError) as e:
                facts.append((type(e).__name__, str(e)))
        return facts

    assert run(impl) == run(torch)
