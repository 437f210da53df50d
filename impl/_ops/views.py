"""View ops: view, reshape, t, transpose, permute, expand, squeeze, unsqueeze, flatten, select,
narrow, as_strided, detach; and the copies torch makes in their place (contiguous, clone,
reshape's copy). Views share memory and the version counter with their base (numpy views).

``view`` follows torch's stride rule (a view is possible only when each group of merged/split
dimensions is contiguous in memory) and raises torch's error otherwise; ``reshape`` views when it
can and copies when it cannot.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from impl import _api as api
from impl import _grad_mode as grad_mode
from impl import _layout, _memory_format, dtypes
from impl._creation import zeros
from impl._layout import VIEW_ERROR, addresses, as_strided_array, copy_like, min_storage_size, view_strides
from impl._names import type_name
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._signatures import Out, invalid_call
from impl._tensor import ArgumentTypeError, DimList, Dims, Tensor, _dim_list, _wrap_dim, as_ints
from impl._warn import warn_once
from impl._xp import namespace_of


def _expand_fwd(xp: Any, a: Any, size: tuple) -> Any:
    """A writable expanded view (numpy's broadcast_to is read-only) with torch's strides
    (inferExpandGeometry): 0 on a dimension grown from size 1 or new and not of size 1; a new
    dimension of size 1 gets size * stride of the dimension after it (0 for a 0-d tensor's)."""
    lead = len(size) - a.ndim
    strides = [s // a.itemsize for s in a.strides]
    out = [0] * len(size)
    for i in range(len(size) - 1, -1, -1):
        own = i - lead
        if own >= 0:
            out[i] = 0 if (a.shape[own] == 1 and size[i] != 1) else strides[own]
        elif size[i] == 1 and i + 1 < len(size):
            out[i] = size[i + 1] * out[i + 1]
    return as_strided_array(xp, a, tuple(size), tuple(out))


def _view_fwd(xp: Any, a: Any, size: tuple) -> Any:
    strides = view_strides(a.shape, tuple(s // a.itemsize for s in a.strides), size)
    if strides is None:
        raise RuntimeError(VIEW_ERROR)
    return as_strided_array(xp, a, size, strides)


VIEW = OpDef(
    "ViewBackward0",
    _view_fwd,
    derivatives={"self": D("", lambda g, c: g.reshape(c.shape()))},
    view=True,
    jvp=auto_linear,
)
RESHAPE_ALIAS = OpDef(
    "ReshapeAliasBackward0",
    _view_fwd,
    derivatives={"self": D("", lambda g, c: g.reshape(c.shape()))},
    view=True,
    jvp=auto_linear,
)
UNSAFE_VIEW = OpDef(
    "UnsafeViewBackward0",
    lambda xp, a, size: a.reshape(size),
    derivatives={"self": D("", lambda g, c: g.reshape(c.shape()))},
    jvp=auto_linear,
)
TRANSPOSE = OpDef(
    "TransposeBackward0",
    lambda xp, a, dim0, dim1: xp.swapaxes(a, dim0, dim1) if a.ndim else a[...],
    derivatives={"self": D("dim0 dim1", lambda g, c: g.transpose(c.dim0, c.dim1))},
    view=True,
    jvp=auto_linear,
)
T = OpDef(
    "TBackward0",
    lambda xp, a: a.T,
    derivatives={"self": D("", lambda g, c: g.t())},
    view=True,
    jvp=auto_linear,
)
PERMUTE = OpDef(
    "PermuteBackward0",
    lambda xp, a, dims: xp.transpose(a, dims),
    derivatives={"self": D("dims", lambda g, c: g.permute([int(i) for i in np.argsort(c.dims)]))},
    view=True,
    jvp=auto_linear,
)
EXPAND = OpDef(
    "ExpandBackward0",
    _expand_fwd,
    derivatives={"self": D("", lambda g, c: sum_to(g, c.shape()))},
    view=True,
    jvp=auto_linear,
)


def _unsqueeze_fwd(xp: Any, a: Any, dim: int) -> Any:
    """The new dim's stride is torch's: size * stride of the dim it precedes (1 at the end)."""
    strides = [s // a.itemsize for s in a.strides]
    new = strides[dim] * a.shape[dim] if dim < a.ndim else 1
    shape = a.shape[:dim] + (1,) + a.shape[dim:]
    return as_strided_array(xp, a, shape, tuple(strides[:dim] + [new] + strides[dim:]))


def _unsqueeze_to(g: Any, shape: tuple, dims: Any) -> Any:
    """torch's unsqueeze_to: put back each squeezed dim of ``shape`` (size 1) with unsqueeze, so a
    create_graph gradient records UnsqueezeBackward0 nodes; a dim that was not of size 1 is skipped."""
    for d in sorted(dims):
        if shape and shape[d] == 1:
            g = g.unsqueeze(d)
    return g


def _squeezed(xp: Any, a: Any, dims: Any) -> Any:
    """``a`` without its size-1 dims among ``dims``; the other dims keep their strides, as torch's."""
    kept = [d for d in range(a.ndim) if not (d in dims and a.shape[d] == 1)]
    strides = [s // a.itemsize for s in a.strides]
    return as_strided_array(xp, a, tuple(a.shape[d] for d in kept), tuple(strides[d] for d in kept))


UNSQUEEZE = OpDef(
    "UnsqueezeBackward0",
    _unsqueeze_fwd,
    derivatives={"self": D("dim", lambda g, c: g.squeeze(c.dim))},
    view=True,
    jvp=auto_linear,
)
SQUEEZE = OpDef(
    "SqueezeBackward0",
    lambda xp, a: _squeezed(xp, a, range(a.ndim)),
    derivatives={"self": D("", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), range(len(c.shape()))))},
    view=True,
    jvp=auto_linear,
)
SQUEEZE_DIM = OpDef(
    "SqueezeBackward1",
    lambda xp, a, dim: _squeezed(xp, a, (dim,)),
    derivatives={"self": D("dim", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), (c.dim,)))},
    view=True,
    jvp=auto_linear,
)
SQUEEZE_DIMS = OpDef(
    "SqueezeBackward2",
    lambda xp, a, dims: _squeezed(xp, a, dims),
    derivatives={"self": D("dims", lambda g, c: _unsqueeze_to(g, tuple(c.shape()), c.dims))},
    view=True,
    jvp=auto_linear,
)
SELECT = OpDef(
    "SelectBackward0",
    lambda xp, a, dim, index: a[(slice(None),) * dim + (index, Ellipsis)],
    derivatives={
        "self": D(
            "dim index",
            lambda g, c: _embed(g, c.shape(), (slice(None),) * c.dim + (c.index,), "SelectBackwardBackward0"),
        )
    },
    view=True,
    jvp=auto_linear,
)
SLICE = OpDef(
    "SliceBackward0",
    lambda xp, a, dim, start, end, step: a[(slice(None),) * dim + (slice(start, end, step),)],
    derivatives={
        "self": D(
            "dim start end step",
            lambda g, c: _embed(
                g,
                c.shape(),
                (slice(None),) * c.dim + (slice(c.start, c.end, c.step),),
                "SliceBackwardBackward0",
            ),
        )
    },
    view=True,
    jvp=auto_linear,
)


def _as_strided_fwd(
    xp: Any, a: Any, size: tuple, stride: tuple, offset: int, in_offset: int, storage: Any
) -> Any:
    """A view of ``storage`` (the input's: Tensor._storage_array) from ``offset``; ``in_offset``,
    the input's own storage offset, is for the backward."""
    return as_strided_array(xp, storage[offset:], size, stride)


AS_STRIDED = OpDef(
    "AsStridedBackward0",
    _as_strided_fwd,
    derivatives={"self": D("size stride offset in_offset self.strides", lambda g, c: _as_strided_back(g, c))},
    view=True,
    # auto_linear on the tangent's own memory (laid out as the primal's, see forward_ad.make_dual)
    jvp=lambda c: as_strided(c.self_t, c.size, c.stride, c.offset),
)
ALIAS = OpDef(
    "AliasBackward0",
    lambda xp, a: a[...],
    derivatives={"self": D("", lambda g, c: g)},
    view=True,
    jvp=auto_linear,
)
# the primal of a dual tensor (forward AD's unpack_dual): torch's _fw_primal, a view whose node is
# the C++ Identity function
FW_PRIMAL = OpDef(
    "CppFunction",
    lambda xp, a: a[...],
    derivatives={"self": D("", lambda g, c: g)},
    view=True,
    qualified_name="torch::autograd::Identity",
)


def _embed_fwd(xp: Any, g: Any, shape: tuple, key: tuple) -> Any:
    out = xp.zeros(shape, dtype=g.dtype)
    out[key] = g
    return out


_EMBED_OPS: dict[str, OpDef] = {}


def _embed(g: Any, shape: tuple, key: tuple, name: str) -> Any:
    """Zeros of ``shape`` with ``g`` written at ``key`` (backward of select/slice), differentiable."""
    op = _EMBED_OPS.get(name)
    if op is None:
        op = _EMBED_OPS[name] = OpDef(  # (it moves values: complex ones too)
            name, _embed_fwd, derivatives={"self": D("key", lambda gg, c: gg[c.key])}, complex="own"
        )
    return apply(op, g, shape=shape, key=key)


def _as_strided_back(g: Any, c: Any) -> Any:
    """torch's as_strided_backward: the gradient of the view (size, stride, offset) written into
    zeros the size of the storage both geometries span, read back in the input's geometry (its
    shape, strides and storage offset); differentiable where neither overlaps itself (the view's
    size-1 dims squeezed first: SqueezeBackward1, CopySlices and AsStridedBackward0 in a
    create_graph graph). Otherwise each address gets the sum of the view's gradients there, and
    each element of the input that sum divided by how many of its elements read it (values only)."""

    shape, in_stride = tuple(c.shape()), tuple(c.strides("self"))
    shared = min(c.in_offset, c.offset)
    in_offset, out_offset = c.in_offset - shared, c.offset - shared
    size = max(min_storage_size(shape, in_stride, in_offset), min_storage_size(c.size, c.stride, out_offset))
    out_addresses = addresses(c.size, c.stride, out_offset)
    in_addresses = addresses(shape, in_stride, in_offset)
    if _overlap(out_addresses) or _overlap(in_addresses):
        return _overlapping_back(g, size, out_addresses, in_addresses)
    out_size, out_stride = list(c.size), list(c.stride)
    for d in reversed(range(len(out_size))):
        if out_size[d] == 1:
            g = g.squeeze(d)
            del out_size[d], out_stride[d]
    storage = zeros(size, dtype=g.dtype, device=g.device)
    storage.as_strided(tuple(out_size), tuple(out_stride), out_offset).copy_(g)
    return storage.as_strided(shape, in_stride, in_offset)


def _overlap(addresses: Any) -> bool:
    return addresses.size != np.unique(addresses).size


def _overlapping_back(g: Any, size: int, out_addresses: Any, in_addresses: Any) -> Any:
    """The gradient where a geometry overlaps itself (see _as_strided_back), values only."""
    xp = namespace_of(g._data)
    storage = xp.zeros(size, dtype=g._data.dtype)
    xp.add.at(storage, xp.asarray(out_addresses), g._data)
    count = np.zeros(size, dtype=np.int64)
    np.add.at(count, in_addresses, 1)
    storage = storage / xp.asarray(np.maximum(count, 1)).astype(storage.dtype)
    return Tensor._from_array(storage[xp.asarray(in_addresses)])


def sum_to(g: Any, shape: tuple) -> Any:
    """Sum a broadcast gradient back to ``shape`` as torch's at::sum_to (leading dims, then size-1
    dims, kept and viewed away)."""
    shape = tuple(shape)
    if not shape:  # torch's sum_to: a full sum (SumBackward0) for a 0-d target, even of a 0-d g
        return g.sum()
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    out = g.sum(dims, keepdim=True) if dims else g
    return out.reshape(shape) if tuple(out.shape) != shape else out


# preserve_format
CLONE = OpDef("CloneBackward0", copy_like, derivatives={"self": D("", lambda g, c: g)}, jvp=auto_linear)


CLONE_CONTIGUOUS = OpDef(
    "CloneBackward0", lambda xp, a: a.copy(), derivatives=CLONE.derivatives, jvp=auto_linear
)


@api.variants("clone")
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(clone, locals())
    fmt = _memory_format.check(memory_format, "clone")
    if fmt is not None and fmt is not _memory_format.preserve_format:
        return apply(CLONE, input, strides=_memory_format.strides(fmt, tuple(input.shape)))
    if input._inference and not grad_mode.is_inference_mode_enabled():
        return _clone_of_inference(input)
    return CLONE._call((input,), {})


def _clone_of_inference(input: Tensor) -> Tensor:
    """clone() of an inference tensor outside inference mode, as torch's clone is: empty_like then
    copy_, so the copy is a normal tensor written once (version 1), and a copy_ from an input that
    requires grad records CopyBackwards."""
    xp = namespace_of(input._data)
    return Tensor._from_array(_layout.new_like(xp, input._data)).copy_(input)


def _shape_args(shape: tuple) -> tuple[int, ...]:
    """Sizes or dims given as one sequence or spread (``view((2, 3))``, ``view(2, 3)``), as ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return as_ints(shape[0])
    return as_ints(shape)


def _unsafe_view(t: Tensor, shape: tuple) -> Tensor:
    return apply(UNSAFE_VIEW, t, size=tuple(shape))


@api.method("view")
def view(input: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise NotImplementedError("view(dtype) is not supported")
    size = _layout.infer_size(_shape_args(shape), input.numel())
    return apply(VIEW, input, size=size)


@api.variants("reshape")
def reshape(input: Tensor, *shape: Dims) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(reshape, locals())
    size = _layout.infer_size(_shape_args(shape), input.numel())
    strides = _layout.view_strides(tuple(input.shape), input.stride(), size)
    if strides is None:
        return _unsafe_view(apply(CLONE_CONTIGUOUS, input), size)
    return apply(VIEW if input.is_contiguous() else RESHAPE_ALIAS, input, size=size)


@api.method("view_as", tensor="other")
def view_as(input: Tensor, other: Tensor) -> Tensor:
    return view(input, tuple(other.shape))


@api.method("reshape_as", tensor="other")
def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    return reshape(input, tuple(other.shape))


@api.function("t")
def t(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(t, locals())
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    return apply(T, input)


@api.function("transpose", "swapdims")
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(transpose, locals())
    n = input.dim()
    return apply(TRANSPOSE, input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


def _matrices_transposed(input: Tensor, spelling: str, name: str, line: int) -> Tensor:
    """The last two dims swapped, conjugated if complex (ConjBackward0 on top, as torch's view of
    the conjugate bit); a 0-d tensor itself, with torch's once-per-process deprecation warning;
    1-d refused."""
    n = input.dim()
    if n == 0:
        warn_once(
            f"{name} 0-d",
            f"{spelling} is deprecated on 0-D tensors. Consider using x.conj(). (Triggered internally at "
            f"/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:{line}.)",
        )
        return input
    if n == 1:
        supported = "is only supported on matrices or batches of matrices"
        raise RuntimeError(f"tensor.{name} {supported}. Got 1-D tensor.")
    swapped = transpose(input, -2, -1)
    return swapped.conj() if swapped.is_complex() else swapped


@api.variants("adjoint")
def adjoint(input: Tensor) -> Tensor:
    """torch.adjoint: the (conjugate) transpose of the last two dims, a view."""
    if not isinstance(input, Tensor):
        raise invalid_call(adjoint, locals())
    return _matrices_transposed(input, "adjoint()", "adjoint()", 4390)


def matrix_adjoint(self: Tensor) -> Tensor:
    """``x.mH``: as torch.adjoint, with the property's own messages."""
    return _matrices_transposed(self, "Tensor.mH", "mH", 4382)


@api.function("swapaxes")
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """torch.swapaxes: transpose under NumPy's parameter names (``axis0=``, ``axis1=``)."""
    if not isinstance(input, Tensor):
        raise invalid_call(swapaxes, locals())
    return transpose(input, axis0, axis1)


@api.function("permute")
def permute(input: Tensor, dims: DimList) -> Tensor:
    """torch.permute: ``dims`` is one sequence (the method takes them spread too)."""
    if not isinstance(input, Tensor):
        raise invalid_call(permute, locals())
    if not isinstance(dims, (tuple, list)):
        raise ArgumentTypeError("dims: a sequence of ints")  # (worded by the function's caller)
    return permute_method(input, *dims)


@api.method("permute")
def permute_method(input: Tensor, *dims: Dims) -> Tensor:
    dims = tuple(_wrap_dim(d, input.dim()) for d in _shape_args(dims))
    if len(dims) != input.dim():
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {input.dim()} is not "
            f"equal to len(dims) = {len(dims)}"
        )
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(PERMUTE, input, dims=dims)


def _tensor_type(t: Tensor) -> str:
    """How torch's messages name a tensor's type: its legacy class (``torch.FloatTensor``), or for
    bfloat16 and bool, which have none there, ``CPUBFloat16Type``/``CPUBoolType``."""
    if t.dtype in (dtypes.bfloat16, dtypes.bool_):
        return f"{t.device.type.upper()}{dtypes.scalar_type(t.dtype)}Type"
    return f"torch.{'cuda.' if t.device.type == 'cuda' else ''}{t.dtype._legacy}"


@api.method("expand")
def expand(input: Tensor, *sizes: Any) -> Tensor:
    sizes = _shape_args(sizes)
    if len(sizes) < input.dim():
        raise RuntimeError(
            f"expand({_tensor_type(input)}{{[{', '.join(map(str, input.shape))}]}}, "
            f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided ({len(sizes)}) must "
            f"be greater or equal to the number of dimensions in the tensor ({input.dim()})"
        )
    if input.dim() == 0 and builtins.any(s < 0 for s in sizes):  # torch multiplies the sizes out first
        raise RuntimeError("numel: integer multiplication overflow")
    lead = len(sizes) - input.dim()
    target = list(sizes)
    for i in reversed(range(len(sizes))):  # torch's inferExpandGeometry checks from the last dim
        s = sizes[i]
        if i < lead:
            if s == -1:
                raise RuntimeError(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                    f"dimension {i}"
                )
            continue
        cur = input.shape[i - lead]
        if s == -1:
            target[i] = cur
        elif cur != 1 and cur != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                f"Tensor sizes: [{', '.join(map(str, input.shape))}]"
            )
    if builtins.any(s < 0 for s in target):  # a new leading dim of negative size
        raise RuntimeError("numel: integer multiplication overflow")
    out = apply(EXPAND, input, size=tuple(target))
    if input._efficient_zero:  # a view of torch's efficient zero tensor is one too
        out._efficient_zero = True
    return out


@api.method("expand_as", tensor="other")
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, tuple(other.shape))


