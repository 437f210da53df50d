"""torch.autograd.Function: user-defined ops with a ``forward``/``backward`` pair and a ctx.

``Function.apply`` runs ``forward`` without recording, then makes the ctx (an instance of the
generated ``<Class>Backward`` node) the grad_fn of the differentiable outputs.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from impl import _grad_mode as grad_mode
from impl._creation import zeros_like
from impl._graph import FREED, Node, SavedTensor, input_meta
from impl._names import type_name
from impl._ops.inplace import _rebase_history, _write_tangent
from impl._tensor import Tensor, zeros_of
from impl.autograd.forward_ad import check_tangent_size, set_fw_grad

DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
ONCE_DIFF = "trying to differentiate twice a function that was marked with @once_differentiable"
BOTH_BACKWARD_AND_VJP = (
    "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should only "
    "implement one of them."
)
DIRTY_VIEW_OUTPUTS = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
    "return more than one Tensor. This is not supported by the current autograd engine. You should "
    "either make sure the input is not a view (using .clone() for example) or make your Function only "
    "return one Tensor (potentially splitting it into two Functions: one doing the inplace that returns "
    "a single Tensor and a second one that does the other operations). You can ask on the forum "
    "https://discuss.pytorch.org/ if you need help to do this change."
)
NO_JVP = "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
JVP_NOT_VIEW = (
    "A custom Function's forward is returning a view (or an input as-is) but the jvp is not returning a view."
)
JVP_NOT_SAME_BASE = (
    "A custom Function is returning a view but the jvp is not returning a view of the same base as the "
    "given grad input."
)
JVP_NOT_VIEW_OF_GRAD = (
    "A custom Function is returning a view but the jvp is not returning a view of the given grad input."
)
JVP_INPLACE_NOT_MODIFIED = (
    "An inplace custom Function is not modifying the forward mode gradients inplace. If the forward is "
    "modifying an input inplace, then the jvp function must modify the corresponding gradient inplace."
)
JVP_INPLACE_NOT_RETURNED = (
    "An inplace custom Function is not returning the forward mode gradients as-is. If the forward is "
    "modifying an input inplace, then the jvp function must modify the gradient inplace and return it as-is."
)
DIRTY_NOT_INPUT = (
    "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there is no need "
    "to pass it to mark_dirty()."
)
JVP_UNDEFINED = (
    "(new_grad_base.is_floating_point() || new_grad_base.is_complex()) && (self_base.is_floating_point() "
    "|| self_base.is_complex()) INTERNAL ASSERT FAILED at "
    '"/__w/pytorch/pytorch/torch/csrc/autograd/autograd_meta.cpp":159, please report a bug to PyTorch. '
    "Expected both tensor and its forward grad to be floating point or complex"
)
LEGACY = (
    "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
    "autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
)


def view_kind(differentiable_outputs: int) -> str:
    """The creation meta (``Tensor._creation_meta``) of a custom Function's output views: torch's
    IN_CUSTOM_FUNCTION ("custom"), or MULTI_OUTPUT_NODE ("multiple") for a Function with several
    differentiable outputs."""
    return "multiple" if differentiable_outputs > 1 else "custom"


class FunctionCtx:
    """The ``ctx`` of forward/backward: saving tensors and marking outputs."""

    def save_for_backward(self, *tensors: Any) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                kind = type(t).__name__
                msg = f"save_for_backward can only save variables, but argument {i} is of type {kind}"
                raise TypeError(msg)
        self._to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Tensors for ``jvp``, which reads them as ``saved_tensors`` (during ``apply`` only)."""
        if not all(t is None or isinstance(t, Tensor) for t in tensors):
            raise AssertionError(
                "save_for_forward expects all arguments to be tensors; you should save non-tensors as "
                "attributes on ctx."
            )
        self._saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked for in-place writes. Once backward
        has released the node, reading them raises torch's error even when nothing was saved
        (torch frees the node's buffers as a whole, not per tensor)."""
        for_forward = getattr(self, "_saved_for_forward", None)
        if for_forward is not None:  # inside jvp
            return for_forward
        if getattr(self, "_released", False):
            raise RuntimeError(FREED)
        return tuple(s.unpack(self) if s is not None else None for s in getattr(self, "_saved", ()))

    @property
    def saved_variables(self) -> tuple:
        """``saved_tensors`` under its deprecated name, with torch's DeprecationWarning."""
        message = "'saved_variables' is deprecated; use 'saved_tensors'"
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def mark_dirty(self, *args: Any) -> None:
        self._dirty = args

    def mark_non_differentiable(self, *args: Any) -> None:
        self._non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """grad_fn of a custom Function: calls the user's ``backward`` with this node as ctx."""

    _forward_cls: type

    def __init__(self) -> None:
        Node.__init__(self)
        self.materialize_grads = True
        # torch's ctx._materialize_non_diff_grads: False passes None, not zeros, for the gradients
        # of outputs that are not differentiable (_non_diff_slots), even with materialize_grads
        self._materialize_non_diff_grads = True
        self._non_diff_slots: set[int] = set()
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self._to_save: tuple = ()
        self._saved: tuple = ()
        self._is_tensor_input: tuple = ()

    def apply(self, grads: tuple) -> tuple:
        if self.materialize_grads:
            metas, skip = self._input_meta, () if self._materialize_non_diff_grads else self._non_diff_slots
            grads = tuple(
                g if g is not None or m is None or i in skip else zeros_of(m)
                for i, (g, m) in enumerate(zip(grads, metas, strict=False))
            )
        result = _user_backward(self._forward_cls)(self, *grads)
        result = result if isinstance(result, tuple) else (result,)
        n_inputs = len(self._is_tensor_input)
        if len(result) != n_inputs:
            if len(result) > n_inputs and all(r is None for r in result[n_inputs:]):
                result = result[:n_inputs]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected "
                    f"{n_inputs}, got {len(result)})"
                )
        return tuple(r for r, is_t in zip(result, self._is_tensor_input, strict=False) if is_t)

    def __call__(self, *grads: Any) -> Any:
        """torch's Python nodes are not callable; only C++ nodes are."""
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def release(self) -> None:
        self._released = True
        for s in self._saved:
            if s is not None:
                s.release()


