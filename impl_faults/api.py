"""Planted faults that break NumPy's keyword spellings and out= (rules API-*)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

from impl_faults import fault, patched


def _signatures() -> Any:
    from impl import _signatures

    return _signatures


@fault({"API-001": "error"})
def numpy_alias_ignored() -> Iterator[None]:
    """axis= and keepdims= are dropped instead of read as dim and keepdim (a scan then lacks its dim)."""

    def renamed(original: Callable) -> Callable:
        def rename(self: Any, nargs: int, kwargs: dict) -> dict:
            return original(self, nargs, {k: v for k, v in kwargs.items() if k not in ("axis", "keepdims")})

        return rename

    with patched(_signatures().Spellings, "renamed", renamed):
        yield


@fault({"API-002": "shape differs"})
def out_not_resized() -> Iterator[None]:
    """out= of another shape keeps its shape: the result is broadcast into it where it can be."""

    def into(original: Callable) -> Callable:
        def write(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
            out = kwargs["out"]
            if not hasattr(out, "_data"):  # (no tensor: refused)
                return original(name, fn, args, kwargs)
            shape, data = tuple(out.shape), out._data
            result = original(name, fn, args, kwargs)
            if shape != tuple(out.shape) and out.numel() and len(shape) and shape[0]:
                out._data = data
            return result

        return write

    with patched(_signatures(), "_into", into):
        yield


@fault({"API-002": "warning"})
def out_resize_warning_missing() -> Iterator[None]:
    """A non-empty out= of another shape is resized without torch's UserWarning."""
    with patched(_signatures(), "warnings", lambda _original: SimpleNamespace(warn=lambda *a, **k: None)):
        yield


@fault({"API-002": "error"})
def out_dtype_cast_where_torch_refuses() -> Iterator[None]:
    """An out whose dtype must be the result's (neg, mm, softmax, sort ...) takes any dtype the
    result casts to, as TensorIterator's casting ops do."""

    def check(original: Callable) -> Callable:
        def cast(self: Any, name: str, out: Any, result: Any) -> None:
            if self.fit == "same" and _signatures()._can_cast(result.dtype, out.dtype):
                return None
            return original(self, name, out, result)

        return cast

    with patched(_signatures().Out, "check", check):
        yield


@fault({"API-002": "warning"})
def cast_resize_warns_once() -> Iterator[None]:
    """A TensorIterator op (add, exp, eq ...) resizing a non-empty out of another dtype warns once,
    not twice as torch's TensorIterator does when it also casts."""

    def fit_to(original: Callable) -> Callable:
        def once(self: Any, name: str, out: Any, result: Any, common: Any = None) -> None:
            return original(dataclasses.replace(self, twice=False), name, out, result, common)

        return once

    with patched(_signatures().Out, "fit_to", fit_to):
        yield


@fault({"API-002": "grad_fn"})
def out_without_derivative_unrecorded() -> Iterator[None]:
    """out= of an op torch has no derivative for (softmax, floor_divide, heaviside ...) with an input
    requiring grad leaves out without history, instead of torch's NotImplemented node."""
    from impl._ops import inplace

    with patched(inplace, "_record_unimplemented", lambda _original: lambda name, out, tensors: None):
        yield


@fault({"API-002": "value"})
def resized_view_out_transposed() -> Iterator[None]:
    """A view given as out= and resized is laid out column-major in its base's storage (row-major
    in torch's): the base reads the result's elements in another order."""

    def resize(original: Callable) -> Callable:
        def transposed(out: Any, shape: tuple, order: str = "C") -> None:
            original(out, shape, "F" if order == "C" else "C")

        return transposed

    with patched(_signatures(), "_resize_view", resize):
        yield


@fault({"API-002": "message"})
def out_of_another_type_refused_plainly() -> Iterator[None]:
    """An out= of another type (a number, a list ...) is refused as 'argument 'out' must be Tensor'
    everywhere: no list of signatures where torch's parser gives one, no number taken where torch's
    parser takes numbers as tensors (add, mul ...)."""

    def plain(original: Callable) -> Callable:
        def refuse(name: str, policy: Any, out: Any, args: tuple, kwargs: dict) -> Any:
            if not isinstance(out, tuple if policy.parts else _signatures().Tensor):
                wanted = "tuple of Tensors" if policy.parts else "Tensor"
                raise TypeError(f"{name}(): argument 'out' must be {wanted}, not {type(out).__name__}")
            return original(name, policy, out, args, kwargs)

        return refuse

    with patched(_signatures(), "_out_tensors", plain):
        yield


