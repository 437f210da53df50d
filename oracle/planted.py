"""pytest option ``--plant NAME``: run the whole session with a planted fault in impl.

The faults live in the package ``impl_faults`` (``IMPL_FAULTS``); each monkeypatches one
piece of impl. ``tests/oracle/test_impl_planted_faults.py`` uses this option to show that the conformance
suite, run with ``--backend impl``, catches each of them. The fault is active from configuration
to the end of the session in every process: xdist workers configure themselves with the same
options, and the subprocesses that run the seed scripts on impl (``oracle.script``) and the
isolated backend's worker (``oracle.worker``) plant the fault named by the environment variable
``ORACLE_PLANT``, which the session sets (``oracle.faults.plant_impl_fault_from_environment``).
The run's header names the fault so that nobody mistakes a planted run for a real one.

Loaded by the root ``conftest.py`` next to ``oracle.plugin``.
"""

from __future__ import annotations

import os
from contextlib import ExitStack

import pytest

from oracle.faults import IMPL_FAULTS_MODULE, PLANT_VARIABLE, impl_faults

_active = pytest.StashKey[ExitStack]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("oracle").addoption(
        "--plant",
        default=None,
        metavar="NAME",
        help=f"plant the impl fault NAME ({IMPL_FAULTS_MODULE}.IMPL_FAULTS) for the whole session",
    )


def pytest_configure(config: pytest.Config) -> None:
    name = config.getoption("plant", None)
    if not name:
        return
    faults = impl_faults()
    if name not in faults:
        raise pytest.UsageError(f"--plant: unknown impl fault {name!r}; known: {', '.join(sorted(faults))}")
    stack = ExitStack()
    stack.enter_context(faults[name]())
    previous = os.environ.get(PLANT_VARIABLE)
    os.environ[PLANT_VARIABLE] = name
    stack.callback(_restore_variable, previous)
    config.stash[_active] = stack


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(_active, None)
    if stack is not None:
        stack.close()
        del config.stash[_active]


def _restore_variable(previous: str | None) -> None:
    if previous is None:
        os.environ.pop(PLANT_VARIABLE, None)
    else:
        os.environ[PLANT_VARIABLE] = previous


def pytest_report_header(config: pytest.Config) -> str | None:
    name = config.getoption("plant", None)
    return f"oracle: PLANTED impl fault {name} is active" if name else None