@api.function("squeeze")
def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(squeeze, locals())
    if dim is None:
        return apply(SQUEEZE, input)
    if isinstance(dim, (tuple, list)):
        return apply(SQUEEZE_DIMS, input, dims=_dim_list(dim, input.dim()))
    return apply(SQUEEZE_DIM, input, dim=_wrap_dim(dim, input.dim()))


@api.function("unsqueeze")
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(unsqueeze, locals())
    return apply(UNSQUEEZE, input, dim=_wrap_dim(dim, input.dim() + 1))


@api.variants("flatten")
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(flatten, locals())
    if input.dim() == 0:
        _wrap_dim(start_dim, 0), _wrap_dim(end_dim, 0)
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, input.dim()), _wrap_dim(end_dim, input.dim())
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :])  # (no -1: empty)


@api.method("contiguous")
def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    fmt = _memory_format.check(memory_format, "contiguous") or _memory_format.contiguous_format
    if input.is_contiguous(memory_format=fmt):
        return input
    if fmt is _memory_format.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if fmt is _memory_format.contiguous_format:
        return apply(CLONE_CONTIGUOUS, input)
    return apply(CLONE, input, strides=_memory_format.strides(fmt, tuple(input.shape)))


@api.variants("select")
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """torch.select, with its errors (indexing's ``x[i]`` words them as ``select_item`` does)."""
    if not isinstance(input, Tensor):
        raise invalid_call(select, locals())
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    if not -input.shape[d] <= index < input.shape[d]:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}"
        )
    return select_item(input, d, index)


