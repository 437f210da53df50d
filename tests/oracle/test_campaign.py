"""Fuzz campaigns (oracle/campaign.py): rounds of the suite, the example database, the report.

Campaigns against ``fault:grad_off`` (every ``.grad`` read off by 1e-3, a gradient divergence)
restricted to ACC-001, whose programs fail from the first: a local campaign of two rounds (the
failure found, shrunk and kept in the directory database by the first round, replayed by the
second; the report's counts are the rounds' results.json), and two campaign processes sharing a
real redis-server (Debian's; ``nox -s tests`` installs it when missing and run as root): the second
replays the database only, generating nothing, and fails with the first's shrunk program.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oracle import campaign
from tests.helpers import ROOT

FAULT = ["--backend", "fault:grad_off", "--rule", "ACC-001"]
TEST = "conformance/test_accumulation.py::test_repeated_backward_accumulates"


def run_campaign(*args: str, timeout: float = 120) -> tuple[int, dict, str]:
    """``python -m oracle.campaign args`` from the repository root: exit code, campaign.json, output."""
    out = Path(args[args.index("--out") + 1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "oracle.campaign", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    output = done.stdout + done.stderr
    assert (out / "campaign.json").exists(), output[-3000:]
    return done.returncode, json.loads((out / "campaign.json").read_text()), output


# --------------------------------------------------------------------------- pure parts


def test_examples_grow_per_round_up_to_the_cap() -> None:
    assert [campaign.examples_of_round(i, 10, 2.0, 50) for i in (1, 2, 3, 4)] == [10, 20, 40, 50]


def test_the_profile_reads_the_round_from_the_environment(tmp_path: Path) -> None:
    from hypothesis import Phase
    from hypothesis.database import DirectoryBasedExampleDatabase

    env = {campaign.ENV_EXAMPLES: "37", campaign.ENV_DATABASE: str(tmp_path)}
    chosen = campaign.profile_settings(env)
    assert chosen["max_examples"] == 37 and not chosen["derandomize"]
    assert isinstance(chosen["database"], DirectoryBasedExampleDatabase)
    assert Phase.shrink in chosen["phases"] and Phase.generate in chosen["phases"]
    replay = campaign.profile_settings({**env, campaign.ENV_REPLAY_ONLY: "1"})["phases"]
    assert replay == [Phase.explicit, Phase.reuse]


def test_a_password_never_reaches_the_report() -> None:
    assert campaign.public_url("redis://:s3cret@db.example:6380/2") == "redis://:***@db.example:6380/2"
    assert campaign.public_url("redis://u:s3cret@db/0") == "redis://u:***@db/0"
    assert campaign.public_url("redis://db:6379/0") == "redis://db:6379/0"


def _failure(nodeid: str, rule: str, kind: str, repro: str) -> dict:
    return {"nodeid": nodeid, "rule": rule, "class": kind, "classes": {kind: 1}, "description": kind,
            "repro": repro, "blob": None}


def _round(index: int, programs: int, seconds: float, failures: list[dict]) -> dict:
    return {"round": index, "max_examples": 10 * index, "seconds": seconds, "programs": programs,
            "programs_per_second": programs / seconds, "exit_code": int(bool(failures)), "stopped": None,
            "incomplete": None, "tests": {"failed": len(failures)},
            "program_outcomes": {"failed": len(failures)},
            "classes": {f["class"]: 1 for f in failures}, "failures": failures}


def test_distinct_divergences_are_by_rule_and_class_with_the_shortest_repro() -> None:
    rounds = [
        _round(1, 100, 10.0, [_failure("t::a", "R-1", "value", "long repro"),
                              _failure("t::b", "R-1", "value", "repro b")]),
        _round(2, 300, 20.0, [_failure("t::a", "R-1", "value", "short"),
                              _failure("t::c", "R-2", "hook", "c")]),
    ]
    found = campaign.summarize(rounds, {"backend": "x"})
    totals = found["totals"]
    assert (totals["programs"], totals["seconds"], totals["programs_per_second"]) == (400, 30.0, 13.33)
    assert (totals["failures"], totals["failing_tests"], totals["distinct"]) == (4, 3, 2)
    assert totals["by_rule"] == {"R-1": 1, "R-2": 1} and totals["by_class"] == {"value": 1, "hook": 1}
    first, second = found["divergences"]
    assert (first["rule"], first["class"], first["rounds"]) == ("R-1", "value", [1, 2])
    assert first["tests"] == ["t::a", "t::b"]
    assert (first["repro"], first["occurrences"], second["found_in_round"]) == ("short", 3, 2)
    later = found["rounds"][1]
    assert (later["new_failures"], later["replayed_failures"]) == (["t::c"], ["t::a"])


# --------------------------------------------------------------------------- campaigns


def test_a_local_campaign_keeps_replays_and_reports_its_failure(tmp_path: Path) -> None:
    """Two rounds with xdist's two workers and a directory database: the first finds and shrinks
    the failure, the second replays it; campaign.json's counts are the rounds' results.json."""
    database, out = tmp_path / "db", tmp_path / "reports"
    code, found, output = run_campaign(*FAULT, "--rounds", "2", "--examples", "10", "--workers", "2",
                                       "--database", str(database), "--out", str(out))
    assert code == 1, output[-3000:]
    rounds = found["rounds"]
    assert [r["max_examples"] for r in rounds] == [10, 20]
    results = [json.loads(Path(r["results"]).read_text()) for r in rounds]
    assert [r["programs"] for r in rounds] == [doc["totals"]["programs"] for doc in results]
    totals = found["totals"]
    assert totals["programs"] == sum(r["programs"] for r in rounds) > 0
    assert totals["programs_per_second"] == round(totals["programs"] / totals["seconds"], 2)
    assert (totals["rounds"], totals["failing_tests"], totals["failures"], totals["distinct"]) == (2, 1, 2, 1)
    assert (rounds[0]["new_failures"], rounds[1]["replayed_failures"]) == ([TEST], [TEST])
    [entry] = found["divergences"]
    assert (entry["rule"], entry["class"], entry["tests"]) == ("ACC-001", "gradient", [TEST])
    assert entry["rounds"] == [1, 2]
    repro = Path(entry["repro_path"])
    compile(repro.read_text(), str(repro), "exec")  # a runnable torch script
    assert "import torch" in repro.read_text() and ".grad" in entry["description"]
    assert any(database.rglob("*")), "the failure was not kept in the example database"
    page = (out / "campaign.md").read_text()
    assert "## ACC-001: gradient" in page and f"programs run: **{totals['programs']}**" in page
    assert "1 distinct divergence(s)" in output


REDIS = shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def redis_url(tmp_path: Path):
    """A real redis-server on a free loopback port, no persistence; stopped after the test."""
    if REDIS is None:
        why = ("Debian's redis-server is not installed (apt-get install redis-server; nox -s tests "
               "installs it when run as root)")
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    redis = pytest.importorskip("redis", reason="the fuzz extra's redis client: pip install -e '.[fuzz]'")
    port = _free_port()
    server = subprocess.Popen(
        [REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path), "--daemonize", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert server.poll() is None, "redis-server exited"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        client.close()
        server.terminate()
        server.wait(10)


def test_two_campaigns_share_their_failures_through_redis(redis_url: str, tmp_path: Path) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    shared = ["--redis", redis_url, "--workers", "0"]
    # replaying an empty database finds nothing: a replay-only campaign generates no program
    code, empty, output = run_campaign(*FAULT, *shared, "--replay-only", "--out", str(tmp_path / "empty"))
    assert (code, empty["totals"]["programs"], empty["divergences"]) == (0, 0, []), output[-3000:]

    code, first, output = run_campaign(*FAULT, *shared, "--rounds", "1", "--examples", "20",
                                       "--out", str(tmp_path / "first"))
    assert code == 1, output[-3000:]
    [found] = first["divergences"]
    assert (found["rule"], found["class"]) == ("ACC-001", "gradient")
    assert first["database"] == {"kind": "redis", "location": redis_url}
    keys = client.keys(campaign.REDIS_PREFIX + b"*")
    assert keys, "the first campaign kept nothing in Redis"

    code, second, output = run_campaign(*FAULT, *shared, "--replay-only", "--out", str(tmp_path / "second"))
    assert code == 1, output[-3000:]
    [replayed] = second["divergences"]
    assert (replayed["rule"], replayed["class"], replayed["tests"]) == ("ACC-001", "gradient", [TEST])
    assert replayed["repro"] == found["repro"]  # the first's shrunk program, from the database
    [round_] = second["rounds"]
    stored = sum(client.scard(key) for key in client.keys(campaign.REDIS_PREFIX + b"*"))
    # the stored examples replayed, and the failing one once more for its report: nothing generated
    assert 0 < round_["programs"] <= stored + 1
    client.close()


def test_a_round_at_the_deadline_is_interrupted_and_still_counts(tmp_path: Path) -> None:
    """A round far too large for the time given (30 s: a loaded machine takes ~15 s to start a round's
    workers): SIGINT to its process group at the deadline, the
    tests completed by then counted (results.json marked interrupted), the report written."""
    code, found, output = run_campaign("--backend", "impl", "--rule", "ACC-001,LEAF-001", "--minutes", "0.5",
                                       "--examples", "10000", "--workers", "2", "--database",
                                       str(tmp_path / "db"), "--out", str(tmp_path / "reports"))
    assert code == 0, output[-3000:]
    [only] = found["rounds"]
    assert (only["stopped"], only["incomplete"], only["max_examples"]) == ("deadline", "interrupted", 10000)
    assert only["programs"] == found["totals"]["programs"] and only["results"] is not None
    assert only["seconds"] < 30 + campaign.GRACE_S


def test_stop_interrupts_the_whole_process_group(tmp_path: Path) -> None:
    """Like Ctrl-C in a terminal: the round's pytest and its xdist workers all get SIGINT."""
    script = (
        "import os, signal, subprocess, sys, time\n"
        "child = 'import signal, sys, time\\nsignal.signal(signal.SIGINT, lambda *a: sys.exit(0))\\n"
        "open(sys.argv[1], \"w\").close()\\ntime.sleep(60)'\n"
        f"worker = subprocess.Popen([sys.executable, '-c', child, {str(tmp_path / 'worker')!r}])\n"
        "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    worker.wait(10)\n    sys.exit(2)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    for _ in range(200):
        if (tmp_path / "worker").exists():
            break
        time.sleep(0.05)
    started = time.monotonic()
    campaign.stop(process, grace=10)
    assert process.returncode == 2 and time.monotonic() - started < 5
