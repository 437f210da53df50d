"""impl.optim's RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD and impl.optim.lr_scheduler
against torch: updates op for op (bit-exact, once torch's sqrt rounds correctly), state_dict round
trips, errors, the schedulers' learning rates, warnings and state, and a tutorial's training loop."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
import torch

import impl
import impl.optim  # noqa: F401
from tests.impl.test_impl_optim import _run_fed

# per optimiser, a value for each option that changes the update (torch's defaults otherwise)
OPTIONS: dict[str, dict] = {
    "RMSprop": {"momentum": 0.9, "centered": True, "alpha": 0.5, "weight_decay": 0.1, "maximize": True},
    "Adagrad": {"lr_decay": 0.01, "initial_accumulator_value": 0.5, "eps": 1e-3, "weight_decay": 0.1,
                "maximize": True},
    "Adadelta": {"rho": 0.5, "eps": 1e-2, "weight_decay": 0.1, "maximize": True},
    "Adamax": {"betas": (0.5, 0.8), "eps": 1e-3, "weight_decay": 0.1, "maximize": True},
    "NAdam": {"momentum_decay": 0.5, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True},
    "RAdam": {"betas": (0.8, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True},
    "Rprop": {"etas": (0.3, 1.5), "step_sizes": (1e-3, 0.05), "maximize": True},
    "ASGD": {"lambd": 0.01, "alpha": 0.5, "t0": 20, "weight_decay": 0.1, "maximize": True},
}


# the optimisers that take no sqrt: the op-for-op test holds them to the bit with torch's own ops
SQRT_FREE = ("Rprop", "ASGD")


# the branches all options together skip: RMSprop centered without momentum and the reverse
BRANCHES = {"RMSprop": [{"centered": True}, {"momentum": 0.9, "maximize": True}]}


def _option_sets(name: str) -> list[dict]:
    """torch's defaults, every option at once, the branches that leaves out."""
    return [{}, dict(OPTIONS[name]), *BRANCHES.get(name, [])]


@pytest.fixture
def correctly_rounded_sqrt(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's sqrt, correctly rounded: torch's own (MKL's on the CPU) is an ulp off for about one
    float32 input in six (one float64 input in eighty), impl's is numpy's."""

    def sqrt(self: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.sqrt(self.detach().numpy()))

    def sqrt_(self: torch.Tensor) -> torch.Tensor:
        return self.copy_(sqrt(self))

    monkeypatch.setattr(torch.Tensor, "sqrt", sqrt)
    monkeypatch.setattr(torch.Tensor, "sqrt_", sqrt_)


def _assert_state_dicts_equal(got: dict, ref: dict, exact: bool) -> None:
    assert got["param_groups"] == ref["param_groups"]
    assert sorted(got["state"]) == sorted(ref["state"])
    for index, entries in ref["state"].items():
        assert list(got["state"][index]) == list(entries)  # torch's keys, in torch's order
        for key, value in entries.items():
            mine = got["state"][index][key]
            assert str(mine.dtype) == str(value.dtype), key
            if exact:
                np.testing.assert_array_equal(mine.numpy(), value.numpy(), err_msg=key)
            else:  # within a few roundings of the tensor's scale
                limit = 8 * np.finfo(mine.numpy().dtype).eps * np.abs(value.numpy()).max()
                np.testing.assert_allclose(mine.numpy(), value.numpy(), rtol=0, atol=limit, err_msg=key)


@pytest.mark.usefixtures("correctly_rounded_sqrt")
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_updates_are_torchs_op_for_op(name: str, dtype_name: str) -> None:
    """100 steps over two param groups, the same gradients on both sides (some None), the
    optimiser replaced by one loaded from its state_dict after step 40: parameters and state equal
    torch's to the bit, once both take a correctly rounded sqrt."""
    for options in _option_sets(name):
        ref = _run_fed(torch, name, options, dtype_name, reload_at=40)
        got = _run_fed(impl, name, options, dtype_name, reload_at=40)
        for g, r in zip(got[0], ref[0], strict=True):
            np.testing.assert_array_equal(g, r, err_msg=str(options))
        _assert_state_dicts_equal(got[1], ref[1], exact=True)


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(set(OPTIONS) - set(SQRT_FREE)))
def test_updates_match_torch(name: str, dtype_name: str) -> None:
    """With torch's own sqrt: every option on, 100 steps, within a few roundings of the scale
    (Adamax, which takes no sqrt, to the bit)."""
    options = OPTIONS[name]
    ref, got = _run_fed(torch, name, options, dtype_name), _run_fed(impl, name, options, dtype_name)
    eps = np.finfo(dtype_name).eps
    for g, r in zip(got[0], ref[0], strict=True):
        limit = 0 if name == "Adamax" else 8 * eps * np.abs(r).max()
        assert np.abs(g.astype(np.float64) - r).max() <= limit, (g, r)
    _assert_state_dicts_equal(got[1], ref[1], exact=name == "Adamax")


BAD_OPTIONS = [
    ("RMSprop", {"lr": -1.0}), ("RMSprop", {"eps": -1.0}), ("RMSprop", {"momentum": -0.5}),
    ("RMSprop", {"weight_decay": -1.0}), ("RMSprop", {"alpha": -0.1}), ("RMSprop", {"alpha": -1, "lr": -1}),
    ("Adagrad", {"lr_decay": -1.0}), ("Adagrad", {"initial_accumulator_value": -1.0}),
    ("Adagrad", {"eps": -1.0, "weight_decay": -1.0}), ("Adagrad", {"lr": float("nan")}),
    ("Adadelta", {"rho": 1.5}), ("Adadelta", {"rho": -0.1}), ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -1.0}),
    ("Adamax", {"betas": (1.0, 0.9)}), ("Adamax", {"betas": (0.9, -0.1)}), ("Adamax", {"eps": -1.0}),
    ("NAdam", {"momentum_decay": -1.0}), ("NAdam", {"betas": (0.5, 1.0)}), ("NAdam", {"weight_decay": -1.0}),
    ("RAdam", {"betas": (-0.5, 0.9)}), ("RAdam", {"lr": -0.1}), ("RAdam", {"weight_decay": -0.1}),
    ("Rprop", {"lr": -0.1}), ("Rprop", {"etas": (1.0, 1.2)}), ("Rprop", {"etas": (0.5, 1.0)}),
    ("ASGD", {"lr": -0.1}), ("ASGD", {"weight_decay": -0.1}),
]