def _user_backward(cls: type) -> Callable:
    """The Function's ``vjp`` if it defines one, else its ``backward``; defining both is torch's error."""
    if cls.vjp is Function.vjp:
        return cls.backward
    if cls.backward is not Function.backward:
        raise RuntimeError(BOTH_BACKWARD_AND_VJP)
    return cls.vjp


class FunctionMeta(type):
    """Creates the ``<Name>Backward`` node class for every Function subclass."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom autograd functions (static ``forward(ctx, ...)``, ``backward(ctx, ...)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
            "so you should invoke them on the class itself. Instantiating an autograd function will raise "
            "an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(LEGACY)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """The forward-mode derivative: the outputs' tangents from the inputs' (None for a non-tensor)."""
        raise NotImplementedError(NO_JVP)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Override to save for backward when ``forward`` takes no ctx (torch 2 style)."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = cls._backward_cls()
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        tangents = _input_tangents(args)
        ctx._is_tensor_input = is_tensor
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        executable = grad_mode.is_recording() and any(ctx.needs_input_grad)
        with grad_mode.no_grad(), grad_mode.fw_grad_disabled():
            if cls.setup_context is not Function.setup_context:  # forward without ctx (torch 2 style)
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if executable:
            ctx._next = tuple(a._edge() for a, t in zip(args, is_tensor, strict=False) if t)
            _bump_dirty(ctx)
            _check_dirty_views(ctx, outs)
            kind = view_kind(sum(_differentiable(ctx, o) for o in outs))
            wired = tuple(_wire_output(ctx, o, i, args, kind) for i, o in enumerate(outs))
        else:
            wired = tuple(_unwired_output(ctx, o, args) for o in outs)
        try:
            if tangents is not None:
                _forward_mode(ctx, args, tangents, outs, wired)
        finally:
            ctx._saved_for_forward = None
        # an output (its grad_fn the node) is saved as torch saves one: without its history
        ctx._saved = tuple(
            None if t is None else SavedTensor(t, *((ctx, True, t._output_nr) if t._grad_fn_ is ctx else ()))
            for t in ctx._to_save
        )
        ctx._to_save = ()  # (an output kept here would hold its node: a cycle torch does not make)
        return wired[0] if single else wired


def _bump_dirty(ctx: BackwardCFunction) -> None:
    """The versions of the inputs marked dirty, bumped first (whatever error wiring the outputs raises)."""
    for t in ctx._dirty:
        t._vc.bump()


def _check_dirty_views(ctx: BackwardCFunction, outs: tuple) -> None:
    """torch refuses a Function that edits a view in place (marked dirty) and returns several outputs."""
    if len(outs) > 1 and any(isinstance(t, Tensor) and t._base_ is not None for t in ctx._dirty):
        raise RuntimeError(DIRTY_VIEW_OUTPUTS)


def _differentiable(ctx: BackwardCFunction, out: Any) -> bool:
    return (
        isinstance(out, Tensor)
        and out.dtype.is_floating_point
        and not any(out is t for t in ctx._non_differentiable)
    )


def _wire_output(ctx: BackwardCFunction, out: Any, i: int, inputs: tuple, kind: str) -> Any:
    if not isinstance(out, Tensor):  # still an output: backward gets a gradient for it, always None
        ctx._input_meta.append(None)
        return out
    ctx._input_meta.append(input_meta(out))
    if not _differentiable(ctx, out):
        ctx._non_diff_slots.add(i)
    if any(out is t for t in ctx._non_differentiable):
        return out
    is_input = any(out is a for a in inputs)
    dirty = any(out is t for t in ctx._dirty)
    if dirty:
        if out._grad_fn_ is None and out._requires_grad:
            raise RuntimeError(DIRTY_LEAF)
        if out._base_ is not None and out.dtype.is_floating_point:
            # a view edited in place: as an in-place op on it, the base gets a CopySlices node
            # around the Function's node, and the view an as_strided view of the base's new history
            _rebase_history(out, ctx)
            return out
    elif is_input:
        out = _view_of_input(out)
    # a view made in forward, or an input returned as-is, is a view of the Function's ``kind``
    # (view_kind); views of it inherit that
    out._creation_meta = kind if out._base_ is not None else ""
    if out.dtype.is_floating_point:
        out._grad_fn_, out._output_nr = ctx, i
    return out


def _view_of_input(out: Tensor) -> Tensor:
    """An unmodified input returned as-is comes back as a new tensor: a view of it."""
    view = out.detach()
    view._base_, view._view_version = out._base_ if out._base_ is not None else out, out._vc.value
    return view


def _unwired_output(ctx: BackwardCFunction, out: Any, inputs: tuple) -> Any:
    """An output of a Function that records nothing: an unmodified input comes back as a view of
    itself (detached where it requires grad), as torch's ``_view_as_self_with_no_grad``."""
    if not any(out is a for a in inputs) or any(out is t for t in ctx._dirty):
        return out
    return out.detach() if out.requires_grad else _view_of_input(out)


