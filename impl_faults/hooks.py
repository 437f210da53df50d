"""Planted faults that break tensor and node hooks (rules HOOK-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

from impl_faults import fault, patched


@fault({"HOOK-002": "hook differs", "HOOK-004": "expected a tensor, got None"})
def engine_order_reversed() -> Iterator[None]:
    """The ready queue pops the earliest-created node first instead of the latest-created one."""
    import heapq

    from impl.autograd import engine

    class ReversedHeap:
        """heapq with the priority (minus the sequence number) negated on the way in."""

        heappop = staticmethod(heapq.heappop)

        @staticmethod
        def heappush(heap: list, item: tuple) -> None:
            priority, *rest = item
            heapq.heappush(heap, (-priority, *rest))

    with patched(engine, "heapq", lambda _orig: ReversedHeap):
        yield


@fault({"HOOK-006": ".grad: value"})
def retain_grad_hook_first() -> Iterator[None]:
    """retain_grad's hook runs before the tensor's other hooks instead of last among them."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def retain_grad_first(node: Any, grads: list) -> list:
            retains = node._retains_grad_hooks
            for slot, hook in list(retains.items()):
                hook(grads[slot])
            with patched(node, "_retains_grad_hooks", lambda _retains: {}):
                return original(node, grads)

        return retain_grad_first

    with patched(engine, "call_tensor_pre_hooks", make):
        yield


def tensor_pre_hooks_as(run: Callable[[Callable, Any, list], list]) -> AbstractContextManager[None]:
    """The engine's ``call_tensor_pre_hooks(node, grads)`` replaced by ``run(original, node, grads)``."""
    from impl.autograd import engine

    return patched(engine, "call_tensor_pre_hooks", lambda original: partial(run, original))


@fault({"HOOK-001": "hook differs"})
def tensor_hooks_run_in_reverse() -> Iterator[None]:
    """Several hooks on one tensor run from the last registered to the first."""

    def reverse(original: Callable, node: Any, grads: list) -> list:
        def reversed_tables(hooks: dict) -> dict:
            return {slot: dict(reversed(h.items())) for slot, h in hooks.items()}

        with patched(node, "_tensor_pre_hooks", reversed_tables):
            return original(node, grads)

    with tensor_pre_hooks_as(reverse):
        yield


@fault({"HOOK-003": "hook grad"})
def tensor_hook_result_not_passed_on() -> Iterator[None]:
    """The gradient a tensor hook returns reaches the next hooks but not the node nor the leaf's .grad."""

    def keep_incoming(original: Callable, node: Any, grads: list) -> list:
        original(node, list(grads))
        return grads

    with tensor_pre_hooks_as(keep_incoming):
        yield


@fault({"HOOK-005": "hooks differs"})
def removed_hook_still_fires() -> Iterator[None]:
    """RemovableHandle.remove leaves the hook registered (first seen in the tensor's hook table)."""
    from impl.utils.hooks import RemovableHandle

    with patched(RemovableHandle, "remove", lambda _orig: lambda self: None):
        yield


@fault({"HOOK-007": "expected error"})
def backward_pre_hook_result_not_passed_on() -> Iterator[None]:
    """The grad_output a module's full backward pre-hook returns is not what flows into the module."""
    from impl.nn.modules._backward_hook import BackwardHook

    def make(original: Callable) -> Callable:
        def output_hook(self: BackwardHook, grad_inputs: tuple, grad_outputs: tuple) -> None:
            original(self, grad_inputs, grad_outputs)

        return output_hook

    with patched(BackwardHook, "_output_hook", make):
        yield


def hook_result_check_as(check: Callable[[Callable, Any, Any, Any], None]) -> AbstractContextManager[None]:
    """The engine's check of a hook's returned gradient, ``_check_hook_result(hook, value, new)``,
    replaced by ``check(original, hook, value, new)``."""
    from impl.autograd import engine

    return patched(engine, "_check_hook_result", lambda original: partial(check, original))


@fault({"HOOK-004": "expected error"})
def hook_size_change_accepted() -> Iterator[None]:
    """A hook may return a gradient of another size: only its dtype is checked."""
    import impl

    def dtype_only(original: Callable, hook: Any, value: Any, new: Any) -> None:
        original(hook, value, impl.empty(tuple(value.shape), dtype=new.dtype))

    with hook_result_check_as(dtype_only):
        yield


@fault({"HOOK-004": "expected error"})
def hook_dtype_change_accepted() -> Iterator[None]:
    """A hook may return a gradient of another dtype (cast back later): only its size is checked."""

    def size_only(original: Callable, hook: Any, value: Any, new: Any) -> None:
        original(hook, value, new.to(value.dtype))

    with hook_result_check_as(size_only):
        yield


