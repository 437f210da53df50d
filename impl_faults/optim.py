"""Planted faults that break optimisers and learning-rate schedulers (rules OPT-*)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from impl_faults import fault, patched


@contextmanager
def option_replaced(cls: type, key: str, value: Callable[[dict[str, Any]], Any]) -> Iterator[None]:
    """``cls.step`` reads ``value(group)`` as each param group's option ``key`` (the group's own
    value is restored after the step): the optimiser's update handles that option wrongly."""

    def make(original: Callable) -> Callable:
        def step(self: Any, closure: Callable[[], Any] | None = None) -> Any:
            saved = [group[key] for group in self.param_groups]
            for group in self.param_groups:
                group[key] = value(group)
            try:
                return original(self, closure)
            finally:
                for group, kept in zip(self.param_groups, saved, strict=True):
                    group[key] = kept

        return step

    with patched(cls, "step", make):
        yield


@fault({"OPT-001": ": value"})
def sgd_momentum_buffer_starts_at_zero() -> Iterator[None]:
    """SGD's momentum buffer starts at zeros (so the first step is damped) instead of at the first
    gradient."""
    import impl
    from impl.optim.sgd import SGD

    def make(original: Callable) -> Callable:
        def step(self: SGD, closure: Callable[[], Any] | None = None) -> Any:
            for group in self.param_groups:
                for p in group["params"]:
                    if group["momentum"] != 0 and p.grad is not None:
                        self.state[p].setdefault("momentum_buffer", impl.zeros_like(p))
            return original(self, closure)

        return step

    with patched(SGD, "step", make):
        yield


@fault({"OPT-001": ": value"})
def sgd_momentum_buffer_not_kept() -> Iterator[None]:
    """SGD starts a new momentum buffer at every step instead of keeping it from step to step (so
    momentum never carries a past gradient)."""
    from impl.optim.sgd import SGD

    def make(original: Callable) -> Callable:
        def step(self: SGD, closure: Callable[[], Any] | None = None) -> Any:
            for state in self.state.values():
                state.pop("momentum_buffer", None)
            return original(self, closure)

        return step

    with patched(SGD, "step", make):
        yield


@fault({"OPT-001": ": value"})
def sgd_dampening_ignored() -> Iterator[None]:
    """SGD adds the whole gradient to its momentum buffer, ignoring dampening."""
    from impl.optim.sgd import SGD

    with option_replaced(SGD, "dampening", lambda group: 0):
        yield


@fault({"OPT-001": ": value"})
def sgd_nesterov_ignored() -> Iterator[None]:
    """SGD with nesterov=True steps along the momentum buffer (plain momentum) instead of along the
    gradient plus momentum times the buffer."""
    from impl.optim.sgd import SGD

    with option_replaced(SGD, "nesterov", lambda group: False):
        yield


@fault({"OPT-001": ": value"})
def sgd_weight_decay_sign() -> Iterator[None]:
    """SGD subtracts weight_decay times the parameter from the gradient instead of adding it (the
    parameters grow)."""
    from impl.optim.sgd import SGD

    with option_replaced(SGD, "weight_decay", lambda group: -group["weight_decay"]):
        yield


@fault({"OPT-001": ": value"})
def sgd_maximize_ignored() -> Iterator[None]:
    """SGD with maximize=True descends the gradient instead of ascending it."""
    from impl.optim.sgd import SGD

    with option_replaced(SGD, "maximize", lambda group: False):
        yield


@fault({"OPT-002": ": value"})
def adamw_weight_decay_coupled() -> Iterator[None]:
    """AdamW adds its weight decay to the gradient (Adam's L2 penalty) instead of decaying the
    parameters directly."""
    from impl.optim.adam import Adam

    def make(original: Callable) -> Callable:
        def init(self: Adam, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **{**kwargs, "decoupled_weight_decay": False})

        return init

    with patched(Adam, "__init__", make):
        yield


@fault({"OPT-002": ": value"})
def adam_weight_decay_ignored() -> Iterator[None]:
    """Adam ignores weight_decay (only AdamW decays the parameters)."""
    from impl.optim.adam import Adam

    def weight_decay(group: dict[str, Any]) -> float:
        return group["weight_decay"] if group["decoupled_weight_decay"] else 0

    with option_replaced(Adam, "weight_decay", weight_decay):
        yield


@fault({"OPT-002": ": value"})
def adam_amsgrad_ignored() -> Iterator[None]:
    """Adam and AdamW with amsgrad=True divide by the current second moment instead of its running
    maximum."""
    from impl.optim.adam import Adam

    with option_replaced(Adam, "amsgrad", lambda group: False):
        yield


