"""Rules of the family "numerical gradients": a backend's gradients agree with central finite
differences computed on the backend itself in float64 (an oracle independent of torch).
Checked in conformance/test_gradcheck.py with oracle/numeric.py."""

from oracle.rules import Rule

FAMILY = "numerical gradients"
_GRADCHECK = "https://pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradcheck.html"

RULES = [
    Rule(
        "NUM-001",
        FAMILY,
        "For compositions of ops on float64 inputs, at points where each op is smooth (away from "
        "kinks and ties), the gradients backward writes to .grad equal the central finite "
        "differences of the forward (gradcheck).",
        _GRADCHECK,
    ),
    Rule(
        "NUM-002",
        FAMILY,
        "Second derivatives through create_graph=True equal the central finite differences of the "
        "first derivatives (gradgradcheck), at points where each op is smooth.",
        "https://pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradgradcheck.html",
    ),
]
