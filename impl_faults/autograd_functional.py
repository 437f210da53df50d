"""Planted faults that break torch.autograd.functional (rules AFN-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


def _functional() -> Any:
    from impl.autograd import functional

    return functional


@fault({"AFN-001": "requires_grad", "AFN-002": "requires_grad"})
def results_keep_their_graph() -> Iterator[None]:
    """Results are returned with their graph even without ``create_graph``."""
    with patched(_functional(), "_released", lambda _orig: lambda results, _create_graph: results):
        yield


@fault({"AFN-001": "value"})
def vjp_v_ignored() -> Iterator[None]:
    """The last backward of vjp, jvp, vhp and hvp uses ones for v (as if v were None)."""
    def make(original: Callable) -> Callable:
        def last(outputs: tuple, wrt: tuple, v: Any, *rest: Any) -> tuple:
            ones = None if v is None else tuple(t.detach() * 0 + 1 for t in v)
            return original(outputs, wrt, ones, *rest)

        return last

    with patched(_functional(), "_last_grad", make):
        yield


@fault({"AFN-001": "message differs"})
def v_size_unchecked() -> Iterator[None]:
    """v's length and sizes are not checked against what it pairs with."""
    with patched(_functional(), "_check_v", lambda _orig: lambda *_args: None):
        yield


@fault({"AFN-002": "nesting"})
def jacobian_nested_by_input() -> Iterator[None]:
    """A jacobian's blocks are nested per input, then per output (torch: per output first)."""
    def transposed(original: Callable) -> Callable:
        return lambda *args: list(zip(*original(*args), strict=True))

    with patched(_functional(), "_rows", transposed), patched(_functional(), "_batched_rows", transposed):
        yield


@fault({"AFN-002": "value"})
def vectorized_basis_shifted() -> Iterator[None]:
    """A vectorized jacobian's rows of each output after the first come from the first's basis:
    every chunk of the identity starts at the diagonal's top."""
    functional = _functional()

    def make(_original: Callable) -> Callable:
        def rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> list[list]:
            counts = [out.numel() for out in outputs]
            basis = []
            for out, n in zip(outputs, counts, strict=True):
                chunk = out.new_zeros(sum(counts), n)
                chunk.diagonal(0).fill_(1)
                basis.append(chunk)
            flat = tuple(out.reshape(-1) for out in outputs)
            grads = functional._grad(flat, inputs, tuple(basis), create_graph=create_graph,
                                     is_grads_batched=True)
            blocks = []
            for g, inp in zip(grads, inputs, strict=True):
                g = functional.zeros_like(inp).expand((sum(counts), *inp.shape)) if g is None else g
                blocks.append([part.view(out.shape + inp.shape)
                               for part, out in zip(g.split(counts, dim=0), outputs, strict=True)])
            return blocks

        return rows

    with patched(functional, "_batched_rows", make):
        yield


@fault({"AFN-002": "single element"})
def one_number_unchecked() -> Iterator[None]:
    """hessian, vhp and hvp accept a function that does not return one element."""
    functional = _functional()

    def make(_original: Callable) -> Callable:
        def outputs(func: Callable, inputs: tuple, api: str, strict: bool) -> tuple:
            return functional._outputs(func, inputs, api, strict)[1]

        return outputs

    with patched(functional, "_one_number", make):
        yield


@fault({"AFN-003": "error"})
def strict_requires_nothing() -> Iterator[None]:
    """strict=True does not check that outputs, gradients and jacobians require grad."""
    with patched(_functional(), "_require_grad", lambda _orig: lambda *_args: None):
        yield


@fault({"AFN-003": "error"})
def strict_missing_gradients_are_zeros() -> Iterator[None]:
    """strict=True fills a missing derivative with zeros instead of raising."""
    def make(original: Callable) -> Callable:
        def zeros(grads: tuple, like: tuple, _strict: bool, create_graph: bool, stage: str) -> tuple:
            return original(grads, like, False, create_graph, stage)

        return zeros

    with patched(_functional(), "_zeros_for_none", make):
        yield


@fault({"AFN-002": "is_leaf"})
def forward_mode_jacobian_by_reverse_mode() -> Iterator[None]:
    """jacobian(strategy="forward-mode") falls back to reverse mode: tuples where torch nests lists,
    no graph from inputs that require grad."""
    functional = _functional()

    def make(original: Callable) -> Callable:
        return lambda func, inputs: functional.jacobian(func, inputs, vectorize=True)

    with patched(functional, "_jacfwd", make):
        yield
