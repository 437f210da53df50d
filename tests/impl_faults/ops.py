"""Planted faults that break op values, gradients and graphs (rules OPS-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tests.impl_faults import fault, patched

GRAD_ERROR = 1e-3  # relative error of the planted sigmoid gradient



@fault({"HOOK-002": "differs: expected"})
def sigmoid_grad_off() -> Iterator[None]:
    """sigmoid's gradient (the value of its backward op, sigmoid_backward) is off by a relative 1e-3.

    The backward op's forward is patched rather than the derivative formula, so the graph built
    with ``create_graph=True`` keeps torch's node names: only the numbers are wrong.
    """
    from impl._ops.backward_ops import SIGMOID_BACKWARD

    def make(original: Callable) -> Callable:
        return lambda xp, *arrays: original(xp, *arrays) * (1 + GRAD_ERROR)

    with patched(SIGMOID_BACKWARD, "forward", make):
        yield
