"""The read side the CLI's listings and the dashboard share (``ops.views``), built from the
store's rows: the store in use, the queue with each waiter's place and blockers, the files
with who changed each section last, one file, one section's history, and the contention audit
paired from ``claim.*`` events — and none of them makes a store where there is none.

Not run on etcd as well (``tests/ops/conftest.py``): the views read through the store's
interface and nothing here is about a backend."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memkeeper.claims.decisions import make_request
from memkeeper.claims.waiters import WaiterRow
from memkeeper.errors import PolicyInvalid, Refused
from memkeeper.events import iso_utc
from memkeeper.names import HOME_DIR, POLICY_FILE, STATE_DB, STORE_ENV
from memkeeper.ops import views
from tests.ops.conftest import START, Agents

if TYPE_CHECKING:
    from memkeeper import Memory
    from memkeeper.clock import FakeClock


@pytest.fixture(autouse=True)
def local_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each view on the local SQLite store unless a test names a shared one."""
    monkeypatch.delenv(STORE_ENV, raising=False)


def at(when: float) -> str:
    return iso_utc(START + when)


def queue_waiter(memory: Memory, arrival: int, agent: str, target: str, **request: Any) -> str:
    """A waiting row, as a claim with ``--wait`` leaves it, of this (live) process."""
    deadline = request.pop("deadline", START + 30)
    made = make_request(f"c{arrival}", agent, [target], ttl=60, arrival=arrival, **request)
    store = memory.workspace.store
    with store.writing():
        store.put_waiter(WaiterRow(made, os.getpid(), deadline, "waiting", None))
    return made.id


# -- none of them creates a store ------------------------------------------------------------

