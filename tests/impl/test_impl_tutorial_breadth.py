"""What teaching programs (d2l.ai, "eat pytorch in 20 days", Karpathy's makemore lectures, the
PyTorch tutorials) call that impl gained: values, dtypes, grad_fn names, printed forms and errors
against torch, case by case in one loop."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import impl
from impl import _cpu as impl_cpu
from impl._ops import unary_math
from tests.impl.test_impl_device import outcome


def shown(module: Any, call: str) -> tuple[str, str]:
    """What ``call`` gives on ``module`` (``np`` is numpy): its repr, the grad_fn names of each
    result, or its error."""

    def run() -> Any:
        result = eval(call, {"torch": module, "np": np})
        results = result if isinstance(result, tuple) else (result,)
        tensors = [r for r in results if isinstance(r, module.Tensor)]
        return result, [type(r.grad_fn).__name__ for r in tensors if r.grad_fn]

    kind, text = outcome(run)
    return kind, text.replace("<class 'impl.", "<class 'torch.")


X = "torch.arange(12., requires_grad=True).reshape(3, 4)"
CALLS = [
    # index items torch reads as sequences: ranges, tuples, numpy arrays, floats truncated
    f"{X}[range(2)]",
    f"{X}[range(0, 3, 2), 1]",
    f"{X}[range(3), range(1, 4)]",
    f"{X}[:, range(0, 4, 2)]",
    f"{X}[((0, 1), 0)]",
    f"{X}[np.array([0, 2])]",
    f"{X}[np.array([0.7, 1.9])]",
    f"{X}[[0.7, 1.9]]",
    f"{X}[np.array([True, False, True])]",
    f"{X}[np.array([1, 2], dtype=np.int32), 0]",
    f"{X}[range(0)]",
    f"{X}[range(4)]",
    # torch.fill_ and torch.zero_, the function spellings of the in-place methods
    "torch.fill_(torch.ones(2, requires_grad=True) * 2, 5)",
    "torch.fill_(torch.ones(2), torch.tensor(3.))",
    "torch.fill_(torch.ones(2), torch.ones(2))",
    "torch.fill_(torch.ones(2, dtype=torch.int32), 2.7)",
    "torch.zero_(torch.ones(2, requires_grad=True) * 2)",
    "torch.nn.functional.one_hot(torch.tensor([0, 1]), torch.tensor(3))",
    # huber_loss's weight, its errors and HuberLoss's printed form (MOD-004 checks the values)
    "torch.nn.functional.huber_loss(torch.tensor([0., 2, -3], requires_grad=True), torch.zeros(3),"
    " weight=torch.tensor([1., 2, 3]))",
    "torch.nn.functional.huber_loss(torch.tensor([0., 2]), torch.zeros(2), weight=torch.ones(2),"
    " reduction='none')",
    "torch.nn.functional.huber_loss(torch.tensor([0., 2]), torch.zeros(2), weight=torch.ones(3))",
    "torch.nn.functional.huber_loss(torch.tensor([0., 2]), torch.zeros(2), delta=0)",
    "torch.nn.functional.huber_loss(torch.tensor([0., 2]), torch.zeros(2), reduction='avg')",
    "torch.nn.HuberLoss(delta='a')",
    "torch.nn.HuberLoss(reduction='sum', delta=0.5), torch.nn.HuberLoss().delta",
    "torch.nn.SmoothL1Loss(beta=0.5), torch.nn.SmoothL1Loss(size_average=False).reduction",
    "torch.nn.functional.smooth_l1_loss(torch.ones(2), torch.ones(2), beta=-1.)",
    "torch.nn.functional.smooth_l1_loss(torch.ones(2), torch.ones(2), beta=0., reduction='avg')",
    # histc (makemore's histograms of tanh activations; OPS-008 checks small inputs)
    "torch.histc(torch.linspace(-1, 1, 1001), bins=10, min=-1, max=1)",
    "torch.histc(torch.linspace(-1, 1, 1001, dtype=torch.float16), bins=7, min=-0.9, max=0.8)",
    "torch.histc(torch.tensor([1., float('nan')]), bins=3), torch.histc(torch.tensor([1.]), 2, float('nan'))",
    "torch.histc(torch.tensor([-float('inf'), 1., 2.]), bins=2)",
    "torch.histc(torch.tensor([1., 2, 5], requires_grad=True), 2, torch.tensor(2.), 2)",
    "torch.histc(torch.tensor([1., 2]), 2.5)",
    "torch.histc(torch.tensor([1., 2]), 3, out=torch.empty(0)),"
    " torch.histc(torch.ones(2), out=torch.ones(3))",
    "torch.histc(torch.tensor([1., 2]), 3, out=torch.empty(3, dtype=torch.float64))",
    # prelu and PReLU (MOD-007 checks values and gradients): printed forms, graph, errors
    "torch.nn.PReLU(), torch.nn.PReLU(3, init=0.1).weight, torch.nn.PReLU(dtype=torch.float64).weight",
    "[type(f).__name__ for f, _ in torch.nn.PReLU()(torch.ones(1, 2, requires_grad=True))"
    ".grad_fn.next_functions]",
    "torch.nn.functional.prelu(torch.ones(()), torch.ones(2))",
    "torch.nn.functional.prelu(torch.ones(2, 3), torch.ones(2, dtype=torch.float64))",
    "torch.nn.functional.prelu(torch.ones(2, 3), torch.ones(1, 3))",
    "torch.prelu(torch.ones(2, 3, dtype=torch.int64), torch.ones(3, dtype=torch.int64))",
    "torch.nn.functional.prelu(torch.ones(2, 3), 0.25)",
    # the lazy batch norms (MOD-014 checks their first calls)
    "torch.nn.LazyBatchNorm2d(), torch.nn.LazyBatchNorm1d(affine=False).weight,"
    " torch.nn.LazyBatchNorm1d().bias",
    "torch.nn.LazyBatchNorm2d()(torch.ones(2, 3))",
    "torch.nn.LazyBatchNorm1d(track_running_stats=False)"
    ".load_state_dict(torch.nn.BatchNorm1d(3).state_dict())",
    # torch.take's errors (OPS-005 checks its values and gradients)
    "torch.take(torch.zeros(0), torch.tensor([0]))",
    "torch.take(torch.ones(2), [1])",
    "torch.take(torch.tensor(5.), torch.tensor([0, -1]))",
    # the classes' names, as type() and repr show them
    "type(torch.ones(1)), torch.Tensor, type(torch.ones(1).shape), torch.dtype, type(torch.float32)",
    "type(torch.device('cpu')), type(torch.finfo(torch.float32)), type(torch.iinfo(torch.int8))",
]


def test_as_torch() -> None:
    assert [shown(impl, call) for call in CALLS] == [shown(torch, call) for call in CALLS]


def test_index_writes_with_sequences() -> None:
    for key in (range(0, 3, 2), (range(3), range(1, 4)), np.array([2, 0]), ([0.2, 2.9], 1)):
        results = []
        for module in (torch, impl):
            x = module.zeros(3, 4)
            x[key] = 1.0
            results.append(x.tolist())
        assert results[0] == results[1], key


def test_float_of_a_tensor_that_requires_grad_warns() -> None:
    """float() (and complex(), through it) of a tensor that requires grad warns, once per process
    (every time with set_warn_always); int(), item() and format() do not."""
    conversions = ("float(t)", "complex(t)", "float(t * 2)", "int(t)", "t.item()", "f'{t:.2f}'",
                   "float(t.detach())")
    seen = []
    for module in (torch, impl):
        module.set_warn_always(True)
        try:
            t = module.tensor(2.5, requires_grad=True)
            for call in conversions:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    value = eval(call, {"t": t})
                seen.append((call, value, [(w.category, str(w.message)) for w in caught]))
        finally:
            module.set_warn_always(False)
    assert seen[: len(conversions)] == seen[len(conversions) :]


ACCELERATOR = [
    "torch.accelerator.is_available(), torch.accelerator.current_accelerator()",
    "torch.accelerator.device_count()",
    "torch.accelerator.current_accelerator(check_available=True)",
    "torch.accelerator.current_device_index()",
    "torch.accelerator.synchronize()",
    "torch.accelerator.set_device_index(0)",
]


@pytest.mark.skipif(impl.cuda.is_available() or torch.cuda.is_available(), reason="where neither has one")
def test_accelerator_as_a_cpu_build_of_torch() -> None:
    assert [shown(impl, call) for call in ACCELERATOR] == [shown(torch, call) for call in ACCELERATOR]


STORAGE = [
    "str(torch.arange(6).view(2, 3).t().storage())",
    "str(torch.tensor([1.5, 0.1]).storage()), str(torch.tensor([True]).storage())",
    "str(torch.zeros(0).storage())",
    "(lambda s: (len(s), s[2], s[-1], s.size(), s.dtype, s.element_size(), s.nbytes(), list(s)))"
    "(torch.arange(6)[2:].storage())",
    "(lambda a: (a.storage().__setitem__(0, 7), a.storage().__setitem__(slice(1, 3), 9), a))"
    "(torch.arange(4))",
    "torch.arange(3).storage()[3]",
    "torch.arange(3).storage()[-4]",
    "torch.arange(3).storage()[0:1]",
    "torch.arange(3).storage()[1.0]",
    "type(torch.ones(1).storage())",
]


def test_storage_as_torch() -> None:
    """Tensor.storage(): the memory a tensor (a view: its base) lies in, shared, printed, indexed
    and refused as torch's TypedStorage; its deprecation warning once per process."""
    for module in (torch, impl):
        module.storage._reset_warn_typed_storage_removal()
    caught = []
    for module in (torch, impl):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            module.ones(1).storage()
            module.ones(1).storage().tolist()
        caught.append([(w.category, str(w.message), w.filename) for w in seen])
    assert caught[0] == caught[1] and len(caught[0]) == 1 and caught[0][0][2] == __file__
    assert [shown(impl, call) for call in STORAGE] == [shown(torch, call) for call in STORAGE]


def test_tanh_backward_is_torchs_bits() -> None:
    """tanh_backward ``g * (1 - out * out)`` with torch's fused ``1 - out * out`` (FMA builds), in
    float32 and float64, on the vector lanes and the scalar tail (Karpathy's backprop-ninja lecture
    compares its manual tanh gradient with torch's bit for bit)."""
    if impl_cpu.cpu_capability() == "default":
        pytest.skip("torch's baseline build does not fuse it")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for n in (5, 37, 1000):
            g, out = (np.tanh(rng.standard_normal(n)).astype(dtype) for _ in range(2))
            expected = torch.ops.aten.tanh_backward(torch.from_numpy(g), torch.from_numpy(out)).numpy()
            got = unary_math.tanh_backward(impl.tensor(g), impl.tensor(out)).numpy()
            assert np.array_equal(got, expected), (dtype, n)
