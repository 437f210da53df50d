"""impl: an independent autograd engine on numpy (cupy on 'cuda') with torch's public surface.

``import impl as torch`` runs torch programs unchanged for what impl covers. Its names are those
the modules below declare (``impl._api``): each op's function next to the op.
"""

from __future__ import annotations

import math as _math

from impl import _C as _C  # torch._C's few names programs call
from impl import _api, _methods
from impl import accelerator as accelerator
from impl import amp as amp
from impl import autograd as autograd  # the submodules torch has
from impl import backends as backends
from impl import cpu as cpu
from impl import cuda as cuda
from impl import dtypes as dtypes
from impl import linalg as linalg
from impl import random as random  # torch.random
from impl import special as special
from impl import storage as storage  # torch.storage; declares Tensor.storage before bind()
from impl import utils as utils
from impl.autograd import functional as _functional  # noqa: F401  (torch.autograd.functional)
from impl.autograd import gradcheck as _gradcheck

# torch.autograd.gradcheck is the function; its module (GradcheckError ...) stays importable by name
autograd.gradcheck, autograd.gradgradcheck = _gradcheck.gradcheck, _gradcheck.gradgradcheck

__version__ = "2.13.0+impl"

_methods.bind()
for _name in ("inf", "nan", "pi", "e"):
    _api.public(getattr(_math, _name), _name)


from impl import distributions as distributions  # noqa: E402  (torch.distributions)
from impl import func as func  # noqa: E402  (torch.func; torch.vmap)
from impl import nn as nn  # noqa: E402  (torch.nn and torch.optim load with the package)
from impl import optim as optim  # noqa: E402
from impl import serialization as serialization  # noqa: E402  (torch.save, torch.load)

globals().update(_api.FUNCTIONS)
__all__ = sorted(_api.FUNCTIONS)
