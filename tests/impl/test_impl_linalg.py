"""torch.linalg's solves, determinants and decompositions (impl/_ops/decompositions.py) against
torch: printed results with grad_fn names, errors, and gradients of invariant losses, in loops."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import impl
from tests.impl.test_impl_tutorial_functions import shown

A = "torch.tensor([[4., 2., 1.], [2., 3., .5], [1., .5, 2.]], dtype=torch.float64, requires_grad=True)"
N = "torch.tensor([[1., 2.], [3., -4.]], requires_grad=True)"  # negative determinant
S = "torch.tensor([[1., 2.], [2., 4.]])"  # singular
R = "torch.tensor([[1., 2.], [3., 4.], [5., 7.]], requires_grad=True)"  # 3 by 2
B = "torch.tensor([[[2., 1.], [1., 3.]], [[1., 0.], [5., 2.]]], requires_grad=True)"  # a batch
R3 = "torch.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)"
Y = "torch.tensor([[1., 0.], [2., 1.], [0., 3.]], requires_grad=True)"  # right-hand sides of R
W = "torch.tensor([[1., 2., 0.], [3., 4., 1.]], requires_grad=True)"  # 2 by 3
C = "torch.tensor([[[[1.], [2.]]], [[[3.], [4.]]], [[[5.], [6.]]]], requires_grad=True)"  # 3 by 1 by 2 by 1
CALLS = [
    f"torch.linalg.inv({A})",
    f"torch.linalg.inv_ex({N})",
    f"torch.inverse({B})",
    f"{N}.inverse()",
    f"torch.linalg.inv({S})",
    "torch.linalg.inv(torch.zeros(2, 2, 2))",
    f"torch.linalg.inv_ex({S})",
    f"torch.linalg.inv_ex({S}, check_errors=True)",
    f"torch.linalg.inv({R})",
    "torch.linalg.inv(torch.eye(2, dtype=torch.long))",
    "torch.linalg.inv(torch.eye(2).half())",
    "torch.linalg.inv(torch.ones(3))",
    f"torch.linalg.det({A}), torch.det({N}), {B}.det(), torch.linalg.det({S})",
    "torch.linalg.det(torch.eye(2, dtype=torch.long))",
    f"torch.linalg.det({R})",
    f"torch.linalg.slogdet({A})",
    f"torch.slogdet({N})",
    f"{B}.slogdet()",
    f"torch.linalg.slogdet({S})",
    f"torch.logdet({A}), torch.logdet({N}), {B}.logdet()",
    "torch.linalg.slogdet(torch.eye(2, dtype=torch.long))",
    f"torch.linalg.solve({A}, torch.ones(3, dtype=torch.float64))",
    f"torch.linalg.solve({B}, torch.ones(2))",
    f"torch.linalg.solve({B}, torch.ones(2, 2))",
    f"torch.linalg.solve({B}, torch.ones(3, 2, 2, 1))",
    f"torch.linalg.solve({N}, torch.ones(3, 2), left=False)",
    f"torch.linalg.solve({N}, torch.ones(2), left=False)",
    f"torch.linalg.solve({N}, torch.ones(3))",
    f"torch.linalg.solve({N}, torch.ones(2, dtype=torch.float64))",
    f"torch.linalg.solve({S}, torch.ones(2))",
    f"torch.linalg.solve({S}.expand(3, 2, 2), torch.ones(2))",
    f"torch.linalg.solve_ex({S}, torch.ones(2))",
    f"torch.linalg.solve_ex({N}, {N})",
    f"torch.linalg.solve_ex({S}, torch.ones(2), check_errors=True)",
    *(f"torch.linalg.matrix_power({N}, {n})" for n in (0, 1, 2, 3, 5, 6, -1, -2, -3)),
    f"{B}.matrix_power(4), torch.matrix_power({B}, 0)",
    "torch.linalg.matrix_power(torch.tensor([[1, 1], [1, 0]]), 10)",
    "torch.linalg.matrix_power(torch.eye(2, dtype=torch.long), -1)",
    f"torch.linalg.matrix_power({R}, 2)",
    f"torch.linalg.matrix_power({S}, -1)",
    f"torch.linalg.qr({W}), torch.qr({B}), torch.linalg.qr({W}, mode='complete')",
    f"torch.linalg.qr({R}, mode='r')",
    "torch.linalg.qr(torch.eye(2, dtype=torch.long))",
    "torch.linalg.qr(torch.ones(2, 2), mode='x')",
    "torch.linalg.qr(torch.ones(2, 2).half())",
    f"torch.linalg.svd({A})",
    f"torch.linalg.svd({R}), torch.linalg.svd({R}, full_matrices=False)",
    f"torch.linalg.svdvals({W}), torch.svd({R}), torch.svd({W}, compute_uv=False), {B}.svd(some=False)",
    "torch.linalg.svd(torch.eye(2, dtype=torch.long))",
    "torch.linalg.svdvals(torch.ones(3))",
    "torch.linalg.svd(torch.ones(2, 2).half())",
    f"torch.linalg.eigh({A}), torch.linalg.eigh({N}, UPLO='U'), torch.linalg.eigvalsh({B})",
    "torch.linalg.eigh(torch.eye(2), UPLO='X')",
    "torch.linalg.eigvalsh(torch.eye(2, dtype=torch.long))",
    "torch.linalg.eigh(torch.ones(2, 2).half())",
    "torch.linalg.eigh(torch.ones(2, 3))",
    f"torch.linalg.pinv({S}), torch.linalg.pinv({S}, atol=0.1), torch.linalg.pinv({S}, atol=10.)",
    f"torch.linalg.pinv({S}, rtol=0.1, hermitian=True), torch.pinverse({S}, rcond=0.5), {W}.pinverse()",
    f"torch.linalg.pinv({B}, 0.1), torch.linalg.pinv({S}, atol=torch.tensor(0.1))",
    "torch.linalg.pinv(torch.eye(2, dtype=torch.long))",
    "torch.linalg.pinv(torch.ones(3))",
    f"torch.linalg.matrix_rank({S}), torch.linalg.matrix_rank({R})",
    f"torch.linalg.matrix_rank({S}, hermitian=True)",
    f"torch.linalg.matrix_rank({S}, atol=6.), torch.linalg.matrix_rank({S}, tol=6.)",
    f"torch.linalg.matrix_rank({B}, rtol=0.5), torch.linalg.matrix_rank(torch.zeros(2, 3))",
    "torch.linalg.matrix_rank(torch.eye(2, dtype=torch.long))",
    "torch.linalg.matrix_rank(torch.ones(3))",
    *(f"torch.linalg.lstsq({R}, {Y}, driver={d!r})" for d in (None, "gelsd", "gels", "gelss")),
    f"torch.linalg.lstsq({R}, torch.ones(3)), torch.linalg.lstsq({R}, torch.ones(3), driver='gelsd')",
    f"torch.linalg.lstsq({W}, torch.ones(2, 2)), torch.linalg.lstsq({B}, torch.ones(2, 2), driver='gelsd')",
    "torch.linalg.lstsq(torch.zeros(3, 2), torch.ones(3, 2), driver='gelsd')",
    "torch.linalg.lstsq(torch.ones(2, 3, 2), torch.ones(2, 3))",
    "torch.linalg.lstsq(torch.ones(3, 2), torch.ones(4, 3, 2))",
    "torch.linalg.lstsq(torch.ones(3), torch.ones(3))",
    "torch.linalg.lstsq(torch.ones(3, 2), torch.tensor(1.))",
    "torch.linalg.lstsq(torch.ones(2, 3, 2), torch.ones(3))",
    "torch.linalg.lstsq(torch.ones(3, 2).half(), torch.ones(3, 1).half())",
    "torch.linalg.lstsq(torch.eye(3)[:, :2].expand(2, 3, 2), torch.ones(3, 2))",
    f"torch.linalg.lstsq({R}, torch.ones(2, 1))",
    f"torch.linalg.lstsq({R}, torch.ones(3, 1, dtype=torch.float64))",
    f"torch.linalg.lstsq({R}, torch.ones(3, 1), driver='x')",
    f"torch.matrix_exp({A}), torch.matrix_exp(torch.zeros(2, 0, 0))",
    "torch.matrix_exp(torch.tensor([[30., 2.], [-3., 4.]], dtype=torch.float64))",
    "torch.matrix_exp(torch.eye(2, dtype=torch.long))",
    f"torch.linalg.matrix_exp({R})",
    "torch.matrix_exp(torch.ones(3))",
]


def test_as_torch() -> None:
    for call in CALLS:
        assert shown(impl, call) == shown(torch, call), call


# (call on x, the loss of its result): gradients compared with torch's
GRADS = [
    (f"torch.linalg.inv({A})", "r.sum()"),
    (f"torch.linalg.inv({B})", "(r * r).sum()"),
    (f"torch.linalg.matrix_power({B}, -5)", "(r * r).sum()"),
    (f"torch.linalg.matrix_power({N}, 0)", "(r * r).sum()"),
    (f"torch.linalg.det({A})", "r"),
    (f"torch.det({B})", "r.sum()"),
    (f"torch.det({S}.requires_grad_())", "r"),
    (f"torch.linalg.slogdet({N})", "r[1] + r[0]"),
    (f"torch.logdet({B})", "r.sum()"),
    (f"torch.linalg.solve({A}, torch.ones(3, dtype=torch.float64, requires_grad=True))", "(r * r).sum()"),
    (f"torch.linalg.solve({B}, torch.ones(2, requires_grad=True))", "(r * r).sum()"),
    (f"torch.linalg.solve({N}, {R3}, left=False)", "(r * r).sum()"),
    (f"torch.linalg.solve({B}, {C})", "(r * r).sum()"),
    (f"torch.linalg.qr({A})", "r[0].sum() + r[1].sum()"),
    (f"torch.linalg.qr({R})", "r[0].sum() + (r[1] ** 2).sum()"),
    (f"torch.linalg.qr({R})", "r[1].sum()"),
    (f"torch.linalg.qr({W})", "r[0].sum() + (r[1] ** 2).sum()"),
    (f"torch.linalg.qr({W})", "r[0].sum()"),
    (f"torch.linalg.qr({W})", "r[1].sum()"),
    (f"torch.linalg.qr({R}, mode='complete')", "r[1].sum()"),
    (f"torch.linalg.qr({R}, mode='r')", "r[1].sum()"),
    (f"torch.linalg.svd({R})", "(r[0][:, :2] @ r[1].diag_embed() @ r[2]).sum() + r[1].sum()"),
    (f"torch.linalg.svd({W}, full_matrices=False)", "r[0].abs().sum() + r[2].abs().sum()"),
    (f"torch.linalg.svd({R}, full_matrices=False)", "r[0].abs().sum() + r[2].abs().sum()"),
    (f"torch.linalg.svd({A})", "r[0].abs().sum() + r[2].abs().sum()"),
    (f"torch.linalg.svd({R}, full_matrices=False)", "r[0].abs().sum()"),
    (f"torch.linalg.svd({W}, full_matrices=False)", "r[2].abs().sum()"),
    (f"torch.linalg.svdvals({W})", "r.sum()"),
    (f"torch.svd({R})", "(r[0] @ r[2].mT).abs().sum()"),
    (f"torch.linalg.eigh({A})", "r[1].abs().sum() + r[0].sum()"),
    (f"torch.linalg.eigh({N})", "(r[1] * r[1] * torch.tensor([1., 2.])).sum()"),
    (f"torch.linalg.eigvalsh({B}, UPLO='U')", "(r * r).sum()"),
    (f"torch.linalg.pinv({R})", "(r * r).sum()"),
    (f"torch.linalg.pinv({W})", "(r * r).sum()"),
    (f"torch.linalg.pinv({B}, hermitian=True)", "(r * r).sum()"),
    (f"torch.pinverse({A})", "r.sum()"),
    (f"torch.linalg.lstsq({R}, {Y})", "(r[0] ** 2).sum()"),
    (f"torch.linalg.lstsq({R}, {Y}, driver='gelsd')", "r[1].sum() + r[0].sum()"),
    (f"torch.linalg.lstsq({R}, torch.ones(3, requires_grad=True), driver='gels')", "r[1].sum() + r[0][0]"),
    (f"torch.linalg.lstsq({W}, torch.ones(2, 2, requires_grad=True))", "(r[0] ** 2).sum()"),
    (f"torch.matrix_exp({A})", "(r * r).sum()"),
    (f"torch.linalg.matrix_exp({B})", "r[0, 1].sum()"),
    (f"{N}.matrix_exp()", "r.sum()"),
]


def gradients(module: Any, call: str, loss: str) -> list:
    """The gradients of ``loss`` of ``call``'s result with respect to every tensor the call made
    with torch.tensor or torch.ones (None where it needs none)."""
    made: list = []

    def recorded(factory: Any) -> Any:
        return lambda *args, **kwargs: made.append(factory(*args, **kwargs)) or made[-1]

    namespace = {"torch": module, "tensor": recorded(module.tensor), "ones": recorded(module.ones)}
    r = eval(call.replace("torch.tensor(", "tensor(").replace("torch.ones(", "ones("), namespace)
    eval(loss, {"r": r, "torch": module}).backward()
    return [None if t.grad is None else t.grad.numpy() for t in made]


def gradients_or_error(module: Any, call: str, loss: str) -> list | str:
    try:
        return gradients(module, call, loss)
    except RuntimeError as e:
        return f"{type(e).__name__}: {e}"


def test_gradients() -> None:
    for call, loss in GRADS:
        ours, theirs = gradients_or_error(impl, call, loss), gradients_or_error(torch, call, loss)
        if isinstance(theirs, str) or isinstance(ours, str):
            assert ours == theirs, call
            continue
        assert len(ours) == len(theirs), call
        for a, b in zip(ours, theirs, strict=True):
            close = a is None or np.allclose(a, b, rtol=1e-4, atol=1e-5)
            assert (a is None) == (b is None) and close, (call, a, b)


SECOND_ORDER = [  # create_graph through outputs other than the first (saved with their output_nr)
    "torch.linalg.svdvals(x).sum()",
    "(torch.linalg.eigvalsh(x) ** 2).sum()",
    "torch.linalg.slogdet(x)[1]",
    "(torch.linalg.qr(x)[1] ** 2).sum()",
    "(torch.linalg.inv(x) ** 2).sum()",
    "torch.linalg.det(x)",
    "(torch.linalg.matrix_exp(x) ** 2).sum()",
]


def test_second_order() -> None:
    for loss in SECOND_ORDER:
        got = []
        for module in (impl, torch):
            x = module.tensor([[2.0, 0.5, 0.1], [0.3, 3.0, 0.2], [0.1, -0.4, 1.5]], dtype=module.float64,
                              requires_grad=True)
            (g,) = module.autograd.grad(eval(loss, {"torch": module, "x": x}), x, create_graph=True)
            (h,) = module.autograd.grad((g * g).sum(), x)
            got.append(h.detach().numpy())
        assert np.allclose(*got, rtol=1e-6, atol=1e-9), loss
