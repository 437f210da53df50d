"""Imported once by the fork server of tests/helpers/forked_pytest.py, so that a forked conformance
session finds them imported: the oracle, the planted faults and the conformance test modules.

They are imported under the ``planted`` profile, the one forked conformance sessions run (``triage``
draws as many examples): a test module sizes its examples by the profile loaded when it is imported
(``oracle.profiles.examples``). Nothing here runs an op, so the server forks without thread pools.
"""

import importlib
from pathlib import Path

from hypothesis import settings

import impl_faults  # noqa: F401
import oracle.plugin  # noqa: F401
from oracle import profiles

profiles.register()
settings.load_profile("planted")
for _path in sorted(Path(__file__).parents[2].joinpath("conformance").glob("test_*.py")):
    importlib.import_module(f"conformance.{_path.stem}")
