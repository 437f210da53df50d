"""torch.func.vmap, evaluated one batch element at a time: each mapped input is sliced at its
in_dim, the function runs on every slice, and each output is stacked at its out_dim (an output
of out_dim None is the first element's). torch's validation of in_dims, out_dims and batch sizes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from impl import _random
from impl._ops.stacking import stack
from impl._tensor import Tensor
from impl.func._pytree import broadcast_prefix, tree_flatten, tree_unflatten


def _name(func: Any) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _flat_in_dims(func: Callable, in_dims: Any, args: tuple) -> tuple[list, list, Any]:
    """The flattened inputs and the in_dim of each (torch's errors for those that do not fit)."""
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>):"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"{head} expected `in_dims` to be int or a (potentially nested) tuple matching the structure "
            f"of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"{head} in_dims is not compatible with the structure of `inputs`. in_dims has structure "
            f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    for arg, dim in zip(flat_args, flat_dims, strict=True):
        if dim is None:
            continue
        if not isinstance(dim, int):
            raise ValueError(
                f"{head} Got in_dim={dim} for an input but in_dim must be either an integer "
                "dimension or None."
            )
        if not isinstance(arg, Tensor):
            raise ValueError(
                f"{head} Got in_dim={dim} for an input but the input is of type {type(arg)}. We cannot vmap "
                "over non-Tensor arguments, please use None as the respective in_dim"
            )
        if not -arg.dim() <= dim < arg.dim():
            raise ValueError(
                f"{head} Got in_dim={dim} for some input, but that input is a Tensor of dimensionality "
                f"{arg.dim()} so expected in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}."
            )
    return flat_args, flat_dims, spec


def _batch_size(flat_args: list, flat_dims: list) -> int:
    sizes = [a.size(d) for a, d in zip(flat_args, flat_dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return sizes[0]


def _element(flat_args: list, flat_dims: list, i: int) -> list:
    """The inputs of batch element ``i``: each mapped one selected at its in_dim."""
    return [a if d is None else a.select(d, i) for a, d in zip(flat_args, flat_dims, strict=True)]


def _flat_out_dims(func: Callable, out_dims: Any, outputs: Any) -> tuple[list, Any]:
    flat, spec = tree_flatten(outputs)
    incompatible = ValueError(
        f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
        f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has "
        f"structure {spec}."
    )
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims), spec
        if not (out_dims is None or isinstance(out_dims, int)):
            raise incompatible
        return [out_dims], spec
    dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise incompatible
    return dims, spec


def _random_error() -> None:
    raise RuntimeError(
        "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
        "'different' randomness flags on vmap or perform the randomness operation out of vmap"
    )


def _replayed_state(randomness: str) -> Any:
    """The global stream's state each batch element starts from (randomness="same"), else None."""
    return _random.default_generator.get_state() if randomness == "same" else None


def vmap(
    func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *, chunk_size: Any = None
) -> Callable:
    """torch.func.vmap: ``func`` mapped over a dimension of its inputs. Random ops raise torch's
    error (randomness="error"), draw anew for each element ("different": torch's draws of the
    batch at once where those are drawn in order, as uniforms are) or draw the first element's
    numbers again for every element ("same")."""

    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        for d in tree_flatten(out_dims)[0]:
            if not (d is None or isinstance(d, int)):
                raise ValueError(
                    f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                    "python collection of ints representing where in the outputs the vmapped dimension "
                    "should appear."
                )
        flat_args, flat_dims, spec = _flat_in_dims(func, in_dims, args)
        size = _batch_size(flat_args, flat_dims)
        results = []
        start = _replayed_state(randomness)
        _random.draw_guards.append(_random_error if randomness == "error" else None)
        try:
            for i in range(size):
                if start is not None:
                    _random.default_generator.set_state(start)
                results.append(func(*tree_unflatten(_element(flat_args, flat_dims, i), spec), **kwargs))
        finally:
            _random.draw_guards.pop()
        dims, out_spec = _flat_out_dims(func, out_dims, results[0])
        columns = [tree_flatten(r)[0] for r in results]
        flat_out = []
        for k, d in enumerate(dims):
            values = [c[k] for c in columns]
            if d is None:
                flat_out.append(values[0])
                continue
            if not isinstance(values[0], Tensor):
                raise ValueError(
                    f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                    f"{type(values[0])}. Did you mean to set out_dims= to None for output?"
                )
            flat_out.append(stack(values, d))
        return tree_unflatten(flat_out, out_spec)

    return wrapped
