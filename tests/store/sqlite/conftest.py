"""The SQLite store's own tests share a memory home, a store opened on it and a second
connection to it (as another process would have), and reach past the store's methods into the
database with two helpers."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memkeeper.store.sqlite import Store


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / ".memkeeper"


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    opened = Store.open(str(home))
    yield opened
    opened.close()


@pytest.fixture
def other(home: Path, store: Store) -> Iterator[Store]:
    """A second connection to the same store, as another process would have."""
    opened = Store.open(str(home))
    yield opened
    opened.close()


def pragma(store: Store, name: str) -> object:
    return store._db.execute(f"PRAGMA {name}").fetchone()[0]


def raw_sql(home: Path, sql: str) -> None:
    db = sqlite3.connect(home / "state.db")
    try:
        db.execute(sql)
        db.commit()
    finally:
        db.close()


KEPT_AT = "2026-12-06T12:00:00.000Z"


def reopened_from_7(home: Path, table: str) -> Store:
    """A schema-7 store (``table``, newer, dropped) holding one message to ``a:1``, opened
    again: at the current version, the message kept. The caller closes it."""
    from memkeeper.store.sqlite.schema import SCHEMA_VERSION

    store = Store.open(str(home))
    with store.writing():
        store.mail.post_message("human", "a:1", "message", None, "kept", KEPT_AT)
    store.close()
    raw_sql(home, f"DROP TABLE {table}")
    raw_sql(home, "PRAGMA user_version=7")
    upgraded = Store.open(str(home))
    assert pragma(upgraded, "user_version") == SCHEMA_VERSION
    assert [m.text for m in upgraded.mail.messages_for("a:1")] == ["kept"]
    return upgraded
