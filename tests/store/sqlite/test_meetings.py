"""Meetings in a real SQLite store: a store of schema 7 gains the table on opening, keeping
its data; the row's state follows the record's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.meetings import rules
from memkeeper.meetings.records import Plan
from memkeeper.store.sqlite import Store
from tests.store.sqlite.conftest import reopened_from_7

if TYPE_CHECKING:
    from pathlib import Path

NOW = 1_800_000_000.0


def test_a_schema_7_store_gains_the_meetings_on_opening(home: Path) -> None:
    upgraded = reopened_from_7(home, "meetings")
    try:
        with upgraded.writing():
            m = upgraded.meetings.add_meeting(rules.opened(0, "a:1", ["b:2"], ["docs/"], NOW))
        assert m.id == 1
    finally:
        upgraded.close()


def test_the_rows_state_follows_the_record(home: Path) -> None:
    store = Store.open(str(home))
    try:
        with store.writing():
            m = store.meetings.add_meeting(rules.opened(0, "a:1", ["b:2"], ["docs/"], NOW))
            store.meetings.put_meeting(rules.resolved(m, "human", Plan("escalate"), NOW))
        rows = store._db.execute("SELECT id, state FROM meetings").fetchall()
        assert rows == [(1, "resolved")]
    finally:
        store.close()
