"""pytest options ``--plant NAME`` and ``--faults-module MODULE``: run the whole session with a
planted fault in impl.

The faults are test code, in a catalogue package the session names: ``--faults-module MODULE``, or
else the ``faults_module`` ini option (this repository's ``pyproject.toml`` sets ``impl_faults``).
The catalogue's ``IMPL_FAULTS`` maps each fault's name to a context manager that monkeypatches one
piece of impl while it is active; the catalogue is imported only when ``--plant`` is given, and a
catalogue that cannot be imported is a usage error that says which and why.
``tests/oracle/test_impl_planted_faults.py`` uses this option to show that the conformance suite,
run with ``--backend impl``, catches each fault. The fault is active from configuration to the end
of the session in every process: xdist workers configure themselves with the same options, and
the subprocesses that run the seed scripts on impl (``oracle.script``) and the isolated backend's
worker (``oracle.worker``) plant the fault named by the environment variables ``ORACLE_PLANT`` and
``ORACLE_FAULTS_MODULE``, which the session sets (``oracle.faults.plant_impl_fault_from_environment``).
The run's header names the fault so that nobody mistakes a planted run for a real one.

Loaded by the root ``conftest.py`` next to ``oracle.plugin``.
"""

from __future__ import annotations

import os
from contextlib import ExitStack

import pytest

from oracle.faults import (
    CATALOGUE_NAME,
    FAULTS_MODULE_VARIABLE,
    PLANT_VARIABLE,
    FaultCatalogueError,
    impl_faults,
)

FAULTS_MODULE_INI = "faults_module"
_active = pytest.StashKey[ExitStack]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("oracle")
    group.addoption(
        "--plant",
        default=None,
        metavar="NAME",
        help=f"plant the impl fault NAME (from the --faults-module catalogue's {CATALOGUE_NAME}) for "
        "the whole session",
    )
    group.addoption(
        "--faults-module",
        default=None,
        metavar="MODULE",
        help=f"the package of planted impl faults --plant picks from (default: the {FAULTS_MODULE_INI} "
        "ini option)",
    )
    parser.addini(FAULTS_MODULE_INI, "the package of planted impl faults --plant picks from (oracle.planted)")


def faults_module(config: pytest.Config) -> str:
    """The planted-fault catalogue the session names: ``--faults-module``, else the ini option."""
    module = config.getoption("faults_module", None) or config.getini(FAULTS_MODULE_INI)
    if not module:
        raise pytest.UsageError(f"--plant: no planted-fault catalogue named: give --faults-module MODULE "
                                f"or set {FAULTS_MODULE_INI} in the pytest configuration")
    return module


def pytest_configure(config: pytest.Config) -> None:
    name = config.getoption("plant", None)
    if not name:
        return
    module = faults_module(config)
    try:
        faults = impl_faults(module)
    except FaultCatalogueError as exc:
        raise pytest.UsageError(f"--plant: {exc}") from None
    if name not in faults:
        raise pytest.UsageError(f"--plant: unknown impl fault {name!r} in {module}; "
                                f"known: {', '.join(sorted(faults))}")
    stack = ExitStack()
    stack.enter_context(faults[name]())
    for variable, value in ((PLANT_VARIABLE, name), (FAULTS_MODULE_VARIABLE, module)):
        stack.callback(_restore_variable, variable, os.environ.get(variable))
        os.environ[variable] = value
    config.stash[_active] = stack


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(_active, None)
    if stack is not None:
        stack.close()
        del config.stash[_active]


def _restore_variable(variable: str, previous: str | None) -> None:
    if previous is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = previous


def pytest_report_header(config: pytest.Config) -> str | None:
    name = config.getoption("plant", None)
    return f"oracle: PLANTED impl fault {name} ({faults_module(config)}) is active" if name else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A planted run that stops at each rule's first failure (``--until-caught``) runs first the
    tests named for the fault's op: those with a parameter that is a word of the fault's name
    (``test_index_ops[index_add]`` for ``index_add_source_grad_ignores_alpha``), the longest
    first. Every selected test still runs unless its rule was caught; it is caught sooner."""
    name = config.getoption("plant", None)
    if not name or not config.getoption("until_caught", False):
        return
    words = f"_{name}_"

    def named(item: pytest.Item) -> int:
        callspec = getattr(item, "callspec", None)
        params = callspec.id.split("-") if callspec is not None else []
        return max((len(p) for p in params if f"_{p}_" in words), default=0)

    items.sort(key=lambda item: -named(item))
