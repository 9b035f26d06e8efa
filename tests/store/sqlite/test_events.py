"""The events table of a real SQLite store: each event chained to the last, returned as
stored, paged by id; an edit of the stored log breaks the chain. Concurrent processes lose no
event and keep one chain: tests/e2e/test_store_processes.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper import events as ev
from tests.store.sqlite.conftest import pragma, raw_sql

if TYPE_CHECKING:
    from collections.abc import Callable

    from memkeeper.store.sqlite import Store


def add_event(store: Store, n: int, actor: str = "a") -> None:
    with store.writing():
        store.append_event(ev.iso_utc(n), actor, "emit", None, None, {"n": n})


def test_append_event_chains_each_event_to_the_last(store: Store) -> None:
    assert store.last_event() is None
    for n in range(3):
        add_event(store, n)
    stored = store.events()
    assert [e.id for e in stored] == [1, 2, 3]
    assert stored[0].prev == ev.GENESIS
    assert [e.prev for e in stored[1:]] == [e.hash for e in stored[:2]]
    assert ev.chain_breaks(stored) == []
    assert store.last_event() == stored[-1]


def test_append_event_returns_what_is_stored(store: Store) -> None:
    data = {"z": [1, 2], "a": {"nested": "ünïcode"}, "none": None}
    with store.writing():
        made = store.append_event(
            "2026-01-01T00:00:00.000Z", "agent-a", "section.patched", "CLAUDE.md", "build", data
        )
    assert store.events() == [made]
    assert made.data == data


def test_events_pages_by_since_and_limit(store: Store) -> None:
    for n in range(5):
        add_event(store, n)
    assert [e.id for e in store.events(since=2)] == [3, 4, 5]
    assert [e.id for e in store.events(since=1, limit=2)] == [2, 3]
    assert store.events(since=5) == []


def test_an_edit_of_the_stored_log_breaks_the_chain(home: Path, store: Store) -> None:
    for n in range(3):
        add_event(store, n)
    raw_sql(home, "UPDATE events SET actor = 'mallory' WHERE id = 2")
    assert [event_id for event_id, _ in ev.chain_breaks(store.events())] == [2]


# -- what a region's and the metrics' reads cost: indexes, not the whole log ----------------


def plan(store: Store, sql: str, *params: object) -> str:
    rows = store._db.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
    return " / ".join(str(row[-1]) for row in rows)


def traced(store: Store, read: Callable[[], object]) -> list[str]:
    """The statements ``read`` runs."""
    seen: list[str] = []
    store._db.set_trace_callback(seen.append)
    try:
        read()
    finally:
        store._db.set_trace_callback(None)
    return seen


def test_a_type_s_newest_events_are_read_from_the_end_of_its_index(store: Store) -> None:
    with store.writing():
        for n in range(50):
            kind = "entry.appended" if n % 5 == 0 else "section.patched"
            store.append_event(ev.iso_utc(n), "a", kind, "m/d.md", None, {"n": n})
    (sql,) = traced(store, lambda: store.recent_events(("entry.appended",), "m", 40, 2))
    query = plan(store, sql)
    assert "USING INDEX events_by_type (type=? AND id<?)" in query
    assert "TEMP B-TREE" not in query  # no sort: walked back from the end of the type
    assert [e.id for e in store.recent_events(("entry.appended",), "m", 40, 2)] == [36, 31]
    (sql,) = traced(store, lambda: store.recent_events((), "m/d.md", None, 2))
    assert "TEMP B-TREE" not in plan(store, sql)  # the ids walked back, not a path's sorted


def test_the_metrics_counts_read_the_window_of_their_type_through_an_index(store: Store) -> None:
    with store.writing():
        for n in range(30):
            data = {"reason": "deadlock" if n % 2 else "timeout"}
            store.append_event(ev.iso_utc(n), "a", "claim.aborted", None, None, data)
    (sql,) = traced(store, lambda: store.count_events("claim.aborted", ev.iso_utc(20), "deadlock"))
    assert "USING INDEX events_by_type_ts (type=? AND ts>?)" in plan(store, sql)
    assert store.count_events("claim.aborted", ev.iso_utc(20), "deadlock") == 5
    assert store.count_events("claim.aborted", ev.iso_utc(20)) == 10
    (sql,) = traced(store, lambda: store.events_typed(("claim.aborted", "x"), ev.iso_utc(25)))
    assert "USING INDEX events_by_type_ts (type=? AND ts>?)" in plan(store, sql)
    store._db.execute("ANALYZE")  # statistics that would favour a scan change nothing
    (sql,) = traced(store, lambda: store.events_typed(("claim.aborted",), ev.iso_utc(0)))
    assert "USING INDEX events_by_type_ts (type=? AND ts>?)" in plan(store, sql)
    assert len(store.events_typed(("claim.aborted",), ev.iso_utc(0))) == 30


def test_a_version_16_store_gets_the_index_by_type_and_time_on_open(home: Path) -> None:
    from memkeeper.store.sqlite import Store as SqliteStore
    from memkeeper.store.sqlite.schema import SCHEMA_VERSION

    store = SqliteStore.open(str(home))
    with store.writing():
        for n in range(10):
            store.append_event(ev.iso_utc(n), "a", "claim.granted", None, None, {"n": n})
    store.close()
    raw_sql(home, "DROP INDEX events_by_type_ts")
    raw_sql(home, "PRAGMA user_version=16")
    upgraded = SqliteStore.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION == 17
        (sql,) = traced(upgraded, lambda: upgraded.count_events("claim.granted", ev.iso_utc(4)))
        assert "events_by_type_ts" in plan(upgraded, sql)
        assert upgraded.count_events("claim.granted", ev.iso_utc(4)) == 6
        assert len(upgraded.events()) == 10  # the log as it was
    finally:
        upgraded.close()
