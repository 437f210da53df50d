"""impl against torch on ``out=``: the value written, out's dtype, shape, strides and version, the
result being out itself, torch's resize warning, and its dtype and autograd errors."""

from __future__ import annotations

import ast
import inspect
import pathlib
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import impl

# (out as made, the call); ``r`` is out
CASES = [
    ("empty(0)", "add(a, a, out=r)"),
    ("empty(3)", "add(a, a, out=r)"),
    ("empty(2, 2)", "add(a, a, out=r)"),
    ("empty(2, 2, dtype=torch.long)", "add(a, a, out=r)"),
    ("empty(2, 2, dtype=torch.float64)", "add(a, a, out=r)"),
    ("empty(2, dtype=torch.float64)", "add(i, i, out=r)"),
    ("empty(2, dtype=torch.bool)", "add(i, i, out=r)"),
    ("empty(0)", "add(b, a, out=r)"),
    ("empty(0, requires_grad=True)", "add(a, a, out=r)"),
    ("empty(0)", "sum(a, 0, out=r)"),
    ("empty(0, dtype=torch.long)", "sum(a, axis=0, out=r)"),
    ("empty(0)", "sum(i, 0, out=r)"),
    ("empty(0)", "mean(a, out=r)"),
    ("empty(0, dtype=torch.long)", "mean(a, 0, out=r)"),
    ("empty(0, dtype=torch.long)", "exp(i, out=r)"),
    ("empty(0, dtype=torch.float16)", "exp(a, out=r)"),
    ("empty(0)", "eq(a, a, out=r)"),
    ("empty(3, dtype=torch.double)", "mul(a, 2, out=r)"),
    ("empty(3)", "add(i, i, out=r)"),
    ("empty(3, dtype=torch.double)", "mean(a, 0, out=r)"),
    ("empty(0, dtype=torch.double)", "mm(a, a, out=r)"),
    ("empty(5)", "mm(a, a, out=r)"),
    ("empty(0, dtype=torch.double)", "matmul(a, a, out=r)"),
    ("empty(0, dtype=torch.double)", "dot(v, v, out=r)"),
    ("empty(0, dtype=torch.double)", "softmax(a, 0, out=r)"),
    ("empty(0, dtype=torch.double)", "cat([a, a], out=r)"),
    ("empty(0, dtype=torch.long)", "cat([a, a], out=r)"),
    ("empty(0)", "stack([a, a], out=r)"),
    ("empty(0, dtype=torch.long)", "cumsum(a, 0, out=r)"),
    ("empty(0)", "mul(a, 2, out=r)"),
    ("empty(0)", "sub(a, a, alpha=2, out=r)"),
    ("empty(6)[::2]", "add(v, v, out=r)"),
    ("empty(2, 2).t()", "add(a, a, out=r)"),
    ("empty(0)", "add(a, a, out=None)"),
]


