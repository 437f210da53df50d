"""Rules of the family "forward AD": torch.autograd.forward_ad's dual tensors and the tangents ops
give them (conformance/test_forward_ad.py)."""

from oracle.rules import Rule

FAMILY = "forward AD"
_DOCS = "https://pytorch.org/docs/stable/autograd.html#forward-mode-automatic-differentiation"

RULES = [
    Rule(
        "FWAD-001",
        FAMILY,
        "Inside dual_level(), make_dual(tensor, tangent) gives a dual tensor whose unpack_dual is "
        "(a view of its primal, the tangent); each op on dual tensors (arithmetic with broadcasting "
        "and numbers, unary math, sum/mean, mm/matmul, views and indexing, softmax, in-place ops, a "
        "view's in-place op reaching its base; the elementwise math and nn activations, reductions, "
        "scans, cat/stack/split, gather/scatter/index ops, losses, layer norm and the other jvp "
        "formulas torch declares) gives its result the tangent J·t torch computes (of the result's dtype "
        "and shape, NaN where torch's formula gives NaN), a plain tensor's unpack_dual is (a view of it, "
        "None), and once the level is left every tangent is gone. A custom autograd.Function applied "
        "to dual tensors runs forward and jvp with forward AD off; jvp gets each tensor input's tangent "
        "(zeros for a floating one without, None otherwise), reads save_for_forward's tensors as "
        "saved_tensors, and its outputs get the tangents it returns, with torch's errors for a Function "
        "without jvp, a view output whose tangent is not a view, and an in-place one whose jvp does not "
        "write the tangent in place.",
        _DOCS,
    ),
    Rule(
        "FWAD-002",
        FAMILY,
        "forward_ad refuses what torch refuses, with its errors and messages: make_dual outside a "
        "level (RuntimeError), of a primal or tangent that is not floating (ValueError), of a tangent "
        "of another size (RuntimeError naming both sizes), of a tensor that already has a tangent, "
        "and a dual_level entered inside another ('Nested forward mode AD is not supported').",
        _DOCS,
    ),
]
