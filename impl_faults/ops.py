"""Planted faults that break op values, gradients and graphs (rules OPS-*)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np

from impl_faults import derivative_replaced, fault, patched

GRAD_ERROR = 1e-3  # relative error of the planted sigmoid gradient


@fault({"HOOK-002": "differs: expected"})
def sigmoid_grad_off() -> Iterator[None]:
    """sigmoid's gradient (the value of its backward op, sigmoid_backward) is off by a relative 1e-3.

    The backward op's forward is patched rather than the derivative formula, so the graph built
    with ``create_graph=True`` keeps torch's node names: only the numbers are wrong.
    """
    from impl._ops.unary_math import SIGMOID_BACKWARD

    def make(original: Callable) -> Callable:
        return lambda xp, *arrays: original(xp, *arrays) * (1 + GRAD_ERROR)

    with patched(SIGMOID_BACKWARD, "forward", make):
        yield


@fault({"OPS-001": ".grad: value"})
def pow_grad_exponent_not_lowered() -> Iterator[None]:
    """pow(x, e)'s gradient is e * x**e instead of e * x**(e - 1): the exponent is not lowered."""
    from impl._ops.arithmetic import POW_TS
    from impl._ops.elementwise import mul_scalar

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
    from impl._ops import moments

    def make(original: Callable) -> Callable:
        return lambda xp, a, dim, correction, keepdim: original(xp, a, dim, 0, keepdim)

    with patched(moments, "_variance", make):
        yield


@fault({"OPS-004": ".grad: value"})
def addmm_grad_ignores_alpha() -> Iterator[None]:
    """addmm's gradients for mat1 and mat2 are not scaled by alpha."""
    from impl._ops import products

    def make(original: Callable) -> Callable:
        return lambda g, mat, sizes, strides, alpha=1: original(g, mat, sizes, strides)

    with patched(products, "mm_mat1_backward", make), patched(products, "mm_mat2_backward", make):
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


@fault({"OPS-006": "differs"})
def range_index_without_step() -> Iterator[None]:
    """A range index item is read as the integers from its start to its stop, its step dropped."""
    from impl._ops import indexing

    def make(original: Callable) -> Callable:
        return lambda k, *rest: original(range(k.start, k.stop) if isinstance(k, range) else k, *rest)

    with patched(indexing, "_index_tensor", make):
        yield


@fault({"OPS-005": "differs"})
def take_reads_negative_indices_from_the_start() -> Iterator[None]:
    """torch.take reads a negative index as its absolute value instead of counting from the end."""
    from impl._ops import indexing

    def make(original: Callable) -> Callable:
        return lambda xp, a, index: original(xp, a, type(index)._from_array(abs(index._data)))

    with patched(indexing.TAKE, "forward", make):
        yield


@fault({"OPS-005": "differs"})
def one_hot_infers_a_class_too_many() -> Iterator[None]:
    """F.one_hot without num_classes infers the largest index plus two classes."""
    from impl.nn import functional

    def make(original: Callable) -> Callable:
        def one_hot(input: Any, num_classes: int = -1) -> Any:
            if num_classes == -1 and input.numel() and not input.is_floating_point():
                num_classes = int(input.max()) + 2
            return original(input, num_classes)

        return one_hot

    with patched(functional, "one_hot", make):
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
    from impl._ops.pointwise_ternary import CLAMP

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
    from impl._ops.unary_math import TANH

    with derivative_replaced(TANH, "self", lambda _original: lambda g, c: g * (1 - c.result)):
        yield


@fault({"OPS-001": "expected error"})
def float_unary_keeps_integer_dtype() -> Iterator[None]:
    """exp, log, sqrt, sin, cos, tanh and sigmoid of an integer tensor are not promoted to the
    default float dtype: the result takes numpy's float64."""
    from impl._ops import unary_math as um

    with ExitStack() as stack:
        for op in (um.EXP, um.LOG, um.SQRT, um.SIN, um.COS, um.TANH, um.SIGMOID):
            stack.enter_context(patched(op, "promote", lambda _original: "common"))
        yield


@fault({"OPS-002": "type differs: expected 'RuntimeError'"})
def bool_subtraction_allowed() -> Iterator[None]:
    """Subtraction with a bool operand is not refused with torch's RuntimeError (numpy's TypeError
    escapes instead)."""
    from impl._ops import arithmetic, elementwise

    def make(_original: Callable) -> Callable:
        return lambda input, other: None

    with patched(elementwise, "check_bool_subtraction", make), patched(
        arithmetic, "check_bool_subtraction", make
    ):
        yield


@fault({"OPS-003": "error"})
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
    from impl._ops import products

    def make(_original: Callable) -> Callable:
        def trace_back(g: Any, c: Any) -> Any:
            from impl._creation import arange, zeros

            n, m = c.shape()
            filled = arange(0, n * m, m, device=g.device)[:n]
            return zeros(n * m, dtype=g.dtype, device=g.device).index_fill(0, filled, g).view(n, m)

        return trace_back

    with derivative_replaced(products.TRACE, "self", make):
        yield


@fault({"OPS-005": "type differs: expected 'RuntimeError'"})
def gather_index_shape_unchecked() -> Iterator[None]:
    """gather does not check that its index has the input's dims, no larger off ``dim`` (numpy's
    ValueError escapes instead of torch's RuntimeError)."""
    from impl._ops import indexing

    with patched(indexing, "check_gather_shape", lambda _original: lambda input, dim, index: None):
        yield


@fault({"OPS-005": "got error"})
def int32_index_refused() -> Iterator[None]:
    """gather and index_select take only int64 indices (torch takes int32 ones too)."""
    from impl import dtypes
    from impl._ops import indexing

    def make(original: Callable) -> Callable:
        def check(index: Any, message: str) -> None:
            if index.dtype is not dtypes.int64:
                raise RuntimeError(message)

        return check

    with patched(indexing, "check_index_dtype", make):
        yield


@fault({"OPS-005": "got error"})
def zero_dim_read_not_as_1d() -> Iterator[None]:
    """gather of a 0-d input or with a 0-d index reads them as they are (numpy's AxisError or
    ValueError), where torch reads a 0-d tensor as 1-d of size 1."""
    from impl._ops import indexing

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any, dim: int, index: Any) -> Any:
            if index.size and not (a.ndim and index.ndim):
                return xp.take_along_axis(a, index, axis=dim)
            return original(xp, a, dim, index)

        return forward

    with patched(indexing, "_gather_fwd", make):
        yield


@contextmanager
def renamed(op: Any, name: str) -> Iterator[None]:
    """``op``'s grad_fn named ``name`` (its class and its ``name()``) for the duration of the block."""
    cls = op.node_class
    original, cls.__name__ = cls.__name__, name
    try:
        with patched(cls, "name", lambda _original: lambda node: name):
            yield
    finally:
        cls.__name__ = original


@fault({"OPS-001": "graph differs"})
def sgn_node_named_sign() -> Iterator[None]:
    """sgn's grad_fn is named SignBackward0 (sign's) instead of SgnBackward0."""
    from impl._ops.unary_math import SGN

    with renamed(SGN, "SignBackward0"):
        yield


@fault({"OPS-001": "expected error"})
def exp_result_never_released() -> Iterator[None]:
    """exp's node keeps its saved result after a backward without retain_graph: a second backward
    through it runs instead of raising."""
    from impl._ops.unary_math import EXP

    with patched(EXP.node_class, "release", lambda _original: lambda node: None):
        yield


@fault({"OPS-001": ".grad: value"})
def pow_zero_exponent_grad_unmasked() -> Iterator[None]:
    """pow(x, 0)'s gradient is computed as 0 * x**-1 (nan at x = 0) instead of zeros."""
    from impl._ops.arithmetic import POW_TS
    from impl._ops.elementwise import mul_scalar

    def make(_original: Callable) -> Callable:
        return lambda g, c: g * mul_scalar(c.self.pow(c.exponent - 1), c.exponent)

    with derivative_replaced(POW_TS, "self", make):
        yield


