"""Planted faults that break module hooks (rules MHOOK-*)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


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


def _registering(name: str, wrap: Callable[[dict, Callable], Callable]) -> Any:
    """Patch ``Module.<name>`` (a hook registration) to register ``wrap(flags, hook)`` instead of
    each hook."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def register(self: Module, hook: Callable, *args: Any, **flags: Any) -> Any:
            return original(self, wrap(flags, hook), *args, **flags)

        return register

    return patched(Module, name, make)


@fault({"MHOOK-001": "hook differs", "MHOOK-008": "hook differs"})
def module_hooks_prepend_inverted() -> Iterator[None]:
    """Module hooks are put first unless registered with ``prepend=True`` (the flag is inverted),
    so they run in reverse registration order."""
    from impl.nn.modules import module

    def make(original: Callable) -> Callable:
        def add_hook(hooks: Any, hook: Callable, prepend: bool = False, flags: tuple = ()) -> Any:
            return original(hooks, hook, not prepend, flags)

        return add_hook

    with patched(module, "_add_hook", make):
        yield


@fault({"MHOOK-002": "hook received"})
def kwargs_hooks_get_no_kwargs() -> Iterator[None]:
    """Forward (pre-)hooks registered with ``with_kwargs=True`` receive an empty dict instead of
    the call's keyword arguments."""

    def pre(flags: dict, hook: Callable) -> Callable:
        return (lambda m, args, _kwargs: hook(m, args, {})) if flags.get("with_kwargs") else hook

    def post(flags: dict, hook: Callable) -> Callable:
        return (lambda m, args, _kwargs, out: hook(m, args, {}, out)) if flags.get("with_kwargs") else hook

    with _registering("register_forward_pre_hook", pre), _registering("register_forward_hook", post):
        yield


@fault({"MHOOK-002": "graph differs"})
def kwargs_pre_hook_keeps_kwargs() -> Iterator[None]:
    """A forward pre-hook registered with ``with_kwargs=True`` that returns ``(args, kwargs)``
    replaces the call's positional arguments but not its keyword arguments."""

    def pre(flags: dict, hook: Callable) -> Callable:
        def kept(m: Any, args: tuple, kwargs: dict) -> Any:
            out = hook(m, args, kwargs)
            return (out[0], kwargs) if isinstance(out, tuple) and len(out) == 2 else out

        return kept if flags.get("with_kwargs") else hook

    with _registering("register_forward_pre_hook", pre):
        yield


@fault({"MHOOK-003": "expected hook"})
def always_call_hooks_skipped_on_error() -> Iterator[None]:
    """Forward hooks registered with ``always_call=True`` do not run when the forward raises."""
    from impl.nn.modules.module import Module

    with patched(Module, "_run_always_called_hooks", lambda _orig: lambda self, state: None):
        yield


@fault({"MHOOK-005": "message differs"})
def hook_result_size_unchecked() -> Iterator[None]:
    """A hook's replacement gradient of another size than the one it replaces is accepted."""
    from impl.autograd import engine

    def make(original: Callable) -> Callable:
        def check(hook: Any, value: Any, new: Any) -> None:
            same = value is None or getattr(new, "shape", None) == value.shape
            original(hook, value if same else None, new)

        return check

    with patched(engine, "_check_hook_result", make):
        yield


@fault({"MHOOK-006": "expected warning"})
def legacy_backward_hook_warns_nothing() -> Iterator[None]:
    """The legacy ``register_backward_hook`` gives no FutureWarning about the gradients it misses."""
    from impl.nn.modules import module

    with patched(module, "_warn_legacy_backward_hook", lambda _orig: lambda *args: None):
        yield


@fault({"MHOOK-006": "grad_input", "SEED-004-4": "stdout line"})
def legacy_backward_hook_gradients_swapped() -> Iterator[None]:
    """The legacy ``register_backward_hook`` receives its node's output gradients as ``grad_input``
    and its input gradients as ``grad_output``."""
    from impl.nn.modules.module import _WrappedHook

    def make(original: Callable) -> Callable:
        return lambda self, grad_inputs, grad_outputs: original(self, grad_outputs, grad_inputs)

    with patched(_WrappedHook, "__call__", make):
        yield


@fault({"MHOOK-007": "target differs"})
def global_hooks_need_own_hooks() -> Iterator[None]:
    """A module with no hooks of its own is called without running the global module hooks."""
    from impl.nn.modules.module import Module

    def has_hooks(self: Module) -> bool:
        own = (self._backward_hooks, self._backward_pre_hooks, self._forward_hooks, self._forward_pre_hooks)
        return any(own)

    with patched(Module, "_has_hooks", lambda _orig: has_hooks):
        yield


