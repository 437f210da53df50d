"""Optimisers (oracle/rules/modules.py, family "optimisers"): generated few-step training loops
(module tree + loss + optimiser steps + zero_grad) move the parameters as torch's do; parameters
are compared after every step. Learning-rate schedulers set the learning rates torch's do."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from oracle import coverage
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    COMPOSITE_SCHEDULERS,
    Backward,
    Leaf,
    Module,
    ModuleZeroGrad,
    Observe,
    ObserveScheduler,
    Op,
    OptimizerStep,
    OptimizerZeroGrad,
    Program,
    Ref,
    SchedulerStep,
)
from oracle.strategies import PLATEAU_METRICS, SCHEDULER_OPTIONS, ModuleBuilder, backprop_twice, op_data

# Rule -> what impl does differently (strict xfails on the impl backend only; the goal is none).
KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# Which (API, argument, value class) items each rule's programs must exercise (oracle.coverage):
# every option of the optimisers, and set_to_none of both zero_grads between steps.
_ZERO_GRADS = coverage.keywords("Optimizer.zero_grad", "Module.zero_grad")
_DEFAULT_EPS = (
    "torch's eps (1e-8) turns a gradient that rounding leaves near 0 into a whole lr step, whose sign the "
    "last bit decides: the loops draw WELL_CONDITIONED_EPS; tests/impl/test_impl_optim.py checks it"
)
ADAPTIVE = ("RMSprop", "Adagrad", "Adadelta")
SIGN_AND_AVERAGE = ("ASGD", "Rprop")
# Rprop moves each parameter by a whole step size in the direction of its gradient's sign: a
# gradient that rounding leaves near 0 (a tree's cancellations, Softmax over equal logits, where torch's
# sums round differently from any other engine's; even a Linear layer's, where the exact gradient is
# 0) moves it one way or the other by the last bit. Its loops minimise quadratics (``quadratic_loops``).
SIGN_BASED = ("Rprop",)
# the optimisers without an eps (Rprop's update takes the gradient's sign only), and those that
# step as SGD does, by lr times the gradient (their lr kept stable: ``STABLE_SGD_LR``, or half of it
# for ASGD, whose default lr is that)
NO_EPS = ("SGD", "Rprop", "ASGD")
SGD_LIKE = ("SGD", "ASGD")
ADAM_VARIANTS = ("Adamax", "NAdam", "RAdam")
SCHEDULERS = tuple(SCHEDULER_OPTIONS)


def _optimizer_targets(*classes: str) -> coverage.Targets:
    return coverage.Targets(
        coverage.keywords(*(f"optim.{cls}" for cls in classes)),
        _ZERO_GRADS,
        excluded={f"optim.{cls}(eps): default": _DEFAULT_EPS for cls in classes if cls not in NO_EPS},
    )


COVERAGE: dict[str, coverage.Targets] = {
    "OPT-001": coverage.Targets(coverage.keywords("optim.SGD"), _ZERO_GRADS),
    "OPT-002": _optimizer_targets("Adam", "AdamW"),
    "OPT-003": _optimizer_targets(*ADAPTIVE),
    "OPT-004": _optimizer_targets(*ADAM_VARIANTS),
    "OPT-005": coverage.Targets(
        coverage.keywords(*(f"lr_scheduler.{cls}" for cls in SCHEDULERS)),
        excluded={"lr_scheduler.ChainedScheduler(optimizer): None": "the programs name it; None takes the "
                  "first scheduler's, the same one (tests/impl/test_impl_optim_schedulers.py)"},
    ),
    "OPT-007": _optimizer_targets(*SIGN_AND_AVERAGE),
}

# Adam divides each gradient element by its running RMS plus eps. With torch's eps=1e-8 a float32
# gradient that is zero up to rounding (a cancellation, e.g. through Softmax over equal logits, where
# torch's exp and sums round differently from any other engine's) moves its parameter by a whole lr,
# in a direction set by the last bit: no independent engine can agree there. The generated loops
# draw eps from values that keep the update a smooth function of the gradient, so rounding noise in
# the gradients stays rounding noise in the parameters; tests/impl/test_impl_optim.py checks torch's
# default eps over 100 steps with the same gradients fed to both sides.
WELL_CONDITIONED_EPS = (0.1, 0.5)

# SGD on a squared loss is stable while lr times the loss's curvature stays under 2. The trees'
# residual sums and a "sum" reduction make curvatures of hundreds, where lr 0.1 multiplies the
# weights by ~100 in three steps (a weight went from -0.25 to 152 in one thorough-profile draw)
# and float32 rounding differences by as much: a diverging loop checks no optimiser arithmetic.
# Over 300 drawn loops, lr in (0.1, 0.01) left parameters up to 27 in size (13 above 10); lr 0.01
# left them all under 1.4.
STABLE_SGD_LR = 0.01
# OPT-007's share of the profile's examples: the fewest whose ci programs exercise every option
OPT_007_WEIGHT = 0.2


def training_loops(
    optimizers: tuple[str, ...], steps: tuple[int, int] = (2, 3)
) -> st.SearchStrategy[Program]:
    """A Linear layer then a random tree on (2, 3) inputs, an MSE or L1 loss against a fixed
    target, an optimiser of ``optimizers`` over all parameters, then two or three steps of
    zero_grad (optimiser's or module's), forward, loss, backward, step, with every parameter
    observed after each step. At least two: what an optimiser carries from step to step (SGD's
    momentum buffer and its dampening, Adam's moments, step count and amsgrad maximum) and a
    zero_grad between steps only act from the second step on; the first is observed too. RAdam
    takes ``steps`` of at least six where it is drawn: its rectified update starts at the sixth.

    The layers have bounded gain (``ModuleBuilder.weights``): with PARAM_VALUES as they are, a
    tree of ten Linear layers multiplies values by up to 3**10, SGD's first step moves weights by
    thousands and the next overflows float32, where torch's and any other engine's sums overflow
    differently (nan against -inf): garbage on both sides, not a difference of the optimiser.
    For the same reason SGD's learning rate is one that keeps the loops stable (``STABLE_SGD_LR``),
    Adam's eps one that keeps its update smooth (``WELL_CONDITIONED_EPS``), and the activations
    have no kink (``ModuleBuilder.activation``)."""

    @st.composite
    def build(draw: Any) -> Program:
        b = ModuleBuilder(draw, bounded_gain=True, smooth=True)
        x = b.input((2, 3), requires_grad=False)
        first = b.fresh("m")
        params = {"weight": b.weights((3, 3), fan_in=3), "bias": b.weights((3,))}
        b.add_module(Module(first, "Linear", [3, 3], params))
        net, out_shape = b.tree((2, 3), depth=2)
        optimizer = b.optimizer(b.params, b.pick(optimizers))
        _well_conditioned(b)
        for _ in range(draw(st.integers(*(steps if b.steps[-1].cls == "RAdam" else (2, 3))))):
            if b.coin():
                b.steps.append(OptimizerZeroGrad(optimizer, b.coin()))
            else:
                b.steps.append(ModuleZeroGrad(net, b.coin()))
            out = b.call(net, [b.call(first, [x], (2, 3))], out_shape)
            loss = b.loss(out, b.pick(("MSELoss", "L1Loss")))
            if b.shapes[loss]:
                total = b.fresh("t")
                loss = b.bind(total, (), Op(total, "sum", [Ref(loss)]))
            b.steps.append(Backward(loss))
            b.steps.append(OptimizerStep(optimizer))
            b.steps.extend(Observe(p) for p in b.params)
        return b.program()

    return build()


@st.composite
def quadratic_loops(draw: Any, optimizers: tuple[str, ...]) -> Program:
    """One or two float32 leaves of PARAM_VALUES (shapes (3,) or (2, 3)), an optimiser of
    ``optimizers`` over them, then three to five steps of zero_grad, the loss sum((w - t) * (w - t))
    against a fixed target of PARAM_VALUES, backward and step, the leaves observed after each. The
    gradients, 2 * (w - t), round once (in the subtraction, as torch's): a sign-based optimiser
    (``SIGN_BASED``) sees torch's signs, exact zeros included (where w reaches t)."""
    b = ModuleBuilder(draw)
    leaves = []
    for _ in range(draw(st.integers(1, 2))):
        name, shape = b.fresh("w"), b.pick(((3,), (2, 3)))
        b.bind(name, shape, Leaf(name, b.weights(shape), "float32", True), tracked=True)
        leaves.append((name, shape))
    optimizer = b.optimizer([name for name, _ in leaves], b.pick(optimizers))
    for _ in range(draw(st.integers(3, 5))):
        b.steps.append(OptimizerZeroGrad(optimizer, b.coin()))
        terms = []
        for name, shape in leaves:
            target, diff, square, total = b.fresh("t"), b.fresh("d"), b.fresh("s"), b.fresh("l")
            b.steps.append(Leaf(target, b.weights(shape), "float32"))
            b.steps.append(Op(diff, "sub", [Ref(name), Ref(target)]))
            b.steps.append(Op(square, "mul", [Ref(diff), Ref(diff)]))
            b.steps.append(Op(total, "sum", [Ref(square)]))
            terms.append(total)
        loss = terms[0]
        if len(terms) > 1:
            loss = b.fresh("loss")
            b.steps.append(Op(loss, "add", [Ref(terms[0]), Ref(terms[1])]))
        b.steps.append(Backward(loss))
        b.steps.append(OptimizerStep(optimizer))
        b.steps.extend(Observe(name) for name, _ in leaves)
    return b.program()


def _well_conditioned(b: ModuleBuilder) -> None:
    """The drawn optimiser (the last step) given a well-conditioned eps or a stable lr."""
    optimizer = b.steps[-1]
    if optimizer.cls not in NO_EPS:
        optimizer.kwargs["eps"] = b.pick(WELL_CONDITIONED_EPS)
    elif optimizer.cls in SGD_LIKE and "lr" in optimizer.kwargs:  # (torch's defaults are stable too)
        optimizer.kwargs["lr"] = STABLE_SGD_LR if optimizer.cls == "SGD" else STABLE_SGD_LR / 2


# one program in EVERY_FORM (the first drawn, whose choices are all the smallest) runs a scheduler
# of every class in every form of SCHEDULER_OPTIONS (drawn one by one, the forms past the first of
# a class were all but never drawn in the derandomized ci programs)
EVERY_FORM = 4
SCHEDULED_OPTIMIZERS = ("SGD", "Adam", "RMSprop", "NAdam", "Adagrad")
# the schedulers whose step takes no epoch (OneCycleLR's has no closed form, a composite's none)
NO_EPOCH = ("OneCycleLR", *COMPOSITE_SCHEDULERS)


@st.composite
def scheduled_loops(draw: Any) -> Program:
    """A Linear layer, its MSE loss summed, backward once; an optimiser over its parameters (one of
    momentum or betas, for OneCycleLR to cycle, or Adagrad, which has neither) with a scheduler of
    a drawn class and form, or one of each (``EVERY_FORM``); then six to eight rounds of the
    optimiser's step and the scheduler's (mostly in torch's order, sometimes the scheduler first
    in the first two rounds, which torch warns of once), a ReduceLROnPlateau stepped with a metric
    of PLATEAU_METRICS, the others now and then with the deprecated epoch (their closed form);
    each scheduler observed after each round (get_last_lr(), each group's lr, momentum and betas,
    its state_dict), the parameters at the end."""
    b = ModuleBuilder(draw, bounded_gain=True, smooth=True)
    x = b.input((2, 3), requires_grad=False)
    layer = b.fresh("m")
    params = {"weight": b.weights((3, 3), fan_in=3), "bias": b.weights((3,))}
    b.add_module(Module(layer, "Linear", [3, 3], params))
    loss = b.loss(b.call(layer, [x], (2, 3)), "MSELoss")
    if b.shapes[loss]:
        total = b.fresh("t")
        loss = b.bind(total, (), Op(total, "sum", [Ref(loss)]))
    b.steps.append(Backward(loss))
    rounds = draw(st.integers(6, 8))
    if draw(st.integers(0, EVERY_FORM - 1)) == 0:
        plans = [(cls, form) for cls in SCHEDULERS for form in SCHEDULER_OPTIONS[cls]]
    else:
        plans = [(b.pick(SCHEDULERS), None)]
    scheduled = []
    for cls, form in plans:
        optimizer = b.optimizer(b.params, b.pick(SCHEDULED_OPTIMIZERS))
        _well_conditioned(b)
        scheduled.append((optimizer, b.scheduler(optimizer, cls, rounds, form), cls))
    for i in range(rounds):
        for optimizer, scheduler, cls in scheduled:
            first = b.pick((False, False, False, True)) if i < 2 else False
            if not first:
                b.steps.append(OptimizerStep(optimizer))
            if cls == "ReduceLROnPlateau":
                b.steps.append(SchedulerStep(scheduler, metrics=b.pick(PLATEAU_METRICS)))
            else:
                closed = cls not in NO_EPOCH and b.pick((False, False, False, True))
                b.steps.append(SchedulerStep(scheduler, epoch=i + 1 if closed else None))
            if first:
                b.steps.append(OptimizerStep(optimizer))
            b.steps.append(ObserveScheduler(scheduler))
    b.steps.extend(Observe(p) for p in b.params)
    return b.program()


@pytest.mark.rule("OPT-001")
@settings(deadline=None)
@given(program=training_loops(("SGD",)))
def test_sgd_steps(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("OPT-002")
@settings(deadline=None)
@given(program=training_loops(("Adam", "AdamW")))
def test_adam_and_adamw_steps(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("OPT-003")
@settings(deadline=None)
@given(program=training_loops(ADAPTIVE))
def test_rmsprop_adagrad_and_adadelta_steps(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("OPT-004")
@settings(deadline=None)
@given(program=training_loops(ADAM_VARIANTS, steps=(6, 7)))
def test_adamax_nadam_and_radam_steps(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("OPT-007")
@examples(OPT_007_WEIGHT)
@given(program=st.one_of(training_loops(("ASGD",)), quadratic_loops(SIGN_BASED)))
def test_rprop_and_asgd_steps(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("OPT-005")
@settings(deadline=None)
@given(program=scheduled_loops())
def test_schedulers_set_the_learning_rates(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


CLIP_NORM_TYPES = (2.0, 1, float("inf"), float("-inf"), 0.5, 3)
CLIP_MAX_NORMS = (1.0, 0.5, 100.0, 0.0)
CLIP_SHAPES = ((), (3,), (2, 3))


@st.composite
def clipped_gradients(draw: Any) -> Program:
    """Two to four leaves (float32, now and then one float64, one without a gradient; values with
    zeros, infinities and NaN now and then) given gradients by a backward of sum(x * x * 1.5)
    each, then clip_grad_norm_ with a drawn max_norm and norm_type (error_if_nonfinite now and
    then), the total and every .grad observed, then clip_grad_value_ and every .grad again."""
    steps: list = []
    leaves = []
    for i in range(draw(st.integers(2, 4))):
        shape, dtype = (
            draw(st.sampled_from(CLIP_SHAPES)),
            draw(st.sampled_from(("float32", "float32", "float64"))),
        )
        name = f"x{i}"
        grad = i == 0 or draw(st.integers(0, 4)) > 0
        steps.append(Leaf(name, op_data(draw, shape, dtype, edge=draw(st.integers(0, 3)) == 0), dtype, grad))
        leaves.append(name)
        if grad:
            steps.append(Op(f"s{i}", "mul", [Ref(name), Ref(name)]))
            backprop_twice(steps, f"s{i}", shape, f"loss{i}")
    tensors = tuple(Ref(name) for name in leaves)
    kwargs = {"error_if_nonfinite": True} if draw(st.integers(0, 3)) == 0 else {}
    norm_type = draw(st.sampled_from(CLIP_NORM_TYPES))
    steps.append(
        Op(
            "total",
            "nn.utils.clip_grad_norm_",
            [tensors, draw(st.sampled_from(CLIP_MAX_NORMS)), norm_type],
            kwargs,
        )
    )
    steps += [Observe("total")] if not kwargs else []
    steps += [Observe(name) for name in leaves]
    steps.append(Op("none", "nn.utils.clip_grad_value_", [tensors, draw(st.sampled_from((0.5, 2.0, 0.0)))]))
    steps += [Observe(name) for name in leaves]
    return Program(steps)


@pytest.mark.rule("OPT-006")
@settings(deadline=None)
@given(program=clipped_gradients())
def test_gradient_clipping(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
