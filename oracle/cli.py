"""The command line, ``python -m oracle SUBCOMMAND``.

  diff-script FILE.py [FILE.py | FOLDER ...] [--backend B] [--device D] [--json]
      run unmodified torch scripts on torch and on a backend, report each one's first differing
      line (and, for several, how many are identical)
  record --out corpus.json[.gz] [--count N] [--seed S]
      generate N programs (deterministically), run them on torch, store programs + traces
      (needs hypothesis; pytest conformance --record-corpus stores the suite's own programs)
  replay corpus.json[.gz] [--backend B] [--device D] [--ignore CLASSES] [--results PATH] [--report]
         [--json] [--isolation process|none] [--backend-timeout S] [--backend-python PYTHON]
      check a backend against a recorded corpus, without importing torch: results.json per rule
  report [--results reports/results.json] [--out reports]
      render the HTML conformance report (needs jinja2)
  engines [--reports reports/engines] [--readme README.md]
      the Engines page from every engine's and torch version's results.json (and the README's table)

Exit status: 0 identical / all passed, 1 divergent / some failed, 2 usage error (a missing
optional dependency included: the message names the package to install).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from oracle.backends import DEFAULT_BACKEND, BackendError
from oracle.runner import isolation_options

USAGE_ERROR = 2
DEFAULT_RESULTS = Path("reports") / "results.json"
SUMMARY_WIDTH = 100


class UsageError(Exception):
    """A command line that names something missing or invalid (exit status 2)."""


def _scripts(paths: list[str]) -> list[Path]:
    """The scripts named: files as given, a folder's ``*.py`` files in name order."""
    scripts: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            scripts.extend(sorted(p for p in path.glob("*.py") if p.is_file()))
        elif path.is_file():
            scripts.append(path)
        else:
            raise UsageError(f"no such script: {name}")
    if not scripts:
        raise UsageError(f"no scripts in {' '.join(paths)}")
    return scripts


def _diff_script(args: argparse.Namespace) -> int:
    """Diff each script; with several, a last line counts those identical and names the others."""
    from oracle.script import diff_script

    diffs = []
    for script in _scripts(args.files):
        try:  # each run loads its backend in its own process, and says if it could not
            diff = diff_script(str(script), args.backend, args.device, python=args.backend_python)
        except BackendError as exc:
            raise UsageError(str(exc)) from None
        diffs.append(diff)
        if not args.json:
            print(diff.describe(), flush=True)
    divergent = [d for d in diffs if not d.identical]
    if args.json:
        found = [d.to_dict() for d in diffs]
        one_file = len(args.files) == 1 and Path(args.files[0]).is_file()
        print(json.dumps(found[0] if one_file else found, indent=1))
    elif len(diffs) > 1:
        where = ", ".join(f"{Path(d.path).name} ({d.channel} line {d.line})" for d in divergent)
        print(f"{len(diffs) - len(divergent)} of {len(diffs)} scripts identical on {args.backend}"
              + (f"; divergent: {where}" if divergent else ""))
    return 1 if divergent else 0