VIEWS: dict[str, Callable[[Memory], object]] = {
    "status": lambda m: views.status(m.workspace),
    "queue": lambda m: views.waiters(m.workspace),
    "files": lambda m: views.files(m.workspace),
    "file": lambda m: views.file(m.workspace, "CLAUDE.md"),
    "history": lambda m: views.history(m.workspace, "CLAUDE.md#build"),
    "reconciliations": lambda m: views.reconciliations(m.workspace),
    "list_reconciliations": lambda m: views.list_reconciliations(m.workspace, resolved=True),
    "contention": lambda m: views.contention(m.workspace),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_no_view_creates_a_store_where_there_is_none(
    agents: Agents, sample: Path, view: str
) -> None:
    VIEWS[view](agents("a"))
    assert not (sample / HOME_DIR / STATE_DB).exists()


def test_without_a_store_the_views_answer_as_an_empty_store_would(agents: Agents) -> None:
    ws = agents("a").workspace
    assert views.waiters(ws) == {"now": at(0), "claims": [], "waiters": []}
    assert views.contention(ws) == []
    assert views.reconciliations(ws) == []
    assert views.history(ws, "CLAUDE.md#build")["history"] == []
    (claude,) = [f for f in views.files(ws) if f["path"] == "CLAUDE.md"]
    assert claude["last"] is None
    assert {s["last"] for s in claude["sections"]} == {None}


# -- the store in use ----------------------------------------------------------------------


def test_the_local_store_is_named_by_its_path_in_the_home(agents: Agents) -> None:
    assert views.store_view(agents("a").workspace) == {
        "kind": "sqlite",
        "path": f"{HOME_DIR}/{STATE_DB}",
    }


def test_a_shared_store_is_named_by_its_url_endpoints_and_prefix(
    agents: Agents, sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "etcd://10.0.0.1:2379, [::1]:2380/team/repo"
    monkeypatch.setenv(STORE_ENV, url)
    assert views.store_view(agents("a").workspace) == {
        "kind": "etcd",
        "path": url,
        "endpoints": ["10.0.0.1:2379", "[::1]:2380"],
        "prefix": "/team/repo/",
    }
    assert not (sample / HOME_DIR).exists()  # named, not connected to


def test_the_policys_store_line_names_the_shared_store_too(agents: Agents, sample: Path) -> None:
    policy = sample / POLICY_FILE
    policy.write_text(policy.read_text() + "store: etcd://127.0.0.1:2379/fleet\n")
    shown = views.store_view(agents("a").workspace)
    assert (shown["kind"], shown["endpoints"], shown["prefix"]) == (
        "etcd",
        ["127.0.0.1:2379"],
        "/fleet/",
    )


# -- the queue -------------------------------------------------------------------------------


def test_each_waiter_has_its_place_in_line_and_the_claims_in_its_way(agents: Agents) -> None:
    holder = agents("b")
    held = holder.claim("src/", ttl=60)
    first = queue_waiter(holder, 50, "c", "src/api/")
    second = queue_waiter(holder, 51, "d", "src/", priority=5, deadline=START + 45.5)
    shown = views.waiters(agents("a").workspace)
    assert shown["now"] == at(0)
    assert [(c["id"], c["agent"]) for c in shown["claims"]] == [(held.id, "b")]
    assert shown["waiters"] == [  # in arrival order; the higher priority is served first
        {
            "id": first,
            "agent": "c",
            "mode": "write",
            "targets": ["src/api/"],
            "priority": 0,
            "arrival": 50,
            "pid": os.getpid(),
            "seconds_left": 30,
            "position": 2,
            "blocked_by": [{"id": held.id, "agent": "b"}],
        },
        {
            "id": second,
            "agent": "d",
            "mode": "write",
            "targets": ["src/"],
            "priority": 5,
            "arrival": 51,
            "pid": os.getpid(),
            "seconds_left": 46,
            "position": 1,
            "blocked_by": [{"id": held.id, "agent": "b"}],
        },
    ]


def test_a_writer_waiting_on_readers_is_blocked_by_each_of_them(agents: Agents) -> None:
    one, two = agents("r1"), agents("r2")
    readers = [one.claim("docs/", mode="read"), two.claim("docs/guide.md", mode="read")]
    one.claim("src/")  # not in the writer's way
    queue_waiter(one, 60, "w", "docs/")
    (waiter,) = views.waiters(one.workspace)["waiters"]
    assert waiter["blocked_by"] == [{"id": c.id, "agent": c.agent} for c in readers]
    assert waiter["position"] == 1


def test_status_carries_the_store_the_claims_and_the_open_reconciliations(
    agents: Agents, sample: Path
) -> None:
    memory = agents("a")
    memory.regen()
    status = sample / "memory/status.md"
    status.write_text(status.read_text().replace("_No live claims._", "a hand edit", 1))
    memory.regen()
    memory.claim("src/", ttl=60)
    shown = views.status(memory.workspace)
    assert shown["store"] == views.store_view(memory.workspace)
    assert shown["claims"] == views.waiters(memory.workspace)["claims"]
    (opened,) = memory.reconciliations()
    full = opened.to_json()
    assert shown["reconciliations"] == [  # without the two texts: a listing, not a diff
        {k: v for k, v in full.items() if k not in ("human", "generated")}
    ]
    assert {"human", "generated"} <= set(full)
    (listed,) = views.reconciliations(memory.workspace)
    assert listed == {**full, "diff": listed["diff"]}


# -- files and one file ------------------------------------------------------------------------


def test_each_section_shows_the_last_event_that_changed_it(
    agents: Agents, clock: FakeClock
) -> None:
    a, b = agents("a"), agents("b")
    first = a.read("CLAUDE.md#build")
    a.patch("CLAUDE.md#build", first.content + "- a\n", expect_rev=first.rev)
    clock.advance(5)
    second = b.read("CLAUDE.md#build")
    b.patch("CLAUDE.md#build", second.content + "- b\n", expect_rev=second.rev)
    clock.advance(5)
    b.append("memory/decisions.md", "Use views.")
    listed = {f["path"]: f for f in views.files(a.workspace)}
    claude = listed["CLAUDE.md"]
    assert claude["class"] == "section-owned"
    assert claude["last"] is None  # no event about the file as a whole
    lasts = {s["key"]: s["last"] for s in claude["sections"]}
    assert lasts.pop("inventory-service/build") == {
        "actor": "b",
        "ts": at(5),
        "type": "section.patched",
    }
    assert set(lasts.values()) == {None}
    decisions = listed["memory/decisions.md"]
    assert decisions["last"] == {"actor": "b", "ts": at(10), "type": "entry.appended"}
    assert listed["memory/scratch/agent-a.md"] == {
        "path": "memory/scratch/agent-a.md",
        "class": "private",
        "sections": [],
    }


def test_a_section_shows_rev_and_lines_as_sections_gives_them(agents: Agents) -> None:
    memory = agents("a")
    (claude,) = [f for f in views.files(memory.workspace) if f["path"] == "CLAUDE.md"]
    expected = [{**s.to_json(), "last": None} for s in memory.sections("CLAUDE.md")]
    assert claude["sections"] == expected


@pytest.mark.parametrize("rel", ["CLAUDE.md", "memory/decisions.md", "memory/scratch/agent-a.md"])
def test_one_file_is_its_entry_in_the_listing(agents: Agents, rel: str) -> None:
    memory = agents("a")
    memory.append("memory/decisions.md", "An entry.")
    (listed,) = [f for f in views.files(memory.workspace) if f["path"] == rel]
    assert views.file(memory.workspace, rel) == listed


@pytest.mark.parametrize(
    "rel",
    [
        "README.md",  # there, not managed
        "memory/absent.md",  # managed by a glob, not there
        "memory/nope/notes.md",  # in a directory that is not there
        "memory",  # a directory
        "memory/scratch",
        "CLAUDE.md/x.md",  # through a file
    ],
)
def test_one_file_is_none_where_the_listing_has_no_such_file(agents: Agents, rel: str) -> None:
    memory = agents("a")
    assert rel not in {f["path"] for f in views.files(memory.workspace)}
    assert views.file(memory.workspace, rel) is None


def test_an_invalid_policy_is_refused_by_every_listing_each_time(
    agents: Agents, sample: Path
) -> None:
    ws = agents("a").workspace
    policy = sample / POLICY_FILE
    good = policy.read_text()
    assert views.files(ws)  # parsed and kept
    policy.write_text(good.replace("version: 1", "version: 9"))
    for _ in range(2):  # a refusal is not kept as if it were a policy
        with pytest.raises(PolicyInvalid, match="version"):
            views.files(ws)
        with pytest.raises(PolicyInvalid, match="version"):
            views.status(ws)
    policy.write_text(good)
    assert [f["path"] for f in views.files(ws)] == [f["path"] for f in views.status(ws)["files"]]


# -- one section's history -------------------------------------------------------------------


def test_a_sections_history_is_its_own_events_newest_first_up_to_the_limit(
    agents: Agents, clock: FakeClock
) -> None:
    memory = agents("a")
    for n in range(3):
        read = memory.read("CLAUDE.md#build")
        memory.patch("CLAUDE.md#build", read.content + f"- {n}\n", expect_rev=read.rev)
        other = memory.read("CLAUDE.md#testing")
        memory.patch("CLAUDE.md#testing", other.content + f"- {n}\n", expect_rev=other.rev)
        clock.advance(1)
    shown = views.history(memory.workspace, "CLAUDE.md#build", limit=2)
    assert {k: v for k, v in shown.items() if k != "history"} == {
        **memory.read("CLAUDE.md#build").to_json(),
        "compacted": 0,
    }
    assert [(e["section"], e["ts"]) for e in shown["history"]] == [
        ("inventory-service/build", at(2)),
        ("inventory-service/build", at(1)),
    ]
    assert len(views.history(memory.workspace, "CLAUDE.md#build")["history"]) == 3


def test_a_whole_files_history_is_the_events_about_the_file(agents: Agents) -> None:
    memory = agents("a")
    memory.append("memory/decisions.md", "One.")
    memory.append("memory/decisions.md", "Two.")
    shown = views.history(memory.workspace, "memory/decisions.md")
    assert shown["key"] is None
    assert [(e["type"], e["section"]) for e in shown["history"]] == [
        ("entry.appended", None),
        ("entry.appended", None),
    ]
    assert shown["history"][0]["id"] > shown["history"][1]["id"]


def test_a_private_files_history_is_refused_and_shows_no_text(agents: Agents) -> None:
    rel = "memory/scratch/agent-a.md"
    with pytest.raises(Refused) as refused:
        views.history(agents("agent-a").workspace, f"{rel}#anything")
    assert refused.value.message == (
        f"{rel} is private: its text is its agent's own and is not shown"
    )
    assert refused.value.reason == "class"


# -- the contention audit --------------------------------------------------------------------


def record(memory: Memory, clock: FakeClock, when: float, type: str, **data: Any) -> None:
    """A ``claim.*`` event at ``START + when`` by the agent of ``memory``."""
    clock.set(START + when)
    ws = memory.workspace
    with ws.store.writing():
        ws.record(type, None, None, data)


def queued(memory: Memory, clock: FakeClock, when: float, request: str) -> None:
    waiting_on = [{"id": "c1", "agent": "holder"}]
    record(memory, clock, when, "claim.queued", id=request, targets=["src/"], waiting_on=waiting_on)


def test_each_wait_is_paired_with_its_end_newest_first(agents: Agents, clock: FakeClock) -> None:
    a, b, d, e = agents("a"), agents("b"), agents("d"), agents("e")
    queued(a, clock, 0, "c2")
    queued(b, clock, 1, "c3")
    record(a, clock, 2.5, "claim.granted", id="c2")
    queued(d, clock, 3, "c4")
    record(b, clock, 4, "claim.aborted", id="c3", reason="deadlock")
    record(d, clock, 4.5, "claim.aborted", id="c4")  # no reason given
    queued(e, clock, 5, "c5")
    record(a, clock, 6, "claim.aborted", id="c2", reason="timeout")  # after its end: ignored
    record(a, clock, 6, "claim.granted", id="c9")  # granted at once: no wait
    clock.set(START + 7.25)
    waits = views.contention(a.workspace)
    assert [(w["id"], w["agent"], w["outcome"], w["waited_s"], w["ts"]) for w in waits] == [
        ("c5", "e", "waiting", 2.25, at(5)),
        ("c4", "d", "aborted", 1.5, at(3)),
        ("c3", "b", "deadlock", 3.0, at(1)),
        ("c2", "a", "granted", 2.5, at(0)),
    ]
    assert waits[0]["targets"] == ["src/"]
    assert waits[0]["waited_on"] == [{"id": "c1", "agent": "holder"}]


def test_the_window_leaves_out_waits_that_began_before_it(agents: Agents, clock: FakeClock) -> None:
    a = agents("a")
    queued(a, clock, 0, "c2")
    record(a, clock, 10, "claim.granted", id="c2")  # its start is outside the window
    queued(a, clock, 3600, "c3")
    clock.set(START + 3605)
    assert [w["id"] for w in views.contention(a.workspace)] == ["c3"]  # the last hour
    assert [w["id"] for w in views.contention(a.workspace, window_s=7200)] == ["c3", "c2"]
    assert views.contention(a.workspace, window_s=1) == []


def test_a_clock_stepped_back_never_makes_a_negative_wait(agents: Agents, clock: FakeClock) -> None:
    a = agents("a")
    queued(a, clock, 100, "c2")
    clock.set(START + 40)
    (wait,) = views.contention(a.workspace, window_s=3600)
    assert (wait["outcome"], wait["waited_s"]) == ("waiting", 0.0)