# the kernel choices torch refuses together (fused with foreach or differentiable)
BAD_OPTIONS += [(name, options) for name in ("SGD", "Adam", "AdamW", "Adagrad")
                for options in ({"fused": True, "foreach": True}, {"fused": True, "differentiable": True})]


@pytest.mark.parametrize(("name", "options"), BAD_OPTIONS)
def test_invalid_options_raise_torchs_error(name: str, options: dict) -> None:
    def error(lib):
        with pytest.raises((ValueError, RuntimeError)) as caught:
            getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], **options)
        return type(caught.value).__name__, str(caught.value)

    assert error(impl) == error(torch)


def test_groups_state_and_repr_as_torchs() -> None:
    """Defaults per group, Adagrad's state made at construction (a group added later: on its first
    step), repr, and a state_dict loaded into an optimiser of other options."""

    def run(lib):
        facts = []
        for name in sorted(OPTIONS):
            a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))
            opt = getattr(lib.optim, name)([a], lr=0.5)
            facts.append(sorted(opt.state_dict()["state"]))
            opt.add_param_group({"params": [b], "weight_decay": 0.5})
            facts.append(repr(opt))
            a.grad = lib.ones(2)
            opt.step()
            facts.append({k: sorted(v) for k, v in opt.state_dict()["state"].items()})
            b.grad = lib.full((3,), 2.0)
            opt.step()
            fresh = getattr(lib.optim, name)([{"params": [lib.nn.Parameter(lib.zeros(2))]},
                                              {"params": [lib.nn.Parameter(lib.zeros(3))]}], lr=1.0)
            fresh.load_state_dict(opt.state_dict())
            saved = fresh.state_dict()
            facts.append((saved["param_groups"], {i: {k: v.tolist() for k, v in s.items()}
                                                  for i, s in saved["state"].items()}))
            facts.append((a.tolist(), b.tolist()))
        return facts

    assert run(impl) == run(torch)


