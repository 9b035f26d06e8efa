"""Fleets across machines (issue 12, docs/reference.md §12): two roots — two clones of one
repository — sharing one etcd store through ``MEMKEEPER_STORE``, driven through the real CLI in
subprocesses. The same section's revisions, one claim table and one event chain for both; each
root's files brought up to date from the store; a hand edit under one root pushed, merged, or —
where both sides changed one section — kept and reconciled, never lost."""

from __future__ import annotations

import functools
import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest

from tests.conftest import MEMKEEPER, SAMPLE_REPO, Run, run_cli
from tests.etcd_cluster import Cluster, binary, free_port

EXE, WHY = binary()
pytestmark = pytest.mark.skipif(EXE is None, reason=WHY)
REF = "CLAUDE.md#build"
_prefixes = itertools.count(1)


class Fleet:
    """Two clones of one repository, ``a`` and ``b``, sharing one store (``url``)."""

    def __init__(self, a: Path, b: Path, url: str) -> None:
        self.a, self.b, self.url = a, b, url

    def env(self, agent: str) -> dict[str, str]:
        return {"MEMKEEPER_STORE": self.url, "MEMKEEPER_AGENT": agent}

    def run(self, root: Path, *args: str, agent: str = "human", stdin: str | None = None) -> Run:
        return run_cli(root, *args, stdin=stdin, env=self.env(agent))

    def spawn(self, root: Path, argv: list[str], agent: str, **options: Any) -> Popen[str]:
        """``argv`` running under ``root`` as ``agent`` on the fleet's store (text pipes)."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}
        env = {**base, **self.env(agent)}
        return subprocess.Popen(argv, cwd=root, env=env, text=True, **options)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def two_clones(tmp_path: Path) -> tuple[Path, Path]:
    """Clones ``a`` and ``b`` under ``tmp_path`` of a repository made of the sample, committed
    once (``origin``)."""
    origin = tmp_path / "origin"
    subprocess.run(["cp", "-r", str(SAMPLE_REPO), str(origin)], check=True)
    _git(origin, "init", "-q")
    _git(origin, "add", "-A")
    _git(origin, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    for name in ("a", "b"):
        _git(tmp_path, "clone", "-q", str(origin), name)
    return tmp_path / "a", tmp_path / "b"


@pytest.fixture
def fleet(tmp_path: Path, cluster: Cluster) -> Fleet:
    host, port = cluster.endpoints[0]
    return Fleet(*two_clones(tmp_path), f"etcd://{host}:{port}/fleet{next(_prefixes)}")


def events(fleet: Fleet, root: Path) -> list[dict[str, Any]]:
    done = fleet.run(root, "events", "--json")
    assert done.code == 0, done
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def read(fleet: Fleet, root: Path, ref: str = REF) -> dict[str, object]:
    done = fleet.run(root, "read", ref, "--json")
    assert done.code == 0, done
    return done.json


def patch(fleet: Fleet, root: Path, body: str, rev: object, agent: str = "agent") -> Run:
    args = ("patch", REF, "--expect-rev", str(rev), "--body-file", "-", "--json")
    return fleet.run(root, *args, agent=agent, stdin=body)


def test_status_names_the_shared_store(fleet: Fleet) -> None:
    done = fleet.run(fleet.a, "status", "--json")
    assert done.code == 0
    store = done.json["store"]
    assert store["kind"] == "etcd"
    assert store["path"] == fleet.url
    assert store["prefix"] == "/" + fleet.url.rsplit("/", 1)[1] + "/"
    assert "store: etcd (etcd://" in fleet.run(fleet.a, "status").stdout


def test_a_patch_under_one_root_is_in_the_other_roots_file_at_its_next_command(
    fleet: Fleet,
) -> None:
    first = read(fleet, fleet.a)
    done = patch(fleet, fleet.a, f"{first['content']}- from a\n", first["rev"], "agent-a")
    assert done.code == 0, done
    assert "- from a" in (fleet.a / "CLAUDE.md").read_text()
    assert "- from a" not in (fleet.b / "CLAUDE.md").read_text()  # nothing runs under b yet
    seen = read(fleet, fleet.b)
    assert seen["rev"] == done.json["rev"]
    assert "- from a" in str(seen["content"])
    assert (fleet.b / "CLAUDE.md").read_bytes() == (fleet.a / "CLAUDE.md").read_bytes()
    again = patch(fleet, fleet.b, f"{seen['content']}- from b\n", seen["rev"], "agent-b")
    assert again.code == 0, again
    stale = patch(fleet, fleet.a, f"{first['content']}- late\n", first["rev"], "agent-a")
    assert stale.code == 3
    assert stale.json["current"]["rev"] == again.json["rev"]
    assert "- from b" in (fleet.a / "CLAUDE.md").read_text()  # brought up to date first
    for root in (fleet.a, fleet.b):
        assert fleet.run(root, "verify", "--json").code == 0
        assert fleet.run(root, "check", "--json").code == 0
    found = events(fleet, fleet.b)
    patched = [(e["actor"], e["type"]) for e in found if e["type"] == "section.patched"]
    assert patched == [("agent-a", "section.patched"), ("agent-b", "section.patched")]


WORKER = """
import json, subprocess, sys
memkeeper, ref, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
retries = 0
for n in range(count):
    while True:
        read = subprocess.run([memkeeper, "read", ref, "--json"], capture_output=True, text=True)
        section = json.loads(read.stdout)
        body = section["content"] + f"- {name} {n}\\n"
        done = subprocess.run(
            [memkeeper, "patch", ref, "--expect-rev", str(section["rev"]), "--body-file", "-",
             "--json"], input=body, capture_output=True, text=True,
        )
        if done.returncode == 0:
            break
        assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
        retries += 1
