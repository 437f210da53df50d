"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a function of tensors.

Each is built from ``autograd.grad`` as torch builds it: jvp, hvp by the double-backward trick
(the gradient of a vjp with respect to its ``grad_outputs``, which enter linearly), jacobian row
by row (``vectorize=True``: all rows in one batched ``grad``), hessian as the jacobian of the
jacobian. Inputs are replaced by fresh tensors that require grad, so the function's own captures
of them are told apart; with ``strict`` a result independent of an input raises instead of being
zeros. ``strategy="forward-mode"`` (vectorized only, as in torch) pushes each column of an identity
through the function as dual tangents (torch vmaps the same columns).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from impl._creation import zeros_like
from impl._grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from impl._ops.stacking import stack
from impl._tensor import Tensor
from impl.autograd import forward_ad
from impl.autograd import grad as _autograd_grad_api

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_V_NONE = {
    "outputs": "The vector v can only be None if the user-provided function returns a single Tensor "
    "with a single element.",
    "inputs": "The vector v can only be None if the input to the user-provided function is a single "
    "Tensor with a single element.",
}
# strict mode: a tensor that does not require grad, by what it is (its index formatted in)
_INDEPENDENT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must "
    "be computed in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
    "user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input {i} is independent of the input. This is not allowed in strict mode. You "
    "should ensure that your function is twice differentiable and that the jacobian depends on "
    "the inputs (this would be violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the "
    "input. This is not allowed in strict mode. You should ensure that your function is thrice "
    "differentiable and that the hessian depends on the inputs.",
}
# strict mode: a gradient that is None, by the stage that computed it
_NO_GRADIENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed "
    "in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs "
    "when using the double backward trick to compute forward mode gradients. This is not "
    "allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not "
    "allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
    "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
    "double backward trick to replace forward mode AD.",
}
_CONSTANT = (
    "The {what} of the user-provided function is independent of input {i}. This is not allowed "
    "in strict mode when create_graph=True."
)


# -- arguments and results ------------------------------------------------------------------------
def _tensors(value: Any, what: str, api: str | None) -> tuple[bool, tuple]:
    """Whether ``value`` was a tuple, and it as a tuple of tensors (TypeError otherwise)."""
    was_tuple = isinstance(value, tuple)
    values = value if was_tuple else (value,)
    for i, element in enumerate(values):
        if not isinstance(element, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {what}"
            raise TypeError(
                f"The {what} given to {api} must be either a Tensor or a tuple of Tensors but the "
                f"{where} has type {type(element)}."
            )
    return was_tuple, values


def _fresh(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for ``tensors``: views that keep their graph where ``create_graph`` asks
    for gradients through them, detached ones (requiring grad if ``need_graph``) otherwise."""
    return tuple(
        t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
        for t in tensors
    )


def _released(results: tuple, create_graph: bool) -> tuple:
    """Results (nested tuples of tensors) detached from the graph unless ``create_graph``."""
    if results and isinstance(results[0], Tensor):
        return results if create_graph else tuple(t.detach() for t in results)
    return tuple(_released(inner, create_graph) for inner in results)


def _unpacked(results: tuple | list, was_tuple: bool | tuple[bool, bool]) -> Any:
    """``results`` shaped as the caller's arguments were: a lone tensor where one was given (for a
    jacobian, ``(outputs were a tuple, inputs were a tuple)``)."""
    outer, inner = was_tuple if isinstance(was_tuple, tuple) else (was_tuple, True)
    if not inner:
        results = tuple(row[0] for row in results)
    return results if outer else results[0]


def _check_v(v: tuple, like: tuple, like_is_tuple: bool) -> None:
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (given, wanted) in enumerate(zip(v, like, strict=True)):
        if given.size() != wanted.size():
            entry = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(
                f"{entry}v has invalid size: should be {wanted.size()} but got {given.size()}."
            )


def _vector(v: Any, api: str, like: tuple, like_is_tuple: bool, create_graph: bool, against: str) -> Any:
    """``v`` checked against ``like`` (the outputs or the inputs, as ``against`` says); None only
    where ``like`` is one tensor of one element."""
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(_V_NONE[against])
        return None
    _, v = _tensors(v, "v", api)
    v = _fresh(v, create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


def _require_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """Strict mode: each of ``tensors`` (of ``kind``, a key of _INDEPENDENT) must require grad."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:  # a gradient that does not exist
            raise RuntimeError(_NO_GRADIENT["back"].format(i=i))
        if not t.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind].format(i=i))


