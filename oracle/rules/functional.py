"""Rules of the family "autograd.functional": torch.autograd.functional's vjp, jvp, jacobian,
hessian, vhp and hvp of functions built from ops (conformance/test_autograd_functional.py)."""

from oracle.rules import Rule

FAMILY = "autograd.functional"
_DOCS = "https://pytorch.org/docs/stable/generated/torch.autograd.functional"

RULES = [
    Rule(
        "AFN-001",
        FAMILY,
        "vjp and jvp return the function's outputs and the products of its Jacobian with v, nested "
        "as the inputs and outputs were given (tuple or lone tensor); with create_graph the results "
        "keep a graph, without they are detached; a v of the wrong length or size, or a missing v "
        "where the outputs (vjp) or inputs (jvp) are not one element, raises torch's RuntimeError.",
        f"{_DOCS}.vjp.html",
    ),
    Rule(
        "AFN-002",
        FAMILY,
        "jacobian and hessian, row by row or vectorized, return one block per output and input of "
        "shape output.shape + input.shape, nested as the arguments were tuples (jacobian's "
        "strategy='forward-mode' too, vectorized, its nesting in lists); hvp and vhp return "
        "the function's value and the products of its Hessian with v; a function that does not "
        "return one element is refused with torch's RuntimeError.",
        f"{_DOCS}.jacobian.html",
    ),
    Rule(
        "AFN-003",
        FAMILY,
        "With strict=True an output that does not require grad, an input an output does not depend "
        "on, or (with create_graph) a derivative that is constant raises torch's RuntimeError, and "
        "strict with vectorize is refused; without strict the missing derivatives are zeros.",
        f"{_DOCS}.hessian.html",
    ),
]
