"""impl's 'cuda' device on machines without a GPU: tests/helpers/cupy_standin.py (a numpy-backed test double
of cupy, faithful to what impl's plumbing depends on) is installed as impl's cupy by the ``cuda``
fixture (on a machine where impl found a real cupy with a CUDA device, that cupy instead: see
``cupy_under_test``), and

- the stand-in itself is held to cupy's documented behaviour (a host array never reaches it
  implicitly, nor it numpy), so that a numpy-only call on device arrays fails here as on a GPU;
- device plumbing is checked against torch wherever torch's CPU build shows it: its refusals without
  CUDA, ``torch.device`` parsing, printing and equality, ``numpy()``'s errors, the graph ``.cuda()``,
  ``.to('cuda')`` and ``.cpu()`` record (torch's ``_to_copy``: ToCopyBackward0, as ``.to(dtype)``
  shows on CPU), leaf flags, where ``.grad`` lives, torch's error for operands on two devices;
- values on 'cuda' are checked against torch on cpu through the oracle: every program the
  conformance suite draws for ops, modules, losses, optimisers and tensor semantics runs with its
  leaves and modules on 'cuda' and must agree with torch on values, dtypes, gradients, grad_fn
  graphs, warnings and errors (the reference is the pinned CPU build: traces hold no devices), and
  every tensor it leaves behind, gradients and parameters included, must be on 'cuda'.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import conformance.test_accumulation as accumulation
import conformance.test_errors as errors
import conformance.test_functions as functions
import conformance.test_grad_modes as grad_modes
import conformance.test_higher_order as higher_order
import conformance.test_hook_order as hook_order
import conformance.test_leaf_rules as leaf_rules
import conformance.test_module_hooks as module_hooks
import conformance.test_modules as modules
import conformance.test_ops as ops
import conformance.test_optim as optim
import conformance.test_retain_graph as retain_graph
import conformance.test_tensors as tensors
import impl
import impl._xp
import impl.nn
import impl.optim
from oracle.backends import Backend, InProcess
from oracle.differential import check
from oracle.interpreter import _Run, run
from oracle.program import Program
from oracle.reference import reference
from tests.helpers import ROOT, cupy_standin, parity

CUPY_CHOICE = "ORACLE_CUPY"  # auto (default), real or standin


def cupy_under_test() -> Any:
    """The cupy these tests run impl's 'cuda' on: the real one where impl imported it and it sees a
    CUDA device (a GPU machine: benchmarks/gpu_check.sh), else the stand-in. ``ORACLE_CUPY=standin``
    forces the stand-in; ``ORACLE_CUPY=real`` insists on the real one (an error without it)."""
    choice = os.environ.get(CUPY_CHOICE, "auto")
    if choice not in ("auto", "real", "standin"):
        raise ValueError(f"{CUPY_CHOICE}={choice!r}: expected auto, real or standin")
    if choice != "standin" and impl._xp._cupy is not None and impl._xp.cuda_available():
        return impl._xp._cupy
    if choice == "real":
        raise RuntimeError(f"{CUPY_CHOICE}=real but impl found no cupy with a CUDA device")
    return cupy_standin


cp = cupy_under_test()
REAL_CUPY = cp is not cupy_standin
# tests that compare impl without cupy with torch without CUDA: the torch of a GPU machine has it
TORCH_WITHOUT_CUDA = pytest.mark.skipif(
    torch.cuda.is_available(), reason="compares impl without cupy with a torch without CUDA; this one has it"
)


@pytest.fixture
def cuda(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``cp`` (the stand-in, or the real cupy of a GPU machine) as impl's cupy for one test
    (``impl._xp._cupy`` is the one place impl keeps its cupy: ``namespace_of``/``namespace_for``
    read it on every call), restored afterwards."""
    monkeypatch.setattr(impl._xp, "_cupy", cp)
    return cp


@pytest.fixture
def no_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    """impl as on a machine without cupy, whatever this one has."""
    monkeypatch.setattr(impl._xp, "_cupy", None)


def outcome(f: Callable[[], Any]) -> tuple[str, str]:
    try:
        return "ok", repr(f())
    except BaseException as exc:  # noqa: BLE001  (AssertionError is what torch raises here)
        return type(exc).__name__, str(exc)


# -- the stand-in behaves as cupy does where impl depends on it ---------------------------------


def test_standin_refuses_implicit_conversion_and_copies_on_get() -> None:
    x = cp.asarray(np.arange(3.0))
    assert not isinstance(x, np.ndarray)
    for convert in (np.asarray, np.array, lambda a: np.add(a, np.ones(3)), lambda a: np.ones(3) * a):
        with pytest.raises(TypeError) as caught:
            convert(x)
        assert "Implicit conversion" in str(caught.value) or "Unsupported type" in str(caught.value)
    host = x.get()
    assert type(host) is np.ndarray and host.tolist() == [0.0, 1.0, 2.0]
    host[0] = 9.0
    assert x.get()[0] == 0.0  # a copy, not a view of the device memory
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.concatenate([x, np.ones(1)])


