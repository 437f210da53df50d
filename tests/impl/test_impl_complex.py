"""Complex tensors (impl/_ops/complex.py) where the conformance scripts (CPLX-001/002) do not reach:
torch's draws of complex normals, neg's signs of zero, printing under print options, the
refusal of ops impl does not run on complex tensors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import impl


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [3, 8, 20])
def test_randn_complex_on_torch_stream(dtype: str, n: int) -> None:
    torch.manual_seed(7)
    impl.manual_seed(7)
    expected = torch.randn(n, dtype=getattr(torch, dtype)).numpy()
    got = impl.randn(n, dtype=getattr(impl, dtype)).numpy()
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(3,), (9,), (4, 5), (5, 4)])
def test_neg_signs_of_zero(dtype: str, shape: tuple) -> None:
    """torch's vectorised loop negates as ``0 - z`` (a 0 part stays +0.0), its scalar tail as -z."""
    data = np.full(shape, 0.5 + 0j)
    expected = torch.view_as_real(-torch.tensor(data, dtype=getattr(torch, dtype)).movedim(0, -1)).numpy()
    got = impl.view_as_real(-impl.tensor(data, dtype=getattr(impl, dtype)).movedim(0, -1)).numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


OPTIONS = [{}, {"precision": 2}, {"threshold": 5, "edgeitems": 1}, {"sci_mode": True}]


@pytest.mark.parametrize("options", OPTIONS)
def test_printed_under_options(options: dict) -> None:
    data = [[1.5 + 2j, -3e-5 - 1j, 7 + 0j, 1e6j], [0.25, -0.5j, 2 - 2j, 1]]
    try:
        torch.set_printoptions(**options)
        impl.set_printoptions(**options)
        assert repr(impl.tensor(data)) == repr(torch.tensor(data))
        row = torch.tensor(data, dtype=torch.cdouble)[1]
        assert repr(impl.tensor(data, dtype=impl.cdouble)[1]) == repr(row)
    finally:
        torch.set_printoptions(profile="default", sci_mode=None)
        impl.set_printoptions(profile="default", sci_mode=None)


def test_ops_without_complex_support_refuse() -> None:
    z = impl.tensor([1 + 1j])
    with pytest.raises(NotImplementedError, match="impl does not support complex tensors in relu"):
        z.relu()
    with pytest.raises(NotImplementedError, match=r"\"lt_cpu\" not implemented for 'ComplexFloat'"):
        z < z  # noqa: B015


def test_conj_bit() -> None:
    z = impl.tensor([1 + 2j])
    assert z.conj().is_conj() and not z.conj().conj().is_conj() and not z.conj().resolve_conj().is_conj()
    real = impl.tensor([1.0])
    assert real.conj() is real and real.resolve_conj() is real and not real.conj().is_conj()
    assert z.conj().imag.item() == -2.0


@pytest.mark.parametrize("spelling", ["adjoint", "mH"])
def test_adjoint_of_complex_matrices_conjugates(spelling: str) -> None:
    """torch.adjoint and Tensor.mH: the conjugate transpose (ConjBackward0 over the transpose, the
    conjugate bit set), gradients through it as torch's."""

    def run(lib: object) -> tuple:
        z = lib.tensor([[1 + 2j, 3j], [0.5, -1j]], requires_grad=True)
        a = lib.adjoint(z) if spelling == "adjoint" else z.mH
        (a.real * lib.tensor([[1.0, 2.0], [3.0, 4.0]]) + a.imag).sum().backward()
        return a.detach().tolist(), type(a.grad_fn).__name__, a.is_conj(), z.grad.tolist()

    assert run(impl) == run(torch)
