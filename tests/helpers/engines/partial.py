"""impl lacking a few names of torch's API, with a version of its own (see ``tests/helpers/engines``)."""

import impl
from tests.helpers.engines._wrap import forward

__version__ = "0.0.7+partial.selftest"  # no installed distribution has this version
LACKS = ("inference_mode", "logaddexp", "logaddexp2")

__getattr__ = forward(__name__, LACKS)


def hypot(input, other, **kwargs):
    """Present, but broken inside: its AttributeError is the backend's own, not a name it lacks."""
    return impl.hypot_kernel(input, other)
