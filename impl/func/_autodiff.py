"""torch.func's autodiff transforms on impl's reverse-mode engine: grad, grad_and_value, vjp, jvp
(the transpose of a vjp, so that every transform nests in every other), jacrev, jacfwd, hessian,
linearize.

Each call tracks its differentiated inputs as fresh graph inputs (a clone where the input already
has a graph, so that nested transforms differentiate each level apart) and builds its gradients
with a graph; what it returns keeps that graph only inside another transform or where an input had
one, as torch's results carry a grad_fn only then."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from impl._creation import zeros_like
from impl._grad_mode import enable_grad
from impl._ops.stacking import stack
from impl._tensor import Tensor
from impl.autograd import grad as _autograd_grad
from impl.func._pytree import tree_flatten, tree_map, tree_unflatten

_depth = [0]  # how many grad-like transforms are running


def _slice_argnums(args: tuple, argnums: Any) -> Any:
    """The arguments ``argnums`` picks (one, or a tuple), with torch's argnums errors."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    picks = argnums if isinstance(argnums, tuple) else (argnums,)
    wrapped = []
    for a in picks:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -len(args) <= a < len(args):
            raise RuntimeError(f"Got argnum={a}, but only {len(args)} positional inputs")
        wrapped.append(a % len(args))
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(wrapped) if isinstance(argnums, tuple) else wrapped[0]


def _replace(args: tuple, picked: Any, new: Any) -> tuple:
    if isinstance(picked, int):
        return tuple(new if i == picked else a for i, a in enumerate(args))
    return tuple(new[picked.index(i)] if i in picked else a for i, a in enumerate(args))


def _track(x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return x.clone() if x.requires_grad else x.detach().requires_grad_()


def _reaches_outside(t: Tensor, inputs: set[int], seen: set[int]) -> bool:
    """Whether ``t`` is, or its graph reaches, a leaf that requires grad other than ``inputs``."""
    if t.grad_fn is None:
        return t.requires_grad and id(t) not in inputs
    todo = [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "variable", None)
        if leaf is not None and id(leaf) not in inputs:
            return True
        todo.extend(n for n, _ in node.next_functions)
    return False


class _Level:
    """One transform's call: its differentiated inputs tracked, and whether its results keep a graph."""

    def __init__(self, args: tuple, argnums: Any):
        self.picked = _slice_argnums(args, argnums) if argnums is not None else None
        diff = (
            args
            if self.picked is None
            else (args[self.picked] if isinstance(self.picked, int) else tuple(args[i] for i in self.picked))
        )
        leaves, self.spec = tree_flatten(diff)
        self.keep = _depth[0] > 1 or any(isinstance(t, Tensor) and t.requires_grad for t in leaves)
        self.inputs = [_track(t) for t in leaves]
        tracked = tree_unflatten(self.inputs, self.spec)
        self.args = tracked if self.picked is None else _replace(args, self.picked, tracked)

    def release(self, tree: Any, keep: bool = False) -> Any:
        """Results as torch returns them: without this level's graph unless one is kept, or a result
        depends on a tensor that requires grad outside the transform (a module's parameter)."""
        if self.keep or keep:
            return tree
        inputs = {id(t) for t in self.inputs}
        seen: set[int] = set()
        kept = lambda t: not isinstance(t, Tensor) or _reaches_outside(t, inputs, seen)  # noqa: E731
        return tree_map(lambda t: t if kept(t) else t.detach(), tree)

    def grads(self, outputs: list, cotangents: list | None) -> list:
        """The gradients of ``outputs`` (weighted by ``cotangents``) for each tracked input; zeros
        for an input they do not reach."""
        pairs = [
            (o, c)
            for o, c in zip(outputs, cotangents or [None] * len(outputs), strict=True)
            if o.requires_grad
        ]
        if not pairs:
            return [zeros_like(t) for t in self.inputs]
        found = _autograd_grad(
            [o for o, _ in pairs],
            self.inputs,
            [c for _, c in pairs] if cotangents is not None else None,
            retain_graph=True,
            create_graph=True,
            allow_unused=True,
        )
        return [zeros_like(t) if g is None else g for g, t in zip(found, self.inputs, strict=True)]


def _nested(fn: Callable) -> Callable:
    """Run ``fn`` as one level of transforms, with grad mode on."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        _depth[0] += 1
        try:
            with enable_grad():
                return fn(*args, **kwargs)
        finally:
            _depth[0] -= 1

    return run


def _split_aux(out: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for leaf in tree_flatten(out[1])[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return out


def grad_and_value(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad_and_value: (gradients for ``argnums``, value[, aux])."""

    @functools.wraps(func)
    @_nested
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        level = _Level(args, argnums)
        out, aux = _split_aux(func(*level.args, **kwargs), has_aux, "grad_and_value(f)(*args)")
        api = "grad_and_value(f)(*args): Expected f(*args) to return a"
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{api} Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(
                f"{api} scalar Tensor, got tensor with {out.dim()} dims. "
                "Maybe you wanted to use the vjp or jacrev APIs instead?"
            )
        grads = tree_unflatten(level.grads([out], None), level.spec)
        value = (out, aux) if has_aux else out
        return level.release((grads, value))

    return wrapper


def grad(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad: the gradients of a scalar function for ``argnums`` (and its aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def _tensor_outputs(out: Any, api: str) -> tuple[list, Any]:
    leaves, spec = tree_flatten(out)
    if not leaves or leaves == [None]:
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = {leaves})"
        )
    for o in leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}"
            )
    return leaves, spec


