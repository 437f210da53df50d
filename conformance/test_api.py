"""Argument spellings (oracle/rules/api.py): reductions, scans and joins called with NumPy's
keyword spellings (now and then one torch refuses), and each family of functions taking out=
called with out= of a drawn shape and dtype (empty, of the result's shape, of another shape, a
view; a tuple of two for those returning two; an argument requiring grad now and then), every
tensor observed; factory functions under a drawn default dtype and device."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.test_ops import OpProgram
from oracle.backends import Backend
from oracle.differential import check
from oracle.profiles import examples
from oracle.program import (
    Autocast,
    Backward,
    DeviceMode,
    DType,
    ExitAutocast,
    ExitDevice,
    ObserveDefaults,
    ObserveGraph,
    ObservePlain,
    Optimizer,
    OptimizerZeroGrad,
    Program,
    Ref,
)

KNOWN_IMPL_DIVERGENCES: dict[str, str] = {}

# ops that take dim (and keepdim) by NumPy's names, with the positional arguments before dim
DIM_OPS = {"sum": True, "mean": True, "amax": True, "logsumexp": True, "std": True, "max": True}
SCANS = ("cumsum", "cumprod", "softmax", "log_softmax")
JOINS = ("cat", "stack")


@st.composite
def spelled_calls(draw: Any) -> Program:
    """A float leaf of shape (2, 3); a reduction with axis= (keepdims= or keepdim=), a scan or
    softmax with axis=, a join with axis=, a binary op with x1=/x2= or the input as a=; then one
    call giving dim twice (by position or name and as axis), which torch refuses."""
    p = OpProgram(draw)
    x = p.leaf((2, 3), "float64", grad=draw(st.booleans()))
    axis = draw(st.sampled_from((0, 1, -1)))
    op = draw(st.sampled_from(sorted(DIM_OPS)))
    keep = {draw(st.sampled_from(("keepdims", "keepdim"))): draw(st.booleans())}
    reduced = p.op(op, Ref(x), axis=axis, **keep)
    if op == "max":
        p.op("__getitem__", Ref(reduced), 0)
    p.op(draw(st.sampled_from(SCANS)), Ref(x), axis=axis)
    p.op(draw(st.sampled_from(JOINS)), [Ref(x), Ref(x)], axis=axis)
    first = draw(st.sampled_from(("x1", "x", "a")))
    p.op(draw(st.sampled_from(("add", "mul", "sub"))), **{first: Ref(x)}, x2=Ref(x))
    twice = draw(st.sampled_from(("position", "name")))
    p.op(
        "sum",
        Ref(x),
        *((0,) if twice == "position" else ()),
        **({"dim": 0} if twice == "name" else {}),
        axis=1,
    )
    return p.observed()


# The functions out= is drawn for, each with its arguments (``a`` and ``b`` the two (2, 2) leaves, ``v``
# a vector, ``m`` a mask, ``[a, b]`` a list), by family; a tuple out for TUPLE_OUTS
OUT_CALLS: dict[str, tuple] = {
    **dict.fromkeys(("exp", "sin", "sqrt", "log1p", "erf", "sigmoid", "rsqrt", "tanh", "logit"), ("a",)),
    **dict.fromkeys(("neg", "abs", "floor", "sign", "round", "trunc", "frac", "signbit", "isposinf"), ("a",)),
    **dict.fromkeys(("nan_to_num", "square", "reciprocal", "logical_not", "bitwise_not"), ("a",)),
    **dict.fromkeys(
        ("add", "sub", "mul", "div", "pow", "maximum", "atan2", "fmod", "remainder", "xlogy", "hypot", "eq",
         "lt", "logical_and", "bitwise_and", "floor_divide", "float_power", "heaviside", "copysign", "fmax",
         "logaddexp", "mm", "matmul", "bmm"),
        ("a", "b"),
    ),  # fmt: skip
    "addcmul": ("a", "a", "b"), "addcdiv": ("a", "b", "a"), "lerp": ("a", "b", 0.5), "addmm": ("a", "a", "b"),
    "clamp": ("a", -0.5, 0.5), "clip": ("a", "b"), "where": ("m", "a", "b"), "outer": ("v", "v"),
    "dot": ("v", "v"), "mv": ("a", "v"),
    **dict.fromkeys(
        ("sum", "mean", "prod", "amax", "amin", "argmax", "all", "any", "logsumexp", "std", "var", "nansum",
         "nanmean", "cumsum", "cumprod", "logcumsumexp", "softmax", "log_softmax", "diff", "argsort", "norm"),
        ("a", 1),
    ),  # fmt: skip
    **dict.fromkeys(("cat", "stack", "hstack", "vstack", "dstack", "column_stack"), ("[a, b]",)),
    **dict.fromkeys(("tril", "triu", "diag", "msort", "nonzero"), ("a",)),
    # not drawn: index_select, masked_select, gather resize out before refusing a bad index (torch's
    # new elements uninitialized)
    **dict.fromkeys(("max", "min", "sort", "cummax", "cummin", "median"), ("a", 1)),
    "topk": ("a", 1), "aminmax": ("a",),  # kthvalue's out=: tests/impl/test_impl_out.py
    "zeros": ((2, 2),), "ones": (3,), "full": ((2,), 1.5), "eye": (2,), "arange": (4,), "linspace": (0, 1, 4),
    "logspace": (0, 1, 3),
}  # fmt: skip
# the functions whose result is not (2, 2)
RESHAPING = (
    "sum mean prod amax amin argmax all any logsumexp std var nansum nanmean diff norm cat stack hstack "
    "vstack dstack column_stack diag nonzero index_select masked_select outer dot mv zeros ones full eye "
    "arange linspace logspace max min sort cummax cummin median topk aminmax bmm"
).split()
# no int64 kernel: out resized before the error
FLOAT_KERNELS = ("frac", "hypot", "logaddexp", "lerp", "logcumsumexp", "softmax", "log_softmax")
# out resized before its dtype is refused (torch's new elements uninitialized): drawn of the input's dtype
REFUSED_AFTER_RESIZE = ("dot", "diag", "var", "std", "mean", "logsumexp", "norm", "prod", "sum")
FACTORIES_OUT = ("zeros", "ones", "full", "eye", "arange", "linspace", "logspace")
TUPLE_OUTS = ("max", "min", "sort", "cummax", "cummin", "median", "topk", "aminmax")
# out= variants torch records a NotImplemented node on (no derivative): now and then one more call, an
# input requiring grad
RECORDED = ("softmax", "log_softmax", "floor_divide", "heaviside", "diag")
# factories writing into an out of their number of elements in its shape (drawn with those above)
KEEPS_NUMEL = ("arange", "linspace")
# no grad input for comparisons either: the reference process shows no resize warning then (a
# fresh torch shows one; tests/impl/test_impl_out.py checks them)
UNRECORDED = (
    "eq", "lt", "logical_and", "logical_not", "signbit", "isposinf", "argmax", "all", "any", "nonzero",
)  # fmt: skip


@st.composite
def out_calls(draw: Any) -> Program:
    """Two (2, 2) leaves (float32, float64 or int64; one requiring grad now and then), and a function
    of OUT_CALLS called with out= a leaf that is empty, of the result's shape or of another shape, of
    a drawn dtype, or a view (a tuple of two such for a function returning two), now and then an out
    of another type (a number, a string, a list or tuple of one); now and then an op without a
    derivative (an input requiring grad) or arange or linspace into an out that is a view or holds as
    many elements; every tensor observed."""
    p = OpProgram(draw)
    op = draw(st.sampled_from(sorted(OUT_CALLS)))
    dtype = "int64" if op.startswith("bitwise") else draw(st.sampled_from(("float32", "float64", "int64")))
    if op in ("floor_divide", "div", "fmod", "remainder"):  # an integer division by zero raises midway
        dtype = draw(st.sampled_from(("float32", "float64")))
    grad = dtype != "int64" and op not in UNRECORDED and draw(st.integers(0, 5)) == 0
    a = p.leaf((2, 2), dtype, grad=grad)
    b = p.leaf((2, 2), dtype, grad=False)
    named = {"a": Ref(a), "b": Ref(b), "[a, b]": [Ref(a), Ref(b)]}
    others = {"v": ((2,), None), "m": ((2, 2), "bool")}
    for key, (shape, kind) in others.items():
        if key in OUT_CALLS[op]:
            named[key] = Ref(p.leaf(shape, kind or dtype, grad=False))
    args = [named.get(arg, arg) if isinstance(arg, str) else arg for arg in OUT_CALLS[op]]

    def drawn_out(dtypes: tuple) -> Any:
        out_dtype = draw(st.sampled_from(dtypes))
        shape = draw(st.sampled_from(((0,), (2, 2), (3,), (1, 2), "view")))
        if op == "stack" and (out_dtype == "bool" or (dtype != "int64" and out_dtype == "int64")):
            shape = (2, 2, 2)  # stack resizes out before refusing the cast: new elements uninitialized
        if shape == "view":  # a leaf's transpose: not contiguous
            return Ref(p.op("t", Ref(p.leaf((2, 2), out_dtype, grad=False))))
        if op in FLOAT_KERNELS and dtype == "int64":
            shape = (2, 2)  # resized before the kernel raises: new elements uninitialized
        return Ref(p.leaf(shape, out_dtype, grad=False))

    if op in TUPLE_OUTS:  # the values of a drawn dtype (refused before any part is resized), indices int64
        values = drawn_out((dtype, dtype, "int64", "float64"))
        out: Any = (values, drawn_out((dtype,) if op == "aminmax" else ("int64",)))
    else:
        bools = ("bool",) if op not in ("cumsum", "cumprod", *FACTORIES_OUT) else ()  # resized, then refused
        ints = ("int64", *bools) if op not in ("nansum", "nanmean") else ()  # resized before refusing
        out = drawn_out((dtype,) if op in REFUSED_AFTER_RESIZE else ("float32", "float64", *ints, dtype))
    if draw(st.integers(0, 4)) == 0:  # an out of another type: torch refuses it (add ... takes a number)
        first = out[0] if isinstance(out, tuple) else out
        out = draw(st.sampled_from((3, 2.5, True, "x", [first], (first,), first)))
    p.op(op, *args, out=out)
    if draw(st.booleans()):  # (drawn last: the programs before it are kept)
        extra = draw(st.sampled_from((*RECORDED, *KEEPS_NUMEL)))
        x = p.given([[0.5, -1.0], [2.0, 3.0]], "float32", grad=True)
        y = p.given([[1.5, 2.0], [-0.5, 0.0]], "float32")
        into = draw(st.sampled_from(((2, 2), (3,), "view", "row")))  # row: a view resized in its base
        target = p.leaf({"view": (2, 2), "row": (3, 2)}.get(into, into), "float32", grad=False)
        if into in ("view", "row"):
            target = p.op("t", Ref(target)) if into == "view" else p.op("__getitem__", Ref(target), 1)
        given = [{"a": Ref(x), "b": Ref(y)}.get(arg, arg) for arg in OUT_CALLS[extra]]
        p.op(extra, *given, out=Ref(target))
    return p.observed()


@pytest.mark.rule("API-001")
@settings(deadline=None)
@given(program=spelled_calls())
def test_numpy_spellings(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


@pytest.mark.rule("API-002")
@settings(deadline=None)
@given(program=out_calls())
def test_out(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


FLOAT_DEFAULTS = ("float32", "float64", "float16", "bfloat16")
# factory calls whose dtype the default dtype decides (or, for the int ones, does not)
FACTORIES: list[tuple[str, tuple]] = [
    ("tensor", (1.5,)), ("tensor", ([1, 2.5],)), ("tensor", ([[1, 2], [3, 4.0]],)), ("tensor", ([],)),
    ("tensor", ([True, 2],)), ("arange", (0.0, 2.0, 0.5)), ("arange", (3,)), ("arange", (0, 1, 0.25)),
    ("linspace", (0, 1, 5)), ("logspace", (0, 2, 3)), ("logspace", (0, 1, 4, 2)), ("full", ([2], 1.5)),
    ("full", ([2], 2)), ("zeros", (2, 3)), ("ones", ([2],)), ("eye", (2,)),
    ("range", (0, 2)), ("range", (0.5, 2, 0.5)),  # (always the default dtype; deprecated: warns)
]  # fmt: skip
# calls on an int64 and a float32 tensor: promotion to the default dtype, or the input's dtype kept
ON_TENSORS = ("div", "mul", "sqrt", "zeros_like", "ones_like", "full_like")


@st.composite
def default_calls(draw: Any) -> Program:
    """The defaults observed; set_default_dtype of a drawn floating dtype (now and then an integer
    one, refused), set_default_device('cpu') or a 'with torch.device' block (nested now and then),
    the defaults observed again; factory calls and calls on an int64 and a float32 leaf; the block
    left or not; every tensor observed."""
    p = OpProgram(draw)
    p.steps.append(ObserveDefaults())
    dtype = draw(st.sampled_from(FLOAT_DEFAULTS + FLOAT_DEFAULTS + ("int64", "bool")))
    p.op("set_default_dtype", DType(dtype))
    if draw(st.booleans()):
        p.op("set_default_device", draw(st.sampled_from(("cpu", "cpu:0"))))
    blocks = draw(st.integers(0, 2))
    for i in range(blocks):
        p.steps.append(DeviceMode(f"d{i}", draw(st.sampled_from(("cpu", "cpu:0")))))
    p.steps.append(ObserveDefaults())
    for op, args in draw(st.lists(st.sampled_from(FACTORIES), min_size=2, max_size=4)):
        p.op(op, *args)
    whole, real = p.given([1, 2, 4], "int64"), p.given([0.5, 2.0], "float32")
    for op in draw(st.lists(st.sampled_from(ON_TENSORS), min_size=1, max_size=2, unique=True)):
        source = draw(st.sampled_from((whole, real)))
        args = {"div": (2,), "mul": (0.5,), "full_like": (2.5,)}.get(op, ())
        p.op(op, Ref(source), *args)
    if blocks and draw(st.booleans()):
        p.steps.append(ExitDevice(f"d{blocks - 1}"))
    return p.observed()


@pytest.mark.rule("API-003")
@settings(deadline=None)
@given(program=default_calls())
def test_defaults(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# determinism (API-006): the debug modes, right and wrong, and the dtypes of uninitialised memory (not
# use_deterministic_algorithms: torch's imports torch._inductor.config, ~5 s a process; its argument checks
# are tests/impl/test_impl_tutorial_functions.py's)
DEBUG_MODES = ("default", "warn", "error", 0, 1, 2, "bad", 3, 1.5)
GETTERS = ("are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "get_deterministic_debug_mode")
EMPTY_DTYPES = ("float32", "float64", "float16", "int64", "int32", "uint8", "int8", "bool")


@st.composite
def determinism(draw: Any) -> Program:
    """One or two settings of determinism by set_deterministic_debug_mode (a wrong value now and
    then), each followed by its three getters and, while determinism is on (uninitialised memory is
    not comparable otherwise), empty, empty_like and new_empty calls of drawn dtypes."""
    p = OpProgram(draw)
    like = p.given([[1, 2], [3, 4]], draw(st.sampled_from(("float32", "int64"))))
    on = False  # each program starts with determinism off (the run restores it)
    for _ in range(draw(st.integers(1, 2))):
        debug_mode = draw(st.sampled_from(DEBUG_MODES))
        p.op("set_deterministic_debug_mode", debug_mode)
        if debug_mode in DEBUG_MODES[:6]:
            on = debug_mode not in ("default", 0)
        for getter in GETTERS:
            p.op(getter)
        if on:
            p.op("empty", [2, 3], dtype=DType(draw(st.sampled_from(EMPTY_DTYPES))))
            for op, args in (("empty_like", ()), ("new_empty", ([3],))):
                dtype = {"dtype": DType(draw(st.sampled_from(EMPTY_DTYPES)))} if draw(st.booleans()) else {}
                p.op(op, Ref(like), *args, **dtype)
    return p.observed()


@pytest.mark.rule("API-006")
@examples(0.3)
@given(program=determinism())
def test_determinism(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# Calls taking ints (API-004): each op's arguments after its tensor (or tensors), the one marked INT
# drawn of a wrong type (or a right one now and then), and their names (for the keyword form, which
# gives the marked argument and those after it by name); LISTS take a list of ints there too
INT = object()
TYPED_CALLS: dict[str, tuple[tuple, tuple[str, ...]]] = {
    **{op: ((INT,), ("dim",)) for op in (
        "sum", "mean", "amax", "prod", "std", "logsumexp", "nansum", "argmax", "cumsum", "cumprod", "softmax",
        "log_softmax", "all", "count_nonzero", "median", "cummax", "argsort", "sort", "unbind", "max",
        "unsqueeze", "squeeze")},
    "flatten": ((INT,), ("start_dim",)), "transpose": ((0, INT), ("dim0", "dim1")),
    "select": ((INT, 0), ("dim", "index")), "narrow": ((INT, 0, 1), ("dim", "start", "length")),
    "movedim": ((0, INT), ("source", "destination")), "roll": ((1, INT), ("shifts", "dims")),
    "topk": ((1, INT), ("k", "dim")), "kthvalue": ((1, INT), ("k", "dim")),
    "chunk": ((INT, 1), ("chunks", "dim")),
    "tril": ((INT,), ("diagonal",)), "diagonal": ((0, INT, 1), ("offset", "dim1", "dim2")),
    "flip": ((INT,), ("dims",)), "permute": ((INT,), ("dims",)), "cat": ((INT,), ("dim",)),
    "stack": ((INT,), ("dim",)),
}  # fmt: skip
LISTS = ("sum", "mean", "amax", "logsumexp", "nansum", "count_nonzero", "std", "squeeze", "roll", "flip")
LISTS += ("permute",)
JOINED = ("cat", "stack")  # of a list of tensors
SIZED = ("view", "reshape", "expand", "repeat", "zeros", "ones")  # sizes spread or as one list
WRONG_INTS = (1.0, True, 0.5, -1.0)


@st.composite
def typed_calls(draw: Any) -> Program:
    """A (2, 3) float leaf, then three calls of TYPED_CALLS or SIZED: the marked argument by
    position or (with those after it) by keyword, drawn of a wrong type (a float, a bool, a 0-d
    float tensor; of LISTS also a list whose first or a later element is a float) or, one call in
    five, of a right one (a 0-d int64 tensor); a size list or spread sizes with one element
    wrong. Each call's error (or result) observed."""
    p = OpProgram(draw)
    x = p.leaf((2, 3), "float32", grad=False)
    for _ in range(3):
        op = draw(st.sampled_from(sorted((*TYPED_CALLS, *SIZED))))
        if op in SIZED:
            sizes: list[Any] = [2, 3] if op != "repeat" else [1, 2]
            sizes[draw(st.integers(0, 1))] = draw(st.sampled_from(WRONG_INTS))
            tensor = () if op in ("zeros", "ones") else (Ref(x),)
            p.op(op, *tensor, *([sizes] if draw(st.booleans()) else sizes))
            continue
        args, names = TYPED_CALLS[op]
        at = args.index(INT)
        kind = draw(st.integers(0, 4))
        value: Any = draw(st.sampled_from(WRONG_INTS))
        if kind == 0:
            value = Ref(p.given(draw(st.sampled_from((1, 0))), "int64"))  # taken as an int
        elif kind == 1:
            value = Ref(p.given(1.0, "float32"))
        elif kind == 2 and op in LISTS:
            value = draw(st.sampled_from(([1.0], [0, 1.0], (1.0,), [0, -1.0])))
        values = [value if a is INT else a for a in args]
        if draw(st.booleans()):  # by keyword, from the marked argument on
            positional, keywords = values[:at], dict(zip(names[at:], values[at:], strict=True))
        else:
            positional, keywords = values, {}
        first = [Ref(x), Ref(x)] if op in JOINED else Ref(x)
        p.op(op, first, *positional, **keywords)
    return p.observed()


