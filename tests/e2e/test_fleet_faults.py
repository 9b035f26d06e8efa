"""A fleet's store under faults (issue 12, item 4): a three-member etcd cluster that loses a
member (the leader) mid-run, one that loses its quorum, and a claim holder frozen past its TTL.
No acknowledged patch is lost, no rev is handed out twice, a failed write changes no file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memkeeper.store.etcd.gateway import Gateway
from tests.conftest import SAMPLE_REPO, run_cli
from tests.etcd_cluster import Cluster, Member, binary

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)
REF = "CLAUDE.md#build"
# Patches per writer: 4 writers, the leader killed once the first few have landed.
EACH = 40


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    started = Cluster(tmp_path / "etcd", size=3).start()
    yield started
    started.stop()


def roots(tmp_path: Path) -> tuple[Path, Path]:
    made = []
    for name in ("a", "b"):
        root = tmp_path / name
        subprocess.run(["cp", "-r", str(SAMPLE_REPO), str(root)], check=True)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        made.append(root)
    return made[0], made[1]


def url(cluster: Cluster, prefix: str) -> str:
    return "etcd://" + ",".join(f"{h}:{p}" for h, p in cluster.endpoints) + f"/{prefix}"


def env(store: str, agent: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
    return {**base, "MEMKEEPER_STORE": store, "MEMKEEPER_AGENT": agent}


def leader(cluster: Cluster) -> Member:
    for member in cluster.members:
        if member.process is None:
            continue
        gateway = Gateway([member.endpoint])
        try:
            status = gateway.status()
        finally:
            gateway.close()
        if status.get("leader") == status.get("header", {}).get("member_id"):
            return member
    raise AssertionError("no leader")


WORKER = """
import json, sys, time
from memkeeper import Conflict, Memory
from memkeeper.errors import EnvironmentFailure
name, count = sys.argv[1], int(sys.argv[2])
memory = Memory.open(agent=name)
acknowledged, unavailable = [], 0
for n in range(count):
    line = f"- {name} {n}\\n"
    while True:
        try:
            section = memory.read("CLAUDE.md#build")
            if line in section.content:  # an answer lost to the failover: it did land
                break
            done = memory.patch("CLAUDE.md#build", section.content + line, expect_rev=section.rev)
            acknowledged.append([line, done.rev])
            break
        except Conflict:
            continue
        except EnvironmentFailure as failure:
            assert failure.reason == "store_unavailable", failure
            unavailable += 1
            time.sleep(0.1)
