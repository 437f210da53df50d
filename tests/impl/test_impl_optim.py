"""impl.optim against torch: 100 steps from the same initial values, every option; state_dict."""

from __future__ import annotations

import copy
import itertools

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


# -- every option combination with the same gradients on both sides ---------------------------------
def _combinations(name: str) -> list[dict]:
    """Every combination of the boolean/zero-or-not options of ``name`` (torch rejects some)."""
    if name == "SGD":
        axes = {"momentum": (0.0, 0.9), "dampening": (0.0, 0.3), "weight_decay": (0.0, 0.1),
                "nesterov": (False, True), "maximize": (False, True)}
    else:
        axes = {"amsgrad": (False, True), "maximize": (False, True), "weight_decay": (0.0, 0.1),
                "eps": (1e-8, 1e-3)}
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


SHAPES = [(3, 4), (4,), (2, 2), (5,)]


def _run_fed(lib, name, options, dtype_name, reload_at=None):
    """100 steps of ``name`` over two param groups (the second with lr and one option changed),
    gradients drawn from one seeded stream (some exact zeros; one parameter's grad None every
    fifth step); with ``reload_at``, the optimiser is replaced by a fresh one loaded from its
    state_dict after that step. Returns the parameters and the final state_dict, or the error."""
    dtype = getattr(lib, dtype_name)
    rng = np.random.default_rng(7)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s), dtype=dtype)) for s in SHAPES]
    second = {"lr": 0.05, "weight_decay": 0.2 if not options.get("weight_decay") else 0.0}
    groups = [{"params": params[:2]}, {"params": params[2:], **second}]
    make = getattr(lib.optim, name)
    try:
        opt = make(groups, lr=0.01, **options)
    except ValueError as e:
        return ("ValueError", str(e))
    for step in range(100):
        for i, p in enumerate(params):
            grad = rng.standard_normal(p.shape) * (rng.random(p.shape) < 0.8)
            p.grad = None if (step + i) % 5 == 4 else lib.tensor(grad, dtype=dtype)
        opt.step()
        if step == reload_at:
            saved = copy.deepcopy(opt.state_dict())
            opt = make([{"params": params[:2]}, {"params": params[2:]}], lr=1.0)
            opt.load_state_dict(saved)
    return [p.detach().numpy() for p in params], opt.state_dict()


@pytest.mark.parametrize("reload_at", [None, 40])
@pytest.mark.parametrize("dtype_name", ["float64", "float32"])
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_every_option_combination_matches_torch(name, dtype_name, reload_at):
    """Parameters after 100 steps: float32 to float32 rounding (SGD comes out to the bit with
    torch's fused multiply-adds, 3 roundings off without; Adam within 1.6, as torch's float32 sqrt
    is not always correctly rounded), float64
    to 1e-6 relative; the state (step counts, buffers) too, and the same errors for rejected
    options."""
    for options in _combinations(name):
        ref = _run_fed(torch, name, options, dtype_name, reload_at)
        got = _run_fed(impl, name, options, dtype_name, reload_at)
        if isinstance(ref[0], str):
            assert got == ref, options
            continue
        for g, r in zip(got[0], ref[0], strict=True):
            assert g.dtype == r.dtype
            if dtype_name == "float32":  # within two float32 roundings of the tensor's scale
                scale = 2 * np.finfo(np.float32).eps * np.abs(r).max()
                assert np.abs(g.astype(np.float64) - r).max() <= scale, (options, g, r)
            else:
                np.testing.assert_allclose(g, r, rtol=1e-6, atol=0, err_msg=str(options))
        ref_state, state = ref[1]["state"], got[1]["state"]
        assert sorted(state) == sorted(ref_state), options
        for index, entries in ref_state.items():
            assert sorted(state[index]) == sorted(entries), options
            for key, value in entries.items():
                mine = state[index][key]
                assert (mine is None) == (value is None)
                if value is not None:
                    assert mine.dtype == getattr(impl, str(value.dtype).removeprefix("torch."))
                    np.testing.assert_allclose(mine.numpy(), value.numpy(), rtol=1e-6, err_msg=key)
        assert got[1]["param_groups"] == ref[1]["param_groups"]


def _duplicate_steps(lib, name, options):
    """An optimiser given a tied weight under two names (torch warns, then updates it at each place)."""
    emb = lib.nn.Embedding(5, 3)
    head = lib.nn.Linear(3, 5)
    with lib.no_grad():
        emb.weight.copy_(lib.arange(15.0).reshape(5, 3) / 10 - 0.7)
        head.bias.zero_()
    head.weight = emb.weight
    opt = getattr(lib.optim, name)([emb.weight, head.weight, head.bias], **options)
    for step in range(3):
        opt.zero_grad()
        head(emb(lib.tensor([1, 3, step]))).pow(2).sum().backward()
        opt.step()
    return emb.weight.detach().numpy(), head.bias.detach().numpy()


@pytest.mark.filterwarnings("ignore:optimizer contains a parameter group with duplicate parameters")
@pytest.mark.parametrize(("name", "options"), CASES)
def test_a_parameter_listed_twice_steps_as_torch(name, options):
    """torch's SGD reads every momentum buffer before updating and stores them after: on the first
    step each place of a repeated parameter starts a buffer of its own (found by COMB-003)."""
    ref = _duplicate_steps(torch, name, options)
    got = _duplicate_steps(impl, name, options)
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def _capturable_step(lib, name):
    """A capturable step on CPU parameters: torch's AssertionError, after every state was made."""
    p, q = lib.nn.Parameter(lib.tensor([1.0, 2.0])), lib.nn.Parameter(lib.tensor([3.0]))
    opt = getattr(lib.optim, name)([p, q], lr=0.1, capturable=True)
    p.grad, q.grad = lib.tensor([0.5, -1.0]), lib.tensor([1.0])
    with pytest.raises(AssertionError) as raised:
        opt.step()
    return str(raised.value), repr(opt.state_dict()), p.tolist()


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop",
                                  "ASGD"])
def test_capturable_refused_on_cpu(name):
    assert _capturable_step(impl, name) == _capturable_step(torch, name)
