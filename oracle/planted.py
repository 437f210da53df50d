"""pytest option ``--plant NAME``: run the whole session with a planted fault in impl.

The faults live in the package ``tests/impl_faults`` (``IMPL_FAULTS``); each monkeypatches one
piece of impl. ``tests/test_impl_planted_faults.py`` uses this option to show that the conformance
suite, run with ``--backend impl``, catches each of them. The fault is active from configuration
to the end of the session in every process: xdist workers configure themselves with the same
options, and the subprocesses that run the seed scripts on impl (``oracle.script``) plant the
fault named by the environment variable ``ORACLE_PLANT``, which the session sets. The run's header
names the fault so that nobody mistakes a planted run for a real one.

Loaded by the root ``conftest.py`` next to ``oracle.plugin``.
"""

from __future__ import annotations

import importlib
import os
from contextlib import ExitStack

import pytest

FAULTS_MODULE = "tests.impl_faults"
VARIABLE = "ORACLE_PLANT"  # the planted fault's name, for the session's subprocesses
_active = pytest.StashKey[ExitStack]()
_planted_here: list[ExitStack] = []  # a subprocess's fault, active until the process ends


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("oracle").addoption(
        "--plant",
        default=None,
        metavar="NAME",
        help=f"plant the impl fault NAME ({FAULTS_MODULE}.IMPL_FAULTS) for the whole session",
    )


def planted_faults() -> dict:
    """The planted impl faults by name (imported only when asked for: they are test code)."""
    return importlib.import_module(FAULTS_MODULE).IMPL_FAULTS


def pytest_configure(config: pytest.Config) -> None:
    name = config.getoption("plant", None)
    if not name:
        return
    faults = planted_faults()
    if name not in faults:
        raise pytest.UsageError(f"--plant: unknown impl fault {name!r}; known: {', '.join(sorted(faults))}")
    stack = ExitStack()
    stack.enter_context(faults[name]())
    previous = os.environ.get(VARIABLE)
    os.environ[VARIABLE] = name
    stack.callback(_restore_variable, previous)
    config.stash[_active] = stack


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(_active, None)
    if stack is not None:
        stack.close()
        del config.stash[_active]


def _restore_variable(previous: str | None) -> None:
    if previous is None:
        os.environ.pop(VARIABLE, None)
    else:
        os.environ[VARIABLE] = previous


def plant_from_environment() -> str | None:
    """In a subprocess of a planted session (``ORACLE_PLANT`` set): plant that fault in impl for
    the rest of this process and return its name; None when no fault is asked for."""
    name = os.environ.get(VARIABLE)
    if not name or _planted_here:
        return None
    stack = ExitStack()
    stack.enter_context(planted_faults()[name]())
    _planted_here.append(stack)
    return name


def pytest_report_header(config: pytest.Config) -> str | None:
    name = config.getoption("plant", None)
    return f"oracle: PLANTED impl fault {name} is active" if name else None
