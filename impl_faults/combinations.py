"""Planted faults that only combinations show (rules COMB-*): each is right on its own and wrong
where real training code combines two things (an option with another, a tied parameter with an
optimiser, a hook with a module called twice, a retained graph with an optimiser step)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"COMB-001": "expected None, got a tensor"})
def optimizer_zero_grad_materializes_grads() -> Iterator[None]:
    """optimizer.zero_grad(set_to_none=False) gives a parameter that has no gradient (one left out
    of backward's ``inputs``) a gradient of zeros, instead of leaving it None."""
    import impl
    from impl.optim.optimizer import Optimizer

    def make(original: Callable) -> Callable:
        def zero_grad(self: Optimizer, set_to_none: bool = True) -> None:
            original(self, set_to_none)
            if not set_to_none:
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is None:
                            p.grad = impl.zeros_like(p)

        return zero_grad

    with patched(Optimizer, "zero_grad", make):
        yield


@fault({"COMB-001": "is_leaf differs"})
def module_zero_grad_keeps_grad_graph() -> Iterator[None]:
    """Module.zero_grad(set_to_none=False) zeroes each gradient in place without detaching it
    first, so a gradient made by backward(create_graph=True) keeps a graph (ZeroBackward0)."""
    from impl.nn.modules.module import Module

    def zero_grad(self: Module, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.zero_()

    with patched(Module, "zero_grad", lambda _orig: zero_grad):
        yield


@fault({"COMB-001": "expected error RuntimeError"})
def backward_create_graph_retains_graph() -> Iterator[None]:
    """backward(create_graph=True) keeps the graph even when retain_graph=False is given (retain_graph
    taken as ``retain_graph or create_graph`` instead of defaulting to create_graph only when None),
    so a later backward through it runs instead of raising."""
    import impl.autograd

    def make(original: Callable) -> Callable:
        def backward(tensors: Any, grad_tensors: Any = None, retain_graph: Any = None,
                     create_graph: bool = False, *args: Any, **kwargs: Any) -> None:
            original(tensors, grad_tensors, retain_graph or create_graph, create_graph, *args, **kwargs)

        return backward

    with patched(impl.autograd, "backward", make):
        yield


@fault({"COMB-002": "expected error RuntimeError"})
def grad_create_graph_retains_graph() -> Iterator[None]:
    """autograd.grad(create_graph=True) keeps the graph even when retain_graph=False is given, so
    the loss's backward through the same graph runs instead of raising."""
    import impl.autograd

    def make(original: Callable) -> Callable:
        def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: Any = None,
                 create_graph: bool = False, *args: Any, **kwargs: Any) -> Any:
            return original(outputs, inputs, grad_outputs, retain_graph or create_graph, create_graph,
                            *args, **kwargs)

        return grad

    with patched(impl.autograd, "grad", make):
        yield


@fault({"COMB-003": "parameters differs", "COMB-004": "parameters differs"})
def named_parameters_repeats_shared() -> Iterator[None]:
    """named_parameters() (so parameters(), and an optimiser given them) lists a tied parameter, or
    the parameters of a shared submodule, at each of its places instead of once."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def named_parameters(self: Module, prefix: str = "", recurse: bool = True,
                             remove_duplicate: bool = True) -> Any:
            return original(self, prefix, recurse, False)

        return named_parameters

    with patched(Module, "named_parameters", make):
        yield


@fault({"COMB-003": "state_dict differs"})
def state_dict_drops_repeated_parameters() -> Iterator[None]:
    """state_dict() keeps a tied parameter under its first key only (the tensors deduplicated as
    named_parameters() does), instead of one key per module holding it."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def state_dict(self: Module, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            if args or kwargs:  # a submodule's part of the root's state_dict: the root deduplicates
                return result
            seen: set[int] = set()
            for key, p in self.named_parameters(remove_duplicate=False):
                if id(p) in seen:
                    result.pop(key, None)
                seen.add(id(p))
            return result

        return state_dict

    with patched(Module, "state_dict", make):
        yield


@fault({"COMB-004": "state_dict differs"})
def state_dict_visits_shared_module_once() -> Iterator[None]:
    """state_dict() visits a submodule held at two places once (through named_modules()), so its
    entries are missing under its second name."""
    from collections import OrderedDict

    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def state_dict(self: Module, *args: Any, **kwargs: Any) -> Any:
            if args or kwargs:
                return original(self, *args, **kwargs)
            result: OrderedDict = OrderedDict()
            for prefix, module in self.named_modules():
                module._save_to_state_dict(result, prefix + "." if prefix else "", False)
            return result

        return state_dict

    with patched(Module, "state_dict", make):
        yield


@fault({"COMB-005": "expected hook"})
def backward_hook_state_per_module() -> Iterator[None]:
    """A module keeps one BackwardHook for all its calls (each call resets it) instead of one per
    call, so the backward hooks of an earlier call run with the last call's inputs layout: a call
    whose input needed no grad, followed by one whose input did, loses its hook calls."""
    from impl.nn.modules import _backward_hook

    kept: dict[int, Any] = {}

    def new(cls: type, module: Any, *args: Any) -> Any:
        state = kept.get(id(module))
        if state is None or state.module is not module:
            state = kept[id(module)] = object.__new__(cls)
        return state

    try:
        with patched(_backward_hook.BackwardHook, "__new__", lambda _orig: new):
            yield
    finally:
        kept.clear()


@fault({"COMB-006": "version differs"})
def optimizer_bypasses_version_counter() -> Iterator[None]:
    """The optimisers write the parameters through ``.data`` (a fresh version counter), so a step
    does not move a parameter's version and a backward through a graph that saved it runs on
    instead of raising torch's in-place modification error."""
    import impl
    from impl._tensor import Tensor
    from impl.optim import _pointwise

    def make(original: Callable) -> Callable:
        def write(target: Any, array: Any) -> Any:
            with impl.no_grad():
                target.data.copy_(Tensor._from_array(array))
            return target

        return write

    with patched(_pointwise, "_write", make):
        yield
