"""torch.autograd: backward, grad, Function, Variable, grad modes and graph node types."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from typing import Any

from impl import _grad_mode as grad_mode
from impl import _graph as graph
from impl._creation import ones_like, zeros_like
from impl._grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from impl._ops.stacking import stack
from impl._size import Size
from impl._tensor import Tensor
from impl._warn import warn_once
from impl.autograd import engine
from impl.autograd import forward_ad as forward_ad
from impl.autograd.function import Function, FunctionCtx, once_differentiable
from impl.autograd.variable import Variable

# torch.autograd.grad_mode and torch.autograd.graph: the modules below Tensor that hold them (they
# cannot live in this package, whose import runs this file, which needs Tensor and the ops)
sys.modules[f"{__name__}.grad_mode"] = grad_mode
sys.modules[f"{__name__}.graph"] = graph
graph.packing = no_grad  # saved_tensors_hooks' pack hooks run without grad, as torch's

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
    "gradcheck",  # bound by impl's package, which imports impl.autograd.gradcheck
    "gradgradcheck",
]


def _as_tuple(x: Any) -> tuple:
    """A tensor as a 1-tuple, None as (), any other iterable as a tuple (gradients, inputs)."""
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _outputs_tuple(x: Any) -> tuple:
    """The tensors to differentiate: one tensor, or an iterable of them (None is not one, as in torch)."""
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _inputs_tuple(inputs: Any, fn: str) -> tuple:
    """``inputs`` as a tuple: a tensor, a dict's values (exactly a dict) or any other iterable."""
    if isinstance(inputs, Tensor):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{fn}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    return tuple(inputs)


def _batched_shape_error(i: int, grad_shape: tuple, out_shape: tuple) -> RuntimeError:
    return RuntimeError(
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
        "batch dimension. The sizes of the remaining dimensions are expected to match the shape of "
        f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
        f"{Size(grad_shape)} and output[{i}] has a shape of {Size(out_shape)}. If you only want "
        "some tensors in `grad_output` to be considered batched, consider using vmap."
    )


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool = False) -> list:
    """torch's _make_grads: check given gradients (pairs past the shorter of the two are dropped,
    as torch's zip does), create ones for scalar outputs.

    With ``is_grads_batched`` a gradient's first element must have the output's shape; torch
    reports the mismatch with that element's shape less its first dimension, and so does this.
    """
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads, strict=False)):
        if not isinstance(o, Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")
        if isinstance(g, Tensor):
            first = tuple(g[0].shape if is_grads_batched else g.shape)
            if first != tuple(o.shape):
                if is_grads_batched:
                    raise _batched_shape_error(i, first[1:], tuple(o.shape))
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                    f"has a shape of {o.shape}."
                )
            out.append(g)
        elif g is None:
            if o.requires_grad:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not o.dtype.is_floating_point:  # (a complex one included)
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {o.dtype}"
                    )
                out.append(ones_like(o))
            else:
                out.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return out


def _root_edges(outputs: tuple, grads: list) -> list:
    """The outputs' gradient edges, checked as torch's engine does (count, then requires_grad)."""
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    edges = []
    for i, o in enumerate(outputs):
        edge = o._edge()
        if edge[0] is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(edge)
    return edges


def _check_input(t: Any) -> None:
    """torch's engine refuses an input that is not a tensor (before looking at the next one)."""
    if not isinstance(t, Tensor):
        raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")


def _vmap_batch_size(grads: list) -> int:
    """What torch's vmap over the gradients checks before running: every one a tensor with a first
    dimension, all of one size; returns that size."""
    prefix = "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for "
    for g in grads:
        if not isinstance(g, Tensor):
            raise ValueError(
                f"{prefix}an input but the input is of type {type(g)}. We cannot vmap over "
                "non-Tensor arguments, please use None as the respective in_dim"
            )
        if g.dim() == 0:
            raise ValueError(
                f"{prefix}some input, but that input is a Tensor of dimensionality 0 so expected "
                "in_dim to satisfy 0 <= in_dim < 0."
            )
    sizes = [g.shape[0] for g in grads]
    if any(n != sizes[0] for n in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return sizes[0]


CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
    "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
    "to None after use to break the cycle and avoid the leak. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)"
)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of leaves (or of ``inputs``)."""
    if grad_variables is not None:
        message = "`grad_variables` is deprecated. Use `grad_tensors` instead."
        warnings.warn(message, FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _inputs_tuple(inputs, "backward")
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _outputs_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    grads = _make_grads(outputs, tuple(grads))
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outputs, grads)
    targets = None
    if inputs is not None:
        targets = set()
        for t in inputs:
            _check_input(t)
            t.retain_grad()  # as torch: raises for a tensor without grad, no-op on leaves
            node = t._edge()[0]
            if node is not None:  # (a view requiring grad through its base: torch's edge leads nowhere)
                targets.add(node)
    if create_graph:
        warn_once("backward(create_graph=True)", CREATE_GRAPH_CYCLE)
    engine.execute(edges, grads, retain_graph, create_graph, accumulate_only=targets)


def _run_grad(outs: tuple, ins: tuple, grads: list, retain_graph: bool, create_graph: bool) -> list:
    """One backward pass of autograd.grad: the gradients reaching ``ins`` (None where none does)."""
    edges = _root_edges(outs, grads)
    for t in ins:
        _check_input(t)
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    return engine.execute(edges, grads, retain_graph, create_graph, capture=[t._edge() for t in ins])


def _run_grad_batched(outs: tuple, ins: tuple, grads: list, retain_graph: bool, create_graph: bool) -> list:
    """is_grads_batched: torch vmaps one backward over the first dimension of the gradients; here
    one backward runs per batch element (the graph kept until the last) and the results are
    stacked, which gives torch's values (under create_graph a StackBackward0 ends the graph)."""
    size = _vmap_batch_size(grads)
    per_element = [
        _run_grad(outs, ins, [g[b] for g in grads], retain_graph or b < size - 1, create_graph)
        for b in range(size)
    ]
    return [None if gs[0] is None else stack(list(gs)) for gs in zip(*per_element, strict=True)]


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
) -> tuple | dict:
    """Gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated (as a
    dict with the keys of ``inputs`` when that is a dict)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _outputs_tuple(outputs)
    ins = _inputs_tuple(inputs, "grad")
    if len(ins) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
            "gradient for other parts of the graph, please use torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    gos = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    grads = _make_grads(outs, tuple(gos), is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    run = _run_grad_batched if is_grads_batched else _run_grad
    captured = run(outs, ins, grads, retain_graph, create_graph)
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
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result, strict=True))
    return tuple(result)


def _tensor_backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """``Tensor.backward``: ``backward(self, ...)`` (bound here, above the engine it runs)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__, _tensor_backward.__qualname__ = "backward", "Tensor.backward"
Tensor.backward = _tensor_backward
