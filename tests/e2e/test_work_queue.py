"""The work queue's acceptance, on the local SQLite store and on a real etcd: eight worker
processes take fifty items with dependencies, priorities and overlapping paths through
``work next`` and finish them with ``work done``, while one of them is SIGKILLed holding an
item. Then, from the hash-chained event log alone: every item was done exactly once; no
claim was ever granted while another agent's live claim overlapped it; and every
``work.claimed`` took the item an oracle of the test's own picks at that point of the log (the
highest-priority, then oldest, ready item whose paths no other agent's live claim overlapped
— so dependencies and priority held). The
killed worker's item came back after its claim's TTL (``work.returned``, ``expired``) and was
done by another, and the killed worker's late ``done`` is refused (exit 4)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper import Memory
from memkeeper.claims import decisions as claim_rules
from tests.conftest import MEMKEEPER, run_cli
from tests.etcd_cluster import Cluster, binary

if TYPE_CHECKING:
    from pathlib import Path

    from memkeeper.records import Event
    from memkeeper.work.items import Item

EXE, WHY = binary()
STORES = ["sqlite", pytest.param("etcd", marks=pytest.mark.skipif(EXE is None, reason=WHY))]
_prefixes = itertools.count(1)
TTL = 4.0  # the killed worker's item comes back this long after it was taken

WORKER = textwrap.dedent(
    """
    import json, sys, time
    from memkeeper import Memory
    from memkeeper.errors import Busy, MemkeeperError

    root, agent, doomed, ttl = sys.argv[1], sys.argv[2], sys.argv[3] == "1", float(sys.argv[4])
    memory = Memory.open(root, agent=agent)
    while True:
        try:
            item, claim = memory.work.next(ttl=ttl, wait=5)
        except Busy as busy:
            if not busy.fields["open"] and not busy.fields["claimed"]:
                break
            continue
        print(json.dumps({"item": item.id, "claim": claim.id}), flush=True)
        if doomed:
            time.sleep(600)  # killed here, mid-item
        time.sleep(0.002)
        try:
            memory.work.done(item.id, claim=claim.id)
        except MemkeeperError as lost:  # its claim ended under load: the item was returned
            print(json.dumps({"lost": item.id, "why": lost.message}), flush=True)
    memory.close()
    """
)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, sample: Path) -> dict[str, str]:
    """The environment naming the test's store: the local one, or a fresh etcd prefix."""
    subprocess.run([MEMKEEPER, "init"], cwd=sample, check=True, capture_output=True)
    if request.param == "sqlite":
        return {}
    cluster: Cluster = request.getfixturevalue("cluster")
    return cluster.store_env(f"work{next(_prefixes)}")


def plan(n: int) -> dict[str, Any]:
    """Item ``n``: six areas, some items on two (overlapping the next area's),
    some on a shared directory, some on none; every fifth after an earlier one."""
    paths = [] if n % 13 == 0 else [f"src/m{n % 6}/"]
    paths += [f"src/m{(n + 1) % 6}/x.py"] if n % 4 == 0 else []
    paths += ["src/"] if n % 17 == 0 else []
    after = ([n - 6] if n % 5 == 0 and n > 6 else []) + ([n - 1] if n % 11 == 0 else [])
    return {"paths": paths, "priority": (n * 7) % 5, "after": after}


def spawn(
    sample: Path, env: dict[str, str], agent: str, ttl: float, doomed: bool
) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")} | env
    argv = [sys.executable, "-c", WORKER, str(sample), agent, "1" if doomed else "0", str(ttl)]
    pipe = subprocess.PIPE
    return subprocess.Popen(argv, env=full, stdout=pipe, stderr=pipe, text=True)


