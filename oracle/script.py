"""Diff an unmodified torch script: run it on real torch and on a backend, compare what it shows.

``diff_script(path, backend_spec)`` runs the script twice, each run in its own Python subprocess:
once on the reference (real torch, verified by ``oracle.reference`` in its subprocess: a package
shadowing torch is a ``ReferenceError``) and once on the backend under test. For a module backend
that does not import torch itself (``impl``, ``mypkg``), an import alias installed in the backend's
subprocess only makes ``import torch``, ``import torch.nn``, ``from torch import nn``,
``torch.autograd`` ... resolve to the backend module and its submodules (the very same module
objects under both names). A backend built on torch (torch is imported once it is loaded) gets no
alias: torch's own modules must stay torch's, so the script imports real torch as the backend
does. For a ``fault:NAME`` backend the script runs on real torch with the planted fault active.
A backend that cannot be loaded is a ``BackendError`` (the message its subprocess gave).

Each run records what a user of the script observes: stdout, stderr, the warnings shown (with the
script line they point at), an uncaught exception (type, message, script line) and the exit
status. The two records are compared channel by channel, line by line, token by token:

* numbers compare as printed values: a difference of one unit in the last printed digit (a
  rounding difference) is tolerated when both are written with the same number of decimals, at
  least ``ROUNDED_DECIMALS`` of them (torch's and numpy's rounded formats); anything more is a
  divergence, so a relative error of 1e-3 in a printed tensor is caught. A float32 value printed
  in full (``loss.item()`` of a float32 tensor: a double that is exactly a float32) tolerates one
  float32 unit in the last place, the rounding difference the trace comparison's float32
  tolerance accepts (a BLAS summing in another order). Integers compare exactly.
* everything else compares exactly, after normalising only what is machine-specific: addresses
  (``0x7f...``), file paths, torch's "(Triggered internally at ...)" tails, and the backend
  package's name where it prints its own module path (``impl.autograd...`` reads ``torch.autograd...``).
  Whitespace inside a line only separates tokens (its width follows the printed numbers' widths);
  indentation compares exactly.

Both runs start with torch's, numpy's and Python's global generators seeded alike (``SCRIPT_SEED``):
torch seeds a fresh process from the OS, so the draws of an unseeded script would differ run to run.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import json
import os
import random
import re
import runpy
import struct
import subprocess
import sys
import tempfile
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy

from oracle.backends import REFERENCE, BackendError
from oracle.faults import plant_impl_fault_from_environment
from oracle.runner import worker_path
from oracle.stats import count_program

ROUNDED_DECIMALS = 4
SCRIPT_SEED = 0  # torch's, numpy's and Python's global generators, at the start of both runs
DEFAULT_TIMEOUT_S = 300.0
CHANNELS = ("stdout", "warnings", "stderr", "exception", "exit")


# --------------------------------------------------------------------------------------------
# what one run shows


@dataclass
class ScriptRun:
    """What one run of a script showed, normalised (see ``normalise``)."""

    backend: str
    stdout: str
    stderr: str
    warnings: list[str] = field(default_factory=list)  # "<script>:12: UserWarning: message"
    exception: list[str] = field(default_factory=list)  # ["RuntimeError: message", "at <script>:24"]
    exit: str = "0"

    def channel(self, name: str) -> list[str]:
        """The lines of one channel (see ``CHANNELS``)."""
        if name in ("stdout", "stderr"):
            return getattr(self, name).splitlines()
        if name == "exit":
            return [self.exit]
        return list(getattr(self, name))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ScriptDiff:
    """The comparison of a script's reference run with its run on a backend."""

    path: str
    backend: str
    device: str
    reference_run: ScriptRun
    test_run: ScriptRun
    channel: str | None = None  # where the first difference is; None when identical
    line: int | None = None  # 1-based line number within that channel
    reference: str | None = None  # the reference's line (None: the reference has no such line)
    test: str | None = None  # the backend's line (None: the backend has no such line)

    @property
    def identical(self) -> bool:
        return self.channel is None

    def describe(self) -> str:
        """A human-readable verdict: 'identical' or the first difference with both sides."""
        if self.identical:
            return f"{self.path}: identical on {self.backend} and {REFERENCE}"
        lines = [
            f"{self.path}: divergent on {self.backend} ({self.channel} line {self.line})",
            f"  {REFERENCE + ':':<{_width(self.backend)}} {_show(self.reference)}",
            f"  {self.backend + ':':<{_width(self.backend)}} {_show(self.test)}",
        ]
        if self.channel != "exception" and self.test_run.exception:
            lines.append(f"  ({self.backend} raised {' '.join(self.test_run.exception)})")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"identical": self.identical, **asdict(self)}