def _input_tangents(args: tuple) -> list | None:
    """The tangents of the tensor inputs (None where one has none), or None when none has one."""
    if grad_mode.forward_level.token is None:
        return None
    tangents = [grad_mode.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    return tangents if any(t is not None for t in tangents) else None


def _forward_mode(ctx: BackwardCFunction, args: tuple, tangents: list, raw: tuple, outs: tuple) -> None:
    """torch's ``_process_forward_mode_AD``: the user's ``jvp`` (forward AD off) gets each tensor
    input's tangent (zeros for a floating one without, as materialize_grads has it; None for the
    others) and gives each output its tangent, with torch's checks of views and in-place outputs."""
    versions = [None if t is None else t._vc.value for t in tangents]
    given = [
        None
        if not isinstance(a, Tensor)
        else t
        if t is not None or not ctx.materialize_grads or not (a.is_floating_point() or a.is_complex())
        else zeros_like(a)
        for a, t in zip(args, tangents, strict=True)
    ]
    with grad_mode.fw_grad_disabled():
        result = type(ctx)._forward_cls.jvp(ctx, *given)
    result = result if isinstance(result, tuple) else (result,)
    for i, r in enumerate(result):
        if r is not None and not isinstance(r, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type_name(r)}) for grad output {i}.")
    if len(result) != len(raw):
        raise RuntimeError(
            f"Function's jvp returned an invalid number of forward gradients (expected {len(raw)} but got "
            f"{len(result)})"
        )
    bases = {}
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            bases.setdefault(id(a._base_ if a._base_ is not None else a), i)
    for i, (r, out, grad) in enumerate(zip(raw, outs, result, strict=True)):
        if not isinstance(r, Tensor):
            continue
        if not _differentiable(ctx, r):
            if grad is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {i}, but  the corresponding forward "
                    "output is not a differentiable Tensor.You should return None at that position instead."
                )
            continue
        if grad is None:
            raise RuntimeError(JVP_UNDEFINED)
        if any(r is t for t in ctx._dirty):
            j = next((j for j, a in enumerate(args) if a is r), None)
            if j is None:
                raise RuntimeError(DIRTY_NOT_INPUT)
            if tangents[j] is None:
                check_tangent_size(out, grad)
                _write_tangent(out, grad)
            elif grad._vc.value == versions[j]:
                raise RuntimeError(JVP_INPLACE_NOT_MODIFIED)
            elif grad is not tangents[j]:
                raise RuntimeError(JVP_INPLACE_NOT_RETURNED)
            continue
        j = None if out._base_ is None else bases.get(id(out._base_))
        if j is not None and tangents[j] is None:  # a view of an input without a tangent: as in place
            check_tangent_size(out, grad)
            _write_tangent(out, grad)
            return  # torch stops here
        if j is not None:
            if grad._base_ is None:
                raise RuntimeError(JVP_NOT_VIEW)
            given_base = tangents[j]._base_
            if given_base is not None and grad._base_ is not given_base:
                raise RuntimeError(JVP_NOT_SAME_BASE)
            if given_base is None and grad._base_ is not tangents[j]:
                raise RuntimeError(JVP_NOT_VIEW_OF_GRAD)
        set_fw_grad(out, grad)


