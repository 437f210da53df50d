"""torch.nn for impl: Module and layers, Parameter, functional, init."""

from impl.nn.parameter import Buffer, Parameter  # noqa: I001  (parameter must load before modules)
from impl.nn import functional, init, modules, utils
from impl.nn.modules import *  # noqa: F403  (the layers, listed once in impl.nn.modules.__all__)

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *modules.__all__]
