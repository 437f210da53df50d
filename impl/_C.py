"""The few names of torch's compiled module ``torch._C`` that programs (PyTorch's own tests among
them) call: ``_functions.UndefinedGrad`` and ``_autograd._saved_tensors_hooks_is_enabled``, and
``_LinAlgError`` (torch.linalg.LinAlgError)."""

from __future__ import annotations

import types
from typing import Any

from impl._graph import saved_hooks
from impl._ops.factorizations import _LinAlgError as _LinAlgError
from impl._tensor import Tensor
from impl.autograd.gradcheck import undefined_grad


class UndefinedGrad:
    """``torch._C._functions.UndefinedGrad()``: called on a tensor, a clone of it whose backward
    gives the tensor an undefined gradient (its node ``UndefinedGradBackward``, recorded whatever
    the grad mode, as torch's), a plain clone of a tensor that does not require grad."""

    def __init__(self, *args: Any) -> None:
        if args:
            raise RuntimeError(f"Requires zero arguments, got {len(args)}")

    def __call__(self, *inputs: Any) -> Tensor:
        if len(inputs) != 1:
            raise TypeError(f"expected 1 arguments, got {len(inputs)} instead")
        (t,) = inputs
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor argument, but got {type(t).__name__}")
        if t.requires_grad:  # (under no_grad too, as torch's)
            return undefined_grad(t)
        return t.detach().clone()


UndefinedGrad.__module__ = "builtins"  # (torch's class is compiled: no Python module)


def _saved_tensors_hooks_is_enabled() -> bool:
    """Whether saved_tensors_hooks may be entered (no disable_saved_tensors_hooks in force)."""
    return saved_hooks.disabled is None


class _Submodule(types.ModuleType):
    """A submodule of torch._C (a module, as torch's, whose names are impl's)."""


_functions = _Submodule("torch._C._functions")
_functions.UndefinedGrad = UndefinedGrad  # type: ignore[attr-defined]
_autograd = _Submodule("torch._C._autograd")
_autograd._saved_tensors_hooks_is_enabled = _saved_tensors_hooks_is_enabled  # type: ignore[attr-defined]
