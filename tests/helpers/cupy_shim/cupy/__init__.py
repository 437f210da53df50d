"""``import cupy`` as the numpy-backed stand-in (tests/helpers/cupy_standin.py), for processes that cannot
be handed it by a fixture: with ``tests/helpers/cupy_shim`` on ``PYTHONPATH`` (benchmarks/gpu_check.sh's
stand-in mode), every process of a run (pytest, its xdist workers, the oracle's backend workers)
imports the stand-in as cupy, so impl's 'cuda' device runs on it without a GPU."""

import sys

from tests.helpers import cupy_standin

sys.modules[__name__] = cupy_standin
