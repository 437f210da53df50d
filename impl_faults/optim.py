"""Planted faults that break optimisers (rules OPT-*)."""

from __future__ import annotations

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