@fault({"API-002": "differs"})
def spaced_out_reshaped() -> Iterator[None]:
    """arange's and linspace's out holding as many elements as the result is made 1-d, not kept in
    its shape."""

    def fit_to(original: Callable) -> Callable:
        def flat(self: Any, name: str, out: Any, result: Any, common: Any = None) -> None:
            return original(dataclasses.replace(self, keeps_numel=False), name, out, result, common)

        return flat

    with patched(_signatures().Out, "fit_to", fit_to):
        yield


def _creation() -> Any:
    from impl import _creation

    return _creation


def _dtypes() -> Any:
    from impl import dtypes

    return dtypes


@fault({"API-003": "dtype differs"})
def float_list_default_ignored() -> Iterator[None]:
    """tensor() of Python floats (alone or among ints) makes float32 whatever the default dtype."""

    def inferred(original: Callable) -> Callable:
        def infer(data: Any) -> Any:
            found = original(data)
            return _dtypes().float32 if found is _dtypes().get_default_dtype() else found

        return infer

    with patched(_creation(), "_inferred", inferred):
        yield


@fault({"API-003": "error"})
def integer_default_dtype_accepted() -> Iterator[None]:
    """set_default_dtype(torch.int64) is taken instead of refused with torch's TypeError."""

    def accepting(original: Callable) -> Callable:
        def set_default(d: Any) -> None:
            original(_dtypes().float64 if d in (_dtypes().int64, _dtypes().bool_) else d)

        return set_default

    import impl  # the name programs call (impl's namespace holds the function itself)

    with patched(impl, "set_default_dtype", accepting):
        yield


@fault({"API-004": "error"})
def float_dims_truncated() -> Iterator[None]:
    """A float where a dim goes is truncated to an int (``int(dim)``), not refused: ``x.sum(1.0)``
    sums over dim 1 where torch's parser raises its TypeError."""
    from impl import _tensor

    def make(original: Callable) -> Callable:
        return lambda value, first=True: int(value) if isinstance(value, float) else original(value, first)

    with patched(_tensor, "as_int", make):
        yield


@fault({"API-004": "message"})
def keywords_worded_as_positions() -> Iterator[None]:
    """A refused argument given by keyword is worded as if given by position (``cumsum(): argument
    'dim' (position 2) must be int``, where torch says ``argument 'dim' must be int``)."""

    def make(original: Callable) -> Callable:
        def wrong(name: str, params: list, args: tuple, kwargs: dict | None = None) -> TypeError | None:
            error = original(name, params, args, kwargs)
            if error is None or "(position" in str(error) or not kwargs:
                return error
            position = 1 + next(i for i, (_, p, _) in enumerate(params) if p in kwargs)
            return TypeError(str(error).replace("' must", f"' (position {position}) must", 1))

        return wrong

    with patched(_signatures(), "_wrong_argument", make):
        yield


@fault({"API-005": "message"})
def parsed_after_running() -> Iterator[None]:
    """A call is not checked against torch's signatures before it runs: what impl's code takes
    passes (``torch.tril(x, 'x')`` reaches the kernel), what it refuses gets Python's words."""

    def make(original: Callable) -> Callable:
        return lambda self, args, kwargs: (args, kwargs)

    with patched(_signatures()._Precheck, "check", make):
        yield


@fault({"API-005": "message"})
def hidden_signatures_listed() -> Iterator[None]:
    """The deprecated signatures torch hides are listed among add's, sub's, addcmul's and
    addcdiv's in their "invalid combination" errors (and the one-signature form is lost)."""

    def make(original: Callable) -> Callable:
        def listed(name: str, signatures: list, args: tuple, kwargs: dict) -> TypeError:
            shown = []
            for signature in signatures:
                copy = _signatures()._Signature(signature.text)
                shown.append(copy)
            return original(name, shown, args, kwargs)

        return listed

    with patched(_signatures(), "_invalid_combination", make):
        yield