def select_item(input: Tensor, dim: int, index: int) -> Tensor:
    """The select of an integer index ``x[..., i]``, with indexing's error."""
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    return apply(SELECT, input, dim=d, index=index % size)


@api.variants("narrow")
def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(narrow, locals())
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start % size if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(input, d, start, start + length, 1)


NARROW_COPY = OpDef(  # slice's kernel and backward, into a new contiguous tensor
    "NarrowCopyBackward0",
    lambda xp, a, dim, start, end, step: SLICE.forward(xp, a, dim, start, end, step).copy(order="C"),
    derivatives={"self": SLICE.derivatives["self"]},
    jvp=auto_linear,
)


NARROW_COPY_OUT = Out(
    "same",
    "Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)",
    warn=False,
)


@api.variants("narrow_copy", out=NARROW_COPY_OUT)
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A copy of ``narrow``'s view, with narrow_copy_dense_cpu's checks (in its order and words)."""
    if isinstance(start, Tensor) and not start.dim() and not start.dtype.is_floating_point:
        start = int(start.item())
    if not isinstance(input, Tensor) or not all(type(v) is int for v in (dim, start, length)):
        raise invalid_call(narrow_copy, locals())
    if not input.dim():
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= input.dim():
        raise RuntimeError(
            "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  (Could this "
            "error message be improved?  If so, please report an enhancement request to PyTorch.)"
        )
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    start = start + size if start < 0 else start
    if not (length >= 0 and start <= size - length):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return apply(NARROW_COPY, input, dim=d, start=start, end=start + length, step=1)


def _slice(input: Tensor, dim: int, start: int | None, stop: int | None, step: int | None) -> Tensor:
    step = 1 if step is None else step
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = builtins.slice(start, stop, step).indices(input.shape[dim])
    stop = builtins.max(stop, start)
    return apply(SLICE, input, dim=dim, start=start, end=stop, step=step)


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given geometry (the offset by default ``input``'s),
    as torch's as_strided; its backward reads ``input``'s geometry (_as_strided_back)."""
    if not isinstance(input, Tensor):
        raise invalid_call(as_strided, locals())
    size, stride, offset = as_strided_geometry("as_strided", input, size, stride, storage_offset, 1)
    out = apply(
        AS_STRIDED,
        input,
        size=size,
        stride=stride,
        offset=offset,
        in_offset=input.storage_offset(),
        storage=input._storage_array(),
    )
    fn = out._grad_fn_
    if fn is not None:  # the storage is the forward's, not the node's to keep
        fn._attrs.pop("storage", None)
    return out


