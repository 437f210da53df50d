"""The reference is the pinned real PyTorch: verified before anything is compared with it.

A package named ``torch`` that is not PyTorch (jtorch's wheel installs one over the real one), a
checkout shadowing the installed wheel, or another version than the pin would make every
comparison meaningless, silently. ``verify`` checks the module imported as ``torch``: it is the
installed PyTorch distribution's ``torch/__init__.py`` (by path and by the hash its wheel
recorded), its ``torch._C`` is that distribution's compiled extension, and its own
``__version__`` is the distribution's and the accepted one: the pin of pyproject.toml's
``reference`` extra, unless a run accepts another version explicitly (``--reference-version``,
carried to subprocesses by the environment variable ``ORACLE_REFERENCE_VERSION``; the report
states it).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.machinery
import importlib.metadata
import os
import re
import sys
from pathlib import Path
from types import ModuleType

from oracle.backends import REFERENCE, BackendError, InProcess, load_backend

PROJECT = "torch-conformance"
VERSION_VARIABLE = "ORACLE_REFERENCE_VERSION"
_PIN = re.compile(r"""^torch\s*==\s*([\w.+]+)\s*;\s*extra\s*==\s*["']reference["']""")


class ReferenceError(BackendError):
    """The module imported as torch is not the reference this run accepts."""


def pinned_version() -> str | None:
    """The torch version pinned by the ``reference`` extra: from the installed project's metadata,
    else from the pyproject.toml of this checkout."""
    try:
        requirements = importlib.metadata.requires(PROJECT) or []
    except importlib.metadata.PackageNotFoundError:
        requirements = []
    for requirement in requirements:
        found = _PIN.match(requirement)
        if found:
            return found.group(1)
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file() and sys.version_info >= (3, 11):
        import tomllib

        extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
        for requirement in extras.get("reference", []):
            found = re.match(r"^torch\s*==\s*([\w.+]+)$", requirement)
            if found:
                return found.group(1)
    return None


def accepted_version() -> str | None:
    """The torch version this run accepts as its reference: ``ORACLE_REFERENCE_VERSION`` when set
    (``--reference-version``), else the pin."""
    return os.environ.get(VERSION_VARIABLE) or pinned_version()


@functools.cache
def _pin() -> str | None:
    return pinned_version()


def accepts_other_version() -> bool:
    """Whether this run accepted another torch than the pin as its reference (``--reference-version``
    naming another release): its messages and warnings may then differ from the pinned torch's,
    which impl follows (see ``oracle.differential.version_only``)."""
    accepted = os.environ.get(VERSION_VARIABLE)
    return bool(accepted) and accepted != _pin()


def verify(module: ModuleType) -> dict:
    """What the reference is (name, version, file, pin, accepted version) if ``module`` is the
    installed PyTorch at the accepted version; else ``ReferenceError`` saying what was found where."""
    file = getattr(module, "__file__", None)
    found = Path(file).resolve() if file else None
    try:
        dist = importlib.metadata.distribution("torch")
    except importlib.metadata.PackageNotFoundError:
        raise ReferenceError(
            f"no PyTorch distribution is installed, yet 'import torch' gave {_where(found, module)}: the "
            "reference must be the real PyTorch (pip install -e '.[reference]')"
        ) from None
    init = Path(str(dist.locate_file("torch/__init__.py"))).resolve()
    if found != init:
        raise ReferenceError(
            f"'import torch' gave {_where(found, module)}, not the installed PyTorch {dist.version} at "
            f"{init}: a package or directory named torch shadows it"
        )
    _check_recorded(dist, "torch/__init__.py", init)
    extension = getattr(getattr(module, "_C", None), "__file__", None)
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    if not extension or not extension.endswith(suffixes) or Path(extension).resolve().parent != init.parent:
        where = init.parent
        raise ReferenceError(f"torch._C at {extension} is not the compiled extension of PyTorch at {where}")
    _check_recorded(dist, f"torch/{Path(extension).name}", Path(extension).resolve())
    version = str(getattr(module, "__version__", ""))
    if version != dist.version:
        raise ReferenceError(f"torch.__version__ is {version!r}, but the installed PyTorch is {dist.version}")
    pinned, accepted = pinned_version(), accepted_version()
    release = version.split("+")[0]
    if accepted and release != accepted:
        raise ReferenceError(
            f"the reference is torch {version} (at {init.parent}) but this run accepts {accepted} "
            f"(pinned: {pinned}); to compare with this torch, say so: --reference-version {release}"
        )
    return {"name": "torch", "version": version, "file": str(init), "pinned": pinned, "accepted": accepted}


def _where(found: Path | None, module: ModuleType) -> str:
    """Where the module imported as torch is: its file, else the module itself (no file)."""
    return str(found) if found else repr(module)


def _check_recorded(dist: importlib.metadata.Distribution, name: str, path: Path) -> None:
    """``path`` has the hash the distribution's RECORD gives ``name`` (when it gives one)."""
    entry = next((f for f in dist.files or [] if str(f) == name), None)
    if entry is None or entry.hash is None:
        return
    digest = hashlib.new(entry.hash.mode, path.read_bytes()).digest()
    if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != entry.hash.value:
        raise ReferenceError(
            f"{path} is not the file PyTorch {dist.version} installed (its hash differs from the "
            "wheel's record): another package wrote over it"
        )


_verified: dict[int, dict] = {}  # id(torch module) -> what verify found


def reference(device: str = "cpu") -> InProcess:
    """The reference backend on ``device``, its module verified once per process (``verify``)."""
    backend = load_backend(REFERENCE, device)
    if id(backend.module) not in _verified:
        _verified[id(backend.module)] = verify(backend.module)
    return backend


def reference_info() -> dict:
    """What ``verify`` found of the reference this process loaded (``reference()`` first)."""
    return next(iter(_verified.values()), {})
