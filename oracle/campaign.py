"""Fuzz campaigns: the conformance suite run in rounds, random seeds, growing example counts.

``python -m oracle.campaign --minutes N`` (``nox -s fuzz -- --minutes N``) runs rounds of the
conformance suite (pytest with pytest-xdist over the machine's cores) in the ``fuzz`` hypothesis
profile (``oracle/profiles.py``) until N minutes are spent. Each round is a fresh pytest
process: hypothesis draws fresh random seeds, and ``max_examples`` grows from round to round
(``--examples``, times ``--growth``, up to ``--max-examples``), so the first rounds sweep every
test quickly and later ones dig deeper. The round running at the deadline is interrupted (what it
checked still counts; results.json says "interrupted").

Every failing example is kept in hypothesis's example database and shrunk there (the profile has
the database set and shrinking on): a directory (``--database``, default ``.hypothesis/examples``,
the ``thorough`` profile's) or, with ``--redis URL``, hypothesis's ``RedisExampleDatabase``, which
many machines share. Hypothesis replays a test's stored examples before it generates new ones, so a
failure found in one round (or by another machine) fails the next round's test on its first
programs. ``--replay-only`` replays the database and generates nothing: did a fix remove them?

The report: each round's ``results.json`` (the oracle plugin's, under ``OUT/campaign/round-K/``)
aggregated into ``OUT/campaign.json`` and ``OUT/campaign.md``: programs run, programs per second,
failing tests per round (new or replayed), and the distinct divergences by rule and class (the class
of the divergence each failing program shows first), each with its tests, the rounds that found it
and its shrunk repro script (also written to ``OUT/campaign/repros/``).

Nothing here imports pytest, hypothesis or torch at module level: ``oracle.profiles``
imports ``profile_settings`` to register the profile, and the rounds run pytest in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

PROFILE = "fuzz"
ENV_EXAMPLES = "ORACLE_FUZZ_EXAMPLES"  # max_examples of the round's profile
ENV_DATABASE = "ORACLE_FUZZ_DATABASE"  # a directory, or a redis:// URL
ENV_REPLAY_ONLY = "ORACLE_FUZZ_REPLAY_ONLY"  # "1": replay the database, generate nothing
DEFAULT_DATABASE = ".hypothesis/examples"
DEFAULT_EXAMPLES = 10  # the first round's max_examples (ci's profile runs 100)
DEFAULT_GROWTH = 2.0
DEFAULT_MAX_EXAMPLES = 10_000
REDIS_PREFIX = b"torch-conformance:"  # the keys of the example database in Redis
GRACE_S = 30.0  # after the deadline's SIGINT, how long a round may take to write its results
MIN_ROUND_S = 10.0  # a new round does not start with less time left than this
SCHEMA = 1
BROKEN = (3, 4)  # pytest's exit codes for an internal error and a usage error: the campaign stops
REDIS_SCHEMES = ("redis", "rediss", "unix")


# --------------------------------------------------------------------------- the hypothesis profile


def example_database(spec: str) -> Any:
    """Hypothesis's example database for ``spec``: ``RedisExampleDatabase`` for a ``redis://``,
    ``rediss://`` or ``unix://`` URL (the ``redis`` package: the ``fuzz`` extra), else a
    ``DirectoryBasedExampleDatabase`` in that directory."""
    if urlsplit(spec).scheme in REDIS_SCHEMES:
        try:
            import redis
        except ImportError as exc:
            raise ImportError(f"a Redis example database needs the redis package (pip install -e "
                              f"'.[fuzz]'): {exc}") from None
        from hypothesis.extra.redis import RedisExampleDatabase

        return RedisExampleDatabase(redis.Redis.from_url(spec), key_prefix=REDIS_PREFIX)
    from hypothesis.database import DirectoryBasedExampleDatabase

    return DirectoryBasedExampleDatabase(spec)


def profile_settings(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``fuzz`` profile's settings, from the round's environment: ``max_examples``
    (``ORACLE_FUZZ_EXAMPLES``), the database (``ORACLE_FUZZ_DATABASE``), random seeds, shrinking
    on (no explain phase: the shrunk program is the report's), or only the replay of the
    database's examples (``ORACLE_FUZZ_REPLAY_ONLY=1``)."""
    from hypothesis import HealthCheck, Phase

    environ = os.environ if environ is None else environ
    if environ.get(ENV_REPLAY_ONLY) == "1":
        phases = [Phase.explicit, Phase.reuse]
    else:
        phases = [p for p in Phase if p is not Phase.explain]
    return {
        "max_examples": int(environ.get(ENV_EXAMPLES, 10 * 100)),
        "derandomize": False,
        "deadline": None,
        "print_blob": True,
        "database": example_database(environ.get(ENV_DATABASE, DEFAULT_DATABASE)),
        "phases": phases,
        "suppress_health_check": [HealthCheck.too_slow],
    }