def test_standin_dispatches_numpy_calls_to_itself() -> None:
    x = cp.asarray(np.array([[1.0, -2.0], [3.0, 4.0]]))
    results = (np.exp(x), np.add(x, 1.0), x * np.float32(2), np.concatenate([x, x]), np.sum(x), x.sum(), x[0])
    for result in results:
        assert type(result) is cp.ndarray  # reductions and scalar indexing give 0-d arrays
    assert np.concatenate([x, x]).shape == (4, 2) and np.sum(x).ndim == 0
    assert float(x[1, 0]) == 3.0 and int(x[1, 1]) == 4 and x[0, 1].item() == -2.0
    with pytest.raises(ValueError, match="size 1"):
        x.item()
    if not REAL_CUPY:  # (a real cupy may have one)
        with pytest.raises(TypeError):
            np.linalg.eigvals(x)  # no cupy counterpart in the stand-in: numpy's refusal


def test_standin_indexes_as_cupy() -> None:
    """Index arrays from the host are copied to the device; integer ones wrap around (cupy's
    documented difference from numpy, which raises)."""
    x = cp.asarray(np.arange(3.0))
    assert x[np.array([1, 3])].tolist() == [1.0, 0.0]
    assert x[[-4]].tolist() == [2.0]
    assert x[cp.asarray(np.array([True, False, True]))].tolist() == [0.0, 2.0]
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray"):
        x[...] = np.ones(3)
    assert cp.cuda.runtime.getDeviceCount() >= 1


# -- device plumbing against torch --------------------------------------------------------------

CUDA_REQUESTS: dict[str, Callable[[Any], Any]] = {
    "zeros": lambda t: t.zeros(2, device="cuda"),
    "tensor": lambda t: t.tensor([1.0], device="cuda"),
    "cuda": lambda t: t.ones(2).cuda(),
    "to": lambda t: t.ones(2).to("cuda"),
    "to_device": lambda t: t.ones(2, requires_grad=True).to(t.device("cuda", 0)),
}


@TORCH_WITHOUT_CUDA
@pytest.mark.parametrize("request_", CUDA_REQUESTS, ids=list(CUDA_REQUESTS))
def test_without_cupy_cuda_is_refused_as_by_torch(request_: str, no_cupy: None) -> None:
    assert not torch.cuda.is_available()  # the pinned reference is the CPU build
    make = CUDA_REQUESTS[request_]
    assert outcome(lambda: make(impl)) == outcome(lambda: make(torch))
    assert impl.cuda.is_available() is False


CUDA_MODULE_CALLS: dict[str, Callable[[Any], Any]] = {
    "is_available": lambda t: t.cuda.is_available(),
    "device_count": lambda t: t.cuda.device_count(),
    "current_device": lambda t: t.cuda.current_device(),
    "synchronize": lambda t: t.cuda.synchronize(),
    "manual_seed": lambda t: t.cuda.manual_seed(0),
    "manual_seed_all": lambda t: t.cuda.manual_seed_all(0),
}


@TORCH_WITHOUT_CUDA
@pytest.mark.parametrize("call", CUDA_MODULE_CALLS, ids=list(CUDA_MODULE_CALLS))
def test_cuda_module_without_cupy_as_torch_without_cuda(call: str, no_cupy: None) -> None:
    """torch.cuda's functions on a machine without CUDA: a count of 0, nothing for seeding, torch's
    AssertionError where a device is needed."""
    assert outcome(lambda: CUDA_MODULE_CALLS[call](impl)) == outcome(lambda: CUDA_MODULE_CALLS[call](torch))


