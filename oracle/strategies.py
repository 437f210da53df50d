"""Hypothesis strategies producing Programs: small autograd programs a user could write.

``programs()`` draws a few leaves of one shape, then a sequence of actions (elementwise,
reduction, view and matrix ops, in-place ops, retain_grad, hooks of every kind and action, hook
removal, backward and autograd.grad with their options, zeroing grads, detach, requires_grad_, nn
modules with hooks, observations of values and graphs), then a final backward from the latest
tensor and an observation of every tensor. ``features`` restricts which actions are
drawn, so each rule family can focus its search; the strategy shrinks towards fewer, simpler
steps. Programs may raise (that is behaviour too): the oracle compares errors like values.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from oracle import state_dict_hooks
from oracle.program import (
    CHILDREN,
    GLOBAL_HOOK_FLAGS,
    LR_LAMBDAS,
    MODULE_HOOK_FLAGS,
    MODULE_HOOK_KINDS,
    OPTIMIZERS,
    Action,
    Backward,
    CallModule,
    Detach,
    GlobalModuleHook,
    Grad,
    Leaf,
    Module,
    ModuleHook,
    ModuleMode,
    ModuleRequiresGrad,
    Observe,
    ObserveGraph,
    Op,
    Optimizer,
    Program,
    Ref,
    RegisterHook,
    RemoveHook,
    RequiresGrad,
    RetainGrad,
    Scheduler,
    StateDictHook,
    Step,
    ZeroGrad,
    module_nodes,
)

FEATURES = (
    "op",
    "inplace",
    "retain_grad",
    "hook",
    "remove_hook",
    "backward",
    "grad",
    "zero_grad",
    "detach",
    "requires_grad",
    "observe",
    "module",
)
# How often each feature is drawn relative to the others (ops, hooks and backward make the graph).
WEIGHTS = {"op": 3, "hook": 3, "backward": 2}
SHAPES = ((), (2,), (3,), (2, 2))
VALUES = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
# ops whose backward node saves no tensor (a graph of them can be backpropagated twice)
NON_SAVING = ("neg", "clone", "add", "sub")
UNARY = ("neg", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "clone", "square", "abs", "log")
BINARY = ("add", "mul", "sub", "div")
REDUCE = ("sum", "mean")
INPLACE = ("add_", "mul_", "sub_", "div_")
HOOK_ACTIONS = ("log", "log", "scale", "replace", "wrong_shape", "wrong_dtype")


class Builder:
    """Builds a Program inside a hypothesis ``@st.composite`` strategy: ``start()`` makes leaves,
    each action method appends steps (tracking what they bind: shapes, leaves, tensors that
    require grad, hooks, backward roots), ``finish()`` backpropagates and observes everything.
    Rule-specific strategies (conformance/) drive it directly and append their own steps."""

    def __init__(
        self,
        draw: Any,
        dtypes: tuple[str, ...] = ("float32", "float64"),
        shapes: tuple[tuple[int, ...], ...] = SHAPES,
    ) -> None:
        self.draw = draw
        self.dtypes = dtypes
        self.allowed_shapes = shapes
        self.steps: list[Step] = []
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.leaves: list[str] = []
        self.hooks: list[str] = []
        self.tracked: set[str] = set()  # tensors that (probably) require grad
        self.backwards: list[tuple[str, str | None]] = []  # (tensor, gradient) of backward steps
        self.hooked: list[str] = []  # tensors with hooks
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def pick(self, options: Any) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def coin(self) -> bool:
        return self.draw(st.booleans())

    def tensor(self, shape: tuple[int, ...] | None = None, tracked: bool = False) -> str:
        """A bound tensor name (of ``shape``). With ``tracked``, mostly one that requires grad, and
        often the latest such (programs then grow chains, as users write them, and backward
        reaches the hooks)."""
        names = [n for n, s in self.shapes.items() if shape is None or s == shape]
        preferred = [n for n in names if n in self.tracked]
        if tracked and preferred:
            choice = self.draw(st.integers(0, 4))
            if choice <= 1:
                return preferred[-1]
            if choice <= 3:
                names = preferred
        return self.pick(names)

    def data(self, shape: tuple[int, ...]) -> Any:
        if not shape:
            return self.pick(VALUES)
        return [self.data(shape[1:]) for _ in range(shape[0])]

    def bind(self, name: str, shape: tuple[int, ...], step: Step, tracked: bool = False) -> str:
        self.steps.append(step)
        self.shapes[name] = shape
        if tracked or (not isinstance(step, Detach) and any(n in self.tracked for n in step.names_read())):
            self.tracked.add(name)
        return name

    def actions(self, features: tuple[str, ...] = FEATURES, max_actions: int = 10) -> None:
        """Up to ``max_actions`` actions drawn from ``features`` (weighted by ``WEIGHTS``)."""
        unknown = set(features) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown program features {sorted(unknown)}; known: {FEATURES}")
        weighted = [f for f in features for _ in range(WEIGHTS.get(f, 1))]
        for _ in range(self.draw(st.integers(0, max_actions))):
            getattr(self, self.draw(st.sampled_from(weighted)))()

    def program(self) -> Program:
        return Program(list(self.steps))

    # -- the program's start and end -----------------------------------------------------------
    def start(self) -> None:
        """One to three leaves of one dtype: the first of the program's shape and requiring grad,
        the others (requiring grad or not) sometimes of a shape that broadcasts with it (leading
        dims dropped, dims of size 1), so gradients are summed back to their shapes."""
        self.shape = self.pick(self.allowed_shapes)
        self.dtype = self.pick(self.dtypes)
        for i in range(self.draw(st.integers(1, 3))):
            name = self.fresh("x")
            requires_grad = i == 0 or self.coin()
            partner = i > 0 and self.draw(st.integers(0, 2)) == 0
            shape = broadcast_partner(self.draw, self.shape) if partner else self.shape
            leaf = Leaf(name, self.data(shape), self.dtype, requires_grad)
            self.bind(name, shape, leaf, tracked=requires_grad)
            self.leaves.append(name)

    def finish(self) -> None:
        """Observe the graph behind the latest tensor that requires grad and backpropagate from it
        (so hooks upstream fire), then observe every tensor."""
        latest = [n for n in self.shapes if n in self.tracked]
        if latest:
            root = latest[-1]
            if self.shapes[root] != ():
                out = self.fresh("t")
                root = self.bind(out, (), Op(out, "sum", [Ref(root)]))
            self.steps.append(ObserveGraph(root))
            self.steps.append(Backward(root))
        for name in list(self.shapes):
            self.steps.append(Observe(name))

    # -- actions -------------------------------------------------------------------------------
    def op(self) -> None:
        """An elementwise, reduction, view or matrix op (shapes stay the leaves' shape or ())."""
        kind = self.pick(("unary", "binary", "binary", "scalar", "reduce", "pow", "view", "matmul"))
        a = self.tensor(tracked=True)
        shape = self.shapes[a]
        if kind in ("view", "matmul") and not shape:
            kind = "unary"
        out = self.fresh("t")
        if kind == "view":
            self.view(a, out)
        elif kind == "matmul":
            b = self.tensor(shape)
            op = self.pick(("matmul", "mm")) if len(shape) == 2 else "matmul"
            self.bind(out, shape if len(shape) == 2 else (), Op(out, op, [Ref(a), Ref(b)]))
        elif kind == "unary":
            self.bind(out, self.shapes[a], Op(out, self.pick(UNARY), [Ref(a)]))
        elif kind == "binary":
            b = self.tensor()
            shape = broadcast_shape(self.shapes[a], self.shapes[b])
            self.bind(out, shape, Op(out, self.pick(BINARY), [Ref(a), Ref(b)]))
        elif kind == "scalar":
            self.bind(out, self.shapes[a], Op(out, self.pick(BINARY), [Ref(a), self.pick((2.0, 0.5, -1.0))]))
        elif kind == "pow":
            self.bind(out, self.shapes[a], Op(out, "pow", [Ref(a), self.pick((2, 3, 0.5))]))
        else:
            self.bind(out, (), Op(out, self.pick(REDUCE), [Ref(a)]))

    def view(self, a: str, out: str) -> None:
        """A view of ``a`` with its own shape: view/reshape to the same sizes, a 2-d transpose,
        or unsqueeze then squeeze."""
        shape = self.shapes[a]
        kind = self.pick(("view", "reshape", "transpose", "unsqueeze"))
        if kind in ("view", "reshape"):
            self.bind(out, shape, Op(out, kind, [Ref(a), *shape]))
        elif kind == "transpose" and shape[0] == shape[-1]:
            step = Op(out, "t", [Ref(a)]) if self.coin() else Op(out, "transpose", [Ref(a), 0, -1])
            self.bind(out, shape, step)
        else:
            middle = self.fresh("t")
            self.steps.append(Op(middle, "unsqueeze", [Ref(a), 0]))
            self.bind(out, shape, Op(out, "squeeze", [Ref(middle), 0]), tracked=a in self.tracked)

    def inplace(self, target: str | None = None) -> None:
        """An in-place op on ``target``, or mostly on a non-leaf (on a leaf that requires grad,
        torch refuses; on a tensor a node saved, backward through that node raises)."""
        non_leaves = [n for n in self.shapes if n not in self.leaves]
        a = target or (self.pick(non_leaves) if non_leaves and self.coin() else self.tensor())
        other: Any = self.pick((2.0, -1.0, 0.5))
        if self.coin():
            other = Ref(self.pick([n for n, s in self.shapes.items() if s in ((), self.shapes[a])]))
        out = self.fresh("t")
        self.bind(out, self.shapes[a], Op(out, self.pick(INPLACE), [Ref(a), other]))

    def chain(self, length: int, ops: tuple[str, ...] = UNARY + BINARY) -> list[str]:
        """``length`` ops, each applied to the latest tensor that requires grad (binary ops take a
        leaf or a scalar as their other operand); returns the names of the results."""
        names = []
        for _ in range(length):
            a = [n for n in self.shapes if n in self.tracked][-1]
            op = self.pick(ops)
            args: list = [Ref(a)]
            shape = self.shapes[a]
            if op in BINARY and self.coin():
                other = self.pick(self.leaves)
                args.append(Ref(other))
                shape = broadcast_shape(shape, self.shapes[other])
            elif op in BINARY:
                args.append(self.pick((2.0, 0.5, -1.0)))
            out = self.fresh("t")
            names.append(self.bind(out, shape, Op(out, op, args), tracked=True))
        return names

    def branching(self, length: int, ops: tuple[str, ...] = UNARY + BINARY) -> list[str]:
        """A graph that branches: ``length`` ops whose operands are any tensors made so far (so a
        leaf is used on several paths and a result feeds several later ops, ``x * x`` included),
        then the results no op consumed (the graph's outputs) added together. Shapes stay the
        leaves' shape. Returns every tensor made, the outputs' sum last."""
        names: list[str] = []
        consumed: set[str] = set()
        for _ in range(length):
            op = self.pick(ops)
            operands = [self.tensor(tracked=True)]
            if op in BINARY:
                operands.append(self.tensor(self.shapes[operands[0]]))
            consumed.update(operands)
            out = self.fresh("t")
            names.append(self.bind(out, self.shapes[operands[0]], Op(out, op, [Ref(n) for n in operands])))
        outputs = [n for n in names if n not in consumed and n in self.tracked]
        total = outputs[-1] if outputs else None
        for other in reversed(outputs[:-1]):
            out = self.fresh("t")
            total = self.bind(out, self.shapes[other], Op(out, "add", [Ref(total), Ref(other)]))
            names.append(total)
        return names

    def retain_grad(self) -> None:
        self.steps.append(self.retain_grad_step(self.tensor(tracked=True)))

    def retain_grad_step(self, name: str) -> RetainGrad:
        return RetainGrad(name)

    def hook(self) -> None:
        on = self.pick(("tensor", "tensor", "grad_fn", "grad_fn_pre", "post_accumulate_grad"))
        non_leaves = [n for n in self.shapes if n in self.tracked and n not in self.leaves]
        if on == "post_accumulate_grad":
            target = self.pick(self.leaves)
        elif on in ("grad_fn", "grad_fn_pre") and non_leaves and self.draw(st.integers(0, 4)) > 0:
            target = non_leaves[-1] if self.coin() else self.pick(non_leaves)
        elif self.hooked and self.coin():  # several hooks on one tensor: their order matters
            target = self.pick(self.hooked)
        else:
            target = self.tensor(tracked=True)
        self.register(target, on)

    def action(self, kinds: tuple[str, ...] = HOOK_ACTIONS) -> Action:
        kind = self.pick(kinds)
        if kind == "scale":
            return Action(kind, self.pick((2.0, -1.0, 0.5)))
        if kind == "replace":
            return Action(kind, self.pick((0.0, 1.0)))
        return Action(kind)

    def register(self, target: str, on: str = "tensor", action: Action | None = None) -> str:
        """Register a hook of kind ``on`` on ``target`` (a random action if none is given)."""
        hook = self.fresh("h")
        self.steps.append(RegisterHook(hook, target, on, action or self.action()))
        self.hooks.append(hook)
        self.hooked.append(target)
        return hook

    def remove_hook(self) -> None:
        if self.hooks:
            hook = self.pick(self.hooks)
            self.hooks.remove(hook)
            self.steps.append(RemoveHook(hook))

    def root(self) -> str:
        """A scalar to differentiate: an existing one, or the sum of a tensor."""
        scalars = [n for n, s in self.shapes.items() if s == () and n in self.tracked]
        if scalars and self.coin():
            return self.pick(scalars)
        out = self.fresh("t")
        return self.bind(out, (), Op(out, "sum", [Ref(self.tensor(tracked=True))]))

    def backward(self) -> None:
        """A backward from a scalar root, from a tensor with a ``gradient``, or again from an earlier
        backward's tensor (users do; it raises unless the graph was retained or saves nothing)."""
        retain_graph = self.pick((None, None, True, False))
        inputs = [self.pick(self.leaves)] if self.draw(st.integers(0, 4)) == 0 else None
        if self.backwards and self.coin():
            target, gradient = self.pick(self.backwards)
        elif self.coin():
            target, gradient = self.root(), None
        else:
            target = self.tensor(tracked=True)
            gradient = self.fresh("x")
            shape = self.shapes[target]
            self.bind(gradient, shape, Leaf(gradient, self.data(shape), self.dtype))
        create_graph = self.draw(st.integers(0, 5)) == 0
        self.backwards.append((target, gradient))
        self.steps.append(Backward(target, gradient, retain_graph, create_graph, inputs))
        if self.draw(st.integers(0, 2)) == 0:  # straight away again, as in seed 001
            self.steps.append(Backward(target, gradient, self.pick((None, True)), inputs=inputs))

    def grad(self) -> None:
        """``autograd.grad`` of a scalar root with random options; with ``create_graph`` its
        results are tracked, so later actions may differentiate them again."""
        root = self.root()
        inputs = self.draw(st.lists(st.sampled_from(list(self.shapes)), min_size=1, max_size=2, unique=True))
        outs = [self.fresh("g") for _ in inputs]
        grad_outputs = None
        if self.draw(st.integers(0, 3)) == 0:
            grad_outputs = [self.fresh("x")]
            self.bind(grad_outputs[0], (), Leaf(grad_outputs[0], self.pick(VALUES), self.dtype))
        step = Grad(
            outs,
            [root],
            inputs,
            grad_outputs,
            retain_graph=self.pick((None, True, False)),
            create_graph=self.draw(st.integers(0, 3)) == 0,
            allow_unused=self.pick((None, True, False)),
            materialize_grads=self.coin(),
        )
        self.steps.append(step)
        for name, inp in zip(outs, inputs, strict=True):
            self.shapes[name] = self.shapes[inp]
            # later ops and backward build on the gradient (create_graph chains), unless it may be None
            if step.create_graph and (not step.allow_unused or step.materialize_grads):
                self.tracked.add(name)

    def zero_grad(self) -> None:
        self.steps.append(ZeroGrad(self.pick(self.leaves), set_to_none=self.coin()))

    def detach(self) -> None:
        src = self.tensor()
        out = self.fresh("t")
        self.bind(out, self.shapes[src], Detach(out, src))

    def requires_grad(self) -> None:
        """``requires_grad_`` on a leaf mostly (torch refuses to switch it off on a non-leaf)."""
        name = self.pick(self.leaves) if self.coin() else self.tensor()
        flag = self.coin()
        self.steps.append(RequiresGrad(name, flag))
        if name in self.leaves:
            (self.tracked.add if flag else self.tracked.discard)(name)

    def observe(self) -> None:
        """Observe a tensor, or (one time in three) the autograd graph behind it."""
        name = self.tensor()
        self.steps.append(ObserveGraph(name) if self.draw(st.integers(0, 2)) == 0 else Observe(name))

    def module(self) -> None:
        """An nn module with hooks, called on a tensor: a Linear (features = the last dim, so
        shapes keep; float32 tensors of at least one dim) or an activation module."""
        cls = self.pick(("Linear", "Linear", "ReLU", "Sigmoid", "Tanh"))
        if cls == "Linear" and (not self.shape or self.dtype != "float32"):
            cls = "Tanh"
        name = self.fresh("m")
        if cls == "Linear":
            n = self.shape[-1]
            params = {"weight": self.data((n, n)), "bias": self.data((n,))}
            self.steps.append(Module(name, cls, [n, n], params))
            for pname, shape in (("weight", (n, n)), ("bias", (n,))):
                self.shapes[f"{name}.{pname}"] = shape
                self.tracked.add(f"{name}.{pname}")
        else:
            self.steps.append(Module(name, cls))
        for _ in range(self.draw(st.integers(0, 2))):
            hook = self.fresh("h")
            self.steps.append(ModuleHook(hook, name, self.pick(MODULE_HOOK_KINDS), self.action()))
        src = self.tensor(self.shape, tracked=True)
        out = self.fresh("t")
        self.bind(out, self.shape, CallModule(out, name, [src]))


@st.composite
def programs(
    draw: Any,
    features: tuple[str, ...] = FEATURES,
    max_actions: int = 10,
    dtypes: tuple[str, ...] = ("float32", "float64"),
) -> Program:
    """A Program: leaves, then up to ``max_actions`` actions drawn from ``features``, then a final
    backward and an observation of every tensor."""
    builder = Builder(draw, dtypes)
    builder.start()
    builder.actions(features, max_actions)
    builder.finish()
    return builder.program()


# -- op, tensor, grad-mode families (issue 5) ---------------------------------------------------
# Shapes with 0-d tensors and size-1 dims (where broadcasting and reductions have their edge
# cases), values with the edge values of floating point, and a standard end for op programs.
OP_SHAPES = ((), (1,), (3,), (2, 3), (1, 3), (3, 1), (2, 1, 3))
EDGE_VALUES = (0.0, -0.0, -1.0, 2.5, float("inf"), float("-inf"), float("nan"))
FLOAT_DTYPES = ("float16", "float32", "float64")
INT_VALUES = (-3, -1, 0, 1, 2, 5)


def op_data(draw: Any, shape: tuple[int, ...], dtype: str, edge: bool = False) -> Any:
    """Nested lists of ``shape`` with values fit for ``dtype``; with ``edge``, floating values
    include zeros, infinities and NaN now and then."""
    if dtype == "bool":
        pool: tuple = (False, True)
    elif dtype.startswith(("int", "uint")):
        pool = INT_VALUES
    else:
        pool = VALUES + EDGE_VALUES if edge else VALUES
    if not shape:
        return draw(st.sampled_from(pool))
    return [op_data(draw, shape[1:], dtype, edge) for _ in range(shape[0])]


def broadcast_partner(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with ``shape``: leading dims dropped, some dims set to 1."""
    kept = shape[draw(st.integers(0, len(shape))) :]
    return tuple(1 if size != 1 and draw(st.integers(0, 3)) == 0 else size for size in kept)


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of two broadcastable shapes (of two others: a shape as long as the
    longer, which no op will bind, since the op raises)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b, strict=True))


def backprop_twice(steps: list[Step], result: str, shape: tuple[int, ...], name: str = "loss") -> None:
    """Append the end of an op program: the graph behind ``result``, a backward from its sum (or
    itself when 0-d), then a second backward without ``retain_graph``, which raises exactly when
    a node on the way saved a tensor."""
    root = result
    if shape != ():
        root = name
        steps.append(Op(root, "sum", [Ref(result)]))
    steps.append(ObserveGraph(root))
    steps.append(Backward(root))
    steps.append(Backward(root))


# ------------------------------------------------------------------------------------------------
# Module families: random module trees, module hooks of every kind and flag, losses, optimisers
# (conformance/test_module_hooks.py, test_modules.py, test_optim.py)
# ------------------------------------------------------------------------------------------------
PARAM_VALUES = (-1.0, -0.5, 0.0, 0.5, 1.0)
# input shapes of module trees: 1-d, batched 2-d and 3-d (Linear's N-d), images with and without batch
TREE_INPUTS = ((3,), (2, 3), (2, 2, 3), (1, 3, 3), (2, 1, 3, 3))
ACTIVATIONS = ("ReLU", "LeakyReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Identity", "Dropout")
SMOOTH_ACTIVATIONS = tuple(a for a in ACTIVATIONS if a not in ("ReLU", "LeakyReLU"))
# the activation layers of nn.modules.activation_more, each drawn by MOD-007 (not by the trees:
# a longer ACTIVATIONS reshuffles the derandomized ci trees, which then miss planted faults of
# MOD-001..003 that they catch now)
ACTIVATION_LAYERS = ("GELU", "SiLU", "Mish", "ELU", "Softplus", "Hardtanh", "ReLU6", "LogSigmoid", "Softsign")
# the activation layers MOD-018 draws the same way (issue 22), those its planted faults break first
MORE_ACTIVATION_LAYERS = (
    "SELU", "Hardshrink", "CELU", "Hardswish", "Hardsigmoid", "Softshrink", "Tanhshrink"
)
# constructor keyword arguments of those layers, one combination drawn (options drawn one by one
# left combinations such as an in-place ELU with a negative alpha, whose backward torch refuses,
# out of the derandomized ci programs)
_INPLACE = ({}, {"inplace": True})
ACTIVATION_OPTIONS: dict[str, tuple[dict, ...]] = {
    "GELU": ({}, {"approximate": "tanh"}),
    "SiLU": _INPLACE,
    "Mish": _INPLACE,
    "ReLU6": _INPLACE,
    "ELU": ({}, {"alpha": -0.5}, {"alpha": 0.5}, {"alpha": -0.5, "inplace": True},
            {"alpha": 2.0, "inplace": True}, *_INPLACE[1:]),
    "Softplus": ({}, {"beta": 2.0}, {"beta": 0.5, "threshold": 1.0}, {"threshold": 5.0},
                 {"beta": 2.0, "threshold": 5.0}),
    "SELU": _INPLACE,
    "CELU": ({}, {"alpha": 0.5}, {"alpha": 2.0, "inplace": True}),
    "Hardswish": _INPLACE,
    "Hardsigmoid": _INPLACE,
    "Hardshrink": ({}, {"lambd": 1.0}, {"lambd": 2.0}),
    "Softshrink": ({}, {"lambd": 1.0}, {"lambd": 2.0}),
    "Hardtanh": ({}, *_INPLACE[1:], {"min_val": -2.0, "max_val": 0.5},
                 {"min_val": -2.0, "max_val": 0.5, "inplace": True},
                 {"min_val": 0.0, "max_val": 6.0, "inplace": True}),
}
# every layer a random tree draws (and Linear, Flatten) in every form of its options: what one
# program of MOD-001 in EDGE_EVERY adds (``ModuleBuilder.layer_forms``); a Dropout of p=0.5 in eval
TREE_LAYER_FORMS: dict[str, tuple[dict, ...]] = {
    "Linear": ({}, {"bias": False}),
    "Flatten": ({}, {"start_dim": 0}, {"start_dim": 0, "end_dim": 1}),
    "ReLU": ({}, {"inplace": True}),
    "LeakyReLU": ({}, {"negative_slope": 0.2}, {"inplace": True}),
    "Softmax": ({}, {"dim": 1}),  # no dim: torch's implicit choice, with its warning
    "LogSoftmax": ({}, {"dim": -1}),
    "Dropout": ({}, {"p": 0.0}, {"p": 1.0, "inplace": True}),
    **{cls: ({},) for cls in ("Sigmoid", "Tanh", "Identity")},
}
# the layers whose gradient at NaN torch's vectorized and scalar loops disagree on (by position in
# the tensor): no NaN among their inputs
SPLIT_AT_NAN = ("Hardtanh", "ReLU6", "ELU", "SELU", "CELU", "Hardswish", "Hardshrink", "Softshrink")
# inputs of MOD-007: both zeros, the default bounds of Hardtanh and ReLU6, softplus's threshold
# (20) and beyond, values where exp under- or overflows in float32; infinities and NaN where
# ``activation_values`` allows them
ACTIVATION_VALUES = (-25.0, -6.5, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 6.0, 20.5, 25.0, 100.0)
# actions module hooks take, by kind (forward hooks: a wrong-size input reaches the layer)
MODULE_ACTIONS = {
    "forward_pre": ("log", "log", "scale", "replace", "wrong_shape"),
    "forward": ("log", "log", "scale", "replace"),
    "full_backward_pre": ("log", "log", "scale", "replace", "wrong_shape", "wrong_count"),
    "full_backward": ("log", "log", "scale", "replace", "wrong_shape", "wrong_count"),
    "backward": ("log", "log", "scale", "replace", "wrong_count"),
}
# constructor keyword arguments of MOD-008's Embedding(5, 3): padding_idx (negative too),
# scale_grad_by_freq, max_norm (the looked-up rows renormalised in place) with its norm_type
EMBEDDING_OPTIONS: tuple[dict, ...] = (
    {},
    {"padding_idx": 2},
    {"padding_idx": -1, "scale_grad_by_freq": True},
    {"scale_grad_by_freq": True},
    {"max_norm": 1.0},
    {"max_norm": 2.0, "norm_type": 1.0, "padding_idx": 0},
    {"max_norm": 0.75, "norm_type": float("inf"), "scale_grad_by_freq": True},
)
# MOD-008's weight values: several rows above those max_norms, zeros, a row of -0.0
EMBEDDING_VALUES = (-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0)
LOSSES = ("MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss")
# the options of the optimisers past SGD and Adam (with maximize and weight_decay), torch's default
# first: Adam's short memory of the second moment (under which it falls between steps), RAdam's
# beta2 of 0.9 (rectified from the 6th step on, as with torch's 0.999; 0.5 never is)
_BETAS = ((0.9, 0.999), (0.8, 0.5))
OPTIMIZER_OPTIONS: dict[str, dict[str, tuple]] = {
    "RMSprop": {"alpha": (0.99, 0.5), "momentum": (0.0, 0.9), "centered": (False, True)},
    "Adagrad": {"lr_decay": (0.0, 0.1), "initial_accumulator_value": (0.0, 0.5)},
    "Adadelta": {"rho": (0.9, 0.5)},
    "Adamax": {"betas": _BETAS},
    "NAdam": {"betas": _BETAS, "momentum_decay": (4e-3, 0.5), "decoupled_weight_decay": (False, True)},
    "RAdam": {"betas": ((0.9, 0.999), (0.8, 0.9)), "decoupled_weight_decay": (False, True)},
    # Rprop's step sizes grow by etaplus from lr within step_sizes; ASGD's t0 of 1 starts averaging
    "Rprop": {"etas": ((0.5, 1.2), (0.3, 1.5)), "step_sizes": ((1e-6, 50), (1e-3, 0.05))},
    "ASGD": {"t0": (1e6, 1.0), "lambd": (1e-4, 0.1), "alpha": (0.75, 0.5)},
}
# the optimisers without a weight_decay option
NO_WEIGHT_DECAY = ("Rprop",)
# the options of the learning-rate schedulers: combinations, one drawn, that give every option a
# value other than its default somewhere (options drawn one by one left whole classes out of the
# derandomized ci programs); ReduceLROnPlateau's patience and cooldown short enough to end within
# a loop, its defaults too (the loop then ends before the lr is reduced)
SCHEDULER_OPTIONS: dict[str, tuple[dict, ...]] = {
    "StepLR": ({"step_size": 1}, {"step_size": 2, "gamma": 0.5}, {"step_size": 3, "gamma": 0.1}),
    "MultiStepLR": ({"milestones": [1, 3]}, {"milestones": [2, 2, 4], "gamma": 0.3},
                    {"milestones": [3], "gamma": 0.1}),
    "ExponentialLR": ({"gamma": 0.9}, {"gamma": 0.5}),
    "CosineAnnealingLR": ({"T_max": 2}, {"T_max": 3, "eta_min": 0.001}, {"T_max": 5, "eta_min": 0.0}),
    "LambdaLR": tuple({"lr_lambda": body} for body in LR_LAMBDAS),
    "OneCycleLR": (
        {"max_lr": 0.1},
        {"max_lr": 1.0, "pct_start": 0.5, "anneal_strategy": "linear", "three_phase": True},
        {"max_lr": 0.1, "cycle_momentum": False, "div_factor": 10.0, "final_div_factor": 100.0},
        {"max_lr": 1.0, "base_momentum": 0.8, "max_momentum": 0.9, "anneal_strategy": "cos",
         "three_phase": False, "pct_start": 0.3},
    ),
    "ReduceLROnPlateau": (
        {},
        {"patience": 0, "cooldown": 2, "factor": 0.5},
        {"mode": "max", "patience": 1, "threshold": 0.1, "threshold_mode": "abs", "min_lr": 0.005},
        {"mode": "min", "patience": 1, "threshold_mode": "rel", "threshold": 1e-4, "cooldown": 1, "eps": 0.01,
         "factor": 0.1, "min_lr": 0},
        {"mode": "max", "patience": 2, "cooldown": 0, "factor": 0.5, "eps": 1e-8},
    ),
    "MultiplicativeLR": ({"lr_lambda": LR_LAMBDAS[0]}, {"lr_lambda": LR_LAMBDAS[3]}),
    "ConstantLR": ({}, {"factor": 0.5, "total_iters": 2}),
    "LinearLR": ({}, {"start_factor": 0.25, "end_factor": 0.75, "total_iters": 3}),
    "PolynomialLR": ({}, {"total_iters": 3, "power": 2.0}),
    "CosineAnnealingWarmRestarts": ({"T_0": 2}, {"T_0": 1, "T_mult": 2, "eta_min": 0.001}),
    "CyclicLR": (
        {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2},
        {"base_lr": 0.001, "max_lr": 0.01, "step_size_up": 1, "step_size_down": 3, "mode": "triangular2",
         "base_momentum": 0.7, "max_momentum": 0.95, "scale_mode": "iterations"},
        {"base_lr": 0.01, "max_lr": 0.1, "mode": "exp_range", "gamma": 0.8, "cycle_momentum": False},
    ),
    # the composites' schedulers by class, each in its first form (Scheduler.schedulers)
    "SequentialLR": ({"schedulers": ("LinearLR", "ExponentialLR"), "milestones": [2]},
                     {"schedulers": ("ConstantLR", "StepLR", "CosineAnnealingWarmRestarts"),
                      "milestones": [1, 3]}),
    "ChainedScheduler": ({"schedulers": ("ConstantLR", "ExponentialLR")},
                         {"schedulers": ("LinearLR", "CyclicLR", "MultiStepLR")}),
}
# the metrics a ReduceLROnPlateau is stepped with: improvements, plateaus, small changes that the
# relative or absolute threshold tells apart
PLATEAU_METRICS = (1.0, 0.95, 0.5, 0.5, 0.45, 0.2, 0.25)
REDUCTIONS = ("mean", "sum", "none")


def _negated(spec: dict) -> dict:
    """A module spec with every parameter value negated (its children's too)."""
    def negate(data: Any) -> Any:
        return [negate(v) for v in data] if isinstance(data, list) else -data

    children = spec.get("children")
    if isinstance(children, list):
        children = [_negated(c) for c in children]
    elif isinstance(children, dict):
        children = {k: _negated(c) for k, c in children.items()}
    return {**spec, "params": {k: negate(v) for k, v in (spec.get("params") or {}).items()},
            "children": children}


class ModuleBuilder(Builder):
    """A ``Builder`` that also draws module trees over shapes it tracks, hooks on their nodes,
    calls, losses and optimisers. A tree is a nested child spec (``oracle.program.module_nodes``);
    every parameter gets explicit values, so both sides start from the same numbers."""

    def __init__(self, draw: Any, bounded_gain: bool = False, smooth: bool = False) -> None:
        super().__init__(draw, ("float32",), TREE_INPUTS)
        self.bounded_gain = bounded_gain  # see ``weights``
        self.smooth = smooth  # see ``activation``
        self.modules: list[str] = []  # every bound module node
        self.modules_of: dict[str, list[str]] = {}  # tree root -> its nodes' names
        self.params: list[str] = []

    def input(self, shape: tuple[int, ...], requires_grad: bool | None = None) -> str:
        """A float32 leaf of ``shape`` (requiring grad or not, at random unless given)."""
        name = self.fresh("x")
        flag = self.coin() if requires_grad is None else requires_grad
        self.bind(name, shape, Leaf(name, self.data(shape), "float32", flag), tracked=flag)
        self.leaves.append(name)
        return name

    # -- trees ---------------------------------------------------------------------------------
    def layer(self, shape: tuple[int, ...], keep: bool) -> tuple[dict, tuple[int, ...]]:
        """One layer on inputs of ``shape`` and its output shape (``keep``: output shape = input)."""
        kinds = ["activation", "activation", "Linear", "Linear"]
        if len(shape) in (3, 4):
            kinds += ["Conv2d", "Conv2d"]
        if not keep:
            kinds.append("Flatten")
        kind = self.pick(kinds)
        if kind == "activation":
            return self.activation(shape), shape
        if kind == "Flatten":
            start = self.pick(range(len(shape) - 1)) if len(shape) > 1 else 0
            out = (*shape[:start], math.prod(shape[start:]))
            return {"cls": "Flatten", "kwargs": {"start_dim": start}}, out
        if kind == "Conv2d":
            return self.conv2d(shape, keep)
        bias = self.pick((True, True, False))
        kwargs = {} if bias else {"bias": False}
        n = shape[-1]
        k = n if keep else self.pick((1, 2, 3))
        params = {"weight": self.weights((k, n), n), **({"bias": self.weights((k,))} if bias else {})}
        return {"cls": "Linear", "args": [n, k], "kwargs": kwargs, "params": params}, (*shape[:-1], k)

    def conv2d(
        self, shape: tuple[int, ...], keep: bool = False, mode: str | None = None, same: bool | None = None
    ) -> tuple[dict, tuple[int, ...]]:
        """A Conv2d on images of ``shape`` (``(C, H, W)`` or ``(N, C, H, W)``) with torch's options
        drawn at random: kernel (at least 2 wide with ``same``), stride, padding (int, pair, 'valid'
        or 'same'; 'same' or not as ``same`` says if given), dilation, groups (dividing both channel
        counts), bias and padding_mode (``mode`` if given), kept within torch's constraints ('same'
        only with stride 1, reflect pads below the size, circular pads up to it; where they fail,
        zeros and no padding); with ``keep``, the output has the input's shape. Returns the layer
        spec and its output shape."""
        c, size = shape[-3], shape[-2:]
        groups = self.pick([g for g in (1, 1, 2) if c % g == 0])
        c_out = c if keep else groups * self.pick((1, 2))
        sizes = (2, 3) if same else (1, 2, 3)  # asked for 'same': kernels that make it pad
        kernel = (self.pick(sizes), self.pick(sizes))
        dilation = (self.pick((1, 1, 2)), self.pick((1, 1, 2)))
        mode = mode or self.pick(("zeros", "zeros", "reflect", "replicate", "circular"))
        paddings: list[Any] = [0, 1, (1, 0), (0, 2), "valid"]
        padding = "same" if keep or same else self.pick(paddings if same is False else [*paddings, "same"])
        stride = (1, 1) if padding == "same" else (self.pick((1, 1, 2)), self.pick((1, 1, 2)))
        if padding == "same":  # torch pads (dilation * (kernel - 1)) in total, more on the right
            pads = tuple(d * (k - 1) for d, k in zip(dilation, kernel, strict=True))
            out = size
        else:
            pads = {0: (0, 0), 1: (1, 1), "valid": (0, 0)}.get(padding, padding)
            out = _conv_out(size, kernel, stride, pads, dilation)
        fits = {"reflect": lambda p, n: p < n, "circular": lambda p, n: p <= n}.get(mode, lambda p, n: True)
        if min(out) < 1 or not all(fits(p, n) for p, n in zip(pads, size, strict=True)):
            mode, padding = "zeros", "same" if keep else 0
            out = size if keep else _conv_out(size, kernel, stride, (0, 0), dilation)
        if min(out) < 1:
            stride, dilation, kernel = (1, 1), (1, 1), (1, 1)
            out = size
        bias = self.pick((True, True, False))
        kwargs: dict[str, Any] = {"stride": list(stride), "dilation": list(dilation), "groups": groups}
        kwargs["padding"] = list(padding) if isinstance(padding, tuple) else padding
        if mode != "zeros":
            kwargs["padding_mode"] = mode
        if not bias:
            kwargs["bias"] = False
        params = {"weight": self.weights((c_out, c // groups, *kernel), c // groups * math.prod(kernel))}
        if bias:
            params["bias"] = self.weights((c_out,))
        spec = {"cls": "Conv2d", "args": [c, c_out, list(kernel)], "kwargs": kwargs, "params": params}
        return spec, (*shape[:-3], c_out, *out)

    def conv(self, shape: tuple[int, ...], cls: str) -> tuple[dict, tuple[int, ...]]:
        """A Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d or ConvTranspose3d (``cls``) on inputs
        of ``shape`` (channels, then one to three spatial sizes; batched or not) with torch's
        options drawn within its constraints: kernel, stride, padding (Conv1d: ints, 'valid',
        'same', and a padding_mode; Conv3d: an int per dim), dilation, groups dividing both channel
        counts, bias, and a transposed one's output_padding (below its stride or dilation).
        Returns the layer spec and its output shape. The options are listed so that hypothesis's
        first choice for a transposed one is a stride of 2 and a nonzero output_padding, so a
        planted fault of output_padding is caught at once."""
        dims = int(cls[-2])
        c, size = shape[-dims - 1], shape[-dims:]
        many = list if dims > 1 else (lambda v: v[0])  # an option as torch's layers print it
        groups = self.pick([g for g in (1, 1, 2) if c % g == 0])
        c_out = groups * self.pick((1, 2))
        kernel = tuple(self.pick((1, 2, 3)) for _ in size)
        dilation = tuple(self.pick((1, 1, 2)) for _ in size)
        kwargs: dict[str, Any] = {"groups": groups}
        if cls == "Conv1d":
            padding = self.pick((0, 1, 2, "valid", "same"))
            stride = (1,) if padding == "same" else (self.pick((1, 1, 2)),)
            same = dilation[0] * (kernel[0] - 1)
            pads = (0 if padding in ("valid", "same") else padding,)
            mode = self.pick(("zeros", "zeros", "reflect", "replicate", "circular"))
            out = size if padding == "same" else _conv_out(size, kernel, stride, pads, dilation)
            if min(out) < 1:
                padding, stride, dilation, out, same = "same", (1,), (1,), size, kernel[0] - 1
            side = same - same // 2 if padding == "same" else pads[0]  # the larger side's padding
            if mode == "reflect" and side >= size[0] or mode == "circular" and side > size[0]:
                mode = "zeros"
            if mode != "zeros":
                kwargs["padding_mode"] = mode
            kwargs["padding"] = padding
        elif cls == "Conv3d":
            stride = tuple(self.pick((1, 1, 2)) for _ in size)
            pads = tuple(self.pick((0, 0, 1)) for _ in size)
            out = _conv_out(size, kernel, stride, pads, dilation)
            if min(out) < 1:
                kernel = dilation = stride = (1,) * dims
                out = _conv_out(size, kernel, stride, pads, dilation)
            kwargs["padding"] = list(pads)
        else:
            stride = tuple(self.pick((2, 1, 1, 3)) for _ in size)
            pads = tuple(self.pick(range(d * (k - 1) + 1)) for k, d in zip(kernel, dilation, strict=True))
            extra = tuple(self.pick(range(max(s, d))[::-1]) for s, d in zip(stride, dilation, strict=True))
            out = tuple((n - 1) * s - 2 * p + d * (k - 1) + e + 1
                        for n, k, s, p, d, e in zip(size, kernel, stride, pads, dilation, extra, strict=True))
            if min(out) < 1:  # torch's kernels disagree there (an error, or an empty output)
                pads, out = (0,) * dims, tuple(o + 2 * p for o, p in zip(out, pads, strict=True))
            kwargs["padding"] = many(pads)
            kwargs["output_padding"] = many(extra)
        kwargs["stride"] = many(stride)
        kwargs["dilation"] = list(dilation) if dims > 1 or self.coin() else dilation[0]
        bias = self.pick((True, True, False))
        if not bias:
            kwargs["bias"] = False
        channels = (c, c_out // groups) if cls.startswith("ConvTranspose") else (c_out, c // groups)
        fan_in = channels[1] * math.prod(kernel)
        params = {"weight": self.weights((*channels, *kernel), fan_in)}
        if bias:
            params["bias"] = self.weights((c_out,))
        spec = {"cls": cls, "args": [c, c_out, kernel[0] if dims == 1 and self.coin() else list(kernel)],
                "kwargs": kwargs, "params": params}
        return spec, (*shape[:-dims - 1], c_out, *out)

    def activation(self, shape: tuple[int, ...]) -> dict:
        """An activation layer for inputs of ``shape``. With ``smooth``, none with a kink (ReLU,
        LeakyReLU): an optimiser step moves parameters off the drawn values, and a pre-activation
        that rounding leaves at or next to 0 takes its slope from the last bit, which torch's and
        any other engine's sums set differently (seen: Adam over a LeakyReLU, where the reference's
        own rerun on inputs nudged by an ulp gave the backend's value). The kinks themselves are
        checked where values are drawn, not computed."""
        cls = self.pick(SMOOTH_ACTIVATIONS if self.smooth else ACTIVATIONS)
        if cls in ("ReLU", "LeakyReLU"):
            return {"cls": cls, "kwargs": self.inplace_flag(cls)}
        if cls in ("Softmax", "LogSoftmax"):
            return {"cls": cls, "kwargs": {"dim": self.pick(range(-len(shape), len(shape)))}}
        if cls == "Dropout":  # p=0.5 only where the tree is put in eval mode (see ``tree``)
            return {"cls": cls, "kwargs": {"p": self.pick((0.0, 1.0, 0.5))}}
        return {"cls": cls}

    def activation_options(self, cls: str) -> dict:
        """Constructor keyword arguments of an ACTIVATION_LAYERS layer, one of ACTIVATION_OPTIONS."""
        return dict(self.pick(ACTIVATION_OPTIONS.get(cls, ({},))))

    def activation_values(self, cls: str, shape: tuple[int, ...]) -> Any:
        """Input values for ``cls`` from ACTIVATION_VALUES and, as torch's kernels agree on them,
        infinities and NaN: torch's vectorized loops differ from its scalar loop (so from
        themselves, by position in the tensor) on the gradient of SPLIT_AT_NAN's layers at NaN,
        and on GELU of +inf (NaN in a float32 vector, inf alone)."""
        pool = list(ACTIVATION_VALUES)
        if cls not in SPLIT_AT_NAN:
            pool.append(float("nan"))
        pool += [float("-inf")] + ([] if cls == "GELU" else [float("inf")])
        if not shape:
            return self.pick(pool)
        return [self.activation_values(cls, shape[1:]) for _ in range(shape[0])]

    def inplace_flag(self, cls: str) -> dict:
        """Keyword arguments of a ReLU or LeakyReLU (a slope for the latter), in place or not."""
        slope = self.pick(({}, {"negative_slope": 0.2})) if cls == "LeakyReLU" else {}
        return {**slope, **({"inplace": True} if self.coin() else {})}

    def weights(self, shape: tuple[int, ...], fan_in: int = 1) -> Any:
        """Parameter values of ``shape`` from PARAM_VALUES. With ``bounded_gain``, a layer's weights
        (``fan_in`` inputs per output) are divided by the power of two at least ``fan_in``, so no
        output of the layer exceeds its largest input (plus the bias) in size: a deep tree trained
        by a few optimiser steps then keeps its values and gradients in a range float32 holds."""
        scale = 0.5 ** math.ceil(math.log2(fan_in)) if self.bounded_gain else 1.0

        def values(shape: tuple[int, ...]) -> Any:
            if not shape:
                return self.pick(PARAM_VALUES) * scale
            return [values(shape[1:]) for _ in range(shape[0])]

        return values(shape)

    def subtree(self, shape: tuple[int, ...], depth: int, keep: bool = False) -> tuple[dict, tuple[int, ...]]:
        """A layer or a container (Sequential, ModuleList in Stack, ModuleDict in Router, Residual,
        TwoBranch, Twice) of subtrees, and its output shape."""
        if depth == 0 or self.draw(st.integers(0, 2)) == 0:
            return self.layer(shape, keep)
        cls = self.pick(("Sequential", "Sequential", "Stack", "Router", "Residual", "TwoBranch", "Twice"))
        if cls in ("Residual", "TwoBranch", "Twice"):
            names = CHILDREN[cls]
            children = {n: self.subtree(shape, depth - 1, keep=True)[0] for n in names}
            return {"cls": cls, "children": children}, shape
        specs = []
        for _ in range(self.draw(st.integers(1, 3))):
            spec, shape = self.subtree(shape, depth - 1, keep)
            specs.append(spec)
        if cls == "Sequential":
            return {"cls": cls, "children": specs}, shape
        if cls == "Stack":
            return {"cls": cls, "children": {"layers": {"cls": "ModuleList", "children": specs}}}, shape
        keys = [self.pick(("a", "b", "c", "d")) + str(i) for i in range(len(specs))]
        held = {"cls": "ModuleDict", "children": dict(zip(keys, specs, strict=True))}
        return {"cls": cls, "children": {"branches": held}}, shape

    def tree(
        self, shape: tuple[int, ...], depth: int = 2, freeze: bool = False
    ) -> tuple[str, tuple[int, ...]]:
        """Bind a random module tree taking ``shape``; returns its name and output shape. A tree
        with a random Dropout (p=0.5) is put in eval mode straight away. With ``freeze``, one time
        in four a node of the tree is frozen (``requires_grad_(False)``), then maybe a node unfrozen."""
        spec, out = self.subtree(shape, depth)
        name = self.fresh("m")
        step = Module(name, spec["cls"], spec.get("args", []), spec.get("params", {}), spec.get("kwargs", {}),
                      spec.get("children"))
        self.add_module(step)
        if any(n.cls == "Dropout" and n.kwargs.get("p") == 0.5 for n in module_nodes(step)):
            self.steps.append(ModuleMode(name, False))
        if freeze and self.draw(st.integers(0, 3)) == 0:
            self.module_requires_grad(self.pick(self.modules_of[name]), False)
            if self.coin():
                self.module_requires_grad(self.pick(self.modules_of[name]), True)
        return name, out

    def layer_forms(self) -> str:
        """Each layer of TREE_LAYER_FORMS in each of its forms, called on a (2, 2, 3) input (a
        clone, which an in-place layer may write), the outputs summed; returns the sum."""
        shape = (2, 2, 3)
        x = self.input(shape)
        outs: list[str] = []
        for cls, forms in TREE_LAYER_FORMS.items():
            for kwargs in forms:
                name = self.fresh("m")
                linear = cls == "Linear"
                params = {"weight": self.weights((2, 3), 3)}
                if not kwargs:  # (Linear's other form: bias=False)
                    params["bias"] = self.weights((2,))
                args, params = ([3, 2], params) if linear else ([], {})
                self.add_module(Module(name, cls, args, params, dict(kwargs)))
                if cls == "Dropout" and kwargs.get("p", 0.5) == 0.5:
                    self.steps.append(ModuleMode(name, False))
                src = self.fresh("t")
                self.bind(src, shape, Op(src, "clone", [Ref(x)]))
                outs.append(self.call(name, [src], shape))
        return self.summed(outs)

    def summed(self, outs: list[str]) -> str:
        """The sum of each of ``outs`` summed (each sum a tracked scalar, added in turn); returns
        the total's name."""
        total: str | None = None
        for out in outs:
            term = self.fresh("t")
            self.bind(term, (), Op(term, "sum", [Ref(out)]), tracked=True)
            if total is not None:
                added = self.fresh("t")
                term = self.bind(added, (), Op(added, "add", [Ref(total), Ref(term)]), tracked=True)
            total = term
        assert total is not None, "nothing to sum"
        return total

    def module_requires_grad(self, module: str, flag: bool) -> None:
        """``module.requires_grad_(flag)``; the parameters of the module and its submodules (node
        aliases extend their parent's with ``_``) are tracked accordingly."""
        self.steps.append(ModuleRequiresGrad(module, flag))
        for param in self.params:
            if param.split(".")[0] == module or param.startswith(f"{module}_"):
                (self.tracked.add if flag else self.tracked.discard)(param)

    def add_module(self, step: Module) -> None:
        self.steps.append(step)
        nodes = module_nodes(step)
        self.modules_of[step.name] = [n.alias for n in nodes]
        for node in nodes:
            self.modules.append(node.alias)
            for pname in node.param_names:
                param = f"{node.alias}.{pname}"
                self.shapes[param] = tuple(_shape(node.params[pname]))
                self.tracked.add(param)
                self.params.append(param)

    def call(self, module: str, inputs: list[str], shape: tuple[int, ...]) -> str:
        """``out = module(*inputs)``, the first input sometimes passed as ``input=``."""
        out = self.fresh("t")
        if len(inputs) == 1 and self.draw(st.integers(0, 3)) == 0:
            step = CallModule(out, module, [], {"input": inputs[0]})
        else:
            step = CallModule(out, module, inputs)
        self.bind(out, shape, step, tracked=True)
        return out

    # -- hooks ---------------------------------------------------------------------------------
    def module_hook(self, module: str, on: str | None = None, actions: tuple[str, ...] | None = None) -> str:
        """A hook of kind ``on`` (random if None) on ``module``, with random flags and action."""
        on = on or self.pick(MODULE_HOOK_KINDS)
        flags = {f: self.draw(st.integers(0, 2)) == 0 for f in MODULE_HOOK_FLAGS[on]}
        hook = self.fresh("h")
        self.steps.append(ModuleHook(hook, module, on, self.action(actions or MODULE_ACTIONS[on]), **flags))
        self.hooks.append(hook)
        return hook

    def state_dict_hook(self, module: str, on: str, actions: tuple[str, ...] | None = None) -> str:
        """A state-dict hook of kind ``on`` on ``module`` doing one of ``actions`` (any of its
        kind's, logging twice as often, if None)."""
        hook = self.fresh("h")
        with_module = on == "_load_state_dict_pre" and self.coin()
        action = self.pick(actions or ("log", *state_dict_hooks.ACTIONS[on]))
        self.steps.append(StateDictHook(hook, module, on, action, with_module))
        self.hooks.append(hook)
        return hook

    def twin(self, tree: str) -> str:
        """Bind a copy of the module tree ``tree`` with its parameter values negated (what a
        load into it copies shows), and return its name."""
        step = next(s for s in self.steps if isinstance(s, Module) and s.name == tree)
        spec = _negated(step.spec())
        name = self.fresh("m")
        self.add_module(Module(name, spec["cls"], spec["args"], spec["params"], spec["kwargs"],
                               spec["children"]))
        return name

    def global_hook(self, on: str | None = None, actions: tuple[str, ...] | None = None) -> str:
        """A global module hook (removed when the program ends, on both sides); it fires for every
        module, so its action is one torch accepts everywhere."""
        on = on or self.pick(list(GLOBAL_HOOK_FLAGS))
        flags = {f: self.draw(st.integers(0, 2)) == 0 for f in GLOBAL_HOOK_FLAGS[on]}
        fair = [a for a in MODULE_ACTIONS[on] if a not in ("wrong_shape", "wrong_count")]
        actions = tuple(a for a in actions or fair if a in fair) or ("log",)
        hook = self.fresh("g")
        self.steps.append(GlobalModuleHook(hook, on, self.action(actions), **flags))
        self.hooks.append(hook)
        return hook

    # -- losses and optimisers -----------------------------------------------------------------
    def loss(self, prediction: str, cls: str | None = None) -> str:
        """A loss module of ``cls`` (random if None) with a random reduction, applied to
        ``prediction`` (see ``loss_inputs``); returns the loss value's name."""
        cls = cls or self.pick(LOSSES)
        prediction, target = self.loss_inputs(prediction, cls)
        return self.apply_loss(cls, prediction, target, self.pick(REDUCTIONS))

    def loss_inputs(
        self, prediction: str, cls: str, soft: bool | None = None, target_grad: bool = False,
        ignored: tuple[str, int] | None = None, values: Any = None,
    ) -> tuple[str, str]:
        """The input a loss of ``cls`` takes from ``prediction`` (1-d or 2-d, classes last;
        squashed by Sigmoid for BCELoss, LogSoftmax for NLLLoss and KLDivLoss) and a target of the
        kind it takes:
        class indices (NLLLoss; CrossEntropyLoss unless ``soft``, at random if None; with
        ``ignored`` ("some" or "all", ignore_index), the first or every one the index ignored),
        else ``values`` if given, or values (MSELoss, L1Loss, HuberLoss) or probabilities drawn, requiring
        grad with ``target_grad``."""
        shape = self.shapes[prediction]
        squash = {"BCELoss": "Sigmoid", "NLLLoss": "LogSoftmax", "KLDivLoss": "LogSoftmax"}.get(cls)
        if squash is not None:
            name = self.fresh("m")
            kwargs = {"dim": -1} if squash == "LogSoftmax" else {}
            self.add_module(Module(name, squash, kwargs=kwargs))
            prediction = self.call(name, [prediction], shape)
        target = self.fresh("y")
        if soft is None and cls == "CrossEntropyLoss":
            soft = not self.coin()
        if cls == "NLLLoss" or cls == "CrossEntropyLoss" and not soft:
            rows = shape[0] if len(shape) == 2 else 1
            data = self.draw(st.lists(st.integers(0, shape[-1] - 1), min_size=rows, max_size=rows))
            if ignored is not None:
                which, index = ignored
                data = [index] * rows if which == "all" else [index, *data[1:]]
            self.bind(target, shape[:-1], Leaf(target, data if len(shape) == 2 else data[0], "int64"))
            return prediction, target
        if values is None:
            regression = cls in ("MSELoss", "L1Loss", "HuberLoss", "SmoothL1Loss")
            values = self.data(shape) if regression else self.probabilities(shape)
        self.bind(target, shape, Leaf(target, values, "float32", target_grad), tracked=target_grad)
        return prediction, target

    def apply_loss(
        self, cls: str, prediction: str, target: str, reduction: str, options: dict | None = None
    ) -> str:
        """``cls(reduction=reduction, **options)(prediction, target)``; returns the loss value's name."""
        name = self.fresh("m")
        self.add_module(Module(name, cls, kwargs={"reduction": reduction, **(options or {})}))
        shape = self.shapes[prediction]
        per_row = cls in ("CrossEntropyLoss", "NLLLoss")
        out_shape = () if reduction != "none" else shape[:-1] if per_row else shape
        return self.call(name, [prediction, target], out_shape)

    def probabilities(self, shape: tuple[int, ...]) -> Any:
        if not shape:
            return self.pick((0.0, 0.25, 0.5, 1.0))
        return [self.probabilities(shape[1:]) for _ in range(shape[0])]

    def optimizer(self, params: list[str], cls: str | None = None) -> str:
        """An optimiser of ``cls`` (random if None) over ``params`` with random options, each left
        at its default or given a value that changes the update, in combinations torch accepts:
        SGD's nesterov needs a momentum and no dampening (drawn independently, half the loops
        only raised that ValueError), so a momentum comes plain, with nesterov or with dampening.
        Adam's betas include a short memory of the second moment, under which it falls between
        steps and amsgrad's running maximum differs from it (with beta2=0.999 it all but never
        does). AdamW's weight_decay is its default (0.01) or a given 0.01 or 0.1."""
        cls = cls or self.pick(OPTIMIZERS)
        # None: torch's default (first for the later optimisers, whose loops drew it too seldom)
        lr = self.pick((0.1, 0.01, None) if cls in ("SGD", "Adam", "AdamW") else (None, 0.1, 0.01))
        kwargs: dict[str, Any] = {} if lr is None else {"lr": lr}
        if cls == "SGD":
            options = {"momentum": (0.0, 0.9, 0.5), "weight_decay": (0.0, 0.01), "maximize": (False, True)}
        elif cls in ("Adam", "AdamW"):
            options = {"betas": ((0.9, 0.999), (0.8, 0.5)), "amsgrad": (False, True),
                       "maximize": (False, True), "weight_decay": (0.0, 0.01, 0.1)}
        else:
            options = {**OPTIMIZER_OPTIONS[cls], "maximize": (False, True), "weight_decay": (0.0, 0.01, 0.1)}
            if cls in NO_WEIGHT_DECAY:
                del options["weight_decay"]
        if cls == "Adam":  # AdamW's update (AdamW itself takes no such option)
            options["decoupled_weight_decay"] = (False, True)
        for key, values in options.items():
            value = self.pick(values)
            if value != values[0]:
                kwargs[key] = value
        if kwargs.get("momentum") and cls == "SGD":
            kwargs.update(self.pick(({}, {"nesterov": True}, {"dampening": 0.1})))
        name = self.fresh("opt")
        self.steps.append(Optimizer(name, cls, list(params), kwargs))
        return name

    def scheduler(self, optimizer: str, cls: str, steps: int, options: dict | None = None) -> str:
        """A scheduler of ``cls`` on ``optimizer`` with ``options`` (drawn from ``SCHEDULER_OPTIONS``
        if None), to be stepped ``steps`` times: OneCycleLR's length given as total_steps or as epochs and
        steps_per_epoch, ``steps``, one more or one less (stepped past it, torch raises). A composite's
        schedulers (of ``COMPOSITE_SCHEDULERS``) are made first, each in its class's first form."""
        kwargs = dict(self.pick(SCHEDULER_OPTIONS[cls]) if options is None else options)
        made = [self.scheduler(optimizer, sub, steps, SCHEDULER_OPTIONS[sub][0])
                for sub in kwargs.pop("schedulers", ())]
        if cls == "OneCycleLR":
            total = self.pick((steps, steps + 1, steps - 1))
            kwargs.update(self.pick(({"total_steps": total}, {"epochs": total, "steps_per_epoch": 1})))
        name = self.fresh("sched")
        self.steps.append(Scheduler(name, cls, optimizer, kwargs, made))
        return name


def _conv_out(
    size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...], pads: tuple[int, ...],
    dilation: tuple[int, ...],
) -> tuple[int, ...]:
    """A convolution's output size per spatial dimension (torch's formula, symmetric padding)."""
    dims = zip(size, kernel, stride, pads, dilation, strict=True)
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, s, p, d in dims)


def _shape(data: Any) -> list[int]:
    """The shape of nested lists of numbers."""
    return [len(data), *_shape(data[0])] if isinstance(data, list) else []