@fault({"OPS-001": ".grad: value"})
def clamp_grad_excludes_bounds() -> Iterator[None]:
    """clamp's gradient is 0 where the input equals a bound (a strict comparison) instead of
    passing there."""
    from impl._ops.pointwise_ternary import CLAMP, masked

    def make(_original: Callable) -> Callable:
        def grad(g: Any, c: Any) -> Any:
            low = None if c.min is None else c.self > c.min
            high = None if c.max is None else c.self < c.max
            return masked(g, high if low is None else low if high is None else low & high)

        return grad

    with derivative_replaced(CLAMP, "self", make):
        yield


@fault({"OPS-001": ": value"})
def sgn_of_nan_is_nan() -> Iterator[None]:
    """sgn (and sign) of nan is nan (numpy's sign) instead of 0."""
    from impl._ops.unary_math import SGN

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any) -> Any:
            result = original(xp, a)
            return xp.where(xp.isnan(a), a, result) if a.dtype.kind == "f" else result

        return forward

    with patched(SGN, "forward", make):
        yield


@fault({"OPS-002": ": value"})
def rsub_not_reflected() -> Iterator[None]:
    """number - tensor (__rsub__) computes tensor - number: the operands are not swapped."""
    from impl._ops.arithmetic import RSUB_NUMBER

    with patched(RSUB_NUMBER, "forward", lambda _original: lambda xp, a, other, alpha: a * alpha - other):
        yield


@fault({"OPS-002": "dtype"})
def rsub_number_promotes_as_numpy() -> Iterator[None]:
    """number - tensor computes in numpy's result type: an integer tensor from a float number is
    float64 (torch: the default dtype), as numpy promotes a Python float with an integer array."""
    from impl._ops.arithmetic import RSUB_NUMBER

    with patched(RSUB_NUMBER, "forward", lambda _original: lambda xp, a, other, alpha: other - a * alpha):
        yield


@fault({"OPS-002": "dtype"})
def float_scalar_promotes_as_double() -> Iterator[None]:
    """A Python float takes part in promotion as float64 (numpy's view) instead of the default
    dtype: an integer tensor times 0.5 is float64, not float32."""
    from impl import dtypes

    def make(original: Callable) -> Callable:
        return lambda value: dtypes.float64 if isinstance(value, float) else original(value)

    with patched(dtypes, "scalar_dtype", make):
        yield


@fault({"OPS-002": ".grad: value"})
def maximum_tie_grad_not_shared() -> Iterator[None]:
    """maximum and minimum give the full gradient to both operands where they tie instead of half
    to each."""
    from impl._ops.binary_math import MAXIMUM, MINIMUM
    from impl._ops.pointwise_ternary import WHERE
    from impl._ops.table import apply

    def make(_original: Callable) -> Callable:
        def grad(g: Any, c: Any) -> Any:
            return apply(WHERE, 0, g, condition=(c.self < c.other) if op is MAXIMUM else (c.self > c.other))

        return grad

    with ExitStack() as stack:
        for op in (MAXIMUM, MINIMUM):
            stack.enter_context(derivative_replaced(op, "self", make))
        yield


@fault({"OPS-002": ".grad: value"})
def where_grad_other_unmasked() -> Iterator[None]:
    """where's gradient reaches its second operand everywhere, not only where the condition is
    False."""
    from impl._ops.pointwise_ternary import WHERE

    with derivative_replaced(WHERE, "other", lambda _original: lambda g, c: g):
        yield


@fault({"OPS-003": ": value"})
def max_dim_index_of_last_tie() -> Iterator[None]:
    """max and min over a dim return the index of the last of tied extremes instead of the first."""
    from impl._ops.reductions import MAX_DIM, MIN_DIM

    def make(original: Callable) -> Callable:
        def fwd(xp: Any, a: Any, dim: int, keepdim: bool) -> Any:
            if a.ndim == 0:
                return original(xp, a, dim, keepdim)
            values, idx = original(xp, xp.flip(a, dim), dim, keepdim)
            return values, a.shape[dim] - 1 - idx

        return fwd

    with patched(MAX_DIM, "forward", make), patched(MIN_DIM, "forward", make):
        yield


@fault({"OPS-003": ".grad: value"})
def max_all_grad_not_shared() -> Iterator[None]:
    """max and min over all elements give the full gradient to every tied extreme instead of
    sharing it evenly."""
    from impl._creation import zeros_like
    from impl._ops.reductions import MAX_ALL, MIN_ALL

    def make(_original: Callable) -> Callable:
        return lambda g, c: zeros_like(c.self).masked_fill(c.self == c.result, g)

    with derivative_replaced(MAX_ALL, "self", make), derivative_replaced(MIN_ALL, "self", make):
        yield


@fault({"OPS-003": "message differs"})
def bad_dim_range_off_by_one() -> Iterator[None]:
    """The error for a dim out of range states the range as [-n, n] instead of [-n, n - 1]."""
    from impl import _tensor
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        def wrap(dim: int, ndim: int) -> int:
            n = max(ndim, 1)
            if not -n <= dim < n:
                raise IndexError(
                    f"Dimension out of range (expected to be in range of [{-n}, {n}], but got {dim})"
                )
            return original(dim, ndim)

        return wrap

    with patched(reductions, "_wrap_dim", make), patched(_tensor, "_wrap_dim", make):
        yield


@fault({"OPS-003": ": value"})
def std_ignores_correction() -> Iterator[None]:
    """std uses Bessel's correction (1) whatever the correction asked (var honours it)."""
    from impl._ops.moments import STD

    def make(original: Callable) -> Callable:
        return lambda xp, a, dim, correction, keepdim: original(xp, a, dim, 1, keepdim)

    with patched(STD, "forward", make):
        yield


@fault({"OPS-003": "dtype"})
def sum_keeps_integer_dtype() -> Iterator[None]:
    """sum, prod, cumsum and cumprod of an int32 tensor keep its dtype instead of accumulating into
    int64."""
    from impl import dtypes
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        return lambda input, dtype: (
            input.dtype if dtype is None and input.dtype is dtypes.int32 else original(input, dtype)
        )

    with patched(reductions, "accumulated_dtype", make):
        yield


@fault({"OPS-004": "type differs: expected 'RuntimeError'"})
def mm_shape_unchecked() -> Iterator[None]:
    """mm does not check that the inner sizes agree (numpy's ValueError escapes instead of torch's
    RuntimeError)."""
    from impl._ops import products
    from impl._ops.products import MM
    from impl._ops.table import apply

    def make(original: Callable) -> Callable:
        def mm(input: Any, mat2: Any) -> Any:
            if input.dim() == 2 and mat2.dim() == 2 and input.dtype is mat2.dtype:
                return apply(MM, input, mat2)
            return original(input, mat2)

        return mm

    with patched(products, "mm", make):
        yield


@fault({"OPS-004": "graph differs"})
def mv_node_named_mm() -> Iterator[None]:
    """A matrix-vector product's grad_fn is named MmBackward0 instead of MvBackward0."""
    from impl._ops.products import MV

    with renamed(MV, "MmBackward0"):
        yield


@fault({"OPS-004": ": value"})
def addmm_ignores_beta() -> Iterator[None]:
    """addmm adds its input unscaled: beta is ignored."""
    from impl._ops.products import ADDMM

    def make(original: Callable) -> Callable:
        return lambda xp, c, a, b, beta, alpha: original(xp, c, a, b, 1, alpha)

    with patched(ADDMM, "forward", make):
        yield


@fault({"OPS-004": "dtype"})
def addmm_integer_scales_not_cast() -> Iterator[None]:
    """addmm of integer tensors scales by beta and alpha as given (floats promote the result)
    instead of converting them to the tensors' dtype as torch does."""
    from impl._ops.products import ADDMM

    def make(original: Callable) -> Callable:
        def forward(xp: Any, c: Any, a: Any, b: Any, beta: Any, alpha: Any) -> Any:
            if c.dtype.kind in "iu" and (beta, alpha) != (1, 1):
                return beta * c + alpha * (a @ b)
            return original(xp, c, a, b, beta, alpha)

        return forward

    with patched(ADDMM, "forward", make):
        yield