@fault({"OPT-002": ": value"})
def adam_maximize_ignored() -> Iterator[None]:
    """Adam and AdamW with maximize=True descend the gradient instead of ascending it."""
    from impl.optim.adam import Adam

    with option_replaced(Adam, "maximize", lambda group: False):
        yield


@fault({"OPT-002": ": value"})
def adam_step_count_not_kept() -> Iterator[None]:
    """Adam's step count restarts at every step, so its bias corrections are always those of the
    first step, while the moments run on."""
    from impl.optim.adam import Adam

    def make(original: Callable) -> Callable:
        def update(self: Adam, p: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
            state["step"].zero_()
            original(self, p, group, state)

        return update

    with patched(Adam, "_update", make):
        yield


@fault({"OPT-001": ": value", "OPT-002": ": value"})
def optimizer_zero_grad_keeps_values() -> Iterator[None]:
    """optimizer.zero_grad(set_to_none=False) detaches the gradients but leaves their values, so
    the next backward accumulates onto them."""
    from impl.optim.optimizer import Optimizer

    def make(original: Callable) -> Callable:
        def zero_grad(self: Optimizer, set_to_none: bool = True) -> None:
            if set_to_none:
                original(self, set_to_none)

        return zero_grad

    with patched(Optimizer, "zero_grad", make):
        yield


@fault({"OPT-001": ": value"})
def sgd_default_lr_tenfold() -> Iterator[None]:
    """SGD without ``lr`` steps with 0.01 (an old default) instead of torch's 1e-3."""
    from impl.optim.sgd import SGD

    def make(original: Callable) -> Callable:
        def init(self: SGD, params: Any, lr: float = 1e-2, *args: Any, **kwargs: Any) -> None:
            original(self, params, lr, *args, **kwargs)

        return init

    with patched(SGD, "__init__", make):
        yield


# -- RMSprop, Adagrad, Adadelta (OPT-003) ---------------------------------------------------------
@fault({"OPT-003": ": value"})
def rmsprop_centered_term_dropped() -> Iterator[None]:
    """Centered RMSprop divides by the root of the mean square alone, without subtracting the
    squared running mean of the gradient (as plain RMSprop)."""
    from impl.optim.adaptive import RMSprop

    with option_replaced(RMSprop, "centered", lambda group: False):
        yield


@fault({"OPT-003": ": value"})
def rmsprop_momentum_ignored() -> Iterator[None]:
    """RMSprop with momentum steps along the scaled gradient of this step, not its momentum buffer."""
    from impl.optim.adaptive import RMSprop

    with option_replaced(RMSprop, "momentum", lambda group: 0):
        yield


@fault({"OPT-003": ": value"})
def adagrad_lr_decay_off_by_one() -> Iterator[None]:
    """Adagrad decays its lr by the step count (lr / (1 + t lr_decay)) instead of by the steps
    before this one (lr / (1 + (t - 1) lr_decay)): its first step is already decayed."""
    from impl.optim.adaptive import Adagrad

    def make(original: Callable) -> Callable:
        def update(self: Adagrad, p: Any, grad: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
            state["step"].add_(1)
            original(self, p, grad, group, state)
            state["step"].sub_(1)

        return update

    with patched(Adagrad, "_update", make):
        yield


@fault({"OPT-003": ": value"})
def adagrad_initial_accumulator_ignored() -> Iterator[None]:
    """Adagrad's sum of squares starts at zero whatever initial_accumulator_value says."""
    import impl
    from impl.optim.adaptive import Adagrad

    def make(original: Callable) -> Callable:
        def init_state(self: Adagrad, p: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
            original(self, p, group, state)
            state["sum"] = impl.zeros_like(p)

        return init_state

    with patched(Adagrad, "_init_state", make):
        yield


@fault({"OPT-003": ": value"})
def adadelta_rho_inverted() -> Iterator[None]:
    """Adadelta keeps 1 - rho of its running averages (and adds rho of the new squares) instead of
    keeping rho."""
    from impl.optim.adaptive import Adadelta

    with option_replaced(Adadelta, "rho", lambda group: 1 - group["rho"]):
        yield


# -- Adamax, NAdam, RAdam (OPT-004) ---------------------------------------------------------------
@fault({"OPT-004": ": value"})
def adamax_step_count_not_kept() -> Iterator[None]:
    """Adamax's step count restarts at every step, so its bias correction is always the first
    step's (1 - beta1) while the first moment runs on."""
    from impl.optim.adam_variants import Adamax

    def make(original: Callable) -> Callable:
        def update(self: Adamax, p: Any, grad: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
            state["step"].zero_()
            original(self, p, grad, group, state)

        return update

    with patched(Adamax, "_update", make):
        yield


@fault({"OPT-004": ": value"})
def nadam_momentum_decay_off_by_one() -> Iterator[None]:
    """NAdam's momentum coefficients run a step ahead: mu_t is computed at t + 1 (and the next
    step's at t + 2), so the momentum decays one step early."""
    from impl.optim import adam_variants

    def make(original: Callable) -> Callable:
        return lambda beta1, step, momentum_decay: original(beta1, step + 1, momentum_decay)

    with patched(adam_variants, "momentum_coefficient", make):
        yield


@fault({"OPT-004": ": value"})
def nadam_mu_product_not_kept() -> Iterator[None]:
    """NAdam's running product of momentum coefficients restarts at 1 every step."""
    from impl.optim.adam_variants import NAdam

    def make(original: Callable) -> Callable:
        def update(self: NAdam, p: Any, grad: Any, group: dict[str, Any], state: dict[str, Any]) -> None:
            state["mu_product"].fill_(1.0)
            original(self, p, grad, group, state)

        return update

    with patched(NAdam, "_update", make):
        yield


@fault({"OPT-004": ": value"})
def radam_never_rectified() -> Iterator[None]:
    """RAdam never switches to its rectified adaptive update: past the fifth step it still steps
    by the bias-corrected first moment alone."""
    from impl.optim import adam_variants

    with patched(adam_variants, "RECTIFIED_ABOVE", lambda original: float("inf")):
        yield


@fault({"OPT-004": ": value"})
def nadam_radam_decay_coupled() -> Iterator[None]:
    """NAdam and RAdam with decoupled_weight_decay=True add the decay to the gradient (an L2
    penalty) instead of shrinking the parameters directly."""
    from impl.optim.adam_variants import NAdam, RAdam

    with (option_replaced(NAdam, "decoupled_weight_decay", lambda group: False),
          option_replaced(RAdam, "decoupled_weight_decay", lambda group: False)):
        yield


# -- learning-rate schedulers (OPT-005) -----------------------------------------------------------
@fault({"OPT-005": "last_lr differs"})
def onecycle_cos_anneals_linearly() -> Iterator[None]:
    """OneCycleLR with anneal_strategy='cos' anneals the lr (and the momentum) along a straight
    line, as 'linear' does."""
    from impl.optim.lr_scheduler import OneCycleLR

    def make(original: Callable) -> Callable:
        def anneal(self: OneCycleLR, start: float, end: float, pct: float) -> float:
            return (end - start) * pct + start

        return anneal

    with patched(OneCycleLR, "_anneal_func", make):
        yield


@fault({"OPT-005": "last_lr differs"})
def reduce_on_plateau_cooldown_ignored() -> Iterator[None]:
    """ReduceLROnPlateau counts bad epochs during its cooldown, so it reduces the lr again as soon
    as the patience runs out, cooldown or not."""
    from impl.optim.lr_scheduler import ReduceLROnPlateau

    with patched(ReduceLROnPlateau, "in_cooldown", lambda original: property(lambda self: False)):
        yield


@fault({"OPT-005": "last_lr differs"})
def multistep_repeated_milestone_once() -> Iterator[None]:
    """MultiStepLR multiplies by gamma once at a milestone listed twice, instead of by gamma**2."""
    from impl.optim.lr_scheduler import MultiStepLR

    def make(original: Callable) -> Callable:
        def get_lr(self: MultiStepLR) -> list:
            counts = self.milestones
            self.milestones = type(counts)(set(counts))
            try:
                return original(self)
            finally:
                self.milestones = counts

        return get_lr

    with patched(MultiStepLR, "get_lr", make):
        yield


@fault({"OPT-005": "last_lr differs"})
def cosine_annealing_closed_form_every_step() -> Iterator[None]:
    """CosineAnnealingLR computes every lr by its closed form from base_lr instead of torch's
    recursive form from the current lr: the same schedule, rounded differently."""
    from impl.optim.lr_scheduler import CosineAnnealingLR

    def make(original: Callable) -> Callable:
        def get_lr(self: CosineAnnealingLR) -> list:
            return original(self) if self._is_initial else self._get_closed_form_lr()

        return get_lr

    with patched(CosineAnnealingLR, "get_lr", make):
        yield


@fault({"OPT-005": "Detected call of `lr_scheduler.step()` before `optimizer.step()`"})
def scheduler_before_optimizer_not_warned() -> Iterator[None]:
    """A scheduler stepped before its optimizer ever stepped does not warn that the first value of
    the schedule is skipped."""
    from impl.optim import lr_scheduler

    def make(original: Callable) -> Callable:
        def track(optimizer: Any) -> None:
            original(optimizer)
            optimizer._opt_called = True

        return track

    with patched(lr_scheduler, "_track_step_calls", make):
        yield


@fault({"OPT-005": "last_lr differs"})
def lambda_lr_epoch_off_by_one() -> Iterator[None]:
    """LambdaLR calls lr_lambda with the next epoch (last_epoch + 1) instead of last_epoch."""
    from impl.optim.lr_scheduler import LambdaLR

    def make(original: Callable) -> Callable:
        def get_lr(self: LambdaLR) -> list:
            self._warn_outside_step()
            lambdas = zip(self.lr_lambdas, self.base_lrs, strict=True)
            return [base * fn(self.last_epoch + 1) for fn, base in lambdas]

        return get_lr

    with patched(LambdaLR, "get_lr", make):
        yield


@fault({"OPT-005": "last_lr differs"})
def constant_lr_never_restored() -> Iterator[None]:
    """ConstantLR keeps the lr at factor times the base lr after total_iters instead of restoring it."""
    from impl.optim.lr_scheduler import ConstantLR

    def make(original: Callable) -> Callable:
        def get_lr(self: ConstantLR) -> list:
            if self.last_epoch == self.total_iters and not self._is_initial:
                return [group["lr"] for group in self.optimizer.param_groups]
            return original(self)

        return get_lr

    with patched(ConstantLR, "get_lr", make):
        yield


@fault({"OPT-005": "last_lr differs"})
def cyclic_lr_triangular2_not_halved() -> Iterator[None]:
    """CyclicLR's triangular2 mode keeps the full height in every cycle (as triangular) instead of
    halving it each cycle."""
    from impl.optim.lr_scheduler import CyclicLR

    with patched(CyclicLR, "_triangular2_scale_fn", lambda original: staticmethod(lambda x: 1.0)):
        yield


@fault({"OPT-005": "last_lr differs"})
def sequential_lr_milestone_steps_on() -> Iterator[None]:
    """SequentialLR steps the next scheduler on at its milestone instead of restarting it at epoch 0."""
    from impl.optim.lr_scheduler import SequentialLR

    def make(original: Callable) -> Callable:
        def step(self: SequentialLR) -> None:
            self.last_epoch += 1
            scheduler = self._schedulers[bisect_right(self._milestones, self.last_epoch)]
            scheduler.step()
            self._last_lr = scheduler.get_last_lr()

        return step

    with patched(SequentialLR, "step", make):
        yield


# -- Rprop and ASGD (OPT-007) ---------------------------------------------------------------------
@fault({"OPT-007": ": value"})
def rprop_etas_swapped() -> Iterator[None]:
    """Rprop shrinks a step size where the gradient kept its sign and grows it where the sign
    changed (etaminus and etaplus swapped)."""
    from impl.optim.sign_and_average import Rprop

    with option_replaced(Rprop, "etas", lambda group: group["etas"][::-1]):
        yield


@fault({"OPT-007": ": value"})
def asgd_lambd_ignored() -> Iterator[None]:
    """ASGD neither decays the parameters by lambd * eta nor its eta by lambd (lambd taken as 0)."""
    from impl.optim.sign_and_average import ASGD

    with option_replaced(ASGD, "lambd", lambda group: 0.0):
        yield


@fault({"OPT-006": ": value"})
def clip_coef_not_clamped() -> Iterator[None]:
    """clip_grad_norm_ multiplies the gradients by max_norm / (total + 1e-6) unclamped: gradients
    whose total norm is under max_norm grow."""
    from impl.nn.utils import clip_grad

    def make(_original: Callable) -> Callable:
        def clip(parameters: Any, max_norm: float, total_norm: Any, foreach: Any = None) -> None:
            for p in parameters:
                if p.grad is not None:
                    p.grad.mul_((float(max_norm) / (total_norm + 1e-6)).to(p.grad.dtype))

        return clip

    with patched(clip_grad, "clip_grads_with_norm_", make):
        yield


@fault({"OPT-006": ": value"})
def clip_total_inf_norm_summed() -> Iterator[None]:
    """clip_grad_norm_'s total norm of norm_type inf is the sum of |grad| (the 1-norm), not the max."""
    from impl.nn.utils import clip_grad

    def make(original: Callable) -> Callable:
        def total(tensors: Any, norm_type: float = 2.0, *args: Any) -> Any:
            return original(tensors, 1.0 if norm_type == float("inf") else norm_type, *args)

        return total

    with patched(clip_grad, "get_total_norm", make):
        yield
