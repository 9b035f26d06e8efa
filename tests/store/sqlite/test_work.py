"""Work items in a real SQLite store: a store of schema 7 gains the table on opening, keeping
its data; the row's state follows the record's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.store.sqlite import Store
from memkeeper.work import rules
from tests.store.sqlite.conftest import reopened_from_7

if TYPE_CHECKING:
    from pathlib import Path

NOW = 1_800_000_000.0


def test_a_schema_7_store_gains_the_work_items_on_opening(home: Path) -> None:
    upgraded = reopened_from_7(home, "work")
    try:
        with upgraded.writing():
            item = upgraded.work.add_work(rules.added(0, "x", "a:1", NOW, known={}))
        assert item.id == 1
    finally:
        upgraded.close()


def test_the_rows_state_follows_the_record(home: Path) -> None:
    store = Store.open(str(home))
    try:
        with store.writing():
            item = store.work.add_work(rules.added(0, "x", "a:1", NOW, known={}))
            store.work.put_work(rules.ended(item, "failed", NOW, "no"))
        rows = store._db.execute("SELECT id, state FROM work").fetchall()
        assert rows == [(1, "failed")]
    finally:
        store.close()