@fault({"HOOK-004": "message differs"})
def hook_error_names_the_function_type() -> Iterator[None]:
    """The error for a hook's wrong gradient names the hook's type ('function'), not the hook."""

    def unnamed(original: Callable, hook: Any, value: Any, new: Any) -> None:
        original(type(hook), value, new)

    with hook_result_check_as(unnamed):
        yield


@fault({"HOOK-006": "hook differs"})
def node_pre_hooks_before_tensor_hooks() -> Iterator[None]:
    """A node's pre-hooks run before the tensor hooks and retain_grad hooks of its output."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def pre_hooks_first(node: Any, grads: list, edges: tuple) -> tuple:
            for hook in list(node._pre_hooks.values()):
                new = hook(tuple(grads))
                if new is not None:
                    grads = list(engine._hook_values(hook, tuple(grads), new))
            with patched(node, "_pre_hooks", lambda _hooks: {}):
                return original(node, grads, edges)

        return pre_hooks_first

    with patched(engine, "_call_function", make):
        yield


@fault({"HOOK-006": "hook grad_outputs"})
def post_hooks_see_incoming_gradients() -> Iterator[None]:
    """A node's post-hooks receive the gradients as they reached the node, not as its pre-hooks
    (and tensor hooks) replaced them before it ran."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def incoming_to_post_hooks(node: Any, grads: list, edges: tuple) -> tuple:
            incoming = tuple(grads)

            def given_incoming(hooks: dict) -> dict:
                return {k: partial(lambda h, out, _grads: h(out, incoming), h) for k, h in hooks.items()}

            with patched(node, "_post_hooks", given_incoming):
                return original(node, grads, edges)

        return incoming_to_post_hooks

    with patched(engine, "_call_function", make):
        yield


@fault({"HOOK-006": "hook grad"})
def post_accumulate_hooks_before_grad_written() -> Iterator[None]:
    """A leaf's post-accumulate-grad hooks run before its .grad is written instead of after."""
    from impl.autograd.engine import AccumulateGrad

    def make(original: Callable) -> Callable:
        def hooks_first(self: AccumulateGrad, grads: tuple) -> tuple:
            for hook in list(self._post_acc_hooks.values()):
                hook(self.variable)
            with patched(self, "_post_acc_hooks", lambda _hooks: {}):
                return original(self, grads)

        return hooks_first

    with patched(AccumulateGrad, "apply", make):
        yield


def module_hooks_wrapped(attr: str, wrap: Callable[[Callable], Callable]) -> AbstractContextManager[None]:
    """During each module call with hooks, the module's hooks of ``attr`` (``_forward_pre_hooks``,
    ``_forward_hooks``, ``_backward_hooks``, ...) are called through ``wrap(hook)``."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def call_with_hooks(self: Module, state: Any) -> Any:
            hooks = getattr(self, attr)
            wrapped = type(hooks)((k, wrap(h)) for k, h in hooks.items())
            object.__setattr__(self, attr, wrapped)
            try:
                return original(self, state)
            finally:
                object.__setattr__(self, attr, hooks)

        return call_with_hooks

    return patched(Module, "_call_with_hooks", make)


def _result_dropped(hook: Callable) -> Callable:
    def dropped(*args: Any) -> None:
        hook(*args)

    return dropped


@fault({"HOOK-007": "hook args"})
def forward_pre_hook_result_ignored() -> Iterator[None]:
    """The arguments a module's forward pre-hook returns are not the ones forward is called with."""
    with module_hooks_wrapped("_forward_pre_hooks", _result_dropped):
        yield


@fault({"HOOK-007": "graph differs"})
def forward_hook_result_ignored() -> Iterator[None]:
    """The output a module's forward hook returns does not replace the module's output."""
    with module_hooks_wrapped("_forward_hooks", _result_dropped):
        yield


@fault({"HOOK-007": "hook grad_input"})
def full_backward_hook_result_ignored() -> Iterator[None]:
    """The grad_input a module's full backward hook returns is not what flows on to its inputs."""
    with module_hooks_wrapped("_backward_hooks", _result_dropped):
        yield


@fault({"HOOK-007": "hook grad_input"})
def full_backward_hook_gradients_swapped() -> Iterator[None]:
    """A module's full backward hook receives (grad_output, grad_input), not (grad_input, grad_output)."""

    def swapped(hook: Callable) -> Callable:
        return lambda module, grad_input, grad_output: hook(module, grad_output, grad_input)

    with module_hooks_wrapped("_backward_hooks", swapped):
        yield


