"""Planted faults in impl: each breaks one behaviour of the engine, by monkeypatching the smallest
piece of impl that holds it, and restores impl when its block ends.

They show that the conformance suite can fail: every rule of the catalogue (``oracle/rules/``)
is named by at least one fault here that its tests must catch.
``tests/oracle/test_impl_planted_faults.py`` runs, for each fault, the conformance tests of the
rules it names on impl with the fault planted (``--plant NAME``, see ``oracle.planted``; this
package is the ``faults_module`` the repository's pytest configuration names), and checks that
each of those rules fails with a divergence whose description contains the fault's phrase for it
(what kind of difference the fault makes), while the same tests pass without it.

A fault is a generator function in one of this package's family modules, registered with
``@fault({"RULE-ID": "phrase", ...})``; ``FAULTS`` maps each name to its ``Fault``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from oracle.faults import patched  # the catalogue's faults patch with it, as oracle's own do


@dataclass(frozen=True)
class Fault:
    """A planted fault: ``plant()`` is the context manager that breaks impl while it is active;
    ``catches`` maps each rule whose tests must catch it to a phrase of the divergence expected."""

    name: str
    plant: Callable[[], AbstractContextManager[None]]
    catches: dict[str, str]
    doc: str


FAULTS: dict[str, Fault] = {}


def fault(catches: dict[str, str]) -> Callable[[Callable[[], Iterator[None]]], Callable[[], Any]]:
    """Register a generator function as the planted fault of its name, caught by ``catches``."""

    def register(function: Callable[[], Iterator[None]]) -> Callable[[], Any]:
        name = function.__name__
        if name in FAULTS:
            raise ValueError(f"two planted faults named {name}")
        if not catches:
            raise ValueError(f"planted fault {name} names no rule that catches it")
        plant = contextmanager(function)
        FAULTS[name] = Fault(name, plant, dict(catches), (function.__doc__ or "").strip())
        return plant

    return register


@contextmanager
def derivative_replaced(op: Any, input: str, make: Callable[[Callable], Callable]) -> Iterator[None]:
    """``op``'s derivative formula for ``input`` replaced by ``make(original formula)``.

    An OpDef's plan (the derivative of each input, what its nodes save) is made from its
    derivatives when the OpDef is made, so the plan is remade from the patched ones too; the node
    class's ``apply``, compiled from the plan on first use, is reset to OpNode's compiling one, so
    it is compiled from the patched plan while the fault is active and restored afterwards.
    """
    from impl._ops.table import Derivative, OpNode, _Plan

    def derivative(original: Derivative) -> Derivative:
        return Derivative(original.uses, make(original.formula))

    with (
        patched(op.derivatives, input, derivative),
        patched(op, "_plan", lambda _plan: _Plan(op)),
        patched(op.node_class, "apply", lambda _apply: OpNode.apply),
    ):
        yield


for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_module.name}")

# what ``oracle.planted`` plants (the catalogue's ``IMPL_FAULTS``): name -> context-manager factory
IMPL_FAULTS: dict[str, Callable[[], AbstractContextManager[None]]] = {n: f.plant for n, f in FAULTS.items()}
