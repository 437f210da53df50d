"""Planted faults that break the seed 004 scripts (rules SEED-004-*: examples/seeds/seed004_*.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched
from impl_faults.hooks import tensor_pre_hooks_as


@fault({"SEED-004-2": "stdout line"})
def tensor_hooks_see_original_grad() -> Iterator[None]:
    """Each tensor hook receives the original gradient, not the one a previous hook returned."""
    def each_sees_the_original(original: Callable, node: Any, grads: list) -> list:
        given = list(grads)

        def seeing_given(tables: dict) -> dict:
            return {
                slot: {key: (lambda _g, h=hook, s=slot: h(given[s])) for key, hook in hooks.items()}
                for slot, hooks in tables.items()
            }

        with patched(node, "_tensor_pre_hooks", seeing_given):
            return original(node, grads)

    with tensor_pre_hooks_as(each_sees_the_original):
        yield


@fault({"SEED-004-3": "stdout line"})
def forward_hook_gets_lone_input_unpacked() -> Iterator[None]:
    """A forward hook of a module called with one input receives that tensor instead of the 1-tuple."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def register(self: Module, hook: Callable, **kwargs: Any) -> Any:
            if kwargs.get("with_kwargs"):
                return original(self, hook, **kwargs)

            def unpacked(module: Module, args: tuple, output: Any) -> Any:
                return hook(module, args[0] if len(args) == 1 else args, output)

            return original(self, unpacked, **kwargs)

        return register

    with patched(Module, "register_forward_hook", make):
        yield