def _width(backend: str) -> int:
    return max(len(REFERENCE), len(backend)) + 1


def _show(line: str | None) -> str:
    return "<no such line>" if line is None else repr(line)


# --------------------------------------------------------------------------------------------
# normalisation of machine-specific parts

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TRIGGERED = re.compile(r"\s*\(Triggered internally at .*?\.\)")
_ABS_PATH = re.compile(r"(?<![\w.~])/(?:[\w.+\-]+/)+[\w.+\-]+")


def normalise(
    text: str, script: str | Path, backend_module: str | None = None, device: str = "cpu"
) -> str:
    """Replace machine-specific parts of ``text``: the script's path, other absolute paths,
    addresses, torch's "Triggered internally" tails; ``<backend_module>.`` by ``torch.``; and,
    for a run on another device than cpu, tensors' ``device='...'`` annotations (the reference
    may have had to run on cpu)."""
    script = str(Path(script).resolve())
    if device != "cpu":
        text = re.sub(rf", device='{re.escape(device)}(?::\d+)?'", "", text)
    text = _TRIGGERED.sub("", text)
    text = text.replace(script, "<script>")
    text = _ABS_PATH.sub("<path>", text)
    text = _ADDRESS.sub("0x?", text)
    if backend_module and backend_module != REFERENCE:
        text = re.sub(rf"(?<![\w.]){re.escape(backend_module)}\.(?=[A-Za-z_])", "torch.", text)
    return text


# --------------------------------------------------------------------------------------------
# token comparison

_NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
# (a number may end in j: the parts of a printed complex number, ``1.5000-0.2500j``, are numbers)
_TOKEN = re.compile(
    rf"(?P<num>(?<![\w.]){_NUMBER}(?=j(?![\w.])|(?![\w.])))|(?P<word>\w+)|(?P<space>\s+)|(?P<other>.)"
)


def tokens(line: str) -> list[tuple[str, str]]:
    """(kind, text) tokens of a line: 'num', 'word' or 'other'; whitespace only separates."""
    return [(m.lastgroup, m.group()) for m in _TOKEN.finditer(line) if m.lastgroup != "space"]


def _decimals_and_exponent(number: str) -> tuple[int, int]:
    mantissa, _, exponent = number.lower().partition("e")
    _, _, fraction = mantissa.partition(".")
    return len(fraction), int(exponent or 0)


def _is_integer(number: str) -> bool:
    return not any(c in number for c in ".eE")


def numbers_match(a: str, b: str) -> bool:
    """Whether two printed numbers agree: integers exactly; decimals equal in value, or written
    with the same (rounded, >= ROUNDED_DECIMALS) precision and one last-digit unit apart."""
    if _is_integer(a) or _is_integer(b):
        return _is_integer(a) and _is_integer(b) and int(a) == int(b)
    x, y = Decimal(a), Decimal(b)
    if x == y:
        return True
    if _adjacent_float32(float(a), float(b)):
        return True
    (da, ea), (db, eb) = _decimals_and_exponent(a), _decimals_and_exponent(b)
    if da != db or ea != eb or da < ROUNDED_DECIMALS:
        return False
    unit = Decimal(1).scaleb(ea - da)
    return abs(x - y) <= unit


