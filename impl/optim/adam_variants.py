"""Adamax, NAdam and RAdam: Adam's moments with an infinity norm, Nesterov momentum or a rectified
variance (torch's single-tensor update, op for op)."""

from __future__ import annotations

from typing import Any

from impl import _creation, dtypes
from impl._ops.binary_math import maximum
from impl._tensor import Tensor
from impl.optim._pointwise import add_scaled, add_scaled_, addcdiv_, addcmul_, lerp_
from impl.optim.optimizer import _check_options, _PerParameter, _step_count

# RAdam rectifies its update once the approximated SMA length passes this
RECTIFIED_ABOVE = 5.0


def momentum_coefficient(beta1: float, step: float, momentum_decay: float) -> float:
    """NAdam's mu_t = beta1 (1 - 0.96^(t psi) / 2), in torch's float arithmetic."""
    return beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))


class _Moments(_PerParameter):
    """Adam's state (a step count and the moments, ``second`` naming the second) and its weight
    decay: the L2 penalty added to the gradient, or, decoupled, the parameter shrunk first."""

    second = "exp_avg_sq"

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = _step_count()
        state["exp_avg"] = _creation.zeros_like(p)
        state[self.second] = _creation.zeros_like(p)

    @staticmethod
    def _decay(p: Tensor, grad: Tensor, group: dict[str, Any]) -> Tensor:
        lr, weight_decay = group["lr"], group["weight_decay"]
        if weight_decay == 0:
            return grad
        if group.get("decoupled_weight_decay"):
            p.mul_(1 - lr * weight_decay)
            return grad
        return add_scaled(grad, p, weight_decay)

    @staticmethod
    def _moments(grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> tuple[Tensor, Tensor]:
        beta1, beta2 = group["betas"]
        exp_avg = lerp_(state["exp_avg"], grad, 1 - beta1)
        return exp_avg, addcmul_(state["exp_avg_sq"].mul_(beta2), grad, grad, 1 - beta2)


class Adamax(_Moments):
    second = "exp_inf"

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: Any = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_options(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """The first moment over the decayed running maximum of |grad| (+ eps), bias-corrected."""
        beta1, beta2 = group["betas"]
        step = state["step"].add_(1).item()
        grad = self._decay(p, grad, group)
        exp_avg, exp_inf = lerp_(state["exp_avg"], grad, 1 - beta1), state["exp_inf"]
        exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"])))
        addcdiv_(p, exp_avg, exp_inf, -(group["lr"] / (1 - beta1**step)))


class NAdam(_Moments):
    _capturable_holds = "params, mu_products and state_steps"

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: Any = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = _step_count()
        state["mu_product"] = _creation.tensor(1.0, dtype=dtypes.float32)
        state["exp_avg"] = _creation.zeros_like(p)
        state["exp_avg_sq"] = _creation.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """Adam's moments, with the momentum coefficient mu_t = beta1 (1 - 0.96^(t psi) / 2) of this
        step weighting the gradient and that of the next step the first moment (Nesterov)."""
        beta1, beta2 = group["betas"]
        lr, momentum_decay = group["lr"], group["momentum_decay"]
        step = state["step"].add_(1).item()
        bias_correction2 = 1 - beta2**step
        grad = self._decay(p, grad, group)
        mu = momentum_coefficient(beta1, step, momentum_decay)
        mu_next = momentum_coefficient(beta1, step + 1, momentum_decay)
        mu_product = state["mu_product"].mul_(mu).item()  # a float32 tensor: rounded as torch's
        exp_avg, exp_avg_sq = self._moments(grad, group, state)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(group["eps"])
        addcdiv_(p, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
        addcdiv_(p, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product * mu_next))


class RAdam(_Moments):
    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: Any = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """Adam's step scaled by the variance rectification term while the approximated SMA length
        rho_t is above 5; before that, the bias-corrected first moment alone (SGD with momentum)."""
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        step = state["step"].add_(1).item()
        grad = self._decay(p, grad, group)
        exp_avg, exp_avg_sq = self._moments(grad, group, state)
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > RECTIFIED_ABOVE:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(group["eps"])
            add_scaled_(p, corrected * lr * adaptive * rect, -1.0)
        else:
            add_scaled_(p, corrected * lr, -1.0)
