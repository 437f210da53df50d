"""The reference is the pinned real PyTorch (oracle/reference.py), or the run refuses to start.

A package named torch that is not the installed PyTorch shadowing it, a ``torch._C`` that is not
its compiled extension, a ``__version__`` other than the distribution's, or an installed version
other than the accepted one (the pin, or ``--reference-version``) are each refused, naming what
was found where. The run's headers read versions from the modules imported.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

import oracle.reference
from oracle.reference import VERSION_VARIABLE, ReferenceError, accepted_version, pinned_version, verify
from tests.helpers import ROOT

pytest_plugins = "pytester"

INSTALLED = importlib.metadata.version("torch")
RELEASE = INSTALLED.split("+")[0]  # 2.13.0
INIT = str(Path(torch.__file__).resolve())
OTHER = "2.12.1"  # a release that is neither installed nor pinned


@pytest.fixture(autouse=True)
def no_accepted_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """No --reference-version from the environment; restored afterwards (the plugin sets it)."""
    monkeypatch.setenv(VERSION_VARIABLE, "")


def fake_torch(tmp_path: Path, **attributes: object) -> types.ModuleType:
    """A module standing for torch: the real one's file, compiled _C and version unless given."""
    module = types.ModuleType("torch")
    module.__file__ = attributes.pop("file", torch.__file__)
    module._C = attributes.pop("_C", torch._C)
    module.__version__ = attributes.pop("version", torch.__version__)
    return module


def test_the_installed_torch_is_accepted() -> None:
    assert pinned_version() == accepted_version() == RELEASE
    found = verify(torch)
    assert found == {"name": "torch", "version": torch.__version__, "file": INIT, "pinned": RELEASE,
                     "accepted": RELEASE}


def test_a_module_from_another_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    with pytest.raises(ReferenceError, match="a package or directory named torch shadows it") as refused:
        verify(fake_torch(tmp_path, file=str(tmp_path / "torch" / "__init__.py")))
    assert f"'import torch' gave {tmp_path / 'torch' / '__init__.py'}, not the installed PyTorch" in str(
        refused.value)


def test_a_c_module_that_is_not_the_compiled_extension_is_refused(tmp_path: Path) -> None:
    fake_c = types.ModuleType("torch._C")
    fake_c.__file__ = str(tmp_path / "_C.py")
    with pytest.raises(ReferenceError, match=r"torch\._C at .*_C\.py is not the compiled extension"):
        verify(fake_torch(tmp_path, _C=fake_c))
    elsewhere = types.ModuleType("torch._C")  # a compiled extension, but another package's
    elsewhere.__file__ = importlib.import_module("numpy._core._multiarray_umath").__file__
    with pytest.raises(ReferenceError, match="is not the compiled extension of PyTorch at"):
        verify(fake_torch(tmp_path, _C=elsewhere))


def test_a_file_the_wheel_did_not_install_is_refused(tmp_path: Path) -> None:
    """The RECORD hash check: a torch/__init__.py with other contents (another package wrote it)."""
    dist = importlib.metadata.distribution("torch")
    written_over = tmp_path / "__init__.py"
    written_over.write_bytes(Path(torch.__file__).read_bytes() + b"\n# written over\n")
    with pytest.raises(ReferenceError, match="its hash differs from the wheel's record"):
        oracle.reference._check_recorded(dist, "torch/__init__.py", written_over)
    oracle.reference._check_recorded(dist, "torch/__init__.py", Path(torch.__file__).resolve())


def test_a_version_other_than_the_distributions_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReferenceError, match=rf"torch.__version__ is '{OTHER}', but the installed PyTorch"):
        verify(fake_torch(tmp_path, version=OTHER))


def test_another_pin_refuses_the_installed_version_unless_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A torch other than the pin is refused, with the option that accepts it; given that option
    (its environment variable), the same torch is accepted and the report says both versions."""
    monkeypatch.setattr(oracle.reference, "pinned_version", lambda: OTHER)
    assert accepted_version() == OTHER
    with pytest.raises(ReferenceError, match=rf"accepts {OTHER} \(pinned: {OTHER}\); .* --reference-version "
                                             rf"{RELEASE}$"):
        verify(torch)
    monkeypatch.setenv(VERSION_VARIABLE, RELEASE)
    assert accepted_version() == RELEASE
    found = verify(torch)
    assert (found["pinned"], found["accepted"], found["version"]) == (OTHER, RELEASE, torch.__version__)


def test_an_accepted_version_other_than_the_installed_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VERSION_VARIABLE, OTHER)
    assert accepted_version() == OTHER and pinned_version() == RELEASE
    refused = rf"the reference is torch {re.escape(INSTALLED)} .* accepts {OTHER}"
    with pytest.raises(ReferenceError, match=refused):
        verify(torch)


def test_a_shadowing_torch_package_stops_pytest_before_anything_runs(tmp_path: Path) -> None:
    """A directory torch/ first on the path (its _C a plain module, its version the installed
    one's): pytest exits with a usage error naming the file found and the installed PyTorch."""
    shadow = tmp_path / "shadow" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(f"__version__ = {INSTALLED!r}\nfrom . import _C\n")
    (shadow / "_C.py").write_text("")
    ran = tmp_path / "test_anything"  # the test writes it, if it runs
    (tmp_path / "test_anything.py").write_text(
        f"def test_anything():\n    open({str(ran)!r}, 'w').close()\n")
    env = {"PYTHONPATH": f"{shadow.parent}:{ROOT}", "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "pytest", "-p", "oracle.plugin", "-p", "no:cacheprovider", ran.name + ".py"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert (f"ERROR: the reference is not the pinned PyTorch: 'import torch' gave {shadow / '__init__.py'}, "
            f"not the installed PyTorch {INSTALLED} at {Path(torch.__file__).resolve()}") in done.stderr
    assert not ran.exists()


RECORDS_ITS_REFERENCE = """
import pytest

@pytest.mark.rule("LEAF-001")
def test_t(reference):
    pass
"""


@pytest.fixture
def fresh_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let an in-process pytester session verify the reference again (it is verified once per
    process: this one's verification is kept aside)."""
    monkeypatch.setattr(oracle.reference, "_verified", {})


@pytest.mark.usefixtures("fresh_reference")
def test_the_plugin_refuses_an_accepted_version_that_is_not_installed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one=RECORDS_ITS_REFERENCE)
    result = pytester.runpytest("-p", "oracle.plugin", "--reference-version", OTHER)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*the reference is not the pinned PyTorch: the reference is torch "
                                 f"{INSTALLED}*accepts {OTHER}*"])
    result.stdout.no_fnmatch_line("*test_one.py*")  # nothing was collected, nothing ran


@pytest.mark.usefixtures("fresh_reference")
def test_the_plugin_accepts_a_non_pinned_version_when_told(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With another pin, the installed torch is refused unless --reference-version names it; then
    results.json says which version was pinned, which accepted, and what the module imported is."""
    monkeypatch.setattr(oracle.reference, "pinned_version", lambda: OTHER)
    pytester.makepyfile(test_one=RECORDS_ITS_REFERENCE)
    refused = pytester.runpytest("-p", "oracle.plugin", "--backend", "torch")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines([f"*--reference-version {RELEASE}"])
    accepted = pytester.runpytest("-p", "oracle.plugin", "--backend", "torch", "--reference-version", RELEASE)
    accepted.assert_outcomes(passed=1)
    reference = json.loads((pytester.path / "reports" / "results.json").read_text())["reference"]
    assert reference == {"name": "torch", "version": torch.__version__, "file": INIT, "pinned": OTHER,
                         "accepted": RELEASE}