def test_cuda_module_with_a_device(cuda: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a device: one device, index 0 current; synchronize waits on cupy's device."""
    waited = []
    monkeypatch.setattr(cp.cuda.runtime, "deviceSynchronize", lambda: waited.append(True))
    assert impl.cuda.is_available() and impl.cuda.device_count() == 1 and impl.cuda.current_device() == 0
    assert impl.cuda.synchronize() is None and waited == [True]


DEVICE_SPECS = ["cpu", "cuda", "cuda:0", "cuda:1", "cpu:0", "gpu", "gpu:0", "cuda:01", " cuda", "", "CUDA"]


@pytest.mark.parametrize("spec", DEVICE_SPECS)
def test_device_objects_parse_print_and_compare_as_torch(spec: str, no_cupy: None) -> None:
    def seen(lib: Any) -> Any:
        d = lib.device(spec)
        return repr(d), str(d), d.type, d.index, [d == lib.device(s) for s in DEVICE_SPECS[:5]], d == spec

    assert outcome(lambda: seen(impl)) == outcome(lambda: seen(torch))
    # device(0), the accelerator's device 0: refused without one (a torch with CUDA has one)
    for args in (("cuda", 0), ("cpu", -1), *([] if torch.cuda.is_available() else [(0,)])):
        assert outcome(lambda a=args: repr(impl.device(*a))) == outcome(lambda a=args: repr(torch.device(*a)))


def test_cuda_tensors_report_their_device(cuda: Any) -> None:
    x = impl.arange(6.0, device="cuda").reshape(2, 3)
    expected = torch.device("cuda", 0)
    made = (x * 2, x.sum(), x.t(), x[0], impl.zeros_like(x), x.new_ones(2), impl.tensor(1, device="cuda"))
    for t in (x, *made):
        assert type(t._data) is cp.ndarray
        assert repr(t.device) == repr(expected) and str(t.device) == str(expected) and t.is_cuda
    assert repr(x.sum()) == "tensor(15., device='cuda:0')"
    assert not impl.ones(2).is_cuda and type(impl.ones(2)._data) is np.ndarray


CREATIONS: dict[str, Callable[[Any, Any, str], Any]] = {
    "zeros": lambda t, x, d: t.zeros(2, 3, device=d),
    "empty": lambda t, x, d: t.empty(2, 3, device=d),
    "full": lambda t, x, d: t.full((2,), 3.0, device=d),
    "arange": lambda t, x, d: t.arange(3, device=d),
    "linspace": lambda t, x, d: t.linspace(0, 1, 5, device=d),
    "eye": lambda t, x, d: t.eye(2, 3, device=d),
    "rand": lambda t, x, d: t.rand(2, device=d),
    "randn": lambda t, x, d: t.randn(2, device=d),
    "randint": lambda t, x, d: t.randint(0, 5, (3,), device=d),
    "tensor": lambda t, x, d: t.tensor([[1, 2]], device=d),
    "as_tensor": lambda t, x, d: t.as_tensor(np.ones(2), device=d),
    "as_tensor_of_tensor": lambda t, x, d: t.as_tensor(t.ones(2, requires_grad=True), device=d),
    "tensor_of_tensor": lambda t, x, d: t.tensor(x.detach().clone()),  # on the device of its data
    "zeros_like": lambda t, x, d: t.zeros_like(x),
    "full_like": lambda t, x, d: t.full_like(x, 2.0),
    "rand_like": lambda t, x, d: t.rand_like(x),
    "randn_like": lambda t, x, d: t.randn_like(x),
    "randn_like_strided": lambda t, x, d: t.randn_like(x.t()),
    "new_tensor": lambda t, x, d: x.new_tensor([1.0]),
    "new_zeros": lambda t, x, d: x.new_zeros(2),
    "clone": lambda t, x, d: x.clone(),
    "type": lambda t, x, d: t.ones(2).type(f"torch.{d}.DoubleTensor".replace(".cpu", "")),
    "type_as": lambda t, x, d: t.arange(2).type_as(x),
}


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
@pytest.mark.parametrize("make", CREATIONS, ids=list(CREATIONS))
def test_creation_on_cuda(make: str, cuda: Any) -> None:
    """Tensors made on 'cuda' (by a device argument, or like a 'cuda' tensor) are there, with the
    dtype and shape torch gives them on cpu; ``type()`` names the device as torch does
    (``torch.cuda.FloatTensor``)."""
    made = CREATIONS[make](impl, impl.ones(2, 3, device="cuda"), "cuda")
    spec = CREATIONS[make](torch, torch.ones(2, 3), "cpu")
    assert made.is_cuda and type(made._data) is cp.ndarray
    assert (str(made.dtype), tuple(made.shape)) == (str(spec.dtype), tuple(spec.shape))
    assert made.type() == spec.type().replace("torch.", "torch.cuda.", 1)
    assert made.cpu().type() == spec.type()


def test_numpy_of_a_cuda_tensor_raises_torchs_error(cuda: Any) -> None:
    """torch's tensor_to_numpy (torch/csrc/utils/tensor_numpy.cpp) checks the device before grad:
    TypeError "can't convert cuda:0 device type tensor to numpy. ..."; ``np.asarray`` is
    ``numpy()`` (Tensor.__array__). ``numpy(force=True)`` copies to the host."""
    message = (
        "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
        "memory first."
    )
    x = impl.ones(2, device="cuda", requires_grad=True)
    for convert in (lambda: x.numpy(), lambda: np.asarray(x), lambda: x.detach().numpy()):
        assert outcome(convert) == ("TypeError", message)
    assert x.numpy(force=True).tolist() == [1.0, 1.0]
    assert x.detach().cpu().numpy().tolist() == [1.0, 1.0]


def test_numpy_refusal_for_grad_follows_torch(no_cupy: None) -> None:
    """On CPU, the grad check torch makes after the device check: only while grad mode is on."""
    for lib in (impl, torch):
        a = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            assert a.numpy().tolist() == [1.0, 1.0]
    for convert in (lambda a: a.numpy(), np.asarray):
        assert outcome(lambda f=convert: f(impl.ones(2).requires_grad_())) == outcome(
            lambda f=convert: f(torch.ones(2).requires_grad_())
        )


def graph(t: Any) -> tuple:
    """A tensor's flags and its grad_fn with the names of the nodes after it."""
    fn = t.grad_fn
    nexts = [(n.name() if n else None, i) for n, i in fn.next_functions] if fn else None
    return t.is_leaf, t.requires_grad, fn.name() if fn else None, nexts


def test_moves_record_torchs_to_copy_node(cuda: Any) -> None:
    """``.cuda()``/``.to('cuda')``/``.cpu()`` are torch's ``_to_copy``, whose node torch's CPU
    build shows through ``.to(dtype)``: a tensor that requires grad becomes a non-leaf with a
    ToCopyBackward0 after its AccumulateGrad (seed 002); one that does not stays a leaf. A move
    into another dtype too is one node; a move to where the tensor is returns it."""
    spec = graph(torch.ones(2, requires_grad=True).to(torch.float64))
    assert spec == (False, True, "ToCopyBackward0", [("torch::autograd::AccumulateGrad", 0)])
    a = impl.ones(2, requires_grad=True)
    for moved in (a.cuda(), a.to("cuda"), a.to(impl.device("cuda:0")), a.to("cuda", impl.float64)):
        assert graph(moved) == spec and moved.is_cuda
    assert a.to("cuda", impl.float64).dtype == impl.float64
    back = a.cuda().cpu()
    assert graph(back) == (False, True, "ToCopyBackward0", [("ToCopyBackward0", 0)]) and not back.is_cuda
    plain = impl.ones(2).cuda()
    assert graph(plain) == graph(torch.ones(2).to(torch.float64)) == (True, False, None, None)
    on_cuda = impl.ones(2, device="cuda")
    same = torch.ones(2)
    assert same.cpu() is same and same.to("cpu") is same
    assert on_cuda.cuda() is on_cuda and on_cuda.to("cuda") is on_cuda and a.cpu() is a and a.to("cpu") is a


def test_seed_002_cuda_leaf_runs_as_torch_documents(cuda: Any) -> None:
    """Seed 002's is_leaf example (the torch docs' Tensor.is_leaf example): on a GPU,
    ``torch.rand(10, requires_grad=True).cuda()`` is no leaf, ``torch.rand(10).cuda()``, the same
    with ``.requires_grad_()`` and ``torch.rand(10, requires_grad=True, device="cuda")`` are. Torch's
    CPU build skips those lines; the rest must print as torch prints it."""
    script = (ROOT / "examples" / "seeds" / "seed002_cuda_leaf.py").read_text()
    on_cpu = parity.run(script, torch).splitlines()
    documented = [on_cpu[0], "False", on_cpu[1], "True", "True", "True", *on_cpu[2:]]
    if torch.cuda.is_available():  # a GPU machine's torch runs those lines itself
        documented = on_cpu
    assert parity.run(script, impl).splitlines() == documented


def test_cuda_device_arguments(cuda: Any) -> None:
    """``.cuda()`` takes the device as an index, a name or a device; a device index the machine
    lacks (the stand-in has one device) fails as CUDA's check does ("CUDA error: invalid device
    ordinal", c10's C10_CUDA_CHECK wording of cudaErrorInvalidDevice), moving or not."""
    c, g = impl.ones(2), impl.ones(2, device="cuda")
    for moved in (c.cuda(0), c.cuda("cuda:0"), c.cuda(impl.device("cuda")), c.to("cuda:0")):
        assert moved.device == impl.device("cuda", 0)
    refusals = [lambda: c.cuda(1), lambda: c.to("cuda:1"), lambda: g.cuda(2)]
    refusals.append(lambda: impl.ones(1, device="cuda:9"))
    for refused in refusals:
        with pytest.raises(RuntimeError, match="^CUDA error: invalid device ordinal"):
            refused()


def test_moves_keep_layout_and_values(cuda: Any) -> None:
    """A copy keeps a dense tensor's strides (torch's preserve_format), whichever way it moves."""
    x = impl.arange(6.0).reshape(2, 3).t()
    expected = torch.arange(6.0).reshape(2, 3).t().to(torch.float64)
    for moved in (x.cuda(), x.cuda().cpu(), x.to("cuda", impl.float64)):
        assert moved.stride() == expected.stride() and moved.tolist() == expected.tolist()


def test_gradients_flow_back_across_devices(cuda: Any) -> None:
    """The gradient of a moved tensor goes back to the leaf's device; ``.grad`` lives where the
    tensor lives; values as torch computes them (on CPU)."""
    a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, 0.25, 2.0], requires_grad=True)
    (a * w).exp().sum().backward()
    b = impl.tensor([1.0, -2.0, 3.0], requires_grad=True)
    v = impl.tensor([0.5, 0.25, 2.0], requires_grad=True, device="cuda")
    y = (b.cuda() * v).exp().sum()
    y.backward()
    assert y.is_cuda and not b.grad.is_cuda and v.grad.is_cuda
    np.testing.assert_allclose(b.grad.tolist(), a.grad.tolist(), rtol=1e-6)
    np.testing.assert_allclose(v.grad.tolist(), w.grad.tolist(), rtol=1e-6)


