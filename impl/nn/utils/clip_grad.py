"""torch.nn.utils.clip_grad: the gradients' total norm, clipped in place (as torch 2.13's)."""

from __future__ import annotations

import types
import warnings
from typing import Any

from impl import _grad_mode as grad_mode
from impl._creation import tensor
from impl._ops.norms import vector_norm
from impl._ops.stacking import stack
from impl._tensor import Tensor


def _by_dtype(tensors: list) -> list:
    """The tensors grouped by (device, dtype) in the order the groups first appear, as torch's
    _group_tensors_by_device_and_dtype keeps them (the total norm stacks the groups' norms so)."""
    groups: dict[tuple, list] = {}
    for t in tensors:
        groups.setdefault((str(t.device), t.dtype), []).append(t)
    return [t for group in groups.values() for t in group]


def get_total_norm(
    tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach: Any = None
) -> Tensor:
    """The ``norm_type`` norm of the tensors' norms (of them all as one vector); 0 of none."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    first = tensors[0].device
    norms = [vector_norm(t, norm_type).to(first) for t in _by_dtype(tensors)]
    total = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan().logical_or(total.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Tensor, foreach: Any = None) -> None:
    """Each gradient times ``min(max_norm / (total_norm + 1e-6), 1)``, in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else parameters
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with grad_mode.no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in _by_dtype(grads):
            g.mul_(coef.to(g.device))


def clip_grad_norm_(
    parameters: Any,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Any = None,
) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total norm is at most
    ``max_norm``; the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if generator and not parameters:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2
            )
    with grad_mode.no_grad():
        grads = [p.grad for p in parameters if p.grad is not None]
        total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
        clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters: Any,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Any = None,
) -> Tensor:
    """Deprecated spelling of ``clip_grad_norm_`` (torch's FutureWarning)."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    """Clamp each gradient of ``parameters`` into ``[-clip_value, clip_value]``, in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else parameters
    clip_value = float(clip_value)
    with grad_mode.no_grad():
        for g in _by_dtype([p.grad for p in parameters if p.grad is not None]):
            g.clamp_(min=-clip_value, max=clip_value)