# -- learning-rate schedulers --------------------------------------------------------------------
class Halving:
    """A callable object as lr_lambda: its __dict__ goes into LambdaLR's state_dict."""

    def __init__(self) -> None:
        self.base = 0.5

    def __call__(self, epoch: int) -> float:
        return self.base ** (epoch // 3)


SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}, "SGD", {"lr": 0.1}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.3}, "SGD", {"lr": 0.1, "momentum": 0.9}),
    ("ExponentialLR", {"gamma": 0.9}, "Adam", {"lr": 0.01}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.001}, "RMSprop", {"lr": 0.05}),
    ("CosineAnnealingLR", {"T_max": 3}, "SGD", {"lr": 0.3}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 0.95**epoch}, "SGD", {"lr": 0.1}),
    ("LambdaLR", {"lr_lambda": [Halving(), lambda epoch: 1 / (1 + epoch)]}, "NAdam", {}),
    ("OneCycleLR", {"max_lr": 0.1, "total_steps": 20}, "SGD", {"lr": 0.1, "momentum": 0.9}),
    ("OneCycleLR", {"max_lr": [0.1, 0.2], "total_steps": 20, "anneal_strategy": "linear",
                    "three_phase": True}, "Adam", {}),
    ("OneCycleLR", {"max_lr": 0.1, "epochs": 4, "steps_per_epoch": 5, "pct_start": 0.25,
                    "cycle_momentum": False}, "Adagrad", {}),
    ("ReduceLROnPlateau", {"patience": 1, "cooldown": 2, "factor": 0.5}, "SGD", {"lr": 0.1}),
    ("ReduceLROnPlateau", {"mode": "max", "threshold_mode": "abs", "threshold": 0.1, "patience": 0,
                           "min_lr": [0.01, 0.04]}, "SGD", {"lr": 0.1}),
    ("ReduceLROnPlateau", {"mode": "max", "threshold": 0.2, "patience": 2, "eps": 0.02}, "RAdam", {}),
    ("MultiplicativeLR", {"lr_lambda": [Halving(), lambda epoch: 0.9]}, "SGD", {"lr": 0.1}),
    ("ConstantLR", {"factor": 0.3, "total_iters": 4}, "Adam", {}),
    ("LinearLR", {"start_factor": 0.2, "end_factor": 0.9, "total_iters": 7}, "SGD", {"lr": 0.1}),
    ("LinearLR", {}, "RMSprop", {}),
    ("PolynomialLR", {"total_iters": 8, "power": 2.0}, "SGD", {"lr": 0.3}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}, "Adam", {}),
    ("CosineAnnealingWarmRestarts", {"T_0": 4}, "SGD", {"lr": 0.1}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": [0.1, 0.2], "step_size_up": 3, "step_size_down": 5},
     "SGD", {"lr": 0.1, "momentum": 0.9}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "mode": "triangular2",
                  "base_momentum": 0.7, "max_momentum": [0.95, 0.9]}, "Adam", {}),
    ("CyclicLR", {"base_lr": [0.01, 0.02], "max_lr": 0.1, "step_size_up": 4, "mode": "exp_range",
                  "gamma": 0.9, "cycle_momentum": False}, "Adagrad", {}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "scale_fn": Halving(),
                  "scale_mode": "iterations"}, "RMSprop", {"momentum": 0.5}),
]
METRICS = [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.4, 0.41, 0.42, 0.43, 0.44, 0.1, 0.1, 0.2, 0.3,
           0.3, 0.3]


def _schedule(lib, cls, kwargs, opt_cls, opt_kwargs, optimizer_first: bool, epochs: bool = False) -> list:
    """20 steps of a scheduler over two param groups: what get_last_lr() and the groups hold after
    each, the state_dicts, a scheduler made afresh from the state_dict stepping on, the warnings."""
    out: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p, q = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
        opt = getattr(lib.optim, opt_cls)([{"params": [p]}, {"params": [q], "lr": 0.05}], **opt_kwargs)
        make = getattr(lib.optim.lr_scheduler, cls)
        sched = make(opt, **kwargs)
        out.append(sched.get_last_lr())
        for i in range(20):
            p.grad, q.grad = lib.ones(2) * 0.1, lib.ones(2)
            if optimizer_first:
                opt.step()
            if cls == "ReduceLROnPlateau":
                sched.step(METRICS[i])
            else:
                sched.step(*([i + 1] if epochs and i % 4 == 3 else []))  # the closed form, now and then
            if not optimizer_first:
                opt.step()
            groups = opt.param_groups
            out.append((sched.get_last_lr(), [(g["lr"], g.get("momentum"), g.get("betas")) for g in groups]))
            if i == 9:  # a scheduler of other options restored from the state_dict steps on as the first
                state = sched.state_dict()
                out.append(list(state))
                out.append({k: v for k, v in state.items() if not callable(v) and k != "lr_lambdas"})
                resumed = {} if cls == "ReduceLROnPlateau" else {"last_epoch": 3}
                sched = make(opt, **kwargs, **resumed)
                sched.load_state_dict(state)
        out.append(opt.state_dict()["param_groups"])
        try:
            out.append(sched.get_lr())
        except (ValueError, NotImplementedError) as e:
            out.append(repr(e))
    out.append([(w.category.__name__, str(w.message)) for w in caught])
    return out