@_nested
def _vjp(func: Callable, primals: tuple, has_aux: bool, argnums: Any = None) -> tuple:
    level = _Level(primals, argnums)
    out, aux = _split_aux(func(*level.args), has_aux, "vjp(f, *primals)")
    outputs, out_spec = _tensor_outputs(out, "vjp(f, *primals)")
    for o in outputs:
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                f"with dtype {o.dtype}"
            )

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> Any:
        flat, spec = tree_flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                f"to the function. cotangents: {spec}, primal output: {out_spec}"
            )
        outer = _depth[0] > 0 or any(isinstance(c, Tensor) and c.requires_grad for c in flat)
        with enable_grad():
            grads = tree_unflatten(level.grads(outputs, flat), level.spec)
        return level.release(grads, outer)

    result = (level.release(out), vjp_fn)
    return (*result, level.release(aux)) if has_aux else result


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """torch.func.vjp: (func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) is a tuple of gradients."""
    return _vjp(func, primals, has_aux)


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False) -> tuple:
    """torch.func.jvp: (func(*primals), the derivative along ``tangents``[, aux])."""
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For example, if "
            f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure {p_spec} "
            f"and tangents with structure {t_spec}"
        )
    for flat, name in ((flat_p, "primals"), (flat_t, "tangents")):
        if not flat:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got {type(x)}")
    for p, t in zip(flat_p, flat_t, strict=True):
        if p.shape != t.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the original "
                f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                f"forward gradient is of size {list(t.shape)}."
            )
    return _jvp(func, primals, flat_t, strict, has_aux)


@_nested
def _jvp(func: Callable, primals: tuple, tangents: list, strict: bool, has_aux: bool) -> tuple:
    level = _Level(primals, None)
    out, aux = _split_aux(func(*level.args), has_aux, "jvp(f, primals, tangents)")
    outputs, out_spec = tree_flatten(out)
    for o in outputs:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"jvp(f, primals, tangents): expected f(*args) to return only tensors, got "
                f"unsupported type {type(o)}"
            )
    # J t as the gradient of (J^T u) . t for a dummy cotangent u
    dummies = [zeros_like(o).requires_grad_() for o in outputs]
    back = level.grads(outputs, dummies)
    derivs = []
    for o, u in zip(outputs, dummies, strict=True):
        pairs = [(b, t) for b, t in zip(back, tangents, strict=True) if b.requires_grad]
        found = (
            _autograd_grad(
                [b for b, _ in pairs],
                [u],
                [t for _, t in pairs],
                retain_graph=True,
                create_graph=True,
                allow_unused=True,
            )[0]
            if pairs
            else None
        )
        if found is None:
            if strict:
                raise RuntimeError(
                    "jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                    "This is not allowed with strict=True."
                )
            found = zeros_like(o)
        derivs.append(found)
    keep = level.keep or any(t.requires_grad for t in tangents)
    result = (level.release(out, keep), level.release(tree_unflatten(derivs, out_spec), keep))
    return (*result, level.release(aux, keep)) if has_aux else result


def linearize(func: Callable, *primals: Any) -> tuple:
    """torch.func.linearize: (func(*primals), jvp_fn); jvp_fn(*tangents) is the derivative along them."""
    out = tree_map(Tensor.detach, func(*primals))

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn


def _untangented(args: tuple, argnums: Any) -> list[bool]:
    """Per differentiated input leaf, whether torch's jacfwd leaves it without a tangent: one picked
    by a negative argnum (torch puts the tangents in by the argnums as given), whose columns are zero."""
    picks = argnums if isinstance(argnums, tuple) else (argnums,)
    return [a < 0 for a in picks for _ in tree_flatten(args[a])[0]]


def _jacobian(func: Callable, argnums: Any, has_aux: bool, api: str) -> Callable:
    """The Jacobian of every output for every differentiated input: output structure outside,
    the inputs' inside (a tuple of them where ``argnums`` is a tuple)."""

    @functools.wraps(func)
    @_nested
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        level = _Level(args, argnums)
        out, aux = _split_aux(func(*level.args, **kwargs), has_aux, f"{api}(f, ...)(*args)")
        outputs, out_spec = _tensor_outputs(out, f"{api}(f, ...)(*args)")
        dead = _untangented(args, argnums) if api == "jacfwd" else [False] * len(level.inputs)
        blocks = []
        for o in outputs:
            rows = []
            for i in range(o.numel()):
                basis = zeros_like(o).reshape(-1)
                basis[i] = 1
                rows.append(level.grads([o], [basis.reshape(o.shape)]))
            per_input = []
            for k, x in enumerate(level.inputs):
                cols = [r[k] for r in rows]
                if dead[k] or not cols:
                    per_input.append(x.new_zeros((*o.shape, *x.shape)))
                else:
                    per_input.append(stack(cols).reshape(*o.shape, *x.shape))
            blocks.append(tree_unflatten(per_input, level.spec))
        jac = tree_unflatten(blocks, out_spec)
        return level.release((jac, aux) if has_aux else jac)

    return wrapper


def jacrev(
    func: Callable,
    argnums: Any = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """torch.func.jacrev: the Jacobian by reverse mode."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "jacrev")


def jacfwd(func: Callable, argnums: Any = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """torch.func.jacfwd: the Jacobian (its values; impl builds it by the same reverse passes)."""
    return _jacobian(func, argnums, has_aux, "jacfwd")


def hessian(func: Callable, argnums: Any = 0) -> Callable:
    """torch.func.hessian: jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)
