"""Custom autograd.Function under forward AD, on impl against torch 2.13: ``jvp`` with the inputs'
tangents (zeros for a floating input without one, None for the others), ``save_for_forward`` read
back as ``saved_tensors``, forward and jvp run without forward AD, and torch's errors: a Function
without jvp, a jvp giving too many or too few tangents, a number, a tangent of another size, a
tangent for a non-differentiable output, an output view whose tangent is not a view, an in-place
Function whose jvp does not write the tangent in place."""

from __future__ import annotations

from typing import Any

from tests.helpers.parity import both
from tests.impl.test_impl_forward_ad import tangent_of

# name: (forward body, jvp body, call); ``x`` and ``y`` the inputs, ``xt``/``yt`` their tangents
CASES: dict[str, tuple[str, str, str]] = {
    "saved": (
        "ctx.save_for_forward(x, y); ctx.k = 3; return x * y * 3",
        "a, b = ctx.saved_tensors; return ctx.k * (xt * b + a * yt)",
        "F.apply(d, e)",
    ),
    "plain_other": ("return x * y", "return xt * ctx.y + ctx.x * yt", "F.apply(d, lib.tensor(Y))"),
    "int_other": (
        "return x * y",
        "assert yt is None; return xt * ctx.y",
        "F.apply(d, lib.tensor([1, 2, 3]))",
    ),
    "number_other": ("return x * y", "assert yt is None; return xt * ctx.y", "F.apply(d, 2.0)"),
    "seen_in_forward": (
        "assert fw.unpack_dual(x).tangent is None; ctx.save_for_forward(x); return (x * 2).exp()",
        "assert fw.unpack_dual(ctx.saved_tensors[0]).tangent is None; return xt",
        "F.apply(d, e)",
    ),
    "no_saved": ("return x.sin()", "return xt * len(ctx.saved_tensors)", "F.apply(d, e)"),
    "backward_saved": (
        "ctx.save_for_backward(x); return x * 2",
        "return xt * (1 + len(ctx.saved_tensors))",
        "F.apply(d, e)",
    ),
    "two_outputs": ("return x * 2, x * y", "return xt * 2, xt * ctx.y + ctx.x * yt", "F.apply(d, e)[1]"),
    "int_output": ("return x * 2, lib.tensor(3)", "return xt * 2, None", "F.apply(d, e)[0]"),
    "view_output": ("return x.view(-1)", "return xt.view(-1)", "F.apply(d, e)"),
    "input_as_is": ("return x", "return xt.view_as(xt)", "F.apply(d, e)"),
    "dirty": ("x.mul_(2); ctx.mark_dirty(x); return x", "return xt.mul_(2)", "F.apply(d.clone(), e)"),
    "dirty_plain": (
        "y.mul_(2); ctx.mark_dirty(y); return y",
        "return xt.sum() * yt + 1",
        "F.apply(d, lib.tensor(Y))",
    ),
    "no_jvp": ("return x * 2", None, "F.apply(d, e)"),
    "too_few": ("return x * 2, x", "return xt", "F.apply(d, e)"),
    "too_many": ("return x * 2", "return xt, xt", "F.apply(d, e)"),
    "number": ("return x * 2", "return 3.0", "F.apply(d, e)"),
    "size": ("return x * 2", "return xt.sum()", "F.apply(d, e)"),
    "none": ("return x * 2", "return None", "F.apply(d, e)"),
    "non_differentiable": (
        "o = x * 2; ctx.mark_non_differentiable(o); return o",
        "return xt",
        "F.apply(d, e)",
    ),
    "view_not_view": ("return x.view(-1)", "return xt * 1", "F.apply(d, e)"),
    "as_is_not_view": ("return x", "return xt", "F.apply(d, e)"),
    "view_of_other": ("return x.view(-1)", "return yt.view(-1)", "F.apply(d, e)"),
    "dirty_not_in_place": (
        "x.mul_(2); ctx.mark_dirty(x); return x",
        "return xt * 2",
        "F.apply(d.clone(), e)",
    ),
    "dirty_not_returned": (
        "x.mul_(2); ctx.mark_dirty(x); return x",
        "xt.mul_(2); return xt.clone()",
        "F.apply(d.clone(), e)",
    ),
    "save_number": ("ctx.save_for_forward(x, 3); return x", "return xt", "F.apply(d, e)"),
}
Y = [[1.0, 2.0, -1.5], [0.5, -0.25, 1.0]]


def _program(forward: str, jvp: str | None, call: str) -> Any:
    """A Function of (x, y) with ``forward``/``jvp`` bodies, applied by ``call`` on the duals d, e
    inside a level: the result's (primal shape, tangent)."""
    methods = f"    @staticmethod\n    def forward(ctx, x, y):\n        ctx.x, ctx.y = x, y; {forward}\n"
    if jvp is not None:
        methods += f"    @staticmethod\n    def jvp(ctx, xt, yt):\n        {jvp}\n"
    source = f"class F(lib.autograd.Function):\n{methods}"

    def program(lib: Any) -> Any:
        fw = lib.autograd.forward_ad
        scope = {"lib": lib, "fw": fw, "Y": Y}
        exec(source, scope)  # noqa: S102 - the cases above, run on both modules
        with fw.dual_level():
            t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
            scope["d"] = fw.make_dual(t([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]).requires_grad_(), t(Y))
            scope["e"] = fw.make_dual(t(Y), t([[1.0, 0.5, -2.0], [0.25, -1.0, 3.0]]))
            out = eval(call, scope)  # noqa: S307
            return tangent_of(out, fw), out.requires_grad

    return program


def test_custom_function_jvp() -> None:
    diverging = {}
    for name, case in CASES.items():
        torch_result, impl_result = both(_program(*case))
        if impl_result != torch_result:
            diverging[name] = (torch_result, impl_result)
    assert not diverging