@pytest.mark.rule("API-004")
@settings(deadline=None)
@given(program=typed_calls())
def test_int_arguments_of_wrong_types(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# Calls torch's parser refuses (API-005): each op's arguments (T: the leaf, M: a bool mask) and
# their names; a call is made malformed one way (MALFORMED), now and then left as it is
T, M = object(), object()
PARSED_CALLS: dict[str, tuple[tuple, tuple[str, ...]]] = {
    "add": ((T, T), ("input", "other")), "sub": ((T, 2.0), ("input", "other")),
    "mul": ((T, T), ("input", "other")), "div": ((T, T), ("input", "other")),
    "addcmul": ((T, T, T), ("input", "tensor1", "tensor2")),
    "addcdiv": ((T, T, T), ("input", "tensor1", "tensor2")),
    "tril": ((T, 0), ("input", "diagonal")), "cumsum": ((T, 1), ("input", "dim")),
    "diagonal": ((T, 0, 0, 1), ("input", "offset", "dim1", "dim2")),
    "atan2": ((T, T), ("input", "other")), "maximum": ((T, T), ("input", "other")),
    "fmod": ((T, 2.0), ("input", "other")), "lerp": ((T, T, 0.5), ("input", "end", "weight")),
    "where": ((M, T, T), ("condition", "input", "other")),
    "Tensor.add": ((T, T), ("self", "other")), "Tensor.mul_": ((T, 2.0), ("self", "other")),
    "Tensor.sub_": ((T, T), ("self", "other")),
    "Tensor.addcmul": ((T, T, T), ("self", "tensor1", "tensor2")),
    "Tensor.eq": ((T, T), ("self", "other")), "Tensor.transpose": ((T, 0, 1), ("self", "dim0", "dim1")),
    "Tensor.tril_": ((T, 0), ("self", "diagonal")), "Tensor.fmod": ((T, T), ("self", "other")),
    "Tensor.masked_fill": ((T, M, 0.0), ("self", "mask", "value")),
    "Tensor.clamp_min": ((T, 0.0), ("self", "min")),
}  # fmt: skip
HIDING = ("add", "sub", "addcmul", "addcdiv", "Tensor.add", "Tensor.sub_", "Tensor.addcmul")  # (hidden ones)
MALFORMED = ("wrong", "wrong by keyword", "number for a tensor", "extra", "missing", "unknown keyword")
WRONG_VALUES = ("x", [1.0], None, (1, 2), 1.5)


@st.composite
def parsed_calls(draw: Any) -> Program:
    """A (2, 3) float leaf and a bool mask, then three calls of PARSED_CALLS, each malformed one
    way (an argument after the first of a wrong type, by position or by keyword; a Python number
    for a tensor; extra positional arguments; the last ones missing; an unknown keyword) or, one in
    seven, as it is; the first call of an op with a hidden deprecated signature. Each call's error
    (or result) observed."""
    p = OpProgram(draw)
    x = p.leaf((2, 3), "float32", grad=False)
    mask = p.given([[True, False, True], [False, False, True]], "bool")
    for i in range(3):
        op = draw(st.sampled_from(HIDING if i == 0 else sorted(PARSED_CALLS)))
        template, names = PARSED_CALLS[op]
        values: list[Any] = [Ref(x) if a is T else Ref(mask) if a is M else a for a in template]
        keywords: dict[str, Any] = {}
        how = draw(st.sampled_from((*MALFORMED, "as it is")))
        at = draw(st.integers(1, len(values) - 1))
        if how in ("wrong", "wrong by keyword"):
            values[at] = draw(st.sampled_from(WRONG_VALUES))
            if how == "wrong by keyword":
                keywords = dict(zip(names[at:], values[at:], strict=True))
                values = values[:at]
        method = op.startswith("Tensor.")  # (self stays a tensor: a method's descriptor wants one)
        if how == "number for a tensor":
            tensors = [i for i, a in enumerate(template) if a is T and i >= method] or [at]
            values[draw(st.sampled_from(tensors))] = draw(st.sampled_from((1.5, 2, True)))
        elif how == "extra":
            values += [1, 2][: draw(st.integers(1, 2))]
        elif how == "missing":
            values = values[: draw(st.integers(int(method), len(values) - 1))]
        elif how == "unknown keyword":
            keywords = {draw(st.sampled_from(("foo", "other", "dim"))): 1}
        p.op(op, *values, **keywords)
    return p.observed()


@pytest.mark.rule("API-005")
@settings(deadline=None)
@given(program=parsed_calls())
def test_calls_torchs_parser_refuses(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# -- torch.backends and the float32 matmul precision (API-007, issue 22) ---------------------------
BACKEND_QUERIES = (
    *(f"backends.{m}.is_available" for m in ("cudnn", "mps", "mkldnn", "openmp", "mkl", "opt_einsum")),
    "backends.cudnn.version", "backends.cuda.is_built", "backends.mps.is_built",
)
PRECISIONS = ("highest", "high", "medium", "bad", 3)


def plain(p: OpProgram, op: str, *args: Any, **kwargs: Any) -> str:
    """``op``'s result observed as it prints (no tensor)."""
    result = p.op(op, *args, **kwargs)
    p.names.remove(result)
    p.steps.append(ObservePlain(result))
    return result


@st.composite
def backend_settings(draw: Any) -> Program:
    """What torch.backends reports on this CPU machine (each query), then one to three settings of
    the float32 matmul precision (a wrong value now and then: torch's warning, or its error for a
    number), each read back, and a float32 mm under it."""
    p = OpProgram(draw)
    for query in BACKEND_QUERIES:
        plain(p, query)
    a = p.leaf((2, 3), "float32", grad=False)
    for _ in range(draw(st.integers(1, 3))):
        p.op("set_float32_matmul_precision", draw(st.sampled_from(PRECISIONS)))
        p.names.pop()
        plain(p, "get_float32_matmul_precision")
    p.op("mm", Ref(a), Ref(p.op("t", Ref(a))))
    return p.observed()


@pytest.mark.rule("API-007")
@examples(0.05)
@given(program=backend_settings())
def test_backends_and_matmul_precision(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)


# -- autocast (API-008, issue 22: the AMP recipe on CPU) --------------------------------------------
# the calls drawn inside autocast: ops of torch's lower-precision list, of its float32 list, and
# others, each with the leaves it takes (``a`` (3, 4), ``b`` (4, 2), ``w`` (2, 4), ``v`` (2,), ``img``
# (1, 2, 3, 3), ``k`` (2, 2, 2, 2), ``t`` a float32 target (3, 2)); lists of torch's CPU autocast
AUTOCAST_CALLS: dict[str, dict[str, tuple]] = {
    "lower precision": {
        "mm": ("a", "b"), "matmul": ("a", "b"), "__matmul__": ("a", "b"), "addmm": ("v2", "a", "b"),
        "nn.functional.linear": ("a", "w", "v"), "bmm": ("a3", "b3"), "baddbmm": ("c3", "a3", "b3"),
        "conv2d": ("img", "k"),
    },
    "float32": {"nn.functional.mse_loss": ("ab", "t"), "nn.functional.l1_loss": ("ab", "t"), "prod": ("ab",)},
    "others": {"softmax": ("ab", 1), "exp": ("ab",), "sum": ("ab",), "add": ("ab", "t")},
}  # fmt: skip
AUTOCAST_DTYPES = ("bfloat16", "float16")


@st.composite
def autocast_programs(draw: Any, calls: dict[str, tuple]) -> Program:
    """float32 leaves requiring grad; an autocast block (torch.autocast, torch.amp.autocast or
    torch.cpu.amp.autocast; bfloat16 by default, or float16; now and then disabled, float32 (torch's
    warning) or for 'cuda' (no CUDA: its warning)), two or three ``calls`` inside it (``ab``
    the product of a and b made there), now and then one in an inner block that turns autocast off,
    the state observed on entering and leaving; then backward from the float sum of the results, and
    every tensor and the results' graphs observed."""
    p = OpProgram(draw)
    shapes = {"a": (3, 4), "b": (4, 2), "w": (2, 4), "v": (2,), "v2": (3, 2), "a3": (2, 3, 4),
              "b3": (2, 4, 2), "c3": (2, 3, 2), "img": (1, 2, 3, 3), "k": (2, 2, 2, 2),
              "t": (3, 2)}  # fmt: skip
    leaves = {n: p.leaf(shape, "float32", grad=n != "t") for n, shape in shapes.items()}
    spelling = draw(st.sampled_from(("autocast", "autocast", "amp.autocast", "cpu.amp.autocast")))
    device = "cuda" if spelling != "cpu.amp.autocast" and draw(st.integers(0, 5)) == 5 else "cpu"
    dtype = draw(st.sampled_from((None, None, *AUTOCAST_DTYPES, "float32")))
    enabled = draw(st.sampled_from((None, None, None, True, False)))
    p.steps.append(Autocast("ac", device, dtype, enabled, spelling))
    leaves["ab"] = p.op("mm", Ref(leaves["a"]), Ref(leaves["b"]))
    results = [leaves["ab"]]
    inner = draw(st.sampled_from((None, None, 0, 1, 2)))
    for i in range(draw(st.integers(2, 3))):
        if i == inner:
            p.steps.append(Autocast("off", "cpu", None, False))
        op = draw(st.sampled_from(sorted(calls)))
        args = [Ref(leaves[a]) if isinstance(a, str) else a for a in calls[op]]
        results.append(p.op(op, *args))
        if i == inner:
            p.steps.append(ExitAutocast("off", "cpu"))
    p.steps.append(ExitAutocast("ac", device))
    total = p.op("sum", Ref(p.op("float", Ref(results[-1]))))
    for r in results[:-1]:
        total = p.op("add", Ref(total), Ref(p.op("sum", Ref(p.op("float", Ref(r))))))
    p.steps += [ObserveGraph(r) for r in (*results, total)]
    p.steps.append(Backward(total))
    return p.observed()


@pytest.mark.rule("API-008")
@pytest.mark.parametrize("kind", sorted(AUTOCAST_CALLS))
@examples(0.05)  # each kind: 5 programs in ci
@given(data=st.data())
def test_autocast(kind: str, data: st.DataObject, backend: Backend, reference: Backend) -> None:
    check(data.draw(autocast_programs(AUTOCAST_CALLS[kind]), label="program"), backend, reference)


# GradScaler (API-009): its loop as the AMP recipe writes it, an inf or a NaN now and then
SCALER_INPUTS = (1.0, 2.0, -0.5, 1e30, float("inf"), float("nan"))


@st.composite
def grad_scaler_loops(draw: Any) -> Program:
    """A float32 leaf w optimised by SGD through torch.amp.GradScaler('cpu', init_scale=,
    growth_interval=) drawn; two to four iterations of loss = sum(w * x) (x now and then holding an
    inf or a NaN, or large enough to overflow once scaled): scale(loss).backward(), unscale_ now and
    then, step, update, the scale and state_dict observed, zero_grad; w observed at the end."""
    p = OpProgram(draw)
    w = p.leaf((3,), "float32", grad=True)
    p.steps.append(Optimizer("opt", "SGD", [w], {"lr": 0.125}))
    init_scale = draw(st.sampled_from((4.0, 2.0**16, 2.0**100)))
    interval = draw(st.sampled_from((1, 2)))
    scaler = p.op("amp.GradScaler", "cpu", init_scale=init_scale, growth_interval=interval)
    p.names.remove(scaler)
    for _ in range(draw(st.integers(2, 4))):
        x = p.given([draw(st.sampled_from(SCALER_INPUTS)), 1.0, -2.0], "float32")
        loss = p.op("sum", Ref(p.op("mul", Ref(w), Ref(x))))
        p.steps.append(Backward(p.op("scale", Ref(scaler), Ref(loss))))
        if draw(st.booleans()):
            p.op("unscale_", Ref(scaler), Ref("opt"))
            p.names.pop()
        for method in ("step", "update"):
            p.op(method, Ref(scaler), *((Ref("opt"),) if method == "step" else ()))
            p.names.pop()
        plain(p, "get_scale", Ref(scaler))
        plain(p, "state_dict", Ref(scaler))
        p.steps.append(OptimizerZeroGrad("opt"))
    return p.observed()


@pytest.mark.rule("API-009")
@examples(0.1)
@given(program=grad_scaler_loops())
def test_grad_scaler(program: Program, backend: Backend, reference: Backend) -> None:
    check(program, backend, reference)
