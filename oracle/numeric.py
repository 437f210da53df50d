"""Numerical gradient checks: a backend's own gradients against central finite differences
computed on the same backend, in float64 -- an oracle that does not need torch at all.

The idea is ``torch.autograd.gradcheck``'s, implemented over the public Tensor API only
(``tensor``, ``reshape``, ``tolist``, ``backward``, ``.grad``, ``autograd.grad``), so any backend can
be checked: the function under test is a list of ops (dicts ``{"out", "op", "args", "kwargs"}`` over
inputs ``i0, i1, ...``, as in a custom Function step), the analytical Jacobian is read from ``.grad``
after one backward per output element, the numerical one from ``(f(x + eps) - f(x - eps)) / 2eps``
per input element. ``second_order`` turns a function into its vector-Jacobian product with
``create_graph=True``, so the same check covers second derivatives (gradgradcheck).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from oracle.program import OPS, DType, Ref
from oracle.trace import lacked

# float64 central differences with eps=1e-6 are accurate to ~1e-9 relative on the smooth functions
# checked, so the bounds are tighter than gradcheck's defaults (atol=1e-5, rtol=1e-3): a gradient
# off by a relative 1e-3 must be caught.
EPS = 1e-6
ATOL = 1e-6
RTOL = 1e-5

Function = Callable[[list[Any]], Any]

# Where each bending op's branch changes: ops on its arguments whose signs pick the branch.
BENDS: dict[str, Callable[[list], list[tuple[str, list]]]] = {
    "maximum": lambda args: [("sub", args)],
    "minimum": lambda args: [("sub", args)],
    "abs": lambda args: [("clone", args)],
    "relu": lambda args: [("clone", args)],
    "clamp": lambda args: [("sub", [args[0], bound]) for bound in args[1:]],
}
# Central differences in float64 resolve about 1e-10 of the size of the values they difference:
# values at most this large keep that rounding error below the comparison's ATOL (1e-6).
MAGNITUDE = 1e3


def op_function(torch: Any, ops: list[dict]) -> Function:
    """The function ``inputs -> value of the last op`` computing ``ops`` with ``torch``."""

    def run(inputs: list[Any]) -> Any:
        env: dict[str, Any] = {f"i{k}": x for k, x in enumerate(inputs)}

        def value(arg: Any) -> Any:
            if isinstance(arg, Ref):
                return env[arg.name]
            if isinstance(arg, list):
                return [value(a) for a in arg]
            return getattr(torch, arg.name) if isinstance(arg, DType) else arg

        for spec in ops:
            args = [value(a) for a in spec["args"]]
            kwargs = {k: value(v) for k, v in spec.get("kwargs", {}).items()}
            method = OPS[spec["op"]].style == "method"
            call = getattr(args.pop(0), spec["op"]) if method else getattr(torch, spec["op"])
            env[spec["out"]] = call(*args, **kwargs)
        return env[ops[-1]["out"]]

    return run


def second_order(torch: Any, fn: Function, weights: list[float]) -> Function:
    """``inputs -> sum_k d(weights . fn(inputs)) / d input_k`` flattened and concatenated, built with
    ``create_graph=True`` so that it is differentiable again (its Jacobian is fn's Hessian-vector
    structure)."""

    def run(inputs: list[Any]) -> Any:
        out = fn(inputs).reshape(-1)
        v = torch.tensor(weights[: out.numel()], dtype=out.dtype)
        grads = torch.autograd.grad([out], inputs, grad_outputs=[v], create_graph=True, allow_unused=True)
        parts = [torch.zeros_like(x) if g is None else g for g, x in zip(grads, inputs, strict=True)]
        return torch.cat([p.reshape(-1) for p in parts])

    return run


def _leaves(torch: Any, values: list[list[float]], shapes: list[tuple[int, ...]]) -> list[Any]:
    return [
        torch.tensor(v, dtype=torch.float64).reshape(s).requires_grad_(True)
        for v, s in zip(values, shapes, strict=True)
    ]


def numerical_jacobian(
    torch: Any, fn: Function, values: list[list[float]], shapes: list[tuple[int, ...]]
) -> list[list[list[float]]]:
    """Per input k: J[k][i][j] = d out_j / d x_k[i] by central differences."""
    jacobians = []
    for k, flat in enumerate(values):
        rows = []
        for i in range(len(flat)):
            sides = []
            for step in (EPS, -EPS):
                moved = [list(v) for v in values]
                moved[k][i] += step
                sides.append(fn(_leaves(torch, moved, shapes)).detach().reshape(-1).tolist())
            rows.append([(a - b) / (2 * EPS) for a, b in zip(*sides, strict=True)])
        jacobians.append(rows)
    return jacobians


def analytical_jacobian(
    torch: Any, fn: Function, values: list[list[float]], shapes: list[tuple[int, ...]]
) -> list[list[list[float]]]:
    """Per input k: J[k][i][j] read from ``x_k.grad`` after backward from output element j."""
    size = fn(_leaves(torch, values, shapes)).numel()
    columns: list[list[list[float]]] = [[] for _ in values]  # [k][j] -> gradient of out_j (flat)
    for j in range(size):
        inputs = _leaves(torch, values, shapes)
        out = fn(inputs).reshape(-1)
        if out.requires_grad:
            out[j].backward()
        for k, x in enumerate(inputs):
            grad = x.grad
            columns[k].append([0.0] * len(values[k]) if grad is None else grad.reshape(-1).tolist())
    return [[[col[i] for col in columns[k]] for i in range(len(values[k]))] for k in range(len(values))]


@dataclass
class Mismatch:
    """An entry where the backend's gradient and the finite difference disagree."""

    input: int
    element: int
    output: int
    analytical: float
    numerical: float

    def __str__(self) -> str:
        return (
            f"d out[{self.output}] / d i{self.input}[{self.element}]: backend {self.analytical!r}, "
            f"finite differences {self.numerical!r}"
        )


