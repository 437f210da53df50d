"""pytest option ``--plant NAME``: run the whole session with a planted fault in impl.

The faults live in ``tests/impl_faults.py`` (``IMPL_FAULTS``); each monkeypatches one piece of
impl. ``tests/test_impl_planted_faults.py`` uses this option to show that the conformance suite,
run with ``--backend impl``, catches each of them. The fault is active from configuration to the
end of the session in every process (xdist workers configure themselves with the same options),
and the run's header names it so that nobody mistakes a planted run for a real one.

Loaded by the root ``conftest.py`` next to ``oracle.plugin``.
"""

from __future__ import annotations

import importlib
from contextlib import ExitStack

import pytest

FAULTS_MODULE = "tests.impl_faults"
_active = pytest.StashKey[ExitStack]()


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
    config.stash[_active] = stack


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(_active, None)
    if stack is not None:
        stack.close()
        del config.stash[_active]


def pytest_report_header(config: pytest.Config) -> str | None:
    name = config.getoption("plant", None)
    return f"oracle: PLANTED impl fault {name} is active" if name else None
