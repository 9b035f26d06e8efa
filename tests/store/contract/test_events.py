"""The contract of the event log and tallies: chained and listed, what an append returns and its
own block sees, filtered and counted; tallies counted and forgotten; on etcd, concurrent appends
making one chain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper import events as ev
from tests.store.contract.conftest import (
    NOW,
    TS,
    etcd_on,
    etcd_only,
    race,
)

if TYPE_CHECKING:
    from memkeeper.records import Event
    from memkeeper.store.etcd import EtcdStore
    from memkeeper.store.protocol import StateStore
    from tests.etcd_cluster import Cluster


def _append_some(store: StateStore) -> None:
    with store.writing():
        store.append_event(TS[0], "a", "section.patched", "CLAUDE.md", "build", {"rev": 2})
        store.append_event(TS[1], "a", "claim.granted", None, None, {"id": "c1"})
        store.append_event(TS[2], "b", "policy.violation", "CLAUDE.md", None, {"reason": "x"})
    with store.writing():
        store.append_event(TS[3], "b", "claim.released", None, None, {"id": "c1"})
        store.append_event(TS[4], "a", "section.patched", "CLAUDE.md", "build", {"rev": 3})
        store.append_event(TS[5], "b", "policy.violation", "AGENTS.md", None, {"reason": "y"})
        store.append_event(TS[6], "c", "claim.expired", None, None, {"id": "c1"})
        store.append_event(TS[7], "c", "section.patched", "CLAUDE.md", "test", {"é": "ü"})


def test_events_are_chained_and_listed(store: StateStore) -> None:
    assert store.events() == []
    assert store.last_event() is None
    assert store.events_head() is None
    _append_some(store)
    events = store.events()
    assert [e.id for e in events] == list(range(1, 9))
    assert ev.chain_breaks(events) == []
    assert events[7].data == {"é": "ü"}
    assert store.last_event() == events[-1]
    assert store.events_head() == (8, events[-1].hash)
    assert store.events(since=5) == events[5:]
    assert store.events(since=2, limit=2) == events[2:4]
    assert store.events(since=8) == []


def test_append_returns_the_stored_event_and_sees_its_own_block(store: StateStore) -> None:
    with store.writing():
        first = store.append_event(TS[0], "a", "x", None, None, {})
        second = store.append_event(TS[1], "a", "y", "p.md", "k", {"n": 1})
        assert store.last_event() == second
        assert store.events_head() == (2, second.hash)
    assert second.prev == first.hash
    assert store.events() == [first, second]


def ids(found: list[Event]) -> list[int]:
    return [e.id for e in found]


def test_events_filtered_and_counted(store: StateStore) -> None:
    _append_some(store)
    assert ids(store.events_of("CLAUDE.md", "build", 10)) == [5, 1]
    assert ids(store.events_of("CLAUDE.md", "build", 1)) == [5]
    assert ids(store.events_of("CLAUDE.md", None, 10)) == [3]
    assert store.events_of("nowhere.md", None, 10) == []
    last = store.last_events("CLAUDE.md")
    assert {k: e.id for k, e in last.items()} == {"build": 5, None: 3, "test": 8}
    assert ids(store.events_typed(("policy.violation", "claim.granted"), TS[0])) == [2, 3, 6]
    assert ids(store.events_typed(("section.patched",), TS[4])) == [5, 8]
    assert store.events_typed(("nothing",), TS[0]) == []
    assert store.count_events("policy.violation", TS[0]) == 2
    assert store.count_events("policy.violation", TS[3]) == 1
    assert store.count_events("policy.violation", TS[0], reason="x") == 1
    assert store.count_events("policy.violation", TS[0], reason="z") == 0
    found = store.last_claim_event("c1")
    assert found is not None
    assert found.id == 7
    assert store.last_claim_event("c2") is None


# -- the newest events a region shows ------------------------------------------------------


def _append_many(store: StateStore, count: int) -> None:
    """``count`` events cycling through three types and three paths (a directory's two)."""
    types = ("entry.appended", "section.patched", "region.regenerated")
    paths = ("memory/decisions.md", "memory/sub/notes.md", None)
    for n in range(count):  # one at a time: etcd takes 128 operations a transaction
        path = paths[(n // 3) % 3]
        store.append_event(TS[n % 10], f"a{n % 2}", types[n % 3], path, None, {"n": n})


def test_recent_events_are_the_newest_of_their_types_newest_first(store: StateStore) -> None:
    _append_many(store, 90)
    everything = store.events()
    assert ids(store.recent_events((), None, None, 4)) == [90, 89, 88, 87]
    assert ids(store.recent_events((), None, 88, 3)) == [87, 86, 85]
    assert ids(store.recent_events(("entry.appended",), None, None, 3)) == [88, 85, 82]
    both = ("section.patched", "entry.appended", "section.patched")  # a type named twice
    assert ids(store.recent_events(both, None, 85, 4)) == [83, 82, 80, 79]
    assert store.recent_events(("nothing",), None, None, 5) == []
    assert store.recent_events(("entry.appended",), None, None, 0) == []
    assert ids(store.recent_events(("entry.appended",), None, 2, 5)) == [1]
    assert ids(store.recent_events((), None, None, 500)) == [e.id for e in reversed(everything)]
    assert store.recent_events((), None, None, 1)[0] == everything[-1]  # whole events


def test_recent_events_about_a_path_take_a_file_or_what_is_under_a_directory(
    store: StateStore,
) -> None:
    _append_many(store, 90)
    by_id = {e.id: e for e in store.events()}

    def about(types: tuple[str, ...], path: str, limit: int) -> list[int]:
        found = store.recent_events(types, path, None, limit)
        assert all(e.type in types or not types for e in found)
        return ids(found)

    decisions = [i for i in sorted(by_id, reverse=True) if by_id[i].path == "memory/decisions.md"]
    assert about((), "memory/decisions.md", 5) == decisions[:5]
    assert about(("entry.appended",), "memory/sub/notes.md", 2) == [85, 76]
    under_memory = [i for i in sorted(by_id, reverse=True) if by_id[i].path is not None]
    assert about((), "memory/", 6) == under_memory[:6]
    assert about((), "memory", 6) == under_memory[:6]
    assert about((), "memory/sub", 2) == [87, 86]
    assert about((), "memo", 5) == []  # a prefix of a name is not a directory
    assert about((), "memory/decisions.md/x", 5) == []


# -- tallies --------------------------------------------------------------------------------


def test_tallies_count_and_forget(store: StateStore) -> None:
    with store.writing():
        for at in (1000.0, 1500.5, 2000.25):
            store.tally("conflict", at, keep_s=3600.0)
        store.tally("other", 1600.0)
    assert store.tally_count("conflict", 0) == 3
    assert store.tally_count("conflict", 1500.5) == 2
    assert store.tally_count("conflict", 1500.6) == 1
    with store.writing():
        store.tally("conflict", 5000.0, keep_s=3600.0)  # forgets what is before 1400
    assert store.tally_count("conflict", 0) == 3
    assert store.tally_count("other", 0) == 1
    with store.writing():  # out of order: one older than the last one forgets
        store.tally("late", 9000.0, keep_s=3600.0)
        store.tally("late", 1000.0, keep_s=3600.0)
    assert store.tally_count("late", 0) == 2


def test_tally_counts_occurrences_since_a_time(store: StateStore) -> None:
    with store.writing():
        for at in (NOW, NOW + 10, NOW + 20):
            store.tally("conflict", at)
        store.tally("deadlock", NOW + 5)
    assert store.tally_count("conflict", NOW) == 3
    assert store.tally_count("conflict", NOW + 10) == 2
    assert store.tally_count("conflict", NOW + 21) == 0
    assert store.tally_count("deadlock", 0.0) == 1
    assert store.tally_count("never", 0.0) == 0


def test_a_tally_forgets_its_kinds_entries_older_than_the_window(store: StateStore) -> None:
    with store.writing():
        store.tally("conflict", NOW)
        store.tally("deadlock", NOW)
        store.tally("conflict", NOW + 3601)
    assert store.tally_count("conflict", 0.0) == 1
    assert store.tally_count("deadlock", 0.0) == 1  # other kinds are left alone


def test_a_tally_keeps_what_is_inside_a_custom_window(store: StateStore) -> None:
    with store.writing():
        store.tally("conflict", NOW)
        store.tally("conflict", NOW + 50, keep_s=60)
        store.tally("conflict", NOW + 100, keep_s=60)
    assert store.tally_count("conflict", 0.0) == 2


# -- etcd only ------------------------------------------------------------------------------


@etcd_only
def test_concurrent_appends_make_one_chain(cluster: Cluster, prefix: bytes) -> None:
    per_thread = 20

    def append(store: EtcdStore, actor: str, n: int) -> None:
        store.append_event(TS[n % 10], actor, "emit", "x.md", None, {"n": n})

    race(cluster, prefix, per_thread, append)
    reader = etcd_on(cluster, prefix)
    events = reader.events()
    assert [e.id for e in events] == list(range(1, 2 * per_thread + 1))
    assert ev.chain_breaks(events) == []
    assert sorted(e.actor for e in events) == ["a"] * per_thread + ["b"] * per_thread
    assert reader.events_head() == (2 * per_thread, events[-1].hash)
    assert len(reader.events_of("x.md", None, 100)) == 2 * per_thread
    reader.close()