print(retries)
"""


def test_three_writers_under_each_of_two_roots_lose_no_update_of_one_section(
    fleet: Fleet,
) -> None:
    """The acceptance race: 3 processes under each root, 6 read-then-patch loops each, on ONE
    section, each retrying on exit 3 — every update once, rev + 36, one file in both."""
    start = read(fleet, fleet.a)
    read(fleet, fleet.b)
    workers = []
    for root, tag in ((fleet.a, "a"), (fleet.b, "b")):
        for n in range(3):
            argv = [sys.executable, "-c", WORKER, MEMKEEPER, REF, f"{tag}{n}", "6"]
            workers.append(fleet.spawn(root, argv, f"agent-{tag}{n}", stdout=subprocess.PIPE))
    for worker in workers:
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == 0, out
    end = read(fleet, fleet.a)
    assert end["rev"] == int(str(start["rev"])) + 36
    lines = str(end["content"]).splitlines()
    for tag, n, i in itertools.product("ab", range(3), range(6)):
        assert lines.count(f"- {tag}{n} {i}") == 1, (tag, n, i)
    read(fleet, fleet.b)
    assert (fleet.a / "CLAUDE.md").read_bytes() == (fleet.b / "CLAUDE.md").read_bytes()
    for root in (fleet.a, fleet.b):
        assert fleet.run(root, "verify", "--json").code == 0


def test_a_claim_under_one_root_makes_the_other_roots_claim_busy(fleet: Fleet) -> None:
    held = fleet.run(fleet.a, "claim", "src/", "--ttl", "60", "--json", agent="agent-a")
    assert held.code == 0, held
    busy = fleet.run(fleet.b, "claim", "src/inventory/", "--json", agent="agent-b")
    assert busy.code == 5
    assert [h["agent"] for h in busy.json["holders"]] == ["agent-a"]
    other = fleet.run(fleet.b, "claim", "docs/", "--json", agent="agent-b")
    assert other.code == 0
    assert other.json["token"] > held.json["token"]
    listed = fleet.run(fleet.b, "claims", "--json").json["claims"]
    assert {c["agent"] for c in listed} == {"agent-a", "agent-b"}
    released = fleet.run(fleet.a, "release", held.json["id"], "--json", agent="agent-a")
    assert released.code == 0
    taken = fleet.run(fleet.b, "claim", "src/inventory/", "--json", agent="agent-b")
    assert taken.code == 0
    assert taken.json["token"] > other.json["token"]


HOLDER = """
import sys, time
from memkeeper import Memory
memory = Memory.open(agent="agent-a")
claim = memory.claim(["src/"], ttl=2)
print(claim.id, claim.token, flush=True)
time.sleep(600)
"""


def test_a_killed_holders_claim_expires_for_both_roots_within_its_ttl(fleet: Fleet) -> None:
    holder = fleet.spawn(fleet.a, [sys.executable, "-c", HOLDER], "agent-a", stdout=subprocess.PIPE)
    assert holder.stdout is not None
    claim_id, token = holder.stdout.readline().split()
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    killed = time.monotonic()
    assert fleet.run(fleet.b, "claim", "src/", "--json", agent="agent-b").code == 5
    for root in (fleet.b, fleet.a):
        while True:
            done = fleet.run(root, "claim", "src/x/", "--json", agent=f"agent-{root.name}2")
            if done.code == 0:
                break
            assert done.code == 5
            assert time.monotonic() - killed < 2 + 1, "still held after TTL + 1 s"
            time.sleep(0.1)
        assert done.json["token"] > int(token)
        fleet.run(root, "release", done.json["id"], "--json", agent=f"agent-{root.name}2")
    found = events(fleet, fleet.a)
    assert any(e["type"] == "claim.expired" and e["data"].get("id", claim_id) for e in found)


def test_a_hand_edit_under_one_root_is_pushed_to_the_store_and_reaches_the_other(
    fleet: Fleet,
) -> None:
    read(fleet, fleet.a)
    read(fleet, fleet.b)
    path = fleet.b / "CLAUDE.md"
    path.write_text(path.read_text().replace("## Testing\n", "## Testing\n\n- b's human\n", 1))
    read(fleet, fleet.b, "CLAUDE.md#testing")  # b's next command pushes its edit
    seen = read(fleet, fleet.a, "CLAUDE.md#testing")
    assert "- b's human" in str(seen["content"])
    assert "- b's human" in (fleet.a / "CLAUDE.md").read_text()
    found = events(fleet, fleet.a)
    assert [e["type"] for e in found].count("section.external_edit") == 1


def test_edits_of_different_sections_on_both_sides_merge(fleet: Fleet) -> None:
    first = read(fleet, fleet.a)
    read(fleet, fleet.b)
    assert patch(fleet, fleet.a, f"{first['content']}- a's patch\n", first["rev"]).code == 0
    path = fleet.b / "CLAUDE.md"
    path.write_text(path.read_text().replace("## Testing\n", "## Testing\n\n- b's human\n", 1))
    fleet.run(fleet.b, "status", "--json")
    read(fleet, fleet.b, "CLAUDE.md#testing")
    text = path.read_text()
    assert "- a's patch" in text
    assert "- b's human" in text
    read(fleet, fleet.a, "CLAUDE.md#testing")
    assert (fleet.a / "CLAUDE.md").read_bytes() == path.read_bytes()
    assert fleet.run(fleet.b, "check", "--json").code == 0


def test_both_sides_changing_one_section_keep_the_local_text_and_open_a_reconciliation(
    fleet: Fleet,
) -> None:
    first = read(fleet, fleet.a)
    read(fleet, fleet.b)
    assert patch(fleet, fleet.a, f"{first['content']}- a's patch\n", first["rev"]).code == 0
    path = fleet.b / "CLAUDE.md"
    mine = path.read_text().replace("`make build`", "`make wheel`", 1)
    path.write_text(mine)
    refused = patch(fleet, fleet.b, "x\n", 99)
    assert refused.code == 4
    assert refused.json["reason"] == "diverged"
    assert path.read_text() == mine  # the local text stays
    listed = fleet.run(fleet.b, "reconcile", "list", "--json").json["reconciliations"]
    (rec,) = listed
    assert rec["path"] == "CLAUDE.md"
    assert rec["region"].startswith("store:")
    assert fleet.run(fleet.b, "check", "--json").code == 6  # b's check fails …
    assert fleet.run(fleet.a, "check", "--json").code == 0  # … a's does not
    a_before = (fleet.a / "CLAUDE.md").read_bytes()
    bad = fleet.run(fleet.b, "reconcile", "resolve", str(rec["id"]), "--keep-human", "--json")
    assert bad.code == 2
    assert "--keep-local" in bad.json["message"]
    done = fleet.run(fleet.b, "reconcile", "resolve", str(rec["id"]), "--keep-local", "--json")
    assert done.code == 0, done
    assert path.read_text() == mine
    assert fleet.run(fleet.b, "check", "--json").code == 0
    seen = read(fleet, fleet.a)
    assert "`make wheel`" in str(seen["content"])
    assert "- a's patch" not in str(seen["content"])
    assert (fleet.a / "CLAUDE.md").read_bytes() == path.read_bytes() != a_before


def test_take_store_replaces_the_local_copy_with_the_stores(fleet: Fleet) -> None:
    first = read(fleet, fleet.a)
    read(fleet, fleet.b)
    assert patch(fleet, fleet.a, f"{first['content']}- a's patch\n", first["rev"]).code == 0
    path = fleet.b / "CLAUDE.md"
    path.write_text(path.read_text().replace("`make build`", "`make wheel`", 1))
    fleet.run(fleet.b, "status", "--json")
    (rec,) = fleet.run(fleet.b, "reconcile", "list", "--json").json["reconciliations"]
    shown = fleet.run(fleet.b, "reconcile", "show", str(rec["id"]), "--json")
    assert "make wheel" in shown.json["diff"]
    done = fleet.run(fleet.b, "reconcile", "resolve", str(rec["id"]), "--take-store", "--json")
    assert done.code == 0, done
    assert path.read_bytes() == (fleet.a / "CLAUDE.md").read_bytes()
    assert "- a's patch" in path.read_text()
    assert fleet.run(fleet.b, "check", "--json").code == 0


def test_a_checkout_of_an_older_version_is_brought_up_to_date_not_pushed(fleet: Fleet) -> None:
    first = read(fleet, fleet.a)
    assert patch(fleet, fleet.a, f"{first['content']}- one\n", first["rev"]).code == 0
    _git(fleet.a, "checkout", "--", "CLAUDE.md")  # git brings the committed (older) version
    assert "- one" not in (fleet.a / "CLAUDE.md").read_text()
    seen = read(fleet, fleet.a)
    assert "- one" in str(seen["content"])
    assert "- one" in (fleet.a / "CLAUDE.md").read_text()
    found = events(fleet, fleet.a)
    assert "section.external_edit" not in [e["type"] for e in found]


def test_a_file_another_root_created_is_created_here_by_a_command_on_it(fleet: Fleet) -> None:
    entry = "## 2026-12-01 ship it\n\nWe ship.\n"
    done = fleet.run(fleet.a, "append", "memory/decisions.md", "--text", entry, "--json")
    assert done.code == 0, done
    (fleet.b / "memory" / "decisions.md").unlink()
    _git(fleet.b, "rm", "-q", "--cached", "memory/decisions.md")
    fresh = fleet.b / "memory" / "decisions.md"
    assert not fresh.exists()
    # b never had a mark of it (first look): the store's version comes in
    done = fleet.run(fleet.b, "append", "memory/decisions.md", "--text", entry, "--json")
    assert done.code == 0, done
    assert fresh.read_text().count("ship it") == 2


def test_with_the_store_down_writes_fail_and_change_nothing(fleet: Fleet, tmp_path: Path) -> None:
    read(fleet, fleet.a)
    before = (fleet.a / "CLAUDE.md").read_bytes()
    down = Fleet(fleet.a, fleet.b, f"etcd://127.0.0.1:{free_port()}/nobody")
    done = patch(down, fleet.a, "x\n", 1)
    assert done.code == 1
    assert done.json["status"] == "error"
    assert done.json["reason"] == "store_unavailable"
    assert (fleet.a / "CLAUDE.md").read_bytes() == before
    stale = down.run(fleet.a, "read", REF, "--json")
    assert stale.code == 0
    assert stale.json["stale"] is True
    assert "make build" in stale.json["content"]


def test_parallel_roots_keep_one_event_chain(fleet: Fleet) -> None:
    def emit(root: Path, n: int) -> int:
        data = json.dumps({"n": n})
        return fleet.run(root, "emit", "task.done", "--data", data, "--json").code

    with ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(emit, [fleet.a, fleet.b] * 6, range(12)))
    assert codes == [0] * 12
    found = events(fleet, fleet.a)
    assert [e["id"] for e in found] == list(range(1, 13))
    assert all(e["prev"] == p["hash"] for p, e in itertools.pairwise(found))
    assert fleet.run(fleet.b, "verify", "--json").code == 0


class Watch:
    """``memkeeper watch --json`` under one root of a fleet, its lines on a queue."""

    def __init__(self, fleet: Fleet, root: Path) -> None:
        argv = [MEMKEEPER, "watch", "--json"]
        options = {"stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
        self.proc = fleet.spawn(root, argv, "daemon", **options)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def wait_for(self, action: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if line["action"] == action:
                return line

    def close(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _holds(path: Path, text: str) -> bool:
    return text in path.read_text()


def until(check: Callable[[], bool], timeout: float) -> float:
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, "timed out"
        time.sleep(0.005)
    return time.monotonic() - start


def test_watch_brings_other_roots_patches_into_this_roots_files(fleet: Fleet) -> None:
    read(fleet, fleet.a)
    read(fleet, fleet.b)
    watch = Watch(fleet, fleet.b)
    try:
        watch.wait_for("started")
        target = fleet.b / "CLAUDE.md"
        for n in range(3):
            section = read(fleet, fleet.a)
            line = f"- from a {n}\n"
            assert patch(fleet, fleet.a, f"{section['content']}{line}", section["rev"]).code == 0
            took = until(functools.partial(_holds, target, line), timeout=10)
            assert took < 2.0  # bench/fleet.py measures the figure (goal: 1 s)
            watch.wait_for("synced")
        assert target.read_bytes() == (fleet.a / "CLAUDE.md").read_bytes()
        assert fleet.run(fleet.b, "verify", "--json").code == 0
    finally:
        watch.close()


def test_watch_survives_the_store_going_away_and_catches_up(tmp_path: Path) -> None:
    own = Cluster(tmp_path / "etcd").start()
    try:
        host, port = own.endpoints[0]
        fleet = Fleet(tmp_path / "a", tmp_path / "b", f"etcd://{host}:{port}/outage")
        for root in (fleet.a, fleet.b):
            subprocess.run(["cp", "-r", str(SAMPLE_REPO), str(root)], check=True)
            _git(root, "init", "-q")
        read(fleet, fleet.a)
        read(fleet, fleet.b)
        watch = Watch(fleet, fleet.b)
        try:
            watch.wait_for("started")
            (member,) = own.members
            own.kill(member)
            error = watch.wait_for("error")
            assert "unavailable" in error["detail"]
            own.start_member(member)
            own.wait_healthy()
            watch.wait_for("synced")
            section = read(fleet, fleet.a)
            body = f"{section['content']}- after the outage\n"
            assert patch(fleet, fleet.a, body, section["rev"]).code == 0
            until(lambda: "- after the outage" in (fleet.b / "CLAUDE.md").read_text(), 10)
        finally:
            watch.close()
    finally:
        own.stop()


def test_a_claim_queued_under_one_root_is_granted_when_the_other_releases(fleet: Fleet) -> None:
    held = fleet.run(fleet.a, "claim", "src/", "--ttl", "60", "--json", agent="agent-a")
    assert held.code == 0
    argv = [MEMKEEPER, "claim", "src/", "--wait", "30", "--json"]
    waiter = fleet.spawn(fleet.b, argv, "agent-b", stdout=subprocess.PIPE)
    until(lambda: len(fleet.run(fleet.a, "claims", "--json").json["waiters"]) == 1, 10)
    released = time.monotonic()
    assert fleet.run(fleet.a, "release", held.json["id"], "--json", agent="agent-a").code == 0
    out, _ = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, out
    assert time.monotonic() - released < 2.0  # polled across machines, not the 5 s wake cap
    assert json.loads(out)["token"] > held.json["token"]


def test_verify_under_a_root_behind_the_store_brings_it_up_to_date_first(fleet: Fleet) -> None:
    first = read(fleet, fleet.a)
    read(fleet, fleet.b)
    assert patch(fleet, fleet.b, f"{first['content']}- from b\n", first["rev"]).code == 0
    assert "- from b" not in (fleet.a / "CLAUDE.md").read_text()
    assert fleet.run(fleet.a, "verify", "--json").code == 0
    assert "- from b" in (fleet.a / "CLAUDE.md").read_text()


def test_with_the_store_down_the_gate_still_applies_the_policy(fleet: Fleet) -> None:
    down = Fleet(fleet.a, fleet.b, f"etcd://127.0.0.1:{free_port()}/nobody")
    call = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": str(fleet.a),
        "tool_name": "Write",
        "tool_input": {"file_path": str(fleet.a / "CLAUDE.md"), "content": "x\n"},
    }
    done = down.run(fleet.a, "hook", "claude-code", stdin=json.dumps(call))
    assert done.code == 0
    decision = json.loads(done.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"  # no claims to read: the policy decides


APPENDER = """
import sys
from memkeeper import Memory
name, count = sys.argv[1], int(sys.argv[2])
memory = Memory.open(agent=name)
for n in range(count):
    memory.append("memory/decisions.md", f"## 2026-12-01 {name} decides {n}\\n\\nBecause.\\n")
