"""Imported once by the fork server of tests/helpers/forked_pytest.py, so that a forked conformance
session finds them imported: the oracle, the planted faults and the conformance test modules.

They are imported under the ``planted`` profile, the one forked conformance sessions run (``triage``
draws as many examples): a test module sizes its examples by the profile loaded when it is imported
(``oracle.profiles.examples``). Nothing here runs an op, so the server forks without thread pools.

What every session would otherwise do again is done here once (about half a second of each of
~500 sessions): the reference torch's install is verified (its wheel's RECORD read), hypothesis
collects the constants of the loaded modules and registers its global random, and the loaded
objects are frozen out of the garbage collector, whose full collections (pytest runs several at
the end of a session, hypothesis one per registered random) then skip the imported heap.
"""

import gc
import importlib
from contextlib import suppress
from pathlib import Path

import torch._dynamo  # noqa: F401 - torch's first optimiser step imports it: ~1 s of each such session
from hypothesis import settings
from hypothesis.internal import entropy
from hypothesis.internal.conjecture import providers

import impl_faults  # noqa: F401
import oracle.plugin  # noqa: F401
from oracle import profiles, reference

profiles.register()
settings.load_profile("planted")
for _path in sorted(Path(__file__).parents[2].joinpath("conformance").glob("test_*.py")):
    importlib.import_module(f"conformance.{_path.stem}")

reference.reference()  # verified once per process: the forked sessions inherit the result
# hypothesis internals, used only as a warm-up: without them a session is slower, not wrong
with suppress(AttributeError):
    providers._get_local_constants()
with suppress(AttributeError), entropy.deterministic_PRNG():
    pass
gc.freeze()
