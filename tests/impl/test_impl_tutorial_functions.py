"""Functions tutorials call that impl gained (isclose, diff, atleast_*, tril/triu_indices,
is_floating_point/is_complex, get/set_rng_state, get/set_num_threads): values, dtypes, grad_fn
names and errors against torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import impl
from tests.impl.test_impl_device import outcome


def shown(module: Any, call: str) -> tuple[str, str]:
    """What ``call`` gives on ``module``: its repr with the grad_fn names of each result and of the
    nodes after it, or its error."""

    def run() -> Any:
        result = eval(call, {"torch": module, "nan": float("nan"), "inf": float("inf")})
        results = result if isinstance(result, tuple) else (result,)
        nodes = [r.grad_fn for r in results if getattr(r, "grad_fn", None) is not None]
        names = [(type(n).__name__, [type(c).__name__ for c, _ in n.next_functions if c]) for n in nodes]
        return result, names

    return outcome(run)


X = "torch.tensor([[1., 2, 4], [4, 5, 9]], requires_grad=True)"
CALLS = [
    "torch.isclose(torch.tensor([1., 2, nan, inf, -inf, 1e-9]), torch.tensor([1., 2.001, nan, inf, inf, 0]))",
    "torch.isclose(torch.tensor([1., nan]), torch.tensor([1., nan]), equal_nan=True)",
    "torch.tensor([1., 2]).isclose(torch.tensor([1., 2.1]), rtol=0, atol=0.2)",
    "torch.isclose(torch.tensor([[1.], [2.]]), torch.tensor([1., 2.]))",
    "torch.isclose(torch.tensor([100, 101]), torch.tensor([101, 100]), rtol=0.01, atol=0)",
    "torch.isclose(torch.tensor([1.]), torch.tensor([1.], dtype=torch.float64))",
    "torch.isclose(torch.tensor([1.]), torch.tensor([1.]), rtol=-1)",
    "torch.isclose(torch.tensor([1.]), 1.0)",
    f"torch.diff({X})",
    f"torch.diff({X}, dim=0)",
    f"torch.diff({X}, n=2)",
    f"torch.diff({X}, n=0)",
    f"torch.diff({X}, n=5)",
    f"{X}.diff(prepend=torch.zeros(2, 1))",
    f"{X}.diff(append=torch.ones(2, 2), n=3)",
    "torch.diff(torch.tensor([True, False, False]))",
    "torch.diff(torch.tensor([1, 5, 2]))",
    "torch.diff(torch.tensor(1.))",
    f"torch.diff({X}, n=-1)",
    f"torch.diff({X}, n=0, dim=5)",  # n=0: a copy, no dim check, prepend ignored
    f"torch.diff({X}, n=0, prepend=torch.zeros(2, 1))",
    f"torch.diff({X}, dim=0, prepend=torch.zeros(2, 1))",
    f"torch.diff({X}, dim=2)",
    "torch.tril_indices(3, 3, dtype=torch.int16)",
    "torch.triu_indices(3, 3, dtype=torch.int32)",
    f"torch.diff({X}, prepend=torch.zeros(2))",
    "torch.atleast_1d(torch.tensor(2., requires_grad=True))",
    "torch.atleast_2d(torch.tensor([1., 2]))",
    "torch.atleast_3d(torch.ones(2, requires_grad=True))",
    "torch.atleast_3d(torch.ones(2, 2, requires_grad=True))",
    "torch.atleast_3d(torch.tensor(2., requires_grad=True))",
    "torch.atleast_1d(torch.tensor(1.), torch.ones(2))",
    "torch.atleast_2d([torch.tensor(1.)])",
    "torch.atleast_1d(3)",
    "torch.atleast_2d(torch.ones(1), 3)",
    "torch.atleast_3d()",
    "torch.atleast_1d(torch.ones(2, 2, 2, 2))",
    "torch.tril_indices(3, 3)",
    "torch.triu_indices(3, 4, 1)",
    "torch.tril_indices(3, 3, -1, dtype=torch.int32)",
    "torch.tril_indices(3, 3, dtype=torch.float32)",
    "torch.tril_indices(-1, 3)",
    "torch.triu_indices(2, -3)",
    "torch.triu_indices(4, 2, -1)",
    "torch.tril_indices(0, 0)",
    "torch.tril_indices(3, 5, 10)",
    "torch.is_floating_point(torch.ones(1))",
    "torch.is_floating_point(torch.ones(1, dtype=torch.int64))",
    "torch.is_floating_point(3)",
    "torch.is_complex(torch.ones(1))",
    "torch.ones(1).is_complex()",
    "torch.set_num_threads(0)",
    "torch.set_num_threads(1.5)",
    "torch.get_rng_state().shape",
    "torch.get_rng_state().dtype",
    "torch.set_rng_state(torch.zeros(3))",
]


@pytest.mark.parametrize("call", CALLS)
def test_as_torch(call: str) -> None:
    assert shown(impl, call) == shown(torch, call)


def test_diff_gradient() -> None:
    grads = []
    for module in (torch, impl):
        x = module.tensor([[1.0, 2, 4, 7], [4, 5, 9, 1]], requires_grad=True)
        module.diff(x, n=2, prepend=module.ones(2, 1)).pow(2).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_rng_state_round_trip() -> None:
    """The state read before a draw, set again, draws the same numbers, as torch's (whose state
    impl's loads)."""
    for module in (torch, impl):
        module.manual_seed(3)
    state = impl.get_rng_state()
    assert state.tolist() == torch.get_rng_state().tolist()
    first = impl.rand(5)
    impl.set_rng_state(state)
    assert impl.rand(5).tolist() == first.tolist() == torch.rand(5).tolist()


