"""The command line, ``python -m oracle SUBCOMMAND``.

  diff-script FILE.py [--backend B] [--device D] [--json]
      run an unmodified torch script on torch and on a backend, report the first differing line
  record --out corpus.json [--count N] [--seed S]
      generate N programs (deterministically), run them on torch, store programs + traces
  replay corpus.json [--backend B] [--device D] [--json]
      check a backend against a recorded corpus, without importing torch
  report [--results reports/results.json] [--out reports]
      render the HTML conformance report

Exit status: 0 identical / all passed, 1 divergent / some failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from oracle.backends import DEFAULT_BACKEND, BackendError

USAGE_ERROR = 2


class UsageError(Exception):
    """A command line that names something missing or invalid (exit status 2)."""


def _diff_script(args: argparse.Namespace) -> int:
    from oracle.script import diff_script

    if not Path(args.file).is_file():
        raise UsageError(f"no such script: {args.file}")
    try:  # each run loads its backend in its own process, and says if it could not
        diff = diff_script(args.file, args.backend, args.device)
    except BackendError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(diff.to_dict(), indent=1) if args.json else diff.describe())
    return 0 if diff.identical else 1


def _record(args: argparse.Namespace) -> int:
    from oracle.corpus import record_corpus

    if args.count < 1:
        raise UsageError("--count must be at least 1")
    corpus = record_corpus(args.count, args.seed, args.device)
    args.out.write_text(json.dumps(corpus, allow_nan=False), encoding="utf-8")
    print(f"recorded {args.count} programs on torch {corpus['torch_version']} -> {args.out}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    try:
        corpus = json.loads(args.corpus.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read corpus {args.corpus}: {exc}") from None
    from oracle.corpus import CorpusError, replay_corpus

    try:
        result = replay_corpus(corpus, args.backend, args.device)
    except (BackendError, CorpusError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps({**asdict(result), "failed": result.failed}, indent=1))
    else:
        print(result.describe())
    return 0 if result.failed == 0 else 1


def _report(args: argparse.Namespace) -> int:
    from oracle.report import write_report

    if not args.results.is_file():
        raise UsageError(f"no results file: {args.results} (run the conformance suite first)")
    print(write_report(args.results, args.out))
    return 0


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
    diff.add_argument("file", help="the torch script to run")
    _backend_options(diff)
    diff.set_defaults(handler=_diff_script)

    record = sub.add_parser("record", help="record torch traces of a generated program corpus")
    record.add_argument("--out", type=Path, required=True, help="the corpus JSON to write")
    record.add_argument("--count", type=int, default=100, help="how many programs (default 100)")
    record.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    record.add_argument("--device", default="cpu", help="device torch runs on (default cpu)")
    record.set_defaults(handler=_record)

    replay = sub.add_parser("replay", help="check a backend against a recorded corpus (no torch needed)")
    replay.add_argument("corpus", type=Path, help="a corpus written by record")
    _backend_options(replay)
    replay.set_defaults(handler=_replay)

    report = sub.add_parser("report", help="render reports/index.html from results.json")
    report.add_argument("--results", type=Path, default=Path("reports/results.json"))
    report.add_argument("--out", type=Path, default=Path("reports"))
    report.set_defaults(handler=_report)
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
