"""A claim's whole life through the installed CLI, on SQLite and on a real etcd (issue 24's
acceptance): a claim with its plan → a scope change that hits another agent's claim (busy,
nothing changed) → a stale ``--expect-rev`` (exit 3) → a completion refused by a failing
``--verify`` (exit 6, still active) → a completion with evidence gathered from a real git
history → another claim abandoned → a takeover refused inside the grace period → a third
claim expired → takeovers after the grace period, answered with the predecessor's record;
each transition an event."""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MEMKEEPER, Run, run_cli
from tests.etcd_cluster import Cluster, binary

EXE, WHY = binary()
STORES = ["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
GRACE_S = 3
_prefixes = itertools.count(1)


@pytest.fixture(params=STORES)
def store_env(request: pytest.FixtureRequest, sample: Path) -> dict[str, str]:
    """An initialised sample with a short grace period, committed; the environment naming
    the test's store."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, check=True, capture_output=True)
    policy = sample / ".memkeeper.yaml"
    policy.write_text(
        policy.read_text().replace(
            "  max_ttl: 3600\n", f"  max_ttl: 3600\n  takeover_grace: {GRACE_S}\n"
        )
    )
    git(sample, "add", "-A")
    git(sample, "commit", "-qm", "set up memkeeper")
    if request.param == "sqlite":
        return {}
    cluster: Cluster = request.getfixturevalue("cluster")
    host, port = cluster.endpoints[0]
    return {"MEMKEEPER_STORE": f"etcd://{host}:{port}/lifecycle{next(_prefixes)}"}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def as_agent(root: Path, env: dict[str, str], agent: str, *args: str) -> Run:
    return run_cli(root, *args, "--json", env={**env, "MEMKEEPER_AGENT": agent})


def test_a_claims_whole_life_on_both_stores(sample: Path, store_env: dict[str, str]) -> None:
    def mk(agent: str, *args: str, code: int = 0) -> dict[str, Any]:
        done = as_agent(sample, store_env, agent, *args)
        assert done.code == code, done.stdout + done.stderr
        return done.json

    base = git(sample, "rev-parse", "HEAD")
    c1 = mk("a", "claim", "src/inventory/", "--objective", "retry", "--memory", "CLAUDE.md#build",
            "--tests", "tests/test_retry.py")  # fmt: skip
    assert (c1["base"], c1["rev"], c1["memory"]) == (base, 1, ["CLAUDE.md#inventory-service/build"])
    c2 = mk("b", "claim", "docs/")
    # a scope change onto b's claim is busy, and changes nothing
    hit = mk("a", "claim", "scope", str(c1["id"]), "--add", "docs/runbook.md", code=5)
    assert hit["holders"][0]["id"] == c2["id"]
    assert mk("a", "claim", "show", str(c1["id"]))["rev"] == 1
    wider = mk("a", "claim", "scope", str(c1["id"]), "--add", "README.md", "--expect-rev", "1")
    assert (wider["rev"], wider["targets"]) == (2, ["src/inventory/", "README.md"])
    stale = mk("a", "claim", "scope", str(c1["id"]), "--add", "AGENTS.md", "--expect-rev", "1",
               code=3)  # fmt: skip
    assert (stale["reason"], stale["current"]["rev"]) == ("stale_revision", 2)

    # real work in git, then completion: a failing check refuses it
    (sample / "src" / "inventory" / "retry.py").write_text("RETRIES = 3\n")
    git(sample, "add", "-A")
    git(sample, "commit", "-qm", "retry")
    head = git(sample, "rev-parse", "HEAD")
    failed = mk("a", "complete", str(c1["id"]), "--verify", "echo nope; exit 1", code=6)
    assert failed["violations"][0]["rule"] == "verify"
    assert mk("a", "claim", "show", str(c1["id"]))["state"] == "active"
    report = sample.parent / "report.json"
    report.write_text(json.dumps({"tests": "passed"}))
    done = mk("a", "complete", str(c1["id"]), "--verify", "test -f src/inventory/retry.py",
              "--evidence", str(report), "--expect-rev", "2")  # fmt: skip
    proof = done["evidence"]
    assert done["state"] == "completed"
    assert proof["verified"]["head"] == head
    assert proof["verified"]["changed"] == ["src/inventory/retry.py"]
    assert "1 file changed" in proof["verified"]["diffstat"]
    assert proof["verified"]["checks"][0]["passed"] is True
    assert proof["reported"]["self_reported"] is True

    # b abandons; a takeover inside the grace period is refused
    gone = mk("b", "abandon", str(c2["id"]), "--reason", "blocked on the schema")
    assert (gone["state"], gone["evidence"]["verified"]["head"]) == ("abandoned", head)
    early = mk("d", "takeover", str(c2["id"]), code=2)
    assert early["reason"] == "grace"

    # c's claim expires
    c3 = mk("c", "claim", "src/db/", "--ttl", "2")
    deadline = time.monotonic() + 20
    while mk("c", "claim", "show", str(c3["id"]))["state"] != "expired":
        mk("c", "claims")  # a lease operation sweeps what has expired
        assert time.monotonic() < deadline, "the claim never expired"
        time.sleep(0.5)
    time.sleep(GRACE_S + 0.5)
    mk("d", "takeover", str(c3["id"]), "--expect-rev", "1", code=3)
    taken = mk("d", "takeover", str(c3["id"]), "--expect-rev", "2")
    assert list(taken)[:2] == ["status", "predecessor"]  # the predecessor's record first
    assert taken["predecessor"]["state"] == "taken-over"
    assert taken["token"] > c3["token"]
    after = mk("d", "takeover", str(c2["id"]))
    assert after["predecessor"]["reason"] == "blocked on the schema"
    assert after["predecessor"]["evidence"]["verified"]["checks"] == []

    lines = as_agent(sample, store_env, "a", "events", "--type", "claim.*").stdout.splitlines()
    types = {json.loads(line)["type"] for line in lines}
    assert types >= {
        "claim.granted", "claim.scoped", "claim.completed", "claim.abandoned", "claim.expired",
        "claim.taken-over",
    }  # fmt: skip
    states = {r["id"]: r["state"] for r in mk("a", "claims", "--all")["records"]}
    assert states[c1["id"]] == "completed"
    assert states[c2["id"]] == states[c3["id"]] == "taken-over"