def test_num_threads_read_back() -> None:
    before = impl.get_num_threads()
    impl.set_num_threads(3)
    assert impl.get_num_threads() == 3
    impl.set_num_threads(before)


def test_determinism_as_torch() -> None:
    """use_deterministic_algorithms's argument checks (torch's are its C function's:
    torch._C._set_deterministic_algorithms, called here so that torch's Python wrapper does not
    import torch._inductor.config, ~5 s), fill_uninitialized_memory's, and what determinism fills
    the legacy constructors' sizes and empty's with; each state restored as the test found it."""
    cases = [
        ((True,), {}), ((False,), {"warn_only": True}), ((1,), {}), ((None,), {}), (("x",), {}),
        ((True,), {"warn_only": 1}), ((True,), {"warn_only": True}),
    ]
    calls = [
        "torch.Tensor(2)", "torch.LongTensor(3)", "torch.zeros(1).new(2)", "torch.empty(2, 0)",
        "torch.empty(2, requires_grad=True)", "torch.empty(3, dtype=torch.int16)",
        "torch.empty(1, dtype=torch.bool)",
    ]
    setters = {torch: torch._C._set_deterministic_algorithms, impl: impl.use_deterministic_algorithms}
    modules = (torch, impl)
    try:
        for args, kwargs in cases:
            seen = [
                outcome(lambda m=m, a=args, k=kwargs: (setters[m](*a, **k), m.get_deterministic_debug_mode()))
                for m in (torch, impl)
            ]
            assert seen[0] == seen[1], (args, kwargs)
            if impl.are_deterministic_algorithms_enabled():  # (else torch's memory is as it was)
                assert [shown(impl, call) for call in calls] == [shown(torch, call) for call in calls]
        fill = "fill_uninitialized_memory"
        for value in (False, 1, True):
            seen = [outcome(lambda m=m, v=value: setattr(m.utils.deterministic, fill, v)) for m in modules]
            assert seen[0] == seen[1]
            assert getattr(impl.utils.deterministic, fill) is getattr(torch.utils.deterministic, fill)
        assert shown(impl, "torch.empty(2)") == shown(torch, "torch.empty(2)")
    finally:
        torch._C._set_deterministic_algorithms(False)
        torch.utils.deterministic.fill_uninitialized_memory = True
        impl.use_deterministic_algorithms(False)
        impl.utils.deterministic.fill_uninitialized_memory = True