def _float32_bits(x: float) -> int | None:
    """The float32 bit pattern of ``x`` as an ordered integer, if ``x`` is exactly a float32."""
    try:
        packed = struct.pack("<f", x)
    except OverflowError:
        return None
    if struct.unpack("<f", packed)[0] != x:
        return None
    bits = struct.unpack("<i", packed)[0]
    return bits if bits >= 0 else -(bits & 0x7FFFFFFF)


def _adjacent_float32(x: float, y: float) -> bool:
    """Whether ``x`` and ``y`` are both float32 values one float32 unit in the last place apart."""
    bx, by = _float32_bits(x), _float32_bits(y)
    return bx is not None and by is not None and abs(bx - by) == 1


def lines_match(a: str, b: str) -> bool:
    """Whether two output lines agree: same indentation, same tokens, numbers as printed values."""
    if a == b:
        return True
    if a[: len(a) - len(a.lstrip())] != b[: len(b) - len(b.lstrip())]:
        return False
    ta, tb = tokens(a), tokens(b)
    if len(ta) != len(tb):
        return False
    for (ka, sa), (kb, sb) in zip(ta, tb, strict=True):
        if ka != kb:
            return False
        if not (numbers_match(sa, sb) if ka == "num" else sa == sb):
            return False
    return True


def first_difference(ref: list[str], test: list[str]) -> tuple[int, str | None, str | None] | None:
    """(1-based line, reference line, test line) of the first lines that disagree, or None."""
    for i in range(max(len(ref), len(test))):
        a = ref[i] if i < len(ref) else None
        b = test[i] if i < len(test) else None
        if a is None or b is None or not lines_match(a, b):
            return i + 1, a, b
    return None


def compare_runs(ref: ScriptRun, test: ScriptRun) -> tuple[str, int, str | None, str | None] | None:
    """(channel, line, reference line, test line) of the first difference, or None."""
    for channel in CHANNELS:
        found = first_difference(ref.channel(channel), test.channel(channel))
        if found is not None:
            return (channel, *found)
    return None


class ScriptDivergenceError(AssertionError):
    """A backend showed something different from torch when running a script."""

    def __init__(self, diff: ScriptDiff) -> None:
        self.diff = diff
        super().__init__(diff.describe())

    def to_dict(self) -> dict:
        """JSON-able account for reports: the first differing line of each side, the script."""
        d = self.diff
        return {
            "divergence": {
                "reason": f"{d.channel} line {d.line} differs",
                "ref_event": d.reference,
                "test_event": d.test,
            },
            "description": d.describe(),
            "repro": Path(d.path).read_text(encoding="utf-8"),
            "reference_run": d.reference_run.to_dict(),
            "test_run": d.test_run.to_dict(),
        }


def check_script(
    path: str | Path, backend_spec: str, device: str = "cpu", python: str | None = None
) -> ScriptDiff:
    """Diff a script (counted as one checked program); raise ``ScriptDivergenceError`` unless
    the backend showed what torch showed (``python``: see ``diff_script``)."""
    diff = diff_script(path, backend_spec, device, python=python)
    count_program()
    if not diff.identical:
        raise ScriptDivergenceError(diff)
    return diff


# --------------------------------------------------------------------------------------------
# running a script in a subprocess

_reference_cache: dict[tuple, ScriptRun] = {}


def run_script(
    path: str | Path, backend_spec: str, device: str = "cpu", timeout: float = DEFAULT_TIMEOUT_S
) -> ScriptRun:
    """Run a torch script on a backend in a fresh Python subprocess; return what it showed."""
    return _finish(_start(Path(path).resolve(), backend_spec, device), timeout)


