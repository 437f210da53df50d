"""The generated calls, recording functions and node methods (impl/_ops/codegen.py): every op of
the table gets them and they compile, and the example the module shows is what it generates."""

from __future__ import annotations

import importlib
import pkgutil
import textwrap

import pytest

import impl
import impl._ops
from impl._ops import arithmetic, codegen
from impl._ops.table import OpDef


def _all_ops() -> list[OpDef]:
    ops: dict[int, OpDef] = {}
    for info in pkgutil.iter_modules(impl._ops.__path__, "impl._ops."):
        for value in vars(importlib.import_module(info.name)).values():
            if isinstance(value, OpDef):
                ops[id(value)] = value
    return list(ops.values())


@pytest.mark.parametrize("op", _all_ops(), ids=lambda op: op.node_name)
def test_every_op_compiles_its_call_recorder_and_node_methods(op: OpDef) -> None:
    assert codegen.compile_call(op, {}).__code__.co_argcount == 2  # a generation fault: SyntaxError
    record = codegen.compile_recorder(op, {})
    assert record.__code__.co_argcount == 3
    for name, arguments in (("apply", 2), ("release", 1)):
        assert codegen.compile_node_method(op, name, {}).__code__.co_argcount == arguments


def test_the_documented_example_is_what_mul_generates() -> None:
    doc = codegen.__doc__
    example = doc[doc.index("    def record"):doc.index("\n\nThe node's ``apply``")]
    assert textwrap.dedent(example) + "\n" == arithmetic.MUL.record_source


CALLS = {
    "trunc": lambda x: x.trunc(),
    "floor": lambda x: x.floor(),
    "sin": lambda x: x.sin(),
    "mul": lambda x: x * 2.0,
    "index": lambda x: x[impl.tensor([0, 1])],
    "reflect pad": lambda x: impl.nn.functional.pad(x.reshape(1, 2, 2), (1, 1), mode="reflect"),
}


@pytest.mark.parametrize("call", CALLS)
def test_an_op_is_made_once_not_per_call(call: str) -> None:
    """Each call of a function records a node of the same class: an OpDef made per call would make
    a new node class, and compile its generated code, every time."""
    x = impl.tensor([[1.5, -2.5], [3.7, -0.2]], requires_grad=True)
    assert type(CALLS[call](x).grad_fn) is type(CALLS[call](x).grad_fn)
