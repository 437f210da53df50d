"""Rprop (step sizes grown or shrunk by the gradient's sign changes) and ASGD (SGD with a decaying
step and a running average of the iterates): torch's single-tensor updates, op for op."""

from __future__ import annotations

from typing import Any

from impl import _creation, dtypes
from impl._tensor import Tensor
from impl.optim._pointwise import add_scaled, add_scaled_, addcmul_
from impl.optim.optimizer import _check_options, _PerParameter, _step_count


class Rprop(_PerParameter):
    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: Any = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = _step_count()
        state["prev"] = _creation.zeros_like(p)
        state["step_size"] = _creation.full_like(p.grad, float(group["lr"]))

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """Each step size times etaplus where the gradient kept its sign, etaminus where it
        changed (that gradient then counts as 0), clamped to step_sizes; p moves by it against
        the gradient's sign."""
        etaminus, etaplus = group["etas"]
        state["step"].add_(1)
        sign = grad.mul(state["prev"]).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        state["step_size"].mul_(sign).clamp_(*group["step_sizes"])
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        addcmul_(p, grad.sign(), state["step_size"], -1)
        state["prev"].copy_(grad)


class ASGD(_PerParameter):
    _capturable_holds = "params, mus, etas, and state_steps"

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: Any = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_options(lr=lr, weight_decay=weight_decay)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        state["step"] = _step_count()
        state["eta"] = _creation.tensor(float(group["lr"]), dtype=dtypes.float32)
        state["mu"] = _creation.tensor(1.0, dtype=dtypes.float32)
        state["ax"] = _creation.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        """p decays by lambd * eta and steps by eta; ax averages the iterates from step t0 on
        (mu = 1 / max(1, step - t0)); eta = lr / (1 + lambd * lr * step) ** alpha."""
        lambd, lr, mu, ax = group["lambd"], float(group["lr"]), state["mu"], state["ax"]
        step = state["step"].add_(1).item()
        if group["weight_decay"] != 0:
            grad = add_scaled(grad, p, group["weight_decay"])
        eta = state["eta"].item()
        p.mul_(1 - lambd * eta)
        add_scaled_(p, grad, -eta)
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        # (as torch.as_tensor: in the default dtype, then copied into eta and mu, which a
        # state_dict loaded for float64 parameters makes float64)
        state["eta"].copy_(_creation.tensor(lr / (1 + lambd * lr * step) ** group["alpha"]))
        mu.copy_(_creation.tensor(1 / max(1, step - group["t0"])))
