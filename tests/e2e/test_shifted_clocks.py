"""Claims under shifted clocks (issue 22 item 6): a `memkeeper` process whose clock is a
minute ahead or behind, under libfaketime (every libc clock of the process is shifted,
``CLOCK_MONOTONIC`` and ``CLOCK_BOOTTIME`` included), beside processes on the true clock, on
both stores. No claim is granted while another agent holds it live, none lives past its TTL
for the others, and tokens only go up. Before, each process judged expiry by its own wall
clock: the one ahead took live claims, and a claim taken by the one behind was expired for
everyone else from the start."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MEMKEEPER, Run, run_cli
from tests.etcd_cluster import Cluster, binary

FAKETIME = shutil.which("faketime")
pytestmark = pytest.mark.skipif(FAKETIME is None, reason="faketime (libfaketime) not installed")
EXE, WHY = binary()
STORES = ["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
_prefixes = itertools.count(1)


@pytest.fixture(params=STORES)
def store_env(request: pytest.FixtureRequest, sample: Path) -> dict[str, str]:
    """The environment naming the test's store: the local one, or a fresh etcd prefix."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, check=True, capture_output=True)
    if request.param == "sqlite":
        return {}
    cluster: Cluster = request.getfixturevalue("cluster")
    host, port = cluster.endpoints[0]
    return {"MEMKEEPER_STORE": f"etcd://{host}:{port}/shifted{next(_prefixes)}"}


def as_agent(
    root: Path,
    env: dict[str, str],
    agent: str,
    *args: str,
    shift: str | None = None,
    stdin: str | None = None,
) -> Run:
    """``memkeeper ARGS --json`` as ``agent``; under ``faketime -f SHIFT`` when given."""
    full = {**env, "MEMKEEPER_AGENT": agent}
    if shift is None:
        return run_cli(root, *args, "--json", env=full, stdin=stdin)
    assert FAKETIME is not None
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    done = subprocess.run(
        [FAKETIME, "-f", shift, MEMKEEPER, *args, "--json"],
        cwd=root,
        env={**clean, **full},
        input=None if stdin is None else stdin.encode(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    return Run(done.returncode, done.stdout.decode(), done.stderr.decode())


def test_the_shift_is_real(sample: Path) -> None:
    """The processes below do see a clock a minute off (else the tests prove nothing)."""
    probe = ["python3", "-c", "import time; print(time.time())"]
    assert FAKETIME is not None
    ahead = subprocess.run([FAKETIME, "-f", "+60s", *probe], capture_output=True, text=True)
    now = subprocess.run(probe, capture_output=True, text=True)
    assert 55 < float(ahead.stdout) - float(now.stdout) < 65


def test_a_process_a_minute_ahead_cannot_take_a_claim_held_live(
    sample: Path, store_env: dict[str, str]
) -> None:
    held = as_agent(sample, store_env, "agent-a", "claim", "src/", "--ttl", "30")
    assert held.code == 0, held.stdout + held.stderr
    taken = as_agent(sample, store_env, "agent-b", "claim", "src/api/", shift="+60s")
    assert taken.code == 5, taken.stdout + taken.stderr  # before: granted (exit 0)
    assert taken.json["reason"] == "held"
    assert [h["id"] for h in taken.json["holders"]] == [held.json["id"]]
    listed = as_agent(sample, store_env, "agent-b", "claims", shift="+60s")
    assert [c["id"] for c in listed.json["claims"]] == [held.json["id"]]
    events = as_agent(sample, store_env, "agent-b", "events", "--type", "claim.expired")
    assert events.stdout.strip() == ""  # nobody expired it


def test_a_claim_taken_a_minute_behind_lasts_its_ttl_for_everyone(
    sample: Path, store_env: dict[str, str]
) -> None:
    held = as_agent(sample, store_env, "agent-b", "claim", "src/", "--ttl", "30", shift="-60s")
    assert held.code == 0, held.stdout + held.stderr
    taken = as_agent(sample, store_env, "agent-a", "claim", "src/")
    assert taken.code == 5, taken.stdout + taken.stderr  # before: granted (exit 0)
    assert [h["id"] for h in taken.json["holders"]] == [held.json["id"]]
    strict = as_agent(sample, store_env, "agent-c", "claim", "docs/", "--strict", shift="+60s")
    assert strict.json["token"] > held.json["token"]  # tokens go up whatever the clocks


def test_a_fenced_write_a_minute_ahead_lands_under_its_own_live_claim(
    sample: Path, store_env: dict[str, str]
) -> None:
    """The holder's own clock does not end its claim either."""
    held = as_agent(sample, store_env, "agent-b", "claim", "CLAUDE.md#build", "--ttl", "30")
    read = as_agent(sample, store_env, "agent-b", "read", "CLAUDE.md#build")
    patched = as_agent(
        sample, store_env, "agent-b",
        "patch", "CLAUDE.md#build", "--expect-rev", str(read.json["rev"]), "--body-file", "-",
        "--claim", held.json["id"], shift="+60s", stdin="- under a claim\n",
    )  # fmt: skip
    assert patched.code == 0, patched.stdout + patched.stderr  # before: refused, expired


def test_a_wait_is_neither_dropped_nor_ended_by_a_process_a_minute_ahead(
    sample: Path, store_env: dict[str, str]
) -> None:
    """A claim's ``--wait`` on the true clock while a process a minute ahead sweeps the table:
    the wait goes on and is granted once the holder lets go. Before, on etcd, the process
    ahead judged the wait's deadline by its own clock, found it far past, and dropped it as
    abandoned: the waiter ended busy (``timeout``) at once."""
    held = as_agent(sample, store_env, "agent-a", "claim", "src/", "--ttl", "60")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    waiter = subprocess.Popen(
        [MEMKEEPER, "claim", "src/api/", "--wait", "20", "--json"],
        cwd=sample,
        env={**clean, **store_env, "MEMKEEPER_AGENT": "agent-b"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(100):  # until it is queued
            queued = as_agent(sample, store_env, "agent-c", "claims")
            if queued.json["waiters"]:
                break
            time.sleep(0.1)
        assert queued.json["waiters"], queued.stdout
        ahead = as_agent(sample, store_env, "agent-c", "claims", shift="+60s")
        assert [w["id"] for w in ahead.json["waiters"]] == [w["id"] for w in queued.json["waiters"]]
        time.sleep(0.5)
        assert waiter.poll() is None  # still waiting
        assert as_agent(sample, store_env, "agent-a", "release", held.json["id"]).code == 0
        out, _ = waiter.communicate(timeout=30)
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.communicate()
    assert waiter.returncode == 0, out
    assert json.loads(out)["agent"] == "agent-b"
