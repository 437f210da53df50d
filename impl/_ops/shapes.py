"""Shape ops: triangles (tril/triu), roll, diagonal, moving and broadcasting dims (movedim,
broadcast_to), flips of the first two dims (flipud/fliplr), ravel, unflatten, repeat and tile.

Those torch composes of other ops are composed here of the same ones, so their results are the
same views or copies with the same grad_fn names: movedim is a permute (PermuteBackward0),
broadcast_to an expand (ExpandBackward0), ravel ``contiguous().view(-1)``, unflatten a view,
flipud/fliplr a flip, tile a repeat.
"""

from __future__ import annotations

import builtins
import dataclasses
from typing import Any

from impl import _api as api
from impl import _layout, dtypes
from impl._creation import zeros
from impl._layout import new_like
from impl._ops import views as vw
from impl._ops.indexing import cat
from impl._ops.inplace import apply_inplace, check_inplace, unimplemented_out
from impl._ops.table import D, OpDef, apply, auto_linear
from impl._ops.views import _shape_args, contiguous, expand, view
from impl._signatures import ELEMENTWISE, EXACT, EXPECTED, Out, invalid_call
from impl._tensor import ArgumentTypeError, DimList, Dims, Tensor, _dim_list, _wrap_dim, as_int, as_ints
from impl._xp import namespace_of