def test_eight_workers_do_fifty_items_each_once_in_order_one_killed_midway(
    sample: Path, store: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_queue(sample, store, monkeypatch, 50)


@pytest.mark.slow
def test_eight_workers_do_four_hundred_items_each_once_in_order_one_killed_midway(
    sample: Path, store: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_queue(sample, store, monkeypatch, 400, ttl=15.0, patience=900)


def run_queue(
    sample: Path,
    store: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    count: int,
    ttl: float = TTL,
    patience: float = 120,
) -> None:
    """``count`` items (``plan``) done by eight workers, one killed holding its first; the
    work claims' ``ttl``; how long the workers may take, each (``patience``)."""
    for name, value in store.items():
        monkeypatch.setenv(name, value)
    planner = Memory.open(sample, agent="planner")
    try:
        for n in range(1, count + 1):
            planner.work.add(f"item {n}", **plan(n))
        doomed = spawn(sample, store, "w0", ttl, doomed=True)
        assert doomed.stdout is not None
        taken = json.loads(doomed.stdout.readline())
        workers = [spawn(sample, store, f"w{k}", ttl, doomed=False) for k in range(1, 8)]
        doomed.send_signal(signal.SIGKILL)
        doomed.communicate()
        for worker in workers:
            _, err = worker.communicate(timeout=patience)
            assert worker.returncode == 0, err
        late = run_cli(sample, "work", "done", str(taken["item"]), "--claim", taken["claim"],
                       "--agent", "w0", env=store)  # fmt: skip
        assert late.code == 4, late.stderr
        assert "only the holder of its live claim may complete it" in late.stderr
        items = {i.id: i for i in planner.work.list()}
        events = planner.events()
    finally:
        planner.close()
    assert [i.state for i in items.values()] == ["done"] * count
    done = [e.data["id"] for e in events if e.type == "work.done"]
    assert sorted(done) == list(range(1, count + 1)), "every item done exactly once"
    returned = [(e.data["id"], e.data["reason"]) for e in events if e.type == "work.returned"]
    assert (taken["item"], "expired") in returned
    assert items[taken["item"]].agent != "w0"
    replay(items, events)


def replay(items: dict[int, Item], events: list[Event]) -> None:
    """Walk the log: no grant overlaps another agent's live claim, and each ``work.claimed``
    took the first ready item by priority then age whose paths no other agent's live claim
    overlapped, as the log had the items and the claims then."""
    state = dict.fromkeys(items, "open")
    live: dict[str, claim_rules.Request] = {}
    granted: claim_rules.Request | None = None
    moves = {"work.done": "done", "work.returned": "open", "work.failed": "failed"}
    for e in events:
        if e.type == "claim.granted":
            d = e.data
            granted = claim_rules.make_request(
                d["id"], e.actor, d["targets"], mode=d["mode"], ttl=60, arrival=1
            )
            clash = [c.id for c in live.values() if claim_rules.conflicts(c, granted)]
            assert not clash, f"{d['id']} of {e.actor} granted over {clash}"
            live[d["id"]] = granted
        elif e.type.startswith("claim.") and e.type != "claim.queued":
            live.pop(e.data["id"], None)
        elif e.type == "work.claimed":
            assert granted is not None
            assert granted.id == e.data["claim"]
            others = [c for c in live.values() if c.id != granted.id and c.agent != e.actor]
            free = [
                i for i in items.values()
                if state[i.id] == "open" and all(state[d] == "done" for d in i.after)
                and not any(claim_rules.conflicts(c, _ask(i, e.actor)) for c in others)
            ]  # fmt: skip
            first = min(free, key=lambda i: (-i.priority, i.created_at, i.id))
            assert first.id == e.data["id"], f"{e.actor} took {e.data['id']}, not {first.id}"
            state[e.data["id"]] = "claimed"
        elif e.type in moves:
            state[e.data["id"]] = moves[e.type]


def _ask(item: Item, agent: str) -> claim_rules.Request:
    """What taking ``item`` claims: its paths, or its own path under the home."""
    targets = item.paths or (f".memkeeper/work/{item.id}",)
    return claim_rules.make_request("ask", agent, targets, ttl=60, arrival=1)