@fault({"OPS-004": ".grad: value"})
def addmv_vec_grad_unscaled() -> Iterator[None]:
    """addmv's gradient for vec leaves out alpha (``mat.t().mv(grad)``, not times alpha)."""
    from impl._ops.products import ADDMV

    def make(_original: Callable) -> Callable:
        return lambda g, c: c.mat.t().mv(g)

    with derivative_replaced(ADDMV, "vec", make):
        yield


@fault({"OPS-004": ": value"})
def addr_ignores_alpha() -> Iterator[None]:
    """addr adds the outer product unscaled: alpha is ignored."""
    from impl._ops.products import ADDR

    def make(original: Callable) -> Callable:
        return lambda xp, c, v1, v2, beta, alpha: original(xp, c, v1, v2, beta, 1)

    with patched(ADDR, "forward", make):
        yield


@fault({"OPS-004": ".grad: value"})
def addbmm_batch2_grad_unscaled() -> Iterator[None]:
    """addbmm's gradient for batch2 leaves out alpha."""
    from impl._ops.products import ADDBMM, _batches_of

    def make(_original: Callable) -> Callable:
        return lambda g, c: c.batch1.mT.bmm(_batches_of(g, c))

    with derivative_replaced(ADDBMM, "batch2", make):
        yield


@fault({"OPS-004": "graph differs"})
def vdot_node_named_dot() -> Iterator[None]:
    """vdot's grad_fn is named DotBackward0 instead of VdotBackward0."""
    from impl._ops.products import VDOT

    with renamed(VDOT, "DotBackward0"):
        yield


@fault({"OPS-004": "differs"})
def outer_takes_matrices() -> Iterator[None]:
    """outer (and ger) skip torch's check that both operands are vectors: a column broadcasts."""
    from impl._ops import products

    with patched(products, "_check_1d", lambda _original: lambda t, arg, fn: None):
        yield


@fault({"OPS-004": "the backend raised none"})
def adjoint_of_vector_is_itself() -> Iterator[None]:
    """torch.adjoint of a vector returns it instead of refusing it (as of a 0-d tensor)."""
    from impl._ops import views

    def make(original: Callable) -> Callable:
        return lambda t, *names: t if t.dim() == 1 else original(t, *names)

    with patched(views, "_matrices_transposed", make):
        yield


@fault({"OPS-004": "differs"})
def chain_matmul_of_one_not_cloned() -> Iterator[None]:
    """torch.chain_matmul of one matrix returns the matrix itself, not a clone (CloneBackward0)."""
    from impl._ops import structure

    def make(original: Callable) -> Callable:
        return lambda matrices: matrices[0] if len(matrices) == 1 else original(matrices)

    with patched(structure, "_chained", make):
        yield


@fault({"OPS-004": "dtype"})
def trace_keeps_integer_dtype() -> Iterator[None]:
    """The trace of an integer matrix keeps its dtype instead of accumulating into int64."""
    from impl._ops.products import TRACE

    def make(original: Callable) -> Callable:
        return lambda xp, a: xp.trace(a, dtype=a.dtype) if a.dtype.kind in "iu" else original(xp, a)

    with patched(TRACE, "forward", make):
        yield


@fault({"OPS-002": "got error"})
def rpow_base_cast_checked() -> Iterator[None]:
    """A number's power of an integer tensor refuses a base its dtype cannot hold ((-1) ** a uint8
    tensor raises) instead of wrapping it as torch does."""
    from impl._ops.arithmetic import POW_ST, _pow_fwd

    def make(original: Callable) -> Callable:
        return lambda xp, e, base: _pow_fwd(xp, xp.asarray(base, dtype=e.dtype), e)

    with patched(POW_ST, "forward", make):
        yield


# -- sorting and selection (OPS-008) -------------------------------------------------------------
@fault({"OPS-008": ": value"})
def sort_descending_reverses_ties() -> Iterator[None]:
    """A descending sort reverses the ascending order, so equal elements come out last first (and
    NaN's indices reversed) instead of in their original order."""
    from impl._ops import sorting

    def make(original: Callable) -> Callable:
        def order(xp: Any, a: Any, axis: int, descending: bool) -> Any:
            ascending = original(xp, a, axis, False)
            return xp.flip(ascending, axis) if descending else ascending

        return order

    with patched(sorting, "stable_order", make):
        yield


@fault({"OPS-008": ": value"})
def histc_clips_outliers() -> Iterator[None]:
    """histc counts the elements below ``min`` in the first bin and those above ``max`` in the
    last, instead of leaving them out."""
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        def counts(xp: Any, a: Any, lo: Any, hi: Any, bins: int) -> Any:
            with np.errstate(invalid="ignore"):
                clipped = xp.where(xp.isnan(a), a, xp.clip(a, lo, hi))
            return original(xp, clipped, lo, hi, bins)

        return counts

    with patched(reductions, "histc_counts", make):
        yield


@fault({"OPS-008": ": value"})
def median_upper_middle() -> Iterator[None]:
    """The median of an even number of elements is the upper of the two middle values, not the
    lower one torch returns."""
    from impl._ops.sorting import MEDIAN

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any) -> Any:
            flat = a.reshape(-1)
            if flat.size == 0 or (a.dtype.kind == "f" and bool(xp.isnan(flat).any())):
                return original(xp, a)
            return xp.sort(flat)[flat.size // 2]

        return forward

    with patched(MEDIAN, "forward", make):
        yield


@fault({"OPS-008": ": value"})
def kthvalue_stable_pick() -> Iterator[None]:
    """kthvalue returns the index of the k-th element of a stable sort instead of the one torch's
    quickselect leaves at k (they differ on ties)."""
    from impl._ops import sorting

    def make(original: Callable) -> Callable:
        def select(values: list, indices: list, k: int) -> None:
            order = sorted(range(len(values)), key=lambda i: (values[i] != values[i], values[i]))
            values[:], indices[:] = [values[i] for i in order], [indices[i] for i in order]

        return select

    with patched(sorting, "quick_select", make):
        yield


@fault({"OPS-008": ".grad: value"})
def sort_grad_not_scattered() -> Iterator[None]:
    """sort's gradient is passed back in sorted order instead of scattered to where each value
    came from."""
    from impl._ops.sorting import SORT

    with derivative_replaced(
        SORT, "self", lambda formula: lambda g, c: g if g.shape == c.shape() else formula(g, c)
    ):
        yield


# -- unary math (OPS-001, impl/_ops/unary_math.py) ----------------------------------------------
@fault({"OPS-001": ".grad: value"})
def tan_grad_without_one() -> Iterator[None]:
    """tan's derivative is ``grad * tan(x)**2``, the 1 of ``1 + tan(x)**2`` dropped."""
    from impl._ops.unary_math import TAN

    with derivative_replaced(TAN, "self", lambda _original: lambda g, c: g * c.result.pow(2)):
        yield


@fault({"OPS-001": ": value"})
def logit_eps_ignored() -> Iterator[None]:
    """logit ignores its eps: the input is not clamped to [eps, 1 - eps]."""
    from impl._ops.unary_math import LOGIT

    def make(original: Callable) -> Callable:
        return lambda xp, a, eps: original(xp, a, None)

    with patched(LOGIT, "forward", make):
        yield


@fault({"OPS-001": "dtype"})
def signbit_of_float_dtype() -> Iterator[None]:
    """signbit returns the input's dtype (1.0 for a set sign bit) instead of bool."""
    from impl._ops.unary_math import SIGNBIT

    def make(original: Callable) -> Callable:
        return lambda xp, a: original(xp, a).astype(a.dtype) if a.dtype.kind == "f" else original(xp, a)

    with patched(SIGNBIT, "forward", make):
        yield


@fault({"OPS-001": "expected error"})
def frac_takes_integers() -> Iterator[None]:
    """frac computes integer tensors (zeros) instead of raising torch's "frac_cpu" error."""
    from impl._ops.unary_math import FRAC

    def make(original: Callable) -> Callable:
        return lambda xp, a: xp.zeros_like(a) if a.dtype.kind in "iub" else original(xp, a)

    with patched(FRAC, "forward", make):
        yield


# -- binary math ops (atan2, hypot, fmod, remainder, fmax, fmin, copysign, xlogy, logaddexp) -----
@fault({"OPS-002": ": value"})
def remainder_keeps_dividend_sign() -> Iterator[None]:
    """remainder of two tensors is C's fmod (the sign of the dividend) instead of Python's modulo
    (the sign of the divisor)."""
    from impl._ops.binary_math import FMOD_KERNEL, REMAINDER

    with patched(REMAINDER, "forward", lambda _original: FMOD_KERNEL):
        yield


@fault({"OPS-002": "expected error"})
def integer_fmod_by_zero_unchecked() -> Iterator[None]:
    """fmod of integer tensors by a zero divisor gives numpy's 0 instead of torch's
    ``RuntimeError: ZeroDivisionError``."""
    from impl._ops import binary_math
    from impl._ops.binary_math import FMOD

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any, b: Any) -> Any:
            if a.dtype.kind in "iu":
                return xp.fmod(a, xp.where(b == 0, 1, b)) * (b != 0)
            return original(xp, a, b)

        return forward

    with ExitStack() as stack:  # the Tensor overload's forward, and the kernel the Scalar one calls
        stack.enter_context(patched(FMOD, "forward", make))
        stack.enter_context(patched(binary_math, "FMOD_KERNEL", make))
        yield


