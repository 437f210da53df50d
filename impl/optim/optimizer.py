"""Optimizer base: param_groups with defaults, per-parameter state, state_dict round trips,
zero_grad. Subclasses implement ``step`` with torch's single-tensor (CPU) update order."""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from impl import _creation, dtypes
from impl import _grad_mode as grad_mode
from impl._tensor import Tensor
from impl.nn.modules.module import _typename

# the devices torch's optimisers run a capturable step on (a CPU parameter fails its assertion)
CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class of optimizers (torch.optim.Optimizer)."""

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                "but got " + _typename(params)
            )
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones come from the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + _typename(p)
                )
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will "
                "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen: set = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. cannot add param group "
                    f"{which} to the optimizer"
                )
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop (default) or zero the gradients of all parameters."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def state_dict(self) -> dict[str, Any]:
        """State and groups with parameters replaced by their index (in group order)."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: v for p, v in self.state.items() if isinstance(p, Tensor)}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore state and options saved by ``state_dict`` (tensors cast to each param's dtype)."""
        state_dict = state_dict.copy()
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(self.param_groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(
            len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups, strict=True)
        ):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in self.param_groups),
                strict=True,
            )
        )
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = {key: _cast(id_map[k], val, key) for key, val in v.items()}
            else:
                state[k] = v
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _cast(param: Tensor, value: Any, key: Any = None) -> Any:
    """A copy of a saved state value placed like ``param`` (floating tensors take its dtype)."""
    if isinstance(value, Tensor):
        if key == "step" or not param.dtype.is_floating_point:
            return value.clone() if key != "step" else value
        return value.to(param.dtype).clone()
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, str):
        return type(value)(_cast(param, v) for v in value)
    return value


class _PerParameter(Optimizer):
    """An optimiser whose step is torch's single-tensor (CPU) path: each parameter with a gradient,
    in group order, gets its state on its first step (``_init_state``) and is updated on its own
    (``_update``, under no_grad) with its gradient, negated where the group maximizes."""

    # what torch's assertion of a capturable step off its devices names
    _capturable_holds = "params and state_steps"
    _capturable_devices = CAPTURABLE_DEVICES

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure_loss(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                params = _params_with_grad(group)
                if group.get("capturable"):  # every state is made before torch's assertion
                    for p in params:
                        if not self.state[p]:
                            self._init_state(p, group, self.state[p])
                    refuse_capturable(params, self._capturable_holds, self._capturable_devices)
                for p in params:
                    state = self.state[p]
                    if not state:
                        self._init_state(p, group, state)
                    self._update(p, p.grad if not group["maximize"] else -p.grad, group, state)
        return loss

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError


_INVALID = {"lr": "Invalid learning rate: {}", "eps": "Invalid epsilon value: {}"}


def _check_options(**options: Any) -> None:
    """torch's ValueError for the first option out of range, in the order given: ``betas`` each
    in [0, 1), ``rho`` in [0, 1], any other at least 0 (NaN is out of every range)."""
    for name, value in options.items():
        if name == "betas":
            for i, beta in enumerate(value[:2]):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        elif not 0.0 <= value or (name == "rho" and not value <= 1.0):
            raise ValueError(_INVALID.get(name, f"Invalid {name} value: {{}}").format(value))


def _check_fused(fused: Any, foreach: Any, differentiable: bool) -> None:
    """torch's RuntimeError for a fused optimiser that is also differentiable or foreach."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def refuse_capturable(params: list[Tensor], holds: str = "params and state_steps",
                      devices: list[str] = CAPTURABLE_DEVICES) -> None:
    """torch's AssertionError for ``capturable=True`` with a parameter on another device (the CPU)."""
    if any(p.device.type not in devices for p in params):
        raise AssertionError(f"If capturable=True, {holds} must be on supported devices: {devices}.")


def _step_count() -> Tensor:
    """A fresh ``state["step"]``: a float32 scalar tensor, as torch keeps it on the CPU."""
    return _creation.tensor(0.0, dtype=dtypes.float32)


def _params_with_grad(group: dict[str, Any]) -> list[Tensor]:
    return [p for p in group["params"] if p.grad is not None]


def _closure_loss(closure: Callable[[], Any] | None) -> Any:
    if closure is None:
        return None
    with grad_mode.enable_grad():
        return closure()
