"""torch.func's module helpers: functional_call (a module called with other parameters and
buffers, swapped in for the call) and stack_module_state (for model ensembling)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from impl._ops.stacking import stack
from impl._tensor import Tensor

_MISSING = object()


def _merged(dicts: Any) -> dict:
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, Sequence):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
            f"but got {type(dicts)}"
        )
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    counts: dict[str, int] = {}
    for d in dicts:
        for k in d:
            counts[k] = counts.get(k, 0) + 1
    repeated = [k for k, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous"
        )
    return {k: v for d in dicts for k, v in d.items()}


def _named_tensors(module: Any) -> dict:
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untied(module: Any, given: dict) -> dict:
    """``given`` with every name tied to a given one (the same tensor in the module) added."""
    names_of: dict[int, set[str]] = {}
    for name, t in _named_tensors(module).items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    untied = dict(given)
    for name in given:
        if name not in tied:
            continue
        names = tied[name]
        if len(names & set(given) & set(tied)) > 1 and len({id(given[n]) for n in names if n in given}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                "Consider using tie_weights=False"
            )
        untied.update(dict.fromkeys(names, given[name]))
    return untied


def _swap(module: Any, path: str, value: Any) -> Any:
    """Put ``value`` (``_MISSING``: remove) at ``path``; the value it held (``_MISSING``: none)."""
    *owner, name = path.split(".")
    sub = module.get_submodule(".".join(owner))
    for registry in (sub._parameters, sub._buffers):
        if name in registry:
            old = registry[name]
            if value is _MISSING:
                del registry[name]
            else:
                registry[name] = value
            return old
    old = getattr(sub, name, _MISSING)
    if value is _MISSING:
        if old is not _MISSING:
            delattr(sub, name)
    else:
        object.__setattr__(sub, name, value) if old is _MISSING else setattr(sub, name, value)
    return old


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """torch.func.functional_call: ``module(*args, **kwargs)`` with the given parameters and buffers
    in place of its own (restored after the call)."""
    given = _merged(parameter_and_buffer_dicts)
    values = _untied(module, given) if tie_weights else given
    if strict:
        valid = set(_named_tensors(module))
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(errors))
            )
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    originals = {name: _swap(module, name, value) for name, value in values.items()}
    try:
        return module(*args, **(kwargs or {}))
    finally:
        current = {name: _swap(module, name, old) for name, old in originals.items()}
        given.update({k: current[k] for k in given if k in current and current[k] is not _MISSING})


def _stacked(tensors: list, name: str) -> Tensor:
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if grads == {True} else result


def stack_module_state(models: Any) -> tuple[dict, dict]:
    """torch.func.stack_module_state: each parameter and buffer of ``models`` stacked along a new
    first dimension (parameters as fresh leaves)."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    states = []
    for named in ("named_parameters", "named_buffers"):
        each = [dict(getattr(m, named)()) for m in models]
        states.append({k: _stacked([d[k] for d in each], k) for k in each[0]})
    return states[0], states[1]
