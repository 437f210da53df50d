"""Adam and AdamW (single-tensor update order of torch's CPU implementation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from impl import _creation, dtypes
from impl import _grad_mode as grad_mode
from impl._ops.binary_math import maximum
from impl._tensor import Tensor
from impl.optim._pointwise import add_scaled, addcdiv_, addcmul_, lerp_
from impl.optim.optimizer import (
    Optimizer,
    _check_fused,
    _check_options,
    _closure_loss,
    _params_with_grad,
    refuse_capturable,
)


class Adam(Optimizer):
    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: Any = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: Any = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_options(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def _state_for(self, p: Tensor, amsgrad: bool) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = _creation.tensor(0.0, dtype=dtypes.float32)
            state["exp_avg"] = _creation.zeros_like(p)
            state["exp_avg_sq"] = _creation.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _creation.zeros_like(p)
        return state

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = _closure_loss(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                params = _params_with_grad(group)
                states = [self._state_for(p, group["amsgrad"]) for p in params]  # all, before the check
                if group["capturable"]:
                    refuse_capturable(params)
                for p, state in zip(params, states, strict=True):
                    self._update(p, group, state)
        return loss

    def _update(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """torch's ``_single_tensor_adam`` for one parameter, op for op."""
        beta1, beta2 = group["betas"]
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        grad = p.grad if not group["maximize"] else -p.grad
        state["step"].add_(1)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = add_scaled(grad, p, wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        lerp_(exp_avg, grad, 1 - beta1)
        addcmul_(exp_avg_sq.mul_(beta2), grad, grad, 1 - beta2)
        step = state["step"].item()
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if group["amsgrad"]:
            state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], exp_avg_sq))
            second = state["max_exp_avg_sq"]
        else:
            second = exp_avg_sq
        denom = (second.sqrt() / bias_correction2_sqrt).add_(eps)
        addcdiv_(p, exp_avg, denom, -step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the Adam step)."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: Any = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: Any = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