@fault({"OPS-002": ".grad: value"})
def atan2_other_grad_sign_lost() -> Iterator[None]:
    """atan2(y, x)'s gradient for x is grad * y / (x^2 + y^2), its sign lost (torch: -grad * y / ...)."""
    from impl._ops.binary_math import ATAN2, _atan2_recip

    with derivative_replaced(ATAN2, "other", lambda _original: lambda g, c: g * c.self * _atan2_recip(c)):
        yield


@fault({"OPS-002": ".grad: value"})
def xlogy_grad_unmasked_at_zero() -> Iterator[None]:
    """xlogy's gradient for x is log(y) everywhere, where torch gives 0 at x == 0 and y <= 0."""
    from impl._ops.binary_math import XLOGY, xlogy

    with derivative_replaced(XLOGY, "self", lambda _original: lambda g, c: xlogy(g, c.other)):
        yield


@fault({"OPS-002": ": value"})
def fmax_propagates_nan() -> Iterator[None]:
    """fmax/fmin propagate a nan operand (as maximum/minimum do) instead of taking the other one."""
    from impl._ops.binary_math import FMAX, FMIN

    with ExitStack() as stack:
        for op, pick in ((FMAX, "maximum"), (FMIN, "minimum")):
            forward = lambda xp, a, b, pick=pick: getattr(xp, pick)(a, b)  # noqa: E731
            stack.enter_context(patched(op, "forward", lambda _original, forward=forward: forward))
        yield


# -- shape ops (OPS-009) -------------------------------------------------------------------------
@fault({"OPS-009": ".grad: value"})
def tril_backward_shifted_diagonal() -> Iterator[None]:
    """tril's gradient keeps one diagonal more than the forward did (grad.tril(diagonal + 1))."""
    from impl._ops.shapes import TRIL

    with derivative_replaced(TRIL, "self", lambda formula: lambda g, c: g.tril(c.diagonal + 1)):
        yield


@fault({"OPS-009": ".grad: value"})
def repeat_backward_averages() -> Iterator[None]:
    """repeat's gradient averages the repeated copies' gradients instead of summing them."""
    from impl._ops import shapes

    def make(original: Callable) -> Callable:
        return lambda g, repeats, shape: original(g, repeats, shape) / (math.prod(repeats) or 1)

    with patched(shapes, "repeat_backward", make):
        yield


@fault({"OPS-009": "graph differs"})
def diagonal_copies() -> Iterator[None]:
    """diagonal returns a copy, not a view: a write into its base does not show through it."""
    from impl._ops.shapes import DIAGONAL

    def make(original: Callable) -> Callable:
        return lambda xp, a, offset, dim1, dim2: original(xp, a, offset, dim1, dim2).copy()

    with patched(DIAGONAL, "forward", make):
        yield


@fault({"OPS-009": "the backend raised none"})
def fliplr_takes_1d() -> Iterator[None]:
    """fliplr of a 1-d tensor flips its only dim instead of raising torch's "Input must be >= 2-d."."""
    import impl

    def make(original: Callable) -> Callable:
        return lambda input: impl.flip(input, [-1]) if input.dim() == 1 else original(input)

    with patched(impl, "fliplr", make):
        yield


@fault({"OPS-009": "stride differs"})
def movedim_rest_reversed() -> Iterator[None]:
    import impl
    from impl._ops import shapes

    def make(original: Callable) -> Callable:
        def movedim(input: Any, source: Any, destination: Any) -> Any:
            n = input.dim()
            moved = {d % n for d in shapes._ints(source)} if n else set()
            rest = [d for d in range(n) if d not in moved]
            order = list(range(n))
            for d, r in zip(rest, reversed(rest), strict=True):
                order[d] = r
            return original(input.permute(order) if n else input, source, destination)

        return movedim

    with ExitStack() as stack:
        for name in ("movedim", "moveaxis"):
            stack.enter_context(patched(impl, name, make))
        yield


# -- more reductions and scans: logsumexp, nansum, nanmean, all, any, count_nonzero, cummax, cummin,
# logcumsumexp (impl/_ops/reductions.py, impl/_ops/scans.py)
@fault({"OPS-003": ".grad: value"})
def logsumexp_grad_without_exp() -> Iterator[None]:
    """logsumexp's gradient is ``grad * (self - result)``, its exp (the softmax) forgotten."""
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        return lambda g, c: (
            reductions._unsqueezed(g, c) * (c.self - reductions._unsqueezed(c.result, c))
        )

    with derivative_replaced(reductions.LOGSUMEXP, "self", make):
        yield


@fault({"OPS-003": ".grad: value"})
def nansum_grad_through_nan() -> Iterator[None]:
    """nansum's gradient reaches the NaN elements too (sum's gradient), where torch's is 0."""
    from impl._ops import reductions

    with derivative_replaced(reductions.NANSUM, "self", lambda formula: reductions._expand_back):
        yield


@fault({"OPS-003": "dtype"})
def all_any_of_uint8_bool() -> Iterator[None]:
    """all and any of a uint8 tensor give bool, where torch keeps uint8."""
    from impl import dtypes
    from impl._ops import reductions

    with patched(reductions, "truth_dtype", lambda original: lambda dtype: dtypes.bool_):
        yield


@fault({"OPS-003": ": value"})
def cummax_ignores_nan() -> Iterator[None]:
    """cummax and cummin let a NaN set the running value but not take over the index, so the NaN
    is not what they return from there on."""
    from impl._ops import scans

    with patched(scans, "taking_over", lambda original: lambda xp, a, running: a == running):
        yield


@fault({"OPS-003": ": value"})
def logcumsumexp_unstabilised() -> Iterator[None]:
    """logcumsumexp computed as ``log(cumsum(exp(x)))``: large elements overflow to inf."""
    from impl._ops import scans

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any, dim: int) -> Any:
            if a.ndim == 0 or a.size == 0:
                return original(xp, a, dim)
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                return xp.log(xp.cumsum(xp.exp(a), axis=dim)).astype(a.dtype)

        return forward

    with patched(scans.LOGCUMSUMEXP, "forward", make):
        yield


# -- more shape, stacking and splitting ops (OPS-009) ---------------------------------------------
@fault({"OPS-009": ".grad: value"})
def roll_backward_same_direction() -> Iterator[None]:
    """roll's gradient is rolled by the same shifts as the forward instead of back by their negatives."""
    from impl._ops.shapes import ROLL

    with derivative_replaced(ROLL, "self", lambda formula: lambda g, c: g.roll(c.shifts, c.dims)):
        yield


