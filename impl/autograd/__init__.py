"""torch.autograd: backward, grad, Function, Variable, grad modes and graph node types."""

from __future__ import annotations

from typing import Any

from impl.autograd import engine, graph
from impl.autograd.function import Function, FunctionCtx, once_differentiable
from impl.autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from impl.autograd.variable import Variable

__all__ = [
    "backward",
    "grad",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "Variable",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "graph",
]


def _as_tuple(x: Any) -> tuple:
    from impl._tensor import Tensor

    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grads: tuple) -> list:
    """torch's _make_grads: check given gradients, create ones for scalar outputs."""
    from impl._creation import ones_like
    from impl._tensor import Tensor

    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads, strict=False)):
        if isinstance(g, Tensor):
            if tuple(g.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                    f"has a shape of {o.shape}."
                )
            out.append(g)
        elif g is None:
            if o.requires_grad:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not o.dtype.is_floating_point:
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {o.dtype}"
                    )
                out.append(ones_like(o))
            else:
                out.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return out


def _root_edges(outputs: tuple) -> list:
    edges = []
    for i, o in enumerate(outputs):
        edge = o._edge()
        if edge[0] is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(edge)
    return edges


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of leaves (or of ``inputs``)."""
    outputs = _as_tuple(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(outputs, tuple(grads))
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outputs)
    targets = None
    if inputs is not None:
        targets = set()
        for t in inputs:
            t.retain_grad()  # as torch: raises for a tensor without grad, no-op on leaves
            node = t._edge()[0]
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.add(node)
    engine.execute(edges, grads, retain_graph, create_graph, accumulate_only=targets)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated."""
    from impl._creation import zeros_like

    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    gos = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    grads = _make_grads(outs, tuple(gos))
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outs)
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    captured = engine.execute(edges, grads, retain_graph, create_graph, capture=[t._edge() for t in ins])
    result = []
    for i, (t, g) in enumerate(zip(ins, captured, strict=False)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = zeros_like(t, requires_grad=create_graph)
        result.append(g)
    return tuple(result)
