"""Planted faults that break optimisers (rules OPT-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tests.impl_faults import fault, patched


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