class GradientMismatchError(AssertionError):
    """A backend's gradients differ from the finite differences of its own forward: the failure
    of a numerical gradient check, with a repro script (``torch.autograd.gradcheck`` of the same
    function at the same point, or ``gradgradcheck`` for second derivatives)."""

    SHOWN = 5  # mismatches named in the description

    def __init__(self, mismatches: list[Mismatch], ops: list[dict], values: list, shapes: list, order: int):
        self.mismatches, self.ops, self.order = mismatches, ops, order
        self.values, self.shapes = values, shapes
        super().__init__(self.describe())

    def describe(self) -> str:
        which = "second derivatives" if self.order == 2 else "gradients"
        shown = "; ".join(map(str, self.mismatches[: self.SHOWN]))
        more = len(self.mismatches) - self.SHOWN
        tail = f" (and {more} more)" if more > 0 else ""
        return f"{which} differ from finite differences: {shown}{tail}"

    def repro(self) -> str:
        from oracle.render import body_lines

        names = [f"i{k}" for k in range(len(self.values))]
        check = "gradgradcheck" if self.order == 2 else "gradcheck"
        return "\n".join([
            "import torch",
            "",
            f"def f({', '.join(names)}):",
            *(f"    {line}" for line in body_lines(self.ops)),
            f"    return {self.ops[-1]['out']}",
            "",
            "inputs = (",
            *(f"    torch.tensor({v!r}, dtype=torch.float64).reshape({tuple(s)!r}).requires_grad_(),"
              for v, s in zip(self.values, self.shapes, strict=True)),
            ")",
            f"print(torch.autograd.{check}(f, inputs, eps={EPS!r}, atol={ATOL!r}, rtol={RTOL!r}))",
            "",
        ])

    def to_dict(self) -> dict:
        """JSON-able account for reports, as ``oracle.differential.DivergenceError``'s."""
        return {
            "divergence": {"reason": "gradient differs from finite differences", "order": self.order},
            "description": self.describe(),
            "repro": self.repro(),
            "mismatches": [vars(m) for m in self.mismatches[: self.SHOWN]],
        }


