"""The events table of a real SQLite store: each event chained to the last, returned as
stored, paged by id; an edit of the stored log breaks the chain. Concurrent processes lose no
event and keep one chain: tests/e2e/test_store_processes.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper import events as ev
from tests.store.sqlite.conftest import raw_sql

if TYPE_CHECKING:
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
