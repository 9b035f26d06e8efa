"""Reads in a real SQLite store: a store of schema 7 gains the table on opening, keeping its
data; a change told by one connection is not told again by another."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memkeeper.records import FileState
from tests.store.contract.conftest import row
from tests.store.sqlite.conftest import reopened_from_7

if TYPE_CHECKING:
    from memkeeper.store.sqlite import Store


def test_a_schema_7_store_gains_the_reads_on_opening(home: Path) -> None:
    upgraded = reopened_from_7(home, "reads")
    try:
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