@fault({"OPS-009": ".grad: value"})
def rot90_backward_same_direction() -> Iterator[None]:
    """rot90's gradient is rotated k more quarter turns instead of back by -k."""
    from impl._ops.shapes import ROT90

    with derivative_replaced(ROT90, "self", lambda formula: lambda g, c: g.rot90(c.k, c.dims)):
        yield


@fault({"OPS-009": ".grad: value"})
def tensor_split_longer_pieces_last() -> Iterator[None]:
    """tensor_split into sections makes the last pieces one element longer, not the first ones."""
    from impl._ops import stacking

    def make(original: Callable) -> Callable:
        return lambda size, sections: [size - b for b in reversed(original(size, sections))]

    with patched(stacking, "_section_bounds", make):
        yield


@fault({"OPS-009": "graph differs"})
def split_remainder_first() -> Iterator[None]:
    """split (and chunk, through it) by a size puts the short remainder piece first, not last."""
    from impl._ops import stacking

    def make(original: Callable) -> Callable:
        def views(input: Any, d: int, sizes: list, node_name: str) -> tuple:
            return original(input, d, sizes[::-1] if node_name == "SplitBackward0" else sizes, node_name)

        return views

    with patched(stacking, "_split_views", make):
        yield


@fault({"OPS-009": "graph differs"})
def diag_of_matrix_is_a_view() -> Iterator[None]:
    """diag of a 2-d tensor returns the strided diagonal itself, not torch's contiguous copy."""
    from impl._ops.shapes import DIAGONAL_COPY, _diagonal_fwd

    with patched(DIAGONAL_COPY, "forward", lambda _original: _diagonal_fwd):
        yield


@fault({"OPS-009": "graph differs"})
def broadcast_tensors_expands_all() -> Iterator[None]:
    """broadcast_tensors expands every input, also one already of the broadcast shape (torch returns
    that one itself, with its own grad_fn)."""
    import impl
    from impl._ops import views

    def make(original: Callable) -> Callable:
        def broadcast_tensors(*tensors: Any) -> tuple:
            return tuple(
                views.expand(t, r.shape) for t, r in zip(tensors, original(*tensors), strict=True)
            )

        return broadcast_tensors

    with patched(impl, "broadcast_tensors", make):
        yield


# -- unary ops, follow-ups: aliases, round's decimals, neg of bool ---------------------------------
@fault({"OPS-001": "graph differs"})
def arccos_bound_to_asin() -> Iterator[None]:
    """torch.arccos is bound to asin instead of acos (a wrong alias binding)."""
    import impl
    from impl._ops import unary_math

    with patched(impl, "arccos", lambda _original: unary_math.asin):
        yield


@fault({"OPS-001": ": value"})
def round_ignores_decimals() -> Iterator[None]:
    """round(x, decimals=d) of a floating x rounds to an integer, ignoring d."""
    from impl._ops.table import FLOAT_DTYPES
    from impl._ops.unary_math import ROUND_DECIMALS

    def make(original: Callable) -> Callable:
        return lambda xp, a, decimals: original(xp, a, decimals=0 if a.dtype in FLOAT_DTYPES else decimals)

    with patched(ROUND_DECIMALS, "forward", make):
        yield


@fault({"OPS-001": "expected error"})
def neg_of_bool_allowed() -> Iterator[None]:
    """neg of a bool tensor inverts it instead of raising torch's "Negation, the `-` operator" error."""
    from impl._ops.arithmetic import NEG

    def make(original: Callable) -> Callable:
        return lambda xp, a: ~a if a.dtype.kind == "b" else original(xp, a)

    with patched(NEG, "forward", make):
        yield


# -- binary and ternary math follow-ups (lerp, addcmul, addcdiv, float_power, heaviside) ---------
@fault({"OPS-002": ".grad: value"})
def lerp_weight_grad_sign_flipped() -> Iterator[None]:
    """lerp's gradient for a tensor weight is grad * (self - end) (torch: grad * (end - self))."""
    from impl._ops.pointwise_ternary import LERP_TENSOR

    with derivative_replaced(LERP_TENSOR, "weight", lambda _original: lambda g, c: g * (c.self - c.end)):
        yield


@fault({"OPS-002": ": value"})
def heaviside_ignores_values() -> Iterator[None]:
    """heaviside gives 0 where the input is 0 instead of taking ``values`` there."""
    from impl._ops.binary_math import HEAVISIDE

    forward = lambda xp, a, values: xp.where(a == 0, xp.zeros_like(values), (a > 0).astype(a.dtype))  # noqa: E731
    with patched(HEAVISIDE, "forward", lambda _original: forward):
        yield


@fault({"OPS-002": "expected error"})
def addcdiv_integer_division_allowed() -> Iterator[None]:
    """addcdiv of integer tensor1 and tensor2 computes instead of raising torch's "Integer
    division with addcdiv is no longer supported" error."""
    from impl._ops import pointwise_ternary

    with patched(pointwise_ternary, "_check_addcdiv", lambda _original: lambda tensor1, tensor2: None):
        yield


# -- scatter ops (OPS-009) -----------------------------------------------------------------------
@fault({"OPS-009": ".grad: value"})
def scatter_self_grad_kept() -> Iterator[None]:
    """scatter's gradient for self keeps the overwritten elements' gradient instead of zeroing it."""
    from impl._ops.scatter import SCATTER

    with derivative_replaced(SCATTER, "self", lambda formula: lambda g, c: g):
        yield


@fault({"OPS-009": "got error"})
def scatter_int32_index_refused() -> Iterator[None]:
    """scatter refuses an int32 index (torch takes int32 and int64)."""
    from impl import dtypes
    from impl._ops import scatter

    def make(original: Callable) -> Callable:
        def checked(name: str, self: Any, dim: int, index: Any, src: Any, reduce: Any = None) -> dict:
            if index.dtype is dtypes.int32:
                raise RuntimeError(f"{name}(): Expected dtype int64 for index")
            return original(name, self, dim, index, src, reduce)

        return checked

    with patched(scatter, "_checked", make):
        yield


@fault({"OPS-009": ": value"})
def scatter_add_duplicates_once() -> Iterator[None]:
    """scatter_add adds only one of duplicate indices' values (an assignment, not an accumulation)."""
    from impl._ops import indexing

    def make(original: Callable) -> Callable:
        def once(xp: Any, zeros: Any, g: Any, key: tuple, **_: Any) -> Any:
            out = zeros.copy()
            if g.size:
                target = out if out.ndim else out.reshape(1)
                target[key] = target[key] + g
            return out

        return once

    with patched(indexing, "_accumulate_fwd", make):
        yield


@fault({"OPS-009": ": value"})
def scatter_reduce_multiply_adds() -> Iterator[None]:
    """scatter with reduce='multiply' adds the value instead of multiplying by it."""
    from impl._ops import scatter

    with patched(scatter, "_REDUCTIONS", lambda original: {**original, "multiply": "add"}):
        yield


# -- var_mean, std_mean, aminmax: nodes with two differentiable outputs ----------------------------
@fault({"OPS-003": ".grad: expected a tensor, got None"})
def var_mean_ignores_mean_gradient() -> Iterator[None]:
    """var_mean's formula uses only the variance's gradient: the mean's never reaches the input."""
    from impl._ops.moments import VAR_MEAN

    def make(original: Callable) -> Callable:
        return lambda grads, c: None if grads[0] is None else original((grads[0], None), c)

    with derivative_replaced(VAR_MEAN, "self", make):
        yield


@fault({"OPS-003": ".grad: value"})
def std_mean_zeros_for_undefined_gradient() -> Iterator[None]:
    """std_mean's formula materialises zeros for an output's undefined gradient (torch's skips it):
    the zero gradient's path multiplies infinities and NaN of the input into a NaN gradient."""
    import impl
    from impl._ops.moments import STD_MEAN

    def make(original: Callable) -> Callable:
        def formula(grads: tuple, c: Any) -> Any:
            defined = next(g for g in grads if g is not None)
            return original(tuple(impl.zeros_like(defined) if g is None else g for g in grads), c)

        return formula

    with derivative_replaced(STD_MEAN, "self", make):
        yield


