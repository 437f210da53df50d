"""Run PyTorch's own test files with ``torch`` resolved to impl, and count what passes.

The test files are not part of this repository; take them from pytorch/pytorch at the tag of the
pinned torch (2.13), for example::

    curl -sLO https://raw.githubusercontent.com/pytorch/pytorch/v2.13.0/test/test_autograd.py
    curl -sLO https://raw.githubusercontent.com/pytorch/pytorch/v2.13.0/test/nn/test_module_hooks.py
    curl -sLO https://raw.githubusercontent.com/pytorch/pytorch/v2.13.0/test/autograd/test_inference_mode.py

and run ``python tools/run_torch_tests.py test_autograd.py test_module_hooks.py ... [-k hook]``
(torch.testing._internal needs ``expecttest``: ``pip install expecttest``).

Every selected test runs twice, each time in a subprocess of its own: on real torch, then with
``torch`` resolved to impl. Only the tests that pass on real torch are counted (a test that needs
CUDA, an expect file or a compiler is not impl's to pass). The harness (``torch.testing._internal``,
``torch.testing``) stays real torch: it is imported before impl takes the name, the test module's own
``import torch...`` statements (its globals' ``__import__``) are the only ones that see impl, and
``assertEqual`` converts impl tensors to real ones before comparing. A name that impl lacks does not
stop the module from loading: it becomes a placeholder that raises "impl lacks torch.X" when used,
so each test that needs it fails with that reason. An error of a ``tearDown`` over a name impl lacks
(test_autograd's resets ``torch.autograd._force_original_view_tracking``) is not counted against
the test.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections
import contextlib
import importlib
import json
import re
import subprocess
import sys
import types
import unittest
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ("torch.testing",)  # names under torch that stay real torch under impl


class Missing:
    """What a name impl lacks is bound to: any use raises, naming it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _raise(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"impl lacks {self._name}")

    __call__ = _raise

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self._name}.{attr}")