@pytest.mark.parametrize(
    ("case", "optimizer_first", "epochs"),
    [pytest.param(case, first, epochs, id=f"{case[0]}-{i}-{'opt first' if first else 'sched first'}"
                  + ("-epochs" if epochs else ""))
     for i, case in enumerate(SCHEDULERS) for first in (True, False)
     for epochs in (False, True) if not epochs or case[0] not in ("OneCycleLR", "ReduceLROnPlateau")],
)
def test_schedulers_set_torchs_learning_rates(case: tuple, optimizer_first: bool, epochs: bool) -> None:
    """The values, to the bit: torch's chainable forms round differently from its closed forms
    (``step(epoch)``, which OneCycleLR and ReduceLROnPlateau lack), impl takes the same one at
    every step."""
    assert _schedule(impl, *case, optimizer_first, epochs) == _schedule(torch, *case, optimizer_first, epochs)


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        ("OneCycleLR", {"max_lr": 0.1}),
        ("OneCycleLR", {"max_lr": 0.1, "total_steps": 0}),
        ("OneCycleLR", {"max_lr": 0.1, "epochs": 2, "steps_per_epoch": 0}),
        ("OneCycleLR", {"max_lr": 0.1, "epochs": 0.5, "steps_per_epoch": 2}),
        ("OneCycleLR", {"max_lr": 0.1, "total_steps": 10, "pct_start": 1}),
        ("OneCycleLR", {"max_lr": 0.1, "total_steps": 10, "anneal_strategy": "exp"}),
        ("OneCycleLR", {"max_lr": [0.1, 0.2], "total_steps": 10}),
        ("ReduceLROnPlateau", {"factor": 1.0}),
        ("ReduceLROnPlateau", {"mode": "median"}),
        ("ReduceLROnPlateau", {"threshold_mode": "ratio"}),
        ("ReduceLROnPlateau", {"min_lr": [0.1, 0.2]}),
        ("LambdaLR", {"lr_lambda": [abs, abs]}),
        ("StepLR", {"step_size": 2, "last_epoch": 4}),
        ("MultiplicativeLR", {"lr_lambda": 0.9}),
        ("MultiplicativeLR", {"lr_lambda": [abs, abs]}),
        ("ConstantLR", {"factor": 1.5}),
        ("LinearLR", {"start_factor": 0}),
        ("LinearLR", {"end_factor": -0.5}),
        ("CosineAnnealingWarmRestarts", {"T_0": 0}),
        ("CosineAnnealingWarmRestarts", {"T_0": 2.0}),
        ("CosineAnnealingWarmRestarts", {"T_0": 2, "T_mult": 0}),
        ("CosineAnnealingWarmRestarts", {"T_0": 2, "eta_min": "0"}),
        ("CyclicLR", {"base_lr": 0.1, "max_lr": 1.0, "mode": "cosine"}),
        ("CyclicLR", {"base_lr": [0.1, 0.2], "max_lr": 1.0}),
        ("SequentialLR", {"schedulers": [], "milestones": []}),
    ],
)
def test_invalid_schedulers_raise_torchs_error(cls: str, kwargs: dict) -> None:
    def error(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        with pytest.raises((ValueError, KeyError, TypeError)) as caught:
            getattr(lib.optim.lr_scheduler, cls)(opt, **kwargs)
        return type(caught.value).__name__, str(caught.value)

    assert error(impl) == error(torch)


def test_scheduler_misuse_as_torch() -> None:
    """Not an optimizer, a OneCycleLR stepped past its total, momentum cycling without momentum,
    get_lr() called outside step()."""

    def run(lib):
        facts = []
        opt = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(2))])
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2, cycle_momentum=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for make in (lambda: lib.optim.lr_scheduler.StepLR("sgd", 2),
                         lambda: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=5),
                         lambda: [sched.step() for _ in range(3)]):
                try:
                    make()
                except (TypeError, ValueError) as e:
                    facts.append((type(e).__name__, str(e)))
            exp = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
            facts.append((exp.get_lr(), [str(w.message) for w in caught]))
        return facts

    assert run(impl) == run(torch)


