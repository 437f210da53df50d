"""SGD with momentum, dampening, Nesterov, weight decay and maximize (torch's update order)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from impl import _grad_mode as grad_mode
from impl.optim._pointwise import add_scaled, add_scaled_
from impl.optim.optimizer import Optimizer, _check_fused, _closure_loss, _params_with_grad


class SGD(Optimizer):
    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: Any = None,
        differentiable: bool = False,
        fused: Any = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """p -= lr * d, d = grad (+ wd * p), through the momentum buffer if momentum != 0.

        As torch's step: the momentum buffers of a group are read from the state before any update
        and written back after all of them, so a parameter listed twice (a tied weight given
        under both names) is updated twice, from a buffer of its own each time on the first step,
        and keeps the buffer of its last place."""
        loss = _closure_loss(closure)
        with grad_mode.no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                params = _params_with_grad(group)
                buffers = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else []
                for i, p in enumerate(params):
                    d = p.grad if not group["maximize"] else -p.grad
                    if group["weight_decay"] != 0:
                        d = add_scaled(d, p, group["weight_decay"])
                    if momentum != 0:
                        buf = buffers[i]
                        if buf is None:
                            buf = buffers[i] = d.clone().detach()
                        else:
                            add_scaled_(buf.mul_(momentum), d, 1 - dampening)
                        d = add_scaled(d, buf, momentum) if group["nesterov"] else buf
                    add_scaled_(p, d, -lr)
                for p, buf in zip(params, buffers, strict=False):
                    self.state[p]["momentum_buffer"] = buf
        return loss