def diff_script(
    path: str | Path, backend_spec: str, device: str = "cpu", timeout: float = DEFAULT_TIMEOUT_S,
    python: str | None = None,
) -> ScriptDiff:
    """Run a torch script on torch and on ``backend_spec`` (both at once) and compare the runs;
    ``python``: the interpreter of the backend's own environment (``--backend-python``).

    The reference run is cached per (script content, device) within this process, so diffing
    one script against several backends runs torch once.
    """
    script = Path(path).resolve()
    if not script.is_file():
        raise FileNotFoundError(f"no such script: {path}")
    key = (str(script), script.read_bytes(), device)
    if key in _reference_cache:
        ref_run = _reference_cache[key]
        test_run = _finish(_start(script, backend_spec, device, python), timeout)
    else:
        jobs = [_start(script, REFERENCE, device), _start(script, backend_spec, device, python)]
        ref_run, test_run = _finish_all(jobs, timeout)
        _reference_cache[key] = ref_run
    diff = ScriptDiff(str(path), backend_spec, device, ref_run, test_run)
    found = compare_runs(ref_run, test_run)
    if found is not None:
        diff.channel, diff.line, diff.reference, diff.test = found
    return diff


@dataclass
class _Job:
    script: Path
    backend: str
    device: str
    process: subprocess.Popen
    result_file: Path


def _start(script: Path, backend_spec: str, device: str, python: str | None = None) -> _Job:
    fd, result = tempfile.mkstemp(prefix="oracle-script-", suffix=".json")
    os.close(fd)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONHASHSEED": "0"}
    if python is not None:  # another environment: only this oracle on its path, as a worker's
        env["PYTHONPATH"] = worker_path(python)
    code = "from oracle.script import _child_main; _child_main()"
    argv = [python or sys.executable, "-c", code, backend_spec, device, str(script), result]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return _Job(script, backend_spec, device, process, Path(result))


def _finish_all(jobs: list[_Job], timeout: float) -> list[ScriptRun]:
    """The runs of all ``jobs``; the first ``BackendError`` once all have finished."""
    runs: list[ScriptRun | BackendError] = []
    for job in jobs:
        try:
            runs.append(_finish(job, timeout))
        except BackendError as exc:
            runs.append(exc)
    for run in runs:
        if isinstance(run, BackendError):
            raise run
    return runs


def _finish(job: _Job, timeout: float) -> ScriptRun:
    try:
        out, err = job.process.communicate(timeout=timeout)
        status = job.process.returncode
    except subprocess.TimeoutExpired:
        job.process.kill()
        out, err = job.process.communicate()
        status = None
    try:
        record = json.loads(job.result_file.read_text() or "null")
    finally:
        job.result_file.unlink(missing_ok=True)
    module = None if job.backend.startswith("fault:") else job.backend

    def norm(text: str) -> str:
        return normalise(text, job.script, module, job.device)

    run = ScriptRun(job.backend, norm(out.decode("utf-8", "replace")), norm(err.decode("utf-8", "replace")))
    if record is not None and "error" in record:  # the backend could not be loaded
        raise BackendError(record["error"])
    if record is None:  # the child died before writing its record
        why = f"timed out after {timeout:g}s" if status is None else f"exited with status {status}"
        run.exception, run.exit = [f"<the script's process {why} without finishing>"], "died"
        return run
    run.warnings = [norm(w) for w in record["warnings"]]
    run.exception = [norm(line) for line in record["exception"]]
    run.exit = record["exit"]
    return run


# --------------------------------------------------------------------------------------------
# the child process


