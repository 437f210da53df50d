"""Rules of the family "complex tensors": complex64/complex128 values, promotion, printing and
gradients (conformance/test_complex.py)."""

from oracle.rules import Rule

FAMILY = "complex tensors"
_NOTES = "https://pytorch.org/docs/stable/notes/autograd.html#autograd-for-complex-numbers"
_DOCS = "https://pytorch.org/docs/stable/complex_numbers.html"

RULES = [
    Rule(
        "CPLX-001",
        FAMILY,
        "Complex tensors (complex64, complex128: torch.tensor of Python complex numbers, zeros/ones/full, "
        "randn on torch's stream, .to(cfloat), torch.complex, torch.polar, view_as_complex) have torch's "
        "dtypes, promotion (result_type, promote_types, a real tensor with a complex number, the default "
        "complex dtype from the default float dtype), printed forms and values under arithmetic (+ - * / "
        "neg, pow, reciprocal), exp, log, sqrt, sin, cos, tanh, sgn, abs and angle (real results), conj "
        "(the conjugate bit: is_conj, resolve_conj), conj_physical, .real and .imag (views, settable), "
        "view_as_real, sum, mean, matmul, reshape, transpose, indexing, eq and ne, isreal (of complex "
        "and real tensors), .item() (a Python complex); the order comparisons raise torch's "
        "NotImplementedError.",
        _DOCS,
    ),
    Rule(
        "CPLX-002",
        FAMILY,
        "Gradients of real losses of complex programs are torch's (the conjugate Wirtinger convention of "
        "the autograd notes: grad * conj(f'(z)) for holomorphic ops, torch's formulas for abs, sgn, angle, "
        "real/imag, view_as_real, conj, complex, polar; a real leaf gets the real part), with torch's "
        "grad_fn names; backward() of a complex output without a gradient raises torch's "
        "'grad can be implicitly created only for real scalar outputs'.",
        _NOTES,
    ),
]