def once_differentiable(fn: Callable) -> Callable:
    """Run ``backward`` without recording; differentiating its result again raises torch's error."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with grad_mode.no_grad():
            result = fn(ctx, *grads)
        if not (
            grad_mode.is_grad_enabled() and any(isinstance(g, Tensor) and g.requires_grad for g in grads)
        ):
            return result
        wrapped = _delayed_error(result if isinstance(result, tuple) else (result,))
        return wrapped if isinstance(result, tuple) else wrapped[0]

    return wrapper


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag, kept by torch for backward compatibility only."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Error(Node):
    """torch's Error node: the grad_fn of @once_differentiable's results, raising its message when run."""

    def __init__(self, msg: str) -> None:
        super().__init__()
        self.msg = msg

    def name(self) -> str:
        return "torch::autograd::Error"

    def apply(self, grads: tuple) -> tuple:
        raise RuntimeError(self.msg)


def _delayed_error(outs: tuple) -> tuple:
    """torch's DelayedError applied to ``outs``: each tensor comes back as a tensor on its data
    whose grad_fn is one shared Error node; the node's edges lead to leaf aliases of them
    (torch's ``fake_requires_grad``)."""
    node = Error(ONCE_DIFF)
    edges, wrapped = [], []
    for i, out in enumerate(outs):
        if not isinstance(out, Tensor):  # None: an output slot without metadata, and no edge
            node._input_meta.append(None)
            edges.append((None, 0))
            wrapped.append(out)
            continue
        node._input_meta.append(input_meta(out))
        edges.append(out.detach().requires_grad_()._edge())
        out = Tensor._from_array(out._data)
        out._grad_fn_, out._output_nr = node, i
        wrapped.append(out)
    node._next = tuple(edges)
    return tuple(wrapped)
