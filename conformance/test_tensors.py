"""Tensor semantics (oracle/rules/tensors.py): dtype inference and promotion, views and their
layout, shared writes and version counters, the layout of elementwise results, memory shared
with numpy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.conftest import examples
from conformance.test_ops import ALL_DTYPES, SMALL_INTS, OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.program import (
    MEMORY_FORMATS,
    PICKLINGS,
    Backward,
    Detach,
    DType,
    MemoryFormat,
    NumpyAdd,
    NumpyArray,
    Observe,
    ObserveArray,
    ObserveGraph,
    ObserveLayout,
    ObservePlain,
    Op,
    Pickled,
    Program,
    Ref,
)
from oracle.strategies import broadcast_partner, op_data

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

PY_VALUES = (0, 1, -2, 2.5, -0.5, 0.1, True, False)  # 0.1: not exact in float32
# torch.tensor's data: 300 is too big for int8 and uint8, -0.5 does not fit uint8 (-2 wraps)
DATA_VALUES = (*PY_VALUES, 300)


LEGACY_TYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64",
    "IntTensor": "int32",
    "ShortTensor": "int16",
    "CharTensor": "int8",
    "ByteTensor": "uint8",
    "BoolTensor": "bool",
}


@st.composite
def inferred(draw: Any) -> Program:
    """torch.tensor of Python data (scalars, lists of mixed ints/floats/bools), with or without
    a dtype; or a legacy typed constructor of such data; or new_tensor, new_zeros, new_ones or
    new_full on a tensor of some dtype (a dtype or requires_grad given now and then)."""
    p = OpProgram(draw)
    if draw(st.booleans()):
        data: Any = draw(st.sampled_from(DATA_VALUES))
    else:
        data = draw(st.lists(st.sampled_from(DATA_VALUES), min_size=1, max_size=3))
    given = draw(st.integers(0, 5))  # a third of the time a dtype, half of those a small integer one
    dtype = draw(st.sampled_from(ALL_DTYPES if given == 4 else SMALL_INTS)) if given >= 4 else None
    kwargs: dict[str, Any] = {"dtype": DType(dtype)} if dtype else {}
    maker = draw(st.sampled_from(("tensor", "tensor", "legacy", "new")))
    if draw(st.integers(0, 3)) == 3:  # every value in a small integer dtype: 300 and -0.5 refused
        t = p.op("tensor", list(DATA_VALUES), dtype=DType(draw(st.sampled_from(SMALL_INTS))))
    elif maker == "tensor":
        t = p.op("tensor", data, **kwargs)
    elif maker == "legacy":  # a float or a bool (no sequence) is refused, an int is a size: a list
        single_int = isinstance(data, int) and not isinstance(data, bool)
        t = p.op(draw(st.sampled_from(sorted(LEGACY_TYPES))), [data] if single_int else data)
    else:
        like = p.leaf((2,), draw(st.sampled_from(ALL_DTYPES)), grad=False)
        method = draw(st.sampled_from(("new_tensor", "new_zeros", "new_ones", "new_full")))
        if draw(st.integers(0, 3)) == 0:
            kwargs["requires_grad"] = True  # refused for an integer or bool dtype
        if method == "new_tensor":
            t = p.op(method, Ref(like), data, **kwargs)
        else:
            size = draw(st.sampled_from(([2], [1, 2], [])))
            fill = [draw(st.sampled_from(DATA_VALUES))] if method == "new_full" else []
            t = p.op(method, Ref(like), size, *fill, **kwargs)
    p.steps += [Observe(t), ObserveLayout(t)]
    return Program(p.steps)


@pytest.mark.rule("TEN-001")
@settings(deadline=None)
@given(program=inferred())
def test_dtype_inference(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# the types of Python numbers of each category, in promotion order (bool < integer < floating),
# and the dtypes of each category, in promotion order (float16 with bfloat16 gives float32, uint8
# with int8 int16)
CATEGORIES = {
    bool: ("bool",),
    int: ("uint8", "int8", "int16", "int32", "int64"),
    float: ("float16", "bfloat16", "float32", "float64"),
}
PROMOTED_DTYPES = tuple(d for dtypes in CATEGORIES.values() for d in dtypes)


@st.composite
def promoted(draw: Any) -> Program:
    """A binary op between a tensor (dimensioned or 0-d) and a tensor or a Python number. Their
    dtypes are any, or the second is a 0-d tensor or a number of a higher category than the
    first's (which decides the result) or of its category and a later dtype (which counts only
    when both are 0-d tensors), or they are uint8 and int8 (int16 when both count)."""
    p = OpProgram(draw)
    op = draw(st.sampled_from(("add", "mul", "div", "__rmul__", "maximum", "where")))
    relation = draw(st.sampled_from(("any", "any", "same category", "higher category", "uint8 with int8")))
    if relation == "any":
        a_dtype = draw(st.sampled_from(PROMOTED_DTYPES))
        b_kinds, b_dtypes, b_shapes = tuple(CATEGORIES), PROMOTED_DTYPES, ((2,), ())
    elif relation == "same category":
        kind = draw(st.sampled_from((int, float)))
        a_dtype = draw(st.sampled_from(CATEGORIES[kind][:-1]))
        b_kinds, b_dtypes, b_shapes = (kind,), CATEGORIES[kind][CATEGORIES[kind].index(a_dtype) + 1 :], ((),)
    elif relation == "uint8 with int8":  # int16 unless the second is 0-d (or a number)
        a_dtype = draw(st.sampled_from(("uint8", "int8")))
        b_kinds, b_dtypes, b_shapes = (int,), ({"uint8": "int8", "int8": "uint8"}[a_dtype],), ((2,), ())
    else:
        a_kind, b_kind = draw(st.sampled_from(((bool, int), (bool, float), (int, float))))
        a_dtype = draw(st.sampled_from(CATEGORIES[a_kind]))
        b_kinds, b_dtypes, b_shapes = (b_kind,), CATEGORIES[b_kind], ((),)
    a = p.leaf(draw(st.sampled_from(((2,), ()))), a_dtype, grad=False)
    b: Any
    if op != "maximum" and draw(st.booleans()):
        b = draw(st.sampled_from([v for v in PY_VALUES if type(v) in b_kinds]))
    else:
        b = Ref(p.leaf(draw(st.sampled_from(b_shapes)), draw(st.sampled_from(b_dtypes)), grad=False))
    if op == "where":
        t = p.op("where", Ref(p.leaf((2,), "bool", grad=False)), Ref(a), b)
    elif op == "__rmul__" and isinstance(b, Ref):
        t = p.op("mul", b, Ref(a))
    else:
        t = p.op(op, Ref(a), b)
    p.steps.append(Observe(t))
    return Program(p.steps)


@pytest.mark.rule("TEN-002")
@examples(2)
@given(program=promoted())
def test_dtype_promotion(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


def view_step(draw: Any, shape: tuple[int, ...]) -> tuple[str, list, tuple[int, ...]]:
    """A view op applicable to ``shape``: (op, arguments after the tensor, result shape)."""
    rank = len(shape)
    kinds = ["view", "reshape", "unsqueeze", "flatten", "contiguous"]
    if rank >= 1:
        kinds += ["transpose", "permute", "squeeze", "narrow", "select", "__getitem__", "expand"]
    if rank == 2:
        kinds.append("t")
    op = draw(st.sampled_from(kinds))
    n = 1
    for s in shape:
        n *= s
    if op in ("view", "reshape"):
        new = draw(st.sampled_from(((n,), (-1,), (1, n), (n, 1))))
        return op, list(new), (n,) if new == (-1,) else new
    if op == "unsqueeze":
        d = draw(st.integers(0, rank))
        return op, [d], shape[:d] + (1,) + shape[d:]
    if op == "flatten":
        return op, [], (n,)
    if op == "contiguous":
        return op, [], shape
    if op == "t":
        return op, [], shape[::-1]
    if op in ("transpose", "permute"):
        perm = draw(st.permutations(range(rank)))
        if op == "permute":
            return op, list(perm), tuple(shape[i] for i in perm)
        i, j = perm[0], perm[-1]
        out = list(shape)
        out[i], out[j] = out[j], out[i]
        return op, [i, j], tuple(out)
    if op == "squeeze":
        return op, [], tuple(s for s in shape if s != 1)
    if op == "expand":
        new = (2, *shape) if shape[0] != 1 else (3, *shape[1:])  # a new dim, or a size-1 dim grown
        return op, list(new), new
    d = draw(st.integers(0, rank - 1))
    if op == "narrow":
        start = draw(st.integers(0, shape[d] - 1))
        length = draw(st.integers(1, shape[d] - start))
        return op, [d, start, length], shape[:d] + (length,) + shape[d + 1 :]
    i = draw(st.integers(0, shape[d] - 1))
    if op == "select":
        return op, [d, i], shape[:d] + shape[d + 1 :]
    return op, [i], shape[1:]


@st.composite
def views(draw: Any) -> Program:
    """A chain of views of a tensor, each's layout observed, then an in-place write through the
    last one (or a view() that torch may refuse), then base and views observed."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((3,), (2, 3), (1, 3), (2, 1, 2))))
    base = p.leaf(shape, "float32", grad=False)
    current = base
    for _ in range(draw(st.integers(1, 3))):
        op, args, shape = view_step(draw, shape)
        current = p.op(op, Ref(current), *args)
        p.steps.append(ObserveLayout(current))
    if draw(st.booleans()):
        p.op(draw(st.sampled_from(("add_", "mul_", "fill_"))), Ref(current), 2.0)
    else:
        p.op("view", Ref(current), -1)
    p.steps += [ObserveLayout(n) for n in p.names] + [Observe(n) for n in p.names]
    return Program(p.steps)


