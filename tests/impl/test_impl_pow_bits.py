"""float32 pow of a tensor by a tensor against torch bit for bit where torch's loop is scalar
(glibc's powf): a base broadcast against a few integer exponents, as the polynomial tutorials
build their features (``x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))``), and IEEE's special
values. (glibc's powf is emulated by the float64 pow rounded: for exponents such as 4 it
rounds ~1 in 4000 of these bases the other way; not checked here.)"""

from __future__ import annotations

import math

import numpy as np
import torch

import impl


def _same(ours, theirs) -> bool:
    a, b = np.asarray(ours.numpy()), theirs.numpy()
    same_signs = np.array_equal(np.signbit(a), np.signbit(b))
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True) and same_signs


def test_broadcast_integer_exponents_are_torchs():
    for n in (7, 33, 2000):
        for exponents in ([1, 2, 3], [0, 1, 2, 3]):
            theirs = torch.linspace(-math.pi, math.pi, n).unsqueeze(-1).pow(torch.tensor(exponents))
            ours = impl.linspace(-math.pi, math.pi, n).unsqueeze(-1).pow(impl.tensor(exponents))
            assert _same(ours, theirs), (n, exponents)


def test_special_values_are_torchs():
    values = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 2.0, -2.5, 0.5]
    exponents = [0.0, 0.5, -0.5, 1.0, 2.0, math.inf, -math.inf, math.nan, 3.0, -3.0]
    theirs = torch.tensor(values).unsqueeze(-1).pow(torch.tensor(exponents))
    ours = impl.tensor(values).unsqueeze(-1).pow(impl.tensor(exponents))
    assert _same(ours, theirs)
