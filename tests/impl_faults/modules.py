"""Planted faults that break modules and losses (rules MOD-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tests.impl_faults import fault, patched


@fault({"MOD-001": "graph differs"})
def module_dict_sorts_keys() -> Iterator[None]:
    """ModuleDict built from a plain dict holds its modules in sorted key order instead of the
    dict's insertion order (as torch did before dicts were ordered)."""
    from collections import OrderedDict

    from impl.nn.modules.container import ModuleDict

    def make(original: Callable) -> Callable:
        def update(self: ModuleDict, modules: Any) -> None:
            plain = isinstance(modules, Mapping) and not isinstance(modules, (OrderedDict, ModuleDict))
            original(self, sorted(modules.items()) if plain else modules)

        return update

    with patched(ModuleDict, "update", make):
        yield


@fault({"MOD-002": "training differs"})
def train_sets_only_own_flag() -> Iterator[None]:
    """``train()``/``eval()`` set the training flag of the module they are called on but not of its
    submodules."""
    from impl.nn.modules.module import Module

    def train(self: Module, mode: bool = True) -> Module:
        self.training = mode
        return self

    with patched(Module, "train", lambda _orig: train):
        yield


@fault({"MOD-002": "parameters differs"})
def parameters_breadth_first() -> Iterator[None]:
    """``named_parameters()`` (and ``named_buffers()``) walk the module tree breadth first instead
    of depth first."""
    from impl.nn.modules.module import Module

    def dotted(prefix: str, name: str) -> str:
        return prefix + ("." if prefix else "") + name

    def named_members(
        self: Module, members: Callable, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        seen: set = set()
        queue: list[tuple[str, Module]] = [(prefix, self)]
        for pre, module in queue:
            if recurse:
                queue += [(dotted(pre, n), m) for n, m in module._modules.items() if m is not None]
            for k, v in members(module):
                if v is None or v in seen:
                    continue
                if remove_duplicate:
                    seen.add(v)
                yield dotted(pre, k), v

    with patched(Module, "_named_members", lambda _orig: named_members):
        yield


@fault({"MOD-003": ".grad: value"})
def zero_grad_skips_submodules() -> Iterator[None]:
    """``Module.zero_grad()`` resets the gradients of the module's own parameters only, not those of
    its submodules (``parameters(recurse=False)``)."""
    from impl.nn.modules.module import Module

    def zero_grad(self: Module, set_to_none: bool = True) -> None:
        for p in self.parameters(recurse=False):
            if p.grad is not None:
                p.grad = None if set_to_none else p.grad.detach().zero_()

    with patched(Module, "zero_grad", lambda _orig: zero_grad):
        yield


@fault({"MOD-004": ".grad: value"})
def bce_mean_backward_not_averaged() -> Iterator[None]:
    """The backward of BCELoss and BCEWithLogitsLoss with ``reduction='mean'`` is not divided by
    the number of elements."""
    from impl.nn import _ops

    with patched(_ops, "_scale_back", lambda _orig: lambda grad, c, name="self": grad):
        yield


@fault({"MOD-005": ": value"})
def dropout_ignores_eval_mode() -> Iterator[None]:
    """Dropout drops elements in eval mode too (it does not pass its training flag on)."""
    from impl.nn import functional as F
    from impl.nn.modules.dropout import Dropout

    def forward(self: Dropout, input: Any) -> Any:
        return F.dropout(input, self.p, True, self.inplace)

    with patched(Dropout, "forward", lambda _orig: forward):
        yield


@fault({"MOD-006": ".grad: value"})
def reflect_padding_repeats_edge() -> Iterator[None]:
    """Reflect padding mirrors about the edge's outer side, repeating the edge element (numpy's
    'symmetric'), instead of mirroring about the edge element itself."""
    from impl.nn import _pad

    def make(original: Callable) -> Callable:
        def source_index(xp: Any, size: int, left: int, right: int, mode: str) -> Any:
            if mode != "reflect":
                return original(xp, size, left, right, mode)
            j = xp.arange(-left, size + right)
            j = xp.where(j < 0, -j - 1, j)
            return xp.where(j > size - 1, 2 * size - 1 - j, j)

        return source_index

    with patched(_pad, "_source_index", make):
        yield