def as_strided_geometry(
    name: str, input: Tensor, size: Any, stride: Any, storage_offset: Any, position: int
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The arguments of ``as_strided``/``as_strided_`` (``name``) checked as torch checks them,
    in its order: their types (``position``: that of ``size`` in the call), the lengths, the
    strides, the offset, the sizes and the storage's bounds."""
    size = _int_tuple(name, "size", size, position)
    stride = _int_tuple(name, "stride", stride, position + 1)
    if storage_offset is not None and not _is_int(storage_offset):
        where = f"argument 'storage_offset' (position {position + 2})"
        raise TypeError(f"{name}(): {where} must be int, not {type_name(storage_offset)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        shown = ", ".join(map(str, stride))
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: [{shown}]"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        if name == "as_strided_":
            raise RuntimeError("numel: integer multiplication overflow")
        sizes, strides = ", ".join(map(str, size)), ", ".join(map(str, stride))
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes=[{sizes}] and strides=[{strides}]"
        )
    itemsize = input._data.itemsize
    needed = _layout.min_storage_size(size, stride, offset) * itemsize
    available = input._storage_array().size * itemsize
    if 0 not in size and needed > available:
        sizes, strides = ", ".join(map(str, size)), ", ".join(map(str, stride))
        raise RuntimeError(
            f"setStorage: sizes [{sizes}], strides [{strides}], storage offset {offset}, and itemsize "
            f"{itemsize} requiring a storage size of {needed} are out of bounds for storage of size "
            f"{available}"
        )
    return size, stride, offset


def _is_int(value: Any) -> bool:
    """Whether torch's parser takes ``value`` as an int (a bool it does not)."""
    return type(value) is not bool and hasattr(value, "__index__")


def _int_tuple(name: str, argument: str, value: Any, position: int) -> tuple[int, ...]:
    """A ``tuple of ints`` argument, refused as torch's parser refuses it."""
    where = f"{name}(): argument '{argument}' (position {position}) must be tuple of ints"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{where}, not {type_name(value)}")
    for i, item in enumerate(value):
        if not _is_int(item):
            raise TypeError(f"{where}, but found element of type {type_name(item)} at pos {i}")
    return tuple(int(item) for item in value)


@api.function("detach")
def detach(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_call(detach, locals())
    return input.detach()