def public_url(url: str) -> str:
    """``url`` without its password (the report and the log must not carry one)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" if parts.username else f":***@{host}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


# --------------------------------------------------------------------------- rounds


def examples_of_round(index: int, first: int, growth: float, cap: int) -> int:
    """``max_examples`` of round ``index`` (1-based): ``first * growth**(index-1)``, capped."""
    return max(1, min(cap, math.ceil(first * growth ** (index - 1))))


def pytest_command(args: argparse.Namespace, results: Path) -> list[str]:
    """The pytest command line of one round."""
    command = [sys.executable, "-m", "pytest", *(args.paths or ["conformance"]),
               f"--hypothesis-profile={PROFILE}", "--backend", args.backend, "--device", args.device,
               "--results", str(results), "-p", "no:cacheprovider", "-q", "--no-header", "-rN"]
    if args.workers != "0":
        command += ["-n", args.workers]
    for rule in args.rule:
        command += ["--rule", rule]
    for classes in args.ignore_classes:
        command += ["--ignore-classes", classes]
    if args.report:
        command.append("--report")
    return command + list(args.pytest_args)


def stop(process: subprocess.Popen, grace: float) -> None:
    """Interrupt a round as Ctrl-C in a terminal would: SIGINT to its process group, pytest's and
    its xdist workers' (each test running stops at once; the controller writes results.json of
    the tests that completed, marked interrupted). A round still running after ``grace`` seconds
    gets SIGTERM, then SIGKILL. (The backends' processes are in sessions of their own and end with
    the workers that started them.)"""
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGTERM, 10.0), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_round(args: argparse.Namespace, index: int, examples: int, deadline: float, folder: Path,
              database: str) -> dict:
    """Run one round: pytest in a process group of its own, its output in ``folder/pytest.log``;
    interrupted at ``deadline``. Returns the round's record (``round_record``)."""
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "results.json"
    env = {**os.environ, ENV_EXAMPLES: str(examples), ENV_DATABASE: database}
    if args.replay_only:
        env[ENV_REPLAY_ONLY] = "1"
    command = pytest_command(args, results)
    started = time.monotonic()
    stopped = None
    with open(folder / "pytest.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stopped = "deadline"
            stop(process, GRACE_S)
        except KeyboardInterrupt:
            stopped = "interrupted"
            stop(process, GRACE_S)
    seconds = time.monotonic() - started
    document = json.loads(results.read_text(encoding="utf-8")) if results.exists() else None
    return round_record(index, examples, seconds, process.returncode, stopped, document, folder)


def round_record(index: int, examples: int, seconds: float, exit_code: int | None, stopped: str | None,
                 results: dict | None, folder: Path) -> dict:
    """What the campaign keeps of a round: its size, time and programs, its totals, and each
    failing test with its rule, the class of its first divergence and its repro."""
    totals = (results or {}).get("totals", {})
    programs = int(totals.get("programs", 0))
    if stopped == "deadline" and results is not None and not results.get("incomplete"):
        stopped = None  # the signal came as the round was writing its results: it ran everything
    return {
        "round": index,
        "max_examples": examples,
        "seconds": round(seconds, 2),
        "programs": programs,
        "programs_per_second": round(programs / seconds, 2) if seconds > 0 else 0.0,
        "exit_code": exit_code,
        "stopped": stopped,
        "incomplete": (results or {}).get("incomplete"),
        "tests": {k: totals.get(k, 0) for k in ("tests", "passed", "failed", "unsupported", "xfailed",
                                                  "xpassed", "skipped")},
        "program_outcomes": totals.get("program_outcomes", {}),
        "classes": {k: v for k, v in totals.get("classes", {}).items() if v},
        "failures": [failure_of(entry) for entry in (results or {}).get("divergences", [])],
        "results": str(folder / "results.json") if results is not None else None,
        "log": str(folder / "pytest.log"),
    }


def failure_of(entry: dict) -> dict:
    """One failing test of results.json's ``divergences``: rule, test, the class of the divergence
    its failing program shows first (``error in test`` when it carries none: the test itself
    raised), every class the program shows, the description and the repro script."""
    details = entry.get("details") if isinstance(entry.get("details"), dict) else {}
    first = details.get("divergence") if isinstance(details.get("divergence"), dict) else {}
    message = entry.get("message") or ""
    return {
        "nodeid": entry.get("nodeid"),
        "rule": entry.get("rule"),
        "class": first.get("kind") or "error in test",
        "classes": details.get("classes") or {},
        "description": details.get("description") or (message.splitlines()[0] if message else ""),
        "repro": details.get("repro"),
        "blob": _blob(message),
    }


def _blob(message: str) -> str | None:
    """Hypothesis's ``@reproduce_failure(...)`` line, when the failure text has one."""
    found = re.search(r"@reproduce_failure\([^)]*\)", message)
    return found.group(0) if found else None


# --------------------------------------------------------------------------- the campaign report


def summarize(rounds: list[dict], meta: dict) -> dict:
    """campaign.json: the rounds, their totals, and the distinct divergences by rule and class,
    each with its tests, the rounds that found it, how often, and its shortest repro."""
    seconds = sum(r["seconds"] for r in rounds)
    programs = sum(r["programs"] for r in rounds)
    seen_tests: set[str] = set()
    for record in rounds:
        nodeids = {f["nodeid"] for f in record["failures"]}
        record["new_failures"] = sorted(nodeids - seen_tests)
        record["replayed_failures"] = sorted(nodeids & seen_tests)
        seen_tests |= nodeids
    distinct: dict[tuple[str, str], dict] = {}
    for record in rounds:
        for failure in record["failures"]:
            key = (failure["rule"] or "no rule", failure["class"])
            entry = distinct.setdefault(key, {
                "rule": key[0], "class": key[1], "tests": [], "rounds": [], "found_in_round": record["round"],
                "occurrences": 0, "classes": Counter(), "description": failure["description"],
                "repro": failure["repro"], "blob": failure["blob"],
            })
            entry["occurrences"] += 1
            entry["classes"].update(failure["classes"])
            if failure["nodeid"] not in entry["tests"]:
                entry["tests"].append(failure["nodeid"])
            if record["round"] not in entry["rounds"]:
                entry["rounds"].append(record["round"])
            if failure["repro"] and (not entry["repro"] or len(failure["repro"]) < len(entry["repro"])):
                entry["repro"], entry["description"] = failure["repro"], failure["description"]
                entry["blob"] = failure["blob"]
    found = sorted(distinct.values(), key=lambda d: (d["rule"], d["class"]))
    for entry in found:
        entry["classes"] = dict(entry["classes"].most_common())
    failures = [f for r in rounds for f in r["failures"]]
    return {
        "schema": SCHEMA,
        **meta,
        "totals": {
            "rounds": len(rounds),
            "seconds": round(seconds, 2),
            "programs": programs,
            "programs_per_second": round(programs / seconds, 2) if seconds > 0 else 0.0,
            "failing_programs": sum(r["program_outcomes"].get("failed", 0) for r in rounds),
            "failures": len(failures),
            "failing_tests": len(seen_tests),
            "distinct": len(found),
            "by_rule": dict(Counter(d["rule"] for d in found).most_common()),
            "by_class": dict(Counter(d["class"] for d in found).most_common()),
            "classes": dict(sum((Counter(r["classes"]) for r in rounds), Counter()).most_common()),
        },
        "rounds": rounds,
        "divergences": found,
    }


def write_repros(campaign: dict, folder: Path) -> None:
    """Each distinct divergence's repro as a runnable script ``folder/RULE-class.py``; its path
    goes into the entry as ``repro_path``."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in campaign["divergences"]:
        if not entry.get("repro"):
            continue
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{entry['rule']}-{entry['class']}") + ".py"
        path = folder / name
        header = (f"# {entry['rule']}, {entry['class']}: found by the fuzz campaign in round "
                  f"{entry['found_in_round']} ({', '.join(entry['tests'])})\n")
        path.write_text(header + entry["repro"].rstrip("\n") + "\n", encoding="utf-8")
        entry["repro_path"] = str(path)


def markdown(campaign: dict) -> str:
    """campaign.md: the campaign in a page a person reads."""
    totals, database = campaign["totals"], campaign["database"]
    lines = [
        f"# Fuzz campaign: {campaign['backend']} vs torch",
        "",
        f"{campaign['started']}, {totals['rounds']} round(s) in {totals['seconds']:.0f} s "
        f"({campaign['minutes']:g} min asked), {_workers(campaign['workers'])} on {campaign['host']}; "
        f"example database: {database['kind']} {database['location']}"
        + (" (replay only)" if campaign.get("replay_only") else ""),
        "",
        f"- programs run: **{totals['programs']}** ({totals['programs_per_second']:.1f} per second)",
        f"- failing tests: {totals['failing_tests']} ({totals['failures']} failure(s) over the rounds, "
        f"{totals['failing_programs']} failing programs counting shrinking)",
        f"- distinct divergences (rule, class): **{totals['distinct']}**",
    ]
    if totals["by_class"]:
        lines.append("- by class: " + ", ".join(f"{k} {v}" for k, v in totals["by_class"].items()))
    lines += ["", "| round | max_examples | seconds | programs | programs/s | tests failed | new | stopped |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in campaign["rounds"]:
        stopped = r["stopped"] or r["incomplete"] or ""
        lines.append(f"| {r['round']} | {r['max_examples']} | {r['seconds']:.1f} | {r['programs']} | "
                     f"{r['programs_per_second']:.1f} | {r['tests']['failed']} | {len(r['new_failures'])} "
                     f"| {stopped} |")
    if not campaign["divergences"]:
        lines += ["", "No divergence found."]
    for entry in campaign["divergences"]:
        classes = ", ".join(f"{k} {v}" for k, v in entry["classes"].items())
        lines += ["", f"## {entry['rule']}: {entry['class']}", "",
                  f"found in round {entry['found_in_round']}, seen in rounds "
                  f"{', '.join(map(str, entry['rounds']))}; tests: {', '.join(entry['tests'])}"
                  + (f"; the program's divergences: {classes}" if classes else ""), ""]
        if entry.get("repro_path"):
            lines += [f"repro: `{entry['repro_path']}`", ""]
        lines += ["```", (entry["description"] or "").rstrip(), "```"]
        if entry.get("repro"):
            lines += ["", "```python", entry["repro"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


def _workers(workers: str) -> str:
    return "no xdist" if workers == "0" else f"{workers} xdist worker(s)"


def terminal_summary(campaign: dict) -> str:
    """The few lines printed at the end of a campaign."""
    totals = campaign["totals"]
    lines = [f"campaign: {totals['rounds']} round(s), {totals['programs']} programs in "
             f"{totals['seconds']:.0f} s ({totals['programs_per_second']:.1f}/s), "
             f"{totals['failing_tests']} failing test(s), {totals['distinct']} distinct divergence(s)"]
    for entry in campaign["divergences"]:
        where = entry.get("repro_path") or "no repro"
        lines.append(f"  {entry['rule']:<10} {entry['class']:<12} {len(entry['tests'])} test(s), "
                     f"first in round {entry['found_in_round']}: {where}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the command


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m oracle.campaign",
        description="A fuzz campaign: rounds of the conformance suite with random seeds and growing "
        "example counts until the time is spent; failures kept in hypothesis's example database "
        "(a directory, or Redis shared by many machines), shrunk, and replayed first. Arguments "
        "after -- go to each round's pytest.",
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="time to spend (default 10)")
    parser.add_argument("--backend", default="impl", help="backend under test (default impl)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--redis", metavar="URL", default=None,
                        help="share the example database in Redis (redis://host:6379/0), for many machines")
    parser.add_argument("--database", metavar="DIR", default=DEFAULT_DATABASE,
                        help=f"local example database without --redis (default {DEFAULT_DATABASE})")
    parser.add_argument("--workers", default=str(os.cpu_count() or 1), metavar="N",
                        help="pytest-xdist workers per round (-n; default the machine's cores; 0: no xdist)")
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES,
                        help=f"max_examples of the first round (default {DEFAULT_EXAMPLES})")
    parser.add_argument("--growth", type=float, default=DEFAULT_GROWTH,
                        help=f"max_examples multiplier from round to round (default {DEFAULT_GROWTH:g})")
    parser.add_argument("--max-examples", type=int, default=DEFAULT_MAX_EXAMPLES,
                        help=f"cap on max_examples (default {DEFAULT_MAX_EXAMPLES})")
    parser.add_argument("--rounds", type=int, default=0, help="stop after this many rounds (default: time)")
    parser.add_argument("--rule", action="append", default=[], metavar="ID",
                        help="only these rules' tests (repeat, or separate by commas)")
    parser.add_argument("--ignore-classes", action="append", default=[], metavar="CLASSES")
    parser.add_argument("--replay-only", action="store_true",
                        help="one round replaying the database's stored examples, generating none")
    parser.add_argument("--report", action="store_true", help="also render each round's HTML report")
    parser.add_argument("--out", default="reports", help="where campaign.json and campaign.md go")
    parser.add_argument("paths", nargs="*", default=[], help="test paths (default conformance)")
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, pytest_args = argv[:at], argv[at + 1:]
    args = parser.parse_args(argv)
    args.pytest_args = pytest_args
    return args


def run(args: argparse.Namespace) -> dict:
    """The campaign: rounds until the time (or ``--rounds``) is spent; then the report."""
    out = Path(args.out)
    folder = out / "campaign"
    if folder.exists():
        shutil.rmtree(folder)  # the previous campaign's rounds (generated output)
    if args.redis:
        example_database(args.redis).redis.ping()  # unreachable Redis: fail before the first round
        database, shown = args.redis, {"kind": "redis", "location": public_url(args.redis)}
    else:
        database = str(Path(args.database).resolve())
        shown = {"kind": "directory", "location": database}
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    start = time.monotonic()
    deadline = start + args.minutes * 60
    rounds: list[dict] = []
    index = 0
    while True:
        index += 1
        if args.rounds and index > args.rounds:
            break
        if rounds and deadline - time.monotonic() < MIN_ROUND_S:
            break
        examples = examples_of_round(index, args.examples, args.growth, args.max_examples)
        print(f"campaign round {index}: max_examples {examples}, {deadline - time.monotonic():.0f} s left",
              flush=True)
        record = run_round(args, index, examples, deadline, folder / f"round-{index:02d}", database)
        stopped = f" ({record['stopped']})" if record["stopped"] else ""
        print(f"  {record['programs']} programs in {record['seconds']:.0f} s, "
              f"{record['tests']['failed']} test(s) failed{stopped}", flush=True)
        rounds.append(record)
        if record["results"] is None and record["exit_code"] in BROKEN:
            log = Path(record["log"]).read_text(encoding="utf-8", errors="replace")
            raise SystemExit(f"round {index} failed (pytest exit {record['exit_code']}):\n{log[-3000:]}")
        if record["stopped"] == "interrupted" or args.replay_only:
            break
    meta = {
        "backend": args.backend, "device": args.device, "started": started_at, "minutes": args.minutes,
        "workers": args.workers, "host": os.uname().nodename, "database": shown,
        "replay_only": args.replay_only, "rules": args.rule,
        "examples": {"first": args.examples, "growth": args.growth, "cap": args.max_examples},
    }
    campaign = summarize(rounds, meta)
    write_repros(campaign, folder / "repros")
    out.mkdir(parents=True, exist_ok=True)
    (out / "campaign.json").write_text(json.dumps(campaign, indent=1) + "\n", encoding="utf-8")
    (out / "campaign.md").write_text(markdown(campaign), encoding="utf-8")
    return campaign


def main(argv: list[str] | None = None) -> int:
    """0: no divergence found; 1: divergences found (campaign.md lists them)."""
    args = parse(argv)
    campaign = run(args)
    print(terminal_summary(campaign))
    print(f"campaign report: {Path(args.out) / 'campaign.md'} ({Path(args.out) / 'campaign.json'})")
    return 1 if campaign["divergences"] else 0


if __name__ == "__main__":
    sys.exit(main())