def _composites(lib) -> list:
    """SequentialLR (nested too) and ChainedScheduler: the lrs and momenta over 12 steps, their
    state_dicts loaded into fresh ones, their refusals, CyclicLR's without a momentum, warnings."""
    out: list = []
    lrs = lib.optim.lr_scheduler
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for build in (
            lambda o: lrs.SequentialLR(o, [lrs.LinearLR(o, 0.1, total_iters=3),
                                                 lrs.ExponentialLR(o, 0.8)], milestones=[3]),
            lambda o: lrs.SequentialLR(o, [lrs.ConstantLR(o, 0.5, 2), lrs.StepLR(o, 2, 0.5),
                                                 lrs.CosineAnnealingWarmRestarts(o, 2)], [2, 6]),
            lambda o: lrs.ChainedScheduler([lrs.ConstantLR(o, 0.2, 4), lrs.ExponentialLR(o, 0.9),
                                                  lrs.CyclicLR(o, 0.01, 0.1, 2)], optimizer=o),
            lambda o: lrs.ChainedScheduler([lrs.SequentialLR(o, [lrs.LinearLR(o, 0.5, 1.0, 2),
                                                  lrs.PolynomialLR(o, 4)], [2]), lrs.StepLR(o, 3)]),
        ):
            p = lib.nn.Parameter(lib.ones(2))
            opt = lib.optim.SGD([{"params": [p]}, {"params": [], "lr": 0.2}], lr=0.1, momentum=0.9)
            sched = build(opt)
            out.append(sched.get_last_lr())
            for i in range(12):
                opt.step()
                sched.step()
                out.append((sched.get_last_lr(), [(g["lr"], g["momentum"]) for g in opt.param_groups]))
                if i == 5:
                    state = sched.state_dict()
                    out.append(sorted(state))
                    sched.load_state_dict(state)
        opt = lib.optim.Adagrad([lib.nn.Parameter(lib.ones(2))])
        other = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))])
        for make in (
            lambda: lrs.CyclicLR(opt, 0.1, 1.0),
            lambda: lrs.ChainedScheduler([]),
            lambda: lrs.ChainedScheduler([lrs.ReduceLROnPlateau(opt)]),
            lambda: lrs.ChainedScheduler([lrs.StepLR(opt, 2), lrs.StepLR(other, 2)]),
            lambda: lrs.SequentialLR(opt, [lrs.StepLR(opt, 2)], [1]),
            lambda: lrs.SequentialLR(opt, [lrs.StepLR(other, 2)], []),
            lambda: lrs.SequentialLR(opt, [object()], []),
            lambda: lrs.CosineAnnealingWarmRestarts(opt, 2).step(-1),
        ):
            try:
                make()
            except (TypeError, ValueError) as e:
                out.append((type(e).__name__, str(e)))
    out.append([str(w.message) for w in caught])
    return out


def test_composite_schedulers_as_torch() -> None:
    assert _composites(impl) == _composites(torch)


# -- a tutorial's training loop ------------------------------------------------------------------
TRAINING = [
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}, "StepLR", {"step_size": 30, "gamma": 0.5}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}, "ExponentialLR", {"gamma": 0.99}),
    ("Adadelta", {"lr": 1.0, "weight_decay": 0.001}, "MultiStepLR", {"milestones": [40, 70]}),
    ("Adamax", {"lr": 0.02}, "CosineAnnealingLR", {"T_max": 100}),
    ("NAdam", {"lr": 0.01}, "OneCycleLR", {"max_lr": 0.02, "total_steps": 100}),
    ("RAdam", {"lr": 0.01}, "ReduceLROnPlateau", {"patience": 3, "factor": 0.5}),
    ("NAdam", {"lr": 0.01, "decoupled_weight_decay": True, "weight_decay": 0.01}, "LambdaLR",
     {"lr_lambda": lambda epoch: 1 / (1 + 0.05 * epoch)}),
]