def _outputs(func: Callable, inputs: tuple, api: str, strict: bool) -> tuple[bool, tuple]:
    was_tuple, outputs = _tensors(func(*inputs), "outputs of the user-provided function", api)
    _require_grad(outputs, "outputs", strict)
    return was_tuple, outputs


def _one_number(func: Callable, inputs: tuple, api: str, strict: bool) -> tuple:
    """The outputs of a function that must return one tensor of one element (hessian, vhp, hvp)."""
    was_tuple, outputs = _outputs(func, inputs, api, strict)
    if was_tuple:
        raise RuntimeError(f"The function given to {api} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {api} should contain a single element"
        )
    return outputs


# -- gradients -----------------------------------------------------------------------------------
def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None, **options: Any) -> tuple:
    """``autograd.grad`` of the outputs that require grad (None for every input if none does)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    kept = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _autograd_grad_api(
        tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept), allow_unused=True, **options
    )


def _zeros_for_none(grads: tuple, like: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Gradients with zeros where there are none (strict mode: an error instead, and with
    create_graph also where a gradient is constant)."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_NO_GRADIENT[stage].format(i=i))
            g = zeros_like(like[i])
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(_CONSTANT.format(what="hessian" if "double" in stage else "jacobian", i=i))
        filled.append(g)
    return tuple(filled)


def _last_grad(
    outputs: tuple, wrt: tuple, v: Any, like: tuple, strict: bool, create_graph: bool, stage: str
) -> tuple:
    """The final backward of vjp, jvp, vhp and hvp: grad mode on where ``create_graph`` asks."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(outputs, wrt, v, create_graph=create_graph)
        return _zeros_for_none(grads, like, strict, create_graph, stage)


# -- the API -------------------------------------------------------------------------------------
def vjp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _outputs(func, inputs, "vjp", strict)
        v = _vector(v, "vjp", outputs, outputs_tuple, create_graph, against="outputs")
    result = _last_grad(outputs, inputs, v, inputs, strict, create_graph, "back")
    return (
        _unpacked(_released(outputs, create_graph), outputs_tuple),
        _unpacked(_released(result, create_graph), inputs_tuple),
    )


def jvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick."""
    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _vector(v, "jvp", inputs, inputs_tuple, create_graph, against="inputs")
        outputs_tuple, outputs = _outputs(func, inputs, "jvp", strict)
        # the vjp is linear in its grad_outputs: their values do not matter (zeros: no inf or nan)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True)
        _require_grad(grad_inputs, "grad_inputs", strict)
    result = _last_grad(grad_inputs, grad_outputs, v, outputs, strict, create_graph, "back_trick")
    return (
        _unpacked(_released(outputs, create_graph), outputs_tuple),
        _unpacked(_released(result, create_graph), outputs_tuple),
    )


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: for output i and input j, a tensor of shape
    ``outputs[i].shape + inputs[j].shape`` (nested as the arguments and results were tuples)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has '
            'more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use '
            '"reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` are '
                "not supported together (yet). Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.'
            )
        _tensors(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
        return _jacfwd(func, inputs)
    with enable_grad():
        inputs_tuple, inputs = _tensors(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _outputs(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                "together. Please either set `strict=False` or `vectorize=False`."
            )
        blocks = (_batched_rows if vectorize else _rows)(outputs, inputs, create_graph, strict)
        jac = tuple(zip(*blocks, strict=True))  # per output, per input
        return _unpacked(_released(jac, create_graph), (outputs_tuple, inputs_tuple))


def _jacfwd(func: Callable, inputs: Any) -> Any:
    """The Jacobian by forward-mode AD: per input element, one forward pass with that element's
    unit tangent; the output tangents are the Jacobian's columns."""
    inputs_tuple, inputs = _tensors(inputs, "inputs", "jacobian")
    counts = [inp.numel() for inp in inputs]
    columns, outputs_tuple, outputs = [], False, ()
    for k in range(max(sum(counts), 1)):
        with forward_ad.dual_level():
            duals, start = [], 0
            for inp, n in zip(inputs, counts, strict=True):
                tangent = inp.new_zeros(n)
                if start <= k < start + n:
                    tangent[k - start] = 1
                duals.append(forward_ad.make_dual(inp, tangent.view_as(inp)))
                start += n
            outputs_tuple, duals_out = _tensors(func(*duals), "outputs", None)  # torch names no api
            unpacked = [forward_ad.unpack_dual(out) for out in duals_out]
            outputs = tuple(u.primal for u in unpacked)
            columns.append([zeros_like(u.primal) if u.tangent is None else u.tangent for u in unpacked])
    jacobian = []
    for i, out in enumerate(outputs):
        rows = stack([column[i] for column in columns]) if sum(counts) else out.new_zeros((0, *out.shape))
        per_input = []
        for jac, inp in zip(rows.split(counts, dim=0), inputs, strict=True):
            per_input.append(jac.permute(*range(1, jac.ndim), 0).reshape((*out.shape, *inp.shape)))
        jacobian.append(per_input)
    return _unpacked(jacobian, (outputs_tuple, inputs_tuple))  # lists where torch's are lists


