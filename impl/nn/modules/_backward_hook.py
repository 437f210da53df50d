"""Full module backward hooks, built as torch builds them.

``Module.__call__`` passes the tensors among the module's inputs through an identity node
(``BackwardHookFunctionBackward``), then does the same with its outputs. During backward the
output node's post hook captures ``grad_output`` (running the backward pre-hooks, which may replace
it), and the input node's post hook, which runs once all gradients w.r.t. the inputs are known,
calls the full backward hooks with ``(module, grad_input, grad_output)``; they may replace
``grad_input``. Non-tensor arguments show up as ``None`` in both tuples.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from impl import _grad_mode as grad_mode
from impl._graph import Node, input_meta
from impl._tensor import Tensor, zeros_of
from impl.autograd.function import view_kind

NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs since no "
    "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


class BackwardHookFunctionBackward(Node):
    """Identity node over several tensors; its backward passes each gradient through unchanged.

    Like a custom autograd Function's node, undefined incoming gradients are materialised as
    zeros before the (identity) backward runs, while hooks see them as they came (``None``).
    Its outputs are views of its inputs made inside a custom Function: torch refuses to write
    into them in place (an in-place ReLU right after a hooked module, or in a hooked ReLU).
    """

    def apply(self, grads: tuple) -> tuple:
        out = []
        for g, meta in zip(grads, self._input_meta, strict=False):
            out.append(g if g is not None else zeros_of(meta))
        return tuple(out)


def _identity_outputs(tensors: list[Tensor]) -> list[Tensor]:
    """Alias each tensor through one BackwardHookFunctionBackward node: a view of it (of its base
    when it is a view itself), as torch's Function makes of an input returned as-is; tensors that
    do not require grad come out as non-differentiable aliases."""
    node = BackwardHookFunctionBackward()
    kind = view_kind(sum(t.requires_grad for t in tensors))  # the outputs' creation meta
    node._next = tuple(t._edge() for t in tensors)
    node._input_meta = [input_meta(t) for t in tensors]
    outs = []
    for i, t in enumerate(tensors):
        alias = t.detach()
        if t.requires_grad:
            alias._grad_fn_ = node
            alias._output_nr = i
            alias._creation_meta = kind
            alias._base_ = t._base_ if t._base_ is not None else t
            alias._view_version = t._vc.value
        outs.append(alias)
    return outs


def _named_hook(fn: Callable[[tuple, tuple], tuple | None]) -> Callable[[tuple, tuple], tuple | None]:
    """``fn`` as a node post hook named ``hook``: torch registers closures of that name, and the
    engine's errors about a hook's replacement values quote it ("hook 'hook' has changed ...")."""

    def hook(grad_inputs: tuple, grad_outputs: tuple) -> tuple | None:
        return fn(grad_inputs, grad_outputs)

    return hook


class BackwardHook:
    """Per-call state linking a module's output gradients to its input gradients."""

    def __init__(self, module: Any, user_hooks: list[Callable], user_pre_hooks: list[Callable]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = -1
        self.n_outputs = -1
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    @staticmethod
    def _pack(indices: list[int], values: tuple, size: int) -> tuple:
        res: list = [None] * size
        for i, v in zip(indices, values, strict=True):
            res[i] = v
        return tuple(res)

    @staticmethod
    def _wrap_tensors(args: tuple, on_node: Callable[[Node], None]) -> tuple[tuple, list[int] | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return args, None
        new = _identity_outputs(tensors)
        node = next(t.grad_fn for t in new if t.grad_fn is not None)
        on_node(node)
        out = list(args)
        for i, t in zip(index, new, strict=True):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), index

    def setup_input_hook(self, args: tuple) -> tuple:
        res, index = self._wrap_tensors(args, lambda node: node.register_hook(_named_hook(self._input_hook)))
        self.n_inputs = len(args)
        self.input_index = index
        return res

    def setup_output_hook(self, result: Any) -> Any:
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, index = self._wrap_tensors(args, lambda node: node.register_hook(_named_hook(self._output_hook)))
        self.n_outputs = len(args)
        self.output_index = index
        return res if is_tuple else res[0]

    def _input_hook(self, grad_inputs: tuple, _grad_outputs: tuple) -> tuple | None:
        if self.grad_outputs is None:
            return None  # the output node did not run: no gradient reached this module's outputs
        assert self.input_index is not None
        res = self._pack(self.input_index, grad_inputs, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, "
                    f"got {len(out)}, but expected {len(res)}"
                )
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)

    def _output_hook(self, _grad_inputs: tuple, grad_outputs: tuple) -> tuple | None:
        assert self.output_index is not None
        self.grad_outputs = self._pack(self.output_index, grad_outputs, self.n_outputs)
        expected = len(self.grad_outputs)
        for pre_hook in self.user_pre_hooks:
            out = pre_hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != expected:
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, "
                    f"got {len(out)}, but expected {expected}"
                )
            self.grad_outputs = out
        local = self.grad_outputs
        if self.input_index is None:
            warnings.warn(NO_INPUT_GRAD_WARNING, UserWarning, stacklevel=2)
            no_grads = self._pack([], (), self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, no_grads, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_index)