def _train(lib, opt_cls: str, opt_kwargs: dict, sched_cls: str, sched_kwargs: dict) -> list[str]:
    """A seeded MLP fitted for 100 steps (25 epochs of a shuffling DataLoader's 4 batches), printing
    loss and lr at each step as a tutorial does."""
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y = lib.tensor(rng.standard_normal((32, 4))), lib.tensor(np.sin(rng.standard_normal((32, 1))))
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), batch_size=8, shuffle=True)
    model = lib.nn.Sequential(lib.nn.Linear(4, 16), lib.nn.Tanh(), lib.nn.Linear(16, 1)).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    optimizer = getattr(lib.optim, opt_cls)(model.parameters(), **opt_kwargs)
    scheduler = getattr(lib.optim.lr_scheduler, sched_cls)(optimizer, **sched_kwargs)
    printed = []
    for epoch in range(25):
        for batch, (xb, yb) in enumerate(loader):
            optimizer.zero_grad()
            loss = lib.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step(*([loss.item()] if sched_cls == "ReduceLROnPlateau" else []))
            lr = scheduler.get_last_lr()[0]
            printed.append(f"epoch {epoch} batch {batch}: loss {loss.item():.10f}, lr {lr:.10g}")
    return printed


@pytest.fixture
def one_thread() -> Iterator[None]:
    """torch on one thread: its small ops are slower on two threads shared with other processes."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("case", TRAINING, ids=[f"{c[0]}-{c[2]}" for c in TRAINING])
def test_training_loop_prints_torchs_losses(case: tuple) -> None:
    """In float64 (impl's matmuls and torch's sqrt differ from each other by an ulp now and then:
    float32 losses agree to float32's rounding, not to six printed digits)."""
    ref = _train(torch, *case)
    assert _train(impl, *case) == ref
    assert len(ref) == 100
    assert not math.isclose(float(ref[0].split()[5].rstrip(",")), float(ref[-1].split()[5].rstrip(",")))


# -- LBFGS ---------------------------------------------------------------------------------------
LBFGS_OPTIONS = [{}, {"line_search_fn": "strong_wolfe"}, {"history_size": 3, "max_iter": 7, "lr": 0.5},
                 {"line_search_fn": "strong_wolfe", "history_size": 2, "tolerance_grad": 1e-3,
                  "tolerance_change": 1e-4}]


def _lbfgs(lib, options: dict) -> tuple:
    """Two LBFGS steps on a float64 tanh regression (the closure zeroes, evaluates, backprops):
    the losses, the weights, the closure and iteration counts, the state's keys, the repr."""
    rng = np.random.default_rng(0)
    w, b = (lib.nn.Parameter(lib.tensor(rng.standard_normal(s), dtype=lib.float64)) for s in ((3, 4), (4,)))
    x, y = (lib.tensor(rng.standard_normal(s), dtype=lib.float64) for s in ((5, 3), (5, 4)))
    opt = lib.optim.LBFGS([w, b], **options)

    def closure():
        opt.zero_grad()
        loss = ((x @ w + b).tanh() - y).pow(2).sum()
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(2)]
    state = opt.state_dict()["state"][0]
    return losses, w.detach().numpy().copy(), state["func_evals"], state["n_iter"], list(state), repr(opt)


def test_lbfgs_as_torch() -> None:
    """Fixed steps and the strong-Wolfe line search take torch's iterations and closure calls; the
    values agree within the float64 dot products' rounding, amplified by the unstable fixed steps."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (float() of the closure's loss, on both sides)
        for options in LBFGS_OPTIONS:
            got, ref = _lbfgs(impl, options), _lbfgs(torch, options)
            assert got[2:] == ref[2:], options
            np.testing.assert_allclose(got[0], ref[0], rtol=1e-6)
            np.testing.assert_allclose(got[1], ref[1], rtol=0, atol=1e-4)

    def refusals(lib) -> list:
        p, q = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        out = []
        for make in (lambda: lib.optim.LBFGS([{"params": [p]}, {"params": [q]}]),
                     lambda: lib.optim.LBFGS([p], lr=-1.0),
                     lambda: lib.optim.LBFGS([p], line_search_fn="armijo").step(lambda: p.grad.sum())):
            try:
                make()
            except (ValueError, RuntimeError) as e:
                out.append((type(e).__name__, str(e)))
        return out

    assert refusals(impl) == refusals(torch)