def test_backward_of_a_cpu_copy_of_a_cuda_leaf(cuda: Any) -> None:
    w = impl.ones(3, device="cuda", requires_grad=True)
    (w.cpu() * impl.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert w.grad.is_cuda and w.grad.tolist() == [1.0, 2.0, 3.0]


INDEXED: dict[str, Callable[[Any, Any, Any], Any]] = {
    "getitem": lambda t, x, i: x[i],
    "getitem_dim1": lambda t, x, i: x[:, i],
    "setitem": lambda t, x, i: x.__setitem__((slice(None), i), 1.0),
    "gather": lambda t, x, i: x.gather(1, i.reshape(1, -1)),
    "index_select": lambda t, x, i: x.index_select(1, i),
    "index_fill": lambda t, x, i: x.index_fill(1, i, 2.0),
    "nll_loss": lambda t, x, i: t.nn.functional.nll_loss(x, i),
    "cross_entropy": lambda t, x, i: t.nn.functional.cross_entropy(x, i),
}


@pytest.mark.parametrize("read", INDEXED, ids=list(INDEXED))
def test_indices_out_of_range_on_cuda_raise_torchs_error(read: str, cuda: Any) -> None:
    """cupy wraps an index out of range around where numpy raises: on 'cuda' impl must still
    refuse it with torch's error."""

    def attempt(lib: Any, dev: str) -> tuple[str, str]:
        x = lib.arange(6.0).reshape(2, 3).to(dev)
        return outcome(lambda: INDEXED[read](lib, x, lib.tensor([0, 5]).to(dev)).tolist())

    assert attempt(impl, "cuda") == attempt(torch, "cpu")
    assert attempt(impl, "cuda")[0] != "ok"


@pytest.mark.parametrize("shape", [(), (1,)])
def test_var_without_degrees_of_freedom_backward_on_cuda(shape: tuple, cuda: Any) -> None:
    """var_backward's nan/inf where the input is its mean (no degrees of freedom left) are made
    on the input's device."""
    x = torch.full(shape, -2.0, requires_grad=True)
    y = impl.full(shape, -2.0, requires_grad=True, device="cuda")
    warned = []
    for t in (x, y):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t.var().backward()
        warned.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
    assert warned[0] == warned[1] and y.grad.is_cuda
    np.testing.assert_equal(y.grad.tolist(), x.grad.tolist())


COPIES: dict[str, tuple[str, str]] = {"cuda_into_cpu": ("cuda", "cpu"), "cpu_into_cuda": ("cpu", "cuda")}


@pytest.mark.parametrize("way", COPIES, ids=list(COPIES))
def test_copy_across_devices_as_torchs_copy(way: str, cuda: Any) -> None:
    """``copy_`` is torch's cross-device copy: values land on the destination's device, the node
    and its edges are those torch's (CPU) copy_ records, and src's gradient goes back to src's
    device; indexing assignment of a CPU 0-d value into a 'cuda' tensor goes through it too."""
    source, destination = COPIES[way]
    graphs, grads = [], []
    for lib, src_dev, dst_dev in ((torch, "cpu", "cpu"), (impl, source, destination)):
        src = lib.tensor([1.0, 2.0, 3.0], device=src_dev, requires_grad=True)
        out = lib.zeros(3, 2, device=dst_dev).t()[0]
        out.copy_(src)
        graphs.append(graph(out))
        (out * lib.tensor([1.0, -2.0, 3.0], device=dst_dev)).sum().backward()
        grads.append((out.detach().cpu().tolist(), src.grad.tolist()))
        if lib is impl:
            assert out.device.type == destination and src.grad.device.type == source
    assert graphs[0] == graphs[1] and grads[0] == grads[1]
    value = impl.tensor(5.0, requires_grad=True)
    target = impl.ones(3, device="cuda", requires_grad=True).clone()
    target[0] = value
    target.sum().backward()
    assert target.is_cuda and not value.grad.is_cuda and value.grad.item() == 1.0


def test_load_state_dict_of_cpu_tensors_into_a_cuda_module(cuda: Any) -> None:
    saved = impl.nn.Linear(3, 2).state_dict()
    module = impl.nn.Linear(3, 2).cuda()
    parameters = list(module.parameters())
    assert str(module.load_state_dict(saved)) == "<All keys matched successfully>"
    assert list(module.parameters()) == parameters  # copied into, not replaced
    for name, p in module.named_parameters():
        assert p.is_cuda and p.is_leaf and p.tolist() == saved[name].tolist()


MIXES: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda g, c: g + c,
    "radd": lambda g, c: c + g,
    "mul_": lambda g, c: g.mul_(c),
    "where": lambda g, c: impl.where(c > 0, g, c),
    "maximum": lambda g, c: impl.maximum(g, c),
    "matmul": lambda g, c: g @ c,
    "cat": lambda g, c: impl.cat([g, c]),
}


