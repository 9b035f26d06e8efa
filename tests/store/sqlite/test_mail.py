"""Messages in a real SQLite store: a store of schema 6 gains the tables on opening, keeping
its data; a delivery marked by one connection is not marked again by another."""

from __future__ import annotations

from pathlib import Path

from memkeeper.store.sqlite import Store
from memkeeper.store.sqlite.schema import SCHEMA_VERSION
from tests.store.sqlite.conftest import pragma, raw_sql

AT = "2026-12-06T12:00:00.000Z"


def test_a_schema_6_store_gains_the_messages_on_opening(home: Path) -> None:
    store = Store.open(str(home))
    with store.writing():
        store.mail.post_message("human", "a:1", "message", None, "kept", AT)
    store.close()
    raw_sql(home, "DROP TABLE deliveries")
    raw_sql(home, "PRAGMA user_version=6")
    upgraded = Store.open(str(home))
    try:
        assert pragma(upgraded, "user_version") == SCHEMA_VERSION
        assert [m.text for m in upgraded.mail.messages_for("a:1")] == ["kept"]
        with upgraded.writing():
            assert upgraded.mail.mark_delivered("a:1", ["m:1"], AT) == ["m:1"]
    finally:
        upgraded.close()


def test_a_delivery_another_connection_marked_is_not_marked_again(
    store: Store, other: Store
) -> None:
    with store.writing():
        store.mail.post_message("human", "a:1", "message", None, "once", AT)
    with other.writing():
        assert other.mail.mark_delivered("a:1", ["m:1"], AT) == ["m:1"]
    with store.writing():
        assert store.mail.mark_delivered("a:1", ["m:1"], AT) == []
