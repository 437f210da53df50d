"""Rules of the family "gradcheck API": torch.autograd.gradcheck and gradgradcheck themselves, what
they return, raise and warn (conformance/test_gradcheck_api.py). Not to be confused with the
family "numerical gradients" (oracle/rules/gradcheck.py), which checks a backend's derivatives
against finite differences computed by the oracle."""

from oracle.rules import Rule

FAMILY = "gradcheck API"
_DOCS = "https://pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradcheck.html"

RULES = [
    Rule(
        "GCHK-001",
        FAMILY,
        "torch.autograd.gradcheck returns True where a function's backward agrees with finite differences "
        "within atol + rtol * |numerical| (in fast mode, on v^T J u for its own random u and v), and "
        "otherwise raises GradcheckError naming the output and input and printing both Jacobians (fast "
        "mode adds the slow-mode recomputation), or returns False with raise_exception=False; it then "
        "checks that a zero grad_output gives zero gradients, that undefined output gradients are "
        "handled, and batched gradients if asked, each failure with torch's message; an input requiring "
        "grad that is not float64 makes it warn. With check_forward_ad=True it checks the Jacobian "
        "forward-mode AD computes (J u in fast mode) the same way, with 'computed with forward mode' in "
        "its message, and that an input without a tangent gives the tangents a zero one gives.",
        _DOCS,
    ),
    Rule(
        "GCHK-002",
        FAMILY,
        "torch.autograd.gradgradcheck is gradcheck of the map from (inputs, grad_outputs) to the "
        "gradients, with torch's random grad_outputs when none are given: it returns, raises and warns "
        "as that gradcheck does (check_fwd_over_rev=True: forward AD through the backward pass).",
        "https://pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradgradcheck.html",
    ),
]