def _rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> list[list]:
    """Per input, per output, the Jacobian block: one backward per element of each output."""
    blocks: list[list] = [[] for _ in inputs]
    for i, out in enumerate(outputs):
        per_input: list[list] = [[] for _ in inputs]
        flat = out.reshape(-1)
        for k in range(out.nelement()):
            row = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
            for j, (g, inp) in enumerate(zip(row, inputs, strict=True)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of input "
                            f"{j}. This is not allowed in strict mode."
                        )
                    g = zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(_CONSTANT.format(what="jacobian", i=i))
                per_input[j].append(g)
        for j, grads in enumerate(per_input):
            blocks[j].append(stack(grads, dim=0).view(out.size() + inputs[j].size()))
    return blocks


def _batched_rows(outputs: tuple, inputs: tuple, create_graph: bool, _strict: bool) -> list[list]:
    """Per input, per output, the Jacobian block: one batched backward, the grad_outputs the rows
    of an identity split among the outputs."""
    counts = [out.numel() for out in outputs]
    total, start, basis = sum(counts), 0, []
    for out, n in zip(outputs, counts, strict=True):
        chunk = out.new_zeros(total, n)
        chunk.diagonal(-start).fill_(1)
        basis.append(chunk)
        start += n
    flat = tuple(out.reshape(-1) for out in outputs)
    grads = _grad(flat, inputs, tuple(basis), create_graph=create_graph, is_grads_batched=True)
    blocks = []
    for g, inp in zip(grads, inputs, strict=True):
        if g is None:
            g = zeros_like(inp).expand((total, *inp.shape))
        blocks.append(
            [
                part.view(out.shape + inp.shape)
                for part, out in zip(g.split(counts, dim=0), outputs, strict=True)
            ]
        )
    return blocks


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a function returning one number: the jacobian of its gradient."""
    inputs_tuple, inputs = _tensors(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def one_number(*args: Tensor) -> Tensor:
        return _one_number(func, args, "hessian", strict)[0].squeeze()

    def gradient(*args: Tensor) -> tuple:
        if outer_jacobian_strategy == "forward-mode":
            args = tuple(t.requires_grad_(True) for t in args)
        jac = jacobian(one_number, args, create_graph=True)
        _require_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _unpacked(result, (inputs_tuple, inputs_tuple))


def _gradient_of_one_number(
    func: Callable, inputs: Any, v: Any, api: str, create_graph: bool, strict: bool
) -> tuple:
    """vhp's and hvp's start (grad mode on): the inputs (whether a tuple, and fresh), v checked, the
    function's one number and its gradient with a graph."""
    inputs_tuple, inputs = _tensors(inputs, "inputs", api)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    v = _vector(v, api, inputs, inputs_tuple, create_graph, against="inputs")
    outputs = _one_number(func, inputs, api, strict)
    jac = _grad(outputs, inputs, create_graph=True)
    _require_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs, jac


def vhp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), v^T H)`` for a function returning one number."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _gradient_of_one_number(
            func, inputs, v, "vhp", create_graph, strict
        )
    result = _last_grad(jac, inputs, v, inputs, strict, create_graph, "double_back")
    return _released(outputs, create_graph)[0], _unpacked(_released(result, create_graph), inputs_tuple)


def hvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple:
    """``(func(inputs), H v)`` for a function returning one number, by the double-backward trick."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _gradient_of_one_number(
            func, inputs, v, "hvp", create_graph, strict
        )
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _require_grad(jac, "hessian", strict)
    result = _last_grad(double_back, grad_jac, v, inputs, strict, create_graph, "double_back_trick")
    return _released(outputs, create_graph)[0], _unpacked(_released(result, create_graph), inputs_tuple)
