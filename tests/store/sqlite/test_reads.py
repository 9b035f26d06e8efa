"""Reads in a real SQLite store: a store of schema 7 gains the table on opening, keeping its
data; a change told by one connection is not told again by another."""

from __future__ import annotations

from pathlib import Path

from memkeeper.records import FileState
from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.schema import SCHEMA_VERSION
from tests.store.contract.conftest import row
from tests.store.sqlite.conftest import pragma, raw_sql

AT = "2026-12-06T12:00:00.000Z"


def test_a_schema_7_store_gains_the_reads_on_opening(home: Path) -> None:
    store = Store.open(str(home))
    with store.writing():
        store.post_message("human", "a:1", "message", None, "kept", AT)
    store.close()
    raw_sql(home, "DROP TABLE reads")
    raw_sql(home, "PRAGMA user_version=7")
    upgraded = Store.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION
        assert [m.text for m in upgraded.messages_for("a:1")] == ["kept"]
        with upgraded.writing():
            upgraded.record_reads("a:1", "CLAUDE.md", {"build": 1})
        assert upgraded.reads_of("a:1", "CLAUDE.md") == {"build": 1}
    finally:
        upgraded.close()


def test_a_change_another_connection_told_is_not_told_again(store: Store, other: Store) -> None:
    with store.writing():
        store.put_file("CLAUDE.md", FileState(1, "sha256:" + "0" * 64))
        store.put_sections("CLAUDE.md", [row("build", 1, 2)])
        store.record_reads("a:1", "CLAUDE.md", {"build": 1})
    with other.writing():
        assert other.tell_read("a:1", "CLAUDE.md", "build", 2)
    with store.writing():
        assert not store.tell_read("a:1", "CLAUDE.md", "build", 2)
    assert store.stale_reads("a:1") == []
