"""Planted faults that break torch.autograd.gradcheck and gradgradcheck themselves (rules GCHK-*)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


def _module() -> Any:
    """impl.autograd.gradcheck the module (its function of the same name shadows it as an attribute:
    the one torch.autograd.gradcheck calls, as gradgradcheck, is a copy bound by impl's package)."""
    import impl.autograd  # noqa: F401

    return sys.modules["impl.autograd.gradcheck"]


@fault({"GCHK-001": "returned differs"})
def gradcheck_ignores_atol() -> Iterator[None]:
    """gradcheck compares the Jacobians with its default atol (1e-5), whatever atol it was given."""
    def allclose(original: Callable) -> Callable:
        return lambda a, b, rtol, atol: original(a, b, rtol, min(atol, 1e-5))

    with patched(_module(), "_allclose", allclose):
        yield


@fault({"GCHK-001": "message"})
def gradcheck_mismatch_indices_swapped() -> Iterator[None]:
    """A Jacobian mismatch is reported for output <input index> with respect to input <output index>."""
    def message(original: Callable) -> Callable:
        return lambda analytical, numerical, output_idx, input_idx, **kwargs: original(
            analytical, numerical, input_idx, output_idx, **kwargs)

    with patched(_module(), "_notallclose_msg", message):
        yield


@fault({"GCHK-001": "hook", "GCHK-002": "hook"})
def gradcheck_undefined_grad_check_skipped() -> Iterator[None]:
    """gradcheck skips its check of undefined output gradients (a backward failing on one passes)."""
    with patched(_module(), "_undefined_backward", lambda _original: lambda *args: None):
        yield


@fault({"GCHK-001": "error"})
def gradcheck_true_where_torch_raises() -> Iterator[None]:
    """gradcheck swallows a Jacobian mismatch of the slow mode and returns True."""
    module = _module()

    def lenient(original: Callable) -> Callable:
        def check(*args: Any) -> bool:
            try:
                return original(*args)
            except module.GradcheckError:
                return True

        return check

    with patched(module, "_slow_gradcheck", lenient):
        yield


@fault({"GCHK-001": "hook"})
def gradcheck_fast_mode_without_slow_account() -> Iterator[None]:
    """A fast-mode mismatch is reported without the slow-mode Jacobians recomputed for it (so the
    backward calls of that recomputation are missing too)."""
    with patched(_module(), "_slow_mode_account", lambda _original: lambda *args, **kwargs: ""):
        yield


@fault({"GCHK-001": "warning"})
def gradcheck_float32_silent() -> Iterator[None]:
    """gradcheck does not warn of inputs requiring grad that are not float64."""
    def quiet(original: Callable) -> Callable:
        def check(inputs: tuple) -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                original(inputs)

        return check

    with patched(_module(), "_check_inputs", quiet):
        yield


@fault({"GCHK-002": "returned differs"})
def gradgradcheck_gradients_constant() -> Iterator[None]:
    """gradgradcheck computes the gradients it checks without create_graph: they are constants."""
    module = _module()

    def flat(original: Callable) -> Callable:
        def grad(*args: Any, **kwargs: Any) -> Any:
            kwargs["create_graph"] = False
            return original(*args, **kwargs)

        return grad

    def gradgradcheck(original: Callable) -> Callable:
        def check(*args: Any, **kwargs: Any) -> Any:
            with patched(module, "_grad", flat):
                return original(*args, **kwargs)

        return check

    with patched(sys.modules["impl.autograd"], "gradgradcheck", gradgradcheck):
        yield


@fault({"GCHK-001": "value"})
def gradcheck_forward_jacobian_doubled() -> Iterator[None]:
    """check_forward_ad compares the finite differences with twice the Jacobian forward AD gives."""
    def doubled(original: Callable) -> Callable:
        def jacobian(*args: Any, **kwargs: Any) -> tuple:
            return tuple(tuple(j * 2 for j in per_input) for per_input in original(*args, **kwargs))

        return jacobian

    with patched(_module(), "_forward_jacobian", doubled):
        yield
