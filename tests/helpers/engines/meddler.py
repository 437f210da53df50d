"""Real torch, after changing torch's global state on import (see ``tests/helpers/engines``): the default
dtype becomes float64 and ``Tensor.backward`` raises. The module then stands in for itself as
torch (``sys.modules``), as a wheel that installs a patched torch would."""

import sys

import torch

from tests.helpers.engines import MEDDLER_MESSAGE


def _backward(self, *args, **kwargs):
    raise RuntimeError(MEDDLER_MESSAGE)


torch.set_default_dtype(torch.float64)
torch.Tensor.backward = _backward
sys.modules[__name__] = torch
