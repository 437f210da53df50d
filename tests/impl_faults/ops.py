"""Planted faults that break op values, gradients and graphs (rules OPS-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

from tests.impl_faults import derivative_replaced, fault, patched

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


@fault({"OPS-001": ".grad: value"})
def pow_grad_exponent_not_lowered() -> Iterator[None]:
    """pow(x, e)'s gradient is e * x**e instead of e * x**(e - 1): the exponent is not lowered."""
    from impl._ops.elementwise import POW_TS, mul_scalar

    def make(_original: Callable) -> Callable:
        return lambda g, c: g * mul_scalar(c.self.pow(c.exponent), c.exponent)

    with derivative_replaced(POW_TS, "self", make):
        yield


@fault({"OPS-002": ".grad: value"})
def broadcast_grad_averaged() -> Iterator[None]:
    """The gradient of a broadcast operand is averaged over the broadcast dimensions instead of
    summed (sum_to divides by the number of elements it folds)."""
    from impl._ops import views

    def make(original: Callable) -> Callable:
        def averaged(g: Any, shape: tuple) -> Any:
            out = original(g, shape)
            return out if out is g or not g.numel() else out * (out.numel() / g.numel())

        return averaged

    with patched(views, "sum_to", make):
        yield


@fault({"OPS-003": ": value"})
def var_ignores_correction() -> Iterator[None]:
    """var and std compute the population variance (correction 0) whatever the correction asked."""
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        return lambda xp, a, dim, correction, keepdim: original(xp, a, dim, 0, keepdim)

    with patched(reductions, "_variance", make):
        yield


@fault({"OPS-004": ".grad: value"})
def addmm_grad_ignores_alpha() -> Iterator[None]:
    """addmm's gradients for mat1 and mat2 are not scaled by alpha."""
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        return lambda g, mat, sizes, strides, alpha=1: original(g, mat, sizes, strides)

    with patched(reductions, "mm_mat1_backward", make), patched(reductions, "mm_mat2_backward", make):
        yield


@fault({"OPS-005": ".grad: value"})
def masked_fill_grad_passes_filled() -> Iterator[None]:
    """masked_fill's gradient reaches the input at the filled positions too, instead of 0 there."""
    from impl._ops.indexing import MASKED_FILL

    with derivative_replaced(MASKED_FILL, "self", lambda _original: lambda g, c: g):
        yield


def _assign(xp: Any, zeros: Any, g: Any, key: tuple, **_: Any) -> Any:
    """The forward of impl's accumulating backward ops (``_accumulate_fwd``) with the gradient
    assigned at ``key`` instead of added: of an index read twice, one gradient is kept."""
    out = zeros.copy()
    if g.size:
        out[key] = g
    return out


@fault({"OPS-006": ".grad: value"})
def index_grad_overwrites_duplicates() -> Iterator[None]:
    """Indexing's backward (index_put with accumulate into zeros) assigns the gradient instead of
    adding it: an index read twice gets one gradient."""
    from impl._ops.indexing import INDEX_PUT_ACC

    with patched(INDEX_PUT_ACC, "forward", lambda _original: _assign):
        yield


@fault({"OPS-005": ".grad: value"})
def gather_grad_overwrites_duplicates() -> Iterator[None]:
    """gather's backward scatters the gradient into zeros (scatter) instead of adding it
    (scatter_add): an element gathered twice gets one gradient."""
    from impl._ops.indexing import SCATTER_ADD

    with patched(SCATTER_ADD, "forward", lambda _original: _assign):
        yield


@fault({"OPS-005": ".grad: value"})
def index_select_grad_overwrites_duplicates() -> Iterator[None]:
    """index_select's backward copies the gradient into zeros (index_copy) instead of adding it
    (index_add): an index selected twice gets one gradient."""
    from impl._ops.indexing import INDEX_ADD

    with patched(INDEX_ADD, "forward", lambda _original: _assign):
        yield


@fault({"OPS-007": "graph differs", "ERR-005": "graph differs"})
def inplace_graph_not_rewired() -> Iterator[None]:
    """An in-place op records its node but leaves the modified tensor (or a view's base) on its
    old grad_fn: the graph is not rewired through the write."""
    from impl._ops import inplace

    with patched(inplace, "_rebase_history", lambda _original: lambda t, node: None):
        yield


@fault({"OPS-001": ": value"})
def clamp_crossed_bounds_keep_min() -> Iterator[None]:
    """clamp applies max before min, so where min > max every element is min instead of max."""
    from impl._ops.elementwise import CLAMP

    def make(original: Callable) -> Callable:
        def clamp(xp: Any, a: Any, min: Any, max: Any) -> Any:
            if min is None or max is None:
                return original(xp, a, min, max)
            return original(xp, original(xp, a, None, max), min, None)

        return clamp

    with patched(CLAMP, "forward", make):
        yield


@fault({"OPS-001": ".grad: value"})
def tanh_grad_not_squared() -> Iterator[None]:
    """tanh's gradient is g * (1 - tanh(x)) instead of g * (1 - tanh(x)**2)."""
    from impl._ops.elementwise import TANH

    with derivative_replaced(TANH, "self", lambda _original: lambda g, c: g * (1 - c.result)):
        yield


@fault({"OPS-001": "dtype"})
def float_unary_keeps_integer_dtype() -> Iterator[None]:
    """exp, log, sqrt, sin, cos, tanh and sigmoid of an integer tensor are not promoted to the
    default float dtype: the result takes numpy's float64."""
    from impl._ops import elementwise as ew

    with ExitStack() as stack:
        for op in (ew.EXP, ew.LOG, ew.SQRT, ew.SIN, ew.COS, ew.TANH, ew.SIGMOID):
            stack.enter_context(patched(op, "promote", lambda _original: "common"))
        yield


@fault({"OPS-002": "type differs: expected 'RuntimeError'"})
def bool_subtraction_allowed() -> Iterator[None]:
    """Subtraction with a bool operand is not refused with torch's RuntimeError (numpy's TypeError
    escapes instead)."""
    from impl._ops import functions

    with patched(functions, "check_bool_subtraction", lambda _original: lambda input, other: None):
        yield


@fault({"OPS-003": "shape"})
def amax_ignores_keepdim() -> Iterator[None]:
    """amax drops the reduced dims whatever keepdim asked."""
    from impl._ops.reductions import AMAX

    def make(original: Callable) -> Callable:
        return lambda xp, a, dim, keepdim: original(xp, a, dim, False)

    with patched(AMAX, "forward", make):
        yield


@fault({"OPS-004": ".grad: value"})
def trace_grad_fills_row() -> Iterator[None]:
    """trace's gradient fills every (m)-th element instead of every (m + 1)-th: not the diagonal
    of a non-square matrix."""
    from impl._ops import reductions

    def make(_original: Callable) -> Callable:
        def trace_back(g: Any, c: Any) -> Any:
            from impl._creation import arange, zeros

            n, m = c.shape()
            filled = arange(0, n * m, m, device=g.device)[:n]
            return zeros(n * m, dtype=g.dtype, device=g.device).index_fill(0, filled, g).view(n, m)

        return trace_back

    with derivative_replaced(reductions.TRACE, "self", make):
        yield


@fault({"OPS-005": "type differs: expected 'RuntimeError'"})
def gather_index_shape_unchecked() -> Iterator[None]:
    """gather does not check that its index has the input's dims, no larger off ``dim`` (numpy's
    ValueError escapes instead of torch's RuntimeError)."""
    from impl._ops import functions

    with patched(functions, "check_gather_shape", lambda _original: lambda input, dim, index: None):
        yield