@fault({"OPS-003": ".grad: value"})
def aminmax_mask_from_wrong_output() -> Iterator[None]:
    """aminmax's gradient of the min goes where the input equals the max (and the max's where it
    equals the min): each mask is built from the other output."""
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        def swapped(grads: tuple, c: Any) -> Any:
            class Swapped:  # the saved outputs exchanged, everything else as saved
                def __getattr__(self, name: str) -> Any:
                    return getattr(c, {"min": "max", "max": "min"}.get(name, name))

            return original(grads, Swapped())

        return swapped

    with derivative_replaced(reductions.AMINMAX, "self", make):
        yield


@fault({"OPS-003": "TypeError"})
def spread_takes_unbiased_with_correction() -> Iterator[None]:
    """var_mean/std_mean (and var/std) take ``unbiased`` and ``correction`` together (the correction
    wins) where torch's parser refuses the call."""
    from impl import _signatures
    from impl._ops import moments

    def make(original: Callable) -> Callable:
        return lambda input, dim, unbiased, correction: original(input, dim, None, correction)

    def unchecked(original: Callable) -> Callable:  # (the parser's refusal before the call)
        def check(self: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
            both = "correction" in kwargs and ("unbiased" in kwargs or len(args) > 2)
            return (args, kwargs) if both else original(self, args, kwargs)

        return check

    with patched(moments, "spread_call_fits", make), patched(_signatures._Precheck, "check", unchecked):
        yield


# -- index_add / index_copy (OPS-009) -----------------------------------------------------------
@fault({"OPS-009": ".grad: value"})
def index_add_source_grad_ignores_alpha() -> Iterator[None]:
    """index_add's gradient for source forgets the factor alpha (grad.index_select only)."""
    from impl._ops.indexing import INDEX_ADD, picked_source

    with derivative_replaced(INDEX_ADD, "source", lambda formula: picked_source):
        yield


@fault({"OPS-009": ".grad: value"})
def index_copy_self_grad_kept() -> Iterator[None]:
    """index_copy's gradient for self keeps the overwritten slices' gradient instead of zeroing it."""
    from impl._ops.scatter import INDEX_COPY

    with derivative_replaced(INDEX_COPY, "self", lambda formula: lambda g, c: g):
        yield


# -- the options and edge values argument coverage asks for (oracle.coverage) --------------------


@fault({"OPS-001": ".grad: value"})
def clamp_tensor_ties_go_to_the_bound() -> Iterator[None]:
    """clamp with tensor bounds gives the gradient of an element equal to a bound to that bound
    instead of to the element (torch's clamp_backward passes it where ``min <= x <= max``)."""
    from impl._ops import pointwise_ternary

    def grads(c: Any) -> tuple[Any, Any, Any]:
        below = c.self <= c.min if c.has_min else None
        above = c.self >= c.max if c.has_max else None
        inside = [~m for m in (below, above) if m is not None]
        return (inside[0] & inside[1] if len(inside) == 2 else inside[0]), below, above

    with patched(pointwise_ternary, "_clamp_tensor_grads", lambda _orig: grads):
        yield


@fault({"OPS-002": ".grad: value"})
def add_alpha_lost_in_other_grad() -> Iterator[None]:
    """add's and sub's gradient for ``other`` is not scaled by ``alpha``."""
    from impl._ops import arithmetic

    with ExitStack() as stack:
        stack.enter_context(derivative_replaced(arithmetic.ADD, "other", lambda _orig: lambda g, c: g))
        stack.enter_context(derivative_replaced(arithmetic.SUB, "other", lambda _orig: lambda g, c: -g))
        yield


@fault({"OPS-007": "graph differs"})
def inplace_div_ignores_rounding_mode() -> Iterator[None]:
    """``x.div_(y, rounding_mode=...)`` divides exactly, without rounding."""
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        return lambda self, other, *, rounding_mode=None: original(self, other)

    with patched(Tensor, "div_", make):
        yield


@fault({"OPS-003": ": value"})
def spread_ignores_unbiased() -> Iterator[None]:
    """var and std apply Bessel's correction whatever ``unbiased`` says (``unbiased=False``
    ignored); an explicit correction still counts."""
    from impl._ops import moments

    with patched(moments, "_correction", lambda original: lambda dim, unbiased, correction: original(
            dim, True if unbiased is False else unbiased, correction)):
        yield


@fault({"OPS-003": "dtype differs"})
def reduction_dtype_ignored() -> Iterator[None]:
    """sum, mean and prod ignore a floating ``dtype=`` they are asked for (an integer input still
    accumulates into int64)."""
    from impl import dtypes
    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        def accumulated(input: Any, dtype: Any) -> Any:
            wanted = dtypes.to_dtype(dtype) if dtype is not None else None
            floating = wanted is not None and wanted.is_floating_point
            return original(input, None if floating and input.dtype.is_floating_point else dtype)

        return accumulated

    with patched(reductions, "accumulated_dtype", make):
        yield


# -- searchsorted / bucketize (OPS-008) ----------------------------------------------------------
@fault({"OPS-008": "value"})
def searchsorted_right_ignored() -> Iterator[None]:
    """searchsorted and bucketize give the left insertion point whatever ``right`` and ``side`` say."""
    from impl._ops import sorting

    def make(original: Callable) -> Callable:
        return lambda seq, values, out_int32, _right, sorter: original(seq, values, out_int32, False, sorter)

    with patched(sorting, "_searched", make):
        yield


@fault({"OPS-008": "value"})
def searchsorted_sorter_ignored() -> Iterator[None]:
    """searchsorted reads the boundaries in their stored order, as if they were sorted, whatever
    ``sorter`` says."""
    from impl._ops import sorting

    def make(original: Callable) -> Callable:
        return lambda seq, values, out_int32, right, _sorter: original(seq, values, out_int32, right, None)

    with patched(sorting, "_searched", make):
        yield


@fault({"OPS-008": "error"})
def searchsorted_opposite_side_accepted() -> Iterator[None]:
    """searchsorted(side="left", right=True) is accepted (side wins) instead of refused."""
    from impl._ops import sorting

    def make(original: Callable) -> Callable:
        def check(seq: Any, values: Any, scalar: bool, right: bool, side: Any, sorter: Any) -> None:
            original(seq, values, scalar, False if side == "left" else right, side, sorter)

        return check

    with patched(sorting, "_check_search", make):
        yield


@fault({"OPS-008": "value"})
def searchsorted_in_boundaries_dtype() -> Iterator[None]:
    """Values are compared in the boundaries' dtype, not the two tensors' result type (0.5 searched
    in int64 boundaries is 0)."""
    from impl._ops import sorting
    from impl._tensor import Tensor

    def make(original: Callable) -> Callable:
        def searched(seq: Any, values: Any, out_int32: bool, right: bool, sorter: Any) -> Any:
            narrowed = Tensor._from_array(values._data.astype(seq._data.dtype))
            return original(seq, narrowed, out_int32, right, sorter)

        return searched

    with patched(sorting, "_searched", make):
        yield


@fault({"OPS-003": ".grad: value"})
def vector_norm_inf_grad_spread_evenly() -> Iterator[None]:
    """The inf/-inf norm's gradient is shared by every element of a lane (sgn(x) * grad / n), not
    only by the elements whose |x| is the norm."""
    from impl._ops import norms

    def make(original: Callable) -> Callable:
        def formula(g: Any, c: Any) -> Any:
            if abs(c.ord) != math.inf:
                return original(g, c)
            grad, x = norms._unsqueezed(g, c), c.self
            return x.sgn() * grad / (x.abs() == x.abs()).sum(c.dim or (), True)

        return formula

    with derivative_replaced(norms.LINALG_VECTOR_NORM, "self", make):
        yield


@fault({"OPS-003": ".grad: value"})
def vector_norm_zero_norm_grad_nan() -> Iterator[None]:
    """The 2-norm's gradient is grad * x / norm without torch's mask: NaN where the norm is 0."""
    from impl._ops import norms

    def make(original: Callable) -> Callable:
        def formula(g: Any, c: Any) -> Any:
            if c.ord != 2:
                return original(g, c)
            return norms._unsqueezed(g, c) * (c.self / norms._unsqueezed(c.result, c))

        return formula

    with derivative_replaced(norms.LINALG_VECTOR_NORM, "self", make):
        yield


# -- the tutorial ops (einsum: OPS-004; unique: OPS-008) ------------------------------------------
@fault({"OPS-008": ": value"})
def unique_inverse_from_one() -> Iterator[None]:
    """unique's inverse indices count from 1 (positions in a 1-based list), not from 0."""
    from impl._ops.sorting import UNIQUE

    def make(original: Callable) -> Callable:
        def forward(xp: Any, a: Any, dim: Any, consecutive: bool) -> tuple:
            values, inverse, counts = original(xp, a, dim, consecutive)
            return values, inverse + 1, counts

        return forward

    with patched(UNIQUE, "forward", make):
        yield


@fault({"OPS-004": "differs"})
def einsum_implicit_output_as_written() -> Iterator[None]:
    """einsum's implicit output keeps the subscripts seen once in the order they appear, not
    sorted (``'ba'`` is then the input itself, not its transpose)."""
    from impl._ops import products

    def make(original: Callable) -> Callable:
        def places(equation: str, arrow: int, lhs: str, count: list, ell_dims: int) -> tuple:
            if arrow >= 0:
                return original(equation, arrow, lhs, count, ell_dims)
            seen = [c for c in lhs if c.isalpha() and count[products._subscript(c)] == 1]
            return original(equation + "->..." + "".join(seen), len(equation), lhs, count, ell_dims)

        return places

    with patched(products, "_output_places", make):
        yield



@fault({"OPS-003": "differs"})
def cosine_similarity_of_clamped_product() -> Iterator[None]:
    """cosine_similarity as torch computed it before 1.12: ``<x1, x2> / sqrt(max(|x1|^2 |x2|^2,
    eps^2))`` (one clamp of the product, a DivBackward0 on top), not each input divided by its
    own clamped norm."""
    import impl

    def make(original: Callable) -> Callable:
        def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
            if not (x1.dtype.is_floating_point and x2.dtype.is_floating_point):
                return original(x1, x2, dim, eps)  # torch's errors as they are
            w12 = (x1 * x2).sum(dim)
            w1, w2 = (x1 * x1).sum(dim), (x2 * x2).sum(dim)
            return w12 / (w1 * w2).clamp(min=eps * eps).sqrt()

        return cosine_similarity

    with patched(impl, "cosine_similarity", make):
        yield


@fault({"OPS-003": "differs"})
def pairwise_distance_module_ignores_p() -> Iterator[None]:
    """nn.PairwiseDistance computes the 2-norm whatever its ``p`` (the functional form is right)."""
    from impl.nn import functional as F
    from impl.nn.modules.distance import PairwiseDistance

    def make(original: Callable) -> Callable:
        def forward(self: Any, x1: Any, x2: Any) -> Any:
            return F.pairwise_distance(x1, x2, 2.0, self.eps, self.keepdim)

        return forward

    with patched(PairwiseDistance, "forward", make):
        yield


@fault({"OPS-010": ": value"})
def greater_equal_as_not_less() -> Iterator[None]:
    """ge (greater_equal, >=) computed as the negation of lt: true where either operand is NaN."""
    from impl._ops.comparison import GE

    with patched(GE, "forward", lambda _original: lambda xp, a, b: ~(a < b)):
        yield


# -- reductions and selection: mode, quantile, histogram (OPS-011), in-place comparisons (OPS-010)
@fault({"OPS-011": ": value"})
def mode_stable_pick() -> Iterator[None]:
    """mode sorts its (value, index) pairs stably instead of with libstdc++'s std::sort: among equal
    values of a lane longer than 16 it returns another index than torch's."""
    from impl._ops import sorting

    def make(_original: Callable) -> Callable:
        return lambda items, less: items.sort(key=lambda item: (item[0] != item[0], item[0]))

    with patched(sorting, "std_sort", make):
        yield


@fault({"OPS-011": "graph differs"})
def quantile_without_interpolation() -> Iterator[None]:
    """quantile's linear and midpoint modes return the value below the rank, as 'lower' does."""
    from impl._ops import sorting

    with patched(sorting, "INTERPOLATING", lambda _original: ()):
        yield


@fault({"OPS-011": ": value"})
def histogram_last_edge_open() -> Iterator[None]:
    """histogram's last bin is half-open like the others: an element equal to the last edge (the
    data's maximum, without a range) is not counted."""
    import dataclasses

    from impl._ops import reductions

    def make(original: Callable) -> Callable:
        def op(inputs: tuple) -> Any:
            right = original(inputs)

            def forward(xp: Any, a: Any, *rest: Any, edges: Any, **kwargs: Any) -> Any:
                return right.forward(xp, xp.where(a == edges[-1], np.nan, a), *rest, edges=edges, **kwargs)

            return dataclasses.replace(right, forward=forward)

        return op

    with patched(reductions, "_histogram_op", make):
        yield


@fault({"OPS-010": "grad_fn differs"})
def inplace_comparison_unrecorded() -> Iterator[None]:
    """An in-place comparison (eq_ ...) records no node: the tensor keeps its old grad_fn."""
    import impl
    from impl._ops import comparison

    def make(original: Callable) -> Callable:
        def run(*args: Any, **kwargs: Any) -> Any:
            with impl.no_grad():
                return original(*args, **kwargs)

        return run

    with patched(comparison, "apply_inplace", make):
        yield


# -- structure and product ops (OPS-012) --------------------------------------------------------
@fault({"OPS-012": ": value"})
def kron_operands_swapped() -> Iterator[None]:
    """kron(a, b) computes kron(b, a): the blocks are b's, scaled by a's elements."""
    import impl

    with patched(impl, "kron", lambda original: lambda input, other: original(other, input)):
        yield


@fault({"OPS-012": "graph differs"})
def take_along_dim_input_unexpanded() -> Iterator[None]:
    """take_along_dim gathers from the input itself where it already has the broadcast shape: no
    ExpandBackward0 between the gather and the input, as torch's at::broadcast_to always adds."""
    import impl

    def make(original: Callable) -> Callable:
        def take_along_dim(input: Any, indices: Any, dim: Any = None) -> Any:
            if dim is None or input.dim() != indices.dim() or indices.shape[dim] > input.shape[dim]:
                return original(input, indices, dim)
            return input.gather(dim, indices.expand(*input.shape[:dim], indices.shape[dim],
                                                    *input.shape[dim + 1 :]))

        return take_along_dim

    with patched(impl, "take_along_dim", make):
        yield


@fault({"OPS-012": "the backend raised none"})
def vecdot_promotes_mixed_dtypes() -> Iterator[None]:
    """linalg.vecdot of float32 and float64 operands promotes them instead of raising torch's
    "Expected x and y to have the same dtype"."""
    import impl

    def make(original: Callable) -> Callable:
        def vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
            if x.dtype.is_floating_point and y.dtype.is_floating_point:
                return (x * y).sum(dim)
            return original(x, y, dim=dim)

        return vecdot

    with patched(impl.linalg, "vecdot", make):
        yield


@fault({"OPS-012": ".grad: value"})
def renorm_grad_factor_constant() -> Iterator[None]:
    """renorm's gradient scales the incoming one by maxnorm / (norm + 1e-7) as if the factor were
    a constant: torch's renorm_backward subtracts the projection through the norm too."""
    import impl
    from impl._ops.norms import RENORM

    def make(_original: Callable) -> Callable:
        def grad(g: Any, c: Any) -> Any:
            dims = [d for d in range(c.self.dim()) if d != c.dim]
            norm = impl.linalg.vector_norm(c.self, c.p, dims, True)
            return (g * ((norm + 1e-7).reciprocal() * c.maxnorm)).where(norm > c.maxnorm, g)

        return grad

    with derivative_replaced(RENORM, "self", make):
        yield


@fault({"OPS-012": "the reference raised none"})
def broadcast_shapes_aligned_left() -> Iterator[None]:
    """broadcast_shapes aligns shapes of different lengths at their first dims (pads them with 1s
    on the right), not at their last as torch's broadcasting does."""
    import impl

    def make(original: Callable) -> Callable:
        def broadcast_shapes(*shapes: Any) -> Any:
            given = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
            if not all(isinstance(s, (list, tuple)) for s in given):
                return original(*shapes)
            n = max((len(s) for s in given), default=0)
            return original(*[(*s, *(1,) * (n - len(s))) for s in given])

        return broadcast_shapes

    with patched(impl, "broadcast_shapes", make):
        yield


@fault({"OPS-012": "shown differs"})
def is_nonzero_of_nan_false() -> Iterator[None]:
    """is_nonzero of a NaN answers False (NaN taken for zero); torch answers True."""
    import impl

    def make(original: Callable) -> Callable:
        return lambda input: original(input) and not bool(input.isnan().any())

    with patched(impl, "is_nonzero", make):
        yield


@fault({"OPS-012": "shown differs"})
def unravel_index_column_major() -> Iterator[None]:
    """unravel_index counts the first dim fastest (numpy's order='F'), not the last."""
    import impl

    def make(original: Callable) -> Callable:
        def unravel_index(indices: Any, shape: Any) -> Any:
            dims = (shape,) if isinstance(shape, int) else tuple(shape)
            if any(not isinstance(d, int) for d in dims):
                return original(indices, shape)
            return original(indices, dims[::-1])[::-1]

        return unravel_index

    with patched(impl, "unravel_index", make):
        yield


@fault({"OPS-012": ": value"})
def right_shift_past_width_gives_zero() -> Iterator[None]:
    """A right shift by the bit width or more (or a negative amount) gives 0, not the sign fill
    torch's kernel gives (-1 for a negative signed operand)."""
    from impl._ops.integer_math import RIGHT_SHIFT

    def make(original: Callable) -> Callable:
        def run(xp: Any, a: Any, b: Any) -> Any:
            shifted = original(xp, a, b)
            past = (b.astype(np.int64) < 0) | (b.astype(np.int64) >= a.dtype.itemsize * 8 - 1)
            return np.where(past, 0, shifted).astype(shifted.dtype)

        return run

    with patched(RIGHT_SHIFT, "forward", make):
        yield


# -- the gamma family (impl/_ops/gamma.py) -------------------------------------------------------
@fault({"OPS-001": ": value"})
def digamma_reflection_adds_pi_cot() -> Iterator[None]:
    """digamma's reflection formula below 0 adds ``pi / tan(pi x)`` instead of subtracting it."""
    from impl._ops.gamma import DIGAMMA

    def make(original: Callable) -> Callable:
        def digamma(xp: Any, a: Any) -> Any:
            r = original(xp, a)
            x = a.astype(xp.float64)
            return xp.where(x < 0, r + 2 * math.pi / xp.tan(math.pi * x), r).astype(r.dtype)

        return digamma

    with patched(DIGAMMA, "forward", make):
        yield


@fault({"OPS-001": ".grad: value"})
def polygamma_grad_same_order() -> Iterator[None]:
    """polygamma(n, x)'s gradient is ``polygamma(n, x)`` instead of ``polygamma(n + 1, x)``."""
    from impl._ops import gamma

    def make(_original: Callable) -> Callable:
        return lambda g, c: g * gamma.polygamma(c.n, c.self)

    with derivative_replaced(gamma.POLYGAMMA, "self", make):
        yield


@fault({"OPS-001": "expected error"})
def mvlgamma_bool_accepted() -> Iterator[None]:
    """mvlgamma of a bool tensor computes (as of 0 and 1) instead of raising torch's error."""
    from impl._ops import gamma
    from impl._tensor import as_int

    with patched(gamma, "_mvlgamma_args", lambda _original: lambda input, p: as_int(p)):
        yield


# -- the float ops (OPS-013) -----------------------------------------------------------------------
@fault({"OPS-013": ": value"})
def frexp_exponent_off_by_one() -> Iterator[None]:
    """frexp's exponent is one too large (the mantissa is right): C's frexp read as [1, 2)'s."""
    from impl._ops.float_bits import FREXP

    def make(original: Callable) -> Callable:
        def run(xp: Any, a: Any) -> Any:
            mantissa, exponent = original(xp, a)
            return mantissa, exponent + 1

        return run

    with patched(FREXP, "forward", make):
        yield


@fault({"OPS-013": ".grad: value"})
def ldexp_exponent_grad_without_log2() -> Iterator[None]:
    """ldexp's gradient of a floating exponent lacks the factor ln 2: ``grad * result``."""
    from impl._ops.float_bits import LDEXP

    with derivative_replaced(LDEXP, "other", lambda _original: lambda g, c: g * c.result):
        yield


@fault({"OPS-013": ".grad: value"})
def nextafter_grad_where_equal() -> Iterator[None]:
    """nextafter passes the gradient to self where self equals other too (torch gives 0 there)."""
    from impl._ops.float_bits import NEXTAFTER

    with derivative_replaced(NEXTAFTER, "self", lambda _original: lambda g, c: g):
        yield


# -- index_put and put (OPS-014) -------------------------------------------------------------------
@fault({"OPS-014": "expected error IndexError"})
def index_fill_value_grad_everywhere() -> Iterator[None]:
    """index_fill's 0-d tensor value gets the sum of the whole gradient instead of the filled
    positions' (the index_select of the indices is left out, and with it torch's error for a
    negative index, the first divergence ci's programs meet)."""
    from impl._ops.indexing import INDEX_FILL_TENSOR

    def make(original: Callable) -> Callable:
        return lambda g, c: g.sum() if g.dim() else original(g, c)

    with derivative_replaced(INDEX_FILL_TENSOR, "value", make):
        yield


@fault({"OPS-014": ": value"})
def fill_diagonal_wrap_ignored() -> Iterator[None]:
    """fill_diagonal_(wrap=True) of a tall matrix fills only the main diagonal."""
    from impl._ops import indexing

    with patched(indexing, "_diagonals", lambda original: lambda self, wrap: original(self, False)):
        yield


@fault({"OPS-014": ".grad: value"})
def slice_scatter_self_grad_kept() -> Iterator[None]:
    """slice_scatter's gradient for self keeps the overwritten slice's gradient instead of zeroing it."""
    from impl._ops.view_scatters import SLICE_SCATTER

    with derivative_replaced(SLICE_SCATTER, "self", lambda _formula: lambda g, c: g):
        yield


@fault({"OPS-014": "self and source to have same dtypes"})
def masked_scatter_source_dtype_unchecked() -> Iterator[None]:
    """masked_scatter and masked_scatter_ take a source of another dtype (torch refuses it)."""
    from impl._ops import indexing

    with patched(indexing, "_check_source_dtype", lambda _original: lambda self, source: None):
        yield


@fault({"OPS-014": ": value"})
def index_put_accumulate_overwrites() -> Iterator[None]:
    """index_put(accumulate=True) writes the values instead of adding them."""
    from impl._ops import indexing

    def make(original: Callable) -> Callable:
        return lambda xp, a, values, key, accumulate=False: original(xp, a, values, key, False)

    with patched(indexing, "_index_put_fwd", make):
        yield


@fault({"OPS-014": ": value"})
def put_accumulate_overwrites() -> Iterator[None]:
    """put(accumulate=True) writes the source instead of adding it."""
    from impl._ops.puts import PUT

    def make(original: Callable) -> Callable:
        return lambda xp, a, source, index, accumulate: original(xp, a, source, index, False)

    with patched(PUT, "forward", make):
        yield