@pytest.mark.rule("TEN-003")
@settings(deadline=None)
@given(program=views())
def test_views_share_storage_and_version(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def numpy_sharing(draw: Any) -> Program:
    """A numpy array made into a tensor by from_numpy (shared) or torch.tensor (copied), then
    written on either side; or a tensor's numpy() (refused when it requires grad)."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((2,), (2, 2))))
    if draw(st.booleans()):
        dtype = draw(st.sampled_from(("float64", "float32", "int64", "int32")))
        p.steps.append(NumpyArray("a", op_data(draw, shape, dtype), dtype))
        t = p.op(draw(st.sampled_from(("from_numpy", "from_numpy", "tensor"))), Ref("a"))
        array = "a"
    else:
        t = p.leaf(shape, draw(st.sampled_from(("float32", "float64"))))  # numpy() raises if it requires grad
        array = p.op("numpy", Ref(t))
        p.names.remove(array)
    if draw(st.booleans()):
        p.steps.append(NumpyAdd(array, draw(st.sampled_from((1.0, 2)))))
    else:
        p.op("add_", Ref(t), 1)
    p.steps += [ObserveArray(array), Observe(t), ObserveLayout(t)]
    return Program(p.steps)


@pytest.mark.rule("TEN-004")
@settings(deadline=None)
@given(program=numpy_sharing())
def test_numpy_shares_memory(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@st.composite
def pickled_copies(draw: Any) -> Program:
    """A tensor (a leaf, requiring grad or not, an op's result or a view of the leaf) pickled (at
    the default protocol or 0) or copied by copy.copy, the result observed, the tensor's memory
    then written through a detached alias and the result observed again (only copy.copy shares)."""
    p = OpProgram(draw)
    x = p.leaf((2, 3), draw(st.sampled_from(("float64", "float32", "int64"))))
    source = draw(st.sampled_from(("leaf", "op", "t", "narrow")))
    if source == "op":
        x = p.op("mul", Ref(x), 2)
    elif source == "t":
        x = p.op("t", Ref(x))
    elif source == "narrow":
        x = p.op("narrow", Ref(x), 1, 1, 2)
    out = p.fresh("c")
    p.steps += [Pickled(out, x, draw(st.sampled_from(PICKLINGS))), Observe(out), ObserveLayout(out)]
    alias = p.fresh("d")
    p.steps += [Detach(alias, x), Op(p.fresh("w"), "add_", [Ref(alias), 1]), Observe(out)]
    return Program(p.steps)


@pytest.mark.rule("TEN-004")
@examples(0.2)
@given(program=pickled_copies())
def test_pickle_copies_copy_shares(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# shapes of elementwise results: size-1 dims (any stride), 4-d (channels last), empty ones
LAYOUT_SHAPES = ((2, 3), (3, 1), (1, 3), (2, 1, 3), (3, 2, 2), (2, 3, 2, 2), (0, 3), (3, 0), (2, 0, 1))


def made_leaf(p: OpProgram, shape: tuple[int, ...], dtype: str) -> str:
    """A leaf of ``shape``; nested lists cannot hold a dimension after an empty one, so such a
    shape is an empty leaf reshaped."""
    if 0 not in shape or shape.index(0) == len(shape) - 1:
        return p.leaf(shape, dtype, grad=False)
    return p.op("reshape", Ref(p.leaf((0,), dtype, grad=False)), *shape)


LAYOUTS = ("fresh", "expanded", "permuted", "narrowed", "permuted narrowed")
BINARY_OPS = ("add", "mul", "maximum", "sub")


def laid_out(draw: Any, p: OpProgram, shape: tuple[int, ...], dtype: str, kinds: tuple = LAYOUTS) -> str:
    """A tensor of ``shape`` with a drawn layout: fresh, expanded (a size-1 or a new leading
    dimension), or cut out of a larger tensor that is permuted (dense in another order) and/or
    narrowed (neither dense nor contiguous; a size-1 dimension keeps its base's stride); one of
    ``kinds``."""
    rank = len(shape)
    kind = draw(st.sampled_from(kinds))
    if rank == 0 or kind == "fresh":
        return made_leaf(p, shape, dtype)
    if kind == "expanded":
        if draw(st.booleans()) or all(n == 1 for n in shape):
            small = shape[1:]
        else:
            d = draw(st.sampled_from([d for d, n in enumerate(shape) if n != 1]))
            small = shape[:d] + (1,) + shape[d + 1 :]
        return p.op("expand", Ref(made_leaf(p, small, dtype)), *shape)
    grown = list(shape)
    d = draw(st.integers(0, rank - 1))
    extra = draw(st.integers(1, 2)) if "narrowed" in kind else 0
    grown[d] += extra
    perm = draw(st.permutations(range(rank))) if "permuted" in kind else list(range(rank))
    t = made_leaf(p, tuple(grown[i] for i in perm), dtype)
    if perm != list(range(rank)):
        t = p.op("permute", Ref(t), [perm.index(i) for i in range(rank)])
    if extra:  # an empty view's storage offset is another matter (impl reports 0): start at 0
        start = 0 if 0 in shape else draw(st.integers(0, extra))
        t = p.op("narrow", Ref(t), d, start, shape[d])
    return t


@st.composite
def elementwise_layouts(draw: Any) -> Program:
    """An elementwise op on operands of drawn layouts: unary, with a Python number, binary
    (broadcasting, float32 with float64), where (its condition laid out too), in place, or an
    expanded float32 tensor with a float64 one in another order (the cast copy's layout counts);
    the result's layout and values observed."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(LAYOUT_SHAPES))
    kind = draw(st.sampled_from(("unary", "number", "binary", "where", "in place", "cast")))
    a = laid_out(draw, p, shape, "float32", ("expanded",) if kind == "cast" else LAYOUTS)
    if kind == "unary":
        out = p.op(draw(st.sampled_from(("sin", "neg", "abs", "sigmoid", "relu", "sgn"))), Ref(a))
    elif kind == "number":
        op = draw(st.sampled_from(("__add__", "__mul__", "__rsub__", "__truediv__", "__pow__", "__rpow__")))
        out = p.op(op, Ref(a), draw(st.sampled_from((2, 0.5))))
    elif kind == "cast":  # a's cast copy (contiguous), not its own strides, orders b's dimensions
        b = laid_out(draw, p, shape, "float64", ("permuted", "permuted narrowed"))
        out = p.op(draw(st.sampled_from(BINARY_OPS)), Ref(a), Ref(b))
    else:
        b_shape = broadcast_partner(draw, shape)
        b = laid_out(draw, p, b_shape, draw(st.sampled_from(("float32", "float64"))))
        if kind == "where":
            cond = laid_out(draw, p, broadcast_partner(draw, shape), "bool")
            first, second = (a, b) if draw(st.booleans()) else (b, a)
            out = p.op("where", Ref(cond), Ref(first), Ref(second))
        elif kind == "in place":
            out = p.op(draw(st.sampled_from(("add_", "mul_"))), Ref(a), Ref(b))
        else:
            first, second = (a, b) if draw(st.booleans()) else (b, a)
            out = p.op(draw(st.sampled_from(BINARY_OPS)), Ref(first), Ref(second))
    p.steps += [ObserveLayout(out), Observe(out)]
    return Program(p.steps)


@pytest.mark.rule("TEN-005")
@examples(2)
@given(program=elementwise_layouts())
def test_elementwise_result_layouts(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


IN_PLACE_VIEWS = ("t_", "transpose_", "swapdims_", "swapaxes_", "squeeze_", "unsqueeze_", "as_strided_")


def in_place_view_step(draw: Any, shape: tuple[int, ...]) -> tuple[str, list, tuple[int, ...]]:
    """An in-place view method with arguments for a tensor of ``shape`` (now and then a dim out of
    range or t_ of a 3-d tensor, which torch refuses), and the shape it leaves."""
    rank = len(shape)
    op = draw(st.sampled_from(IN_PLACE_VIEWS))
    refused = draw(st.integers(0, 7)) == 0
    if op == "t_":
        return op, [], shape[::-1] if rank <= 2 else shape
    k = max(rank, 1)
    if op in ("transpose_", "swapdims_", "swapaxes_"):
        i, j = draw(st.integers(-k, k - 1)), draw(st.integers(-k, k if refused else k - 1))
        out = list(shape)
        if rank and j < k:
            out[i % rank], out[j % rank] = out[j % rank], out[i % rank]
        return op, [i, j], tuple(out)
    if op == "unsqueeze_":
        d = draw(st.integers(-rank - 1, rank + 1 if refused else rank))
        if d > rank:
            return op, [d], shape
        d %= rank + 1
        return op, [d], shape[:d] + (1,) + shape[d:]
    if op == "squeeze_":
        form = draw(st.sampled_from(("all", "dim", "dims")))
        if form == "all" or rank == 0:
            return op, [], tuple(s for s in shape if s != 1)
        dims = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank)))
        if form == "dim":
            dims = dims[:1]
        kept = tuple(s for d, s in enumerate(shape) if not (d in dims and s == 1))
        if form == "dim":
            return op, [dims[0] - rank if draw(st.booleans()) else dims[0]], kept
        return op, [dims + dims[:1] if refused else dims], shape if refused else kept
    # as_strided_: the tensor's number of elements from its own storage offset (inside its storage),
    # in one dim or two, column-major
    n = 1
    for s in shape:
        n *= s
    rows = draw(st.sampled_from([a for a in range(1, n + 1) if n % a == 0]))
    size, stride = ([n], [1]) if draw(st.booleans()) else ([rows, n // rows], [1, rows])
    return op, [size, stride], tuple(size)


@st.composite
def in_place_views(draw: Any) -> Program:
    """One to three in-place view methods on a leaf (refused when it requires grad), a non-leaf,
    a view of one or of a leaf, each's layout and graph observed; now and then an in-place write
    to the tensor or its base; then backward from its weighted sum, and every tensor observed."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(((2, 3), (1, 3), (2, 1, 2), (3,), (3, 1))))
    kind = draw(st.sampled_from(("leaf", "plain", "non-leaf", "non-leaf", "view", "view", "view of leaf")))
    leaf = p.leaf(shape, "float32", grad=kind != "plain")
    base = leaf if kind in ("leaf", "plain", "view of leaf") else p.op("mul", Ref(leaf), 2.0)
    target = base
    if kind.startswith("view"):
        op, args, viewed = view_step(draw, shape)
        while op not in ("transpose", "narrow", "select", "unsqueeze", "t", "squeeze"):
            op, args, viewed = view_step(draw, shape)  # a view that keeps or drops parts of its base
        target, shape = p.op(op, Ref(base), *args), viewed
    leaf_refuses = kind in ("leaf", "view of leaf")
    for _ in range(draw(st.integers(1, 3))):
        op, args, new_shape = in_place_view_step(draw, shape)
        p.op(op, Ref(target), *args)
        p.names.pop()  # the result is the target itself
        shape = shape if leaf_refuses else new_shape
        p.steps.append(ObserveLayout(target))
    if draw(st.integers(0, 2)) == 0:
        p.op("mul_", Ref(draw(st.sampled_from((target, base)))), 3.0)
        p.names.pop()
    p.steps.append(ObserveGraph(target))
    weights = p.leaf(shape, "float32", grad=False)
    loss = p.op("sum", Ref(p.op("mul", Ref(target), Ref(weights))))
    p.steps += [Backward(loss), ObserveLayout(target)]
    return p.observed()


@pytest.mark.rule("TEN-006")
@examples(2)
@given(program=in_place_views())
def test_in_place_view_methods(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# -- memory formats (TEN-007, issue 22: the Performance Tuning Guide's channels_last) -------------
FORMAT_CALLS = ("contiguous", "clone", "to", "zeros_like", "ones_like")
FORMAT_SHAPES = ((2, 3, 2, 2), (1, 3, 2, 2), (2, 1, 2, 3), (2, 3, 1, 1), (2, 0, 2, 2), (2, 2, 1, 2, 2))
FORMAT_SHAPES += ((2, 3, 2),)


@st.composite
def memory_formats(draw: Any) -> Program:
    """A float leaf of rank 4 (now and then 5 or 3, or empty) laid out as drawn, then two or three
    calls of FORMAT_CALLS each with a drawn memory format (``to`` now and then into float64), each
    result's layout and its is_contiguous in a drawn format observed; then an elementwise op and a
    conv2d with a channels_last operand, their layouts observed, and backward from the last."""
    p = OpProgram(draw)
    shape = draw(st.sampled_from(FORMAT_SHAPES))
    x = laid_out(draw, p, shape, "float32", ("fresh", "permuted", "permuted narrowed"))
    results = [x]
    for _ in range(draw(st.integers(2, 3))):
        op = draw(st.sampled_from(FORMAT_CALLS))
        fmt = MemoryFormat(draw(st.sampled_from(MEMORY_FORMATS)))
        cast = (DType("float64"),) if op == "to" and draw(st.booleans()) else ()
        out = p.op(op, Ref(draw(st.sampled_from(results))), *cast, memory_format=fmt)
        results.append(out)
        tested = MemoryFormat(draw(st.sampled_from(MEMORY_FORMATS)))
        asked = p.op("is_contiguous", Ref(out), memory_format=tested)
        p.names.remove(asked)
        p.steps += [ObserveLayout(out), ObservePlain(asked)]
    if len(shape) == 4:
        last = p.op("contiguous", Ref(x), memory_format=MemoryFormat("channels_last"))
        other = draw(st.sampled_from(results))
        first, second = (last, other) if draw(st.booleans()) else (other, last)
        added = p.op("add", Ref(first), Ref(second))
        weight = p.leaf((2, shape[1], 1, 1), "float32")
        if draw(st.booleans()):
            weight = p.op("contiguous", Ref(weight), memory_format=MemoryFormat("channels_last"))
        conv = p.op("nn.functional.conv2d", Ref(draw(st.sampled_from((x, added)))), Ref(weight))
        p.steps += [ObserveLayout(added), ObserveLayout(conv)]
        results.append(conv)
    return p.end(results[-1])


@pytest.mark.rule("TEN-007")
@examples(0.3)
@given(program=memory_formats())
def test_memory_formats(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