print(json.dumps({"acknowledged": acknowledged, "unavailable": unavailable}))
"""


def test_a_three_member_cluster_losing_its_leader_loses_no_acknowledged_patch(
    tmp_path: Path, cluster: Cluster
) -> None:
    a, b = roots(tmp_path)
    store = url(cluster, "failover")
    start = run_cli(a, "read", REF, "--json", env=env(store, "x")).json["rev"]
    run_cli(b, "read", REF, "--json", env=env(store, "x"))
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, f"{root.name}{n}", str(EACH)],
            cwd=root,
            env=env(store, f"{root.name}{n}"),
            stdout=subprocess.PIPE,
            text=True,
        )
        for root in (a, b)
        for n in range(2)
    ]
    try:
        # The fault comes mid-run, whatever the machine's speed: after a few patches landed.
        while run_cli(a, "read", REF, "--json", env=env(store, "x")).json["rev"] < start + 4:
            time.sleep(0.05)
        killed = leader(cluster)
        cluster.kill(killed)
        assert all(w.poll() is None for w in workers), "the run ended before the fault: raise EACH"
        results: list[dict[str, Any]] = []
        for worker in workers:
            out, _ = worker.communicate(timeout=300)
            assert worker.returncode == 0, out
            results.append(json.loads(out))
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
            worker.communicate()
    acknowledged = [tuple(pair) for r in results for pair in r["acknowledged"]]
    revs = [rev for _, rev in acknowledged]
    assert len(set(revs)) == len(revs), "a rev was handed out twice"
    final = run_cli(a, "read", REF, "--json", env=env(store, "x")).json
    lines = final["content"].splitlines(keepends=True)
    for line, _ in acknowledged:
        assert lines.count(line) == 1, line
    expected = {f"- {root}{n} {i}\n" for root in "ab" for n in range(2) for i in range(EACH)}
    assert {line for line in lines if line.startswith("- ") and line in expected} == expected
    assert final["rev"] == start + 4 * EACH
    run_cli(b, "read", REF, "--json", env=env(store, "x"))
    assert (a / "CLAUDE.md").read_bytes() == (b / "CLAUDE.md").read_bytes()
    cluster.start_member(killed)
    cluster.wait_healthy()
    for root in (a, b):
        assert run_cli(root, "verify", "--json", env=env(store, "x")).code == 0


def test_without_quorum_writes_fail_unavailable_and_no_file_changes(
    tmp_path: Path, cluster: Cluster
) -> None:
    a, b = roots(tmp_path)
    store = url(cluster, "quorum")
    section = run_cli(a, "read", REF, "--json", env=env(store, "x")).json
    run_cli(b, "read", REF, "--json", env=env(store, "x"))
    before = {root: (root / "CLAUDE.md").read_bytes() for root in (a, b)}
    for member in cluster.members[:2]:
        cluster.kill(member)
    for root in (a, b):
        args = ("patch", REF, "--expect-rev", str(section["rev"]), "--body-file", "-", "--json")
        done = run_cli(root, *args, stdin="x\n", env=env(store, "x"))
        assert done.code == 1, done
        assert done.json["reason"] == "store_unavailable"
        claim = run_cli(root, "claim", "src/", "--json", env=env(store, "x"))
        assert claim.code == 1
        assert claim.json["reason"] == "store_unavailable"
    for root in (a, b):
        assert (root / "CLAUDE.md").read_bytes() == before[root]
    for member in cluster.members[:2]:
        cluster.start_member(member)
    cluster.wait_healthy()
    fresh = run_cli(a, "read", REF, "--json", env=env(store, "x")).json
    assert fresh["rev"] == section["rev"]


HOLDER = """
import json, sys
from memkeeper import Memory, MemkeeperError
memory = Memory.open(agent="frozen")
claim = memory.claim(["CLAUDE.md#build"], ttl=1, strict=True)
print(json.dumps({"id": claim.id, "token": claim.token}), flush=True)
sys.stdin.readline()  # frozen (SIGSTOP) here, past the TTL
section = memory.read("CLAUDE.md#build")
try:
    memory.patch("CLAUDE.md#build", "late\\n", expect_rev=section.rev, claim=claim.id)
    print(json.dumps({"status": "ok"}), flush=True)
except MemkeeperError as exc:
    print(json.dumps(exc.to_json()), flush=True)
"""


def test_a_holder_frozen_past_its_ttl_cannot_land_a_claimed_write(
    tmp_path: Path, cluster: Cluster
) -> None:
    a, b = roots(tmp_path)
    store = url(cluster, "frozen")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER], cwd=a, env=env(store, "frozen"),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdin is not None
    assert holder.stdout is not None
    claim = json.loads(holder.stdout.readline())
    holder.send_signal(signal.SIGSTOP)
    time.sleep(2.0)  # its 1 s TTL runs out while it cannot renew
    taken = run_cli(b, "claim", "CLAUDE.md#build", "--strict", "--json", env=env(store, "b"))
    assert taken.code == 0, taken
    assert taken.json["token"] > claim["token"]
    before = run_cli(b, "read", REF, "--json", env=env(store, "b")).json
    holder.send_signal(signal.SIGCONT)
    holder.stdin.write("go\n")
    holder.stdin.flush()
    answer = json.loads(holder.stdout.readline())
    holder.wait(timeout=30)
    holder.stdin.close()
    holder.stdout.close()
    assert answer["status"] == "refused"
    after = run_cli(b, "read", REF, "--json", env=env(store, "b")).json
    assert after["rev"] == before["rev"]
    assert "late" not in (a / "CLAUDE.md").read_text()


def test_a_port_taken_before_etcd_binds_it_starts_the_cluster_again_on_new_ports(
    tmp_path: Path,
) -> None:
    """The test harness's own fault (seen in CI): another process took a member's port
    between ``free_port`` and etcd's bind. The cluster starts again on new ports, and the
    members of the failed try are stopped — none left running, no ``Popen`` left to warn."""
    import socket

    cluster = Cluster(tmp_path / "etcd", size=2)
    taken = cluster.members[1].client
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        cluster.start()
        try:
            assert taken not in (m.client for m in cluster.members)
            assert all(m.healthy() for m in cluster.members)
            assert "address already in use" in (tmp_path / "etcd/m1/etcd.log").read_text()
        finally:
            cluster.stop()
