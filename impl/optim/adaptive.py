"""RMSprop, Adagrad and Adadelta: per-coordinate step sizes from running squares of the gradient
(torch's single-tensor update, op for op)."""

from __future__ import annotations

from typing import Any

from impl import _creation
from impl._tensor import Tensor
from impl.optim._pointwise import add_scaled, add_scaled_, addcdiv_, addcmul, addcmul_, lerp_
from impl.optim.optimizer import CAPTURABLE_DEVICES, _check_fused, _check_options, _PerParameter, _step_count


def _decayed(grad: Tensor, p: Tensor, weight_decay: float) -> Tensor:
    """The gradient with the L2 penalty's ``weight_decay * p`` added (as ``grad.add(p, alpha=)``)."""
    return add_scaled(grad, p, weight_decay) if weight_decay != 0 else grad


class RMSprop(_PerParameter):
    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: Any = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = _step_count()
        state["square_avg"] = _creation.zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = _creation.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _creation.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """The running mean of squares (less the squared running mean when centered) divides the
        gradient, directly or through the momentum buffer."""
        alpha, lr = group["alpha"], group["lr"]
        state["step"].add_(1)
        grad = _decayed(grad, p, group["weight_decay"])
        square_avg = addcmul_(state["square_avg"].mul_(alpha), grad, grad, 1 - alpha)
        if group["centered"]:
            grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)
            avg = addcmul(square_avg, grad_avg, grad_avg, -1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = addcdiv_(state["momentum_buffer"].mul_(group["momentum"]), grad, avg, 1)
            add_scaled_(p, buf, -lr)
        else:
            addcdiv_(p, grad, avg, -lr)


class Adagrad(_PerParameter):
    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: Any = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: Any = None,
    ) -> None:
        _check_options(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                       initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        for group in self.param_groups:  # torch makes the state of the first groups here
            for p in group["params"]:
                self._init_state(p, group, self.state[p])

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = _step_count()
        state["sum"] = _creation.full_like(p, group["initial_accumulator_value"])

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """The sum of all squared gradients divides the step, whose lr decays with the step count."""
        step = state["step"].add_(1).item()
        grad = _decayed(grad, p, group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        std = addcmul_(state["sum"], grad, grad, 1).sqrt().add_(group["eps"])
        addcdiv_(p, grad, std, -clr)


class Adadelta(_PerParameter):
    _capturable_devices = CAPTURABLE_DEVICES[:-1]  # (its assertion's list lacks xla)

    def __init__(
        self,
        params: Any,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: Any = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = _step_count()
        state["square_avg"] = _creation.zeros_like(p)
        state["acc_delta"] = _creation.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """The step is the gradient scaled by the RMS of past steps over the RMS of gradients."""
        rho, eps = group["rho"], group["eps"]
        state["step"].add_(1)
        grad = _decayed(grad, p, group["weight_decay"])
        square_avg = addcmul_(state["square_avg"].mul_(rho), grad, grad, 1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = state["acc_delta"].add(eps).sqrt_().div_(std).mul_(grad)
        addcmul_(state["acc_delta"].mul_(rho), delta, delta, 1 - rho)
        add_scaled_(p, delta, -group["lr"])