memory.close()
"""


def test_appends_from_two_roots_at_once_all_land_once_in_both_files(fleet: Fleet) -> None:
    read(fleet, fleet.a, "memory/decisions.md")
    read(fleet, fleet.b, "memory/decisions.md")
    workers = [
        fleet.spawn(
            root, [sys.executable, "-c", APPENDER, f"{root.name}{n}", "5"], f"{root.name}{n}"
        )
        for root in (fleet.a, fleet.b)
        for n in range(2)
    ]
    for worker in workers:
        assert worker.wait(timeout=120) == 0
    read(fleet, fleet.a, "memory/decisions.md")
    read(fleet, fleet.b, "memory/decisions.md")
    text = (fleet.a / "memory" / "decisions.md").read_text()
    assert text == (fleet.b / "memory" / "decisions.md").read_text()
    for tag, n, i in itertools.product("ab", range(2), range(5)):
        assert text.count(f"{tag}{n} decides {i}\n") == 1, (tag, n, i)
    for root in (fleet.a, fleet.b):
        assert fleet.run(root, "check", "--json").code == 0
        assert fleet.run(root, "verify", "--json").code == 0


def test_a_deadlock_across_two_roots_is_broken(fleet: Fleet) -> None:
    """A holds x/ (root a) and B holds y/ (root b); each then queues for the other's: the
    wait-for cycle spans two machines and is broken all the same (one waiter aborted)."""
    x = fleet.run(fleet.a, "claim", "x/", "--ttl", "60", "--json", agent="agent-a")
    y = fleet.run(fleet.b, "claim", "y/", "--ttl", "60", "--json", agent="agent-b")
    assert x.code == 0
    assert y.code == 0
    argv = [MEMKEEPER, "claim", "y/", "--wait", "20", "--json"]
    first = fleet.spawn(fleet.a, argv, "agent-a", stdout=subprocess.PIPE)
    until(lambda: len(fleet.run(fleet.b, "claims", "--json").json["waiters"]) == 1, 10)
    second = fleet.run(fleet.b, "claim", "x/", "--wait", "20", "--json", agent="agent-b")
    assert second.code == 5  # the cycle closed under root b: its request is the one aborted
    assert second.json["reason"] == "deadlock"
    done = fleet.run(fleet.b, "release", y.json["id"], "--json", agent="agent-b")
    assert done.code == 0
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 0, out  # … and root a's waiter gets y/ once it is released
    assert json.loads(out)["targets"] == ["y/"]
    aborted = [e for e in events(fleet, fleet.a) if e["type"] == "claim.aborted"]
    assert [e["data"]["reason"] for e in aborted] == ["deadlock"]


def test_a_first_read_under_a_shared_store_leaves_git_status_clean(fleet: Fleet) -> None:
    read(fleet, fleet.a)  # the store has the file …
    read(fleet, fleet.b)  # … and b's first look finds its copy agrees: only a mark is written
    assert (fleet.b / ".memkeeper" / "synced").is_dir()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=fleet.b, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""  # .memkeeper/ ignores itself