@fault({"HOOK-002": "got hook"})
def tensor_hooks_fire_twice() -> Iterator[None]:
    """A tensor's hooks run twice per backward: once when its node is popped, again in call_function."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def hooks_again(node: Any, grads: list, edges: tuple) -> tuple:
            return original(node, engine.call_tensor_pre_hooks(node, grads), edges)

        return hooks_again

    with patched(engine, "_call_function", make):
        yield


@fault({"HOOK-001": "hook grad"})
def tensor_hooks_all_get_incoming_gradient() -> Iterator[None]:
    """Each of several hooks on one tensor receives the gradient as it reached the tensor, not the
    one the previous hook returned (the last result still flows on)."""

    def incoming(original: Callable, node: Any, grads: list) -> list:
        arrived = list(grads)

        def given_arrived(hooks: dict) -> dict:
            return {
                slot: {k: partial(lambda h, s, _grad: h(arrived[s]), h, slot) for k, h in table.items()}
                for slot, table in hooks.items()
            }

        with patched(node, "_tensor_pre_hooks", given_arrived):
            return original(node, grads)

    with tensor_pre_hooks_as(incoming):
        yield


@fault({"HOOK-002": "hook grad"})
def tensor_hooks_get_grad_fn_output() -> Iterator[None]:
    """A non-leaf's tensor hooks receive the gradient its grad_fn passes to its first input (they
    run as post-hooks of the node) instead of the gradient of the tensor itself."""
    from impl.autograd import engine
    from impl.autograd.engine import AccumulateGrad

    def make(original: Callable) -> Callable:
        def hooks_after_node(node: Any, grads: list, edges: tuple) -> tuple:
            hooks = node._tensor_pre_hooks
            if isinstance(node, AccumulateGrad) or not hooks:
                return original(node, grads, edges)
            with patched(node, "_tensor_pre_hooks", lambda _hooks: {}):
                outputs = original(node, grads, edges)
            for table in hooks.values():
                for hook in list(table.values()):
                    hook(outputs[0] if outputs and outputs[0] is not None else grads[0])
            return outputs

        return hooks_after_node

    with patched(engine, "_call_function", make):
        yield


@fault({"HOOK-003": ".grad"})
def tensor_hook_none_drops_gradient() -> Iterator[None]:
    """A tensor hook returning None replaces the gradient by None (nothing flows on) instead of
    leaving it unchanged."""

    def none_taken(original: Callable, node: Any, grads: list) -> list:
        def dropping(hooks: dict) -> dict:
            def drop(h: Callable, slot: int, grad: Any) -> Any:
                new = h(grad)
                if new is None:
                    grads[slot] = None
                return new

            return {slot: {k: partial(drop, h, slot) for k, h in t.items()} for slot, t in hooks.items()}

        with patched(node, "_tensor_pre_hooks", dropping):
            return original(node, grads)

    with tensor_pre_hooks_as(none_taken):
        yield


@fault({"HOOK-003": ".grad: value"})
def leaf_grad_written_before_hooks() -> Iterator[None]:
    """A leaf's .grad gets the gradient as it reached the leaf, not as its tensor hooks replaced it."""
    from impl.autograd.engine import AccumulateGrad

    def as_arrived(original: Callable, node: Any, grads: list) -> list:
        replaced = original(node, list(grads))
        return grads if isinstance(node, AccumulateGrad) else replaced

    with tensor_pre_hooks_as(as_arrived):
        yield


@fault({"HOOK-005": "hook differs"})
def remove_takes_the_latest_hook() -> Iterator[None]:
    """RemovableHandle.remove removes the most recently registered hook of its table, not its own."""
    from impl.utils.hooks import RemovableHandle

    def make(original: Callable) -> Callable:
        def remove(self: RemovableHandle) -> None:
            hooks = self.hooks_dict_ref()
            if hooks is not None and self.id in hooks and self.extra_dict_ref is None:
                hooks.pop(next(reversed(hooks)))
                return
            original(self)

        return remove

    with patched(RemovableHandle, "remove", make):
        yield


@fault({"HOOK-005": "got error"})
def second_remove_raises() -> Iterator[None]:
    """RemovableHandle.remove raises KeyError when its hook was already removed (torch ignores it)."""
    from impl.utils.hooks import RemovableHandle

    def make(original: Callable) -> Callable:
        def remove(self: RemovableHandle) -> None:
            hooks = self.hooks_dict_ref()
            if hooks is not None and self.extra_dict_ref is None:
                del hooks[self.id]
                return
            original(self)

        return remove

    with patched(RemovableHandle, "remove", make):
        yield


@fault({"HOOK-005": "hooks differs"})
def backward_hooks_never_none() -> Iterator[None]:
    """``Tensor._backward_hooks`` reads as an empty OrderedDict where torch's is None (no hook yet,
    or a new grad_fn after an in-place op)."""
    from collections import OrderedDict

    from impl._tensor import Tensor

    def make(original: property) -> property:
        def read(t: Tensor) -> Any:
            hooks = original.fget(t)
            return OrderedDict() if hooks is None else hooks

        return property(read, original.fset, original.fdel)

    with patched(Tensor, "_backward_hooks", make):
        yield
