"""torch.backends as a CPU build of torch shows it: no cuDNN, cuBLAS or MPS, oneDNN, OpenMP and
MKL present (impl computes on numpy), opt_einsum absent; the flags keep what they are set to, and
impl's computations read none of them (they select GPU kernels torch does not run on CPU)."""

from __future__ import annotations

from impl.backends import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]