def _record(args: argparse.Namespace) -> int:
    _require("hypothesis", "record")
    from oracle.corpus import record_corpus, write_corpus

    if args.count < 1:
        raise UsageError("--count must be at least 1")
    try:
        corpus = record_corpus(args.count, args.seed, args.device)
    except BackendError as exc:  # no torch, or not the reference (oracle.reference)
        raise UsageError(str(exc)) from None
    write_corpus(corpus, args.out)
    print(f"recorded {corpus['count']} programs on torch {corpus['reference']['version']} -> {args.out}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    """Check the backend against the corpus, one result per rule, and write results.json (and the
    report) as the suite does. The backend runs in a worker process of its own (``oracle.runner``)
    unless ``--isolation none``: a backend that crashes or hangs then fails its programs as a
    "crash" instead of ending the replay without results."""
    from oracle.compare import class_names
    from oracle.corpus import CorpusError, read_corpus, reference_of, replay_corpus
    from oracle.results import build_results, dump, run_meta, write_summary

    if args.report:
        _require("jinja2", "replay --report")
    try:
        ignore = class_names(args.ignore)
    except ValueError as exc:
        raise UsageError(f"--ignore: {exc}") from None
    try:
        corpus = read_corpus(args.corpus)
        reference = reference_of(corpus)
    except (OSError, ValueError, EOFError) as exc:  # CorpusError, JSON's and gzip's errors are ValueErrors
        raise UsageError(f"cannot read corpus {args.corpus}: {exc}") from None
    backend = _backend(args.backend, args.device, args.isolation, args.backend_timeout, args.backend_python)
    try:
        info, probe = backend.info(), backend.call("oracle.capabilities:probe")
        if probe["device_error"]:
            raise UsageError(f"--device {args.device}: the backend cannot place a tensor there "
                             f"({probe['device_error']})")
        tests = replay_corpus(corpus, backend, args.corpus.name, ignore, None if args.json else _progress)
    except (BackendError, CorpusError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        backend.close()
    meta = run_meta(args.backend, info, args.device, args.isolation, ignore, reference,
                    corpus.get("hypothesis_profile"))
    meta["corpus"] = {"path": str(args.corpus), "format": corpus["format"],
                      "programs": len(corpus["programs"])}
    results = build_results(tests, meta, probe)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(dump(results), encoding="utf-8")
    report = None
    if args.report:
        from oracle.report import write_report

        report = write_report(args.results, args.results.parent)
    if args.json:
        print(dump(results), end="")
    else:
        for test in results["tests"]:
            if test["outcome"] == "failed":
                print(f"FAILED {test['nodeid']} - {test['message'].splitlines()[0]}")
        write_summary(_Terminal(), results, args.results, report)
    return 1 if results["totals"]["failed"] else 0


def _progress(done: int, total: int, result) -> None:
    """One line per replayed rule, to stderr: how far the replay is."""
    print(f"[{done}/{total}] {result.nodeid}: {result.outcome}", file=sys.stderr, flush=True)


def _backend(spec: str, device: str, isolation: str, timeout: float, python: str | None = None):
    from oracle.backends import load_backend
    from oracle.runner import Isolated

    if python and isolation == "none":
        raise UsageError("--backend-python runs the backend in a worker: it needs --isolation process")
    try:
        if isolation == "none":
            return load_backend(spec, device)
        return Isolated(spec, device, timeout, python=python)
    except BackendError as exc:
        raise UsageError(str(exc)) from None


class _Terminal:
    """What ``oracle.results.write_summary`` writes with (pytest's terminal reporter's methods),
    on stdout."""

    def write_sep(self, sep: str, title: str, **markup: bool) -> None:
        print(f" {title} ".center(SUMMARY_WIDTH, sep))

    def write_line(self, line: str, **markup: bool) -> None:
        print(line)


def _report(args: argparse.Namespace) -> int:
    _require("jinja2", "report")
    from oracle.report import write_report

    if not args.results.is_file():
        raise UsageError(f"no results file: {args.results} (run the conformance suite first)")
    print(write_report(args.results, args.out))
    return 0


def _engines(args: argparse.Namespace) -> int:
    _require("jinja2", "engines")
    from oracle.engines_page import collect, readme_table, update_readme, write_page

    runs = collect(args.reports)
    if not runs:
        raise UsageError(f"no results under {args.reports}/*/ (run nox -s engine -- NAME first)")
    print(write_page(runs, args.reports))
    if args.readme:
        update_readme(args.readme, readme_table(runs))
        print(f"{args.readme}: Engines table updated ({len(runs)} runs)")
    return 0


INSTALL = {  # optional dependency -> what to install
    "hypothesis": "pip install hypothesis (or the project's 'test' extra)",
    "jinja2": "pip install jinja2 (or the project's 'report' extra)",
}


def _require(module: str, command: str) -> None:
    """A usage error naming the package to install when ``module`` cannot be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise UsageError(f"{command} needs {module}: {INSTALL[module]}") from None


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m oracle``."""
    top = argparse.ArgumentParser(
        prog="python -m oracle",
        description="PyTorch-compatibility oracle: diff scripts, record and replay corpora, report.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n")[1],
    )
    sub = top.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")

    diff = sub.add_parser("diff-script", help="diff an unmodified torch script on torch and a backend")
    diff.add_argument("files", nargs="+", metavar="FILE", help="torch scripts to run (a folder: its *.py)")
    _backend_options(diff)
    diff.add_argument("--backend-python", default=None, metavar="PYTHON",
                      help="the Python of the backend's own environment (default: this Python)")
    diff.set_defaults(handler=_diff_script)

    record = sub.add_parser("record", help="record torch traces of a generated program corpus")
    record.add_argument("--out", type=Path, required=True, help="the corpus JSON to write")
    record.add_argument("--count", type=int, default=100, help="how many programs (default 100)")
    record.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    record.add_argument("--device", default="cpu", help="device torch runs on (default cpu)")
    record.set_defaults(handler=_record)

    replay = sub.add_parser("replay", help="check a backend against a recorded corpus (no torch needed)")
    replay.add_argument("corpus", type=Path, help="a corpus written by record or pytest --record-corpus")
    _backend_options(replay)
    isolation_options(replay.add_argument)
    replay.add_argument(
        "--ignore", action="append", default=[], metavar="CLASSES",
        help="divergence classes not counted, separated by commas (the plugin's --ignore-classes)",
    )
    replay.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                        help=f"where to write results.json (default {DEFAULT_RESULTS})")
    replay.add_argument("--report", action="store_true", help="also render index.html next to results.json")
    replay.set_defaults(handler=_replay)

    report = sub.add_parser("report", help="render reports/index.html from results.json")
    report.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    report.add_argument("--out", type=Path, default=Path("reports"))
    report.set_defaults(handler=_report)

    engines = sub.add_parser("engines", help="the Engines page from reports/engines/*/results.json")
    engines.add_argument("--reports", type=Path, default=Path("reports") / "engines")
    engines.add_argument("--readme", type=Path, default=None, help="also update this README's Engines table")
    engines.set_defaults(handler=_engines)
    return top


def _backend_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--backend", default=DEFAULT_BACKEND, help="torch | impl | fault:NAME | a module path (default impl)"
    )
    command.add_argument("--device", default="cpu", help="device both runs use (default cpu)")
    command.add_argument("--json", action="store_true", help="print the result as JSON")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = parser().parse_args(argv)
    try:
        return args.handler(args)
    except UsageError as exc:
        print(f"python -m oracle {args.command}: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