@fault({"MHOOK-007": "got hook", "MHOOK-008": "graph differs"})
def removed_module_hook_still_fires() -> Iterator[None]:
    """Removing a module hook's handle clears only its flags (with_kwargs, always_call): the hook
    itself stays registered and keeps firing."""
    from impl.nn.modules.module import _Handle

    def remove(self: _Handle) -> None:
        for ref in self.extra_refs:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    with patched(_Handle, "remove", lambda _orig: remove):
        yield


def _returning_none(_flags: dict, hook: Callable) -> Callable:
    def quiet(*args: Any) -> None:
        hook(*args)

    return quiet


@fault({"MHOOK-009": "state_dict post-hook must return None"})
def state_dict_post_hook_return_kept() -> Iterator[None]:
    """A public state_dict post-hook is registered as a legacy one: a dict it returns replaces the
    root's result instead of raising."""
    from impl.nn.modules.module import Module

    with patched(Module, "register_state_dict_post_hook", lambda _orig: Module._register_state_dict_hook):
        yield


@fault({"MHOOK-009": ", module)"})  # the dict returned: its keys or metadata
def legacy_state_dict_hook_return_ignored() -> Iterator[None]:
    """What a legacy ``_register_state_dict_hook`` hook returns is dropped."""
    with _registering("_register_state_dict_hook", _returning_none):
        yield


@fault({"MHOOK-009": "AssertionError"})
def load_post_hook_return_ignored() -> Iterator[None]:
    """A load_state_dict post-hook may return a value (torch raises AssertionError)."""
    with _registering("register_load_state_dict_post_hook", _returning_none):
        yield


@fault({"MHOOK-009": "keep_vars"})
def state_dict_pre_hook_keep_vars_false() -> Iterator[None]:
    """state_dict pre-hooks are told ``keep_vars=False`` whatever the call asked."""
    with _registering("register_state_dict_pre_hook", lambda _f, hook: lambda m, p, _keep: hook(m, p, False)):
        yield


@fault({"MHOOK-009": "TypeError"})
def private_load_pre_hook_always_with_module() -> Iterator[None]:
    """``_register_load_state_dict_pre_hook`` passes the module whatever ``with_module`` says."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def register(self: Module, hook: Callable, with_module: bool = False) -> Any:
            return original(self, hook, with_module=True)

        return register

    with patched(Module, "_register_load_state_dict_pre_hook", make):
        yield


@fault({"MHOOK-009": "missing"})
def load_pre_hook_edits_a_copy() -> Iterator[None]:
    """Load pre-hooks receive a copy of the module's state dict: what they delete is still loaded
    (into the module and its children)."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def register(self: Module, hook: Callable, with_module: bool = False) -> Any:
            def copying(*args: Any) -> Any:
                return hook(dict(args[0]), *args[1:])

            if with_module:
                return original(self, lambda module, *args: hook(module, dict(args[0]), *args[1:]), True)
            return original(self, copying, False)

        return register

    with patched(Module, "_register_load_state_dict_pre_hook", make):
        yield


@fault({"MHOOK-009": "hook"})
def load_post_hooks_before_children() -> Iterator[None]:
    """A module's load post-hooks run as soon as its own keys are loaded, before its children's,
    seeing the key lists as they are then."""
    from impl.nn.modules.module import Module, _add_hook, _IncompatibleKeys

    def load(original: Callable) -> Callable:
        def loading(self: Module, state_dict: dict, prefix: str, metadata: dict, strict: bool, missing: list,
                    unexpected: list, errors: list) -> None:
            original(self, state_dict, prefix, metadata, strict, missing, unexpected, errors)
            for hook in vars(self).get("_early_post_hooks", {}).values():
                if hook(self, _IncompatibleKeys(missing, unexpected)) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace."
                    )

        return loading

    def register(_original: Callable) -> Callable:
        def early(self: Module, hook: Callable) -> Any:
            return _add_hook(vars(self).setdefault("_early_post_hooks", OrderedDict()), hook)

        return early

    with patched(Module, "_load_from_state_dict", load), patched(
        Module, "register_load_state_dict_post_hook", register
    ):
        yield


@fault({"MHOOK-009": "assign_to_params_buffers"})
def load_metadata_without_assign() -> Iterator[None]:
    """``load_state_dict(assign=True)`` copies values in place instead of assigning: the flag
    never reaches a module's local metadata."""
    from impl.nn.modules.module import Module

    def make(original: Callable) -> Callable:
        def load(self: Module, state_dict: dict, prefix: str, local_metadata: dict, *rest: Any) -> None:
            local_metadata.pop("assign_to_params_buffers", None)
            original(self, state_dict, prefix, local_metadata, *rest)

        return load

    with patched(Module, "_load_from_state_dict", make):
        yield