@pytest.mark.parametrize("mix", MIXES, ids=list(MIXES))
def test_operands_on_two_devices_raise_torchs_error(mix: str, cuda: Any) -> None:
    """TensorIterator's check (aten/src/ATen/TensorIterator.cpp, compute_types): "Expected all
    tensors to be on the same device, but found at least two devices, <first> and <other>!", the
    first operand's device named first."""
    g, c = impl.ones(3, device="cuda"), impl.ones(3)
    first, other = ("cpu", "cuda:0") if mix in ("radd", "where") else ("cuda:0", "cpu")
    message = (
        f"Expected all tensors to be on the same device, but found at least two devices, {first} and {other}!"
    )
    assert outcome(lambda: MIXES[mix](g, c)) == ("RuntimeError", message)


UNBROADCASTABLE: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda t, g, c: g + c,
    "mul_": lambda t, g, c: g.mul_(c),
    "where": lambda t, g, c: t.where(c > 0, g, 1.0),
}


@pytest.mark.parametrize("mix", UNBROADCASTABLE, ids=list(UNBROADCASTABLE))
def test_shapes_are_checked_before_devices(mix: str, cuda: Any) -> None:
    """TensorIterator computes the broadcast shape before it compares devices (build():
    compute_shape, then compute_types): operands that neither broadcast nor share a device get
    torch's shape error, which torch's CPU build shows for the same shapes."""
    got = outcome(lambda: UNBROADCASTABLE[mix](impl, impl.ones(3, device="cuda"), impl.ones(2)))
    assert got == outcome(lambda: UNBROADCASTABLE[mix](torch, torch.ones(3), torch.ones(2)))


