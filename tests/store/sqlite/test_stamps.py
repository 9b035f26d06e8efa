"""The SQLite store's ``stamps`` table (schema 14): this checkout's files' stat stamps, and the
upgrade of a store of the version before (13) to it."""

from __future__ import annotations

from pathlib import Path

from memkeeper.records import FileState
from memkeeper.stamps import Stamp, Stamped
from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.schema import SCHEMA_VERSION
from tests.store.sqlite.conftest import pragma, raw_sql

ROW = Stamped("memory/a.md", Stamp(12, 5, 6, 7, 8), "sha256:a", 99, None)


def test_a_store_of_the_version_before_gets_the_stamps_table_and_keeps_its_data(
    home: Path,
) -> None:
    store = Store.open(str(home))
    with store.writing():
        store.put_file("memory/a.md", FileState(2, "sha256:a"))
    store.close()
    raw_sql(home, "DROP TABLE stamps")
    raw_sql(home, "PRAGMA user_version=13")
    upgraded = Store.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION
        assert upgraded.file_state("memory/a.md") == FileState(2, "sha256:a")
        stamps = upgraded.stamp_table()
        assert stamps.stamps() == {}
        stamps.put_stamps([ROW])
        assert stamps.stamps() == {"memory/a.md": ROW}
    finally:
        upgraded.close()


def test_put_stamps_inside_a_transaction_is_part_of_it(home: Path) -> None:
    store = Store.open(str(home))
    try:
        try:
            with store.writing():
                store.stamp_table().put_stamps([ROW])
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass
        assert store.stamp_table().stamps() == {}
    finally:
        store.close()
