"""Claims across processes: the installed ``memkeeper`` waiting in subprocesses — a deadlock
between two waiters broken on the lower priority, a killed waiter dropped from the queue, and
eight processes holding one scope one at a time, in order of their fencing tokens."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from tests.cli.test_claims import as_agent, claim_events
from tests.conftest import MEMKEEPER, Cli


def wait_for_queue(cli: Cli, depth: int) -> None:
    """Ask the CLI until ``depth`` requests are queued (each call takes tens of ms)."""
    deadline = time.monotonic() + 30
    while cli("metrics", "--json").json["queue_depth"] != depth:
        assert time.monotonic() < deadline, f"the queue never reached {depth}"


def spawn(sample: Path, agent: str, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    return subprocess.Popen(
        [MEMKEEPER, "--agent", agent, *args, "--json"],
        cwd=sample,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, dict[str, Any]]:
    out, err = process.communicate(timeout=60)
    assert out, err
    payload = json.loads(out)
    assert isinstance(payload, dict)
    return process.returncode, payload


def test_a_two_process_deadlock_aborts_the_lower_priority_waiter(cli: Cli, sample: Path) -> None:
    as_agent(cli, "a", "claim", "src/a.py", "--priority", "5")
    held_b = as_agent(cli, "b", "claim", "src/b.py", "--priority", "1").json
    b_waits = spawn(sample, "b", "claim", "src/a.py", "--priority", "1", "--wait", "30")
    wait_for_queue(cli, 1)
    a_waits = spawn(sample, "a", "claim", "src/b.py", "--priority", "5", "--wait", "30")
    code, aborted = finish(b_waits)
    assert (code, aborted["status"], aborted["reason"]) == (5, "busy", "deadlock")
    assert a_waits.poll() is None, "the higher-priority waiter keeps waiting"
    assert as_agent(cli, "b", "release", held_b["id"]).code == 0
    code, granted = finish(a_waits)
    assert (code, granted["agent"], granted["targets"]) == (0, "a", ["src/b.py"])
    events = claim_events(cli)
    assert [(e["actor"], e["data"]["reason"]) for e in events if e["type"] == "claim.aborted"] == [
        ("b", "deadlock")
    ]
    assert cli("metrics", "--json").json["deadlocks_broken"] == 1


def test_a_killed_waiter_does_not_hold_up_the_queue(cli: Cli, sample: Path) -> None:
    held = as_agent(cli, "a", "claim", "src/").json
    doomed = spawn(sample, "b", "claim", "src/", "--wait", "60")
    wait_for_queue(cli, 1)
    doomed.kill()
    doomed.communicate()
    assert as_agent(cli, "a", "release", held["id"]).code == 0
    taken = as_agent(cli, "c", "claim", "src/")
    assert taken.code == 0, taken.stdout
    aborted = [e for e in claim_events(cli) if e["type"] == "claim.aborted"]
    assert [(e["actor"], e["data"]["reason"]) for e in aborted] == [("b", "abandoned")]
    assert not list((sample / ".memkeeper" / "wait").iterdir()), "its FIFO was cleaned up"


_TURN = textwrap.dedent(
    """
    import json, subprocess, sys
    exe = sys.argv[1]
    def run(*args):
        done = subprocess.run([exe, *args, "--json"], capture_output=True, text=True)
        return done.returncode, json.loads(done.stdout)
    code, claim = run("claim", "src/shared/", "--wait", "60", "--ttl", "60")
    assert code == 0, claim
    code, released = run("release", claim["id"])
    assert code == 0, released
    """
)


def test_eight_processes_waiting_for_one_scope_hold_it_one_at_a_time(sample: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _TURN, MEMKEEPER],
            cwd=sample,
            env={**env, "MEMKEEPER_AGENT": f"worker-{n}"},
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
    log = subprocess.run(
        [MEMKEEPER, "events", "--json"], cwd=sample, env=env, capture_output=True, text=True
    ).stdout
    everything = [e for e in map(json.loads, log.splitlines()) if e["type"].startswith("claim.")]
    queued = {e["data"]["id"] for e in everything if e["type"] == "claim.queued"}
    events = [e for e in everything if e["type"] != "claim.queued"]
    granted = {e["data"]["id"] for e in events if e["type"] == "claim.granted"}
    assert queued  # some waited,
    assert queued <= granted  # and each wait ended in a grant
    spans: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        spans.setdefault(event["data"]["id"], []).append(event)
    assert len(spans) == 8
    assert {e["actor"] for e in events} == {f"worker-{n}" for n in range(8)}
    intervals = []
    for held in spans.values():
        assert [e["type"] for e in held] == ["claim.granted", "claim.released"]
        intervals.append((held[0]["id"], held[1]["id"], held[0]["ts"], held[1]["ts"]))
    intervals.sort()
    for one, other in itertools.pairwise(intervals):
        assert one[1] < other[0], f"two grants overlap in the log: {one} {other}"
        assert one[3] <= other[2], f"two grants overlap in time: {one} {other}"
    tokens = [e["data"]["token"] for e in events if e["type"] == "claim.granted"]
    assert tokens == sorted(set(tokens))