CPU_SCALARS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "mul": lambda t, x, s: x * s,
    "radd": lambda t, x, s: s + x,
    "div": lambda t, x, s: x / s,
    "rsub_": lambda t, x, s: (s - x).mul_(s),
    "pow": lambda t, x, s: x.pow(s),
    "where": lambda t, x, s: t.where(x > 0, x, s),
    "maximum": lambda t, x, s: t.maximum(s, x),
    "second_order": lambda t, x, s: t.autograd.grad((x * s * s).sum(), s, create_graph=True)[0] * x,
}


@pytest.mark.parametrize("op", CPU_SCALARS, ids=list(CPU_SCALARS))
def test_cpu_scalar_tensors_join_cuda_ops(op: str, cuda: Any) -> None:
    """TensorIterator lets a 0-dim CPU tensor join an op on another device (TensorIterator.cpp,
    compute_types: "CPU scalars"), and the engine moves its 0-dim gradient back to the CPU
    (validate_outputs): result on 'cuda', graph, values and gradients as torch's on cpu, each
    gradient on its tensor's device."""
    seen = []
    for lib, dev in ((torch, "cpu"), (impl, "cuda")):
        x = lib.tensor([0.5, -1.5, 2.0], device=dev, requires_grad=True)
        s = lib.tensor(1.5, requires_grad=True)
        y = CPU_SCALARS[op](lib, x, s)
        y.sum().backward()
        seen.append((y.tolist(), graph(y), x.grad.tolist(), s.grad.tolist()))
        if lib is impl:
            assert y.is_cuda and x.grad.is_cuda and not s.grad.is_cuda
    np.testing.assert_allclose(seen[1][0], seen[0][0], rtol=1e-6)
    assert seen[1][1] == seen[0][1]
    np.testing.assert_allclose(seen[1][2], seen[0][2], rtol=1e-6)
    np.testing.assert_allclose(seen[1][3], seen[0][3], rtol=1e-6)


