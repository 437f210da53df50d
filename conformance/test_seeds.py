"""The seed posts' programs (examples/seeds/) show the same output on the backend as on torch.

One test per script, each checking its rule of the "seed examples" family (oracle/rules/seeds.py):
the script runs unmodified on torch and on the backend (``import torch`` resolved to it), and
everything it shows (stdout, stderr, warnings, an uncaught exception) must agree.
"""

from pathlib import Path

import pytest

from oracle.backends import Backend
from oracle.rules.seeds import SCRIPTS
from oracle.script import check_script

SEEDS = Path(__file__).resolve().parent.parent / "examples" / "seeds"


CASES = [pytest.param(name, marks=pytest.mark.rule(rule_id), id=rule_id) for rule_id, name in SCRIPTS.items()]


@pytest.mark.parametrize("script", CASES)
def test_seed_script(script: str, backend: Backend) -> None:
    check_script(SEEDS / script, backend.name, backend.device, getattr(backend, "python", None))
