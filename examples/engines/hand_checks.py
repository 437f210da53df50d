"""The divergences of the Engines table, checked by hand: a few lines each, run on both sides.

    python examples/engines/hand_checks.py torchax     # torch 2.13, the reference's Python
    PYTHONPATH=. .nox/engines/torchax/bin/python examples/engines/hand_checks.py torchax --on-engine
    python examples/engines/hand_checks.py jtorch      # and with .nox/engines/jtorch/bin/python --on-engine
    python examples/engines/hand_checks.py versions    # then with .nox/engines/torch-2.5.1/bin/python

Each line prints a check's result or the error it raised; compare the two runs' lines.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

if "--on-engine" in sys.argv and sys.argv[1] == "torchax":
    import oracle.adapters.torchax as torch

    DEV = "jax"
elif "--on-engine" in sys.argv:  # jtorch's torch
    import oracle.adapters.jtorch as torch

    DEV = "cpu"
else:
    import torch

    DEV = "cpu"


def leaf(value: float = -2.0):
    return torch.tensor(value, requires_grad=True, device=DEV)


def detach_shares_storage():
    x = leaf()
    x.detach().add_(2.0)
    return x.item()


def module_output_has_grad_fn():
    module = torch.nn.Linear(2, 2).to(DEV)
    return module(torch.ones(1, 2, device=DEV)).sum().grad_fn is not None


def index_assignment_in_gradient():
    x = leaf()
    t = torch.stack([x, x])
    t.__setitem__(([0],), (x * x).sum())
    return torch.autograd.grad(torch.exp(t).sum(), [x])[0].item()


def integer_index_keeps_grad_fn():
    y = (leaf(1.0) * torch.ones(2, device=DEV)).reshape(-1)
    return type(y[0].grad_fn).__name__


def default_device_then_a_factory():
    torch.set_default_device(DEV)
    try:
        return torch.ones(2).device.type
    finally:
        torch.set_default_device("cpu")


def uint8_from_negative():
    return torch.tensor([-3, -3], dtype=torch.uint8, device=DEV).tolist()


def inplace_exp():
    return (torch.tensor([1.0], requires_grad=True, device=DEV) * 1).exp_().tolist()


def sum_dim_out_of_range():
    return torch.sum(torch.ones(2, 2, device=DEV), 2)


def matmul_bad_shapes():
    return torch.ones(2, 3, device=DEV).__matmul__(torch.ones(2, 3, device=DEV))


def nonleaf_grad_warning():
    y = leaf(1.0) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.grad  # noqa: B018 - reading it warns
    return str(caught[0].message).split("more ")[-1]


def unused_input_message():
    a, b = leaf(1.0), leaf(1.0)
    return torch.autograd.grad((a * 2).sum(), [a, b])


def materialized_zeros_require_grad():
    a, b = leaf(1.0), leaf(1.0)
    grads = torch.autograd.grad((a * 2).sum(), [a, b], allow_unused=True, materialize_grads=True)
    return grads[1].requires_grad


def inplace_error_message():
    v = torch.ones(3, 3, requires_grad=True).clone().as_strided((3, 3), (3, 1))
    y = v * v
    v.add_(1)
    y.sum().backward()


def inplace_error_after_an_add():
    x = leaf(1.0)
    y = x + 1
    z = y * y
    y.add_(1)
    z.backward()


def topk_of_a_bool_scalar():
    return torch.topk(torch.tensor(True), 1, dim=-1).values


def adam_decoupled_weight_decay():
    return type(torch.optim.Adam([leaf(1.0)], decoupled_weight_decay=True)).__name__


def scalar_shape():
    return list(torch.tensor(2.0).shape)


def backward_without_grad():
    (torch.ones(2) * 2).sum().backward()
    return "no error"


def leaf_grad_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    return x.grad.requires_grad


def hook_on_a_constant():
    torch.ones(2).register_hook(lambda grad: grad)
    return "no error"


def conv_padding_mode():
    return type(torch.nn.Conv2d(1, 1, 3, padding_mode="circular")).__name__


def module_called_with_input_keyword():
    return torch.nn.GELU()(input=torch.ones(2)).tolist()


def nonleaf_grad_warns():
    y = leaf(1.0) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.grad  # noqa: B018 - reading it warns
    return len(caught)


def backward_of_a_leaf_with_two_hooks():
    x = leaf()
    x.register_hook(lambda grad: None)
    x.register_hook(lambda grad: None)
    x.backward()
    return x.grad.tolist()


def gather_int32_index():
    return torch.gather(torch.tensor([-1.5, 0.5]), -1, torch.tensor([0, 0], dtype=torch.int32)).tolist()


def abs_of_bool_error_type():
    torch.abs(torch.tensor(False))


def prod_dim_none_error_type():
    torch.prod(torch.tensor(-1, dtype=torch.int16), None, keepdim=True)


def mask_and_full_slice_graph():
    x = torch.ones(2, 3, requires_grad=True)
    node, names = x[torch.tensor([True, False]), ::1].sum().grad_fn, []
    while node is not None:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return names


CHECKS: dict[str, list[Callable]] = {
    "torchax": [detach_shares_storage, module_output_has_grad_fn, index_assignment_in_gradient,
                integer_index_keeps_grad_fn, default_device_then_a_factory, uint8_from_negative, inplace_exp,
                sum_dim_out_of_range, matmul_bad_shapes],
    "jtorch": [scalar_shape, backward_without_grad, leaf_grad_requires_grad, hook_on_a_constant,
               conv_padding_mode, module_called_with_input_keyword, nonleaf_grad_warns, sum_dim_out_of_range,
               backward_of_a_leaf_with_two_hooks],
    "versions": [nonleaf_grad_warning, unused_input_message, materialized_zeros_require_grad,
                 inplace_error_message, inplace_error_after_an_add, topk_of_a_bool_scalar,
                 adam_decoupled_weight_decay, gather_int32_index, abs_of_bool_error_type,
                 prod_dim_none_error_type, mask_and_full_slice_graph],
}


def main(group: str) -> None:
    print(f"torch {torch.__version__} on {DEV}")
    for check in CHECKS[group]:
        try:
            result = repr(check())
        except Exception as exc:  # noqa: BLE001 - the error is the result
            result = f"raises {type(exc).__name__}: {str(exc)[:300]}"
        print(f"{check.__name__}: {result}")


if __name__ == "__main__":
    main(sys.argv[1])