def _returning(lib: Any, make_grad: Callable[[Any], Any]) -> Any:
    """A custom Function, identity forward, whose backward returns ``make_grad(grad)``."""

    class Returning(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 1

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return make_grad(grad)

    return Returning


def test_engine_refuses_a_gradient_on_another_device(cuda: Any) -> None:
    """torch's validate_outputs: a gradient on another device than its input is refused unless it
    is 0-dim, with torch's message (torch on the CPU shows it with a 'meta' gradient)."""
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as theirs:
        _returning(torch, lambda g: torch.ones(3, device="meta")).apply(x).sum().backward()
    y = impl.ones(3, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError) as ours:
        _returning(impl, lambda g: impl.ones(3)).apply(y).sum().backward()
    devices = ("expected device cpu but got meta", "expected device cuda:0 but got cpu")
    assert str(ours.value) == str(theirs.value).replace(*devices)
    assert y.grad is None


def test_engine_moves_a_0_dim_gradient_to_its_input_device(cuda: Any) -> None:
    """A 0-dim gradient on another device is moved to the input's (validate_outputs' grad.to)."""
    x = impl.tensor(2.0, requires_grad=True)
    _returning(impl, lambda g: g.cuda() * 3).apply(x).backward()
    assert not x.grad.is_cuda and x.grad.item() == 3.0


def test_materialized_gradients_are_made_on_the_output_device(cuda: Any) -> None:
    """A custom Function's output that got no gradient gets zeros of its shape, dtype and device
    (InputMetadata::zeros_like), here on 'cuda'; values as torch's on cpu."""
    seen = {}

    def run(lib: Any, dev: str) -> list:
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x * 2, x * 3

            @staticmethod
            def backward(ctx: Any, ga: Any, gb: Any) -> Any:
                seen[dev] = (ga.device.type, gb.device.type, gb.tolist())
                return ga * 2 + gb * 3

        x = lib.ones(2, device=dev, requires_grad=True)
        Two.apply(x)[0].sum().backward()
        return x.grad.tolist()

    assert run(impl, "cuda") == run(torch, "cpu")
    assert seen["cuda"] == ("cuda", "cuda", seen["cpu"][2])


# -- nn and optim on 'cuda' ---------------------------------------------------------------------


def _network(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(32, 3))


def _copy_parameters(source: Any, target: Any) -> None:
    for p, q in zip(source.parameters(), target.parameters(), strict=True):
        with impl.no_grad():
            q.copy_(impl.tensor(p.detach().numpy()))


@pytest.mark.parametrize("loss", ["CrossEntropyLoss", "MSELoss", "NLLLoss"])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW"])
def test_module_cuda_trains_as_torch_on_cpu(loss: str, optimizer: str, cuda: Any) -> None:
    """``module.cuda()`` moves every parameter (same Parameter objects, leaves); forward,
    loss, backward and three optimiser steps on 'cuda' give torch's values on cpu; ``.grad`` and
    optimiser state live on 'cuda'; ``module.cpu()`` brings parameters and grads back."""
    torch.manual_seed(0)
    ref = _network(torch)
    net = _network(impl)
    _copy_parameters(ref, net)
    before = list(net.parameters())
    assert net.cuda() is net and list(net.parameters()) == before
    x = np.random.default_rng(0).standard_normal((4, 1, 4, 4)).astype(np.float32)
    target = np.array([0, 2, 1, 2])
    values = {}
    for lib, model, dev in ((torch, ref, "cpu"), (impl, net, "cuda")):
        opt = getattr(lib.optim, optimizer)(model.parameters(), lr=0.1)
        criterion = getattr(lib.nn, loss)()
        inputs = lib.tensor(x, device=dev)
        goal = lib.zeros(4, 3, device=dev) if loss == "MSELoss" else lib.tensor(target, device=dev)
        for _ in range(3):
            opt.zero_grad()
            out = model(inputs)
            value = criterion(lib.nn.functional.log_softmax(out, 1) if loss == "NLLLoss" else out, goal)
            value.backward()
            opt.step()
        values[lib] = value, opt, [p.detach().cpu().tolist() for p in model.parameters()]
    (value, opt, params), (ref_value, _, ref_params) = values[impl], values[torch]
    assert value.is_cuda and value.grad_fn.name() == ref_value.grad_fn.name()
    np.testing.assert_allclose(value.item(), ref_value.item(), rtol=1e-5, atol=1e-6)
    for got, want in zip(params, ref_params, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert all(p.is_cuda and p.is_leaf and p.grad.is_cuda for p in net.parameters())
    state = [v for s in opt.state.values() for v in s.values() if isinstance(v, impl.Tensor)]
    assert all(v.is_cuda for v in state if v.dim() > 0)  # (torch keeps Adam's step count on cpu)
    net.cpu()
    assert all(not p.is_cuda and not p.grad.is_cuda and p.is_leaf for p in net.parameters())
    assert net(impl.tensor(x)).device == impl.device("cpu")


def test_module_on_cpu_refuses_cuda_input(cuda: Any) -> None:
    linear = impl.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        linear(impl.ones(1, 3, device="cuda"))


# -- ops the drawn programs below may not reach, one call each, to second order --------------

X_VALUES = [[0.5, -1.25, 2.0], [1.5, -0.75, 3.0]]  # no ties, no zeros: every op differentiable here
OP_CALLS: dict[str, Callable[[Any, Any, str], Any]] = {
    "ceil": lambda t, x, d: x.ceil(),
    "floor": lambda t, x, d: x.floor(),
    "round": lambda t, x, d: x.round(),
    "trunc": lambda t, x, d: x.trunc(),
    "sign": lambda t, x, d: x.sign(),
    "reciprocal": lambda t, x, d: x.reciprocal(),
    "cos": lambda t, x, d: x.cos(),
    "sigmoid": lambda t, x, d: x.sigmoid(),
    "cumsum": lambda t, x, d: x.cumsum(1),
    "flip": lambda t, x, d: x.flip([0]),
    "permute": lambda t, x, d: x.permute(1, 0) * x.t(),
    "squeeze_dims": lambda t, x, d: x.reshape(1, 2, 1, 3).squeeze((0, 2)) ** 2,
    "amax": lambda t, x, d: x.amax(1),
    "amin": lambda t, x, d: x.amin(0),
    "max": lambda t, x, d: x.max() * x,
    "max_dim": lambda t, x, d: x.max(1)[0] ** 2,
    "min": lambda t, x, d: x.min() * x,
    "min_dim": lambda t, x, d: x.min(0)[0] ** 2,
    "mean_dim": lambda t, x, d: x.mean(1) ** 2,
    "prod": lambda t, x, d: x.prod(),
    "prod_dim": lambda t, x, d: x.prod(1),
    "mv": lambda t, x, d: x.mv(t.tensor([1.0, 2.0, -3.0], dtype=t.float64, device=d)) ** 2,
    "div_floor": lambda t, x, d: x.div(t.tensor(0.5, dtype=t.float64, device=d), rounding_mode="floor"),
    "masked_fill_tensor": lambda t, x, d: x.masked_fill(x > 1, (x.sum() * 0.5).reshape(())),
    "masked_scatter": lambda t, x, d: (x * 2).masked_scatter(x > 1, x.flip([1]) ** 2),
    "masked_select": lambda t, x, d: x.masked_select(x > 1) ** 2,
    "index_fill": lambda t, x, d: (x * x).index_fill(1, t.tensor([2, 0], device=d), -1.0),
    "index_fill_tensor": lambda t, x, d: (x * x).index_fill(1, t.tensor([1], device=d), x.sum()),
    "bce_logits_pos_weight": lambda t, x, d: t.nn.functional.binary_cross_entropy_with_logits(
        x, x.sigmoid(), pos_weight=t.tensor([2.0, 0.5, 1.0], dtype=t.float64, device=d), reduction="none"
    ),
    "threshold": lambda t, x, d: t.nn.functional.threshold(x * x, 1.0, -2.0),
    "threshold_": lambda t, x, d: t.nn.functional.threshold(x * x, 1.0, -2.0, inplace=True),
    "alias": lambda t, x, d: x[...] * x,
}


@pytest.mark.parametrize("op", OP_CALLS, ids=list(OP_CALLS))
def test_op_on_cuda_matches_torch_to_second_order(op: str, cuda: Any) -> None:
    """One op on a 'cuda' leaf against torch on cpu: value, dtype, grad_fn name, the gradient
    (made with create_graph, so its graph is on 'cuda' too) and the gradient of its sum."""
    seen = []
    for lib, dev in ((torch, "cpu"), (impl, "cuda")):
        x = lib.tensor(X_VALUES, dtype=lib.float64, device=dev, requires_grad=True)
        y = OP_CALLS[op](lib, x, dev)
        (grad,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        if grad.requires_grad:
            grad.sum().backward()
        second = None if x.grad is None else x.grad.tolist()
        first = grad.detach().cpu().tolist()
        seen.append((y.detach().cpu().tolist(), str(y.dtype), y.grad_fn.name(), first, second))
        if lib is impl:
            assert y.is_cuda and grad.is_cuda and (x.grad is None or x.grad.is_cuda)
    (want, *want_flags), (got, *got_flags) = seen[0][:3], seen[1][:3]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got_flags == want_flags
    for got_grad, want_grad in zip(seen[1][3:], seen[0][3:], strict=True):
        np.testing.assert_equal(got_grad is None, want_grad is None)
        if want_grad is not None:
            np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12)


# -- every conformance program on 'cuda' against torch on cpu -----------------------------------

STRATEGIES: dict[str, Callable[[], st.SearchStrategy[Program]]] = {
    "unary": ops.unary_ops,
    "binary": ops.binary_ops,
    "ternary": lambda: st.sampled_from(ops.TERNARY).flatmap(ops.ternary_ops),
    "reductions": ops.reductions,
    "matrix": ops.matrix_ops,
    "gather_cat_softmax": ops.gather_and_friends,
    "sorting": ops.sorting_ops,
    "indexing": ops.indexing,
    "inplace": ops.inplace_ops,
    "shape_ops": lambda: st.sampled_from(ops.SHAPE_OPS).flatmap(ops.shape_ops),
    "index_ops": lambda: st.sampled_from(ops.INDEX_OPS).flatmap(ops.index_ops),
    "module_trees": modules.trees,
    "module_api": modules.module_api,
    "accumulated": modules.accumulated,
    "losses": lambda: st.sampled_from(modules.LOSS_CASES).flatmap(lambda case: modules.losses(*case)),
    "dropouts": modules.dropouts,
    "conv": modules.conv_layers,
    "activations": lambda: st.sampled_from(modules.ACTIVATION_LAYERS).flatmap(modules.activation_layers),
    "embedding": lambda: st.sampled_from(modules.EMBEDDING_OPTIONS).flatmap(modules.embedding_layers),
    "sgd": lambda: optim.training_loops(("SGD",)),
    "adam": lambda: optim.training_loops(("Adam", "AdamW")),
    "dtype_inference": tensors.inferred,
    "promotion": tensors.promoted,
    "views": tensors.views,
    "hooks_stacked": hook_order.stacked_hooks,
    "hooks_replacing": hook_order.replacing_hooks,
    "hooks_mixed": hook_order.mixed_hooks,
    "module_hooks": module_hooks.hooked_trees,
    "accumulation": accumulation.repeated_backward,
    "backward_inputs": accumulation.backward_with_inputs,
    "non_scalar_backward": accumulation.non_scalar_backward,
    "leaves": leaf_rules.created_leaves,
    "retain_graph": retain_graph.saving_graphs,
    "double_backward": higher_order.double_backward,
    "grad_chains": higher_order.grad_chains,
    "custom_functions": lambda: functions.functions(double=True),
    "grad_modes": lambda: grad_modes.modes(("no_grad", "enable_grad", "set_grad_enabled")),
    "inplace_in_graphs": errors.inplace_in_graphs,
}
CUDA = InProcess("impl", impl, "cuda")


def left_behind(value: Any) -> Iterator[Any]:
    """The tensors a program left bound to a name: tensors and their grads, modules' parameters
    and buffers with their grads, the items of tuples and lists."""
    if isinstance(value, impl.Tensor):
        yield value
        if value._grad is not None:  # (not .grad: a stale no_grad view refuses autograd reads)
            yield value._grad
    elif isinstance(value, impl.nn.Module):
        for t in [*value.parameters(), *value.buffers()]:
            yield from left_behind(t)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from left_behind(v)


def names_after(program: Program, backend: Backend) -> dict[str, Any]:
    """What ``program``'s names are bound to after it ran on ``backend``: the interpreter's run,
    its state's names kept as the run closes."""
    kept: dict[str, Any] = {}
    close = _Run.close

    def keep(state: _Run, grad_enabled: bool) -> None:
        kept.update(state.names)
        close(state, grad_enabled)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Run, "close", keep)
        run(program, backend)
    return kept


@pytest.mark.parametrize("family", STRATEGIES, ids=list(STRATEGIES))
def test_conformance_programs_on_cuda_agree_with_torch(family: str, cuda: Any) -> None:
    reference_backend = reference()

    @settings(
        max_examples=25,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(program=STRATEGIES[family]())
    def agree(program: Program) -> None:
        check(program, CUDA, reference_backend)
        made_here = {s.out for s in program.steps if s.kind == "op" and not s.names_read()}  # tensor(0)
        left = [v for n, v in names_after(program, CUDA).items() if n not in made_here]
        host = [t for v in left for t in left_behind(v) if not t.is_cuda]
        assert not host, f"tensors left on the host by a 'cuda' run: {host[:3]}"

    agree()