def _child_main() -> None:
    """Entry point of the subprocess: ``-c ... BACKEND DEVICE SCRIPT RESULT_FILE``."""
    backend_spec, device, script, result_file = sys.argv[1:5]
    record = _run_in_this_process(backend_spec, device, script)
    Path(result_file).write_text(json.dumps(record))


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``torch`` and ``torch.<sub>`` to ``<backend>`` and ``<backend>.<sub>``.

    The module objects are shared: ``sys.modules["torch.nn"] is sys.modules["impl.nn"]``. A
    submodule the backend lacks fails to import as ``torch.<sub>`` would: ModuleNotFoundError.
    """

    def __init__(self, backend_module: str) -> None:
        self.backend_module = backend_module

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != REFERENCE and not fullname.startswith(REFERENCE + "."):
            return None
        real = self.backend_module + fullname[len(REFERENCE) :]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            if exc.name is not None and real.startswith(exc.name):  # the backend lacks it
                raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname) from None
            raise
        return importlib.machinery.ModuleSpec(
            fullname, self, is_package=hasattr(module, "__path__"), origin=getattr(module, "__file__", None)
        )

    def create_module(self, spec):
        return sys.modules[self.backend_module + spec.name[len(REFERENCE) :]]

    def exec_module(self, module) -> None:
        """Nothing to run: the backend module is already imported."""


def install_alias(backend_module: str) -> TorchAlias:
    """Make ``import torch...`` resolve to ``backend_module...`` in this process."""
    for name in [n for n in sys.modules if n == REFERENCE or n.startswith(REFERENCE + ".")]:
        del sys.modules[name]
    alias = TorchAlias(backend_module)
    sys.meta_path.insert(0, alias)
    return alias


def _load(backend_spec: str, device: str):
    """The backend of this run: the reference verified (``oracle.reference.reference``), else
    ``load_backend``'s; the alias only for a backend that did not import torch."""
    from oracle.backends import load_backend
    from oracle.reference import ReferenceError, reference

    try:
        backend = reference(device) if backend_spec == REFERENCE else load_backend(backend_spec, device)
    except ReferenceError as exc:
        raise BackendError(f"the reference is not the pinned PyTorch: {exc}") from None
    if REFERENCE not in sys.modules:  # a backend built on torch keeps torch's modules torch's
        install_alias(backend.module.__name__)
    return backend


def _run_in_this_process(backend_spec: str, device: str, script: str) -> dict:
    """Run ``script`` as ``__main__`` on the backend; return its warnings, exception and exit
    (or, when the backend cannot be loaded, ``{"error": why}``)."""
    shown: list[str] = []

    def record_warning(message, category, filename, lineno, file=None, line=None) -> None:
        where = f"<script>:{lineno}" if os.path.abspath(filename) == script else "<library>"
        shown.append(f"{where}: {category.__name__}: {message}")

    try:
        backend = _load(backend_spec, device)
    except BackendError as exc:
        return {"error": str(exc)}
    plant_impl_fault_from_environment(backend.module)  # a fault planted in the session, if any
    if backend.is_reference and device != "cpu" and not backend.module.cuda.is_available():
        device = "cpu"  # the reference build has no GPU: torch on cpu is the reference
    if device != "cpu":
        backend.module.set_default_device(device)
    _seed_everything(backend.module)
    warnings.showwarning = record_warning
    sys.argv = [script]
    sys.path[0] = os.path.dirname(script)
    exception: list[str] = []
    exit_status = "0"
    try:
        with backend.active():
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        exit_status = str(exc.code if exc.code is not None else 0)
    except BaseException as exc:  # noqa: BLE001 - everything the script raises is observed
        exception = [f"{type(exc).__name__}: {exc}", f"at {_script_line(exc, script)}"]
        exit_status = "1"
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return {"warnings": shown, "exception": exception, "exit": exit_status}


def _seed_everything(module) -> None:
    """Start both runs from one seed: a fresh torch process seeds itself from the OS (as numpy's
    and Python's global generators do), so an unseeded script's random draws could never agree;
    a script that seeds itself is unaffected. A backend without ``manual_seed`` keeps its own."""
    random.seed(SCRIPT_SEED)
    numpy.random.seed(SCRIPT_SEED)
    manual_seed = getattr(module, "manual_seed", None)
    if callable(manual_seed):
        manual_seed(SCRIPT_SEED)


def _script_line(exc: BaseException, script: str) -> str:
    """The innermost line of the script on the exception's traceback."""
    where = "<library>"
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if os.path.abspath(frame.f_code.co_filename) == script:
            where = f"<script>:{lineno}"
    return where