@fault({"API-005": "error"})
def deprecated_overload_refused() -> Iterator[None]:
    """A call of a hidden deprecated signature (``add(x, 2, y)``, ``x.addcmul_(0.5, a, b)``) is
    refused with the listed signature's TypeError, where torch runs it (with a warning)."""

    def make(original: Callable) -> Callable:
        def deprecated(self: Any, hidden: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
            listed = [s for s in self.signatures if not s.hidden]
            raise _signatures()._Call(self.name, listed, args, kwargs).found() or TypeError(self.name)

        return deprecated

    with patched(_signatures()._Precheck, "_deprecated", make):
        yield


@fault({"API-006": "value"})
def determinism_leaves_memory_unfilled() -> Iterator[None]:
    """use_deterministic_algorithms no longer fills uninitialised memory: empty gives impl's zeros."""
    from impl._deterministic import _Settings

    with patched(_Settings, "fill_uninitialized_memory", lambda _original: False):
        yield


# -- torch.backends, the float32 matmul precision (API-007), autocast (API-008), GradScaler (API-009) --
def _flags() -> Any:
    from impl.backends import _flags

    return _flags


@fault({"API-007": "shown differs"})
def matmul_precision_medium_ignored() -> Iterator[None]:
    """set_float32_matmul_precision('medium') leaves the precision as it was."""

    def setter(original: Callable) -> Callable:
        return lambda precision: None if precision == "medium" else original(precision)

    with patched(_flags(), "set_float32_matmul_precision", setter), patched(
        _impl().__dict__, "set_float32_matmul_precision", setter
    ):
        yield


@fault({"API-007": "warning"})
def matmul_precision_warning_missing() -> Iterator[None]:
    """A precision torch does not know is ignored without torch's UserWarning."""
    with patched(_flags(), "warnings", lambda _original: SimpleNamespace(warn=lambda *a, **k: None)):
        yield


@fault({"API-007": "shown differs"})
def mkldnn_reported_unavailable() -> Iterator[None]:
    """torch.backends.mkldnn.is_available() is False (torch's CPU build has oneDNN)."""
    from impl.backends import mkldnn

    with patched(mkldnn, "is_available", lambda _original: lambda: False):
        yield


def _autocast() -> Any:
    from impl import _autocast

    return _autocast


def _impl() -> Any:
    import impl

    return impl


def _casting(lower: bool) -> Callable:
    """autocast's cast kept for one list only: the lower-precision one (``lower``) or float32's."""

    def make(original: Callable) -> Callable:
        return lambda t, target, low: original(t, target, low) if low == lower else t

    return make


@fault({"API-008": "graph differs"})
def autocast_lower_precision_list_not_cast() -> Iterator[None]:
    """The ops of torch's lower-precision list (mm, linear, conv2d ...) run in float32 under autocast."""
    with patched(_autocast(), "_cast", _casting(lower=False)):
        yield


@fault({"API-008": "graph differs"})
def autocast_fp32_list_not_cast() -> Iterator[None]:
    """The ops of torch's float32 list (mse_loss, prod ...) run in the autocast dtype."""
    with patched(_autocast(), "_cast", _casting(lower=True)):
        yield


class _Forgetful(dict):
    """A weight cache that keeps nothing."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default


@fault({"API-008": "graph differs"})
def autocast_weight_cache_off() -> Iterator[None]:
    """A weight used twice in an autocast block is cast twice (two ToCopyBackward0 nodes, not torch's one)."""
    with patched(_autocast(), "_cache", lambda _original: _Forgetful()):
        yield


@fault({"API-008": "enabled"})
def autocast_state_not_restored() -> Iterator[None]:
    """Leaving an autocast block keeps its state (autocast stays on, in its dtype)."""
    from impl.amp import autocast_mode

    def leave(_original: Callable) -> Callable:
        return lambda context: bool(_autocast().nest(-1)) and False

    with patched(autocast_mode, "leave", leave):
        yield


@fault({"API-008": "warning"})
def autocast_warnings_missing() -> Iterator[None]:
    """autocast for 'cuda' (no CUDA) or in float32 is disabled without torch's UserWarning."""
    from impl.amp import autocast_mode

    with patched(autocast_mode, "warnings", lambda _original: SimpleNamespace(warn=lambda *a, **k: None)):
        yield


@fault({"API-009": "shown differs"})
def grad_scaler_no_backoff() -> Iterator[None]:
    """GradScaler.update keeps its scale after a step with an inf or a NaN (and counts it as a
    success), where torch backs off."""
    from impl.amp import grad_scaler

    def update(original: Callable) -> Callable:
        def kept(scale: Any, tracker: Any, found_inf: Any, *args: Any) -> Any:
            return original(scale, tracker, found_inf * 0, *args)

        return kept

    with patched(grad_scaler, "_amp_update_scale_", update):
        yield