def _ints(value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple (torch's IntArrayRef accepts a lone int)."""
    return as_ints(value)


def fresh(xp: Any, values: Any, shape: tuple) -> Any:
    """``values`` as a new C-ordered array of ``shape`` with torch's contiguous strides (numpy
    leaves the layout of its input to roll/tile, and strides of 0 to an empty reshape)."""
    if values.size:
        return xp.ascontiguousarray(values).reshape(shape)
    return _layout.strided_array(xp, shape, _layout.contiguous_strides(shape), values.dtype)


# -- tril / triu -------------------------------------------------------------------------------
TRIL = OpDef(
    "TrilBackward0",
    lambda xp, a, diagonal: xp.tril(a, diagonal),
    derivatives={"self": D("diagonal", lambda g, c: g.tril(c.diagonal))},
    jvp=auto_linear,
)
TRIU = OpDef(
    "TriuBackward0",
    lambda xp, a, diagonal: xp.triu(a, diagonal),
    derivatives={"self": D("diagonal", lambda g, c: g.triu(c.diagonal))},
    jvp=auto_linear,
)


def _triangle_args(name: str, input: Tensor, diagonal: int) -> dict:
    """tril/triu work on the last two dims: at least two are needed."""
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return {"diagonal": as_int(diagonal)}


@api.variants("tril", out=EXACT)
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below diagonal ``diagonal``) of the last two dims; zeros above."""
    if not isinstance(input, Tensor):
        raise invalid_call(tril, locals())
    return apply(TRIL, input, **_triangle_args("tril", input, diagonal))


@api.variants("triu", out=EXACT)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above diagonal ``diagonal``) of the last two dims; zeros below."""
    if not isinstance(input, Tensor):
        raise invalid_call(triu, locals())
    return apply(TRIU, input, **_triangle_args("triu", input, diagonal))


@api.method("tril_")
def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    check_inplace(self)  # torch refuses a leaf first
    return apply_inplace(TRIL, self, **_triangle_args("tril", self, diagonal))


@api.method("triu_")
def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    check_inplace(self)
    return apply_inplace(TRIU, self, **_triangle_args("triu", self, diagonal))


# -- roll --------------------------------------------------------------------------------------
def _roll_fwd(xp: Any, a: Any, shifts: tuple, dims: tuple) -> Any:
    if not a.size:  # torch clones an empty tensor without looking at the dims
        return fresh(xp, a, a.shape)
    return fresh(xp, xp.roll(a, shifts, axis=dims or None), a.shape)


ROLL = OpDef(
    "RollBackward0",
    _roll_fwd,
    derivatives={"self": D("shifts dims", lambda g, c: g.roll(tuple(-s for s in c.shifts), c.dims))},
    jvp=auto_linear,
)


@api.variants("roll")
def roll(input: Tensor, shifts: Dims, dims: Dims = None) -> Tensor:
    """Elements shifted circularly by ``shifts`` along ``dims`` (one shift per dim); without dims,
    along the flattened tensor (one shift)."""
    if not isinstance(input, Tensor):
        raise invalid_call(roll, locals())
    shifts = _ints(shifts)
    dims = () if dims is None else _ints(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != builtins.max(len(dims), 1):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if input.numel():  # torch clones an empty tensor without checking the dims
        dims = tuple(_wrap_dim(d, input.dim()) if input.dim() else _no_dims(d) for d in dims)
    return apply(ROLL, input, shifts=shifts, dims=dims)


def _no_dims(dim: int) -> int:
    raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


# -- diagonal ----------------------------------------------------------------------------------
def _diagonal_fwd(xp: Any, a: Any, offset: int, dim1: int, dim2: int) -> Any:
    """torch's diagonal as a view: ``dim1``/``dim2`` removed, the diagonal appended as the last dim
    (stride: the sum of theirs), starting ``offset`` along dim2 (or ``-offset`` along dim1); an
    empty diagonal keeps the input's storage offset, as torch's does."""
    shape, strides = a.shape, [s // a.itemsize for s in a.strides]
    if offset >= 0:
        length = builtins.max(builtins.min(shape[dim1], shape[dim2] - offset), 0)
        start_dim, start = dim2, offset
    else:
        length = builtins.max(builtins.min(shape[dim1] + offset, shape[dim2]), 0)
        start_dim, start = dim1, -offset
    if length:
        a = a[(slice(None),) * start_dim + (slice(start, None),)]
    keep = [d for d in range(len(shape)) if d not in (dim1, dim2)]
    out_shape = tuple(shape[d] for d in keep) + (length,)
    out_strides = tuple(strides[d] for d in keep) + (strides[dim1] + strides[dim2],)
    return _layout.as_strided_array(xp, a, out_shape, out_strides)


def _diagonal_backward_fwd(xp: Any, g: Any, shape: tuple, offset: int, dim1: int, dim2: int) -> Any:
    out = xp.zeros(shape, dtype=g.dtype)
    _diagonal_fwd(xp, out, offset, dim1, dim2)[...] = g
    return out


DIAGONAL_BACKWARD = OpDef(
    "DiagonalBackwardBackward0",
    _diagonal_backward_fwd,
    derivatives={"self": D("offset dim1 dim2", lambda g, c: g.diagonal(c.offset, c.dim1, c.dim2))},
    jvp=auto_linear,
)
# torch's diagonal_backward: the gradient put on the diagonal of zeros of the input's shape
_DIAGONAL_DERIVATIVES = {
    "self": D(
        "offset dim1 dim2",
        lambda g, c: apply(DIAGONAL_BACKWARD, g, shape=c.shape(), offset=c.offset, dim1=c.dim1, dim2=c.dim2),
    )
}
DIAGONAL = OpDef(
    "DiagonalBackward0", _diagonal_fwd, derivatives=_DIAGONAL_DERIVATIVES, view=True, jvp=auto_linear
)


def _diagonal_copy_fwd(xp: Any, a: Any, offset: int, dim1: int, dim2: int) -> Any:
    diagonal = _diagonal_fwd(xp, a, offset, dim1, dim2)
    return fresh(xp, diagonal.copy(), diagonal.shape)  # (numpy keeps a size-1 dim's stride)


# diagonal_copy (what diag of a 2-d tensor is): the diagonal as a new contiguous tensor
DIAGONAL_COPY = OpDef(
    "DiagonalBackward0_copy",
    _diagonal_copy_fwd,
    derivatives=_DIAGONAL_DERIVATIVES,
)


@api.variants("diagonal")
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` of the planes of ``dim1`` x ``dim2``, as a view whose last dim it is."""
    if not isinstance(input, Tensor):
        raise invalid_call(diagonal, locals())
    d1, d2 = _wrap_dim(dim1, input.dim()), _wrap_dim(dim2, input.dim())
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(DIAGONAL, input, offset=int(offset), dim1=d1, dim2=d2)


# -- diag / diag_embed ---------------------------------------------------------------------------
def _diag_embed_fwd(xp: Any, a: Any, offset: int, dim1: int, dim2: int) -> Any:
    """Zeros with the last dim of ``a`` written on diagonal ``offset`` of the planes of the new
    dims ``dim1`` x ``dim2`` (each of size ``|offset|`` + that dim's)."""
    n = a.shape[-1] + abs(offset) if a.ndim else 1
    shape = list(a.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, n)
    out = _layout.strided_array(xp, tuple(shape), _layout.contiguous_strides(tuple(shape)), a.dtype, fill=0)
    _diagonal_fwd(xp, out, offset, dim1, dim2)[...] = a
    return out


DIAG_EMBED = OpDef(
    "DiagEmbedBackward0",
    _diag_embed_fwd,
    derivatives={"self": D("offset dim1 dim2", lambda g, c: g.diagonal(c.offset, c.dim1, c.dim2))},
    jvp=auto_linear,
)


@api.variants("diag_embed")
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose planes ``dim1`` x ``dim2`` (two new dims) hold the input's last dim on their
    diagonal ``offset``, zeros elsewhere."""
    if not isinstance(input, Tensor):
        raise invalid_call(diag_embed, locals())
    d1, d2 = _wrap_dim(dim1, input.dim() + 1), _wrap_dim(dim2, input.dim() + 1)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(DIAG_EMBED, input, offset=int(offset), dim1=d1, dim2=d2)


def _diag_out(args: tuple, kwargs: dict) -> Out:
    """diag's out=: diag_embed's of a vector (a cast refused in diag's words), diagonal_copy's of a
    matrix."""
    vector = isinstance(args[0], Tensor) and args[0].dim() == 1
    return DIAG_EMBED_OUT if vector else DIAGONAL_OUT


DIAG_EMBED_OUT = Out(
    "same",
    EXPECTED,
    cast_message="diag: result type {result} can't be cast to the desired out= type {out}",
    aten="aten::diag_embed",
    resize_first=True,
    unimplemented=unimplemented_out("diag_embed"),
)
DIAGONAL_OUT = dataclasses.replace(
    EXACT, aten="aten::diagonal_copy", resize_first=True, unimplemented=unimplemented_out("diagonal_copy")
)


@api.variants("diag", out=Out(pick=_diag_out))
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """Of a 1-d tensor, the square matrix with it on diagonal ``diagonal`` (diag_embed); of a 2-d
    one, a copy of its diagonal ``diagonal`` (diagonal_copy)."""
    if not isinstance(input, Tensor):
        raise invalid_call(diag, locals())
    if input.dim() == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.dim() != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return apply(DIAGONAL_COPY, input, offset=int(diagonal), dim1=0, dim2=1)


# -- rot90 -------------------------------------------------------------------------------------
def _rot90_fwd(xp: Any, a: Any, k: int, dims: tuple) -> Any:
    """torch's rot90: k = 1 flips dims[1] then transposes the two dims (a non-contiguous result),
    k = 2 flips both, k = 3 flips dims[0] then transposes, k = 0 a contiguous clone; a flip lays
    its copy out like the input."""

    if k == 0:
        return xp.ascontiguousarray(a).copy()
    if k == 2:
        return _flip_fwd(xp, a, dims)
    return xp.swapaxes(_flip_fwd(xp, a, (dims[k == 1],)), *dims)


ROT90 = OpDef(
    "Rot90Backward0",
    _rot90_fwd,
    derivatives={"self": D("k dims", lambda g, c: g.rot90(-c.k, c.dims))},
    jvp=auto_linear,
)


@api.variants("rot90")
def rot90(input: Tensor, k: int = 1, dims: Dims = (0, 1)) -> Tensor:
    """The input rotated by ``k`` quarter turns in the plane of ``dims``, from the first dim
    towards the second."""
    if not isinstance(input, Tensor):
        raise invalid_call(rot90, locals())
    if not isinstance(k, int):
        raise TypeError(f"rot90(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    dims, n = _ints(dims), input.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    wrapped = (_wrap_dim(dims[0], n), _wrap_dim(dims[1], n))
    if wrapped[0] == wrapped[1]:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    return apply(ROT90, input, k=k % 4, dims=wrapped)


# -- moving, broadcasting, flipping and flattening dims -----------------------------------------
@api.variants("movedim", "moveaxis")
def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """A view with dims ``source`` moved to positions ``destination``, the others keeping their
    order: torch's permute (PermuteBackward0)."""
    if not isinstance(input, Tensor):
        raise invalid_call(movedim, locals())
    source, destination = _ints(source), _ints(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should contain the "
            f"same number of dims as destination ({list(destination)} dims)"
        )
    n = input.dim()
    src = [_wrap_dim(d, n) for d in source]
    dst = [_wrap_dim(d, n) for d in destination]
    for name, given, wrapped in (("source", source, src), ("destination", destination, dst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if not n:  # a 0-d tensor (dims 0 and -1 only): torch's alias of it
        return apply(vw.ALIAS, input)
    order = [-1] * n
    for s, d in zip(src, dst, strict=True):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [next(rest) if o == -1 else o for o in order]
    return apply(vw.PERMUTE, input, dims=tuple(order))


@api.variants("broadcast_to")
def broadcast_to(input: Tensor, size: Dims) -> Tensor:
    """``input.expand(size)``: a view (ExpandBackward0), with expand's errors."""
    if not isinstance(input, Tensor):
        raise invalid_call(broadcast_to, locals())
    return expand(input, _ints(size))


@api.variants("flipud")
def flipud(input: Tensor) -> Tensor:
    """A copy with the first dim reversed (FlipBackward0)."""
    if not isinstance(input, Tensor):
        raise invalid_call(flipud, locals())
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


@api.variants("fliplr")
def fliplr(input: Tensor) -> Tensor:
    """A copy with the second dim reversed (FlipBackward0)."""
    if not isinstance(input, Tensor):
        raise invalid_call(fliplr, locals())
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


@api.variants("ravel")
def ravel(input: Tensor) -> Tensor:
    """``input.contiguous().view(-1)``: a view of a contiguous input, else a view of a copy."""
    if not isinstance(input, Tensor):
        raise invalid_call(ravel, locals())
    return view(contiguous(input), -1)


@api.variants("unflatten")
def unflatten(input: Tensor, dim: int, sizes: Dims) -> Tensor:
    """A view with dim ``dim`` split into ``sizes`` (one of them may be -1)."""
    if not isinstance(input, Tensor):
        raise invalid_call(unflatten, locals())
    sizes = _ints(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = _wrap_dim(dim, input.dim())  # torch wraps the dim before its try: an IndexError as is
    try:  # torch words the errors of reading the size and inferring as its own
        if not input.dim():  # a 0-d tensor has no size at the wrapped dim 0
            _no_dims(d)
        size = input.shape[d]
        inferred = _layout.infer_size(sizes, size)
    except (IndexError, RuntimeError) as e:
        if "is invalid for input of size" in str(e):
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} ({size}) "
                "in the input tensor"
            ) from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
    shape = tuple(input.shape)
    return view(input, shape[:d] + inferred + shape[d + 1 :])


# -- repeat / tile -----------------------------------------------------------------------------
def _repeat_fwd(xp: Any, a: Any, repeats: tuple) -> Any:
    lead = len(repeats) - a.ndim
    # a negative repeat passes torch's check on a dim of size 0 (its size stays 0)
    reps = tuple(builtins.max(r, 0) for r in repeats)
    shape = tuple(n * r for n, r in zip((1,) * lead + a.shape, reps, strict=True))
    return fresh(xp, xp.tile(a.reshape((1,) * lead + a.shape), reps), shape)


def repeat_backward(g: Tensor, repeats: tuple, shape: tuple) -> Tensor:
    """torch's repeat_backward: zeros if a repeat is 0; else the leading (new) dims summed away,
    then one reshape splitting each repeated dim into (repeat, size) and one sum over the
    repeats (each with impl ops, so a create_graph gradient records torch's nodes)."""

    if 0 in repeats:
        return zeros(shape, dtype=g.dtype, device=g.device)
    for _ in range(g.dim() - len(shape)):
        g = g.sum(0, False)
    grad_size: list[int] = []
    sum_dims: list[int] = []
    for repeat, size in zip(repeats[len(repeats) - len(shape) :], shape, strict=True):
        if repeat != 1:
            grad_size.append(repeat)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(size)
    if sum_dims:
        g = g.reshape(grad_size).sum(sum_dims)
    return g


REPEAT = OpDef(
    "RepeatBackward0",
    _repeat_fwd,
    derivatives={"self": D("repeats", lambda g, c: repeat_backward(g, c.repeats, c.shape()))},
    jvp=auto_linear,
)


@api.method("repeat")
def repeat(input: Tensor, *repeats: Dims) -> Tensor:
    """``x.repeat(*repeats)``: a copy tiled ``repeats[i]`` times along dim i (new leading dims for
    repeats beyond the input's dims)."""
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    repeats = _ints(_shape_args(repeats))
    if len(repeats) < input.dim():
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    lead = len(repeats) - input.dim()
    shape = (1,) * lead + tuple(input.shape)
    out = [n * r for n, r in zip(shape, repeats, strict=True)]
    if builtins.any(s < 0 for s in out):
        bad = next(s for s in out if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {out}")
    return apply(REPEAT, input, repeats=repeats)


@api.function("tile")
def tile(input: Tensor, dims: DimList) -> Tensor:
    """``repeat`` with ``dims`` padded with leading ones to the input's number of dims."""
    if not isinstance(input, Tensor):
        raise invalid_call(tile, locals())
    if not isinstance(dims, (tuple, list)):
        raise ArgumentTypeError("dims: a sequence of ints")  # (worded by the function's caller)
    dims = _ints(dims)
    return repeat(input, (1,) * (input.dim() - len(dims)) + dims)


@api.method("tile")
def _tile_method(input: Tensor, *dims: Dims) -> Tensor:
    return tile(input, _ints(_shape_args(dims)))


@api.function("flip")
def flip(input: Tensor, dims: DimList) -> Tensor:
    """A copy with the order of the elements reversed along ``dims``."""
    if not isinstance(input, Tensor):
        raise invalid_call(flip, locals())
    if not isinstance(dims, (tuple, list)):
        raise ArgumentTypeError("dims: a sequence of ints")  # (worded by the function's caller)
    wrapped = _dim_list(dims, input.dim())
    return apply(FLIP, input, dims=wrapped if input.dim() else ())


def _flip_fwd(xp: Any, a: Any, dims: tuple) -> Any:
    """The flipped copy, laid out like the input (torch allocates it with empty_like)."""
    out = new_like(xp, a)
    out[...] = xp.flip(a, axis=dims) if dims else a
    return out


FLIP = OpDef(
    "FlipBackward0",
    _flip_fwd,
    derivatives={"self": D("dims", lambda g, c: g.flip(list(c.dims)))},
    jvp=auto_linear,
)


@api.method("flip")
def flip_method(input: Tensor, *dims: Dims, **kwargs: Any) -> Tensor:
    """``x.flip(0)``, ``x.flip(1, 0)``, ``x.flip([0])`` or ``x.flip(dims=[0])``."""
    if kwargs and not dims:
        return flip(input, **kwargs)
    return flip(input, list(_shape_args(dims)), **kwargs)


def _at_least(rank: int, name: str, tensors: tuple) -> Any:
    """atleast_1d/2d/3d: one tensor, or each of several (given apart or as one sequence, a tuple
    back): reshaped from 0-d (ViewBackward0), unsqueezed from fewer dims as torch's composite does
    (a 1-d tensor becomes (1, n, 1) in 3d), else itself."""
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        raise invalid_call(_given, {"tensors": tensors}, name=name)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    results = tuple(_raised(t, rank) for t in tensors)
    return results[0] if single else results


def _given(*tensors: Any) -> None:
    """The parameters atleast_*'s parse reports (torch's overloads are in OVERLOADS)."""


def _raised(t: Tensor, rank: int) -> Tensor:
    if t.dim() == 0:
        return t.reshape((1,) * rank)
    if t.dim() == 1 and rank == 2:
        return t.unsqueeze(0)
    if t.dim() == 1 and rank == 3:
        return t.unsqueeze(0).unsqueeze(-1)
    if t.dim() == 2 and rank == 3:
        return t.unsqueeze(-1)
    return t


@api.function("atleast_1d")
def atleast_1d(*tensors: Any) -> Any:
    return _at_least(1, "atleast_1d", tensors)


@api.function("atleast_2d")
def atleast_2d(*tensors: Any) -> Any:
    return _at_least(2, "atleast_2d", tensors)


@api.function("atleast_3d")
def atleast_3d(*tensors: Any) -> Any:
    return _at_least(3, "atleast_3d", tensors)


@api.variants("diff", out=ELEMENTWISE.named("sub"))
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Tensor:
    """The n-th forward difference along ``dim`` (prepend/append joined first), composed as torch's:
    ``narrow(1, ...) - narrow(0, ...)`` n times (SubBackward0 over SliceBackward0s; logical_xor for
    bool), stopping once the dim is empty; n=0 a copy of the input alone (CopyBackwards)."""
    if not isinstance(input, Tensor):
        raise invalid_call(diff, locals())
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    joined = [t for t in (prepend, input, append) if t is not None]
    for t in joined:
        if t is not input:
            _joinable(input, t, dim)
    if n == 0:
        return input.new_empty(tuple(input.shape)).copy_(input)
    out = input if len(joined) == 1 else cat(joined, dim)
    for _ in range(n):
        size = out.shape[_wrap_dim(dim, out.dim())]
        if size == 0:
            break
        later, earlier = out.narrow(dim, 1, size - 1), out.narrow(dim, 0, size - 1)
        out = later.logical_xor(earlier) if out.dtype is dtypes.bool_ else later - earlier
    return out


def _joinable(input: Tensor, other: Tensor, dim: int) -> None:
    """torch's check of diff's prepend or append: the input's rank, its sizes off ``dim``."""
    wrapped = _wrap_dim(dim, input.dim())
    if other.dim() != input.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.dim()):
        if i != wrapped and other.shape[i] != input.shape[i]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input except along "
                f"the differencing dimension; input.size({i}) = {input.shape[i]}, but got tensor.size({i}) = "
                f"{other.shape[i]}"
            )


@api.variants("repeat_interleave")
def repeat_interleave(
    input: Tensor, repeats: Any = None, dim: int = None, *, output_size: int = None
) -> Tensor:
    """Each element (slice along ``dim``; of the flattened input without one) repeated, as torch
    composes it: an int count by unsqueeze, expand, clone and flatten; a tensor of counts by
    index_select of ``repeat_interleave(repeats)``, the indices each position repeated by its count."""
    if repeats is None:
        return _repeated_indices(input, output_size)
    if not isinstance(input, Tensor) or isinstance(repeats, bool):
        raise invalid_call(repeat_interleave, locals())
    flat = input.flatten() if dim is None else input
    if isinstance(repeats, Tensor) and flat.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(0 if dim is None else int(dim), input.dim())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        unsqueezed = flat.unsqueeze(d + 1)  # (a 0-d input with a dim: torch's range error here)
        total = flat.shape[d] * repeats
        if output_size is not None and output_size != total:
            raise RuntimeError(
                f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}"
            )
        sizes = list(unsqueezed.shape)
        sizes[d + 1] = repeats
        return unsqueezed.expand(sizes).clone().flatten(d, d + 1)
    if not isinstance(repeats, Tensor):
        raise invalid_call(repeat_interleave, locals())
    if repeats.dim() == 0 or (repeats.dim() == 1 and repeats.shape[0] == 1):
        repeats = repeats.reshape(1).expand(flat.shape[d])
    elif repeats.dim() == 1:
        if repeats.shape[0] != flat.shape[d]:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{repeats.shape[0]} and input.size({d}) = {flat.shape[d]}"
            )
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    return flat.index_select(d, _repeated_indices(repeats, output_size))


def _repeated_indices(repeats: Tensor, output_size: Any) -> Tensor:
    """``torch.repeat_interleave(repeats)``: 0, 1, ... each repeated by its count (int32 or int64)."""
    if repeats.dtype not in (dtypes.int32, dtypes.int64):
        raise dtypes.kernel_missing("repeat_interleave_cpu", repeats.dtype)
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    counts = repeats._data
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and counts.size and output_size != int(counts.sum()):
        raise RuntimeError("allocated size does not match required size")
    xp = namespace_of(counts)
    return Tensor._from_array(xp.repeat(xp.arange(counts.size, dtype=counts.dtype), counts))
