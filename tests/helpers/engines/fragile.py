"""impl whose ``exp`` segfaults, ``sin`` sleeps forever and ``cos`` asks for 64 x 256 MiB (see
``tests/helpers/engines``); every other name is impl's."""

import ctypes
import time

import numpy

from tests.helpers.engines._wrap import forward

__getattr__ = forward(__name__)
GREED = 64  # blocks of 256 MiB that cos allocates (numpy: untouched pages, so it fails fast at a limit)


def exp(*args, **kwargs):
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def sin(*args, **kwargs):
    time.sleep(1e6)


def cos(*args, **kwargs):
    return [numpy.empty(2**28, numpy.uint8) for _ in range(GREED)]