def impl_importer(impl: types.ModuleType) -> Any:
    """An ``__import__`` giving impl for ``torch`` and its submodules, except the harness's."""

    def importer(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:  # noqa: A002
        if level == 0 and (name == "torch" or name.startswith("torch.")) and not name.startswith(HARNESS):
            module = importlib.import_module("impl" + name[len("torch") :])
            return module if fromlist else impl
        return builtins.__import__(name, globals, locals, fromlist, level)

    return importer


def run(stmt: ast.stmt, ns: dict, filename: str) -> None:
    """Execute one statement in ``ns``."""
    tree = ast.fix_missing_locations(ast.Module(body=[stmt], type_ignores=[]))
    exec(compile(tree, filename, "exec"), ns)


def bind_missing(stmt: ast.stmt, ns: dict) -> None:
    """Bind the names an import statement that failed under impl would have bound, one by one."""
    if isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            try:
                run(ast.ImportFrom(module=stmt.module, names=[alias], level=0), ns, "<import>")
            except (ImportError, AttributeError):
                ns[alias.asname or alias.name] = Missing(f"{stmt.module}.{alias.name}")
        return
    for alias in stmt.names:  # ast.Import
        try:
            run(ast.Import(names=[alias]), ns, "<import>")
        except (ImportError, AttributeError):
            if alias.asname:
                ns[alias.asname] = Missing(alias.name)


def load(path: Path, backend: str) -> types.ModuleType:
    """The test module at ``path``, executed statement by statement (under impl, with its imports of
    torch resolved to impl and the names impl lacks bound to placeholders)."""
    module = types.ModuleType(f"torch_tests_{path.stem}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # for pickle, which looks functions up by module
    ns = module.__dict__
    if backend == "impl":
        impl = importlib.import_module("impl")
        ns["__builtins__"] = dict(vars(builtins), __import__=impl_importer(impl))
    tree = ast.parse(path.read_text(), str(path))
    for stmt in tree.body:
        try:
            run(stmt, ns, str(path))
        except (ImportError, AttributeError) as e:
            if not isinstance(stmt, ast.Import | ast.ImportFrom):
                print(f"{path.name}:{stmt.lineno}: {type(e).__name__}: {e}", file=sys.stderr)
            bind_missing(stmt, ns)
    if backend == "impl":
        for name in ("gradcheck", "gradgradcheck"):  # the harness's wrappers call real torch's
            if name in ns:
                ns[name] = with_harness_defaults(getattr(importlib.import_module("impl.autograd"), name))
        if "set_warn_always_context" in ns:  # the harness's sets real torch's flag
            ns["set_warn_always_context"] = warn_always_context(importlib.import_module("impl"))
    return module


def warn_always_context(impl: types.ModuleType) -> Any:
    """The harness's ``set_warn_always_context``, setting impl's warn-always flag."""

    @contextlib.contextmanager
    def context(new_val: bool) -> Any:
        old_val = impl.is_warn_always_enabled()
        impl.set_warn_always(new_val)
        try:
            yield
        finally:
            impl.set_warn_always(old_val)

    return context


def with_harness_defaults(check: Any) -> Any:
    """``check`` (impl's gradcheck or gradgradcheck) with the defaults the harness's wrappers of
    torch's give it (``check_batched_grad`` and ``fast_mode`` True unless passed)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for key in ("check_batched_grad", "fast_mode"):
            kwargs[key] = True if kwargs.get(key) is None else kwargs[key]
        return check(*args, **kwargs)

    return wrapper


def to_real(obj: Any, impl: types.ModuleType, torch: types.ModuleType) -> Any:
    """``obj`` with impl's tensors, sizes and dtypes replaced by real torch's."""
    if isinstance(obj, impl.Tensor):
        data = torch.from_numpy(obj.detach().numpy().copy())
        return data.to(getattr(torch, str(obj.dtype).removeprefix("torch.")))
    if isinstance(obj, impl.Size):
        return torch.Size(obj)
    if isinstance(obj, impl.dtype):
        return getattr(torch, str(obj).removeprefix("torch."))
    if isinstance(obj, list | tuple):
        return type(obj)(to_real(o, impl, torch) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, to_real(v, impl, torch)) for k, v in obj.items())
    return obj


def patch_harness(impl: types.ModuleType) -> None:
    """Make the real harness's comparisons accept impl's tensors."""
    import torch
    from torch.testing._internal.common_utils import TestCase

    for name in ("assertEqual", "assertNotEqual"):
        original = getattr(TestCase, name)

        def compare(self: Any, x: Any, y: Any = None, *args: Any, _orig: Any = original, **kw: Any) -> Any:
            return _orig(self, to_real(x, impl, torch), to_real(y, impl, torch), *args, **kw)

        setattr(TestCase, name, compare)


def ignore_missing_in_teardown(cls: type) -> None:
    """A tearDown that fails only on a name impl lacks is not the test's failure."""
    original = cls.__dict__.get("tearDown")
    if original is None:
        return

    def tear_down(self: Any) -> None:
        try:
            original(self)
        except (NotImplementedError, AttributeError) as e:
            if "impl" not in str(e) and "torch" not in str(e):
                raise

    cls.tearDown = tear_down


class Recorder(unittest.TestResult):
    """Keeps one (status, reason) per test."""

    def __init__(self) -> None:
        super().__init__()
        self.outcomes: dict[str, tuple[str, str]] = {}

    def addSuccess(self, test: Any) -> None:
        self.outcomes[test.id()] = ("passed", "")

    def addFailure(self, test: Any, err: Any) -> None:
        self.outcomes[test.id()] = ("failed", reason(err[1]))

    def addError(self, test: Any, err: Any) -> None:
        self.outcomes[test.id()] = ("errored", reason(err[1]))

    def addSkip(self, test: Any, why: str) -> None:
        self.outcomes[test.id()] = ("skipped", why)

    def addExpectedFailure(self, test: Any, err: Any) -> None:
        self.outcomes[test.id()] = ("passed", "")

    def addUnexpectedSuccess(self, test: Any) -> None:
        self.outcomes[test.id()] = ("failed", "unexpected success")


def reason(exc: BaseException) -> str:
    """An exception as a short reason to count: its type and first line, numbers and addresses blurred."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return f"{type(exc).__name__}: {text[:110]}"


def worker(backend: str, files: list[str], pattern: str | None) -> dict[str, tuple[str, str]]:
    """Run the tests of ``files`` (those whose name matches ``pattern``) on ``backend``."""
    import torch  # noqa: F401  (the real harness is imported before impl takes the name)
    import torch.testing._internal.common_nn  # noqa: F401
    import torch.testing._internal.common_utils  # noqa: F401

    if backend == "impl":
        sys.path.insert(0, str(ROOT))
        patch_harness(importlib.import_module("impl"))
    result = Recorder()
    for file in files:
        module = load(Path(file), backend)
        for cls in list(vars(module).values()):
            if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
                continue
            if cls.__module__ != module.__name__:
                continue
            if backend == "impl":
                ignore_missing_in_teardown(cls)
            for name in unittest.TestLoader().getTestCaseNames(cls):
                if pattern is None or re.search(pattern, name):
                    cls(name).run(result)
    return {k.removeprefix("torch_tests_"): v for k, v in result.outcomes.items()}


def row(name: str, c: collections.Counter) -> None:
    """One line of the table: tests counted, then passed, failed and errored on impl."""
    print(f"{name:60} {sum(c.values()):5} {c['passed']:5} {c['failed']:5} {c['errored'] + c['skipped']:5}")


def summarise(ref: dict, test: dict, top: int, verbose: bool) -> None:
    """Per class: tests passing on torch, and of those how many pass, fail, error on impl; then the
    most frequent reasons."""
    counted = sorted(t for t, (status, _) in ref.items() if status == "passed")
    per_class: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    reasons: collections.Counter = collections.Counter()
    for t in counted:
        status, why = test.get(t, ("errored", "crashed the impl run"))
        per_class[t.rsplit(".", 1)[0]][status] += 1
        if status != "passed":
            reasons[why] += 1
            if verbose:
                print(f"  {status:8} {t}: {why}")
    print(f"{'class':60} {'torch':>5} {'pass':>5} {'fail':>5} {'error':>5}")
    total: collections.Counter = collections.Counter()
    for cls, c in sorted(per_class.items()):
        total.update(c)
        row(cls, c)
    row("total", total)
    skipped_on_torch = sum(1 for status, _ in ref.values() if status != "passed")
    print(f"({skipped_on_torch} selected tests do not pass on torch itself and are not counted)")
    print("\nmost frequent reasons:")
    for why, k in reasons.most_common(top):
        print(f"{k:4}  {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("-k", dest="pattern", help="regex over test method names")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every test impl fails")
    parser.add_argument("--worker", choices=("torch", "impl"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.files, args.pattern)))
        return
    runs = {}
    for backend in ("torch", "impl"):
        command = [sys.executable, __file__, "--worker", backend, *args.files]
        command += ["-k", args.pattern] if args.pattern else []
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = done.stdout.strip().splitlines()
        if done.returncode or not lines:
            sys.exit(f"the {backend} run failed:\n{done.stderr[-3000:]}")
        runs[backend] = json.loads(lines[-1])
    summarise(runs["torch"], runs["impl"], args.top, args.verbose)


if __name__ == "__main__":
    main()
