"""A jtorch-like first attempt (see ``tests/helpers/engines``): impl lacking several names of torch's API,
computing some values wrong and sorting slowly; for the triage profile."""

import time

import impl
from tests.helpers.engines._wrap import forward

__version__ = "0.1.0+weak.selftest"
LACKS = ("inference_mode", "is_inference_mode_enabled", "logaddexp", "logaddexp2", "logsumexp",
         "logcumsumexp", "cummax", "cummin", "aminmax", "var_mean", "std_mean", "kthvalue", "erf", "erfc")

__getattr__ = forward(__name__, LACKS)


def exp(input, *args, **kwargs):
    return impl.exp(input, *args, **kwargs) * 1.01


def sum(input, *args, **kwargs):
    return impl.sum(input, *args, **kwargs) + 1


def mul(input, other, *args, **kwargs):
    return impl.mul(impl.mul(input, other, *args, **kwargs), 1.001)


SORT_SECONDS = 0.2  # what sort takes: a rule's tests of it outlast any small --rule-budget


def sort(*args, **kwargs):
    time.sleep(SORT_SECONDS)
    return impl.sort(*args, **kwargs)
