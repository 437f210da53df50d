"""Planted faults that break module hooks (rules MHOOK-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tests.impl_faults import fault, patched


@fault({"MHOOK-004": "grad_input"})
def full_backward_hook_gets_outputs() -> Iterator[None]:
    """A module's full backward hooks receive the gradients w.r.t. its outputs as ``grad_input``."""
    from impl.nn.modules._backward_hook import BackwardHook

    def make(original: Callable) -> Callable:
        def init(self: BackwardHook, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
            swapped = [lambda m, _gi, go, hook=hook: hook(m, go, go) for hook in user_hooks]
            original(self, module, swapped, user_pre_hooks)

        return init

    with patched(BackwardHook, "__init__", make):
        yield