def _observe(module: Any, made: str, call: str) -> tuple:
    env: dict[str, Any] = {"torch": module}
    env["a"] = module.tensor([[1.0, 2.0], [3.0, 4.0]])
    env["b"] = env["a"].clone().requires_grad_()
    env["i"], env["v"] = module.tensor([1, 2]), module.tensor([1.0, 2.0])
    env["r"] = eval(f"torch.{made}", env)  # noqa: S307 - the cases above
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(f"torch.{call}", env)  # noqa: S307
        except (RuntimeError, TypeError) as error:
            return type(error).__name__, str(error)
    r = env["r"]
    seen = (result is r, r.tolist(), str(r.dtype), tuple(r.shape), r.stride(), r._version)
    return seen, [(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught]


@pytest.mark.parametrize(("made", "call"), CASES)
def test_out_as_torch(made: str, call: str) -> None:
    assert _observe(impl, made, call) == _observe(torch, made, call)


# -- out= of every function torch takes it on ------------------------------------------------------
UNARY = (
    "abs absolute acos acosh arccos arccosh arcsin arcsinh arctan arctanh asin asinh atan atanh bitwise_not "
    "ceil cos cosh deg2rad erf erfc exp exp2 expm1 fix floor frac isneginf isposinf log log10 log1p log2 "
    "logical_not logit nan_to_num neg negative rad2deg reciprocal round rsqrt sgn sigmoid sign signbit sin "
    "sinc sinh sqrt square tan tanh trunc"
).split()
BINARY = (
    "add arctan2 atan2 bitwise_and bitwise_or bitwise_xor copysign div divide eq float_power floor_divide "
    "fmax fmin fmod ge gt heaviside hypot le logaddexp logaddexp2 logical_and logical_or logical_xor lt "
    "maximum minimum mul multiply ne pow remainder sub subtract true_divide xlogy"
).split()
# one call (or a few overloads) of each function taking out= (``OUT`` where it goes, ``OUTS`` for a
# tuple out); inputs: a, b (2, 3) float, u in (0, 1), i, j int64, m (2, 2), v (3,), bl a mask
EVERY = [f"{n}({'i' if n.startswith('bitwise') else 'u'}, OUT)" for n in UNARY] + [
    f"{n}(i, j, OUT)" if n.startswith("bitwise") else f"{n}(a, b, OUT)" for n in BINARY
] + [
    "add(i, j, alpha=2, OUT)", "mul(a, 2, OUT)", "eq(a, 2, OUT)", "abs(i, OUT)", "sigmoid(i, OUT)",
    "addcdiv(a, b, u, value=2, OUT)", "addcmul(a, b, u, OUT)", "addmm(m, m, m, OUT)", "mm(m, m, OUT)",
    "bmm(m[None], m[None], OUT)", "mv(m, m[0], OUT)", "dot(v, v, OUT)", "matmul(m, m, OUT)",
    "matmul(v, v, OUT)", "outer(v, v, OUT)", "all(a, 1, OUT)", "any(a, OUT)", "amax(a, 1, OUT)",
    "amin(i, 0, OUT)", "argmax(a, 1, OUT)", "argmin(a, OUT)", "sum(a, 1, OUT)", "nansum(a, 1, OUT)",
    "prod(i, 1, OUT)", "mean(a, 1, OUT)", "mean(a, OUT)", "nanmean(a, 1, OUT)", "logsumexp(i, 1, OUT)",
    "std(a, 1, OUT)", "var(a, 1, correction=0, OUT)", "norm(a, dim=1, OUT)", "cumsum(i, 1, OUT)",
    "cumprod(a, 1, OUT)", "logcumsumexp(a, 1, OUT)", "softmax(a, 1, OUT)", "log_softmax(a, 1, OUT)",
    "cat([a, i], 1, OUT)", "concat([a, b], OUT)", "concatenate([a, b], 1, OUT)", "stack([a, b], 2, OUT)",
    "hstack([a, b], OUT)", "vstack([a, b], OUT)", "row_stack([a, b], OUT)", "column_stack([a, v[:2]], OUT)",
    "dstack([a, b], OUT)", "clamp(a, -1, 1, OUT)", "clamp(a, min=b, OUT)", "clip(i, 0, 2, OUT)",
    "lerp(a, b, 0.25, OUT)", "lerp(a, b, u, OUT)", "where(bl, a, b, OUT)", "where(bl, a, 0.0, OUT)",
    "gather(a, 1, gi, OUT)", "index_select(a, 1, ix, OUT)", "index_add(a, 1, ix, b[:, :2], OUT)",
    "index_copy(a, 1, ix, b[:, :2], OUT)", "scatter(a, 1, gi, 2.0, OUT)", "scatter_add(a, 1, gi, b, OUT)",
    "masked_select(a, bl, OUT)", "nonzero(a, OUT)", "diag(m, OUT)", "diag(v, OUT)", "diff(a, dim=0, OUT)",
    "tril(a, OUT)", "triu(a, 1, OUT)", "searchsorted(v, a, out_int32=True, OUT)", "bucketize(a, v, OUT)",
    "msort(a, OUT)", "argsort(a, stable=True, OUT)", "max(a, OUT)", "max(a, b, OUT)",
    "max(a, 1, keepdim=True, OUTS)", "min(a, 1, OUTS)", "sort(a, descending=True, OUTS)", "topk(a, 2, OUTS)",
    "kthvalue(a, 2, 1, OUTS)", "median(a, 1, OUTS)", "median(a, OUT)", "cummax(a, 1, OUTS)",
    "cummin(a, 1, OUTS)", "aminmax(a, dim=1, OUTS)", "zeros(2, 3, OUT)", "zeros((2,), dtype=T.float64, OUT)",
    "ones(2, OUT)", "empty(2, 3, OUT).zero_()", "full((2,), 2, OUT)", "eye(2, 3, OUT)", "arange(5, OUT)",
    "arange(0, 1, 0.25, OUT)", "linspace(0, 1, 5, OUT)", "logspace(0, 1, 3, OUT)", "rand(2, 3, OUT)",
    "randn(2, 3, OUT)", "randint(1, 5, (4,), OUT)", "randperm(5, OUT)", "normal(a, u, OUT)",
    "normal(0.0, 1.0, (3,), OUT)", "bernoulli(u, OUT)", "multinomial(u, 2, OUT)",
]  # fmt: skip
# torch's divergences impl keeps: (call, out) -> why
KNOWN: dict[tuple[str, str], str] = {}


def _inputs(module: Any, grad: bool) -> dict[str, Any]:
    t = module.tensor
    return {
        "T": module, "a": t([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=grad),
        "b": t([[2.0, 1.0, -3.0], [1.5, 0.25, 2.0]]), "u": t([[0.25, 0.5, 0.75], [0.1, 0.9, 0.6]]),
        "i": t([[1, 2, 3], [4, -5, 6]]), "j": t([[2, 1, 2], [3, 2, 1]]), "m": t([[1.0, 2.0], [3.0, 4.0]]),
        "v": t([-1.0, 0.5, 2.0]), "bl": t([[True, False, True], [False, True, True]]),
        "gi": t([[0, 2, 1], [1, 1, 0]]), "ix": t([2, 0]),
    }  # fmt: skip


def _outs(module: Any, result: Any) -> dict[str, Any]:
    """out= of each kind, made by ``module`` for a call whose result (made by torch) is ``result``:
    empty of its dtype or of another, of another shape, a view, a tuple's parts mistyped ..."""
    if isinstance(result, tuple):
        shape, dt = tuple(result[0].shape), getattr(module, str(result[0].dtype)[6:])
        return {
            "empty": lambda: (module.empty(0, dtype=dt), module.empty(0, dtype=module.long)),
            "wrong-shape": lambda: (module.zeros(5, dtype=dt), module.zeros(5, dtype=module.long)),
            "indices-float": lambda: (module.empty(0, dtype=dt), module.empty(0)),
            "values-double": lambda: (module.empty(0, dtype=module.double), module.zeros(0).long()),
            "list": lambda: [module.empty(0, dtype=dt), module.empty(0, dtype=module.long)],
            "tensor": lambda: module.empty(0),
            "one": lambda: (module.empty(0),),
            "number": lambda: 3,
            "noncontig": lambda: (module.zeros(shape + (2,), dtype=dt)[..., 0],
                                  module.zeros(shape + (2,), dtype=module.long)[..., 0]),
            "input-grad": lambda: (module.empty(0, dtype=dt), module.empty(0, dtype=module.long)),
        }  # fmt: skip
    shape, dt = tuple(result.shape), getattr(module, str(result.dtype)[6:])
    return {
        "empty": lambda: module.empty(0, dtype=dt),
        "empty-double": lambda: module.empty(0, dtype=module.double),
        "empty-long": lambda: module.empty(0, dtype=module.long),
        "empty-bool": lambda: module.empty(0, dtype=module.bool),
        "wrong-shape": lambda: module.ones(7, dtype=dt),
        "same-numel": lambda: module.ones(1, result.numel(), dtype=dt),
        "wrong-shape-cast": lambda: module.ones(7, dtype=module.double),
        "noncontig": lambda: module.ones(shape + (2,), dtype=dt)[..., 0],
        "tuple": lambda: (module.empty(0),),
        "list": lambda: [module.empty(0)],
        "number": lambda: 3,
        "float": lambda: 2.5,
        "grad": lambda: module.ones(shape, dtype=dt, requires_grad=dt.is_floating_point),
        "input-grad": lambda: module.empty(0, dtype=dt),
    }


def _seen(module: Any, value: Any) -> Any:
    if isinstance(value, tuple):
        return type(value).__name__, tuple(_seen(module, v) for v in value)
    if isinstance(value, module.Tensor):
        seen = (str(value.dtype), tuple(value.shape), value.stride(), value._version, value.requires_grad)
        return (*seen, repr(np.round(np.array(value.tolist(), dtype=np.float64), 5).tolist()))  # to 5 digits
    return repr(value)


def _run(module: Any, call: str, made: Any, grad: bool) -> tuple:
    env = _inputs(module, grad)
    env["r"] = out = made()
    if call.startswith(("rand", "normal", "bernoulli", "multinomial")):
        module.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval("T." + call.replace("OUTS", "out=r").replace("OUT", "out=r"), env)  # noqa: S307
        except (RuntimeError, TypeError, ValueError, NotImplementedError) as error:
            return type(error).__name__, str(error).split("\n")[0]
    shown = [str(w.message).split(" (Triggered")[0] for w in caught]
    same = (
        [x is y for x, y in zip(result, out, strict=False)]
        if isinstance(out, (tuple, list))
        else result is out
    )
    return same, _seen(module, result), _seen(module, out), shown


def test_out_of_every_function_as_torch() -> None:
    """Each call of EVERY with each kind of out= (a third of them for the unary and binary ops,
    which share their declarations by family), by impl and by torch: the same result, out's value
    (to 5 digits), dtype, shape, strides, version and flags, the same warnings, or the same error."""
    differ, tried = {}, set()
    for number, call in enumerate(EVERY):
        base = call.replace(", OUTS", "").replace(", OUT", "").removesuffix(".zero_()")
        result = eval("T." + base, _inputs(torch, False))  # noqa: S307
        kinds = list(_outs(torch, result))
        for label in kinds if number >= len(UNARY) + len(BINARY) else kinds[number % 3 :: 3]:
            tried.add((call, label))
            seen = [
                _run(module, call, _outs(module, result)[label], grad=label == "input-grad")
                for module in (torch, impl)
            ]
            if seen[0] != seen[1]:
                differ[(call, label)] = seen
    unexpected = {key: seen for key, seen in differ.items() if key not in KNOWN}
    assert not unexpected
    assert differ.keys() == KNOWN.keys() & tried  # each known divergence still is one


def test_out_declared_where_torch_takes_it() -> None:
    """impl's functions taking out= (``api.OUT``) are those of its names torch's signatures give
    out= (its generated _VariableFunctions.pyi, or a Python function's own parameter)."""
    stubs = ast.parse(
        pathlib.Path(torch.__file__).with_name("_C").joinpath("_VariableFunctions.pyi").read_text()
    )
    takes = {
        node.name for node in stubs.body
        if isinstance(node, ast.FunctionDef) and "out" in [a.arg for a in node.args.kwonlyargs]
    }  # fmt: skip
    names = [n for n, f in impl._api.FUNCTIONS.items() if callable(f) and not isinstance(f, type)]
    for name in names:
        fn = getattr(torch, name, None)
        if fn is not None and name not in takes and not isinstance(fn, type(torch.add)):
            try:
                if "out" in inspect.signature(fn).parameters:
                    takes.add(name)
            except (TypeError, ValueError):
                pass
    assert set(impl._api.OUT) == takes & set(names)


def test_inference_out_written_outside_the_mode_as_torch() -> None:
    """An inference tensor as out outside inference mode: written, then torch's in-place refusal
    (the autograd refusal first where an input requires grad); a tuple out too."""

    def run(lib: Any) -> list:
        with lib.inference_mode():
            c = lib.zeros(3)
        s = lib.full((2,), 3.0)
        seen = []
        for call in (lambda: lib.mul(s, s, out=c), lambda: lib.mul(s.clone().requires_grad_(), s, out=c),
                     lambda: lib.sum(s, 0, out=c), lambda: lib.zeros(2, out=c),
                     lambda: lib.max(lib.ones(2, 2), 0, out=(c, lib.zeros(2, dtype=lib.int64)))):
            try:
                call()
                seen.append("written")
            except RuntimeError as e:
                seen.append(str(e))
            seen.append(c.tolist())
        return seen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(impl) == run(torch)


def test_out_of_ops_without_derivative_records_as_torch() -> None:
    """out= of an op torch's autograd has no derivative for, an input or a non-leaf out requiring
    grad: out's NotImplemented node (a view's AsStridedBackward0 over its base's CopySlices), its
    edges, its backward's error; an out that is a leaf requiring grad refused; argsort refused as sort."""

    def run(lib: Any) -> list:
        a, b = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True), lib.tensor([[1.0, -2.0], [3.0, 0.0]])
        x = lib.zeros(2, 2, requires_grad=True)
        calls = [
            lambda: lib.softmax(a, 1, out=lib.zeros(2, 2, requires_grad=True)),
            lambda: lib.softmax(a, 1, out=x * 1), lambda: lib.softmax(b, 1, out=x * 1),
            lambda: lib.softmax(a, 1, out=lib.zeros(2, 2).t()), lambda: lib.softmax(a, 1, out=(x * 1).t()),
            lambda: lib.log_softmax(a, 1, out=lib.zeros(2, 4)[:, :2]),
            lambda: lib.argsort(a, stable=True, dim=1, out=lib.empty(0, dtype=lib.long)),
            lambda: lib.floor_divide(a, 2, out=lib.empty(0)),
            lambda: lib.floor_divide(a, a, out=lib.empty(0)),
            lambda: lib.heaviside(b, a, out=lib.empty(0)), lambda: lib.diag(a, out=lib.empty(0)),
            lambda: lib.diag(a[0], 1, out=lib.zeros(3)), lambda: lib.heaviside(a, b, out=(x * 1)[0]),
        ]  # fmt: skip
        seen: list = []
        for call in calls:
            try:
                o = call()
            except RuntimeError as e:
                seen.append(str(e))
                continue
            node = o.grad_fn
            nodes = [node, *(n for n, _ in node.next_functions)]
            nodes += [n for n, _ in nodes[1].next_functions]
            seen.append((o.requires_grad, o._version, [type(n).__name__ for n in nodes], o.tolist()))
            try:
                o.sum().backward()
            except RuntimeError as e:
                seen.append(str(e))
        return seen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(impl) == run(torch)


def test_view_out_resized_as_torch() -> None:
    """A view as out, resized: contiguous from its offset in its base's storage, which grows where
    too short; its base reads what is written then and later."""

    def run(lib: Any) -> list:
        seen = []
        for k in range(6):
            base = lib.zeros(2, 3)
            o = [base[0], base[1], base.t()[0], base[:, 1:], base.t(), base[1, 1:]][k]
            r = lib.add(lib.ones(2, 2), 1, out=o)
            seen.append((base.tolist(), o.tolist(), o.stride(), o.storage_offset(), o._base is base, r is o))
            o.fill_(5)
            seen.append(base.tolist())
        return seen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(impl) == run(torch)