def gradient_mismatches(
    torch: Any, fn: Function, values: list[list[float]], shapes: list[tuple[int, ...]]
) -> list[Mismatch]:
    """Where ``fn``'s gradients on ``torch`` differ from central finite differences (float64)."""
    numerical = numerical_jacobian(torch, fn, values, shapes)
    analytical = analytical_jacobian(torch, fn, values, shapes)
    found = []
    for k, (num_k, ana_k) in enumerate(zip(numerical, analytical, strict=True)):
        for i, (num_row, ana_row) in enumerate(zip(num_k, ana_k, strict=True)):
            for j, (n, a) in enumerate(zip(num_row, ana_row, strict=True)):
                if not abs(a - n) <= ATOL + RTOL * abs(n):
                    found.append(Mismatch(k, i, j, a, n))
    return found


def neighbours(values: list[list[float]]) -> Iterator[list[list[float]]]:
    """The points central differences move ``values`` to: one element at a time, by +-EPS."""
    for k, flat in enumerate(values):
        for i in range(len(flat)):
            for step in (EPS, -EPS):
                moved = [list(v) for v in values]
                moved[k][i] += step
                yield moved


def branches(torch: Any, ops: list[dict], inputs: list[Any]) -> list[float]:
    """The signs of every bend's branch-picking values (``BENDS``) at ``inputs``."""
    signs: list[float] = []
    for k, spec in enumerate(ops):
        for op, args in BENDS.get(spec["op"], lambda _args: [])(spec["args"]):
            side = op_function(torch, [*ops[:k], {"out": "side", "op": op, "args": args}])(inputs)
            signs.extend(side.detach().sign().reshape(-1).tolist())
    return signs


def tame(torch: Any, ops: list[dict], fn: Function, inputs: list[Any]) -> bool:
    """Whether every value ``ops`` compute, and ``fn``'s output, is finite and at most MAGNITUDE."""
    values = [op_function(torch, ops[: k + 1])(inputs) for k in range(len(ops))] + [fn(inputs)]
    return all(abs(v) <= MAGNITUDE for t in values for v in t.detach().reshape(-1).tolist())


def smooth_around(torch: Any, ops: list[dict], fn: Function, values: list[list[float]], shapes: list) -> bool:
    """Whether central differences of ``fn`` (computed by ``ops``) are meaningful at ``values``: its
    values are tame there, and every bend is on the same side of its kink, and not on it, at
    ``values`` and at all its neighbours."""

    def at(point: list[list[float]]) -> list[Any]:
        return [
            torch.tensor(v, dtype=torch.float64).reshape(s).requires_grad_(True)
            for v, s in zip(point, shapes, strict=True)
        ]

    if not tame(torch, ops, fn, at(values)):
        return False
    sides = branches(torch, ops, at(values))
    if not sides:  # no bends
        return True
    return 0.0 not in sides and all(branches(torch, ops, at(p)) == sides for p in neighbours(values))


def gradient_check(
    backend: Any, ops: list[dict], values: list, shapes: list, weights: list[float] | None = None
) -> dict:
    """The numerical gradient check of ``ops``' function on ``backend`` (an
    ``oracle.backends.InProcess``; called where it is loaded, ``Backend.call``), or with ``weights``
    of its weighted first derivatives (``second_order``): ``{"smooth": False}`` at a point where
    finite differences mean nothing (``smooth_around``), ``{"smooth": True, "mismatches": [...]}``
    otherwise, ``{"lacks": NAME}`` where the backend lacks a name of torch's API it needs,
    ``{"raised": "TYPE: MESSAGE"}`` where it raised otherwise. Tensors go on the backend's device."""
    torch = backend.module if backend.device == "cpu" else _OnDevice(backend.module, backend.device)
    with backend.active():
        try:
            fn = op_function(torch, ops)
            if weights is not None:
                fn = second_order(torch, fn, weights)
            if not smooth_around(torch, ops, fn, values, shapes):
                return {"smooth": False}
            return {"smooth": True, "mismatches": gradient_mismatches(torch, fn, values, shapes)}
        except Exception as exc:
            name = lacked(exc, backend.module)
            if name is None:
                return {"raised": f"{type(exc).__name__}: {exc}"}
            return {"lacks": name}


class _OnDevice:
    """A torch-like module whose ``tensor(...)`` makes its tensors on ``device``."""

    def __init__(self, module: Any, device: str) -> None:
        self._module, self._device = module, device

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def tensor(self, *args: Any, **kwargs: Any) -> Any:
        return self._module.tensor(*args, device=self._device, **kwargs)
